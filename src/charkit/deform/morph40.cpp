#include "charkit/deform/morph40.h"

#include <atomic>
#include <bit>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "charkit/deform/error_codes.h"

namespace charkit::deform {

static_assert(std::endian::native == std::endian::little, "morph40 assumes little-endian");

namespace {

core::Error record_error(const core::ErrorCode& code, std::size_t target, std::size_t record,
                         const std::string& what) {
  return core::error_at_offset(
      code, "target " + std::to_string(target) + ", record " + std::to_string(record) + ": " + what,
      record * kMorph40RecordBytes);
}

/// Apply records [begin, end) of one target; returns the first record whose
/// vertex is out of range, or SIZE_MAX.
std::size_t apply(const Morph40Target& t, std::size_t begin, std::size_t end,
                  std::uint32_t vertex_count, std::uint8_t* vertices) {
  const std::uint8_t* p = t.records.data();
  const float w = t.weight;
  constexpr std::size_t kAhead =
      128;  // records ahead whose vertices are prefetched (measured: bench/morph40_bench.cpp)
  for (std::size_t i = begin; i < end; ++i) {
    if (i + kAhead < end) {
      std::uint32_t ahead;
      std::memcpy(&ahead, p + (i + kAhead) * kMorph40RecordBytes, 4);
      if (ahead < vertex_count) {
        const std::uint8_t* a = vertices + std::size_t{ahead} * kMorph40VertexBytes;
        __builtin_prefetch(a, 1);
        __builtin_prefetch(a + 39, 1);  // a vertex may straddle two cache lines
      }
    }
    const std::uint8_t* r = p + i * kMorph40RecordBytes;
    std::uint32_t v;
    std::memcpy(&v, r, 4);
    if (v >= vertex_count) return i;
    float d[9];
    std::memcpy(d, r + 4, sizeof d);
    float x[9];
    std::uint8_t* out = vertices + std::size_t{v} * kMorph40VertexBytes;
    std::memcpy(x, out, sizeof x);  // position, normal, tangent xyz; byte 36.. untouched
    for (int c = 0; c < 9; ++c) {
      const float m = w * d[c];
      x[c] = x[c] + m;
    }
    std::memcpy(out, x, sizeof x);
  }
  return SIZE_MAX;
}

}  // namespace

core::Status Morph40Job::validate() const {
  if (vertices.size() != std::size_t{vertex_count} * kMorph40VertexBytes)
    return core::make_error(codes::DEFORM_MORPH40_SIZE,
                            "vertices span is " + std::to_string(vertices.size()) +
                                " bytes, expected " + std::to_string(vertex_count) + " × 40");
  std::vector<std::uint32_t> last_target(vertex_count, UINT32_MAX);
  for (std::size_t t = 0; t < targets.size(); ++t) {
    const Morph40Target& target = targets[t];
    if (target.records.size() % kMorph40RecordBytes != 0)
      return core::make_error(codes::DEFORM_MORPH40_SIZE,
                              "target " + std::to_string(t) + ": records span of " +
                                  std::to_string(target.records.size()) +
                                  " bytes is not a multiple of 40");
    if (!std::isfinite(target.weight))
      return core::make_error(codes::DEFORM_MORPH40_WEIGHT,
                              "target " + std::to_string(t) + ": weight is not finite");
    const std::size_t n = target.records.size() / kMorph40RecordBytes;
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint8_t* r = target.records.data() + i * kMorph40RecordBytes;
      std::uint32_t v;
      std::memcpy(&v, r, 4);
      if (v >= vertex_count)
        return record_error(codes::DEFORM_MORPH40_VERTEX, t, i,
                            "vertex " + std::to_string(v) + " of " + std::to_string(vertex_count));
      float d[9];
      std::memcpy(d, r + 4, sizeof d);
      for (float x : d)
        if (!std::isfinite(x))
          return record_error(codes::DEFORM_MORPH40_VALUE, t, i, "a delta is not finite");
      if (last_target[v] == t)
        return record_error(codes::DEFORM_MORPH40_DUPLICATE, t, i,
                            "vertex " + std::to_string(v) +
                                " is named twice by this target (its records run in parallel)");
      last_target[v] = static_cast<std::uint32_t>(t);
    }
  }
  return core::Ok{};
}

core::Status Morph40Job::run(const core::RunOptions& options) const {
  if (vertices.size() != std::size_t{vertex_count} * kMorph40VertexBytes)
    return core::make_error(codes::DEFORM_MORPH40_SIZE, "vertices span size");
  for (std::size_t t = 0; t < targets.size(); ++t) {
    const std::size_t n = targets[t].records.size() / kMorph40RecordBytes;
    if (options.executor == nullptr) {
      const std::size_t bad = apply(targets[t], 0, n, vertex_count, vertices.data());
      if (bad != SIZE_MAX)
        return record_error(codes::DEFORM_MORPH40_VERTEX, t, bad, "vertex out of range");
      continue;
    }
    std::atomic<std::size_t> bad{SIZE_MAX};
    // One target = one dispatch: its records in parallel chunks; the
    // parallel_for returning is the barrier before the next target.
    options.executor->parallel_for(
        0, n, options.grain(n, 16384), [&](std::size_t begin, std::size_t end) {
          const std::size_t b = apply(targets[t], begin, end, vertex_count, vertices.data());
          if (b != SIZE_MAX) {
            std::size_t cur = bad.load();
            while (b < cur && !bad.compare_exchange_weak(cur, b)) {
            }
          }
        });
    if (bad.load() != SIZE_MAX)
      return record_error(codes::DEFORM_MORPH40_VERTEX, t, bad.load(), "vertex out of range");
  }
  return core::Ok{};
}

}  // namespace charkit::deform
