#include <Eigen/Core>
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

#include "charkit/learn/detail/batch_kernels.h"

#if CHARKIT_WITH_XSMM
#include <libxsmm.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#include <immintrin.h>
#define CHARKIT_DENSE_X86 1
#endif

namespace charkit::learn::detail {
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

#if CHARKIT_WITH_XSMM
/// libxsmm is column-major. A row-major matrix read column-major is its
/// transpose, so the row-major C = op(A)·op(B) is the column-major
/// Cᵀ = op(B)ᵀ·op(A)ᵀ: B's storage is the first operand (transposed there iff
/// tb), A's the second (transposed iff ta), and m and n swap. Returns false
/// when libxsmm has no kernel for the form.
bool xsmm_gemm(bool ta, bool tb, std::size_t m, std::size_t n, std::size_t k, const float* a,
               std::size_t lda, const float* b, std::size_t ldb, float beta, float* c,
               std::size_t ldc) {
  const auto xm = static_cast<libxsmm_blasint>(n), xn = static_cast<libxsmm_blasint>(m),
             xk = static_cast<libxsmm_blasint>(k);
  const auto xlda = static_cast<libxsmm_blasint>(ldb), xldb = static_cast<libxsmm_blasint>(lda),
             xldc = static_cast<libxsmm_blasint>(ldc);
  const float alpha = 1.0F;
  const int flags = (tb ? LIBXSMM_GEMM_FLAG_TRANS_A : 0) | (ta ? LIBXSMM_GEMM_FLAG_TRANS_B : 0);
  // The dispatch is a lookup in libxsmm's registry once the kernel exists.
  if (libxsmm_smmfunction f =
          libxsmm_smmdispatch(xm, xn, xk, &xlda, &xldb, &xldc, &alpha, &beta, &flags, nullptr)) {
    f(b, a, c);
    return true;
  }
  if (!tb) return false;
  // libxsmm 1.17 has no kernel with its first operand transposed (our
  // C = A·Bᵀ): B is transposed into scratch (k×n, row-major) first.
  thread_local std::vector<float> scratch;
  scratch.resize(k * n);
  // Column-major view: B's storage is k×n (ld ldb) → scratch n×k (ld n).
  libxsmm_otrans(scratch.data(), b, sizeof(float), static_cast<libxsmm_blasint>(k),
                 static_cast<libxsmm_blasint>(n), static_cast<libxsmm_blasint>(ldb),
                 static_cast<libxsmm_blasint>(n));
  return xsmm_gemm(ta, false, m, n, k, a, lda, scratch.data(), n, beta, c, ldc);
}
#endif

/// expm1(x) for x in [-87, 0]: x + x²/2 + … + x⁸/8! where |x| < 0.35 (no
/// cancellation), else e^x - 1 with e^x = 2^n · e^r, r = x - n ln 2 split in
/// two constants, e^r a degree-7 polynomial. Branch-free, so it vectorises.
inline float expm1_nonpositive(float x) {
  const float t = x * 1.44269504F + 12582912.0F;  // round(x / ln 2) in the low bits
  const float nf = t - 12582912.0F;
  const float r = (x - nf * 0.693359375F) - nf * -2.12194440e-4F;
  float p = 1.0F / 5040.0F;
  p = p * r + 1.0F / 720.0F;
  p = p * r + 1.0F / 120.0F;
  p = p * r + 1.0F / 24.0F;
  p = p * r + 1.0F / 6.0F;
  p = p * r + 0.5F;
  p = p * r + 1.0F;
  p = p * r + 1.0F;
  const auto n = static_cast<std::int32_t>(nf);
  const float two_n = std::bit_cast<float>(static_cast<std::int32_t>((n + 127) << 23));
  const float big = p * two_n - 1.0F;
  float q = 1.0F / 40320.0F;
  q = q * x + 1.0F / 5040.0F;
  q = q * x + 1.0F / 720.0F;
  q = q * x + 1.0F / 120.0F;
  q = q * x + 1.0F / 24.0F;
  q = q * x + 1.0F / 6.0F;
  q = q * x + 0.5F;
  const float small = x + x * x * q;
  return x > -0.35F ? small : big;
}

// ---- dense_rows ---------------------------------------------------------------
//
// One accumulator per output, started at the bias, fused multiply-adds over
// k in order: the blocking below only decides how many rows share a loaded
// weight vector and how many outputs share a broadcast input, never the
// order of an output's sum, so every kernel and every row count give the
// same bits (tests/learn/batch_kernels_test.cpp).

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

// The masks of the J vectors of 16 outputs from o0 (zero past the layer's end).
template <int J>
void output_masks(std::size_t o0, std::size_t out, __mmask16* m) {
  for (int j = 0; j < J; ++j) {
    const std::size_t first = o0 + 16 * static_cast<std::size_t>(j);
    const std::size_t lanes = first >= out ? 0 : std::min<std::size_t>(16, out - first);
    m[j] = static_cast<__mmask16>((1u << lanes) - 1u);
  }
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
#endif

}  // namespace

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
void elu_inplace(float* z, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    const float x = z[i];
    const float neg = expm1_nonpositive(std::min(std::max(x, -87.0F), 0.0F));
    z[i] = x > 0.0F ? x : neg;
  }
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
void standardise_rows(const float* x, std::size_t rows, std::size_t cols, const float* mean,
                      const float* sd, float* out) {
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < cols; ++c) out[r * cols + c] = (x[r * cols + c] - mean[c]) / sd[c];
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
void adam_step(float* p, const float* g, float* m, float* v, std::size_t n, float beta1,
               float beta2, float step, float eps) {
  for (std::size_t i = 0; i < n; ++i) {
    m[i] = beta1 * m[i] + (1.0F - beta1) * g[i];
    v[i] = beta2 * v[i] + (1.0F - beta2) * (g[i] * g[i]);
    p[i] -= step * m[i] / (std::sqrt(v[i]) + eps);
  }
}

void gemm(bool ta, bool tb, std::size_t m, std::size_t n, std::size_t k, const float* a,
          std::size_t lda, const float* b, std::size_t ldb, float beta, float* c, std::size_t ldc,
          GemmBackend backend) {
  if (m == 0 || n == 0) return;
#if CHARKIT_WITH_XSMM
  if (backend == GemmBackend::kAuto && k > 0 &&
      xsmm_gemm(ta, tb, m, n, k, a, lda, b, ldb, beta, c, ldc))
    return;
#else
  (void)backend;
#endif
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
#if CHARKIT_WITH_XSMM
  return std::string("libxsmm (") + libxsmm_get_target_arch() + ")";
#else
  return "Eigen";
#endif
}

}  // namespace charkit::learn::detail
