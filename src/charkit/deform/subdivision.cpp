#include "charkit/deform/subdivision.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <tuple>
#include <utility>

#if defined(__SSE2__)
#include <emmintrin.h>
#include <xmmintrin.h>
#endif

#include "charkit/core/half.h"
#include "charkit/core/math.h"
#include "charkit/deform/error_codes.h"

namespace charkit::deform {

static_assert(std::endian::native == std::endian::little, "subdivision assumes little-endian");

namespace {

constexpr std::uint32_t kReservedMask = 0xFFC00000U;
constexpr std::size_t kVertexGrain = 4096;
constexpr std::size_t kGroupsPerChunk = 64;

// Three floats of a vertex record, with core/math.h's vector operations.
using V3 = core::Vec3f;
using core::add;
using core::dot;
using core::length;
using core::scale;
using core::sub;

/// Input vertex v: 10 floats (position, normal, tangent xyzw).
inline void load_vertex(const SubdivMeshView& m, std::uint32_t v, float out[10]) {
  std::memcpy(out, m.vertices.data() + std::size_t{v} * kSubdivInVertexBytes, kSubdivInVertexBytes);
}
inline V3 load_v3(const SubdivMeshView& m, std::uint32_t v, std::size_t byte) {
  V3 r;
  std::memcpy(&r, m.vertices.data() + std::size_t{v} * kSubdivInVertexBytes + byte, 12);
  return r;
}

inline void store_out(std::span<std::uint8_t> out, std::size_t vertex, std::size_t byte,
                      const float* values, std::size_t count) {
  std::memcpy(out.data() + vertex * kSubdivOutVertexBytes + byte, values, count * 4);
}

/// s6 / 63 for every 6-bit strength (the same division, done once).
constexpr std::array<float, 64> kStrength6 = [] {
  std::array<float, 64> t{};
  for (std::size_t i = 0; i < 64; ++i) t[i] = static_cast<float>(i) / 63.0F;
  return t;
}();

/// The allowed strength of one vertex (kernel 1's formula).
inline float vertex_strength(const SubdivParams& p, const SubdivMeshView& m, std::uint32_t v) {
  const std::uint32_t x = m.extras[v];
  const float s6 = kStrength6[(x >> 16) & 63U];
  float weight = 1.0F;
  if (p.distance_control) {
    const V3 pos = load_v3(m, v, 0);
    const float distance = length(sub(pos, V3{p.reference[0], p.reference[1], p.reference[2]}));
    if (distance > 0.0F) {
      const float geometry_scale = core::half_to_float(static_cast<std::uint16_t>(x & 0xFFFFU));
      const float projected = geometry_scale / distance * p.projection_ratio;
      weight = std::clamp((projected - p.start_threshold) * p.slope, 0.0F, 1.0F);
    }
  }
  return std::min(s6, weight * p.branch_multiplier);
}

inline float edge_rule(EdgeStrengthRule rule, float a, float b) {
  switch (rule) {
    case EdgeStrengthRule::kMinimum:
      return std::min(a, b);
    case EdgeStrengthRule::kMaximum:
      return std::max(a, b);
    case EdgeStrengthRule::kAverage:
      break;
  }
  return 0.5F * (a + b);
}

/// normalize(a + b), or a when the sum vanishes.
inline V3 direction_sum(V3 a, V3 b) {
  const V3 s = add(a, b);
  const float len = length(s);
  // Computed unconditionally and selected, so the compiler can use selects
  // instead of a branch on a value that waits for sqrt.
  const V3 n = scale(s, 1.0F / len);
  const bool ok = len > 0.0F;
  return V3{ok ? n[0] : a[0], ok ? n[1] : a[1], ok ? n[2] : a[2]};
}

void strength_vertices(const SubdivStrengthJob& j, std::size_t lo, std::size_t hi) {
  for (std::size_t v = lo; v < hi; ++v) {
    const auto vi = static_cast<std::uint32_t>(v);
    float in[10];
    load_vertex(j.mesh, vi, in);
    const float pos[4] = {in[0], in[1], in[2], vertex_strength(j.params, j.mesh, vi)};
    const float nrm[4] = {in[3], in[4], in[5], 0.0F};
    store_out(j.out_vertices, v, 0, pos, 4);
    store_out(j.out_vertices, v, 16, nrm, 4);
    store_out(j.out_vertices, v, 32, in + 6, 4);
  }
}

/// Kernel 1's part of edge e's new vertex: its strength, normal, tangent.
inline float edge_strength_and_frame(const SubdivParams& p, const SubdivMeshView& m,
                                     const SubdivEdge& ed, float nrm[4], float tan[4]) {
  const float s = edge_rule(p.edge_rule, vertex_strength(p, m, ed.a), vertex_strength(p, m, ed.b));
  // Fields loaded straight from the vertex bytes (copying whole records to
  // the stack first and reading pieces back defeats store forwarding).
  const V3 n = direction_sum(load_v3(m, ed.a, 12), load_v3(m, ed.b, 12));
  const V3 t = direction_sum(load_v3(m, ed.a, 24), load_v3(m, ed.b, 24));
  float handedness;
  std::memcpy(&handedness, m.vertices.data() + std::size_t{ed.a} * kSubdivInVertexBytes + 36, 4);
  nrm[0] = n[0];
  nrm[1] = n[1];
  nrm[2] = n[2];
  nrm[3] = 0.0F;
  tan[0] = t[0];
  tan[1] = t[1];
  tan[2] = t[2];
  tan[3] = handedness;
  return s;
}

/// Kernel 2's part: edge e's new position at strength s (w = s).
inline void edge_position(const SubdivParams& p, const SubdivMeshView& m,
                          std::span<const std::uint32_t> constrained, std::size_t e,
                          const SubdivEdge& ed, float s, float pos[4]) {
  const V3 pa = load_v3(m, ed.a, 0);
  const V3 pb = load_v3(m, ed.b, 0);
  const V3 mid = scale(add(pa, pb), 0.5F);
  V3 q = mid;
  if (p.smooth && ed.c != SubdivEdge::kNone && ed.d != SubdivEdge::kNone) {
    const V3 pc = load_v3(m, ed.c, 0);
    const V3 pd = load_v3(m, ed.d, 0);
    V3 disp = sub(add(scale(add(pa, pb), 0.375F), scale(add(pc, pd), 0.125F)), mid);
    const bool is_constrained =
        !constrained.empty() && ((constrained[e / 32] >> (e % 32)) & 1U) != 0;
    if (is_constrained) {
      const V3 s2 = add(load_v3(m, ed.a, 12), load_v3(m, ed.b, 12));
      const float len = length(s2);
      if (len > 0.0F) {
        const V3 dir = scale(s2, 1.0F / len);
        disp = scale(dir, dot(disp, dir));
      } else {
        disp = V3{0.0F, 0.0F, 0.0F};
      }
    }
    q = add(mid, scale(disp, s));
  }
  pos[0] = q[0];
  pos[1] = q[1];
  pos[2] = q[2];
  pos[3] = s;
}

void strength_edges(const SubdivStrengthJob& j, std::size_t lo, std::size_t hi) {
  const std::size_t base = j.mesh.vertex_count;
  for (std::size_t e = lo; e < hi; ++e) {
    float nrm[4];
    float tan[4];
    j.edge_strength[e] = edge_strength_and_frame(
        j.params, j.mesh, j.mesh.edge(static_cast<std::uint32_t>(e)), nrm, tan);
    store_out(j.out_vertices, base + e, 16, nrm, 4);
    store_out(j.out_vertices, base + e, 32, tan, 4);
  }
}

void edge_positions(const SubdivEdgeJob& j, std::size_t lo, std::size_t hi) {
  const std::size_t base = j.mesh.vertex_count;
  for (std::size_t e = lo; e < hi; ++e) {
    float pos[4];
    edge_position(j.params, j.mesh, j.constrained, e, j.mesh.edge(static_cast<std::uint32_t>(e)),
                  j.edge_strength[e], pos);
    store_out(j.out_vertices, base + e, 0, pos, 4);
  }
}

/// One output record's three float4s.
struct Out48 {
  float p0, p1, p2, p3, n0, n1, n2, n3, t0, t1, t2, t3;
};

/// 48 output bytes written whole: with non-temporal stores when the record
/// is 16-byte aligned (written once, read by a later pass or the caller: no
/// need to pass through the cache, nor to read each line before writing
/// it); a memcpy otherwise. The values go from registers to the stores, not
/// through a stack array (reading a stack copy back in other-sized pieces
/// stalls store forwarding).
inline void store48(std::uint8_t* dst, const Out48& r) {
#if defined(__SSE2__)
  if ((reinterpret_cast<std::uintptr_t>(dst) & 15U) == 0) {
    float* f = reinterpret_cast<float*>(dst);
    _mm_stream_ps(f, _mm_setr_ps(r.p0, r.p1, r.p2, r.p3));
    _mm_stream_ps(f + 4, _mm_setr_ps(r.n0, r.n1, r.n2, r.n3));
    _mm_stream_ps(f + 8, _mm_setr_ps(r.t0, r.t1, r.t2, r.t3));
    return;
  }
#endif
  std::memcpy(dst, &r, 48);
}

inline void store_fence() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

inline float load_f32(const SubdivMeshView& m, std::uint32_t v, std::size_t byte) {
  float f;
  std::memcpy(&f, m.vertices.data() + std::size_t{v} * kSubdivInVertexBytes + byte, 4);
  return f;
}

/// Kernel 1's vertex part, each record written whole.
void fused_vertices(const SubdivParams& p, const SubdivMeshView& m, std::span<std::uint8_t> out,
                    std::size_t lo, std::size_t hi) {
  for (std::size_t v = lo; v < hi; ++v) {
    const auto vi = static_cast<std::uint32_t>(v);
    const V3 pos = load_v3(m, vi, 0);
    const V3 n = load_v3(m, vi, 12);
    const V3 t = load_v3(m, vi, 24);
    const Out48 r{pos[0], pos[1], pos[2], vertex_strength(p, m, vi), n[0], n[1], n[2], 0.0F,
                  t[0],   t[1],   t[2],   load_f32(m, vi, 36)};
    store48(out.data() + v * kSubdivOutVertexBytes, r);
  }
  store_fence();
}

/// One edge through kernels 1 and 2 (the scalar form of fused_edges).
inline void fused_edge(const SubdivParams& p, const SubdivMeshView& m,
                       std::span<const std::uint32_t> constrained, std::span<std::uint8_t> out,
                       std::span<float> strength, std::size_t e) {
  const SubdivEdge ed = m.edge(static_cast<std::uint32_t>(e));
  float nrm[4];
  float tan[4];
  float pos[4];
  const float s = edge_strength_and_frame(p, m, ed, nrm, tan);
  strength[e] = s;
  edge_position(p, m, constrained, e, ed, s, pos);
  const Out48 r{pos[0], pos[1], pos[2], pos[3], nrm[0], nrm[1],
                nrm[2], nrm[3], tan[0], tan[1], tan[2], tan[3]};
  store48(out.data() + (std::size_t{m.vertex_count} + e) * kSubdivOutVertexBytes, r);
}

#if defined(__SSE2__)
/// Four edges at once: the scalar operations of kernels 1 and 2 in the same
/// order, one edge per SSE lane (IEEE add, mul, div and sqrt give each lane
/// the bits the scalar code gives; no FMA), so the results are identical.
struct Lanes {
  __m128 x, y, z, w;
};

/// A 16-byte field (byte offset 0, 12 or 24) of four vertices, transposed.
inline Lanes load_lanes(const SubdivMeshView& m, const std::uint32_t v[4], std::size_t byte) {
  const std::uint8_t* b = m.vertices.data() + byte;
  __m128 r0 = _mm_loadu_ps(reinterpret_cast<const float*>(b + std::size_t{v[0]} * 40));
  __m128 r1 = _mm_loadu_ps(reinterpret_cast<const float*>(b + std::size_t{v[1]} * 40));
  __m128 r2 = _mm_loadu_ps(reinterpret_cast<const float*>(b + std::size_t{v[2]} * 40));
  __m128 r3 = _mm_loadu_ps(reinterpret_cast<const float*>(b + std::size_t{v[3]} * 40));
  _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
  return {r0, r1, r2, r3};
}

inline __m128 select(__m128 mask, __m128 a, __m128 b) {
  return _mm_or_ps(_mm_and_ps(mask, a), _mm_andnot_ps(mask, b));
}

inline __m128 lane_mask(const bool b[4]) {
  return _mm_castsi128_ps(
      _mm_setr_epi32(b[0] ? -1 : 0, b[1] ? -1 : 0, b[2] ? -1 : 0, b[3] ? -1 : 0));
}

inline __m128 dot3(const Lanes& a, const Lanes& b) {
  return _mm_add_ps(_mm_add_ps(_mm_mul_ps(a.x, b.x), _mm_mul_ps(a.y, b.y)), _mm_mul_ps(a.z, b.z));
}

/// direction_sum on four lanes.
inline Lanes direction_sum4(const Lanes& a, const Lanes& b) {
  const Lanes s{_mm_add_ps(a.x, b.x), _mm_add_ps(a.y, b.y), _mm_add_ps(a.z, b.z), a.w};
  const __m128 len = _mm_sqrt_ps(dot3(s, s));
  const __m128 inv = _mm_div_ps(_mm_set1_ps(1.0F), len);
  const __m128 ok = _mm_cmpgt_ps(len, _mm_setzero_ps());
  return {select(ok, _mm_mul_ps(s.x, inv), a.x), select(ok, _mm_mul_ps(s.y, inv), a.y),
          select(ok, _mm_mul_ps(s.z, inv), a.z), a.w};
}

template <unsigned kBits, bool kDistance, bool kConstrained>
void fused_edges4(const SubdivParams& p, const SubdivMeshView& m,
                  std::span<const std::uint32_t> constrained, std::span<std::uint8_t> out,
                  std::span<float> strength, std::size_t e) {
  std::uint32_t A[4], B[4], C[4], D[4];
  bool full[4], con[4];
  float s[4];
  bool any_full = false;
  bool any_con = false;
  for (std::size_t i = 0; i < 4; ++i) {
    const SubdivEdge ed = m.edge_as<kBits>(e + i);
    if constexpr (kDistance) {
      s[i] = edge_rule(p.edge_rule, vertex_strength(p, m, ed.a), vertex_strength(p, m, ed.b));
    } else {
      // vertex_strength with the distance weight 1: min(s6 / 63, branch).
      const float sa = std::min(kStrength6[(m.extras[ed.a] >> 16) & 63U], p.branch_multiplier);
      const float sb = std::min(kStrength6[(m.extras[ed.b] >> 16) & 63U], p.branch_multiplier);
      s[i] = edge_rule(p.edge_rule, sa, sb);
    }
    strength[e + i] = s[i];
    A[i] = ed.a;
    B[i] = ed.b;
    full[i] = p.smooth && ed.c != SubdivEdge::kNone && ed.d != SubdivEdge::kNone;
    C[i] = full[i] ? ed.c : ed.a;  // a valid vertex to load; the lane is not used
    D[i] = full[i] ? ed.d : ed.a;
    con[i] = full[i] && !constrained.empty() &&
             ((constrained[(e + i) / 32] >> ((e + i) % 32)) & 1U) != 0;
    any_full = any_full || full[i];
    any_con = any_con || con[i];
  }
  // Kernel 1: the new vertices' normal and tangent.
  const Lanes na = load_lanes(m, A, 12);
  const Lanes nb = load_lanes(m, B, 12);
  const Lanes n = direction_sum4(na, nb);
  const Lanes t = direction_sum4(load_lanes(m, A, 24), load_lanes(m, B, 24));
  // Kernel 2: the position.
  const Lanes pa = load_lanes(m, A, 0);
  const Lanes pb = load_lanes(m, B, 0);
  const Lanes ab{_mm_add_ps(pa.x, pb.x), _mm_add_ps(pa.y, pb.y), _mm_add_ps(pa.z, pb.z), pa.w};
  const __m128 half = _mm_set1_ps(0.5F);
  const Lanes mid{_mm_mul_ps(ab.x, half), _mm_mul_ps(ab.y, half), _mm_mul_ps(ab.z, half), pa.w};
  Lanes q = mid;
  const __m128 sv = _mm_loadu_ps(s);
  if (any_full) {
    const Lanes pc = load_lanes(m, C, 0);
    const Lanes pd = load_lanes(m, D, 0);
    const __m128 k38 = _mm_set1_ps(0.375F);
    const __m128 k18 = _mm_set1_ps(0.125F);
    auto cand = [&](__m128 abv, __m128 c, __m128 d, __m128 mv) {
      return _mm_sub_ps(_mm_add_ps(_mm_mul_ps(abv, k38), _mm_mul_ps(_mm_add_ps(c, d), k18)), mv);
    };
    Lanes disp{cand(ab.x, pc.x, pd.x, mid.x), cand(ab.y, pc.y, pd.y, mid.y),
               cand(ab.z, pc.z, pd.z, mid.z), pa.w};
    if (any_con) {
      const Lanes s2{_mm_add_ps(na.x, nb.x), _mm_add_ps(na.y, nb.y), _mm_add_ps(na.z, nb.z), na.w};
      const __m128 len = _mm_sqrt_ps(dot3(s2, s2));
      const __m128 inv = _mm_div_ps(_mm_set1_ps(1.0F), len);
      const Lanes dir{_mm_mul_ps(s2.x, inv), _mm_mul_ps(s2.y, inv), _mm_mul_ps(s2.z, inv), na.w};
      const __m128 d = dot3(disp, dir);
      const __m128 ok = _mm_cmpgt_ps(len, _mm_setzero_ps());
      const __m128 cm = lane_mask(con);
      const __m128 zero = _mm_setzero_ps();
      disp.x = select(cm, select(ok, _mm_mul_ps(dir.x, d), zero), disp.x);
      disp.y = select(cm, select(ok, _mm_mul_ps(dir.y, d), zero), disp.y);
      disp.z = select(cm, select(ok, _mm_mul_ps(dir.z, d), zero), disp.z);
    }
    const __m128 fm = lane_mask(full);
    q.x = select(fm, _mm_add_ps(mid.x, _mm_mul_ps(disp.x, sv)), mid.x);
    q.y = select(fm, _mm_add_ps(mid.y, _mm_mul_ps(disp.y, sv)), mid.y);
    q.z = select(fm, _mm_add_ps(mid.z, _mm_mul_ps(disp.z, sv)), mid.z);
  }
  // Back to records: (q, s), (n, 0), (t, handedness of a).
  __m128 p0 = q.x, p1 = q.y, p2 = q.z, p3 = sv;
  _MM_TRANSPOSE4_PS(p0, p1, p2, p3);
  __m128 n0 = n.x, n1 = n.y, n2 = n.z, n3 = _mm_setzero_ps();
  _MM_TRANSPOSE4_PS(n0, n1, n2, n3);
  __m128 t0 = t.x, t1 = t.y, t2 = t.z, t3 = t.w;
  _MM_TRANSPOSE4_PS(t0, t1, t2, t3);
  float* f = reinterpret_cast<float*>(out.data() +
                                      (std::size_t{m.vertex_count} + e) * kSubdivOutVertexBytes);
  _mm_stream_ps(f, p0);
  _mm_stream_ps(f + 4, n0);
  _mm_stream_ps(f + 8, t0);
  _mm_stream_ps(f + 12, p1);
  _mm_stream_ps(f + 16, n1);
  _mm_stream_ps(f + 20, t1);
  _mm_stream_ps(f + 24, p2);
  _mm_stream_ps(f + 28, n2);
  _mm_stream_ps(f + 32, t2);
  _mm_stream_ps(f + 36, p3);
  _mm_stream_ps(f + 40, n3);
  _mm_stream_ps(f + 44, t3);
}
#endif

/// Kernels 1 and 2 on edges [lo, hi) in one pass: the same values as the
/// two kernels run one after the other, each new vertex written whole; four
/// edges per step with SSE where the output is 16-byte aligned.
void fused_edges(const SubdivParams& p, const SubdivMeshView& m,
                 std::span<const std::uint32_t> constrained, std::span<std::uint8_t> out,
                 std::span<float> strength, std::size_t lo, std::size_t hi) {
  std::size_t e = lo;
#if defined(__SSE2__)
  if ((reinterpret_cast<std::uintptr_t>(out.data()) & 15U) == 0) {
    auto run = [&](auto kernel) {
      for (; e + 4 <= hi; e += 4) kernel(p, m, constrained, out, strength, e);
    };
    const bool wide = m.index_bits == 32;
    const bool con = !constrained.empty();
    if (p.distance_control) {
      if (wide)
        con ? run(fused_edges4<32, true, true>) : run(fused_edges4<32, true, false>);
      else
        con ? run(fused_edges4<16, true, true>) : run(fused_edges4<16, true, false>);
    } else {
      if (wide)
        con ? run(fused_edges4<32, false, true>) : run(fused_edges4<32, false, false>);
      else
        con ? run(fused_edges4<16, false, true>) : run(fused_edges4<16, false, false>);
    }
  }
#endif
  for (; e < hi; ++e) fused_edge(p, m, constrained, out, strength, e);
  store_fence();
}

/// Bits set in a 3-bit mask, and its lowest set bit (x86-64's baseline has
/// no popcnt instruction: std::popcount would call libgcc).
constexpr unsigned kPop3[8] = {0, 1, 1, 2, 1, 2, 2, 3};
constexpr unsigned kLow3[8] = {0, 0, 1, 0, 2, 0, 1, 0};

/// The split edges of triangle t as a 3-bit mask (bit k: edge of corners k, k+1).
inline unsigned split_mask(const SubdivIndexJob& j, std::size_t t) {
  unsigned mask = 0;
  for (unsigned k = 0; k < 3; ++k)
    if (j.edge_strength[j.triangle_edges[3 * t + k]] > j.split_threshold) mask |= 1U << k;
  return mask;
}

/// Writes triangle t's 1 + k triangles at out (the pattern of the docs).
inline void emit_triangle(const SubdivIndexJob& j, std::size_t t, unsigned mask,
                          std::uint32_t* out) {
  const std::uint32_t* c = j.indices.data() + 3 * t;
  const std::uint32_t* te = j.triangle_edges.data() + 3 * t;
  const std::uint32_t V = j.mesh.vertex_count;
  auto put = [&out](std::uint32_t a, std::uint32_t b, std::uint32_t d) {
    out[0] = a;
    out[1] = b;
    out[2] = d;
    out += 3;
  };
  switch (kPop3[mask]) {
    case 0:
      put(c[0], c[1], c[2]);
      return;
    case 1: {
      // Rotate so the split edge runs p → q; r is the opposite corner.
      const unsigned k = kLow3[mask];
      const std::uint32_t p = c[k], q = c[(k + 1) % 3], r = c[(k + 2) % 3];
      const std::uint32_t m = V + te[k];
      put(p, m, r);
      put(m, q, r);
      return;
    }
    case 2: {
      // Rotate so edges p → q and q → r are split and r → p is not.
      const unsigned unsplit = kLow3[~mask & 7U];
      const unsigned k = (unsplit + 1) % 3;
      const std::uint32_t p = c[k], q = c[(k + 1) % 3], r = c[(k + 2) % 3];
      const std::uint32_t m0 = V + te[k], m1 = V + te[(k + 1) % 3];
      put(m0, q, m1);
      put(p, m0, m1);
      put(p, m1, r);
      return;
    }
    default: {
      const std::uint32_t m0 = V + te[0], m1 = V + te[1], m2 = V + te[2];
      put(c[0], m0, m2);
      put(m0, c[1], m1);
      put(m2, m1, c[2]);
      put(m0, m1, m2);
      return;
    }
  }
}

bool finite_non_negative(float x) {
  return std::isfinite(x) && x >= 0.0F;
}

core::Status check_params(const SubdivParams& p) {
  if (p.branch_multiplier != 1.0F && p.branch_multiplier != 3.0F)
    return core::make_error(
        codes::DEFORM_SUBDIV_PARAM,
        "the branch multiplier is " + std::to_string(p.branch_multiplier) + "; it is 1 or 3");
  const std::pair<const char*, float> values[] = {{"projection ratio", p.projection_ratio},
                                                  {"start threshold", p.start_threshold},
                                                  {"slope", p.slope},
                                                  {"split threshold", p.split_threshold}};
  for (const auto& [name, v] : values)
    if (!finite_non_negative(v))
      return core::make_error(codes::DEFORM_SUBDIV_PARAM,
                              std::string("the ") + name + " is " + std::to_string(v) +
                                  "; it must be finite and not negative");
  for (float r : p.reference)
    if (!std::isfinite(r))
      return core::make_error(codes::DEFORM_SUBDIV_PARAM, "the reference position is not finite");
  return core::Ok{};
}

core::Status check_out_vertices(const SubdivMeshView& m, std::span<const std::uint8_t> out) {
  const std::size_t want = (std::size_t{m.vertex_count} + m.edge_count) * kSubdivOutVertexBytes;
  if (out.size() != want)
    return core::make_error(codes::DEFORM_SUBDIV_SIZE,
                            "the output vertex array is " + std::to_string(out.size()) +
                                " bytes, expected " + std::to_string(want) + " ((V + E) × 48)");
  return core::Ok{};
}

/// What kernels 1 and 2 both check: parameters, the mesh, the output
/// vertex array and the edge strength array's size.
core::Status check_vertex_kernel(const SubdivParams& params, const SubdivMeshView& mesh,
                                 std::span<const std::uint8_t> out_vertices,
                                 std::size_t edge_strengths) {
  if (auto st = check_params(params); !st) return st;
  if (auto st = mesh.validate(); !st) return st;
  if (auto st = check_out_vertices(mesh, out_vertices); !st) return st;
  if (edge_strengths != mesh.edge_count)
    return core::make_error(codes::DEFORM_SUBDIV_SIZE,
                            "the edge strength array has " + std::to_string(edge_strengths) +
                                " entries for " + std::to_string(mesh.edge_count) + " edges");
  return core::Ok{};
}

core::Status check_bitmap(std::span<const std::uint32_t> constrained, std::uint32_t edge_count) {
  if (!constrained.empty() && constrained.size() != (std::size_t{edge_count} + 31) / 32)
    return core::make_error(codes::DEFORM_SUBDIV_SIZE, "the constraint bitmap has " +
                                                           std::to_string(constrained.size()) +
                                                           " words, expected (edges + 31) / 32");
  return core::Ok{};
}

}  // namespace

std::uint32_t pack_subdiv_extras(float geometry_scale, std::uint32_t strength6) {
  return std::uint32_t{core::float_to_half(geometry_scale)} | (std::min(strength6, 63U) << 16);
}

core::Status SubdivMeshView::validate() const {
  if (index_bits != 16 && index_bits != 32)
    return core::make_error(codes::DEFORM_SUBDIV_SIZE,
                            "index_bits is " + std::to_string(index_bits) + "; it is 16 or 32");
  if (index_bits == 16 && vertex_count > 0xFFFFU)
    return core::make_error(codes::DEFORM_SUBDIV_SIZE,
                            std::to_string(vertex_count) +
                                " vertices do not fit 16-bit edge indices "
                                "(at most 65535)");
  if (vertices.size() != std::size_t{vertex_count} * kSubdivInVertexBytes)
    return core::make_error(codes::DEFORM_SUBDIV_SIZE, "the vertex array is " +
                                                           std::to_string(vertices.size()) +
                                                           " bytes, expected vertex count × 40");
  if (extras.size() != vertex_count)
    return core::make_error(codes::DEFORM_SUBDIV_SIZE,
                            "there are " + std::to_string(extras.size()) + " extras words for " +
                                std::to_string(vertex_count) + " vertices");
  const std::size_t words = index_bits == 16 ? 2 : 4;
  if (edges.size() != std::size_t{edge_count} * words)
    return core::make_error(codes::DEFORM_SUBDIV_SIZE,
                            "the edge table has " + std::to_string(edges.size()) +
                                " words, expected " + std::to_string(words) + " per edge");
  if (std::size_t{vertex_count} + edge_count > 0xFFFFFFFFU)
    return core::make_error(codes::DEFORM_SUBDIV_SIZE, "vertices plus edges exceed 32-bit indices");
  for (std::uint32_t v = 0; v < vertex_count; ++v) {
    float x[10];
    load_vertex(*this, v, x);
    for (float f : x)
      if (!std::isfinite(f))
        return core::error_at_offset(codes::DEFORM_SUBDIV_VALUE,
                                     "vertex " + std::to_string(v) + " has a non-finite value",
                                     std::size_t{v} * kSubdivInVertexBytes);
    if ((extras[v] & kReservedMask) != 0)
      return core::make_error(
          codes::DEFORM_SUBDIV_VALUE,
          "vertex " + std::to_string(v) + "'s extras word sets reserved bits 22..31");
    const float g = core::half_to_float(static_cast<std::uint16_t>(extras[v] & 0xFFFFU));
    if (!finite_non_negative(g))
      return core::make_error(codes::DEFORM_SUBDIV_VALUE,
                              "vertex " + std::to_string(v) + "'s geometry scale is " +
                                  std::to_string(g) + "; it must be finite and not negative");
  }
  for (std::uint32_t e = 0; e < edge_count; ++e) {
    const SubdivEdge ed = edge(e);
    const bool bad_end = ed.a >= vertex_count || ed.b >= vertex_count;
    const bool bad_opposite = (ed.c != SubdivEdge::kNone && ed.c >= vertex_count) ||
                              (ed.d != SubdivEdge::kNone && ed.d >= vertex_count);
    if (bad_end || bad_opposite)
      return core::error_at_offset(codes::DEFORM_SUBDIV_VERTEX,
                                   "edge " + std::to_string(e) + " names a vertex past the " +
                                       std::to_string(vertex_count) + " vertices",
                                   std::size_t{e} * words * 4);
  }
  return core::Ok{};
}

core::Result<SubdivTopology> build_subdiv_topology(std::span<const std::uint32_t> indices,
                                                   std::uint32_t vertex_count, unsigned index_bits,
                                                   std::span<const std::uint32_t> weld) {
  if (indices.size() % 3 != 0)
    return core::make_error(codes::DEFORM_SUBDIV_SIZE,
                            std::to_string(indices.size()) + " indices are not whole triangles");
  if (indices.size() / 3 > 0x7FFFFFFFU)
    return core::make_error(codes::DEFORM_SUBDIV_SIZE, "too many triangles");
  if (index_bits == 0) index_bits = vertex_count <= 0xFFFFU ? 16 : 32;
  if ((index_bits != 16 && index_bits != 32) || (index_bits == 16 && vertex_count > 0xFFFFU))
    return core::make_error(codes::DEFORM_SUBDIV_SIZE,
                            std::to_string(vertex_count) + " vertices do not fit " +
                                std::to_string(index_bits) + "-bit edge indices");
  if (!weld.empty() && weld.size() != vertex_count)
    return core::make_error(codes::DEFORM_SUBDIV_SIZE,
                            "the weld map has " + std::to_string(weld.size()) + " entries for " +
                                std::to_string(vertex_count) + " vertices");
  for (std::size_t v = 0; v < weld.size(); ++v)
    if (weld[v] >= vertex_count)
      return core::error_at_offset(
          codes::DEFORM_SUBDIV_VERTEX,
          "weld entry " + std::to_string(v) + " names vertex " + std::to_string(weld[v]), v * 4);
  for (std::size_t i = 0; i < indices.size(); ++i)
    if (indices[i] >= vertex_count)
      return core::error_at_offset(codes::DEFORM_SUBDIV_VERTEX,
                                   "index " + std::to_string(i) + " is vertex " +
                                       std::to_string(indices[i]) + " of " +
                                       std::to_string(vertex_count),
                                   i * 4);
  SubdivTopology top;
  top.vertex_count = vertex_count;
  top.index_bits = index_bits;
  top.triangle_count = static_cast<std::uint32_t>(indices.size() / 3);
  const std::size_t half_edges = indices.size();
  auto welded = [&](std::uint32_t v) { return weld.empty() ? v : weld[v]; };
  auto ends = [&](std::size_t h) {
    const std::size_t t = h / 3;
    const std::size_t k = h % 3;
    return std::pair{indices[3 * t + k], indices[3 * t + (k + 1) % 3]};
  };
  // A half-edge's sort key inside its bucket (the smaller welded endpoint):
  // the larger welded endpoint, the unordered vertex pair, its number 3t + k.
  struct Slot {
    std::uint32_t welded_hi, lo, hi, h;
    bool operator<(const Slot& o) const {
      return std::tie(welded_hi, lo, hi, h) < std::tie(o.welded_hi, o.lo, o.hi, o.h);
    }
  };
  std::vector<std::uint32_t> start(std::size_t{vertex_count} + 1, 0);
  for (std::size_t h = 0; h < half_edges; ++h) {
    const auto [a, b] = ends(h);
    ++start[std::min(welded(a), welded(b)) + 1];
  }
  for (std::size_t v = 0; v < vertex_count; ++v) start[v + 1] += start[v];
  std::vector<Slot> slots(half_edges);
  {
    std::vector<std::uint32_t> fill(start.begin(), start.end() - 1);
    for (std::size_t h = 0; h < half_edges; ++h) {
      const auto [a, b] = ends(h);
      slots[fill[std::min(welded(a), welded(b))]++] =
          Slot{std::max(welded(a), welded(b)), std::min(a, b), std::max(a, b),
               static_cast<std::uint32_t>(h)};
    }
  }
  top.triangle_edges.assign(half_edges, 0);
  const std::size_t words = index_bits == 16 ? 2 : 4;
  top.edges.reserve(half_edges / 2 * words + words);
  const std::uint32_t none = index_bits == 16 ? 0xFFFFU : 0xFFFFFFFFU;
  auto third = [&](std::size_t h) { return indices[3 * (h / 3) + (h % 3 + 2) % 3]; };
  for (std::size_t v = 0; v < vertex_count; ++v) {
    const auto first = slots.begin() + start[v];
    const auto last = slots.begin() + start[v + 1];
    std::sort(first, last);
    // A run: the half-edges of one welded edge. Exactly two give full
    // adjacency, to each of the (one or two) vertex-pair edges in it.
    for (auto run = first; run != last;) {
      auto run_end = run;
      while (run_end != last && run_end->welded_hi == run->welded_hi) ++run_end;
      const bool full = run_end - run == 2;
      for (auto pair = run; pair != run_end;) {
        auto pair_end = pair;
        while (pair_end != run_end && pair_end->lo == pair->lo && pair_end->hi == pair->hi)
          ++pair_end;
        if (top.edge_count == 0x7FFFFFFFU)
          return core::make_error(codes::DEFORM_SUBDIV_SIZE, "more than 2^31 edges");
        const std::uint32_t e = top.edge_count++;
        const auto [a, b] = ends(pair->h);
        std::uint32_t c = none;
        std::uint32_t d = none;
        if (full) {
          // The other half-edge of the run: the next in this pair, or the
          // other pair's (a seam: same positions, other vertices).
          const Slot& other = pair == run ? *(run + 1) : *run;
          c = third(pair->h);
          d = third(other.h);
        }
        if (index_bits == 16) {
          top.edges.push_back(a | (b << 16));
          top.edges.push_back(c | (d << 16));
        } else {
          top.edges.insert(top.edges.end(), {a, b, c, d});
        }
        for (auto it = pair; it != pair_end; ++it) top.triangle_edges[it->h] = e;
        pair = pair_end;
      }
      run = run_end;
    }
  }
  return top;
}

core::Status SubdivStrengthJob::validate() const {
  return check_vertex_kernel(params, mesh, out_vertices, edge_strength.size());
}

core::Status SubdivStrengthJob::run(const core::RunOptions& options) const {
  core::Executor& ex = options.executor_or_serial();
  ex.parallel_for(0, mesh.vertex_count, options.grain(mesh.vertex_count, kVertexGrain),
                  [this](std::size_t lo, std::size_t hi) { strength_vertices(*this, lo, hi); });
  ex.parallel_for(0, mesh.edge_count, options.grain(mesh.edge_count, kVertexGrain),
                  [this](std::size_t lo, std::size_t hi) { strength_edges(*this, lo, hi); });
  return core::Ok{};
}

core::Status SubdivEdgeJob::validate() const {
  if (auto st = check_vertex_kernel(params, mesh, out_vertices, edge_strength.size()); !st)
    return st;
  for (std::size_t e = 0; e < edge_strength.size(); ++e)
    if (!std::isfinite(edge_strength[e]))
      return core::error_at_offset(codes::DEFORM_SUBDIV_VALUE,
                                   "edge " + std::to_string(e) + "'s strength is not finite",
                                   e * 4);
  return check_bitmap(constrained, mesh.edge_count);
}

core::Status SubdivEdgeJob::run(const core::RunOptions& options) const {
  options.executor_or_serial().parallel_for(
      0, mesh.edge_count, options.grain(mesh.edge_count, kVertexGrain),
      [this](std::size_t lo, std::size_t hi) { edge_positions(*this, lo, hi); });
  return core::Ok{};
}

core::Status SubdivIndexJob::validate() const {
  const std::uint32_t vertex_count = mesh.vertex_count;
  const std::uint32_t edge_count = mesh.edge_count;
  if (indices.size() % 3 != 0 || triangle_edges.size() != indices.size())
    return core::make_error(codes::DEFORM_SUBDIV_SIZE, std::to_string(indices.size()) +
                                                           " indices and " +
                                                           std::to_string(triangle_edges.size()) +
                                                           " triangle edges: both 3 per triangle");
  if (edge_strength.size() != edge_count ||
      mesh.edges.size() != std::size_t{edge_count} * (mesh.index_bits == 16 ? 2 : 4))
    return core::make_error(codes::DEFORM_SUBDIV_SIZE,
                            "the edge strengths, edge table and counts do not agree");
  if (!std::isfinite(split_threshold))
    return core::make_error(codes::DEFORM_SUBDIV_PARAM, "the split threshold is not finite");
  if (out_indices.size() / 12 < indices.size() / 3)
    return core::make_error(codes::DEFORM_SUBDIV_SIZE, "the output index array holds " +
                                                           std::to_string(out_indices.size()) +
                                                           " indices; 12 per triangle are needed");
  if (draw == nullptr)
    return core::make_error(codes::DEFORM_SUBDIV_SIZE, "no draw command to write");
  if (std::size_t{vertex_count} + edge_count > 0xFFFFFFFFU)
    return core::make_error(codes::DEFORM_SUBDIV_SIZE, "vertices plus edges exceed 32-bit indices");
  for (std::size_t i = 0; i < indices.size(); ++i) {
    if (indices[i] >= vertex_count)
      return core::error_at_offset(codes::DEFORM_SUBDIV_VERTEX,
                                   "index " + std::to_string(i) + " is vertex " +
                                       std::to_string(indices[i]) + " of " +
                                       std::to_string(vertex_count),
                                   i * 4);
    const std::uint32_t e = triangle_edges[i];
    if (e >= edge_count)
      return core::error_at_offset(codes::DEFORM_SUBDIV_EDGE,
                                   "triangle edge " + std::to_string(i) + " is edge " +
                                       std::to_string(e) + " of " + std::to_string(edge_count),
                                   i * 4);
    const std::size_t t = i / 3;
    const std::uint32_t p = indices[i];
    const std::uint32_t q = indices[3 * t + (i % 3 + 1) % 3];
    const SubdivEdge ed = mesh.edge(e);
    if (!((ed.a == p && ed.b == q) || (ed.a == q && ed.b == p)))
      return core::error_at_offset(codes::DEFORM_SUBDIV_EDGE,
                                   "triangle " + std::to_string(t) + "'s edge " +
                                       std::to_string(i % 3) + " is edge " + std::to_string(e) +
                                       ", which does not join vertices " + std::to_string(p) +
                                       " and " + std::to_string(q),
                                   i * 4);
  }
  return core::Ok{};
}

std::uint32_t subdiv_split_count(const SubdivIndexJob& job, std::uint32_t triangle) {
  return kPop3[split_mask(job, triangle)];
}

namespace {

/// Triangles [t0, t1) in order, written from out; returns the indices written.
std::size_t emit_range(const SubdivIndexJob& j, std::size_t t0, std::size_t t1,
                       std::uint32_t* out) {
  std::size_t written = 0;
  for (std::size_t t = t0; t < t1; ++t) {
    const unsigned mask = split_mask(j, t);
    emit_triangle(j, t, mask, out + written);
    written += 3 * (1 + std::size_t{kPop3[mask]});
  }
  return written;
}

/// Triangle order over an executor: each chunk counts its output, the
/// prefix sums place the chunks, each chunk writes at its place.
std::size_t emit_in_triangle_order(const SubdivIndexJob& j, const core::RunOptions& options) {
  const std::size_t triangles = j.indices.size() / 3;
  const std::size_t per = options.grain(
      triangles, std::max<std::size_t>(kVertexGrain, triangles / (4 * options.parallelism()) + 1));
  const std::size_t chunks = (triangles + per - 1) / per;
  if (chunks <= 1) return emit_range(j, 0, triangles, j.out_indices.data());
  std::vector<std::size_t> place(chunks + 1, 0);
  options.executor->parallel_for(0, chunks, 1, [&](std::size_t c0, std::size_t c1) {
    for (std::size_t c = c0; c < c1; ++c) {
      std::size_t n = 0;
      for (std::size_t t = c * per; t < std::min(triangles, (c + 1) * per); ++t)
        n += 3 * (1 + std::size_t{kPop3[split_mask(j, t)]});
      place[c + 1] = n;
    }
  });
  for (std::size_t c = 0; c < chunks; ++c) place[c + 1] += place[c];
  options.executor->parallel_for(0, chunks, 1, [&](std::size_t c0, std::size_t c1) {
    for (std::size_t c = c0; c < c1; ++c)
      emit_range(j, c * per, std::min(triangles, (c + 1) * per), j.out_indices.data() + place[c]);
  });
  return place[chunks];
}

/// The two-level allocation of the GPU's kernel 3.
std::size_t emit_in_groups(const SubdivIndexJob& j, const core::RunOptions& options) {
  const std::size_t triangles = j.indices.size() / 3;
  const std::size_t groups = (triangles + kSubdivGroupSize - 1) / kSubdivGroupSize;
  std::atomic<std::uint64_t> counter{0};  // the one global counter
  options.executor_or_serial().parallel_for(
      0, groups, options.grain(groups, kGroupsPerChunk), [&](std::size_t g0, std::size_t g1) {
        for (std::size_t g = g0; g < g1; ++g) {
          const std::size_t t0 = g * kSubdivGroupSize;
          const std::size_t t1 = std::min(triangles, t0 + kSubdivGroupSize);
          // Shared memory of the group: each invocation's mask and extra
          // count, then the group's sum (the GPU's barrier sits between the
          // phases).
          unsigned masks[kSubdivGroupSize];
          std::uint32_t offsets[kSubdivGroupSize];
          std::uint32_t sum = 0;
          for (std::size_t t = t0; t < t1; ++t) {
            masks[t - t0] = split_mask(j, t);
            offsets[t - t0] = sum;
            sum += 3 * (1 + kPop3[masks[t - t0]]);
          }
          // One atomic add per group gives the group its output range.
          const std::uint64_t base = counter.fetch_add(sum, std::memory_order_relaxed);
          for (std::size_t t = t0; t < t1; ++t)
            emit_triangle(j, t, masks[t - t0], j.out_indices.data() + base + offsets[t - t0]);
        }
      });
  return counter.load();
}

}  // namespace

core::Status SubdivIndexJob::run(const core::RunOptions& options) const {
  std::size_t written = 0;
  if (order == SubdivIndexOrder::kGroups)
    written = emit_in_groups(*this, options);
  else if (options.executor != nullptr)
    written = emit_in_triangle_order(*this, options);
  else
    written = emit_range(*this, 0, indices.size() / 3, out_indices.data());
  *draw = DrawIndexedIndirect{static_cast<std::uint32_t>(written), 1, 0, 0, 0};
  return core::Ok{};
}

SubdivIndexJob SubdivisionJob::index_job() const {
  return SubdivIndexJob{
      mesh,        indices,  triangle_edges, out.edge_strength, params.split_threshold,
      out.indices, out.draw, order};
}

core::Status SubdivisionJob::validate() const {
  const SubdivStrengthJob strength{params, mesh, out.vertices, out.edge_strength};
  if (auto st = strength.validate(); !st) return st;
  // The strengths are not computed yet: check the edge job's other inputs.
  if (auto st = check_bitmap(constrained, mesh.edge_count); !st) return st;
  return index_job().validate();
}

core::Status SubdivisionJob::run(const core::RunOptions& options) const {
  core::Executor& ex = options.executor_or_serial();
  ex.parallel_for(
      0, mesh.vertex_count, options.grain(mesh.vertex_count, kVertexGrain),
      [&](std::size_t lo, std::size_t hi) { fused_vertices(params, mesh, out.vertices, lo, hi); });
  ex.parallel_for(0, mesh.edge_count, options.grain(mesh.edge_count, kVertexGrain),
                  [&](std::size_t lo, std::size_t hi) {
                    fused_edges(params, mesh, constrained, out.vertices, out.edge_strength, lo, hi);
                  });
  return index_job().run(options);
}

core::Result<SubdivOutput> run_subdivision(const SubdivisionJob& job,
                                           const core::RunOptions& options) {
  if (!job.out.vertices.empty() || !job.out.edge_strength.empty() || !job.out.indices.empty() ||
      job.out.draw != nullptr)
    return core::make_error(codes::DEFORM_SUBDIV_SIZE,
                            "run_subdivision allocates the outputs: leave the job's out empty");
  SubdivOutput out;
  const SubdivMeshView& mesh = job.mesh;
  out.vertices.resize((std::size_t{mesh.vertex_count} + mesh.edge_count) * kSubdivOutVertexBytes);
  out.edge_strength.resize(mesh.edge_count);
  out.indices.resize(job.indices.size() / 3 * 12);
  SubdivisionJob owned = job;
  owned.out = SubdivBuffers{out.vertices, out.edge_strength, out.indices, &out.draw};
  if (auto st = owned.validate(); !st) return std::move(st).error();
  if (auto st = owned.run(options); !st) return std::move(st).error();
  out.indices.resize(out.draw.index_count);
  return out;
}

}  // namespace charkit::deform
