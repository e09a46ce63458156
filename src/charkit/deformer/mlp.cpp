#include "charkit/deformer/mlp.h"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>

#include "charkit/core/parallel.h"
#include "charkit/deformer/detail/batch_kernels.h"
#include "charkit/deformer/detail/common.h"
#include "charkit/deformer/detail/prng.h"
#include "charkit/deformer/error_codes.h"

namespace charkit::deformer {

using core::make_error;

namespace {

using MatF = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MapW = Eigen::Map<const MatF>;

/// a = act(z), elementwise (a matrix or a map of the batch buffers).
void apply(Activation act, Eigen::Ref<MatF> z) {
  switch (act) {
    case Activation::kIdentity:
      break;
    case Activation::kReLU:
      z = z.cwiseMax(0.0F);
      break;
    case Activation::kELU:
      // The batch paths' vectorised ELU (detail::elu_inplace: a polynomial
      // expm1 compiled for the CPU's vector width, picked at run time).
      detail::elu_inplace(z.data(), static_cast<std::size_t>(z.size()));
      break;
    case Activation::kTanh:
      // std::tanh on every element: Eigen's vectorised tanh would give the
      // elements of a packet and those of the tail different bits, so a
      // row's outputs would depend on the batch around it.
      for (Eigen::Index r = 0; r < z.rows(); ++r)
        for (Eigen::Index c = 0; c < z.cols(); ++c) z(r, c) = std::tanh(z(r, c));
      break;
  }
}

/// d(act)/dz given z and a = act(z).
MatF derivative(Activation act, const MatF& z, const MatF& a) {
  switch (act) {
    case Activation::kIdentity:
      return MatF::Ones(z.rows(), z.cols());
    case Activation::kReLU:
      return (z.array() > 0.0F).cast<float>().matrix();
    case Activation::kELU:
      return (z.array() > 0.0F).select(1.0F, a.array() + 1.0F).matrix();
    case Activation::kTanh:
      return (1.0F - a.array().square()).matrix();
  }
  return MatF::Ones(z.rows(), z.cols());
}

core::Result<Mlp> init_with(std::size_t inputs, std::size_t outputs, const MlpOptions& o,
                            Rng& rng) {
  if (inputs == 0 || outputs == 0)
    return make_error(codes::MLP_SHAPE, "inputs and outputs must be > 0");
  Mlp m;
  m.hidden_activation = o.hidden_activation;
  m.output_activation = o.output_activation;
  m.input_mean.assign(inputs, 0.0F);
  m.input_std.assign(inputs, 1.0F);
  std::vector<std::size_t> widths = {inputs};
  for (std::size_t h : o.hidden) {
    if (h == 0) return make_error(codes::MLP_SHAPE, "hidden layer widths must be > 0");
    widths.push_back(h);
  }
  widths.push_back(outputs);
  for (std::size_t l = 0; l + 1 < widths.size(); ++l) {
    DenseLayer d;
    d.inputs = widths[l];
    d.outputs = widths[l + 1];
    const double a = std::sqrt(6.0 / static_cast<double>(d.inputs + d.outputs));
    d.weights.resize(d.inputs * d.outputs);
    for (float& w : d.weights) w = static_cast<float>(rng.uniform(-a, a));
    d.biases.assign(d.outputs, 0.0F);
    m.layers.push_back(std::move(d));
  }
  return m;
}

/// Forward pass over rows of standardised input; keeps z and a per layer.
void forward(const Mlp& mlp, const MatF& x0, std::vector<MatF>& z, std::vector<MatF>& a) {
  const std::size_t n = mlp.layers.size();
  z.resize(n);
  a.resize(n + 1);
  a[0] = x0;
  for (std::size_t l = 0; l < n; ++l) {
    const DenseLayer& d = mlp.layers[l];
    MapW w(d.weights.data(), static_cast<Eigen::Index>(d.inputs),
           static_cast<Eigen::Index>(d.outputs));
    Eigen::Map<const Eigen::RowVectorXf> b(d.biases.data(), static_cast<Eigen::Index>(d.outputs));
    z[l] = a[l] * w;
    z[l].rowwise() += b;
    a[l + 1] = z[l];
    apply(l + 1 == n ? mlp.output_activation : mlp.hidden_activation, a[l + 1]);
  }
}

MatF standardised(const Mlp& mlp, std::span<const float> x, std::size_t rows) {
  const auto f = static_cast<Eigen::Index>(mlp.input_count());
  MatF x0 = Eigen::Map<const MatF>(x.data(), static_cast<Eigen::Index>(rows), f);
  Eigen::Map<const Eigen::RowVectorXf> mean(mlp.input_mean.data(), f);
  Eigen::Map<const Eigen::RowVectorXf> sd(mlp.input_std.data(), f);
  x0.rowwise() -= mean;
  x0.array().rowwise() /= sd.array();
  return x0;
}

}  // namespace

float activate(Activation a, float x) {
  switch (a) {
    case Activation::kIdentity:
      return x;
    case Activation::kReLU:
      return x > 0.0F ? x : 0.0F;
    case Activation::kELU:
      return x > 0.0F ? x : std::expm1(x);
    case Activation::kTanh:
      return std::tanh(x);
  }
  return x;
}

core::Status validate(const Mlp& m) {
  if (m.layers.empty()) return make_error(codes::MLP_SHAPE, "the network has no layers");
  for (std::size_t l = 0; l < m.layers.size(); ++l) {
    const DenseLayer& d = m.layers[l];
    const std::string which = "layer " + std::to_string(l);
    if (d.inputs == 0 || d.outputs == 0 || d.outputs > d.weights.max_size() / d.inputs ||
        d.weights.size() != d.inputs * d.outputs || d.biases.size() != d.outputs)
      return make_error(codes::MLP_SHAPE, which + ": sizes do not match");
    if (l > 0 && d.inputs != m.layers[l - 1].outputs)
      return make_error(codes::MLP_SHAPE, which + ": takes " + std::to_string(d.inputs) +
                                              " inputs; the previous layer gives " +
                                              std::to_string(m.layers[l - 1].outputs));
    if (!all_finite(d.weights) || !all_finite(d.biases))
      return make_error(codes::MLP_NOT_FINITE, which + ": NaN or infinity");
  }
  if (m.input_mean.size() != m.input_count() || m.input_std.size() != m.input_count())
    return make_error(codes::MLP_SHAPE, "standardisation needs one mean and std per input");
  if (!all_finite(m.input_mean) || !all_finite(m.input_std) ||
      !std::all_of(m.input_std.begin(), m.input_std.end(), [](float s) { return s > 0.0F; }))
    return make_error(codes::MLP_NOT_FINITE,
                      "standardisation: finite means and positive stds needed");
  return core::Ok{};
}

MlpEvaluator::MlpEvaluator(const Mlp& mlp) : mlp_(&mlp) {
  std::size_t width = mlp.input_count();
  for (const DenseLayer& d : mlp.layers) width = std::max(width, d.outputs);
  a_.resize(width);
  b_.resize(width);
}

bool MlpEvaluator::evaluate(std::span<const float> input, std::span<float> output) {
  const Mlp& m = *mlp_;
  if (m.layers.empty() || input.size() != m.input_count() || output.size() != m.output_count())
    return false;
  run_rows(input.data(), 1, output.data(), a_.data(), b_.data());
  return true;
}

bool MlpEvaluator::evaluate_batch(std::span<const float> inputs, std::size_t rows,
                                  std::span<float> outputs) {
  const Mlp& m = *mlp_;
  const std::size_t in = m.input_count(), out = m.output_count();
  if (m.layers.empty() || inputs.size() != rows * in || outputs.size() != rows * out) return false;
  if (rows == 1) return evaluate(inputs, outputs);
  if (batch_a_.empty()) {
    batch_a_.resize(kBatchRows * a_.size());
    batch_b_.resize(kBatchRows * a_.size());
  }
  for (std::size_t r0 = 0; r0 < rows; r0 += kBatchRows)
    run_rows(inputs.data() + r0 * in, std::min(kBatchRows, rows - r0), outputs.data() + r0 * out,
             batch_a_.data(), batch_b_.data());
  return true;
}

void MlpEvaluator::run_rows(const float* inputs, std::size_t n, float* outputs, float* a,
                            float* b) const {
  const Mlp& m = *mlp_;
  const std::size_t in = m.input_count();
  detail::standardise_rows(inputs, n, in, m.input_mean.data(), m.input_std.data(), a);
  for (std::size_t l = 0; l < m.layers.size(); ++l) {
    const DenseLayer& d = m.layers[l];
    const bool last = l + 1 == m.layers.size();
    float* z = last ? outputs : b;
    detail::dense_rows(a, n, d.inputs, d.weights.data(), d.biases.data(), d.outputs, z);
    apply(last ? m.output_activation : m.hidden_activation,
          Eigen::Map<MatF>(z, static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(d.outputs)));
    std::swap(a, b);
  }
}

void adam_update(std::span<float> params, std::span<const float> grads, std::span<float> m,
                 std::span<float> v, std::uint64_t step, const AdamOptions& o) {
  const double t = static_cast<double>(step);
  const double c1 = 1.0 - std::pow(o.beta1, t);
  const double c2 = 1.0 - std::pow(o.beta2, t);
  for (std::size_t i = 0; i < params.size(); ++i) {
    const double g = grads[i];
    const double mi = o.beta1 * m[i] + (1.0 - o.beta1) * g;
    const double vi = o.beta2 * v[i] + (1.0 - o.beta2) * g * g;
    m[i] = static_cast<float>(mi);
    v[i] = static_cast<float>(vi);
    const double mhat = mi / c1;
    const double vhat = vi / c2;
    params[i] =
        static_cast<float>(params[i] - o.learning_rate * mhat / (std::sqrt(vhat) + o.epsilon));
  }
}

core::Result<Mlp> init_mlp(std::size_t inputs, std::size_t outputs, const MlpOptions& options) {
  Rng rng(options.seed);
  return init_with(inputs, outputs, options, rng);
}

core::Result<double> mlp_loss(const Mlp& mlp, std::span<const float> x, std::span<const float> y,
                              std::size_t rows, std::vector<DenseLayer>* grads) {
  if (auto st = validate(mlp); !st) return std::move(st).error();
  const std::size_t f = mlp.input_count();
  const std::size_t o = mlp.output_count();
  if (rows == 0 || x.size() != rows * f || y.size() != rows * o)
    return make_error(codes::MLP_SHAPE, "x must be rows x inputs and y rows x outputs");
  if (grads == nullptr) {
    // The loss alone (training's statistics, held-out errors): the batch
    // kernels in blocks of rows, the squared differences summed in double.
    MlpEvaluator eval(mlp);
    const std::size_t chunk = std::min<std::size_t>(rows, 1024);
    std::vector<float> out(chunk * o);
    double sum = 0.0;
    for (std::size_t r0 = 0; r0 < rows; r0 += chunk) {
      const std::size_t nr = std::min(chunk, rows - r0);
      if (!eval.evaluate_batch(x.subspan(r0 * f, nr * f), nr, std::span(out).first(nr * o)))
        return make_error(codes::MLP_SHAPE, "x must be rows x inputs and y rows x outputs");
      const float* t = y.data() + r0 * o;
      for (std::size_t i = 0; i < nr * o; ++i) {
        const double d = static_cast<double>(out[i]) - static_cast<double>(t[i]);
        sum += d * d;
      }
    }
    return sum / (static_cast<double>(rows) * static_cast<double>(o));
  }
  std::vector<MatF> z, a;
  forward(mlp, standardised(mlp, x, rows), z, a);
  Eigen::Map<const MatF> target(y.data(), static_cast<Eigen::Index>(rows),
                                static_cast<Eigen::Index>(o));
  const MatF diff = a.back() - target;
  const double denom = static_cast<double>(rows) * static_cast<double>(o);
  const double loss = static_cast<double>(diff.cast<double>().squaredNorm()) / denom;
  if (grads == nullptr) return loss;
  const std::size_t n = mlp.layers.size();
  grads->resize(n);
  MatF da = diff * static_cast<float>(2.0 / denom);
  for (std::size_t l = n; l-- > 0;) {
    const DenseLayer& d = mlp.layers[l];
    const Activation act = l + 1 == n ? mlp.output_activation : mlp.hidden_activation;
    const MatF dz = da.cwiseProduct(derivative(act, z[l], a[l + 1]));
    DenseLayer& g = (*grads)[l];
    g.inputs = d.inputs;
    g.outputs = d.outputs;
    g.weights.resize(d.weights.size());
    g.biases.resize(d.biases.size());
    Eigen::Map<MatF>(g.weights.data(), static_cast<Eigen::Index>(d.inputs),
                     static_cast<Eigen::Index>(d.outputs)) = a[l].transpose() * dz;
    Eigen::Map<Eigen::RowVectorXf>(g.biases.data(), static_cast<Eigen::Index>(d.outputs)) =
        dz.colwise().sum();
    if (l > 0) {
      MapW w(d.weights.data(), static_cast<Eigen::Index>(d.inputs),
             static_cast<Eigen::Index>(d.outputs));
      da = dz * w.transpose();
    }
  }
  return loss;
}

namespace {

/// The inputs' standardisation: the fixed one given, or each input's mean
/// and standard deviation over the samples.
core::Status set_standardisation(Mlp& mlp, std::span<const float> x, std::size_t samples,
                                 std::size_t features, const MlpOptions& options) {
  if (!options.fixed_input_mean.empty() || !options.fixed_input_std.empty()) {
    if (options.fixed_input_mean.size() != features || options.fixed_input_std.size() != features)
      return make_error(codes::MLP_SHAPE, "fixed standardisation needs one mean and std per input");
    mlp.input_mean = options.fixed_input_mean;
    mlp.input_std = options.fixed_input_std;
    return validate(mlp);
  } else if (options.standardize_inputs) {
    for (std::size_t j = 0; j < features; ++j) {
      double sum = 0.0, sq = 0.0;
      for (std::size_t i = 0; i < samples; ++i) sum += x[i * features + j];
      const double mean = sum / static_cast<double>(samples);
      for (std::size_t i = 0; i < samples; ++i) {
        const double d = x[i * features + j] - mean;
        sq += d * d;
      }
      const double sd = std::sqrt(sq / static_cast<double>(samples));
      mlp.input_mean[j] = static_cast<float>(mean);
      mlp.input_std[j] = sd < 1e-8 ? 1.0F : static_cast<float>(sd);
    }
  }
  return core::Ok{};
}

// The training loop works in preallocated buffers (no allocation per
// step). A step has two phases, each split over `threads` pieces that write
// disjoint parts (docs/deformer/batch.md, "Training on several cores"):
//  1. by batch rows: gather the rows already standardised, the forward
//     pass, the loss, and the backward pass's row-local part (every
//     layer's dz and the next da);
//  2. by parameters: each layer's weight gradient a^T·dz for a range of
//     its input rows and the bias gradient for a range of its outputs,
//     each followed at once by Adam on that range.
// On AVX-512 CPUs the products run on detail::fused_product, which does
// the elementwise work next to each product (bias and ELU, ELU', the
// residual, Adam) on its sums before they are stored, and reads the
// batch's rows in place (docs/deformer/batch.md, "Products with their
// epilogues"); elsewhere on detail::gemm and one pass per elementwise step.
// Adam runs in float with the bias corrections folded into the step size:
// lr m^ / (sqrt(v^) + eps) = (lr sqrt(c2) / c1) m / (sqrt(v) + eps sqrt(c2)).
class MlpTraining {
 public:
  MlpTraining(Mlp& trained, std::span<const float> inputs, std::span<const float> targets,
              std::size_t sample_count, const MlpOptions& training_options)
      : mlp(trained),
        x(inputs),
        y(targets),
        samples(sample_count),
        features(trained.layers.front().inputs),
        outputs(trained.layers.back().outputs),
        options(training_options) {
    allocate();
  }

