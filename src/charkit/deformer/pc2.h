// PC2 point caches (docs/deformer/rig.md §5): a 32-byte header — char[12]
// "POINTCACHE2\0", int32 version (1), int32 numPoints, float32 startFrame,
// float32 sampleRate, int32 numSamples — then numSamples × numPoints × 3
// float32 (x, y, z), all little-endian. A cache aligned with sampled poses is
// a training-target source (targets.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <vector>

#include "charkit/core/bytes.h"
#include "charkit/core/result.h"

namespace charkit::deformer {

inline constexpr std::size_t kPc2HeaderSize = 32;

struct PointCache {
  float start_frame = 0.0F;
  float sample_rate = 1.0F;
  std::size_t point_count = 0;
  std::size_t sample_count = 0;
  std::vector<float> positions;  ///< sample_count × point_count × 3

  /// The 3 × point_count floats of one sample.
  std::span<const float> sample(std::size_t s) const {
    return std::span<const float>(positions).subspan(s * point_count * 3, point_count * 3);
  }
};

struct Pc2Limits {
  std::uint64_t max_floats = std::uint64_t{1} << 28;  ///< 1 GiB of positions
};

/// Errors (byte offsets): PC2_TRUNCATED (shorter than the header), PC2_MAGIC,
/// PC2_VERSION, PC2_COUNT (negative count), PC2_TOO_LARGE (above limits),
/// PC2_SIZE (file size differs from what the header declares; checked before
/// anything is allocated), PC2_NOT_FINITE (a NaN or infinite coordinate).
core::Result<PointCache> read_pc2(core::Bytes bytes, const Pc2Limits& limits = {});

/// Errors: PC2_SHAPE (positions size, counts above int32), PC2_NOT_FINITE.
core::Result<std::vector<std::uint8_t>> write_pc2(const PointCache& cache);

/// File forms; I/O errors are IO_OPEN / IO_READ / IO_WRITE (npy.h's file helpers).
core::Result<PointCache> read_pc2_file(const std::filesystem::path& path,
                                       const Pc2Limits& limits = {});
core::Status write_pc2_file(const PointCache& cache, const std::filesystem::path& path);

}  // namespace charkit::deformer
