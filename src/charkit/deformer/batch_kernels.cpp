#include <Eigen/Core>
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

#include "charkit/deformer/detail/avx512_blocks.h"
#include "charkit/deformer/detail/batch_kernels.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#include <immintrin.h>
#define CHARKIT_DENSE_X86 1
// The elementwise loops compiled for AVX-512, AVX2 and the baseline, the
// one for the CPU picked at run time (GCC's target_clones).
#define CHARKIT_WIDTH_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define CHARKIT_WIDTH_CLONES
#endif

namespace charkit::deformer::detail {
namespace {

using MatF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMap = Eigen::Map<const MatF, 0, Eigen::OuterStride<>>;
using Map = Eigen::Map<MatF, 0, Eigen::OuterStride<>>;

void eigen_gemm(bool ta, bool tb, std::size_t m, std::size_t n, std::size_t k, const float* a,
                std::size_t lda, const float* b, std::size_t ldb, float beta, float* c,
                std::size_t ldc) {
  const auto mi = static_cast<Eigen::Index>(m), ni = static_cast<Eigen::Index>(n),
             ki = static_cast<Eigen::Index>(k);
  const ConstMap am(a, ta ? ki : mi, ta ? mi : ki,
                    Eigen::OuterStride<>(static_cast<Eigen::Index>(lda)));
  const ConstMap bm(b, tb ? ni : ki, tb ? ki : ni,
                    Eigen::OuterStride<>(static_cast<Eigen::Index>(ldb)));
  Map cm(c, mi, ni, Eigen::OuterStride<>(static_cast<Eigen::Index>(ldc)));
  if (beta == 0.0F) cm.setZero();
  if (!ta && !tb)
    cm.noalias() += am * bm;
  else if (ta && !tb)
    cm.noalias() += am.transpose() * bm;
  else if (!ta && tb)
    cm.noalias() += am * bm.transpose();
  else
    cm.noalias() += am.transpose() * bm.transpose();
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
/// dst (16×16, ld ldd) = the 16×16 block at src (ld lds) transposed: 64
/// in-register shuffles (unpack by 32 and 64 bits within 128-bit lanes,
/// then two rounds of 128-bit lane shuffles).
__attribute__((target("avx512f"))) void transpose16(const float* src, std::size_t lds, float* dst,
                                                    std::size_t ldd) {
  // The zero-masked forms with every lane set: GCC 12's plain forms read an
  // undefined vector and fail -Werror=maybe-uninitialized.
  const auto all16 = static_cast<__mmask16>(0xFFFF);
  const auto all8 = static_cast<__mmask8>(0xFF);
  __m512 r[16], t[16];
  for (std::size_t i = 0; i < 16; ++i) r[i] = _mm512_loadu_ps(src + i * lds);
  for (std::size_t i = 0; i < 16; i += 2) {
    t[i] = _mm512_maskz_unpacklo_ps(all16, r[i], r[i + 1]);      // per lane: a0 b0 a1 b1
    t[i + 1] = _mm512_maskz_unpackhi_ps(all16, r[i], r[i + 1]);  // a2 b2 a3 b3
  }
  for (std::size_t i = 0; i < 16; i += 4) {  // rows i..i+3: lane j holds column 4j + q
    const __m512d a = _mm512_castps_pd(t[i]), b = _mm512_castps_pd(t[i + 1]);
    const __m512d c = _mm512_castps_pd(t[i + 2]), d = _mm512_castps_pd(t[i + 3]);
    r[i] = _mm512_castpd_ps(_mm512_maskz_unpacklo_pd(all8, a, c));      // q = 0
    r[i + 1] = _mm512_castpd_ps(_mm512_maskz_unpackhi_pd(all8, a, c));  // q = 1
    r[i + 2] = _mm512_castpd_ps(_mm512_maskz_unpacklo_pd(all8, b, d));  // q = 2
    r[i + 3] = _mm512_castpd_ps(_mm512_maskz_unpackhi_pd(all8, b, d));  // q = 3
  }
  // Lanes 0, 2 (columns q, 8 + q) and 1, 3 (4 + q, 12 + q) of row groups
  // 0-3 with 4-7, and of 8-11 with 12-15.
  for (std::size_t h = 0; h < 16; h += 8)
    for (std::size_t q = 0; q < 4; ++q) {
      t[h + q] = _mm512_maskz_shuffle_f32x4(all16, r[h + q], r[h + 4 + q], 0x88);
      t[h + 4 + q] = _mm512_maskz_shuffle_f32x4(all16, r[h + q], r[h + 4 + q], 0xdd);
    }
  // t[q], t[8 + q]: columns q and 8 + q (q < 4); t[4 + q], t[12 + q]: 4 + q
  // and 12 + q, for the row groups 0-7 and 8-15.
  for (std::size_t q = 0; q < 8; ++q) {
    _mm512_storeu_ps(dst + q * ldd, _mm512_maskz_shuffle_f32x4(all16, t[q], t[8 + q], 0x88));
    _mm512_storeu_ps(dst + (q + 8) * ldd, _mm512_maskz_shuffle_f32x4(all16, t[q], t[8 + q], 0xdd));
  }
}
#endif

}  // namespace

void transpose(const float* src, std::size_t rows, std::size_t cols, std::size_t lds, float* dst,
               std::size_t ldd, DenseIsa isa) {
  std::size_t r0 = 0, c0 = 0;
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
  static const bool has_avx512 = __builtin_cpu_supports("avx512f") != 0;
  if ((isa == DenseIsa::kAuto || isa == DenseIsa::kAvx512) && has_avx512) {
    r0 = rows - rows % 16;
    c0 = cols - cols % 16;
    for (std::size_t i = 0; i < r0; i += 16)
      for (std::size_t j = 0; j < c0; j += 16)
        transpose16(src + i * lds + j, lds, dst + j * ldd + i, ldd);
  }
#else
  (void)isa;
#endif
  // What the blocks leave: the columns past c0 of the block rows, then every
  // row past r0; in tiles of 16 so both sides stay in cache.
  for (std::size_t i = 0; i < r0; ++i)
    for (std::size_t j = c0; j < cols; ++j) dst[j * ldd + i] = src[i * lds + j];
  for (std::size_t jj = 0; jj < cols; jj += 16)
    for (std::size_t i = r0; i < rows; ++i)
      for (std::size_t j = jj; j < std::min(cols, jj + 16); ++j)
        dst[j * ldd + i] = src[i * lds + j];
}

namespace {

/// expm1(x) for x in [-87, 0] with one polynomial and no branch, so it
/// vectorises: x = n ln 2 + r with |r| <= ln 2 / 2 (n = round(x / ln 2), r
/// from two constants), expm1(r) = r + r²·(1/2! + r/3! + … + r⁶/8!) (the
/// series' first omitted term is below 1e-9 of r), and
/// expm1(x) = 2ⁿ·expm1(r) + (2ⁿ − 1), where 2ⁿ − 1 is exact: for n = 0
/// (|x| < 0.3466) the result is expm1(r) itself, with no cancellation.
/// (The constants: detail::elu_expm1.)
inline float expm1_nonpositive(float x) {
  using namespace elu_expm1;
  const float t = x * kLog2e + kShift;  // round(x / ln 2) in the low bits
  const float nf = t - kShift;
  const float r = (x - nf * kLn2Hi) - nf * kLn2Lo;
  float q = kQ[0];
#pragma GCC unroll 6
  for (std::size_t i = 1; i < 7; ++i) q = q * r + kQ[i];
  const float em1r = r + r * r * q;
  const float two_n = two_to_n(t);
  return two_n * em1r + (two_n - 1.0F);
}

/// ELU (α = 1) of one value, branch-free: expm1 of the value clamped to
/// [-87, 0] (NaN passes through), selected where x <= 0.
inline float elu_value(float x) {
  const float neg = expm1_nonpositive(std::min(std::max(x, -87.0F), 0.0F));
  return x > 0.0F ? x : neg;
}

// ---- dense_rows ---------------------------------------------------------------
//
// One accumulator per output, started at the bias, fused multiply-adds over
// k in order: the blocking below only decides how many rows share a loaded
// weight vector and how many outputs share a broadcast input, never the
// order of an output's sum, so every kernel and every row count give the
// same bits (tests/deformer/batch_kernels_test.cpp).

void dense_rows_scalar(const float* x, std::size_t rows, std::size_t in, const float* w,
                       const float* bias, std::size_t out, float* y, std::size_t o_begin) {
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t o = o_begin; o < out; ++o) {
      float acc = bias[o];
      for (std::size_t k = 0; k < in; ++k) acc = std::fma(x[r * in + k], w[k * out + o], acc);
      y[r * out + o] = acc;
    }
}

#if defined(CHARKIT_DENSE_X86)
// Four rows × 64 outputs (16 accumulators) from output o0; m0..m3 select
// the outputs that exist in each vector of 16 (the layer's last block).
// Named registers, not arrays: GCC keeps an array of accumulators in
// registers but also stores it to the stack on every k.
__attribute__((target("avx512f"))) inline void dense_block4_avx512(
    const float* x, std::size_t ldx, std::size_t kc, const float* w, const float* bias,
    std::size_t out, float* y, std::size_t o0, __mmask16 m0, __mmask16 m1, __mmask16 m2,
    __mmask16 m3) {
  // Rows x[r·ldx + 0..kc); w holds those kc rows of the weights. The chains
  // start at the bias (bias non-null) or go on from the partial sums in y.
  float* y0 = y + o0;
  float* y1 = y0 + out;
  float* y2 = y1 + out;
  float* y3 = y2 + out;
  __m512 c00, c01, c02, c03, c10, c11, c12, c13, c20, c21, c22, c23, c30, c31, c32, c33;
  if (bias != nullptr) {
    const float* bo = bias + o0;
    c00 = _mm512_maskz_loadu_ps(m0, bo);
    c01 = _mm512_maskz_loadu_ps(m1, bo + 16);
    c02 = _mm512_maskz_loadu_ps(m2, bo + 32);
    c03 = _mm512_maskz_loadu_ps(m3, bo + 48);
    c10 = c00, c11 = c01, c12 = c02, c13 = c03;
    c20 = c00, c21 = c01, c22 = c02, c23 = c03;
    c30 = c00, c31 = c01, c32 = c02, c33 = c03;
  } else {
    c00 = _mm512_maskz_loadu_ps(m0, y0), c01 = _mm512_maskz_loadu_ps(m1, y0 + 16);
    c02 = _mm512_maskz_loadu_ps(m2, y0 + 32), c03 = _mm512_maskz_loadu_ps(m3, y0 + 48);
    c10 = _mm512_maskz_loadu_ps(m0, y1), c11 = _mm512_maskz_loadu_ps(m1, y1 + 16);
    c12 = _mm512_maskz_loadu_ps(m2, y1 + 32), c13 = _mm512_maskz_loadu_ps(m3, y1 + 48);
    c20 = _mm512_maskz_loadu_ps(m0, y2), c21 = _mm512_maskz_loadu_ps(m1, y2 + 16);
    c22 = _mm512_maskz_loadu_ps(m2, y2 + 32), c23 = _mm512_maskz_loadu_ps(m3, y2 + 48);
    c30 = _mm512_maskz_loadu_ps(m0, y3), c31 = _mm512_maskz_loadu_ps(m1, y3 + 16);
    c32 = _mm512_maskz_loadu_ps(m2, y3 + 32), c33 = _mm512_maskz_loadu_ps(m3, y3 + 48);
  }
  const float* x0 = x;
  const float* x1 = x + ldx;
  const float* x2 = x + 2 * ldx;
  const float* x3 = x + 3 * ldx;
  const float* wk = w + o0;
  for (std::size_t k = 0; k < kc; ++k, wk += out) {
    const __m512 w0 = _mm512_maskz_loadu_ps(m0, wk), w1 = _mm512_maskz_loadu_ps(m1, wk + 16),
                 w2 = _mm512_maskz_loadu_ps(m2, wk + 32), w3 = _mm512_maskz_loadu_ps(m3, wk + 48);
    __m512 a = _mm512_set1_ps(x0[k]);
    c00 = _mm512_fmadd_ps(a, w0, c00);
    c01 = _mm512_fmadd_ps(a, w1, c01);
    c02 = _mm512_fmadd_ps(a, w2, c02);
    c03 = _mm512_fmadd_ps(a, w3, c03);
    a = _mm512_set1_ps(x1[k]);
    c10 = _mm512_fmadd_ps(a, w0, c10);
    c11 = _mm512_fmadd_ps(a, w1, c11);
    c12 = _mm512_fmadd_ps(a, w2, c12);
    c13 = _mm512_fmadd_ps(a, w3, c13);
    a = _mm512_set1_ps(x2[k]);
    c20 = _mm512_fmadd_ps(a, w0, c20);
    c21 = _mm512_fmadd_ps(a, w1, c21);
    c22 = _mm512_fmadd_ps(a, w2, c22);
    c23 = _mm512_fmadd_ps(a, w3, c23);
    a = _mm512_set1_ps(x3[k]);
    c30 = _mm512_fmadd_ps(a, w0, c30);
    c31 = _mm512_fmadd_ps(a, w1, c31);
    c32 = _mm512_fmadd_ps(a, w2, c32);
    c33 = _mm512_fmadd_ps(a, w3, c33);
  }
  _mm512_mask_storeu_ps(y0, m0, c00);
  _mm512_mask_storeu_ps(y0 + 16, m1, c01);
  _mm512_mask_storeu_ps(y0 + 32, m2, c02);
  _mm512_mask_storeu_ps(y0 + 48, m3, c03);
  _mm512_mask_storeu_ps(y1, m0, c10);
  _mm512_mask_storeu_ps(y1 + 16, m1, c11);
  _mm512_mask_storeu_ps(y1 + 32, m2, c12);
  _mm512_mask_storeu_ps(y1 + 48, m3, c13);
  _mm512_mask_storeu_ps(y2, m0, c20);
  _mm512_mask_storeu_ps(y2 + 16, m1, c21);
  _mm512_mask_storeu_ps(y2 + 32, m2, c22);
  _mm512_mask_storeu_ps(y2 + 48, m3, c23);
  _mm512_mask_storeu_ps(y3, m0, c30);
  _mm512_mask_storeu_ps(y3 + 16, m1, c31);
  _mm512_mask_storeu_ps(y3 + 32, m2, c32);
  _mm512_mask_storeu_ps(y3 + 48, m3, c33);
}

// Six rows × 64 outputs (24 accumulators, 29 of the 32 registers): the
// batch kernel's main block; as dense_block4_avx512 otherwise.
__attribute__((target("avx512f"))) inline void dense_block6_avx512(
    const float* x, std::size_t ldx, std::size_t kc, const float* w, const float* bias,
    std::size_t out, float* y, std::size_t o0, __mmask16 m0, __mmask16 m1, __mmask16 m2,
    __mmask16 m3) {
  float* y0 = y + o0;
  float* y1 = y0 + out;
  float* y2 = y1 + out;
  float* y3 = y2 + out;
  float* y4 = y3 + out;
  float* y5 = y4 + out;
  __m512 c00, c01, c02, c03, c10, c11, c12, c13, c20, c21, c22, c23, c30, c31, c32, c33, c40, c41,
      c42, c43, c50, c51, c52, c53;
  if (bias != nullptr) {
    const float* bo = bias + o0;
    c00 = _mm512_maskz_loadu_ps(m0, bo + 0);
    c01 = _mm512_maskz_loadu_ps(m1, bo + 16);
    c02 = _mm512_maskz_loadu_ps(m2, bo + 32);
    c03 = _mm512_maskz_loadu_ps(m3, bo + 48);
    c10 = c00, c11 = c01, c12 = c02, c13 = c03;
    c20 = c00, c21 = c01, c22 = c02, c23 = c03;
    c30 = c00, c31 = c01, c32 = c02, c33 = c03;
    c40 = c00, c41 = c01, c42 = c02, c43 = c03;
    c50 = c00, c51 = c01, c52 = c02, c53 = c03;
  } else {
    c00 = _mm512_maskz_loadu_ps(m0, y0 + 0);
    c01 = _mm512_maskz_loadu_ps(m1, y0 + 16);
    c02 = _mm512_maskz_loadu_ps(m2, y0 + 32);
    c03 = _mm512_maskz_loadu_ps(m3, y0 + 48);
    c10 = _mm512_maskz_loadu_ps(m0, y1 + 0);
    c11 = _mm512_maskz_loadu_ps(m1, y1 + 16);
    c12 = _mm512_maskz_loadu_ps(m2, y1 + 32);
    c13 = _mm512_maskz_loadu_ps(m3, y1 + 48);
    c20 = _mm512_maskz_loadu_ps(m0, y2 + 0);
    c21 = _mm512_maskz_loadu_ps(m1, y2 + 16);
    c22 = _mm512_maskz_loadu_ps(m2, y2 + 32);
    c23 = _mm512_maskz_loadu_ps(m3, y2 + 48);
    c30 = _mm512_maskz_loadu_ps(m0, y3 + 0);
    c31 = _mm512_maskz_loadu_ps(m1, y3 + 16);
    c32 = _mm512_maskz_loadu_ps(m2, y3 + 32);
    c33 = _mm512_maskz_loadu_ps(m3, y3 + 48);
    c40 = _mm512_maskz_loadu_ps(m0, y4 + 0);
    c41 = _mm512_maskz_loadu_ps(m1, y4 + 16);
    c42 = _mm512_maskz_loadu_ps(m2, y4 + 32);
    c43 = _mm512_maskz_loadu_ps(m3, y4 + 48);
    c50 = _mm512_maskz_loadu_ps(m0, y5 + 0);
    c51 = _mm512_maskz_loadu_ps(m1, y5 + 16);
    c52 = _mm512_maskz_loadu_ps(m2, y5 + 32);
    c53 = _mm512_maskz_loadu_ps(m3, y5 + 48);
  }
  const float* x0 = x + 0 * ldx;
  const float* x1 = x + 1 * ldx;
  const float* x2 = x + 2 * ldx;
  const float* x3 = x + 3 * ldx;
  const float* x4 = x + 4 * ldx;
  const float* x5 = x + 5 * ldx;
  const float* wk = w + o0;
  for (std::size_t k = 0; k < kc; ++k, wk += out) {
    const __m512 w0 = _mm512_maskz_loadu_ps(m0, wk), w1 = _mm512_maskz_loadu_ps(m1, wk + 16),
                 w2 = _mm512_maskz_loadu_ps(m2, wk + 32), w3 = _mm512_maskz_loadu_ps(m3, wk + 48);
    __m512 a;
    a = _mm512_set1_ps(x0[k]);
    c00 = _mm512_fmadd_ps(a, w0, c00);
    c01 = _mm512_fmadd_ps(a, w1, c01);
    c02 = _mm512_fmadd_ps(a, w2, c02);
    c03 = _mm512_fmadd_ps(a, w3, c03);
    a = _mm512_set1_ps(x1[k]);
    c10 = _mm512_fmadd_ps(a, w0, c10);
    c11 = _mm512_fmadd_ps(a, w1, c11);
    c12 = _mm512_fmadd_ps(a, w2, c12);
    c13 = _mm512_fmadd_ps(a, w3, c13);
    a = _mm512_set1_ps(x2[k]);
    c20 = _mm512_fmadd_ps(a, w0, c20);
    c21 = _mm512_fmadd_ps(a, w1, c21);
    c22 = _mm512_fmadd_ps(a, w2, c22);
    c23 = _mm512_fmadd_ps(a, w3, c23);
    a = _mm512_set1_ps(x3[k]);
    c30 = _mm512_fmadd_ps(a, w0, c30);
    c31 = _mm512_fmadd_ps(a, w1, c31);
    c32 = _mm512_fmadd_ps(a, w2, c32);
    c33 = _mm512_fmadd_ps(a, w3, c33);
    a = _mm512_set1_ps(x4[k]);
    c40 = _mm512_fmadd_ps(a, w0, c40);
    c41 = _mm512_fmadd_ps(a, w1, c41);
    c42 = _mm512_fmadd_ps(a, w2, c42);
    c43 = _mm512_fmadd_ps(a, w3, c43);
    a = _mm512_set1_ps(x5[k]);
    c50 = _mm512_fmadd_ps(a, w0, c50);
    c51 = _mm512_fmadd_ps(a, w1, c51);
    c52 = _mm512_fmadd_ps(a, w2, c52);
    c53 = _mm512_fmadd_ps(a, w3, c53);
  }
  _mm512_mask_storeu_ps(y0 + 0, m0, c00);
  _mm512_mask_storeu_ps(y0 + 16, m1, c01);
  _mm512_mask_storeu_ps(y0 + 32, m2, c02);
  _mm512_mask_storeu_ps(y0 + 48, m3, c03);
  _mm512_mask_storeu_ps(y1 + 0, m0, c10);
  _mm512_mask_storeu_ps(y1 + 16, m1, c11);
  _mm512_mask_storeu_ps(y1 + 32, m2, c12);
  _mm512_mask_storeu_ps(y1 + 48, m3, c13);
  _mm512_mask_storeu_ps(y2 + 0, m0, c20);
  _mm512_mask_storeu_ps(y2 + 16, m1, c21);
  _mm512_mask_storeu_ps(y2 + 32, m2, c22);
  _mm512_mask_storeu_ps(y2 + 48, m3, c23);
  _mm512_mask_storeu_ps(y3 + 0, m0, c30);
  _mm512_mask_storeu_ps(y3 + 16, m1, c31);
  _mm512_mask_storeu_ps(y3 + 32, m2, c32);
  _mm512_mask_storeu_ps(y3 + 48, m3, c33);
  _mm512_mask_storeu_ps(y4 + 0, m0, c40);
  _mm512_mask_storeu_ps(y4 + 16, m1, c41);
  _mm512_mask_storeu_ps(y4 + 32, m2, c42);
  _mm512_mask_storeu_ps(y4 + 48, m3, c43);
  _mm512_mask_storeu_ps(y5 + 0, m0, c50);
  _mm512_mask_storeu_ps(y5 + 16, m1, c51);
  _mm512_mask_storeu_ps(y5 + 32, m2, c52);
  _mm512_mask_storeu_ps(y5 + 48, m3, c53);
}

// One row × 128 outputs (8 accumulators: enough independent chains to
// cover the FMA latency) from output o0; m[j] as above.
__attribute__((target("avx512f"))) inline void dense_block1_avx512(
    const float* x, std::size_t in, const float* w, const float* bias, std::size_t out, float* y,
    std::size_t o0, const __mmask16* m) {
  const __mmask16 m0 = m[0], m1 = m[1], m2 = m[2], m3 = m[3], m4 = m[4], m5 = m[5], m6 = m[6],
                  m7 = m[7];
  const float* bo = bias + o0;
  __m512 c0 = _mm512_maskz_loadu_ps(m0, bo), c1 = _mm512_maskz_loadu_ps(m1, bo + 16),
         c2 = _mm512_maskz_loadu_ps(m2, bo + 32), c3 = _mm512_maskz_loadu_ps(m3, bo + 48),
         c4 = _mm512_maskz_loadu_ps(m4, bo + 64), c5 = _mm512_maskz_loadu_ps(m5, bo + 80),
         c6 = _mm512_maskz_loadu_ps(m6, bo + 96), c7 = _mm512_maskz_loadu_ps(m7, bo + 112);
  const float* wk = w + o0;
  for (std::size_t k = 0; k < in; ++k, wk += out) {
    const __m512 a = _mm512_set1_ps(x[k]);
    c0 = _mm512_fmadd_ps(a, _mm512_maskz_loadu_ps(m0, wk), c0);
    c1 = _mm512_fmadd_ps(a, _mm512_maskz_loadu_ps(m1, wk + 16), c1);
    c2 = _mm512_fmadd_ps(a, _mm512_maskz_loadu_ps(m2, wk + 32), c2);
    c3 = _mm512_fmadd_ps(a, _mm512_maskz_loadu_ps(m3, wk + 48), c3);
    c4 = _mm512_fmadd_ps(a, _mm512_maskz_loadu_ps(m4, wk + 64), c4);
    c5 = _mm512_fmadd_ps(a, _mm512_maskz_loadu_ps(m5, wk + 80), c5);
    c6 = _mm512_fmadd_ps(a, _mm512_maskz_loadu_ps(m6, wk + 96), c6);
    c7 = _mm512_fmadd_ps(a, _mm512_maskz_loadu_ps(m7, wk + 112), c7);
  }
  float* yo = y + o0;
  _mm512_mask_storeu_ps(yo, m0, c0);
  _mm512_mask_storeu_ps(yo + 16, m1, c1);
  _mm512_mask_storeu_ps(yo + 32, m2, c2);
  _mm512_mask_storeu_ps(yo + 48, m3, c3);
  _mm512_mask_storeu_ps(yo + 64, m4, c4);
  _mm512_mask_storeu_ps(yo + 80, m5, c5);
  _mm512_mask_storeu_ps(yo + 96, m6, c6);
  _mm512_mask_storeu_ps(yo + 112, m7, c7);
}

__attribute__((target("avx512f"))) void dense_rows_avx512(const float* x, std::size_t rows,
                                                          std::size_t in, const float* w,
                                                          const float* bias, std::size_t out,
                                                          float* y) {
  // Four rows × 64 outputs (16 accumulators) per block; a single row takes
  // 128 outputs (8 accumulators, enough to cover the FMA latency).
  // Blocks of kKc inputs: a panel of kKc weight rows × 64 outputs (32 KiB)
  // stays in L1 while every 4-row block of the batch goes through it; the
  // partial sums wait in y (a float stored and reloaded is the same float,
  // so the chains are unchanged).
  constexpr std::size_t kKc = 128;
  const std::size_t rows6 = rows / 6 * 6;
  const std::size_t rows4 = rows6 + (rows - rows6) / 4 * 4;
  for (std::size_t k0 = 0; k0 < in; k0 += kKc) {
    const std::size_t kc = std::min(kKc, in - k0);
    const float* b0 = k0 == 0 ? bias : nullptr;
    for (std::size_t o0 = 0; o0 < out; o0 += 64) {
      __mmask16 m[4];
      output_masks<4>(o0, out, m);
      for (std::size_t r = 0; r < rows6; r += 6)
        dense_block6_avx512(x + r * in + k0, in, kc, w + k0 * out, b0, out, y + r * out, o0, m[0],
                            m[1], m[2], m[3]);
      for (std::size_t r = rows6; r < rows4; r += 4)
        dense_block4_avx512(x + r * in + k0, in, kc, w + k0 * out, b0, out, y + r * out, o0, m[0],
                            m[1], m[2], m[3]);
    }
  }
  for (std::size_t r = rows4; r < rows; ++r)
    for (std::size_t o0 = 0; o0 < out; o0 += 128) {
      __mmask16 m[8];
      output_masks<8>(o0, out, m);
      dense_block1_avx512(x + r * in, in, w, bias, out, y + r * out, o0, m);
    }
}

// AVX2 + FMA: four rows × 16 outputs (8 accumulators of the 16 registers)
// or one row × 32 outputs, named registers as above; outputs past the
// last whole block go to the scalar kernel (std::fma: the same bits).
__attribute__((target("avx2,fma"))) inline void dense_block4_avx2(const float* x, std::size_t in,
                                                                  const float* w, const float* bias,
                                                                  std::size_t out, float* y,
                                                                  std::size_t o0) {
  const float* bo = bias + o0;
  __m256 c00, c01, c10, c11, c20, c21, c30, c31;
  c00 = _mm256_loadu_ps(bo + 0);
  c01 = _mm256_loadu_ps(bo + 8);
  c10 = c00, c11 = c01;
  c20 = c00, c21 = c01;
  c30 = c00, c31 = c01;
  const float* wk = w + o0;
  for (std::size_t k = 0; k < in; ++k, wk += out) {
    const __m256 w0 = _mm256_loadu_ps(wk + 0), w1 = _mm256_loadu_ps(wk + 8);
    __m256 a;
    a = _mm256_broadcast_ss(x + 0 * in + k);
    c00 = _mm256_fmadd_ps(a, w0, c00);
    c01 = _mm256_fmadd_ps(a, w1, c01);
    a = _mm256_broadcast_ss(x + 1 * in + k);
    c10 = _mm256_fmadd_ps(a, w0, c10);
    c11 = _mm256_fmadd_ps(a, w1, c11);
    a = _mm256_broadcast_ss(x + 2 * in + k);
    c20 = _mm256_fmadd_ps(a, w0, c20);
    c21 = _mm256_fmadd_ps(a, w1, c21);
    a = _mm256_broadcast_ss(x + 3 * in + k);
    c30 = _mm256_fmadd_ps(a, w0, c30);
    c31 = _mm256_fmadd_ps(a, w1, c31);
  }
  _mm256_storeu_ps(y + 0 * out + o0 + 0, c00);
  _mm256_storeu_ps(y + 0 * out + o0 + 8, c01);
  _mm256_storeu_ps(y + 1 * out + o0 + 0, c10);
  _mm256_storeu_ps(y + 1 * out + o0 + 8, c11);
  _mm256_storeu_ps(y + 2 * out + o0 + 0, c20);
  _mm256_storeu_ps(y + 2 * out + o0 + 8, c21);
  _mm256_storeu_ps(y + 3 * out + o0 + 0, c30);
  _mm256_storeu_ps(y + 3 * out + o0 + 8, c31);
}

__attribute__((target("avx2,fma"))) inline void dense_block1_avx2(const float* x, std::size_t in,
                                                                  const float* w, const float* bias,
                                                                  std::size_t out, float* y,
                                                                  std::size_t o0) {
  const float* bo = bias + o0;
  __m256 c00, c01, c02, c03;
  c00 = _mm256_loadu_ps(bo + 0);
  c01 = _mm256_loadu_ps(bo + 8);
  c02 = _mm256_loadu_ps(bo + 16);
  c03 = _mm256_loadu_ps(bo + 24);
  const float* wk = w + o0;
  for (std::size_t k = 0; k < in; ++k, wk += out) {
    const __m256 w0 = _mm256_loadu_ps(wk + 0), w1 = _mm256_loadu_ps(wk + 8),
                 w2 = _mm256_loadu_ps(wk + 16), w3 = _mm256_loadu_ps(wk + 24);
    __m256 a;
    a = _mm256_broadcast_ss(x + 0 * in + k);
    c00 = _mm256_fmadd_ps(a, w0, c00);
    c01 = _mm256_fmadd_ps(a, w1, c01);
    c02 = _mm256_fmadd_ps(a, w2, c02);
    c03 = _mm256_fmadd_ps(a, w3, c03);
  }
  _mm256_storeu_ps(y + 0 * out + o0 + 0, c00);
  _mm256_storeu_ps(y + 0 * out + o0 + 8, c01);
  _mm256_storeu_ps(y + 0 * out + o0 + 16, c02);
  _mm256_storeu_ps(y + 0 * out + o0 + 24, c03);
}

__attribute__((target("avx2,fma"))) void dense_rows_avx2(const float* x, std::size_t rows,
                                                         std::size_t in, const float* w,
                                                         const float* bias, std::size_t out,
                                                         float* y) {
  // Four rows × 16 outputs (8 accumulators of the 16 registers) per block;
  // a single row takes 32 outputs.
  const std::size_t out16 = out / 16 * 16, out32 = out / 32 * 32;
  std::size_t r = 0;
  for (; r + 4 <= rows; r += 4) {
    for (std::size_t o0 = 0; o0 < out16; o0 += 16)
      dense_block4_avx2(x + r * in, in, w, bias, out, y + r * out, o0);
    if (out16 < out) dense_rows_scalar(x + r * in, 4, in, w, bias, out, y + r * out, out16);
  }
  for (; r < rows; ++r) {
    for (std::size_t o0 = 0; o0 < out32; o0 += 32)
      dense_block1_avx2(x + r * in, in, w, bias, out, y + r * out, o0);
    if (out32 < out) dense_rows_scalar(x + r * in, 1, in, w, bias, out, y + r * out, out32);
  }
}

/// Adam with AVX-512's reciprocal estimates refined by one Newton step
/// instead of vsqrtps and vdivps (0.36 ns per parameter in L1 with them on
/// an Intel Xeon with AVX-512 at about 3.8 GHz, 0.25 without; the 512-bit
/// root and division there cost 3.1 and 2.6 ns per vector, the estimates
/// 0.6): √v = v·rsqrt(v) and
/// 1/(√v + eps), each within 2 ulp of the exact float (14-bit estimates,
/// one step doubles the bits). v below FLT_MIN counts as 0 (its root is
/// below 1.1e-19, far under any eps Adam is run with).
__attribute__((target("avx512f"))) void adam_step_avx512(float* p, const float* g, float* m,
                                                         float* v, std::size_t n,
                                                         const AdamStep& c) {
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16)
    adam16<true>(_mm512_loadu_ps(g + i), p + i, m + i, v + i, static_cast<__mmask16>(0xFFFF), c);
  if (i < n) {
    const auto k = static_cast<__mmask16>((1u << (n - i)) - 1u);
    adam16<false>(_mm512_maskz_loadu_ps(k, g + i), p + i, m + i, v + i, k, c);
  }
}
#endif

/// Adam on the vector units with the exact square root and division: the
/// CPUs without AVX-512, and the reference adam_step_avx512 is tested
/// against.
CHARKIT_WIDTH_CLONES
void adam_step_loop(float* p, const float* g, float* m, float* v, std::size_t n,
                    const AdamStep& c) {
  const float b1 = c.beta1, b2 = c.beta2, scale = c.root_scale, floor = c.floor;
  for (std::size_t i = 0; i < n; ++i) {
    m[i] = b1 * m[i] + g[i];
    v[i] = b2 * v[i] + g[i] * g[i];
    p[i] -= m[i] / (scale * std::sqrt(v[i]) + floor);
  }
}

}  // namespace

