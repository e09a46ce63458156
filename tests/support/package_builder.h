// Test support: BEM packages built by hand from the spec, not by charkit's
// own writer. build_binary lays out §2 byte by byte; build_zip writes PKZip
// local headers, central directory and end records by hand (zlib only for
// CRC-32 and raw DEFLATE).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "charkit/core/json.h"

namespace charkit::testkit {

using ByteVec = std::vector<std::uint8_t>;

/// The parts one after another.
inline ByteVec cat(std::initializer_list<ByteVec> parts) {
  ByteVec out;
  for (const ByteVec& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}
using core::Json;

/// One payload as it is to be stored in a binary container.
struct StoredPayload {
  ByteVec decoded;    ///< the payload bytes
  bool zstd = false;  ///< store as a zstd frame (content size set)
};

/// Everything of a binary container that a test may want to break.
struct BinaryLayout {
  std::uint16_t major = 1;
  std::uint16_t minor = 0;
  std::uint32_t header_size = 40;
  std::optional<std::uint64_t> file_size;      ///< default: the real length
  std::optional<std::uint64_t> manifest_size;  ///< default: manifest.size()
  std::optional<std::uint32_t> payload_count;  ///< default: payloads.size()
  std::uint32_t flags = 0;
  std::string manifest;
  std::vector<StoredPayload> payloads;
  ByteVec trailing;  ///< bytes appended after the last payload
};

/// The raw directory entry values, when a test wants to set them itself.
struct DirectoryEntry {
  std::uint32_t codec;
  std::uint32_t reserved;
  std::uint64_t offset;
  std::uint64_t stored_size;
  std::uint64_t decoded_size;
};

/// Serialise a layout to bytes (§2). Directory entries are computed
/// (contiguous, in order) unless `entries` overrides them.
ByteVec build_binary(const BinaryLayout& layout,
                     const std::optional<std::vector<DirectoryEntry>>& entries = std::nullopt);
/// Byte offset of the directory in a layout built by build_binary.
std::uint64_t directory_offset(const BinaryLayout& layout);

/// zstd-compress bytes as one frame with the content size set.
ByteVec zstd_frame(const ByteVec& data, int level = 3);

struct ZipEntry {
  std::string name;
  ByteVec data;
  std::uint16_t method = 0;  ///< 0 STORED, 8 DEFLATE (others written as given, data stored)
  std::uint16_t flags = 0;   ///< general purpose bits (bit 0 = encrypted)
  bool zip64 = false;        ///< write Zip64 extra fields for this entry
};
struct ZipOptions {
  bool zip64_end = false;  ///< write Zip64 end of central directory records
};
ByteVec build_zip(const std::vector<ZipEntry>& entries, const ZipOptions& options = {});

/// A package as a manifest plus decoded payloads, serialisable to both containers.
struct TestPackage {
  int minor = 0;
  Json manifest;
  std::vector<ByteVec> payloads;

  ByteVec binary(bool zstd = false) const;
  /// ZIP form: manifest.json + payloads/NNNN.bin; format_version written
  /// unless `with_format_version` is false.
  ByteVec zip(bool deflate = false, bool with_format_version = true,
              const std::string& folder = "") const;
};

/// A small valid package for header minor 0..5 in the legacy target form:
/// two components (0 replaced by mesh 0, 1 kept), one mesh of 3 vertices with
/// position/uv/rigid-skin streams, one draw, one 4×4 RGBA32 texture.
/// 1.0 uses appearances; 1.1+ one option group "outfit" {a, b}.
TestPackage make_valid_package(int minor);
/// A valid 1.4 package in the explicit resource-target form.
TestPackage make_valid_package_v14();

/// Makes mesh (a manifest mesh of make_valid_package) a 4-vertex quad with a
/// 12-byte skin: stream 0 position + normal (Float32×3 each, stride 24),
/// stream 1 UV (Float32×2), stream 2 UNorm16×4 weights + UInt8×4 bones over
/// the bones Bip001_Pelvis and Bip001_Spine of component 0.
void make_quad_skin_mesh(Json& mesh);

/// The name of a package's i-th payload in its ZIP form: "payloads/0003.bin".
std::string payload_name(std::size_t i);

/// Little-endian field writers, for spelling out a format's structures.
void u16le(ByteVec& b, std::uint16_t v);
void u32le(ByteVec& b, std::uint32_t v);
void u64le(ByteVec& b, std::uint64_t v);

/// Little helpers to make payload bytes.
ByteVec f32_bytes(const std::vector<float>& v);
ByteVec u16_bytes(const std::vector<std::uint16_t>& v);
ByteVec u32_bytes(const std::vector<std::uint32_t>& v);

}  // namespace charkit::testkit
