#include "charkit/deform/sparse_morph.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#include <xmmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define CHARKIT_MORPH_AVX512 1
#endif

#include "charkit/core/json.h"
#include "charkit/deform/error_codes.h"

namespace charkit::deform {

// Records are little-endian (§10); a memcpy load is only right on a
// little-endian host, which is all we build for.
static_assert(std::endian::native == std::endian::little, "sparse_morph assumes little-endian");

namespace {

struct Record {
  std::uint32_t vertex;
  float d[3];
};

inline Record load_record(const std::uint8_t* p) {
  Record r;
  std::memcpy(&r.vertex, p, 4);
  std::memcpy(r.d, p + 4, 12);
  return r;
}

core::Error vertex_error(std::size_t offset, std::uint32_t vertex, std::uint32_t vertex_count) {
  return core::error_at_offset(codes::BEM_MORPH_VERTEX,
                               "delta record names vertex " + std::to_string(vertex) +
                                   ", mesh has " + std::to_string(vertex_count),
                               offset);
}

// Accumulate the records of one frame whose vertex lies in [lo, hi).
// Returns the byte offset of the first out-of-range record, or SIZE_MAX.
std::size_t accumulate_range(const SparseFrame& f, std::uint32_t vertex_count, std::uint32_t lo,
                             std::uint32_t hi, float* deltas) {
  const std::uint8_t* p = f.records.data();
  const std::size_t n = f.records.size() / kSparseRecordSize;
  const float w = f.weight;
  std::size_t i = 0;
  // Four records per step: the loads are independent, so the CPU overlaps
  // them; stores stay in record order (same summation order as run()).
  for (; i + 4 <= n; i += 4) {
    Record r[4];
    for (int k = 0; k < 4; ++k) r[k] = load_record(p + (i + static_cast<std::size_t>(k)) * 16);
    for (int k = 0; k < 4; ++k) {
      const std::uint32_t v = r[k].vertex;
      if (v >= vertex_count) return (i + static_cast<std::size_t>(k)) * 16;
      if (v < lo || v >= hi) continue;
      float* d = deltas + static_cast<std::size_t>(v) * 3;
      d[0] += w * r[k].d[0];
      d[1] += w * r[k].d[1];
      d[2] += w * r[k].d[2];
    }
  }
  for (; i < n; ++i) {
    const Record r = load_record(p + i * 16);
    if (r.vertex >= vertex_count) return i * 16;
    if (r.vertex < lo || r.vertex >= hi) continue;
    float* d = deltas + static_cast<std::size_t>(r.vertex) * 3;
    d[0] += w * r.d[0];
    d[1] += w * r.d[1];
    d[2] += w * r.d[2];
  }
  return SIZE_MAX;
}

// out = base + deltas for vertices [lo, hi).
void add_base(const SparseMorphJob& job, std::uint32_t lo, std::uint32_t hi) {
  const std::uint8_t* b = job.base.data();
  for (std::uint32_t v = lo; v < hi; ++v) {
    float xyz[3];
    std::memcpy(xyz, b + static_cast<std::size_t>(v) * job.base_stride, 12);
    const std::size_t o = static_cast<std::size_t>(v) * 3;
    job.out[o] = xyz[0] + job.deltas[o];
    job.out[o + 1] = xyz[1] + job.deltas[o + 1];
    job.out[o + 2] = xyz[2] + job.deltas[o + 2];
  }
}

// The whole job on vertices [lo, hi): zero, accumulate every channel, add base.
core::Status run_range(const SparseMorphJob& job, std::uint32_t lo, std::uint32_t hi) {
  std::fill(job.deltas.begin() + static_cast<std::ptrdiff_t>(lo) * 3,
            job.deltas.begin() + static_cast<std::ptrdiff_t>(hi) * 3, 0.0f);
  for (const SparseChannel& c : job.channels) {
    for (std::uint32_t f = 0; f < c.frame_count; ++f) {
      const std::size_t bad =
          accumulate_range(c.frames[f], job.vertex_count, lo, hi, job.deltas.data());
      if (bad != SIZE_MAX) {
        std::uint32_t v = 0;
        std::memcpy(&v, c.frames[f].records.data() + bad, 4);
        return vertex_error(bad, v, job.vertex_count);
      }
    }
  }
  add_base(job, lo, hi);
  return core::Ok{};
}

// ---- the tiled fast path -------------------------------------------------
//
// Writers emit records sorted by vertex (the usual case). Then the delta
// buffer can be processed in tiles that stay in L2: for each tile, every
// frame (in channel/frame order) contributes its run of records that fall in
// the tile, through a cursor per frame. Each vertex still receives its
// contributions in the reference order, so results are bit-identical.
// Sortedness is not assumed: every consumed record is checked to lie in the
// current tile, and every frame's cursor must reach its end (or, with
// threads, the runs must partition the frame); any anomaly (a record outside
// its tile, out-of-range index) makes the caller redo the job with the
// scanning path, which reports errors exactly as run() does.

constexpr std::uint32_t kTileVertices = 8192;  // 128 KiB of 4-float accumulators: L2-resident
// The stream prefetched while a frame's run is read is the run of the frame
// this many places later in channel/frame order (wrapping to the next tile):
// its data then has several runs' time to arrive, whatever the number of
// frames, and only this many runs are in flight in L2. Prefetching each
// stream's own data a fixed distance ahead gave it less than a memory
// latency with 128 frames (bench/RESULTS.md, sparse morph).
constexpr std::size_t kPrefetchFrames = 4;
// Outputs of at least this many vertices are written with streaming stores:
// larger than L2, so the lines would be evicted before any reader came; the
// stores then skip the read-for-ownership of every output line.
constexpr std::uint32_t kStreamingVertices = 1u << 18;

struct FrameRef {
  const std::uint8_t* p = nullptr;
  std::size_t n = 0;  // records
  float w = 0.0f;
};

/// Where a run's prefetches go: [p, end) of a later frame's records.
struct PrefetchStream {
  const std::uint8_t* p = nullptr;
  const std::uint8_t* end = nullptr;
  void touch(std::size_t byte) const {
#if defined(__SSE2__)
    if (p + byte < end) _mm_prefetch(reinterpret_cast<const char*>(p + byte), _MM_HINT_T0);
#else
    (void)byte;
#endif
  }
};

std::size_t frame_total(const SparseMorphJob& job) {
  std::size_t f = 0;
  for (const SparseChannel& c : job.channels) f += c.frame_count;
  return f;
}

// Every frame in channel/frame order.
std::vector<FrameRef> collect_frames(const SparseMorphJob& job) {
  std::vector<FrameRef> out;
  out.reserve(frame_total(job));
  for (const SparseChannel& c : job.channels)
    for (std::uint32_t f = 0; f < c.frame_count; ++f)
      out.push_back(FrameRef{c.frames[f].records.data(),
                             c.frames[f].records.size() / kSparseRecordSize, c.frames[f].weight});
  return out;
}

inline std::uint32_t record_vertex(const FrameRef& f, std::size_t i) {
  std::uint32_t x = 0;
  std::memcpy(&x, f.p + i * kSparseRecordSize, 4);
  return x;
}

// First record in [first, n) whose vertex is ≥ v, assuming the frame is sorted.
std::size_t lower_bound_vertex(const FrameRef& f, std::size_t first, std::uint32_t v) {
  std::size_t count = f.n - first;
  while (count > 0) {
    const std::size_t step = count / 2;
    if (record_vertex(f, first + step) < v) {
      first += step + 1;
      count -= step + 1;
    } else {
      count = step;
    }
  }
  return first;
}

// The record loop of a run, one record at a time, from *cursor: adds the
// records whose vertex lies in the tile, stops at the first at or past the
// tile's end. Returns false on a record below the tile (an unsorted frame).
// A record is 16 bytes: u32 vertex then 3 floats, so one 128-bit load holds
// the delta in lanes 1–3; lane 0 (the vertex bits) is masked to zero.
inline bool accumulate_records(const FrameRef& fr, std::size_t* cursor, std::uint32_t a,
                               std::uint32_t span, float* acc) {
  std::size_t i = *cursor;
  bool ok = true;
#if defined(__SSE2__)
  const __m128 w = _mm_set1_ps(fr.w);
  const __m128 mask = _mm_castsi128_ps(_mm_set_epi32(-1, -1, -1, 0));
#endif
  for (; i < fr.n; ++i) {
    const std::uint8_t* rec = fr.p + i * kSparseRecordSize;
    std::uint32_t v = 0;
    std::memcpy(&v, rec, 4);
    const std::uint32_t off = v - a;
    if (off >= span) {
      ok = v >= a;  // past the tile: the run ends; below it: unsorted
      break;
    }
    float* d = acc + static_cast<std::size_t>(off) * 4;
#if defined(__SSE2__)
    const __m128 delta = _mm_and_ps(_mm_loadu_ps(reinterpret_cast<const float*>(rec)), mask);
    _mm_store_ps(d, _mm_add_ps(_mm_load_ps(d), _mm_mul_ps(w, delta)));
#else
    const Record r = load_record(rec);
    d[1] += fr.w * r.d[0];
    d[2] += fr.w * r.d[1];
    d[3] += fr.w * r.d[2];
#endif
  }
  *cursor = i;
  return ok;
}

// acc[4·(v − a) + 1..3] += w · delta for the records from *cursor on whose
// vertex lies in the tile [a, a + span); stops at the first record at or
// past the tile's end (the frame's run for this tile when it is sorted) and
// advances *cursor. Returns false on a record below the tile (an unsorted
// frame): the caller then discards the job. The run is read in blocks of
// four records (one 64-byte line) with one range test for the four (their
// largest offset) and one prefetch into `pf`; a block with a record outside
// the tile goes to the record loop, which ends the run or reports it
// unsorted. Same operations per component, in the same order, as run():
// bit-identical. A linear scan, not a binary search for the run's end: the
// search's far probes miss the cache, the scan's compare is one predictable
// branch on a line that is read anyway.
inline bool accumulate_run(const FrameRef& fr, std::size_t* cursor, std::uint32_t a,
                           std::uint32_t span, float* acc, const PrefetchStream& pf) {
#if defined(__SSE2__)
  std::size_t i = *cursor;
  const std::size_t i0 = i;
  const __m128 w = _mm_set1_ps(fr.w);
  const __m128 mask = _mm_castsi128_ps(_mm_set_epi32(-1, -1, -1, 0));
  for (; i + 4 <= fr.n; i += 4) {
    const std::uint8_t* rec = fr.p + i * kSparseRecordSize;
    std::uint32_t v[4];
    for (int k = 0; k < 4; ++k) std::memcpy(&v[k], rec + 16 * k, 4);
    const std::uint32_t off[4] = {v[0] - a, v[1] - a, v[2] - a, v[3] - a};
    if (std::max(std::max(off[0], off[1]), std::max(off[2], off[3])) >= span) break;
    pf.touch((i - i0) * kSparseRecordSize);
    for (int k = 0; k < 4; ++k) {
      float* d = acc + static_cast<std::size_t>(off[k]) * 4;
      const __m128 delta =
          _mm_and_ps(_mm_loadu_ps(reinterpret_cast<const float*>(rec + 16 * k)), mask);
      _mm_store_ps(d, _mm_add_ps(_mm_load_ps(d), _mm_mul_ps(w, delta)));
    }
  }
  *cursor = i;
#else
  (void)pf;
#endif
  return accumulate_records(fr, cursor, a, span, acc);
}

#if defined(CHARKIT_MORPH_AVX512)
// 128-bit lane K of v. The zero-masked extract: GCC 12 warns on the
// unmasked one's (and the cast's) undefined pass-through operand.
template <int K>
__attribute__((target("avx512f"))) inline __m128 lane(__m512 v) {
  return _mm512_maskz_extractf32x4_ps(0xF, v, K);
}

// accumulate_run with one 512-bit load per block of four records: the range
// test of the four vertex lanes is one compare into a mask, the weighting one
// multiply that zeroes the vertex lanes; each record's lane is then added to
// its accumulator. Same per-component operations as accumulate_run.
__attribute__((target("avx512f"))) bool accumulate_run_avx512(const FrameRef& fr,
                                                              std::size_t* cursor, std::uint32_t a,
                                                              std::uint32_t span, float* acc,
                                                              const PrefetchStream& pf) {
  std::size_t i = *cursor;
  const std::size_t i0 = i;
  const __m512i av = _mm512_set1_epi32(static_cast<int>(a));
  const __m512i spanv = _mm512_set1_epi32(static_cast<int>(span));
  const __m512 w = _mm512_set1_ps(fr.w);
  constexpr __mmask16 kVertexLanes = 0x1111;
  for (; i + 4 <= fr.n; i += 4) {
    const std::uint8_t* rec = fr.p + i * kSparseRecordSize;
    const __m512i x = _mm512_loadu_si512(rec);
    const __m512i off = _mm512_sub_epi32(x, av);
    if (_mm512_mask_cmplt_epu32_mask(kVertexLanes, off, spanv) != kVertexLanes) break;
    pf.touch((i - i0) * kSparseRecordSize);
    const __m512 d =
        _mm512_maskz_mul_ps(static_cast<__mmask16>(~kVertexLanes), w, _mm512_castsi512_ps(x));
    std::uint32_t o[4];
    for (int k = 0; k < 4; ++k) std::memcpy(&o[k], rec + 16 * k, 4);
    float* p0 = acc + static_cast<std::size_t>(o[0] - a) * 4;
    float* p1 = acc + static_cast<std::size_t>(o[1] - a) * 4;
    float* p2 = acc + static_cast<std::size_t>(o[2] - a) * 4;
    float* p3 = acc + static_cast<std::size_t>(o[3] - a) * 4;
    _mm_store_ps(p0, _mm_add_ps(_mm_load_ps(p0), lane<0>(d)));
    _mm_store_ps(p1, _mm_add_ps(_mm_load_ps(p1), lane<1>(d)));
    _mm_store_ps(p2, _mm_add_ps(_mm_load_ps(p2), lane<2>(d)));
    _mm_store_ps(p3, _mm_add_ps(_mm_load_ps(p3), lane<3>(d)));
  }
  *cursor = i;
  return accumulate_records(fr, cursor, a, span, acc);
}
#endif

using RunKernel = bool (*)(const FrameRef&, std::size_t*, std::uint32_t, std::uint32_t, float*,
                           const PrefetchStream&);

// Set by tests (detail::use_portable_morph_kernel) to check the portable
// kernel on a machine with AVX-512.
std::atomic<bool> g_force_portable{false};

RunKernel pick_kernel() {
#if defined(CHARKIT_MORPH_AVX512)
  static const bool has_avx512 = __builtin_cpu_supports("avx512f") != 0;
  if (has_avx512 && !g_force_portable.load(std::memory_order_relaxed))
    return &accumulate_run_avx512;
#endif
  return
      [](const FrameRef& fr, std::size_t* cursor, std::uint32_t a, std::uint32_t span, float* acc,
         const PrefetchStream& pf) { return accumulate_run(fr, cursor, a, span, acc, pf); };
}

// deltas and out of vertices [a, t1) from the tile's accumulators (lanes
// 1–3 of each quad) and the base positions.
void finish_tile(const SparseMorphJob& job, std::uint32_t a, std::uint32_t t1, const float* acc,
                 bool streaming) {
  const std::uint8_t* base = job.base.data();
  std::uint32_t v = a;
#if defined(__SSE2__)
  // Four vertices per step: the quads (·,x,y,z) become 12 packed floats;
  // streaming stores when the caller asked and the outputs are aligned.
  float* dd = job.deltas.data() + static_cast<std::size_t>(a) * 3;
  float* oo = job.out.data() + static_cast<std::size_t>(a) * 3;
  if (streaming && job.base_stride == 12 && reinterpret_cast<std::uintptr_t>(dd) % 16 == 0 &&
      reinterpret_cast<std::uintptr_t>(oo) % 16 == 0) {
    for (; v + 4 <= t1; v += 4, dd += 12, oo += 12) {
      const float* q = acc + static_cast<std::size_t>(v - a) * 4;
      const __m128 q0 = _mm_load_ps(q), q1 = _mm_load_ps(q + 4), q2 = _mm_load_ps(q + 8),
                   q3 = _mm_load_ps(q + 12);
      // x0 y0 z0 x1 | y1 z1 x2 y2 | z2 x3 y3 z3
      const __m128 p0 = _mm_shuffle_ps(q0, _mm_shuffle_ps(q0, q1, _MM_SHUFFLE(1, 1, 3, 3)),
                                       _MM_SHUFFLE(3, 0, 2, 1));
      const __m128 p1 = _mm_shuffle_ps(q1, q2, _MM_SHUFFLE(2, 1, 3, 2));
      const __m128 p2 = _mm_shuffle_ps(_mm_shuffle_ps(q2, q3, _MM_SHUFFLE(1, 1, 3, 3)), q3,
                                       _MM_SHUFFLE(3, 2, 2, 0));
      const auto* b = reinterpret_cast<const float*>(base + static_cast<std::size_t>(v) * 12);
      _mm_stream_ps(dd, p0);
      _mm_stream_ps(dd + 4, p1);
      _mm_stream_ps(dd + 8, p2);
      _mm_stream_ps(oo, _mm_add_ps(_mm_loadu_ps(b), p0));
      _mm_stream_ps(oo + 4, _mm_add_ps(_mm_loadu_ps(b + 4), p1));
      _mm_stream_ps(oo + 8, _mm_add_ps(_mm_loadu_ps(b + 8), p2));
    }
  }
#else
  (void)streaming;
#endif
  for (; v < t1; ++v) {
    const float* d = acc + static_cast<std::size_t>(v - a) * 4;
    float xyz[3];
    std::memcpy(xyz, base + static_cast<std::size_t>(v) * job.base_stride, 12);
    const std::size_t o = static_cast<std::size_t>(v) * 3;
    job.deltas[o] = d[1];
    job.deltas[o + 1] = d[2];
    job.deltas[o + 2] = d[3];
    job.out[o] = xyz[0] + d[1];
    job.out[o + 1] = xyz[1] + d[2];
    job.out[o + 2] = xyz[2] + d[3];
  }
}

// The job on vertices [lo, hi) by tiles: for each tile, every frame (in
// channel/frame order) adds its run of records that fall in the tile into a
// tile-local accumulator; then the tile's deltas and outputs are written.
// whole: lo == 0 and
// hi == vertex_count, cursors start at 0 and must reach the end; otherwise
// the start and end cursor of every frame is stored in starts/ends for the
// caller to check that the threads' runs partition each frame.
// Returns false on an anomaly (the caller falls back to run_range).
bool run_tiled(const SparseMorphJob& job, std::uint32_t lo, std::uint32_t hi, bool whole,
               std::size_t* starts, std::size_t* ends) {
  const std::vector<FrameRef> frames = collect_frames(job);
  const std::size_t nf = frames.size();
  std::vector<std::size_t> cur(nf);
  for (std::size_t f = 0; f < nf; ++f) {
    cur[f] = whole ? 0 : lower_bound_vertex(frames[f], 0, lo);
    if (!whole) starts[f] = cur[f];
  }
  struct alignas(16) Quad {
    float v[4];
  };
  std::vector<Quad> tile(kTileVertices);
  float* acc = tile.data()->v;
  const RunKernel kernel = pick_kernel();
  const bool streaming = job.vertex_count >= kStreamingVertices;
  for (std::uint64_t t0 = lo; t0 < hi; t0 += kTileVertices) {
    const auto a = static_cast<std::uint32_t>(t0);
    const auto t1 = static_cast<std::uint32_t>(std::min<std::uint64_t>(hi, t0 + kTileVertices));
    std::fill(acc, acc + static_cast<std::size_t>(t1 - a) * 4, 0.0f);
    for (std::size_t f = 0; f < nf; ++f) {
      const FrameRef& fr = frames[f];
      // The run of the frame kPrefetchFrames later: in this tile, or (past
      // the last frame) in the next one, where the cursors of the frames
      // already read this tile now point.
      const std::size_t g = (f + kPrefetchFrames) % nf;
      const PrefetchStream pf{frames[g].p + cur[g] * kSparseRecordSize,
                              frames[g].p + frames[g].n * kSparseRecordSize};
      // Every record consumed lies in the tile, and the cursors must reach
      // the frame's end, so an unsorted frame is caught.
      if (!kernel(fr, &cur[f], a, t1 - a, acc, pf)) {
#if defined(__SSE2__)
        if (streaming) _mm_sfence();  // before the caller's fallback rewrites the outputs
#endif
        return false;
      }
    }
    finish_tile(job, a, t1, acc, streaming);
  }
#if defined(__SSE2__)
  if (streaming) _mm_sfence();  // the streaming stores before any reader
#endif
  for (std::size_t f = 0; f < nf; ++f) {
    if (whole && cur[f] != frames[f].n) return false;  // a record at or past vertex_count
    if (!whole) ends[f] = cur[f];
  }
  return true;
}

}  // namespace

core::Status SparseMorphJob::validate() const {
  const std::size_t n3 = static_cast<std::size_t>(vertex_count) * 3;
  auto shape = [](const std::string& what) {
    return core::make_error(codes::DEFORM_SHAPE, "sparse morph job: " + what);
  };
  if (base_stride < 12)
    return shape("base_stride " + std::to_string(base_stride) + " is under 12 bytes");
  if (vertex_count > 0 &&
      base.size() < static_cast<std::size_t>(vertex_count - 1) * base_stride + 12)
    return shape("the base positions hold fewer than " + std::to_string(vertex_count) +
                 " vertices");
  if (deltas.size() != n3 || out.size() != n3)
    return shape("deltas and out must hold 3 floats per vertex (" + std::to_string(n3) + ")");
  for (std::size_t ci = 0; ci < channels.size(); ++ci) {
    const SparseChannel& c = channels[ci];
    const std::string name = "channel " + std::to_string(ci);
    if (c.frame_count > 2) return shape(name + " has more than 2 frames");
    for (std::uint32_t f = 0; f < c.frame_count; ++f) {
      if (c.frames[f].records.size() % kSparseRecordSize != 0)
        return shape(name + ", frame " + std::to_string(f) +
                     ": the records are not a multiple of 16 bytes");
      if (!std::isfinite(c.frames[f].weight))
        return core::make_error(codes::DEFORM_WEIGHT, "sparse morph job: " + name + ", frame " +
                                                          std::to_string(f) +
                                                          ": the weight is not finite");
    }
  }
  return core::Ok{};
}

namespace detail {
core::Status run_sparse_morph_reference(const SparseMorphJob& job) {
  const std::uint32_t vertex_count = job.vertex_count;
  const std::span<float> deltas = job.deltas;
  const std::span<float> out = job.out;
  // §10: sum every channel's weighted deltas, then add once to the base.
  std::fill(deltas.begin(), deltas.end(), 0.0f);
  for (const SparseChannel& c : job.channels) {
    for (std::uint32_t f = 0; f < c.frame_count; ++f) {
      const SparseFrame& fr = c.frames[f];
      const std::size_t n = fr.records.size() / kSparseRecordSize;
      for (std::size_t i = 0; i < n; ++i) {
        const Record r = load_record(fr.records.data() + i * kSparseRecordSize);
        if (r.vertex >= vertex_count)
          return vertex_error(i * kSparseRecordSize, r.vertex, vertex_count);
        const std::size_t o = static_cast<std::size_t>(r.vertex) * 3;
        deltas[o] += fr.weight * r.d[0];
        deltas[o + 1] += fr.weight * r.d[1];
        deltas[o + 2] += fr.weight * r.d[2];
      }
    }
  }
  for (std::uint32_t v = 0; v < vertex_count; ++v) {
    float xyz[3];
    std::memcpy(xyz, job.base.data() + static_cast<std::size_t>(v) * job.base_stride, 12);
    const std::size_t o = static_cast<std::size_t>(v) * 3;
    out[o] = xyz[0] + deltas[o];
    out[o + 1] = xyz[1] + deltas[o + 1];
    out[o + 2] = xyz[2] + deltas[o + 2];
  }
  return core::Ok{};
}
}  // namespace detail

core::Status SparseMorphJob::run(const core::RunOptions& options) const {
  const std::size_t threads = options.parallelism();
  if (threads <= 1 || vertex_count < 65536) {
    if (run_tiled(*this, 0, vertex_count, true, nullptr, nullptr)) return core::Ok{};
    return run_range(*this, 0, vertex_count);  // unsorted or bad records
  }
  // Each thread owns a vertex range of the delta and output buffers: no two
  // threads write the same float, and each vertex sees its records in the
  // reference order. Sorted frames: each thread starts its cursors by binary
  // search, and the runs must partition every frame (checked below).
  const auto t = static_cast<unsigned>(std::min<std::size_t>(threads, 16));
  const std::size_t total = frame_total(*this);
  std::vector<std::size_t> starts(total * t), ends(total * t);
  std::vector<char> ok(t, 0);
  std::vector<std::uint32_t> bounds(t + 1);
  const std::uint64_t per = (static_cast<std::uint64_t>(vertex_count) + t - 1) / t;
  for (unsigned k = 0; k <= t; ++k)
    bounds[k] = static_cast<std::uint32_t>(std::min<std::uint64_t>(per * k, vertex_count));
  auto tiled = [&](unsigned k) {
    ok[k] = run_tiled(*this, bounds[k], bounds[k + 1], false, starts.data() + total * k,
                      ends.data() + total * k)
                ? 1
                : 0;
  };
  core::Executor& ex = *options.executor;
  ex.parallel_for(0, t, 1, [&](std::size_t b, std::size_t e) {
    for (std::size_t k = b; k < e; ++k) tiled(static_cast<unsigned>(k));
  });
  bool partitioned = std::all_of(ok.begin(), ok.end(), [](char c) { return c != 0; });
  std::size_t fi = 0;
  for (const SparseChannel& c : channels)
    for (std::uint32_t f = 0; f < c.frame_count && partitioned; ++f, ++fi) {
      const std::size_t n = c.frames[f].records.size() / kSparseRecordSize;
      if (starts[fi] != 0 || ends[total * (t - 1) + fi] != n) partitioned = false;
      for (unsigned k = 0; k + 1 < t; ++k)
        if (ends[total * k + fi] != starts[total * (k + 1) + fi]) partitioned = false;
    }
  if (partitioned) return core::Ok{};

  // Unsorted or bad records: every thread scans every record, keeping its range.
  std::vector<core::Status> results(t, core::Status(core::Ok{}));
  ex.parallel_for(0, t, 1, [&](std::size_t b, std::size_t e) {
    for (std::size_t k = b; k < e; ++k) results[k] = run_range(*this, bounds[k], bounds[k + 1]);
  });
  for (core::Status& st : results)
    if (!st.ok()) return st;
  return core::Ok{};
}

namespace detail {
void use_portable_morph_kernel(bool portable) {
  g_force_portable.store(portable, std::memory_order_relaxed);
}
}  // namespace detail

core::Result<SparseDeltas> parse_sparse_deltas(std::span<const std::uint8_t> payload,
                                               std::uint32_t vertex_count,
                                               std::int64_t expected_count) {
  if (payload.size() < 4)
    return core::error_at_offset(codes::BEM_DELTA_SIZE, "delta payload shorter than 4 bytes", 0);
  std::uint32_t j = 0;
  std::memcpy(&j, payload.data(), 4);
  if (j < 1 || j > kMaxDeltaJsonSize)
    return core::error_at_offset(codes::BEM_DELTA_JSON,
                                 "JSON length " + std::to_string(j) + " outside 1..4096", 0);
  if (payload.size() - 4 < j)
    return core::error_at_offset(codes::BEM_DELTA_SIZE, "JSON runs past the payload", 4);
  auto json = core::parse_json_strict(
      std::string_view(reinterpret_cast<const char*>(payload.data()) + 4, j));
  if (!json.ok())
    return core::error_at_offset(codes::BEM_DELTA_JSON, "delta JSON: " + json.error().message, 4);
  const core::Json& d = *json;
  if (!d.is_object() || d.size() != 2 || !d.contains("count") || !d.contains("encoding") ||
      !d["encoding"].is_string() || d["encoding"].get<std::string>() != "sparse-position-f32")
    return core::error_at_offset(
        codes::BEM_DELTA_JSON,
        "delta JSON must be exactly {\"count\":N,\"encoding\":\"sparse-position-f32\"}", 4);
  const auto count = core::json_uint32(d["count"]);
  if (!count)
    return core::error_at_offset(codes::BEM_DELTA_JSON, "delta JSON count is not a UInt32", 4);
  if (expected_count >= 0 && static_cast<std::int64_t>(*count) != expected_count)
    return core::error_at_offset(codes::BEM_DELTA_COUNT,
                                 "delta JSON count " + std::to_string(*count) +
                                     " differs from the frame's " + std::to_string(expected_count),
                                 4);
  const std::uint64_t want = 4ull + j + 16ull * *count;
  if (payload.size() != want)
    return core::error_at_offset(codes::BEM_DELTA_SIZE,
                                 "delta payload is " + std::to_string(payload.size()) +
                                     " bytes, expected 4 + J + 16N = " + std::to_string(want),
                                 0);
  SparseDeltas out;
  out.count = *count;
  out.records = payload.subspan(4 + j);
  std::vector<bool> seen(vertex_count, false);
  for (std::uint32_t i = 0; i < out.count; ++i) {
    const std::uint64_t off = 4ull + j + 16ull * i;
    const Record r = load_record(payload.data() + off);
    if (vertex_count != 0) {
      if (r.vertex >= vertex_count)
        return core::error_at_offset(codes::BEM_DELTA_VERTEX,
                                     "record " + std::to_string(i) + " names vertex " +
                                         std::to_string(r.vertex) + " of " +
                                         std::to_string(vertex_count),
                                     off);
      if (seen[r.vertex])
        return core::error_at_offset(
            codes::BEM_DELTA_VERTEX,
            "record " + std::to_string(i) + " repeats vertex " + std::to_string(r.vertex), off);
      seen[r.vertex] = true;
    }
    if (!std::isfinite(r.d[0]) || !std::isfinite(r.d[1]) || !std::isfinite(r.d[2]))
      return core::error_at_offset(codes::BEM_DELTA_VALUE,
                                   "record " + std::to_string(i) + " has a non-finite delta",
                                   off + 4);
  }
  return out;
}

}  // namespace charkit::deform
