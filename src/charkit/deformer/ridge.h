// Linear corrective model: per-vertex offsets = features * W, no bias, so
// the rest pose (all features zero) gives exactly zero offsets.
// W is fitted by ridge regression in closed form (docs/deformer/linear.md).
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "charkit/core/result.h"

namespace charkit::deformer {

/// outputs = features * weights; weights row-major F x O (row f = the
/// offsets one unit of feature f adds).
class LinearModel {
 public:
  LinearModel() = default;
  /// weights.size() must be features * outputs (checked by make()).
  static core::Result<LinearModel> make(std::size_t features, std::size_t outputs,
                                        std::vector<float> weights);

  std::size_t feature_count() const { return features_; }
  std::size_t output_count() const { return outputs_; }
  std::span<const float> weights() const { return weights_; }

  /// out = features * W. Allocation-free. Returns false (and leaves out
  /// untouched) when the sizes do not match the model.
  [[nodiscard]] bool evaluate(std::span<const float> features, std::span<float> out) const;

 private:
  std::size_t features_ = 0;
  std::size_t outputs_ = 0;
  std::vector<float> weights_;
};

struct RidgeOptions {
  /// Tikhonov weight: minimises |X W - Y|^2 + lambda |W|^2. 0 is allowed
  /// when X has full column rank.
  double lambda = 1e-3;
  /// Right-hand sides solved per block (bounds the double-precision copy of Y).
  std::size_t column_block = 4096;
};

/// Fit W from X (row-major samples x features) and Y (row-major samples x
/// outputs, e.g. 3 * vertices deltas): W = (X^T X + lambda I)^-1 X^T Y,
/// formed in double precision and solved by a Cholesky factorisation (LLT).
/// Errors: RIDGE_SHAPE, RIDGE_NOT_FINITE (NaN/inf in X, Y or lambda, or
/// lambda < 0), RIDGE_SINGULAR (X^T X + lambda I not positive definite).
core::Result<LinearModel> fit_ridge(std::span<const float> x, std::span<const float> y,
                                    std::size_t samples, std::size_t features, std::size_t outputs,
                                    const RidgeOptions& options = {});

}  // namespace charkit::deformer
