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

std::string gemm_backend_name() {
#if CHARKIT_WITH_XSMM
  return std::string("libxsmm (") + libxsmm_get_target_arch() + ")";
#else
  return "Eigen";
#endif
}

}  // namespace charkit::learn::detail
