// detail::fused_product: the training step's matrix products with their
// elementwise neighbours done on the accumulators before they are stored
// (docs/deformer/batch.md, "Products with their epilogues").
//
// Every output is one chain of fused multiply-adds over k in order, from the
// bias or 0, so the blocking (six, four, two or one rows × 64 outputs) and
// the rows' split between cores never change a bit; the AVX-512 kernel
// equals fused_product_reference (std::fma; adam_step for kAdam) to the bit
// for every epilogue (tests/deformer/fused_product_test.cpp).
#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

#include "charkit/deformer/detail/avx512_blocks.h"
#include "charkit/deformer/detail/batch_kernels.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#include <immintrin.h>
#define CHARKIT_FUSED_X86 1
#endif

namespace charkit::deformer::detail {
namespace {

/// X(r, k) as FusedProduct::x describes it.
inline float x_at(const FusedProduct& p, std::size_t r, std::size_t k) {
  return p.layout == FusedRows::kPerRow ? p.x[r][p.offset + k] : p.x[k][p.offset + r];
}

/// expm1 for x in [-87, 0], the polynomial of batch_kernels.cpp's
/// expm1_nonpositive (detail::elu_expm1) written with explicit fused
/// multiply-adds (the reference and the vector kernel round the same
/// operations).
inline float expm1_poly(float x) {
  using namespace elu_expm1;
  const float t = std::fma(x, kLog2e, kShift);
  const float nf = t - kShift;
  const float r = std::fma(nf, -kLn2Lo, std::fma(-nf, kLn2Hi, x));
  float q = kQ[0];
  for (std::size_t i = 1; i < 7; ++i) q = std::fma(q, r, kQ[i]);
  const float em1r = std::fma(r * r, q, r);
  const float two_n = two_to_n(t);
  return std::fma(two_n, em1r, two_n - 1.0F);
}

inline float elu_ref(float x) {
  if (std::isnan(x)) return x;
  return x > 0.0F ? x : expm1_poly(std::min(std::max(x, -87.0F), 0.0F));
}

#if defined(CHARKIT_FUSED_X86)

/// ELU of 16 lanes, expm1_poly's operations in the same order; NaN passes.
/// Only the lanes with x <= 0 (or NaN) keep the polynomial, so the upper
/// clamp at 0 is not needed here (it changes no such lane), and 2^n comes
/// from vscalefps (exact for the whole numbers n in [-126, 0] of those
/// lanes, the same bits as expm1_poly's exponent field).
__attribute__((target("avx512f"))) inline __m512 elu16(__m512 x) {
  // max(c, x) returns x where x is NaN. (GCC 12's unmasked forms read an
  // undefined vector: the maskz forms with every lane.)
  const auto all = static_cast<__mmask16>(0xFFFF);
  const __m512 xc = _mm512_maskz_max_ps(all, _mm512_set1_ps(-87.0F), x);
  using namespace elu_expm1;
  const __m512 big = _mm512_set1_ps(kShift);
  const __m512 nf = _mm512_sub_ps(_mm512_fmadd_ps(xc, _mm512_set1_ps(kLog2e), big), big);
  const __m512 r = _mm512_fmadd_ps(nf, _mm512_set1_ps(-kLn2Lo),
                                   _mm512_fnmadd_ps(nf, _mm512_set1_ps(kLn2Hi), xc));
  __m512 q = _mm512_set1_ps(kQ[0]);
#pragma GCC unroll 6
  for (std::size_t i = 1; i < 7; ++i) q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(kQ[i]));
  const __m512 em1r = _mm512_fmadd_ps(_mm512_mul_ps(r, r), q, r);
  const __m512 two_n = _mm512_maskz_scalef_ps(all, _mm512_set1_ps(1.0F), nf);
  const __m512 neg = _mm512_fmadd_ps(two_n, em1r, _mm512_sub_ps(two_n, _mm512_set1_ps(1.0F)));
  // x where x > 0 or x is NaN, the polynomial elsewhere.
  const __mmask16 keep = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_NLE_UQ);
  return _mm512_mask_blend_ps(keep, neg, x);
}

/// One vector of 16 outputs: a plain load where the block is whole (Full),
/// a masked one in the layer's last block.
template <bool Full>
__attribute__((target("avx512f"))) inline __m512 load16(__mmask16 m, const float* p) {
  if constexpr (Full)
    return _mm512_loadu_ps(p);
  else
    return _mm512_maskz_loadu_ps(m, p);
}

