// libxsmm's small matrix products for detail::gemm (batch_kernels.h),
// built with CHARKIT_WITH_XSMM only; its stand-in is
// disabled/batch_kernels_xsmm.cpp (docs/building.md, "Optional
// dependencies").
#include <libxsmm.h>

#include <cstddef>
#include <string>

#include "charkit/deformer/detail/batch_kernels.h"

namespace charkit::deformer::detail {

// libxsmm is column-major. A row-major matrix read column-major is its
// transpose, so the row-major C = op(A)·op(B) is the column-major
// Cᵀ = op(B)ᵀ·op(A)ᵀ: B's storage is the first operand (transposed there iff
// tb), A's the second (transposed iff ta), and m and n swap. Returns false
// when libxsmm has no kernel for the form.
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
  // C = A·Bᵀ): B (stored n×k) is transposed into scratch (k×n) first, by
  // transpose() (libxsmm_otrans took a quarter of this product's time).
  thread_local AlignedFloats scratch;
  scratch.resize(k * n);
  transpose(b, n, k, ldb, scratch.data(), n);
  return xsmm_gemm(ta, false, m, n, k, a, lda, scratch.data(), n, beta, c, ldc);
}

std::string xsmm_target() {
  return libxsmm_get_target_arch();
}

}  // namespace charkit::deformer::detail