  /// Runs the iterations, then copies the trained weights into the model.
  core::Status run(Rng& rng) {
    for (std::size_t it = 0; it < options.iterations; ++it) {
      for (std::size_t k = 0; k < batch; ++k) {
        auto row = static_cast<std::size_t>(rng.uniform() * static_cast<double>(samples));
        rows[k] = std::min(row, samples - 1);
      }
      if (fused)
        for (std::size_t k = 0; k < batch; ++k) {
          xrows[k] = xs.data() + rows[k] * features;
          trows[k] = y.data() + rows[k] * outputs;
        }
      ex->parallel_for(0, pieces, 1, [&](std::size_t b, std::size_t e) {
        for (std::size_t p = b; p < e; ++p) rows_pass(p);
      });
      double sum = 0.0;
      for (double pl : piece_loss) sum += pl;  // in piece order: deterministic
      const double loss = sum / denom;
      if (!std::isfinite(loss))
        return make_error(codes::MLP_NOT_FINITE, "training diverged (lower the learning rate)");
      if (decay != 1.0F)  // AdamW: the gradient was taken at the undecayed weights
        for (std::size_t l = 0; l < n; ++l)
          for (float& w : wt[l]) w *= decay;
      adam = detail::adam_step_constants(options.adam.beta1, options.adam.beta2,
                                         options.adam.learning_rate, options.adam.epsilon, it + 1);
      ex->parallel_for(0, pieces, 1, [&](std::size_t b, std::size_t e) {
        for (std::size_t p = b; p < e; ++p) params_pass(p);
      });
      if (options.progress && options.progress_every > 0 &&
          ((it + 1) % options.progress_every == 0 || it + 1 == options.iterations))
        options.progress(it + 1, options.iterations, loss);
      steps_run = it + 1;
      if (options.validation &&
          ((it + 1) % options.validation_every == 0 || it + 1 == options.iterations)) {
        auto stop = validate_now(it + 1);
        if (!stop) return std::move(stop).error();
        if (*stop) break;
      }
    }
    if (options.validation && best_step > 0) {
      mlp.layers = std::move(best_layers);
      return core::Ok{};
    }
    best_step = steps_run;
    copy_out();
    return core::Ok{};
  }