/// R rows × 64 outputs from (r0, o0): 4R accumulators (24 for six rows, and
/// 4 registers for the weights' vectors and one for a broadcast). Sums: the
/// block also adds up b's 64 columns over k into p.column_sums (4 more
/// accumulators, so at most four rows).
template <int R, FusedRows L, FusedEpilogue E, bool Full, bool Sums = false>
__attribute__((target("avx512f,prfchw"))) inline void fused_block(const FusedProduct& pr,
                                                                  std::size_t r0, std::size_t o0,
                                                                  const __mmask16 (&mk)[4]) {
  // Local copies: a store through y, m or v could change *pr or *pr.adam
  // as far as GCC knows, so it would reload every field after each store.
  const FusedProduct p = pr;
  const AdamStep adam = p.adam != nullptr ? *p.adam : AdamStep{};
  const __mmask16 m0 = mk[0], m1 = mk[1], m2 = mk[2], m3 = mk[3];
  const std::size_t depth = p.depth, ldb = p.ldb;
  const bool prefetch = p.prefetch;
  __m512 c[R][4];
  {
    const float* bo = p.bias + o0;
    const __m512 b0 = p.bias != nullptr ? load16<Full>(m0, bo) : _mm512_setzero_ps();
    const __m512 b1 = p.bias != nullptr ? load16<Full>(m1, bo + 16) : _mm512_setzero_ps();
    const __m512 b2 = p.bias != nullptr ? load16<Full>(m2, bo + 32) : _mm512_setzero_ps();
    const __m512 b3 = p.bias != nullptr ? load16<Full>(m3, bo + 48) : _mm512_setzero_ps();
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) c[r][0] = b0, c[r][1] = b1, c[r][2] = b2, c[r][3] = b3;
  }
  const float* xr[R];
  if constexpr (L == FusedRows::kPerRow) {
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) xr[r] = p.x[r0 + static_cast<std::size_t>(r)] + p.offset;
  }
  static_assert(!Sums || R <= 4, "the column sums need four registers more");
  __m512 sums[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(),
                    _mm512_setzero_ps()};
  const float* bk = p.b + o0;
  const float* const* xk = p.x;
  const std::size_t xoff = p.offset + r0;
  // One k: the four vectors of b's row k, then each row's broadcast times them.
  auto step = [&](std::size_t k) __attribute__((always_inline, target("avx512f,prfchw"))) {
    const __m512 w0 = load16<Full>(m0, bk), w1 = load16<Full>(m1, bk + 16),
                 w2 = load16<Full>(m2, bk + 32), w3 = load16<Full>(m3, bk + 48);
    if constexpr (Sums) {
      sums[0] = _mm512_add_ps(sums[0], w0);
      sums[1] = _mm512_add_ps(sums[1], w1);
      sums[2] = _mm512_add_ps(sums[2], w2);
      sums[3] = _mm512_add_ps(sums[3], w3);
    }
    const float* row = nullptr;
    if constexpr (L == FusedRows::kPerK) row = xk[k] + xoff;
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) {
      const __m512 a =
          _mm512_set1_ps(L == FusedRows::kPerRow ? xr[r][k] : row[static_cast<std::size_t>(r)]);
      c[r][0] = _mm512_fmadd_ps(a, w0, c[r][0]);
      c[r][1] = _mm512_fmadd_ps(a, w1, c[r][1]);
      c[r][2] = _mm512_fmadd_ps(a, w2, c[r][2]);
      c[r][3] = _mm512_fmadd_ps(a, w3, c[r][3]);
    }
  };
  std::size_t k = 0;
  if (prefetch) {
    // What the epilogue reads and writes, one vector's lines per k over the
    // first 4R k, fetched while the sums run (for writing where written).
    const std::size_t kp = std::min(depth, 4 * static_cast<std::size_t>(R));
    for (; k < kp; ++k, bk += ldb) {
      const std::size_t rr = r0 + (k >> 2), cc = o0 + 16 * (k & 3);
      const std::size_t q = rr * p.ldy + cc;
      __builtin_prefetch(p.y + q, 1, 3);
      if constexpr (E == FusedEpilogue::kAdam) {
        __builtin_prefetch(p.m + q, 1, 3);
        __builtin_prefetch(p.v + q, 1, 3);
      }
      if constexpr (E == FusedEpilogue::kResidual) __builtin_prefetch(p.t[rr] + cc, 0, 3);
      if constexpr (E == FusedEpilogue::kEluGrad) __builtin_prefetch(p.e + rr * p.lde + cc, 0, 3);
      step(k);
    }
  }
