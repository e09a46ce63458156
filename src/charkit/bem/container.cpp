#include "charkit/bem/container.h"

#include <algorithm>

namespace charkit::bem {

const char* container_kind_name(ContainerKind k) {
  switch (k) {
    case ContainerKind::kBinary:
      return "binary";
    case ContainerKind::kZip:
      return "zip";
    case ContainerKind::kCollection:
      return "collection";
  }
  return "?";
}

const char* codec_name(Codec c) {
  switch (c) {
    case Codec::kRaw:
      return "raw";
    case Codec::kZstd:
      return "zstd";
    case Codec::kZipStored:
      return "zip-stored";
    case Codec::kZipDeflate:
      return "zip-deflate";
  }
  return "?";
}

core::Result<PayloadData> Package::read_payload(std::uint32_t id) const {
  PayloadBuffer buf;
  auto r = read_payload_into(id, buf);
  if (!r) return std::move(r).error();
  Bytes view = *r;
  if (buf.holds(view)) return PayloadData(std::move(buf), view);
  return PayloadData(view);
}

core::Result<PayloadData> Package::read_member(std::size_t) const {
  return core::make_error("BEM_NOT_COLLECTION", "not a collection bundle");
}

std::unique_ptr<Package> Package::open(Bytes file, core::Report& report) {
  // Recognised by content, never by file extension (§14).
  if (file.size() >= 8 && std::equal(kMagic, kMagic + 8, file.begin()))
    return open_binary(file, report);
  if (file.size() >= 4 && file[0] == 0x50 && file[1] == 0x4B && file[2] == 0x03 && file[3] == 0x04)
    return open_zip(file, report);
  report.error("BEM_CONTAINER_UNKNOWN", "§2", core::Location::at_offset(0),
               "not a BEM package: neither the BEM magic \"BEM\\0PKG\\0\" nor a ZIP local header "
               "(PK\\3\\4)");
  return nullptr;
}

}  // namespace charkit::bem
