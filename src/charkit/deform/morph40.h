// Sparse morph blend with 40-byte records (the character-rendering frame
// analysis §5; docs/deform/morph40.md).
//
// A record is one affected vertex of one morph target:
//   bytes  0..3   UInt32 vertex index
//   bytes  4..15  Float32×3 position delta
//   bytes 16..27  Float32×3 normal delta
//   bytes 28..39  Float32×3 tangent delta
// and the vertex array it updates in place has a 40-byte stride: position at
// 0, normal at 12, tangent xyz at 24, the tangent's 4th component at 36
// (never touched). All little-endian. Each target's weight scales its
// deltas; nothing is normalised afterwards.
//
// The ordering rule (the frame analysis's): the records of one target are
// applied in parallel (one GPU invocation each, no float atomics), so one
// target must not name a vertex twice; targets are applied one after
// another. validate() refuses a target that names a vertex twice, so the
// threaded run and the GPU give the same bits as the scalar reference.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "charkit/core/job.h"
#include "charkit/core/result.h"
#include "charkit/gpu/context.h"

namespace charkit::deform {

inline constexpr std::size_t kMorph40RecordBytes = 40;
inline constexpr std::size_t kMorph40VertexBytes = 40;

/// One morph target: its records and the weight applied.
struct Morph40Target {
  std::span<const std::uint8_t> records;  ///< N × 40 bytes
  float weight = 0.0F;
};

/// The blend as a job (core/job.h: fill the spans, validate(), then run()).
struct Morph40Job {
  std::uint32_t vertex_count = 0;
  std::span<const Morph40Target> targets;
  std::span<std::uint8_t> vertices;  ///< vertex_count × 40 bytes, updated in place

  /// Errors (location offset = byte offset in the target's records, the
  /// target's index in the message): DEFORM_MORPH40_SIZE (a records span not
  /// a multiple of 40, vertices not vertex_count × 40), DEFORM_MORPH40_WEIGHT (a
  /// non-finite weight), DEFORM_MORPH40_VERTEX (an index ≥ vertex_count),
  /// DEFORM_MORPH40_VALUE (a non-finite delta), DEFORM_MORPH40_DUPLICATE (a
  /// target naming a vertex twice). Allocates one flag per vertex.
  core::Status validate() const;
  /// Targets in order, v += weight × delta per component. Without an
  /// executor, records in order on the calling thread (the reference);
  /// with one, each target's records split over it, one target after
  /// another: the same bits, because validate() refused a target that names
  /// a vertex twice. A record naming a vertex ≥ vertex_count is an error
  /// (DEFORM_MORPH40_VERTEX), never a write, and a vertices span of the
  /// wrong size is refused (DEFORM_MORPH40_SIZE), validated or not.
  /// Allocates nothing.
  core::Status run(const core::RunOptions& options = {}) const;
  /// The same bits on the GPU backend: one dispatch per target (chunked at
  /// the device's workgroup-count limit, and per chunk of the vertex array
  /// when it is past one binding's range), a barrier between them, the
  /// shader's multiply-adds unfused (`precise`). Requires a validated job.
  /// Errors: GPU_UNAVAILABLE, GPU_VULKAN.
  core::Status run_gpu(gpu::Context& context) const;
};

}  // namespace charkit::deform