#pragma GCC unroll 4
  for (; k < depth; ++k, bk += ldb) step(k);
  if constexpr (Sums) {
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      float* cs = p.column_sums + o0 + 16 * static_cast<std::size_t>(j);
      if constexpr (Full)
        _mm512_storeu_ps(cs, sums[j]);
      else
        _mm512_mask_storeu_ps(cs, j == 0 ? m0 : j == 1 ? m1 : j == 2 ? m2 : m3, sums[j]);
    }
  }
  if constexpr (E == FusedEpilogue::kAdam) {
    // The sums leave the registers first: with 4R accumulators live, Adam's
    // constants and temporaries did not fit, and GCC spilled and reloaded
    // them for every vector.
    alignas(64) float g[R][64];
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
      for (int j = 0; j < 4; ++j) _mm512_store_ps(&g[r][16 * j], c[r][j]);
#pragma GCC unroll 1
    for (int r = 0; r < R; ++r) {
      const std::size_t at = (r0 + static_cast<std::size_t>(r)) * p.ldy + o0;
#pragma GCC unroll 4
      for (int j = 0; j < 4; ++j) {
        const __mmask16 mj = j == 0 ? m0 : j == 1 ? m1 : j == 2 ? m2 : m3;
        const std::size_t o = at + 16 * static_cast<std::size_t>(j);
        adam16<Full>(_mm512_load_ps(&g[r][16 * j]), p.y + o, p.m + o, p.v + o, mj, adam);
      }
    }
    return;
  }
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r) {
    float* y = p.y + (r0 + static_cast<std::size_t>(r)) * p.ldy + o0;
    const float* e = E == FusedEpilogue::kEluGrad
                         ? p.e + (r0 + static_cast<std::size_t>(r)) * p.lde + o0
                         : nullptr;
    // kResidual: the row's target and its 16 lanes of squared residuals
    // (from 0 at the first column block, carried over the next ones).
    const float* t = nullptr;
    float* lanes = nullptr;
    __m512 sq = _mm512_setzero_ps();
    if constexpr (E == FusedEpilogue::kResidual) {
      t = p.t[r0 + static_cast<std::size_t>(r)] + o0;
      lanes = p.lanes + (r0 + static_cast<std::size_t>(r)) * 16;
      if (o0 != 0) sq = _mm512_loadu_ps(lanes);
    }
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      const __mmask16 mj = j == 0 ? m0 : j == 1 ? m1 : j == 2 ? m2 : m3;
      __m512 v = c[r][j];
      if constexpr (E == FusedEpilogue::kElu) v = elu16(v);
      if constexpr (E == FusedEpilogue::kResidual) {
        // Masked lanes: 0 − 0.
        const __m512 d = _mm512_sub_ps(v, load16<Full>(mj, t + 16 * j));
        sq = _mm512_fmadd_ps(d, d, sq);
        v = _mm512_mul_ps(d, _mm512_set1_ps(p.scale));
      }
      if constexpr (E == FusedEpilogue::kEluGrad) {
        const __m512 ej = load16<Full>(mj, e + 16 * j);
        v = _mm512_mul_ps(
            v, _mm512_maskz_min_ps(static_cast<__mmask16>(0xFFFF),
                                   _mm512_add_ps(ej, _mm512_set1_ps(1.0F)), _mm512_set1_ps(1.0F)));
      }
      if constexpr (Full) {
        _mm512_storeu_ps(y + 16 * j, v);
      } else {
        _mm512_mask_storeu_ps(y + 16 * j, mj, v);
      }
    }
    if constexpr (E == FusedEpilogue::kResidual) _mm512_storeu_ps(lanes, sq);
  }
}

/// Every row block of one column block.
template <FusedRows L, FusedEpilogue E, bool Full>
__attribute__((target("avx512f,prfchw"))) void fused_columns(const FusedProduct& p, std::size_t o0,
                                                             const __mmask16 (&m)[4]) {
  std::size_t r = 0;
  if constexpr (E == FusedEpilogue::kAdam) {
    // The column sums of b (a layer's bias gradient) come with the first
    // block, of four rows at most.
    if (p.column_sums != nullptr) {
      if (p.rows >= 4) {
        fused_block<4, L, E, Full, true>(p, 0, o0, m);
        r = 4;
      } else if (p.rows >= 2) {
        fused_block<2, L, E, Full, true>(p, 0, o0, m);
        r = 2;
      } else {
        fused_block<1, L, E, Full, true>(p, 0, o0, m);
        r = 1;
      }
    }
  }
  // Six-row blocks, except that eight rows left go as two of four.
  for (; p.rows - r >= 6 && p.rows - r != 8; r += 6) fused_block<6, L, E, Full>(p, r, o0, m);
  for (; p.rows - r >= 4; r += 4) fused_block<4, L, E, Full>(p, r, o0, m);
  for (; p.rows - r >= 2; r += 2) fused_block<2, L, E, Full>(p, r, o0, m);
  for (; r < p.rows; ++r) fused_block<1, L, E, Full>(p, r, o0, m);
}

