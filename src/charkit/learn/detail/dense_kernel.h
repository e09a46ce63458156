// Internal: the one dense-layer kernel that MlpEvaluator (mlp.cpp) and
// NmnRunner (nmn_run.cpp) share, so that a network and its `.nmn` export
// sum in the same order and agree to the bit (the export's re-read check).
#pragma once

#include <cstddef>

namespace charkit::learn::detail {

/// y[0..out) = b + x[0..in) * W, W row-major [in, out]; y must not alias x.
/// Eigen's vectorised matrix-vector product; allocates nothing.
void dense_affine(const float* x, const float* w, const float* b, float* y, std::size_t in,
                  std::size_t out);

}  // namespace charkit::learn::detail
