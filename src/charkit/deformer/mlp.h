// A small multi-layer perceptron for pose-driven morph weights: dense layers,
// ReLU / ELU / tanh, input standardisation, mean-squared-error training with
// Adam on seeded mini-batches (docs/deformer/linear.md, "Neural").
// Plain vectors in the API; Eigen only inside mlp.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "charkit/core/parallel.h"
#include "charkit/core/result.h"

namespace charkit::deformer {

enum class Activation { kIdentity, kReLU, kELU, kTanh };

/// ReLU max(0, x); ELU x > 0 ? x : exp(x) - 1; tanh.
float activate(Activation a, float x);

/// y = x W + b; weights row-major [inputs][outputs] (the .nmn order).
struct DenseLayer {
  std::size_t inputs = 0;
  std::size_t outputs = 0;
  std::vector<float> weights;
  std::vector<float> biases;
};

struct Mlp {
  /// x' = (x - mean) / std per input before the first layer.
  std::vector<float> input_mean;
  std::vector<float> input_std;
  std::vector<DenseLayer> layers;
  Activation hidden_activation = Activation::kELU;  ///< after every layer but the last
  Activation output_activation = Activation::kIdentity;

  std::size_t input_count() const { return layers.empty() ? 0 : layers.front().inputs; }
  std::size_t output_count() const { return layers.empty() ? 0 : layers.back().outputs; }
};

/// Layers chain, sizes match, values finite, std > 0. Errors: MLP_SHAPE, MLP_NOT_FINITE.
core::Status validate(const Mlp& mlp);

/// Runs input rows through the network; owns its scratch so evaluate()
/// never allocates. The Mlp must outlive the evaluator and pass validate().
class MlpEvaluator {
 public:
  /// Rows evaluate_batch() runs through one layer at a time: 64 rows of the
  /// widest layer stay in the L2 cache between layers.
  static constexpr std::size_t kBatchRows = 64;

  explicit MlpEvaluator(const Mlp& mlp);
  /// One row. False (out untouched) when the sizes do not match.
  [[nodiscard]] bool evaluate(std::span<const float> input, std::span<float> output);
  /// `rows` rows at once (the throughput path of bake, preview,
  /// `deformer run` and the C API): inputs row-major [rows][input_count],
  /// outputs [rows][output_count]. Blocks of kBatchRows rows go through each
  /// layer together, so the weights are read once per block instead of once
  /// per row. A row's outputs are the same bits as evaluate()'s on it, in
  /// any batch (detail::dense_rows: one fused multiply-add chain per output;
  /// tests/deformer). Its scratch is allocated by the first call of more than
  /// one row. False (outputs untouched) when the sizes do not match.
  [[nodiscard]] bool evaluate_batch(std::span<const float> inputs, std::size_t rows,
                                    std::span<float> outputs);

 private:
  /// n rows (n ≤ kBatchRows) through every layer; a and b hold n rows of
  /// the widest layer each.
  void run_rows(const float* inputs, std::size_t n, float* outputs, float* a, float* b) const;

