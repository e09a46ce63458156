#include "charkit/bem/container.h"

namespace charkit::bem {

const char* container_kind_name(ContainerKind k) {
  switch (k) {
    case ContainerKind::kBinary: return "binary";
    case ContainerKind::kZip: return "zip";
    case ContainerKind::kCollection: return "collection";
  }
  return "?";
}

const char* codec_name(Codec c) {
  switch (c) {
    case Codec::kRaw: return "raw";
    case Codec::kZstd: return "zstd";
    case Codec::kZipStored: return "zip-stored";
    case Codec::kZipDeflate: return "zip-deflate";
  }
  return "?";
}

core::Result<PayloadData> Package::read_member(std::size_t) const {
  return core::make_error("BEM_NOT_COLLECTION", "not a collection bundle");
}

std::unique_ptr<Package> Package::open(Bytes file, core::Report& report) {
  report.error("BEM_CONTAINER_UNKNOWN", "§2", core::Location::at_offset(0), "container reader not built yet");
  (void)file;
  return nullptr;
}

}  // namespace charkit::bem