CHARKIT_WIDTH_CLONES
void elu_inplace(float* z, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) z[i] = elu_value(z[i]);
}

CHARKIT_WIDTH_CLONES
void standardise_rows(const float* x, std::size_t rows, std::size_t cols, const float* mean,
                      const float* sd, float* out) {
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < cols; ++c) out[r * cols + c] = (x[r * cols + c] - mean[c]) / sd[c];
}

AdamStep adam_step_constants(double beta1, double beta2, double lr, double eps, std::uint64_t t) {
  const double td = static_cast<double>(t);
  const double c1 = 1.0 - std::pow(beta1, td), c2 = 1.0 - std::pow(beta2, td);
  const double per = c1 / (lr * (1.0 - beta1));
  return AdamStep{static_cast<float>(beta1), static_cast<float>(beta2),
                  static_cast<float>(per * std::sqrt((1.0 - beta2) / c2)),
                  static_cast<float>(per * eps)};
}

void adam_step(float* p, const float* g, float* m, float* v, std::size_t n, const AdamStep& c,
               DenseIsa isa) {
#if defined(CHARKIT_DENSE_X86)
  static const bool has_avx512 = __builtin_cpu_supports("avx512f") != 0;
  if ((isa == DenseIsa::kAuto || isa == DenseIsa::kAvx512) && has_avx512)
    return adam_step_avx512(p, g, m, v, n, c);
#else
  (void)isa;
#endif
  adam_step_loop(p, g, m, v, n, c);
}