  std::size_t steps_run = 0, best_step = 0;
  double best_loss = 0.0;

 private:
  /// The trained weights into the model.
  void copy_out() {
    for (std::size_t l = 0; l < n; ++l) {
      mlp.layers[l].weights.assign(wt[l].begin(), wt[l].end());
      mlp.layers[l].biases.assign(bs[l].begin(), bs[l].end());
    }
  }

  /// Early stopping's check after `step` steps: keeps the network when its
  /// validation loss is the lowest so far; true when training should stop.
  core::Result<bool> validate_now(std::size_t step) {
    copy_out();
    const double v = options.validation(mlp);
    if (!std::isfinite(v))
      return make_error(codes::MODEL_OPTIONS, "the validation loss after step " +
                                                  std::to_string(step) + " is not finite");
    if (best_step == 0 || v < best_loss) {
      best_loss = v;
      best_step = step;
      best_layers = mlp.layers;
      stale = 0;
      return false;
    }
    ++stale;
    return options.patience > 0 && stale >= options.patience;
  }

  std::vector<DenseLayer> best_layers;
  std::size_t stale = 0;

  void allocate() {
    n = mlp.layers.size();
    decay = static_cast<float>(1.0 - options.adam.learning_rate * options.weight_decay);
    batch = options.batch_size;
    // The default pool is only started when more than one piece is asked for.
    std::size_t wanted = options.threads;
    if (wanted == 0)
      wanted = (options.executor != nullptr ? *options.executor : core::default_executor())
                   .concurrency();
    pieces = std::clamp<std::size_t>(wanted, 1, std::min<std::size_t>(batch, 64));
    ex = pieces == 1                   ? &core::serial_executor()
         : options.executor != nullptr ? options.executor
                                       : &core::default_executor();
    widest = features;
    for (const DenseLayer& d : mlp.layers) widest = std::max(widest, d.outputs);
    for (auto* v : {&dz, &gw, &gb, &mw, &vw, &mb, &vb, &wt, &bs}) v->resize(n);
    a.resize(n + 1);
    inv_sd.resize(features);
    for (std::size_t j = 0; j < features; ++j) inv_sd[j] = 1.0F / mlp.input_std[j];
    // With the fused products (AVX-512) the samples are standardised once and
    // a batch's rows are read where they lie (xrows); otherwise every step
    // gathers them into a[0] for gemm.
    fused = detail::fused_product_available();
    linear_out = mlp.output_activation == Activation::kIdentity;
    // Fused with a linear output, the last product ends in the residual:
    // dz[n-1] and the rows' squared sums; a[n] is not written.
    residual_done = fused && linear_out;
    if (fused) {
      xs.resize(samples * features);
      for (std::size_t i = 0; i < samples; ++i)
        detail::gather_standardise(x.data(), features, &i, 1, mlp.input_mean.data(), inv_sd.data(),
                                   xs.data() + i * features);
    } else {
      a[0].resize(batch * features);
    }
    for (std::size_t l = 0; l < n; ++l) {
      const DenseLayer& d = mlp.layers[l];
      wt[l].assign(d.weights.begin(), d.weights.end());
      bs[l].assign(d.biases.begin(), d.biases.end());
      a[l + 1].resize(batch * d.outputs);
      dz[l].resize(batch * d.outputs);
      if (!fused) gw[l].resize(d.inputs * d.outputs);  // fused: the sums go into Adam
      gb[l].resize(d.outputs);
      mw[l].assign(d.inputs * d.outputs, 0.0F);
      vw[l].assign(d.inputs * d.outputs, 0.0F);
      mb[l].assign(d.outputs, 0.0F);
      vb[l].assign(d.outputs, 0.0F);
    }
    da.assign(pieces, detail::AlignedFloats(batch * widest));
    // Per piece, a layer's bias gradient as the fused weight-gradient product
    // sums it (every column; the piece runs Adam on its own range of them).
    bias_grad.assign(fused ? pieces : 0, detail::AlignedFloats(widest));
    // The fused products fetch their epilogues' lines ahead only when another
    // core has used them (FusedProduct::prefetch: it costs on one thread).
    prefetch = pieces > 1;
    piece_loss.resize(pieces);
    rows.resize(batch);
    // The fused products' row pointers: the batch's samples and targets (set
    // every step), each layer's activations and dz (fixed), and per piece the transposed
    // weights of the input-gradient products.
    xrows.resize(fused ? batch : 0);
    trows.resize(fused ? batch : 0);
    lanes.resize(fused ? batch * 16 : 0);
    arows.resize(fused ? n : 0);
    dzrows.resize(fused ? n : 0);
    wtt.resize(fused ? pieces : 0);
    if (fused) {
      for (std::size_t l = 0; l < n; ++l) {
        const DenseLayer& d = mlp.layers[l];
        dzrows[l].resize(batch);
        for (std::size_t b = 0; b < batch; ++b) dzrows[l][b] = dz[l].data() + b * d.outputs;
        if (l == 0) continue;
        arows[l].resize(batch);
        for (std::size_t b = 0; b < batch; ++b) arows[l][b] = a[l].data() + b * d.inputs;
      }
      for (auto& w : wtt) {
        w.resize(n);
        for (std::size_t l = 1; l < n; ++l)
          w[l].resize(mlp.layers[l].inputs * mlp.layers[l].outputs);
      }
    }
    denom = static_cast<double>(batch) * static_cast<double>(outputs);
    grad_scale = static_cast<float>(2.0 / denom);
  }

