// Binary container (§2): 40-byte header, manifest, 32-byte directory entries,
// contiguous payloads.
#include <algorithm>
#include <string>

#include "charkit/bem/container.h"
#include "charkit/bem/error_codes.h"

namespace charkit::bem {
namespace {

using core::Location;

class BinaryPackage final : public Package {
 public:
  ContainerKind kind() const override { return ContainerKind::kBinary; }
  core::Status prepare_payload(std::uint32_t id) const override;
  core::Result<Bytes> decode_prepared(std::uint32_t id, PayloadBuffer& scratch) const override;
  friend std::unique_ptr<Package> bem::open_binary(Bytes file, core::Report& report,
                                                   DecodeControl* control);
};

/// A payload's error as the caller sees it: "payload N: …" at the offset
/// inside the file.
core::Error payload_error(std::uint32_t id, const PayloadInfo& p, core::Error e) {
  e.message = "payload " + std::to_string(id) + ": " + e.message;
  e.location = Location::at_offset(p.offset + e.location.offset.value_or(0));
  return e;
}

core::Status BinaryPackage::prepare_payload(std::uint32_t id) const {
  if (id >= payloads_.size())
    return core::make_error(codes::BEM_PAYLOAD_ID,
                            "payload " + std::to_string(id) + " does not exist");
  const PayloadInfo& p = payloads_[id];
  if (p.codec == Codec::kRaw) return core::Ok{};
  // open_binary checked that the stored range lies inside the file and
  // decoded_size ≤ 512 MiB; the frame is checked against it before any
  // byte is counted or written.
  auto st = check_zstd_frame(file_.subspan(p.offset, p.stored_size), p.decoded_size);
  if (st && control_) st = control_->charge(p.decoded_size, "zstd payload");
  if (!st) return payload_error(id, p, std::move(st).error());
  return core::Ok{};
}

core::Result<Bytes> BinaryPackage::decode_prepared(std::uint32_t id, PayloadBuffer& scratch) const {
  if (id >= payloads_.size())
    return core::make_error(codes::BEM_PAYLOAD_ID,
                            "payload " + std::to_string(id) + " does not exist");
  const PayloadInfo& p = payloads_[id];
  Bytes stored = file_.subspan(p.offset, p.stored_size);
  if (p.codec == Codec::kRaw) return stored;
  auto out = scratch.get(static_cast<std::size_t>(p.decoded_size));
  if (!out) return payload_error(id, p, std::move(out).error());
  if (auto st = decode_zstd_payload(stored, *out); !st)
    return payload_error(id, p, std::move(st).error());
  return Bytes(*out);
}

}  // namespace

bool decode_header(Bytes file, Header& h) {
  if (file.size() < kHeaderSize || !std::equal(kMagic, kMagic + 8, file.begin())) return false;
  core::ByteReader r(file.subspan(8, kHeaderSize - 8));
  return r.read(h.major) && r.read(h.minor) && r.read(h.header_size) && r.read(h.file_size) &&
         r.read(h.manifest_size) && r.read(h.payload_count) && r.read(h.flags);
}

bool decode_directory_entry(Bytes file, std::uint64_t at, DirectoryEntry& e) {
  if (at > file.size() || file.size() - at < kDirectoryEntrySize) return false;
  core::ByteReader r(file.subspan(at, kDirectoryEntrySize));
  return r.read(e.codec) && r.read(e.reserved) && r.read(e.offset) && r.read(e.stored_size) &&
         r.read(e.decoded_size);
}

std::unique_ptr<Package> open_binary(Bytes file, core::Report& report, DecodeControl* control) {
  auto err = [&](core::ErrorCode code, std::uint64_t off, std::string msg) {
    report.error(code, "§2", Location::at_offset(off), std::move(msg));
  };
  if (file.size() < kHeaderSize) {
    err(codes::BEM_HEADER_TRUNCATED, 0,
        "file is " + std::to_string(file.size()) + " bytes, shorter than the 40-byte header");
    return nullptr;
  }
  Header h;
  if (!decode_header(file, h)) {
    err(codes::BEM_HEADER_MAGIC, 0, "magic is not \"BEM\\0PKG\\0\"");
    return nullptr;
  }

  bool fatal = false;
  if (h.major != 1) {
    err(codes::BEM_HEADER_MAJOR, 8, "major version is " + std::to_string(h.major) + ", expected 1");
    fatal = true;
  }
  if (h.minor > kMaxMinor) {
    err(codes::BEM_HEADER_MINOR, 10,
        "minor version is " + std::to_string(h.minor) + ", this reader knows 0..5");
    fatal = true;
  }
  if (h.header_size != kHeaderSize) {
    err(codes::BEM_HEADER_SIZE, 12,
        "header_size is " + std::to_string(h.header_size) + ", expected 40");
    fatal = true;
  }
  if (h.file_size != file.size()) {
    err(codes::BEM_FILE_SIZE, 16,
        "header file_size is " + std::to_string(h.file_size) + " but the file has " +
            std::to_string(file.size()) + " bytes");
    fatal = true;
  }
  if (file.size() > kMaxFileSize) {
    err(codes::BEM_FILE_TOO_LARGE, 16, "file is larger than 2 GiB");
    fatal = true;
  }
  if (h.manifest_size < 1 || h.manifest_size > kMaxManifestSize) {
    err(codes::BEM_MANIFEST_SIZE, 24,
        "manifest_size is " + std::to_string(h.manifest_size) + ", allowed 1..4194304");
    fatal = true;
  }
  if (h.flags != 0) {
    err(codes::BEM_HEADER_FLAGS, 36, "flags is " + std::to_string(h.flags) + ", expected 0");
    fatal = true;
  }
  // §11: directory entries per version (4096 for 1.0/1.1, 16384 from 1.2).
  std::uint32_t max_entries = h.minor >= 2 ? 16384 : 4096;
  if (h.payload_count > max_entries) {
    err(codes::BEM_PAYLOAD_COUNT, 32,
        "payload_count is " + std::to_string(h.payload_count) + ", BEM 1." +
            std::to_string(h.minor) + " allows at most " + std::to_string(max_entries));
    fatal = true;
  }
  if (fatal) return nullptr;

  std::uint64_t dir_offset = kHeaderSize + h.manifest_size;
  std::uint64_t dir_end = dir_offset + std::uint64_t{h.payload_count} * kDirectoryEntrySize;
  if (dir_offset > file.size() || dir_end > file.size()) {
    err(codes::BEM_DIRECTORY_TRUNCATED, dir_offset > file.size() ? kHeaderSize : dir_offset,
        "manifest and payload directory (" + std::to_string(dir_end) +
            " bytes with the header) run past the end of the file (" + std::to_string(file.size()) +
            " bytes)");
    return nullptr;
  }

  auto pkg = std::make_unique<BinaryPackage>();
  pkg->file_ = file;
  pkg->control_ = control;
  pkg->header_ = h;
  pkg->declared_minor_ = h.minor;
  pkg->manifest_offset_ = kHeaderSize;
  pkg->manifest_text_ = core::as_chars(file.subspan(kHeaderSize, h.manifest_size));

  std::uint64_t expected = dir_end;  // payloads start right after the directory
  bool ok = true;
  pkg->payloads_.reserve(h.payload_count);
  for (std::uint32_t i = 0; i < h.payload_count; ++i) {
    const std::uint64_t at = dir_offset + std::uint64_t{i} * kDirectoryEntrySize;
    DirectoryEntry e;
    (void)decode_directory_entry(file, at, e);  // inside the file: checked above
    const std::uint32_t codec = e.codec, reserved = e.reserved;
    PayloadInfo p;
    p.entry_offset = at;
    p.offset = e.offset;
    p.stored_size = e.stored_size;
    p.decoded_size = e.decoded_size;
    std::string who = "payload " + std::to_string(i) + ": ";
    if (codec > 1) {
      err(codes::BEM_PAYLOAD_CODEC, at,
          who + "codec is " + std::to_string(codec) + ", expected 0 (raw) or 1 (zstd)");
      ok = false;
    }
    p.codec = codec == 1 ? Codec::kZstd : Codec::kRaw;
    if (reserved != 0) {
      err(codes::BEM_PAYLOAD_RESERVED, at + 4,
          who + "reserved field is " + std::to_string(reserved) + ", expected 0");
      ok = false;
    }
    if (p.decoded_size < 1 || p.decoded_size > kMaxPayloadSize) {
      err(codes::BEM_PAYLOAD_DECODED_SIZE, at + 24,
          who + "decoded_size is " + std::to_string(p.decoded_size) + ", allowed 1..536870912");
      ok = false;
    }
    if (p.stored_size < 1 || p.stored_size > kMaxPayloadSize) {
      err(codes::BEM_PAYLOAD_STORED_SIZE, at + 16,
          who + "stored_size is " + std::to_string(p.stored_size) + ", allowed 1..536870912");
      ok = false;
    }
    if (codec == 0 && p.stored_size != p.decoded_size) {
      err(codes::BEM_PAYLOAD_RAW_SIZE, at + 16,
          who + "raw payload has stored_size " + std::to_string(p.stored_size) +
              " != decoded_size " + std::to_string(p.decoded_size));
      ok = false;
    }
    if (p.offset != expected) {
      const char* what = p.offset < expected ? "overlaps the previous data"
                                             : "leaves a gap after the previous data";
      err(p.offset < expected ? codes::BEM_PAYLOAD_OVERLAP : codes::BEM_PAYLOAD_GAP, at + 8,
          who + "offset " + std::to_string(p.offset) + " " + what + " (expected " +
              std::to_string(expected) + ")");
      ok = false;
    }
    if (p.offset > file.size() || p.stored_size > file.size() - p.offset) {
      err(codes::BEM_PAYLOAD_OUT_OF_RANGE, at + 8,
          who + "bytes " + std::to_string(p.offset) + ".." +
              std::to_string(p.offset + p.stored_size) + " lie outside the file (" +
              std::to_string(file.size()) + " bytes)");
      ok = false;
      break;
    }
    expected = p.offset + p.stored_size;
    pkg->payloads_.push_back(p);
  }
  if (ok && expected != file.size()) {
    err(codes::BEM_TRAILING_BYTES, expected,
        std::to_string(file.size() - expected) + " bytes follow the last payload");
    ok = false;
  }
  if (!ok) return nullptr;
  return pkg;
}

}  // namespace charkit::bem
