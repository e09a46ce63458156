// Sparse morph evaluation (BEM §10): position = base + Σ channels (w_a·Δa + w_b·Δb),
// the deltas of every channel summed first and added once to the original
// positions. Deltas come as sparse records (UInt32 vertex index + Float32
// ΔX/ΔY/ΔZ, 16 bytes, little-endian, read unaligned-safely).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "charkit/core/job.h"
#include "charkit/core/result.h"

namespace charkit::deform {

inline constexpr std::size_t kSparseRecordSize = 16;
inline constexpr std::uint32_t kMaxDeltaJsonSize = 4096;

/// One frame of one channel: its raw records and the weight applied.
struct SparseFrame {
  std::span<const std::uint8_t> records;  ///< N × 16 bytes
  float weight = 0.0f;
};

/// One channel: up to two frames (§10 evaluation: one exact frame or the
/// two neighbours of the tick). A frame with empty records contributes nothing.
struct SparseChannel {
  SparseFrame frames[2];
  std::uint32_t frame_count = 0;  ///< 0..2
};

/// The morph as a job (core/job.h: fill the spans, validate(), then run()).
/// `deltas` is caller scratch of vertex_count × 3 floats.
struct SparseMorphJob {
  std::uint32_t vertex_count = 0;
  /// Base positions: vertex v's x,y,z floats at base[v × base_stride + 0..11]
  /// (bytes; may point straight into a vertex stream, unaligned is fine).
  std::span<const std::uint8_t> base;
  std::uint32_t base_stride = 12;  ///< bytes between vertices (≥ 12)
  std::span<const SparseChannel> channels;
  std::span<float> deltas;  ///< scratch, vertex_count × 3
  std::span<float> out;     ///< vertex_count × 3 (x,y,z per vertex)

  /// Spans sized right, frame counts ≤ 2, record spans a multiple of 16
  /// (DEFORM_SHAPE); finite weights (DEFORM_WEIGHT). Record contents
  /// (vertex indices) are checked by run(), which reads them anyway.
  core::Status validate() const;
  /// The same bits as the scalar order of §10 (every vertex sums its
  /// records in channel, frame and record order). Frames whose records are
  /// sorted by vertex (what writers emit) are processed in L2-sized vertex
  /// tiles with one cursor per frame; unsorted or bad records are detected
  /// and the job is redone by scanning. With an executor and at least
  /// 65,536 vertices the vertices are split into options.parallelism()
  /// ranges (at most 16), which allocates a few small arrays; otherwise the
  /// calling thread runs it without allocating. Fails (BEM_MORPH_VERTEX,
  /// with the record's byte offset in its frame) on a record whose vertex
  /// index ≥ vertex_count; `out` is then unspecified.
  core::Status run(const core::RunOptions& options = {}) const;
};

namespace detail {
/// Tests and benches only: the scalar reference run() is compared with (one
/// pass over the records, then one over the vertices). Same errors.
core::Status run_sparse_morph_reference(const SparseMorphJob& job);
/// Tests only: run() uses the portable (SSE2) record kernel even where
/// the CPU has AVX-512, so both kernels are checked on one machine.
void use_portable_morph_kernel(bool portable);
}  // namespace detail

/// A parsed §10 delta payload: `4 + J + 16N` bytes.
struct SparseDeltas {
  std::uint32_t count = 0;                ///< N
  std::span<const std::uint8_t> records;  ///< N × 16 bytes (view into the payload)
};

/// Parse a delta payload: UInt32 J (1..4096), J bytes of JSON exactly
/// {"count":N,"encoding":"sparse-position-f32"} (strict parser; no other
/// keys), total size exactly 4 + J + 16N. When vertex_count is non-zero
/// every record's vertex index must be below it; deltas must be finite;
/// expected_count, when given, must equal N. Codes: BEM_DELTA_SIZE,
/// BEM_DELTA_JSON, BEM_DELTA_COUNT, BEM_DELTA_VERTEX, BEM_DELTA_VALUE;
/// location offset = byte offset in the payload.
core::Result<SparseDeltas> parse_sparse_deltas(std::span<const std::uint8_t> payload,
                                               std::uint32_t vertex_count = 0,
                                               std::int64_t expected_count = -1);

}  // namespace charkit::deform