  static std::pair<std::size_t, std::size_t> range(std::size_t count, std::size_t piece,
                                                   std::size_t of) {
    return {count * piece / of, count * (piece + 1) / of};
  }
  static Eigen::Map<MatF> map(detail::AlignedFloats& v, std::size_t r0, std::size_t nr,
                              std::size_t cols) {
    return Eigen::Map<MatF>(v.data() + r0 * cols, static_cast<Eigen::Index>(nr),
                            static_cast<Eigen::Index>(cols));
  }
  /// Layer l's inputs as row pointers (fused path).
  const float* const* inputs_of(std::size_t l) const {
    return l == 0 ? xrows.data() : arows[l].data();
  }

  // Phase 1 on rows [r0, r1). A layer's product goes straight into a[l+1]
  // and the bias and activation follow in one pass: the backward pass needs
  // only the activations (every derivative below is written from a).
  void rows_pass(std::size_t piece) {
    const auto [r0, r1] = range(batch, piece, pieces);
    const std::size_t nr = r1 - r0;
    piece_loss[piece] = 0.0;
    if (nr == 0) return;
    if (!fused)
      detail::gather_standardise(x.data(), features, rows.data() + r0, nr, mlp.input_mean.data(),
                                 inv_sd.data(), a[0].data() + r0 * features);
    for (std::size_t l = 0; l < n; ++l) {
      const DenseLayer& d = mlp.layers[l];
      const Activation act = l + 1 == n ? mlp.output_activation : mlp.hidden_activation;
      float* al = a[l + 1].data() + r0 * d.outputs;
      if (fused) {
        detail::FusedProduct p;
        p.prefetch = prefetch;
        p.x = inputs_of(l) + r0;
        p.rows = nr, p.depth = d.inputs, p.cols = d.outputs;
        p.b = wt[l].data(), p.ldb = d.outputs, p.bias = bs[l].data();
        p.epilogue =
            act == Activation::kELU ? detail::FusedEpilogue::kElu : detail::FusedEpilogue::kStore;
        p.y = al, p.ldy = d.outputs;
        if (residual_done && l + 1 == n) {
          p.epilogue = detail::FusedEpilogue::kResidual;
          p.t = trows.data() + r0, p.scale = grad_scale, p.lanes = lanes.data() + r0 * 16;
          p.y = dz[n - 1].data() + r0 * outputs;
        }
        detail::fused_product(p);
      } else {
        detail::gemm(false, false, nr, d.outputs, d.inputs, a[l].data() + r0 * d.inputs, d.inputs,
                     wt[l].data(), d.outputs, 0.0F, al, d.outputs);
        detail::bias_rows(al, nr, d.outputs, bs[l].data(), act == Activation::kELU);
      }
      if (act != Activation::kELU && act != Activation::kIdentity)
        apply(act, map(a[l + 1], r0, nr, d.outputs));
    }
    // The output layer's da = 2/(batch·outputs)·(a - y); into dz directly
    // when there is no activation to differentiate.
    if (residual_done) {
      double total = 0.0;
      for (std::size_t r = r0; r < r1; ++r) {
        float sum = 0.0F;
        for (std::size_t j = 0; j < 16; ++j) sum += lanes[r * 16 + j];
        total += static_cast<double>(sum);
      }
      piece_loss[piece] = total;
    } else {
      piece_loss[piece] = detail::residual_rows(
          a[n].data() + r0 * outputs, y.data(), rows.data() + r0, nr, outputs, grad_scale,
          linear_out ? dz[n - 1].data() + r0 * outputs : da[piece].data());
    }
    bool dz_done = false;  // dz[l] already written by the fused product below
    for (std::size_t l = n; l-- > 0;) {
      const DenseLayer& d = mlp.layers[l];
      const Activation act = l + 1 == n ? mlp.output_activation : mlp.hidden_activation;
      const std::size_t cells = nr * d.outputs;
      const float* dal = da[piece].data();
      float* dzl = dz[l].data() + r0 * d.outputs;
      const float* al = a[l + 1].data() + r0 * d.outputs;
      if (!dz_done) {
        switch (act) {
          case Activation::kIdentity:
            if (!(linear_out && l + 1 == n)) std::copy_n(dal, cells, dzl);
            break;
          case Activation::kReLU:
            for (std::size_t i = 0; i < cells; ++i) dzl[i] = al[i] > 0.0F ? dal[i] : 0.0F;
            break;
          case Activation::kELU:
            detail::elu_backward(dal, al, cells, dzl);
            break;
          case Activation::kTanh:
            for (std::size_t i = 0; i < cells; ++i) dzl[i] = dal[i] * (1.0F - al[i] * al[i]);
            break;
        }
      }
      dz_done = false;
      if (l == 0) continue;
      if (fused) {
        // da = dz·Wᵀ on the transposed weights; when the layer below is ELU,
        // its derivative is applied on the way and dz[l-1] is written.
        float* wtl = wtt[piece][l].data();
        detail::transpose(wt[l].data(), d.inputs, d.outputs, d.outputs, wtl, d.inputs);
        dz_done = mlp.hidden_activation == Activation::kELU;
        detail::FusedProduct p;
        p.prefetch = prefetch;
        p.x = dzrows[l].data() + r0;
        p.rows = nr, p.depth = d.outputs, p.cols = d.inputs;
        p.b = wtl, p.ldb = d.inputs;
        if (dz_done) {
          p.epilogue = detail::FusedEpilogue::kEluGrad;
          p.e = a[l].data() + r0 * d.inputs, p.lde = d.inputs;
          p.y = dz[l - 1].data() + r0 * d.inputs;
        } else {
          p.y = da[piece].data();
        }
        p.ldy = d.inputs;
        detail::fused_product(p);
      } else {
        detail::gemm(false, true, nr, d.inputs, d.outputs, dzl, d.outputs, wt[l].data(), d.outputs,
                     0.0F, da[piece].data(), d.inputs);
      }
    }
  }

