#include "charkit/deformer/pose_model.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <numeric>

#include "charkit/core/json.h"
#include "charkit/deformer/detail/common.h"
#include "charkit/deformer/detail/prng.h"
#include "charkit/deformer/error_codes.h"
#include "charkit/deformer/npy.h"

namespace charkit::deformer {

using core::Json;
using core::make_error;

namespace {

constexpr const char* kFormat = "charkit.pose_model";
constexpr std::uint32_t kVersion = 1;

using MatD = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Per-vertex distance statistics between a prediction and a target (3V each).
void add_errors(std::span<const float> pred, std::span<const float> target, double& sum,
                double& max, double& per_sample_mean) {
  const std::size_t v = target.size() / 3;
  double s = 0.0;
  for (std::size_t i = 0; i < v; ++i) {
    const double dx = pred[3 * i] - target[3 * i];
    const double dy = pred[3 * i + 1] - target[3 * i + 1];
    const double dz = pred[3 * i + 2] - target[3 * i + 2];
    const double d = std::sqrt(dx * dx + dy * dy + dz * dz);
    s += d;
    max = std::max(max, d);
  }
  sum += s;
  per_sample_mean = v ? s / static_cast<double>(v) : 0.0;
}

// How far bone b is turned in a feature row: the rotation vector's length
// (axis-angle layout) or the distance of its six numbers from the identity's.
double bone_turn(const Dataset& d, std::span<const float> row, std::size_t b) {
  if (d.layout == FeatureLayout::kAxisAngle) {
    const float* f = row.data() + 3 * b;
    return std::sqrt(double{f[0]} * f[0] + double{f[1]} * f[1] + double{f[2]} * f[2]);
  }
  static constexpr float kIdentity[6] = {1, 0, 0, 0, 1, 0};
  const float* f = row.data() + 6 * b;
  double s = 0.0;
  for (int k = 0; k < 6; ++k) s += (f[k] - kIdentity[k]) * double{f[k] - kIdentity[k]};
  return std::sqrt(s);
}

core::Status options_error(std::string msg) {
  return make_error(codes::MODEL_OPTIONS, std::move(msg));
}

// Least-squares weights of each row of `deltas` against the morphs (M x 3V):
// (B B^T + eps I) w = B d, eps relative to the trace, for a stable solve.
std::vector<float> morph_weights(std::span<const float> deltas, std::size_t rows,
                                 std::span<const float> morphs, std::size_t m, std::size_t width) {
  Eigen::Map<const Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> B(
      morphs.data(), static_cast<Eigen::Index>(m), static_cast<Eigen::Index>(width));
  const Eigen::MatrixXd Bd = B.cast<double>();
  Eigen::MatrixXd G = Bd * Bd.transpose();
  const double eps = 1e-9 * std::max(G.trace(), 1e-30);
  G.diagonal().array() += eps;
  const Eigen::LDLT<Eigen::MatrixXd> solver(G);
  std::vector<float> w(rows * m);
  for (std::size_t r = 0; r < rows; ++r) {
    Eigen::Map<const Eigen::VectorXf> d(deltas.data() + r * width,
                                        static_cast<Eigen::Index>(width));
    const Eigen::VectorXd x = solver.solve(Bd * d.cast<double>());
    for (std::size_t k = 0; k < m; ++k)
      w[r * m + k] = static_cast<float>(x(static_cast<Eigen::Index>(k)));
  }
  return w;
}

/// The features of the rest pose: computed in the axis-angle layout (zero
/// rotations, zero curves); in the engine layout they depend on the bones'
/// rest frames, which only the dataset knows: its sample 0, the rest pose.
std::vector<float> rest_features(const Dataset& d) {
  const std::size_t f = d.feature_count();
  std::vector<float> rest(f, 0.0F);
  if (d.layout != FeatureLayout::kAxisAngle || !pose_features(d.spec, rest_pose(d.spec), rest))
    std::copy_n(d.features.begin(), f, rest.begin());
  return rest;
}

/// Makes a neural model's correction exactly zero at the rest pose: a
/// learned basis moves its fixed mean morph by the offsets predicted there;
/// a morph-target basis moves the last layer's biases by the network's raw
/// outputs there (its output activation is the identity), and its clamp
/// range takes in 0. The shift is the model's error at rest, a constant
/// added to every prediction (docs/deformer/pose_model.md).
void zero_at_rest(PoseModel& m, std::span<const float> rest) {
  if (m.kind != ModelKind::kNeural || m.mlp.layers.empty()) return;
  if (m.fixed_first_morph) {
    const std::size_t width = 3 * m.vertex_count;
    std::vector<float> at_rest(width);
    PoseModelEvaluator ev(m);
    if (!ev.offsets(rest, at_rest)) return;
    for (std::size_t i = 0; i < width; ++i) m.morphs[i] -= at_rest[i];
    return;
  }
  if (m.mlp.output_activation != Activation::kIdentity) return;
  std::vector<float> raw(m.mlp.output_count());
  MlpEvaluator ev(m.mlp);
  if (!ev.evaluate(rest, raw)) return;
  std::vector<float>& bias = m.mlp.layers.back().biases;
  for (std::size_t k = 0; k < raw.size(); ++k) bias[k] -= raw[k];
  for (float& lo : m.weight_min) lo = std::min(lo, 0.0F);
  for (float& hi : m.weight_max) hi = std::max(hi, 0.0F);
}

}  // namespace

const char* model_kind_name(ModelKind k) {
  return k == ModelKind::kLinear ? "linear" : "neural";
}

const char* targets_name(DeltaTargets t) {
  return t == DeltaTargets::kRestDeformation ? "rest-deformation" : "bind-correction";
}

const char* clamp_name(WeightClamp c) {
  switch (c) {
    case WeightClamp::kNone:
      return "none";
    case WeightClamp::kUnit:
      return "unit";
    case WeightClamp::kTrainingRange:
      return "training-range";
  }
  return "none";
}

core::Status validate(const PoseModel& m) {
  auto shape = [](std::string msg) { return make_error(codes::MODEL_SHAPE, std::move(msg)); };
  if (auto st = validate(m.spec); !st) return st;
  const std::size_t f = m.feature_count(), width = 3 * m.vertex_count;
  if (m.vertex_count == 0) return shape("the model has no vertices");
  if (m.kind == ModelKind::kLinear) {
    if (m.linear.feature_count() != f || m.linear.output_count() != width)
      return shape("the linear model is " + std::to_string(m.linear.feature_count()) + " x " +
                   std::to_string(m.linear.output_count()) + ", expected " + std::to_string(f) +
                   " x " + std::to_string(width));
    if (!all_finite(m.linear.weights()))
      return make_error(codes::MODEL_NOT_FINITE, "the linear weights hold NaN or infinity");
    return core::Ok{};
  }
  if (auto st = validate(m.mlp); !st) return st;
  if (m.morphs.size() != m.morph_count() * width)
    return shape("the morph array does not hold " + std::to_string(m.morph_count()) + " x " +
                 std::to_string(width) + " values");
  if (m.morph_count() == 0 || (m.fixed_first_morph && m.morph_count() < 2))
    return shape("the model has no predicted morphs");
  if (m.mlp.input_count() != f || m.mlp.output_count() != m.predicted_weights())
    return shape("the network maps " + std::to_string(m.mlp.input_count()) + " inputs to " +
                 std::to_string(m.mlp.output_count()) + " outputs, expected " + std::to_string(f) +
                 " to " + std::to_string(m.predicted_weights()));
  if (m.clamp == WeightClamp::kTrainingRange && (m.weight_min.size() != m.predicted_weights() ||
                                                 m.weight_max.size() != m.predicted_weights()))
    return shape("the training range needs a min and max per predicted weight");
  if (!all_finite(m.morphs) || !all_finite(m.weight_min) || !all_finite(m.weight_max))
    return make_error(codes::MODEL_NOT_FINITE, "the morphs or weight ranges hold NaN or infinity");
  return core::Ok{};
}

// ---- evaluation ----------------------------------------------------------------

PoseModelEvaluator::PoseModelEvaluator(const PoseModel& model)
    : m_(&model),
      mlp_(model.mlp),
      raw_(model.kind == ModelKind::kNeural ? model.predicted_weights() : 0),
      w_(model.kind == ModelKind::kNeural ? model.morph_count() : 0) {}

void PoseModelEvaluator::place_weights(std::span<const float> raw, std::span<float> out) const {
  const PoseModel& m = *m_;
  const std::size_t first = m.fixed_first_morph ? 1 : 0;
  if (first) out[0] = 1.0F;
  for (std::size_t k = 0; k < raw.size(); ++k) {
    float w = raw[k];
    if (m.clamp == WeightClamp::kUnit) w = std::clamp(w, 0.0F, 1.0F);
    if (m.clamp == WeightClamp::kTrainingRange) w = std::clamp(w, m.weight_min[k], m.weight_max[k]);
    out[first + k] = w;
  }
}

void PoseModelEvaluator::combine_morphs(std::span<const float> w, std::span<float> out) const {
  const PoseModel& m = *m_;
  const std::size_t width = 3 * m.vertex_count;
  std::fill(out.begin(), out.end(), 0.0F);
  for (std::size_t k = 0; k < w.size(); ++k) {
    const float wk = w[k];
    if (wk == 0.0F) continue;
    const float* row = m.morphs.data() + k * width;
    for (std::size_t i = 0; i < width; ++i) out[i] += wk * row[i];
  }
}

bool PoseModelEvaluator::weights(std::span<const float> features, std::span<float> out) {
  return weights(features, 1, out);
}

bool PoseModelEvaluator::offsets(std::span<const float> features, std::span<float> out) {
  return offsets(features, 1, out);
}

bool PoseModelEvaluator::weights(std::span<const float> features, std::size_t rows,
                                 std::span<float> out) {
  const PoseModel& m = *m_;
  const std::size_t f = m.feature_count(), k = m.morph_count(), p = m.predicted_weights();
  if (m.kind != ModelKind::kNeural || features.size() != rows * f || out.size() != rows * k)
    return false;
  if (rows == 1) {  // the one-pose path allocates nothing
    if (!mlp_.evaluate(features, raw_)) return false;
    place_weights(raw_, out);
    return true;
  }
  if (batch_raw_.empty()) batch_raw_.resize(kRowsPerRun * p);
  for (std::size_t r0 = 0; r0 < rows; r0 += kRowsPerRun) {
    const std::size_t n = std::min(kRowsPerRun, rows - r0);
    const std::span<float> raw(batch_raw_.data(), n * p);
    if (!mlp_.evaluate_batch(features.subspan(r0 * f, n * f), n, raw)) return false;
    for (std::size_t r = 0; r < n; ++r)
      place_weights(raw.subspan(r * p, p), out.subspan((r0 + r) * k, k));
  }
  return true;
}

bool PoseModelEvaluator::offsets(std::span<const float> features, std::size_t rows,
                                 std::span<float> out) {
  const PoseModel& m = *m_;
  const std::size_t f = m.feature_count(), width = 3 * m.vertex_count;
  if (features.size() != rows * f || out.size() != rows * width) return false;
  if (m.kind == ModelKind::kLinear) {
    for (std::size_t r = 0; r < rows; ++r)
      if (!m.linear.evaluate(features.subspan(r * f, f), out.subspan(r * width, width)))
        return false;
    return true;
  }
  const std::size_t k = m.morph_count();
  if (rows == 1) {
    if (!weights(features, 1, w_)) return false;
    combine_morphs(w_, out);
    return true;
  }
  if (batch_w_.empty()) batch_w_.resize(kRowsPerRun * k);
  for (std::size_t r0 = 0; r0 < rows; r0 += kRowsPerRun) {
    const std::size_t n = std::min(kRowsPerRun, rows - r0);
    const std::span<float> w(batch_w_.data(), n * k);
    if (!weights(features.subspan(r0 * f, n * f), n, w)) return false;
    for (std::size_t r = 0; r < n; ++r)
      combine_morphs(w.subspan(r * k, k), out.subspan((r0 + r) * width, width));
  }
  return true;
}

core::Result<ErrorStats> evaluate_error(const PoseModel& model, const Dataset& d,
                                        std::span<const std::size_t> rows) {
  if (d.feature_count() != model.feature_count() || d.vertex_count != model.vertex_count)
    return make_error(codes::MODEL_DATASET,
                      "the dataset's features or vertex count do not match the model");
  PoseModelEvaluator ev(model);
  const std::size_t f = d.feature_count(), width = 3 * d.vertex_count;
  std::vector<float> pred(width);
  ErrorStats s;
  double sum = 0.0, sample_mean = 0.0;
  auto one = [&](std::size_t r) -> core::Status {
    if (r >= d.sample_count) return make_error(codes::MODEL_DATASET, "row out of range");
    if (!ev.offsets(std::span(d.features).subspan(r * f, f), pred))
      return make_error(codes::MODEL_SHAPE, "the model cannot run on this dataset");
    add_errors(pred, std::span(d.deltas).subspan(r * width, width), sum, s.max, sample_mean);
    ++s.samples;
    return core::Ok{};
  };
  if (rows.empty()) {
    for (std::size_t r = 0; r < d.sample_count; ++r)
      if (auto st = one(r); !st) return std::move(st).error();
  } else {
    for (std::size_t r : rows)
      if (auto st = one(r); !st) return std::move(st).error();
  }
  if (s.samples)
    s.mean = sum / (static_cast<double>(s.samples) * static_cast<double>(d.vertex_count));
  return s;
}

// ---- training ------------------------------------------------------------------

core::Result<PoseModel> train_pose_model(const Dataset& d, const PoseModelOptions& o,
                                         const TrainProgress& progress) {
  const auto t0 = std::chrono::steady_clock::now();
  if (auto st = validate(d); !st) return std::move(st).error();
  if (!(o.holdout >= 0.0 && o.holdout <= 0.9))
    return options_error("the held-out fraction must be in [0, 0.9]").error();
  if (!(o.validation >= 0.0 && o.validation <= 0.9))
    return options_error("the validation fraction must be in [0, 0.9]").error();
  if (o.validation > 0.0 && o.kind != ModelKind::kNeural)
    return options_error("early stopping (a validation fraction) is for neural models").error();
  if (o.validation > 0.0 && o.mlp.validation_every == 0)
    return options_error("early stopping needs validation_every > 0").error();
  const std::size_t n = d.sample_count, f = d.feature_count(), width = 3 * d.vertex_count;
  if (n < 2) return make_error(codes::MODEL_DATASET, "training needs at least 2 samples");

  // Split: sample 0 (the rest pose) always trains; the others are shuffled
  // with the split seed and the first round(holdout * (n - 1)) held out.
  std::vector<std::size_t> others(n - 1);
  std::iota(others.begin(), others.end(), std::size_t{1});
  Rng rng(o.split_seed);
  for (std::size_t i = others.size(); i > 1; --i)
    std::swap(others[i - 1],
              others[static_cast<std::size_t>(rng.uniform() * static_cast<double>(i))]);
  const auto held = static_cast<std::size_t>(std::llround(o.holdout * static_cast<double>(n - 1)));
  std::vector<std::size_t> hold(others.begin(), others.begin() + static_cast<std::ptrdiff_t>(held));
  std::vector<std::size_t> train{0};
  train.insert(train.end(), others.begin() + static_cast<std::ptrdiff_t>(held), others.end());
  // Early stopping's samples: the next round(validation * (training samples
  // - 1)) of the shuffle, so the held-out and training sets stay as without.
  const auto validating = static_cast<std::size_t>(
      std::llround(o.validation * static_cast<double>(others.size() - held)));
  std::vector<std::size_t> checks(others.begin() + static_cast<std::ptrdiff_t>(held),
                                  others.begin() + static_cast<std::ptrdiff_t>(held + validating));
  std::sort(checks.begin(), checks.end());
  std::sort(hold.begin(), hold.end());
  std::sort(train.begin(), train.end());
  const std::size_t nt = train.size();
  std::vector<float> x(nt * f), y(nt * width);
  for (std::size_t i = 0; i < nt; ++i) {
    std::copy_n(d.features.begin() + static_cast<std::ptrdiff_t>(train[i] * f), f,
                x.begin() + static_cast<std::ptrdiff_t>(i * f));
    std::copy_n(d.deltas.begin() + static_cast<std::ptrdiff_t>(train[i] * width), width,
                y.begin() + static_cast<std::ptrdiff_t>(i * width));
  }

  PoseModel m;
  m.spec = d.spec;
  m.layout = d.layout;
  m.mesh_name = d.mesh_name;
  m.vertex_count = d.vertex_count;
  m.kind = o.kind;
  m.hyper = Json{{"kind", model_kind_name(o.kind)}, {"holdout", o.holdout},
                 {"split_seed", o.split_seed},      {"train_samples", nt},
                 {"holdout_samples", hold.size()},  {"targets", targets_name(o.targets)}};
  if (o.kind == ModelKind::kLinear) {
    auto lin = fit_ridge(x, y, nt, f, width, o.ridge);
    if (!lin) return std::move(lin).error();
    m.linear = std::move(*lin);
    (*m.hyper)["lambda"] = o.ridge.lambda;
  } else {
    // The basis and each training sample's weights over it.
    std::vector<float> targets;
    std::size_t outputs = 0;
    if (o.basis == NeuralBasis::kLearned) {
      if (o.basis_size == 0) return options_error("the basis needs at least one component").error();
      Eigen::Map<const Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> Y(
          y.data(), static_cast<Eigen::Index>(nt), static_cast<Eigen::Index>(width));
      const Eigen::RowVectorXd mean = Y.cast<double>().colwise().mean();
      const MatD C = Y.cast<double>().rowwise() - mean;
      // Principal components from the small nt x nt Gram matrix.
      const MatD G = C * C.transpose();
      const Eigen::SelfAdjointEigenSolver<MatD> es(G);
      const Eigen::VectorXd& ev = es.eigenvalues();  // ascending
      const double top = ev.size() ? std::max(ev(ev.size() - 1), 0.0) : 0.0;
      std::vector<Eigen::Index> keep;
      for (Eigen::Index k = ev.size() - 1; k >= 0 && keep.size() < o.basis_size; --k)
        if (ev(k) > 1e-10 * top && ev(k) > 0) keep.push_back(k);
      outputs = keep.size();
      if (outputs == 0)
        return make_error(codes::MODEL_DATASET,
                          "the training deltas do not vary: no component to learn");
      m.basis = NeuralBasis::kLearned;
      m.fixed_first_morph = true;
      m.morph_names.push_back("mean");
      m.morphs.resize((outputs + 1) * width);
      for (std::size_t i = 0; i < width; ++i)
        m.morphs[i] = static_cast<float>(mean(static_cast<Eigen::Index>(i)));
      targets.resize(nt * outputs);
      const double rows = static_cast<double>(nt);
      for (std::size_t c = 0; c < outputs; ++c) {
        const Eigen::Index k = keep[c];
        const double lambda = ev(k);
        // Unit-norm component v = C^T u / sqrt(lambda); training weights
        // C v = sqrt(lambda) u, of variance lambda / rows. The morph is v
        // scaled by that standard deviation so the weights have unit variance.
        const double sd = std::sqrt(lambda / rows);
        const Eigen::VectorXd v = C.transpose() * es.eigenvectors().col(k) / std::sqrt(lambda);
        for (std::size_t i = 0; i < width; ++i)
          m.morphs[(c + 1) * width + i] = static_cast<float>(v(static_cast<Eigen::Index>(i)) * sd);
        for (std::size_t r = 0; r < nt; ++r)
          targets[r * outputs + c] = static_cast<float>(
              es.eigenvectors()(static_cast<Eigen::Index>(r), k) * std::sqrt(lambda) / sd);
        m.morph_names.push_back("pc" + std::to_string(c + 1));
      }
      (*m.hyper)["basis"] = "learned";
      (*m.hyper)["basis_size"] = outputs;
    } else {
      const std::size_t mm = o.morphs.names.size();
      if (mm == 0 || o.morphs.deltas.size() != mm * width)
        return options_error("the morph basis needs " + std::to_string(width) +
                             " values per named morph target")
            .error();
      if (!all_finite(o.morphs.deltas))
        return make_error(codes::MODEL_NOT_FINITE, "the morph targets hold NaN or infinity");
      m.basis = NeuralBasis::kMorphTargets;
      m.fixed_first_morph = false;
      m.morph_names = o.morphs.names;
      m.morphs = o.morphs.deltas;
      targets = morph_weights(y, nt, m.morphs, mm, width);
      outputs = mm;
      (*m.hyper)["basis"] = "morph-targets";
    }
    m.clamp = o.clamp;
    if (o.clamp == WeightClamp::kTrainingRange) {
      m.weight_min.assign(outputs, std::numeric_limits<float>::infinity());
      m.weight_max.assign(outputs, -std::numeric_limits<float>::infinity());
      for (std::size_t r = 0; r < nt; ++r)
        for (std::size_t k = 0; k < outputs; ++k) {
          m.weight_min[k] = std::min(m.weight_min[k], targets[r * outputs + k]);
          m.weight_max[k] = std::max(m.weight_max[k], targets[r * outputs + k]);
        }
    }
    MlpTrainStats ts;
    MlpOptions mo = o.mlp;
    mo.validation = {};
    if (progress && !mo.progress) mo.progress = progress;
    const std::vector<float> rest = rest_features(d);
    if (o.mlp.validation)
      return options_error(
                 "the pose model checks the validation samples itself (set the "
                 "validation fraction)")
          .error();
    if (!checks.empty()) {
      // Train without the validation samples, checking the model's mean
      // error on them as the statistics measure it (zero at rest included).
      std::vector<float> xf, tf;
      for (std::size_t i = 0; i < nt; ++i) {
        if (std::binary_search(checks.begin(), checks.end(), train[i])) continue;
        xf.insert(xf.end(), x.begin() + static_cast<std::ptrdiff_t>(i * f),
                  x.begin() + static_cast<std::ptrdiff_t>((i + 1) * f));
        tf.insert(tf.end(), targets.begin() + static_cast<std::ptrdiff_t>(i * outputs),
                  targets.begin() + static_cast<std::ptrdiff_t>((i + 1) * outputs));
      }
      const std::vector<float> mean_morph(m.morphs.begin(),
                                          m.morphs.begin() + static_cast<std::ptrdiff_t>(width));
      const std::vector<float> lo = m.weight_min, hi = m.weight_max;
      core::Status failed = core::Ok{};
      MlpOptions vo = mo;
      vo.validation = [&](const Mlp& net) {
        m.mlp = net;
        zero_at_rest(m, rest);
        auto e = evaluate_error(m, d, checks);
        std::copy(mean_morph.begin(), mean_morph.end(), m.morphs.begin());
        m.weight_min = lo;
        m.weight_max = hi;
        if (!e) {
          failed = std::move(e).error();
          return std::numeric_limits<double>::quiet_NaN();
        }
        return e->mean;
      };
      MlpTrainStats vs;
      auto probe = train_mlp(xf, tf, xf.size() / f, f, outputs, vo, &vs);
      if (!failed) return std::move(failed).error();
      if (!probe) return std::move(probe).error();
      mo.iterations = vs.best_step;
      // Progress goes on counting through the second run: steps done never fall.
      if (mo.progress)
        mo.progress = [p = mo.progress, before = vs.steps_run](std::size_t done, std::size_t total,
                                                               double loss) {
          p(before + done, before + total, loss);
        };
      (*m.hyper)["validation"] = o.validation;
      (*m.hyper)["validation_samples"] = checks.size();
      (*m.hyper)["validation_every"] = o.mlp.validation_every;
      (*m.hyper)["patience"] = o.mlp.patience;
      (*m.hyper)["stopped_after"] = vs.steps_run;
      (*m.hyper)["validation_error"] = vs.best_validation;
    }
    auto net = train_mlp(x, targets, nt, f, outputs, mo, &ts);
    if (!net) return std::move(net).error();
    m.mlp = std::move(*net);
    zero_at_rest(m, rest);
    m.stats.final_loss = ts.final_loss;
    (*m.hyper)["hidden"] = o.mlp.hidden;
    (*m.hyper)["iterations"] = mo.iterations;
    if (!checks.empty()) (*m.hyper)["max_iterations"] = o.mlp.iterations;
    (*m.hyper)["batch_size"] = o.mlp.batch_size;
    (*m.hyper)["learning_rate"] = o.mlp.adam.learning_rate;
    (*m.hyper)["weight_decay"] = o.mlp.weight_decay;
    (*m.hyper)["seed"] = o.mlp.seed;
    (*m.hyper)["clamp"] = clamp_name(o.clamp);
  }
  if (auto st = validate(m); !st) return std::move(st).error();

  // Statistics: the model's errors and the uncorrected ones (zero offsets).
  auto tr = evaluate_error(m, d, train);
  if (!tr) return std::move(tr).error();
  m.stats.train = *tr;
  std::vector<float> zero(width, 0.0F);
  auto uncorrected = [&](std::span<const std::size_t> rows) {
    ErrorStats s;
    double sum = 0.0, sm = 0.0;
    for (std::size_t r : rows) {
      add_errors(zero, std::span(d.deltas).subspan(r * width, width), sum, s.max, sm);
      ++s.samples;
    }
    if (s.samples)
      s.mean = sum / (static_cast<double>(s.samples) * static_cast<double>(d.vertex_count));
    return s;
  };
  m.stats.uncorrected_train = uncorrected(train);
  if (!hold.empty()) {
    auto h = evaluate_error(m, d, hold);
    if (!h) return std::move(h).error();
    m.stats.holdout = *h;
    m.stats.uncorrected_holdout = uncorrected(hold);
    // Per bone: sample errors weighted by the bone's turn.
    const std::size_t bones = d.spec.bones.size();
    std::vector<double> num(bones, 0.0), den(bones, 0.0);
    PoseModelEvaluator ev(m);
    std::vector<float> pred(width);
    for (std::size_t r : hold) {
      const auto row = std::span(d.features).subspan(r * f, f);
      if (!ev.offsets(row, pred)) return make_error(codes::MODEL_SHAPE, "evaluation failed");
      double sum = 0.0, mx = 0.0, e = 0.0;
      add_errors(pred, std::span(d.deltas).subspan(r * width, width), sum, mx, e);
      for (std::size_t b = 0; b < bones; ++b) {
        const double t = bone_turn(d, row, b);
        num[b] += t * e;
        den[b] += t;
      }
    }
    m.stats.holdout_per_bone.resize(bones);
    for (std::size_t b = 0; b < bones; ++b)
      m.stats.holdout_per_bone[b] = den[b] > 0 ? num[b] / den[b] : 0.0;
  }
  m.stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return m;
}

// ---- files ---------------------------------------------------------------------

namespace {

Json stats_json(const ErrorStats& s) {
  return Json{{"samples", s.samples}, {"mean", s.mean}, {"max", s.max}};
}

core::Error json_error(std::string msg, std::string pointer) {
  return make_error(codes::MODEL_JSON, std::move(msg),
                    core::Location{std::nullopt, std::move(pointer), {}});
}

core::Result<ErrorStats> parse_stats(const Json& j, const std::string& ptr) {
  if (!j.is_object()) return json_error("expected an object", ptr);
  ErrorStats s;
  for (const char* k : {"samples", "mean", "max"})
    if (!j.contains(k) || !j[k].is_number())
      return json_error(std::string("expected a number \"") + k + "\"", ptr);
  s.samples = j["samples"].get<std::size_t>();
  s.mean = j["mean"].get<double>();
  s.max = j["max"].get<double>();
  return s;
}

const NpzMember* find(const std::vector<NpzMember>& ms, std::string_view name) {
  for (const auto& m : ms)
    if (m.name == name) return &m;
  return nullptr;
}

core::Result<std::vector<float>> array_f32(const std::vector<NpzMember>& ms, std::string_view name,
                                           std::vector<std::uint64_t> shape) {
  const NpzMember* m = find(ms, name);
  if (!m) return make_error(codes::MODEL_ARRAY, "the npz has no array " + std::string(name));
  if (m->array.dtype != NpyDType::kF4 || m->array.shape != shape) {
    std::string want;
    for (auto s : shape) want += (want.empty() ? "" : ", ") + std::to_string(s);
    return make_error(codes::MODEL_ARRAY,
                      std::string(name) + " must be float32 of shape (" + want + ")");
  }
  return m->array.to_f32();
}

}  // namespace

core::Result<PoseModelFiles> encode_pose_model(const PoseModel& m) {
  if (auto st = validate(m); !st) return std::move(st).error();
  std::vector<NpzMember> arrays;
  const std::uint64_t f = m.feature_count(), width = 3 * m.vertex_count;
  Json j{{"format", kFormat}, {"version", kVersion}, {"kind", model_kind_name(m.kind)}};
  j["inputs"] = input_spec_json(m.spec);
  j["layout"] = m.layout == FeatureLayout::kEngine ? "engine" : "axis-angle";
  j["mesh"] = m.mesh_name;
  j["vertices"] = m.vertex_count;
  if (m.kind == ModelKind::kLinear) {
    arrays.push_back({"linear_weights", NpyArray::from_f32({f, width}, m.linear.weights())});
  } else {
    j["basis"] = m.basis == NeuralBasis::kLearned ? "learned" : "morph-targets";
    j["morphs"] = m.morph_names;
    j["fixed_first_morph"] = m.fixed_first_morph;
    j["clamp"] = clamp_name(m.clamp);
    static const char* kAct[] = {"identity", "relu", "elu", "tanh"};
    j["hidden_activation"] = kAct[static_cast<int>(m.mlp.hidden_activation)];
    j["output_activation"] = kAct[static_cast<int>(m.mlp.output_activation)];
    Json layers = Json::array();
    for (std::size_t l = 0; l < m.mlp.layers.size(); ++l) {
      const DenseLayer& L = m.mlp.layers[l];
      layers.push_back(Json{{"inputs", L.inputs}, {"outputs", L.outputs}});
      arrays.push_back({"layer" + std::to_string(l) + "_weights",
                        NpyArray::from_f32({L.inputs, L.outputs}, L.weights)});
      arrays.push_back(
          {"layer" + std::to_string(l) + "_biases", NpyArray::from_f32({L.outputs}, L.biases)});
    }
    j["layers"] = std::move(layers);
    arrays.push_back({"input_mean", NpyArray::from_f32({f}, m.mlp.input_mean)});
    arrays.push_back({"input_std", NpyArray::from_f32({f}, m.mlp.input_std)});
    arrays.push_back({"morphs", NpyArray::from_f32({m.morph_count(), width}, m.morphs)});
    if (m.clamp == WeightClamp::kTrainingRange) {
      arrays.push_back({"weight_min", NpyArray::from_f32({m.predicted_weights()}, m.weight_min)});
      arrays.push_back({"weight_max", NpyArray::from_f32({m.predicted_weights()}, m.weight_max)});
    }
  }
  j["hyper"] = *m.hyper;
  j["stats"] = Json{{"train", stats_json(m.stats.train)},
                    {"holdout", stats_json(m.stats.holdout)},
                    {"uncorrected_train", stats_json(m.stats.uncorrected_train)},
                    {"uncorrected_holdout", stats_json(m.stats.uncorrected_holdout)},
                    {"holdout_per_bone", m.stats.holdout_per_bone},
                    {"seconds", m.stats.seconds},
                    {"final_loss", m.stats.final_loss}};
  auto npz = write_npz(arrays);
  if (!npz) return std::move(npz).error();
  return PoseModelFiles{j.dump(2) + "\n", std::move(*npz)};
}

core::Result<PoseModel> decode_pose_model(std::string_view text, core::Bytes npz,
                                          const NpyLimits& limits) {
  Json j = Json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return json_error("not a JSON object", "");
  if (!j.contains("format") || j["format"] != kFormat)
    return make_error(
        codes::MODEL_FORMAT,
        std::string("not a charkit pose model (\"format\" is not \"") + kFormat + "\")");
  if (!j.contains("version") || !j["version"].is_number_unsigned() ||
      j["version"].get<std::uint64_t>() > kVersion)
    return make_error(codes::MODEL_FORMAT, "a pose model of a newer or unknown version");
  auto members = read_npz(npz, limits);
  if (!members) return std::move(members).error();
  PoseModel m;
  if (!j.contains("inputs")) return json_error("missing \"inputs\"", "");
  auto spec = parse_input_spec(j["inputs"], "/inputs");
  if (!spec) return std::move(spec).error();
  m.spec = std::move(*spec);
  for (const char* k : {"kind", "layout", "mesh"})
    if (!j.contains(k) || !j[k].is_string())
      return json_error("expected a string", std::string("/") + k);
  if (!j.contains("vertices") || !j["vertices"].is_number_unsigned())
    return json_error("expected a vertex count", "/vertices");
  const std::string kind = j["kind"], layout = j["layout"];
  if (layout != "engine" && layout != "axis-angle") return json_error("unknown layout", "/layout");
  m.layout = layout == "engine" ? FeatureLayout::kEngine : FeatureLayout::kAxisAngle;
  m.mesh_name = j["mesh"];
  const std::uint64_t vertices = j["vertices"].get<std::uint64_t>();
  if (vertices == 0 || vertices > (std::uint64_t{1} << 28))
    return json_error("vertex count out of range", "/vertices");
  m.vertex_count = static_cast<std::size_t>(vertices);
  const std::uint64_t f = m.feature_count(), width = 3 * vertices;
  if (kind == "linear") {
    m.kind = ModelKind::kLinear;
    auto w = array_f32(*members, "linear_weights", {f, width});
    if (!w) return std::move(w).error();
    auto lin = LinearModel::make(f, width, std::move(*w));
    if (!lin) return std::move(lin).error();
    m.linear = std::move(*lin);
  } else if (kind == "neural") {
    m.kind = ModelKind::kNeural;
    if (!j.contains("morphs") || !j["morphs"].is_array())
      return json_error("expected morph names", "/morphs");
    for (std::size_t i = 0; i < j["morphs"].size(); ++i) {
      if (!j["morphs"][i].is_string())
        return json_error("expected a string", "/morphs/" + std::to_string(i));
      m.morph_names.push_back(j["morphs"][i]);
    }
    if (!j.contains("basis") || !j["basis"].is_string() ||
        (j["basis"] != "learned" && j["basis"] != "morph-targets"))
      return json_error("expected \"learned\" or \"morph-targets\"", "/basis");
    m.basis = j["basis"] == "learned" ? NeuralBasis::kLearned : NeuralBasis::kMorphTargets;
    if (!j.contains("fixed_first_morph") || !j["fixed_first_morph"].is_boolean())
      return json_error("expected true or false", "/fixed_first_morph");
    m.fixed_first_morph = j["fixed_first_morph"];
    const std::string clamp = j.value("clamp", std::string("?"));
    if (clamp == "none")
      m.clamp = WeightClamp::kNone;
    else if (clamp == "unit")
      m.clamp = WeightClamp::kUnit;
    else if (clamp == "training-range")
      m.clamp = WeightClamp::kTrainingRange;
    else
      return json_error("expected \"none\", \"unit\" or \"training-range\"", "/clamp");
    auto act = [&](const char* key, Activation& out) -> core::Status {
      const std::string a = j.value(key, std::string("?"));
      if (a == "identity")
        out = Activation::kIdentity;
      else if (a == "relu")
        out = Activation::kReLU;
      else if (a == "elu")
        out = Activation::kELU;
      else if (a == "tanh")
        out = Activation::kTanh;
      else
        return json_error("unknown activation", std::string("/") + key);
      return core::Ok{};
    };
    if (auto st = act("hidden_activation", m.mlp.hidden_activation); !st)
      return std::move(st).error();
    if (auto st = act("output_activation", m.mlp.output_activation); !st)
      return std::move(st).error();
    if (!j.contains("layers") || !j["layers"].is_array() || j["layers"].empty() ||
        j["layers"].size() > 64)
      return json_error("expected 1 to 64 layers", "/layers");
    for (std::size_t l = 0; l < j["layers"].size(); ++l) {
      const Json& L = j["layers"][l];
      const std::string p = "/layers/" + std::to_string(l);
      if (!L.is_object() || !L.contains("inputs") || !L["inputs"].is_number_unsigned() ||
          !L.contains("outputs") || !L["outputs"].is_number_unsigned())
        return json_error("expected inputs and outputs", p);
      DenseLayer d;
      d.inputs = L["inputs"].get<std::size_t>();
      d.outputs = L["outputs"].get<std::size_t>();
      auto w = array_f32(*members, "layer" + std::to_string(l) + "_weights", {d.inputs, d.outputs});
      if (!w) return std::move(w).error();
      auto b = array_f32(*members, "layer" + std::to_string(l) + "_biases", {d.outputs});
      if (!b) return std::move(b).error();
      d.weights = std::move(*w);
      d.biases = std::move(*b);
      m.mlp.layers.push_back(std::move(d));
    }
    auto mean = array_f32(*members, "input_mean", {f});
    if (!mean) return std::move(mean).error();
    auto sd = array_f32(*members, "input_std", {f});
    if (!sd) return std::move(sd).error();
    m.mlp.input_mean = std::move(*mean);
    m.mlp.input_std = std::move(*sd);
    auto morphs = array_f32(*members, "morphs", {m.morph_names.size(), width});
    if (!morphs) return std::move(morphs).error();
    m.morphs = std::move(*morphs);
    if (m.clamp == WeightClamp::kTrainingRange) {
      const std::uint64_t p = m.morph_names.size() - (m.fixed_first_morph ? 1 : 0);
      auto lo = array_f32(*members, "weight_min", {p});
      if (!lo) return std::move(lo).error();
      auto hi = array_f32(*members, "weight_max", {p});
      if (!hi) return std::move(hi).error();
      m.weight_min = std::move(*lo);
      m.weight_max = std::move(*hi);
    }
  } else {
    return json_error("expected \"linear\" or \"neural\"", "/kind");
  }
  if (j.contains("hyper") && j["hyper"].is_object()) m.hyper = j["hyper"];
  if (j.contains("stats") && j["stats"].is_object()) {
    const Json& s = j["stats"];
    const std::pair<const char*, ErrorStats*> parts[] = {
        {"train", &m.stats.train},
        {"holdout", &m.stats.holdout},
        {"uncorrected_train", &m.stats.uncorrected_train},
        {"uncorrected_holdout", &m.stats.uncorrected_holdout}};
    for (const auto& [key, out] : parts)
      if (s.contains(key)) {
        auto e = parse_stats(s[key], std::string("/stats/") + key);
        if (!e) return std::move(e).error();
        *out = *e;
      }
    if (s.contains("holdout_per_bone") && s["holdout_per_bone"].is_array())
      for (const Json& v : s["holdout_per_bone"])
        if (v.is_number()) m.stats.holdout_per_bone.push_back(v.get<double>());
    if (s.contains("seconds") && s["seconds"].is_number()) m.stats.seconds = s["seconds"];
    if (s.contains("final_loss") && s["final_loss"].is_number())
      m.stats.final_loss = s["final_loss"];
  }
  if (auto st = validate(m); !st) return std::move(st).error();
  return m;
}

core::Status save_pose_model(const PoseModel& model, const std::filesystem::path& json_path) {
  auto files = encode_pose_model(model);
  if (!files) return std::move(files).error();
  auto npz_path = companion_path(json_path, ".npz", true);
  if (!npz_path) return std::move(npz_path).error();
  if (auto st = write_file_bytes(*npz_path, files->npz); !st) return st;
  return write_file_bytes(json_path, core::as_bytes(files->json));
}

core::Result<PoseModel> load_pose_model(const std::filesystem::path& json_path,
                                        const NpyLimits& limits) {
  auto json = read_file_bytes(json_path, std::uint64_t{64} << 20);
  if (!json) return std::move(json).error();
  auto npz_path = companion_path(json_path, ".npz", false);
  if (!npz_path) return std::move(npz_path).error();
  auto npz = read_file_bytes(*npz_path, limits.max_data_bytes * 4);
  if (!npz) return std::move(npz).error();
  return decode_pose_model(core::as_chars(*json), *npz, limits);
}

core::Json error_stats_json(const ErrorStats& e) {
  return core::Json{{"samples", e.samples}, {"mean", e.mean}, {"max", e.max}};
}

core::Json stats_json(const PoseModel& m) {
  const PoseModelStats& s = m.stats;
  core::Json per_bone = core::Json::object();
  for (std::size_t b = 0; b < m.spec.bones.size() && b < s.holdout_per_bone.size(); ++b)
    per_bone[m.spec.bones[b].name] = s.holdout_per_bone[b];
  return core::Json{{"train", error_stats_json(s.train)},
                    {"holdout", error_stats_json(s.holdout)},
                    {"uncorrectedTrain", error_stats_json(s.uncorrected_train)},
                    {"uncorrectedHoldout", error_stats_json(s.uncorrected_holdout)},
                    {"holdoutPerBone", per_bone},
                    {"seconds", s.seconds}};
}

}  // namespace charkit::deformer