CHARKIT_WIDTH_CLONES
void bias_rows(float* z, std::size_t rows, std::size_t cols, const float* bias, bool elu) {
  for (std::size_t r = 0; r < rows; ++r) {
    float* zr = z + r * cols;
    if (elu) {
      for (std::size_t c = 0; c < cols; ++c) zr[c] = elu_value(zr[c] + bias[c]);
    } else {
      for (std::size_t c = 0; c < cols; ++c) zr[c] += bias[c];
    }
  }
}

CHARKIT_WIDTH_CLONES
void gather_standardise(const float* x, std::size_t cols, const std::size_t* idx, std::size_t rows,
                        const float* mean, const float* inv_sd, float* out) {
  for (std::size_t r = 0; r < rows; ++r) {
    const float* xr = x + idx[r] * cols;
    float* o = out + r * cols;
    for (std::size_t c = 0; c < cols; ++c) o[c] = (xr[c] - mean[c]) * inv_sd[c];
  }
}

CHARKIT_WIDTH_CLONES
double residual_rows(const float* a, const float* y, const std::size_t* idx, std::size_t rows,
                     std::size_t cols, float scale, float* g) {
  double total = 0.0;
  for (std::size_t r = 0; r < rows; ++r) {
    const float* ar = a + r * cols;
    const float* yr = y + idx[r] * cols;
    float* gr = g + r * cols;
    float lanes[16] = {};
    std::size_t c = 0;
    for (; c + 16 <= cols; c += 16)
      for (std::size_t j = 0; j < 16; ++j) {
        const float d = ar[c + j] - yr[c + j];
        lanes[j] += d * d;
        gr[c + j] = d * scale;
      }
    for (std::size_t j = 0; c < cols; ++c, ++j) {
      const float d = ar[c] - yr[c];
      lanes[j] += d * d;
      gr[c] = d * scale;
    }
    float s = 0.0F;
    for (float l : lanes) s += l;
    total += static_cast<double>(s);
  }
  return total;
}