  // Phase 2: the gradients and Adam of each layer's input rows [i0, i1) and
  // outputs [o0, o1).
  void params_pass(std::size_t piece) {
    for (std::size_t l = 0; l < n; ++l) {
      const DenseLayer& d = mlp.layers[l];
      const auto [i0, i1] = range(d.inputs, piece, pieces);
      bool bias_summed = false;  // the fused product wrote the bias gradient
      if (i1 > i0) {
        const std::size_t at = i0 * d.outputs, count = (i1 - i0) * d.outputs;
        if (fused) {
          // The weight gradient's sums go straight into Adam.
          detail::FusedProduct p;
          p.prefetch = prefetch;
          p.x = inputs_of(l), p.layout = detail::FusedRows::kPerK, p.offset = i0;
          p.rows = i1 - i0, p.depth = batch, p.cols = d.outputs;
          p.b = dz[l].data(), p.ldb = d.outputs;
          p.epilogue = detail::FusedEpilogue::kAdam, p.adam = &adam;
          p.y = wt[l].data() + at, p.ldy = d.outputs;
          p.m = mw[l].data() + at, p.v = vw[l].data() + at;
          p.column_sums = bias_grad[piece].data();
          detail::fused_product(p);
          bias_summed = true;
        } else {
          detail::gemm(true, false, i1 - i0, d.outputs, batch, a[l].data() + i0, d.inputs,
                       dz[l].data(), d.outputs, 0.0F, gw[l].data() + at, d.outputs);
          detail::adam_step(wt[l].data() + at, gw[l].data() + at, mw[l].data() + at,
                            vw[l].data() + at, count, adam);
        }
      }
      const auto [o0, o1] = range(d.outputs, piece, pieces);
      if (o1 > o0) {
        float* g = bias_summed ? bias_grad[piece].data() : gb[l].data();
        if (!bias_summed) detail::column_sums(dz[l].data(), batch, d.outputs, o0, o1, g);
        detail::adam_step(bs[l].data() + o0, g + o0, mb[l].data() + o0, vb[l].data() + o0, o1 - o0,
                          adam);
      }
    }
  }

