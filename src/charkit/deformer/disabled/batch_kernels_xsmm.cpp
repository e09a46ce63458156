// Stand-in for ../batch_kernels_xsmm.cpp in a build without libxsmm
// (CHARKIT_WITH_XSMM=OFF; docs/building.md, "Optional dependencies"):
// detail::gemm then always runs Eigen's product.
#include "charkit/deformer/detail/batch_kernels.h"

namespace charkit::deformer::detail {

bool xsmm_gemm(bool /*ta*/, bool /*tb*/, std::size_t /*m*/, std::size_t /*n*/, std::size_t /*k*/,
               const float* /*a*/, std::size_t /*lda*/, const float* /*b*/, std::size_t /*ldb*/,
               float /*beta*/, float* /*c*/, std::size_t /*ldc*/) {
  return false;
}

std::string xsmm_target() {
  return {};
}

}  // namespace charkit::deformer::detail
