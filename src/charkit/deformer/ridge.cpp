#include "charkit/deformer/ridge.h"

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <algorithm>
#include <cmath>

#include "charkit/deformer/error_codes.h"

namespace charkit::deformer {

using core::make_error;

core::Result<LinearModel> LinearModel::make(std::size_t features, std::size_t outputs,
                                            std::vector<float> weights) {
  if (outputs != 0 && features > weights.max_size() / outputs)
    return make_error(codes::RIDGE_SHAPE, "model size overflows");
  if (weights.size() != features * outputs)
    return make_error(codes::RIDGE_SHAPE, "weights hold " + std::to_string(weights.size()) +
                                              " floats; " + std::to_string(features) + " x " +
                                              std::to_string(outputs) + " expected");
  LinearModel m;
  m.features_ = features;
  m.outputs_ = outputs;
  m.weights_ = std::move(weights);
  return m;
}

bool LinearModel::evaluate(std::span<const float> features, std::span<float> out) const {
  if (features.size() != features_ || out.size() != outputs_) return false;
  std::fill(out.begin(), out.end(), 0.0F);
  const float* w = weights_.data();
  for (std::size_t f = 0; f < features_; ++f, w += outputs_) {
    const float xf = features[f];
    if (xf == 0.0F) continue;  // keeps rest exactly zero even with inf weights
    for (std::size_t o = 0; o < outputs_; ++o) out[o] += xf * w[o];
  }
  return true;
}

core::Result<LinearModel> fit_ridge(std::span<const float> x, std::span<const float> y,
                                    std::size_t samples, std::size_t features, std::size_t outputs,
                                    const RidgeOptions& options) {
  if (samples == 0 || features == 0 || outputs == 0)
    return make_error(codes::RIDGE_SHAPE, "need at least one sample, feature and output");
  if (features > x.size() / samples || x.size() != samples * features)
    return make_error(codes::RIDGE_SHAPE, "X holds " + std::to_string(x.size()) + " floats; " +
                                              std::to_string(samples) + " x " +
                                              std::to_string(features) + " expected");
  if (outputs > y.size() / samples || y.size() != samples * outputs)
    return make_error(codes::RIDGE_SHAPE, "Y holds " + std::to_string(y.size()) + " floats; " +
                                              std::to_string(samples) + " x " +
                                              std::to_string(outputs) + " expected");
  if (!std::isfinite(options.lambda) || options.lambda < 0.0)
    return make_error(codes::RIDGE_NOT_FINITE, "lambda must be finite and >= 0");
  const auto finite = [](float v) { return std::isfinite(v); };
  if (!std::all_of(x.begin(), x.end(), finite))
    return make_error(codes::RIDGE_NOT_FINITE, "X holds NaN or infinity");
  if (!std::all_of(y.begin(), y.end(), finite))
    return make_error(codes::RIDGE_NOT_FINITE, "Y holds NaN or infinity");

  using RowMajorF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  const auto n = static_cast<Eigen::Index>(samples);
  const auto f = static_cast<Eigen::Index>(features);
  const auto o = static_cast<Eigen::Index>(outputs);
  Eigen::Map<const RowMajorF> xf(x.data(), n, f);
  Eigen::Map<const RowMajorF> yf(y.data(), n, o);
  const Eigen::MatrixXd xd = xf.cast<double>();

  Eigen::MatrixXd a = xd.transpose() * xd;
  a.diagonal().array() += options.lambda;
  const Eigen::LLT<Eigen::MatrixXd> llt(a);
  if (llt.info() != Eigen::Success)
    return make_error(codes::RIDGE_SINGULAR,
                      "X^T X + lambda I is not positive definite (raise lambda, or the features "
                      "are linearly dependent)");

  std::vector<float> weights(features * outputs);
  Eigen::Map<RowMajorF> w(weights.data(), f, o);
  const auto block = static_cast<Eigen::Index>(std::max<std::size_t>(1, options.column_block));
  for (Eigen::Index c = 0; c < o; c += block) {
    const Eigen::Index width = std::min(block, o - c);
    const Eigen::MatrixXd b = xd.transpose() * yf.middleCols(c, width).cast<double>();
    const Eigen::MatrixXd sol = llt.solve(b);
    if (!sol.allFinite())
      return make_error(codes::RIDGE_SINGULAR, "the solve produced non-finite weights");
    w.middleCols(c, width) = sol.cast<float>();
  }
  return LinearModel::make(features, outputs, std::move(weights));
}

}  // namespace charkit::deformer