CHARKIT_WIDTH_CLONES
void elu_backward(const float* da, const float* a, std::size_t n, float* dz) {
  for (std::size_t i = 0; i < n; ++i) dz[i] = da[i] * std::min(a[i] + 1.0F, 1.0F);
}

CHARKIT_WIDTH_CLONES
void column_sums(const float* m, std::size_t rows, std::size_t ld, std::size_t c0, std::size_t c1,
                 float* out) {
  for (std::size_t c = c0; c < c1; ++c) out[c] = 0.0F;
  for (std::size_t r = 0; r < rows; ++r) {
    const float* row = m + r * ld;
    for (std::size_t c = c0; c < c1; ++c) out[c] += row[c];
  }
}

void gemm(bool ta, bool tb, std::size_t m, std::size_t n, std::size_t k, const float* a,
          std::size_t lda, const float* b, std::size_t ldb, float beta, float* c, std::size_t ldc,
          GemmBackend backend) {
  if (m == 0 || n == 0) return;
  if (backend == GemmBackend::kAuto && k > 0 &&
      xsmm_gemm(ta, tb, m, n, k, a, lda, b, ldb, beta, c, ldc))
    return;
  eigen_gemm(ta, tb, m, n, k, a, lda, b, ldb, beta, c, ldc);
}

void dense_rows(const float* x, std::size_t rows, std::size_t in, const float* w, const float* bias,
                std::size_t out, float* y, DenseIsa isa) {
  if (rows == 0 || out == 0) return;
#if defined(CHARKIT_DENSE_X86)
  static const bool has_avx512 = __builtin_cpu_supports("avx512f") != 0;
  static const bool has_avx2 =
      __builtin_cpu_supports("avx2") != 0 && __builtin_cpu_supports("fma") != 0;
  if (isa == DenseIsa::kAuto)
    isa = has_avx512 ? DenseIsa::kAvx512 : has_avx2 ? DenseIsa::kAvx2 : DenseIsa::kScalar;
  if (isa == DenseIsa::kAvx512 && has_avx512)
    return dense_rows_avx512(x, rows, in, w, bias, out, y);
  if (isa == DenseIsa::kAvx2 && has_avx2) return dense_rows_avx2(x, rows, in, w, bias, out, y);
#else
  (void)isa;
#endif
  dense_rows_scalar(x, rows, in, w, bias, out, y, 0);
}

std::string gemm_backend_name() {
  const std::string target = xsmm_target();
  return target.empty() ? "Eigen" : "libxsmm (" + target + ")";
}

}  // namespace charkit::deformer::detail