  Mlp& mlp;
  const std::span<const float> x, y;
  const std::size_t samples, features, outputs;
  const MlpOptions& options;
  std::size_t n = 0, batch = 0, pieces = 1, widest = 0;
  float decay = 1.0F;  ///< the weights' factor each step (weight decay)
  core::Executor* ex = nullptr;
  // The weights and biases are trained in copies on cache-line boundaries.
  std::vector<detail::AlignedFloats> a, dz, gw, gb, mw, vw, mb, vb, wt, bs;
  std::vector<float> inv_sd;
  bool fused = false, linear_out = false, residual_done = false, prefetch = false;
  detail::AlignedFloats xs;
  std::vector<detail::AlignedFloats> da, bias_grad;
  std::vector<double> piece_loss;
  std::vector<std::size_t> rows;
  std::vector<const float*> xrows, trows;
  std::vector<float> lanes;  // the rows' squared residuals
  std::vector<std::vector<const float*>> arows, dzrows;
  std::vector<std::vector<detail::AlignedFloats>> wtt;
  double denom = 1.0;
  float grad_scale = 0.0F;
  detail::AdamStep adam;
};

}  // namespace

core::Result<Mlp> train_mlp(std::span<const float> x, std::span<const float> y, std::size_t samples,
                            std::size_t features, std::size_t outputs, const MlpOptions& options,
                            MlpTrainStats* stats) {
  if (samples == 0 || features == 0 || outputs == 0 || x.size() / features != samples ||
      x.size() != samples * features || y.size() / outputs != samples ||
      y.size() != samples * outputs)
    return make_error(codes::MLP_SHAPE, "x must be samples x features and y samples x outputs");
  if (options.batch_size == 0) return make_error(codes::MLP_SHAPE, "batch_size must be > 0");
  const AdamOptions& ao = options.adam;
  if (!(ao.learning_rate > 0.0) || !std::isfinite(ao.learning_rate) || !(ao.epsilon > 0.0) ||
      !std::isfinite(ao.epsilon) || !(ao.beta1 >= 0.0 && ao.beta1 < 1.0) ||
      !(ao.beta2 >= 0.0 && ao.beta2 < 1.0))
    return make_error(codes::MODEL_OPTIONS,
                      "Adam needs a learning rate and epsilon > 0 and beta1, beta2 in [0, 1)");
  if (!(options.weight_decay >= 0.0) || !(ao.learning_rate * options.weight_decay < 1.0))
    return make_error(codes::MODEL_OPTIONS,
                      "the weight decay must be >= 0 and below 1 / the learning rate");
  if (!all_finite(x) || !all_finite(y))
    return make_error(codes::MLP_NOT_FINITE, "training data holds NaN or infinity");
  Rng rng(options.seed);
  auto init = init_with(features, outputs, options, rng);
  if (!init) return init;
  Mlp mlp = std::move(init).value();
  if (auto st = set_standardisation(mlp, x, samples, features, options); !st)
    return std::move(st).error();
  if (stats != nullptr) {
    auto l0 = mlp_loss(mlp, x, y, samples);
    if (!l0) return std::move(l0).error();
    stats->initial_loss = *l0;
  }
  if (options.validation && options.validation_every == 0)
    return make_error(codes::MODEL_OPTIONS, "validation_every must be > 0");
  MlpTraining training(mlp, x, y, samples, options);
  if (auto st = training.run(rng); !st) return std::move(st).error();
  for (const DenseLayer& d : mlp.layers)
    if (!all_finite(d.weights) || !all_finite(d.biases))
      return make_error(codes::MLP_NOT_FINITE, "training diverged (lower the learning rate)");
  if (stats != nullptr) {
    auto l1 = mlp_loss(mlp, x, y, samples);
    if (!l1) return std::move(l1).error();
    stats->final_loss = *l1;
    stats->steps_run = training.steps_run;
    stats->best_step = training.best_step;
    stats->best_validation = options.validation ? training.best_loss : 0.0;
  }
  return mlp;
}

}  // namespace charkit::deformer