  const Mlp* mlp_;
  std::vector<float> a_, b_;
  std::vector<float> batch_a_, batch_b_;  ///< kBatchRows × the widest layer each
};

struct AdamOptions {
  double learning_rate = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double epsilon = 1e-8;
};

/// One Adam step (Kingma and Ba 2015, Algorithm 1) on params, in place:
/// m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2; m^ = m / (1-b1^t);
/// v^ = v / (1-b2^t); p -= lr m^ / (sqrt(v^) + eps). step t counts from 1.
void adam_update(std::span<float> params, std::span<const float> grads, std::span<float> m,
                 std::span<float> v, std::uint64_t step, const AdamOptions& options);

struct MlpOptions {
  std::vector<std::size_t> hidden = {128, 128};
  Activation hidden_activation = Activation::kELU;
  Activation output_activation = Activation::kIdentity;
  AdamOptions adam;
  std::size_t iterations = 1000;
  std::size_t batch_size = 128;  ///< samples per step, drawn with replacement
  /// Decoupled weight decay (Loshchilov and Hutter's AdamW): every step
  /// scales the weights, not the biases, by 1 - learning_rate * weight_decay
  /// before Adam's update. 0: plain Adam, the same bits as without it.
  double weight_decay = 0.0;
  std::uint64_t seed = 777;
  bool standardize_inputs = true;
  /// When not empty (one value per input each): the standardisation to use
  /// instead of the per-feature mean/std of the training data — e.g. the
  /// engine's averaged std for `.nmn` export. Overrides standardize_inputs.
  std::vector<float> fixed_input_mean;
  std::vector<float> fixed_input_std;
  /// Called every progress_every steps and after the last one with (steps
  /// done, total steps, the last mini-batch's loss).
  std::function<void(std::size_t, std::size_t, double)> progress;
  std::size_t progress_every = 250;
  /// Early stopping. When set, called every validation_every steps (and
  /// after the last one) with the network as it stands; it returns a loss on
  /// samples the training does not see (lower is better, finite). Training
  /// returns the network of the lowest loss (the first one on ties), and
  /// stops once `patience` calls in a row have not lowered it (0: runs every
  /// step, still returning the best network).
  std::function<double(const Mlp&)> validation;
  std::size_t validation_every = 50;
  std::size_t patience = 0;
  /// Pieces each training step is split into (the batch's rows, then the
  /// parameters), run on `executor` (null: core::default_executor()); 0 =
  /// one per unit of the executor's concurrency, at most min(batch_size, 64).
  /// The result is deterministic for a given seed and thread count; other
  /// counts sum in other orders (differences at float rounding).
  std::size_t threads = 1;
  core::Executor* executor = nullptr;
};

/// Glorot-uniform weights (U(-a, a), a = sqrt(6 / (in + out))) drawn from
/// Rng(seed) layer by layer, row-major; zero biases; identity standardisation.
/// Errors: MLP_SHAPE (zero sizes).
core::Result<Mlp> init_mlp(std::size_t inputs, std::size_t outputs, const MlpOptions& options);

/// Mean-squared error L = sum (y_hat - y)^2 / (rows * outputs) over the rows
/// of x (row-major rows x inputs, raw features) and its gradient per layer
/// (same shapes as mlp.layers) in *grads when not null. Without grads the
/// rows run through MlpEvaluator::evaluate_batch (the outputs bake and
/// `deformer run` give); with them through the plain Eigen forward and
/// backward pass the training kernels are tested against. Errors: MLP_SHAPE.
core::Result<double> mlp_loss(const Mlp& mlp, std::span<const float> x, std::span<const float> y,
                              std::size_t rows, std::vector<DenseLayer>* grads = nullptr);

struct MlpTrainStats {
  double initial_loss = 0.0;  ///< on the whole training set, before the first step
  double final_loss = 0.0;    ///< on the whole training set, of the network returned
  /// With MlpOptions::validation: the steps taken before training stopped,
  /// the step of the network returned and its validation loss (otherwise
  /// the iterations run, the same, and 0).
  std::size_t steps_run = 0;
  std::size_t best_step = 0;
  double best_validation = 0.0;
};

/// Train on X (samples x features) and Y (samples x outputs): init_mlp, then
/// per-feature standardisation (std < 1e-8 -> 1), then `iterations` Adam
/// steps; step k draws batch_size row indices floor(uniform() * samples)
/// from the same Rng stream that follows the initial weights. With a
/// validation callback, the network of its lowest loss (see MlpOptions).
/// Errors: MLP_SHAPE, MLP_NOT_FINITE, MODEL_OPTIONS (validation_every 0, or
/// a validation loss that is not finite).
core::Result<Mlp> train_mlp(std::span<const float> x, std::span<const float> y, std::size_t samples,
                            std::size_t features, std::size_t outputs, const MlpOptions& options,
                            MlpTrainStats* stats = nullptr);

}  // namespace charkit::deformer