template <FusedRows L, FusedEpilogue E>
__attribute__((target("avx512f,prfchw"))) void fused_product_avx512(const FusedProduct& p) {
  for (std::size_t o0 = 0; o0 < p.cols; o0 += 64) {
    __mmask16 m[4];
    output_masks<4>(o0, p.cols, m);
    if (o0 + 64 <= p.cols)
      fused_columns<L, E, true>(p, o0, m);
    else
      fused_columns<L, E, false>(p, o0, m);
  }
}

template <FusedRows L>
void fused_dispatch(const FusedProduct& p) {
  switch (p.epilogue) {
    case FusedEpilogue::kStore:
      return fused_product_avx512<L, FusedEpilogue::kStore>(p);
    case FusedEpilogue::kElu:
      return fused_product_avx512<L, FusedEpilogue::kElu>(p);
    case FusedEpilogue::kEluGrad:
      return fused_product_avx512<L, FusedEpilogue::kEluGrad>(p);
    case FusedEpilogue::kAdam:
      return fused_product_avx512<L, FusedEpilogue::kAdam>(p);
    case FusedEpilogue::kResidual:
      return fused_product_avx512<L, FusedEpilogue::kResidual>(p);
  }
}
#endif

bool cpu_has_kernel() {
#if defined(CHARKIT_FUSED_X86)
  static const bool has_avx512 = __builtin_cpu_supports("avx512f") != 0;
  return has_avx512;
#else
  return false;
#endif
}

// set_fused_products: whether train_mlp takes this path (a choice made once
// per training); fused_product itself runs wherever the CPU can.
std::atomic<bool> g_fused_enabled{true};

}  // namespace

void set_fused_products(bool enabled) {
  g_fused_enabled.store(enabled);
}

bool fused_product_available() {
  return cpu_has_kernel() && g_fused_enabled.load(std::memory_order_relaxed);
}

bool fused_product(const FusedProduct& p) {
  if (!cpu_has_kernel()) return false;
#if defined(CHARKIT_FUSED_X86)
  if (p.rows == 0 || p.cols == 0) return true;
  if (p.layout == FusedRows::kPerRow)
    fused_dispatch<FusedRows::kPerRow>(p);
  else
    fused_dispatch<FusedRows::kPerK>(p);
  return true;
#else
  (void)p;
  return false;
#endif
}

void fused_product_reference(const FusedProduct& p) {
  std::vector<float> g(p.epilogue == FusedEpilogue::kAdam ? p.cols : 0);
  if (p.epilogue == FusedEpilogue::kAdam && p.column_sums != nullptr && p.rows > 0)
    column_sums(p.b, p.depth, p.ldb, 0, p.cols, p.column_sums);
  for (std::size_t r = 0; r < p.rows; ++r) {
    if (p.epilogue == FusedEpilogue::kResidual) std::fill_n(p.lanes + r * 16, 16, 0.0F);
    for (std::size_t o = 0; o < p.cols; ++o) {
      float acc = p.bias != nullptr ? p.bias[o] : 0.0F;
      for (std::size_t k = 0; k < p.depth; ++k)
        acc = std::fma(x_at(p, r, k), p.b[k * p.ldb + o], acc);
      switch (p.epilogue) {
        case FusedEpilogue::kStore:
          break;
        case FusedEpilogue::kElu:
          acc = elu_ref(acc);
          break;
        case FusedEpilogue::kEluGrad:
          acc *= std::min(p.e[r * p.lde + o] + 1.0F, 1.0F);
          break;
        case FusedEpilogue::kAdam:
          g[o] = acc;
          continue;
        case FusedEpilogue::kResidual: {
          const float d = acc - p.t[r][o];
          float& lane = p.lanes[r * 16 + o % 16];
          lane = std::fma(d, d, lane);
          acc = d * p.scale;
          break;
        }
      }
      p.y[r * p.ldy + o] = acc;
    }
    if (p.epilogue == FusedEpilogue::kAdam) {
      const std::size_t at = r * p.ldy;
      adam_step(p.y + at, g.data(), p.m + at, p.v + at, p.cols, *p.adam);
    }
  }
}

}  // namespace charkit::deformer::detail
