#include "charkit/deformer/pc2.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "charkit/deformer/error_codes.h"
#include "charkit/deformer/npy.h"

namespace charkit::deformer {

using core::Location;
using core::make_error;

namespace {

constexpr char kPc2Magic[12] = {'P', 'O', 'I', 'N', 'T', 'C', 'A', 'C', 'H', 'E', '2', '\0'};

}  // namespace

core::Result<PointCache> read_pc2(core::Bytes bytes, const Pc2Limits& limits) {
  if (bytes.size() < kPc2HeaderSize)
    return core::error_at_offset(
        codes::PC2_TRUNCATED,
        "file of " + std::to_string(bytes.size()) + " bytes is shorter than the 32-byte PC2 header",
        bytes.size());
  if (std::memcmp(bytes.data(), kPc2Magic, sizeof kPc2Magic) != 0)
    return core::error_at_offset(codes::PC2_MAGIC, "not a PC2 file (no \"POINTCACHE2\\0\")", 0);
  const auto i32 = [&](std::size_t off) {
    return static_cast<std::int32_t>(core::load_le<std::uint32_t>(bytes.data() + off));
  };
  if (const std::int32_t version = i32(12); version != 1)
    return core::error_at_offset(codes::PC2_VERSION,
                                 "PC2 version " + std::to_string(version) + ", expected 1", 12);
  const std::int32_t points = i32(16);
  const std::int32_t samples = i32(28);
  if (points < 0) return core::error_at_offset(codes::PC2_COUNT, "negative point count", 16);
  if (samples < 0) return core::error_at_offset(codes::PC2_COUNT, "negative sample count", 28);
  PointCache c;
  c.start_frame = core::load_f32_le(bytes.data() + 20);
  c.sample_rate = core::load_f32_le(bytes.data() + 24);
  if (!std::isfinite(c.start_frame) || !std::isfinite(c.sample_rate))
    return core::error_at_offset(codes::PC2_NOT_FINITE, "start frame or sample rate is not finite",
                                 std::isfinite(c.start_frame) ? 24 : 20);
  // Both factors are below 2^31, so the product fits in 64 bits.
  const std::uint64_t floats =
      static_cast<std::uint64_t>(points) * static_cast<std::uint64_t>(samples) * 3;
  if (floats > limits.max_floats)
    return core::error_at_offset(codes::PC2_TOO_LARGE,
                                 std::to_string(samples) + " samples of " + std::to_string(points) +
                                     " points exceed the limit of " +
                                     std::to_string(limits.max_floats) + " floats",
                                 16);
  const std::uint64_t expected = kPc2HeaderSize + floats * 4;
  if (bytes.size() != expected)
    return core::error_at_offset(codes::PC2_SIZE,
                                 "header declares " + std::to_string(expected) +
                                     " bytes, file has " + std::to_string(bytes.size()),
                                 std::min<std::uint64_t>(bytes.size(), expected));
  c.point_count = static_cast<std::size_t>(points);
  c.sample_count = static_cast<std::size_t>(samples);
  c.positions.resize(static_cast<std::size_t>(floats));
  for (std::size_t i = 0; i < c.positions.size(); ++i) {
    const float f = core::load_f32_le(bytes.data() + kPc2HeaderSize + i * 4);
    if (!std::isfinite(f))
      return core::error_at_offset(codes::PC2_NOT_FINITE,
                                   "sample " + std::to_string(i / (3 * c.point_count)) + " point " +
                                       std::to_string(i / 3 % c.point_count) + " is not finite",
                                   kPc2HeaderSize + i * 4);
    c.positions[i] = f;
  }
  return c;
}

core::Result<std::vector<std::uint8_t>> write_pc2(const PointCache& c) {
  constexpr auto kMax = static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max());
  // Both counts below 2^31: the product times 3 fits in 64 bits. A cache of
  // zero points may declare any number of (empty) samples.
  if (c.point_count > kMax || c.sample_count > kMax ||
      c.positions.size() != static_cast<std::uint64_t>(c.point_count) *
                                static_cast<std::uint64_t>(c.sample_count) * 3)
    return make_error(codes::PC2_SHAPE, "positions must be sample_count × point_count × 3 floats");
  if (!std::isfinite(c.start_frame) || !std::isfinite(c.sample_rate))
    return make_error(codes::PC2_NOT_FINITE, "start frame or sample rate is not finite");
  core::ByteWriter w;
  w.write_bytes(core::Bytes(reinterpret_cast<const std::uint8_t*>(kPc2Magic), sizeof kPc2Magic));
  w.write(std::uint32_t{1});
  w.write(static_cast<std::uint32_t>(c.point_count));
  w.write_f32(c.start_frame);
  w.write_f32(c.sample_rate);
  w.write(static_cast<std::uint32_t>(c.sample_count));
  for (std::size_t i = 0; i < c.positions.size(); ++i) {
    if (!std::isfinite(c.positions[i]))
      return make_error(codes::PC2_NOT_FINITE,
                        "position float " + std::to_string(i) + " is not finite");
    w.write_f32(c.positions[i]);
  }
  return std::move(w).take();
}

core::Result<PointCache> read_pc2_file(const std::filesystem::path& path, const Pc2Limits& limits) {
  auto bytes = read_file_bytes(path, kPc2HeaderSize + limits.max_floats * 4);
  if (!bytes) return std::move(bytes).error();
  return read_pc2(*bytes, limits);
}

core::Status write_pc2_file(const PointCache& cache, const std::filesystem::path& path) {
  auto bytes = write_pc2(cache);
  if (!bytes) return std::move(bytes).error();
  return write_file_bytes(path, *bytes);
}

}  // namespace charkit::deformer
