#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <span>
#include <vector>

#include "charkit/core/parallel.h"
#include "charkit/deformer/detail/batch_kernels.h"
#include "charkit/deformer/detail/prng.h"
#include "charkit/deformer/mlp.h"

using namespace charkit::deformer;

TEST(Mlp, Activations) {
  EXPECT_EQ(activate(Activation::kReLU, -2.0F), 0.0F);
  EXPECT_EQ(activate(Activation::kReLU, 3.0F), 3.0F);
  EXPECT_EQ(activate(Activation::kELU, 3.0F), 3.0F);
  EXPECT_NEAR(activate(Activation::kELU, -1.0F), std::exp(-1.0F) - 1.0F, 1e-7);  // -0.6321
  EXPECT_NEAR(activate(Activation::kTanh, 0.5F), 0.46211716F, 1e-7);
  EXPECT_EQ(activate(Activation::kIdentity, -7.5F), -7.5F);
}

TEST(Mlp, AdamStepsByHand) {
  // lr 0.1, b1 0.9, b2 0.999, eps 1e-8; p = 1, g = 0.5 each step.
  // t=1: m = 0.05, v = 0.00025, m^ = 0.5, v^ = 0.25: p -= 0.1 * 0.5 / 0.5 -> 0.9.
  // t=2: m = 0.095, v = 0.00049975, m^ = 0.095/0.19 = 0.5, v^ = 0.00049975/0.001999 = 0.25 -> 0.8.
  // t=3 with g = -0.5: m = 0.0855 - 0.05 = 0.0355, m^ = 0.0355/0.271 = 0.1309963,
  //   v^ = 0.25 still (g^2 unchanged) -> p = 0.8 - 0.1 * 0.1309963 / 0.5 = 0.7738007.
  // The second parameter (g = -4) moves by +lr per step at first: -2 -> -1.9 -> -1.8.
  AdamOptions o;
  o.learning_rate = 0.1;
  std::vector<float> p = {1.0F, -2.0F}, m(2, 0.0F), v(2, 0.0F);
  adam_update(p, std::vector<float>{0.5F, -4.0F}, m, v, 1, o);
  EXPECT_NEAR(p[0], 0.9F, 1e-6);
  EXPECT_NEAR(p[1], -1.9F, 1e-6);
  EXPECT_NEAR(m[0], 0.05F, 1e-7);
  EXPECT_NEAR(v[0], 0.00025F, 1e-9);
  adam_update(p, std::vector<float>{0.5F, -4.0F}, m, v, 2, o);
  EXPECT_NEAR(p[0], 0.8F, 1e-6);
  EXPECT_NEAR(p[1], -1.8F, 1e-6);
  adam_update(p, std::vector<float>{-0.5F, -4.0F}, m, v, 3, o);
  EXPECT_NEAR(p[0], 0.7738007F, 2e-6);
}

TEST(Mlp, GradientsOfATinyNetworkByHand) {
  // 1 -> 1 (ReLU) -> 1: w1 = 2, b1 = -1, w2 = 3, b2 = 0.5; x = 1, y = 0.
  // z1 = 1, a1 = 1, out = 3.5, L = 3.5^2 = 12.25. dL/dout = 7: dw2 = 7 * a1 = 7,
  // db2 = 7, da1 = 7 * 3 = 21, dz1 = 21 (z1 > 0), dw1 = 21 * x = 21, db1 = 21.
  Mlp m;
  m.hidden_activation = Activation::kReLU;
  m.input_mean = {0.0F};
  m.input_std = {1.0F};
  m.layers = {DenseLayer{1, 1, {2.0F}, {-1.0F}}, DenseLayer{1, 1, {3.0F}, {0.5F}}};
  std::vector<DenseLayer> g;
  auto loss = mlp_loss(m, std::vector<float>{1.0F}, std::vector<float>{0.0F}, 1, &g);
  ASSERT_TRUE(loss.ok()) << loss.error().to_string();
  EXPECT_NEAR(*loss, 12.25, 1e-6);
  ASSERT_EQ(g.size(), 2U);
  EXPECT_NEAR(g[1].weights[0], 7.0F, 1e-5);
  EXPECT_NEAR(g[1].biases[0], 7.0F, 1e-5);
  EXPECT_NEAR(g[0].weights[0], 21.0F, 1e-5);
  EXPECT_NEAR(g[0].biases[0], 21.0F, 1e-5);
  // With x = 0: z1 = -1, ReLU closed, no gradient reaches layer 0.
  loss = mlp_loss(m, std::vector<float>{0.0F}, std::vector<float>{0.0F}, 1, &g);
  ASSERT_TRUE(loss.ok());
  EXPECT_NEAR(*loss, 0.25, 1e-7);
  EXPECT_EQ(g[0].weights[0], 0.0F);
  // Standardisation: mean 1, std 2 turns x = 3 into 1 -> the same 12.25.
  m.input_mean = {1.0F};
  m.input_std = {2.0F};
  loss = mlp_loss(m, std::vector<float>{3.0F}, std::vector<float>{0.0F}, 1, &g);
  EXPECT_NEAR(*loss, 12.25, 1e-6);
}

TEST(Mlp, GradientsMatchFiniteDifferences) {
  for (Activation act : {Activation::kELU, Activation::kTanh}) {
    MlpOptions o;
    o.hidden = {5, 4};
    o.hidden_activation = act;
    o.seed = 3;
    auto init = init_mlp(3, 2, o);
    ASSERT_TRUE(init.ok());
    Mlp m = *init;
    Rng r(11);
    std::vector<float> x(4 * 3), y(4 * 2);
    for (float& v : x) v = static_cast<float>(r.uniform(-1.0, 1.0));
    for (float& v : y) v = static_cast<float>(r.uniform(-1.0, 1.0));
    std::vector<DenseLayer> g;
    ASSERT_TRUE(mlp_loss(m, x, y, 4, &g).ok());
    for (std::size_t l = 0; l < m.layers.size(); ++l) {
      for (std::size_t k = 0; k < m.layers[l].weights.size(); k += 3) {
        Mlp plus = m, minus = m;
        const float h = 1e-2F;
        plus.layers[l].weights[k] += h;
        minus.layers[l].weights[k] -= h;
        const double num = (*mlp_loss(plus, x, y, 4) - *mlp_loss(minus, x, y, 4)) / (2.0 * h);
        EXPECT_NEAR(g[l].weights[k], num, 2e-3 + 2e-2 * std::fabs(num)) << l << " " << k;
      }
    }
  }
}

TEST(Mlp, EvaluatorMatchesTheBatchForward) {
  MlpOptions o;
  o.hidden = {8};
  o.hidden_activation = Activation::kReLU;
  auto m = init_mlp(4, 3, o);
  ASSERT_TRUE(m.ok());
  m->input_mean = {0.5F, 0.0F, -1.0F, 2.0F};
  m->input_std = {1.0F, 2.0F, 0.5F, 4.0F};
  MlpEvaluator ev(*m);
  const std::vector<float> x = {0.3F, -1.0F, 2.0F, 0.0F};
  std::vector<float> out(3);
  ASSERT_TRUE(ev.evaluate(x, out));
  // loss against y = 0 is mean(out^2): ties the evaluator to the batch path.
  auto loss = mlp_loss(*m, x, std::vector<float>(3, 0.0F), 1);
  ASSERT_TRUE(loss.ok());
  EXPECT_NEAR(*loss, (out[0] * out[0] + out[1] * out[1] + out[2] * out[2]) / 3.0, 1e-5);
  std::vector<float> wrong(2);
  EXPECT_FALSE(ev.evaluate(x, wrong));
}

// The batch path against the one-row path, row by row, for every activation,
// across block boundaries (kBatchRows) and with a partial last block.
TEST(Mlp, BatchEvaluationEqualsOneRowAtATime) {
  for (Activation act : {Activation::kELU, Activation::kReLU, Activation::kTanh}) {
    MlpOptions o;
    o.hidden = {37, 19};
    o.hidden_activation = act;
    o.output_activation = act == Activation::kTanh ? Activation::kTanh : Activation::kIdentity;
    auto m = init_mlp(23, 11, o);
    ASSERT_TRUE(m.ok());
    Rng r(9);
    for (std::size_t i = 0; i < 23; ++i) {
      m->input_mean[i] = static_cast<float>(r.uniform(-1.0, 1.0));
      m->input_std[i] = static_cast<float>(r.uniform(0.5, 3.0));
    }
    const std::size_t rows = 2 * MlpEvaluator::kBatchRows + 7;
    std::vector<float> x(rows * 23), batch(rows * 11, -99.0F), one(11);
    for (float& v : x) v = static_cast<float>(r.uniform(-4.0, 4.0));
    MlpEvaluator ev(*m);
    ASSERT_TRUE(ev.evaluate_batch(x, rows, batch));
    double worst = 0.0;
    for (std::size_t i = 0; i < rows; ++i) {
      ASSERT_TRUE(ev.evaluate(std::span<const float>(x).subspan(i * 23, 23), one));
      for (std::size_t k = 0; k < 11; ++k) {
        ASSERT_TRUE(std::isfinite(batch[i * 11 + k]));
        worst = std::max(worst, std::abs(double{batch[i * 11 + k]} - one[k]) /
                                    std::max(1.0, std::abs(double{one[k]})));
      }
    }
    EXPECT_LT(worst, 1e-5) << static_cast<int>(act);
    // A batch of one row (Eigen takes its matrix-vector path) agrees too.
    std::vector<float> last(11);
    ASSERT_TRUE(ev.evaluate_batch(std::span<const float>(x).subspan((rows - 1) * 23), 1, last));
    for (std::size_t k = 0; k < 11; ++k)
      EXPECT_NEAR(last[k], batch[(rows - 1) * 11 + k], 1e-5 * std::max(1.0F, std::abs(last[k])));
    // Sizes that do not match leave the outputs untouched.
    std::vector<float> wrong(rows * 11 - 1, 5.0F);
    EXPECT_FALSE(ev.evaluate_batch(x, rows, wrong));
    EXPECT_EQ(wrong[0], 5.0F);
    EXPECT_TRUE(ev.evaluate_batch({}, 0, {}));
  }
}

// A row's outputs do not depend on the batch it is evaluated in: every batch
// size, a row's position in the block of kBatchRows, and evaluate() (a batch
// of one) give the same bits. bake, `deformer run` and the C API evaluate
// whole batches and must agree with a single pose to the bit.
TEST(Mlp, RowsDoNotDependOnTheirBatch) {
  for (Activation act : {Activation::kELU, Activation::kReLU, Activation::kTanh}) {
    for (std::size_t width : {std::size_t{37}, std::size_t{128}}) {
      MlpOptions o;
      o.hidden = {width, width};
      o.hidden_activation = act;
      o.output_activation = act == Activation::kTanh ? Activation::kTanh : Activation::kIdentity;
      auto m = init_mlp(300, 11, o);
      ASSERT_TRUE(m.ok());
      Rng r(9);
      for (std::size_t i = 0; i < 300; ++i) {
        m->input_mean[i] = static_cast<float>(r.uniform(-1.0, 1.0));
        m->input_std[i] = static_cast<float>(r.uniform(0.5, 3.0));
      }
      const std::size_t rows = 2 * MlpEvaluator::kBatchRows + 7;
      std::vector<float> x(rows * 300), all(rows * 11);
      for (float& v : x) v = static_cast<float>(r.uniform(-4.0, 4.0));
      MlpEvaluator ev(*m);
      ASSERT_TRUE(ev.evaluate_batch(x, rows, all));
      for (std::size_t batch :
           {std::size_t{1}, std::size_t{3}, std::size_t{64}, std::size_t{100}}) {
        std::vector<float> part(rows * 11);
        for (std::size_t r0 = 0; r0 < rows; r0 += batch) {
          const std::size_t n = std::min(batch, rows - r0);
          ASSERT_TRUE(ev.evaluate_batch(std::span<const float>(x).subspan(r0 * 300, n * 300), n,
                                        std::span<float>(part).subspan(r0 * 11, n * 11)));
        }
        EXPECT_EQ(0, std::memcmp(all.data(), part.data(), all.size() * 4))
            << "activation " << static_cast<int>(act) << " width " << width << " batch " << batch;
      }
      std::vector<float> one(11);
      for (std::size_t i : {std::size_t{0}, std::size_t{63}, std::size_t{64}, rows - 1}) {
        ASSERT_TRUE(ev.evaluate(std::span<const float>(x).subspan(i * 300, 300), one));
        EXPECT_EQ(0, std::memcmp(one.data(), all.data() + i * 11, 11 * 4))
            << "evaluate, row " << i << ", activation " << static_cast<int>(act);
      }
    }
  }
}

TEST(Mlp, TrainingFitsASmoothFunctionAndIsSeeded) {
  // y = (sin(x0) + x1^2, x0 * x1) on 200 samples.
  const std::size_t n = 200;
  Rng r(5);
  std::vector<float> x(n * 2), y(n * 2);
  for (std::size_t i = 0; i < n; ++i) {
    const float a = static_cast<float>(r.uniform(-2.0, 2.0));
    const float b = static_cast<float>(r.uniform(-1.0, 1.0));
    x[2 * i] = a;
    x[2 * i + 1] = b;
    y[2 * i] = std::sin(a) + b * b;
    y[2 * i + 1] = a * b;
  }
  MlpOptions o;
  o.hidden = {32, 32};
  o.hidden_activation = Activation::kTanh;
  o.iterations = 1500;
  o.batch_size = 32;
  o.adam.learning_rate = 3e-3;
  MlpTrainStats stats;
  auto m = train_mlp(x, y, n, 2, 2, o, &stats);
  ASSERT_TRUE(m.ok()) << m.error().to_string();
  EXPECT_LT(stats.final_loss, 0.05 * stats.initial_loss);
  EXPECT_LT(stats.final_loss, 0.01);
  EXPECT_NEAR(m->input_mean[0], 0.0F, 0.3F);  // standardisation measured from the data
  auto again = train_mlp(x, y, n, 2, 2, o);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->layers[1].weights, m->layers[1].weights);  // same seed, same bits
  EXPECT_EQ(train_mlp(x, y, n, 3, 2, o).error().code, "MLP_SHAPE");
  // Adam's options: a step with lr or eps at 0 would divide by 0.
  for (auto bad :
       {+[](MlpOptions& b) { b.adam.learning_rate = 0.0; },
        +[](MlpOptions& b) { b.adam.learning_rate = -1e-3; },
        +[](MlpOptions& b) { b.adam.epsilon = 0.0; }, +[](MlpOptions& b) { b.adam.beta1 = 1.0; },
        +[](MlpOptions& b) { b.adam.beta2 = std::nan(""); }}) {
    MlpOptions b = o;
    b.iterations = 1;
    bad(b);
    auto e = train_mlp(x, y, n, 2, 2, b);
    ASSERT_FALSE(e.ok());
    EXPECT_EQ(e.error().code, "MODEL_OPTIONS");
  }
}

// Training split over several threads (rows, then parameters): the same
// bits on every run with a given thread count, and the same quality as one
// thread (other counts sum in other orders).
TEST(Mlp, TrainingOnSeveralThreadsIsDeterministic) {
  const std::size_t n = 300, f = 23, k = 9;
  Rng r(21);
  std::vector<float> x(n * f), y(n * k);
  for (float& v : x) v = static_cast<float>(r.uniform(-2.0, 2.0));
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t o = 0; o < k; ++o)
      y[i * k + o] = std::sin(x[i * f + o]) * x[i * f + o + 1] + 0.1F * x[i * f + 2 * o];
  MlpOptions o;
  o.hidden = {40, 33};
  o.iterations = 400;
  o.batch_size = 50;
  o.adam.learning_rate = 3e-3;
  MlpTrainStats one_stats;
  auto one = train_mlp(x, y, n, f, k, o, &one_stats);
  ASSERT_TRUE(one.ok()) << one.error().to_string();
  charkit::core::ThreadPool pool(3);
  o.executor = &pool;
  for (std::size_t threads : {std::size_t{2}, std::size_t{3}, std::size_t{7}}) {
    o.threads = threads;
    MlpTrainStats stats;
    auto a = train_mlp(x, y, n, f, k, o, &stats);
    auto b = train_mlp(x, y, n, f, k, o);
    ASSERT_TRUE(a.ok() && b.ok());
    for (std::size_t l = 0; l < a->layers.size(); ++l) {
      EXPECT_EQ(a->layers[l].weights, b->layers[l].weights) << threads << " threads, layer " << l;
      EXPECT_EQ(a->layers[l].biases, b->layers[l].biases) << threads << " threads, layer " << l;
      // On the fused products (AVX-512) no sum depends on the split: every
      // thread count gives one thread's bits.
      if (detail::fused_product_available()) {
        EXPECT_EQ(a->layers[l].weights, one->layers[l].weights) << threads << " threads, " << l;
        EXPECT_EQ(a->layers[l].biases, one->layers[l].biases) << threads << " threads, " << l;
      }
    }
    EXPECT_NEAR(stats.final_loss, one_stats.final_loss, 0.01 * one_stats.final_loss)
        << threads << " threads";
    EXPECT_LT(stats.final_loss, 0.2 * stats.initial_loss);
  }
  // Through the serial executor: one piece after another, the same bits as
  // a pool of that many threads.
  o.threads = 3;
  auto pooled = train_mlp(x, y, n, f, k, o);
  o.executor = &charkit::core::serial_executor();
  auto serial = train_mlp(x, y, n, f, k, o);
  ASSERT_TRUE(pooled.ok() && serial.ok());
  EXPECT_EQ(pooled->layers[0].weights, serial->layers[0].weights);
}

// A few steps of train_mlp equal Adam (adam_update, in double) on the
// gradients mlp_loss computes (Eigen, the plain forward and backward pass)
// for the same batches, drawn from the same seeded stream: the training
// path's fused kernels (gather and standardise, bias and activation,
// residual, derivatives, column sums, folded Adam) against the reference,
// for every activation, odd widths (vector tails) and one and two pieces.
// Decoupled weight decay: the first step's gradient is taken at the initial
// weights w0 in both runs, so the decayed weights are the plain ones less
// lr * wd * w0; biases are not decayed. Over many steps the weights shrink.
TEST(Mlp, WeightDecayScalesTheWeightsBeforeAdam) {
  struct Restore {
    ~Restore() { detail::set_fused_products(true); }
  } restore;
  const std::size_t n = 30, f = 5, k = 3;
  Rng r(9);
  std::vector<float> x(n * f), y(n * k);
  for (float& v : x) v = static_cast<float>(r.uniform(-1.0, 1.0));
  for (float& v : y) v = static_cast<float>(r.uniform(-1.0, 1.0));
  for (bool fused : {true, false}) {
    detail::set_fused_products(fused);
    MlpOptions o;
    o.hidden = {16};
    o.iterations = 1;
    o.batch_size = 8;
    o.adam.learning_rate = 0.01;
    auto plain = train_mlp(x, y, n, f, k, o);
    o.weight_decay = 0.5;
    auto decayed = train_mlp(x, y, n, f, k, o);
    auto init = init_mlp(f, k, o);
    ASSERT_TRUE(plain && decayed && init);
    for (std::size_t l = 0; l < 2; ++l) {
      const DenseLayer &a = plain->layers[l], &b = decayed->layers[l], &w0 = init->layers[l];
      for (std::size_t i = 0; i < a.weights.size(); ++i)
        EXPECT_NEAR(a.weights[i] - b.weights[i], 0.01 * 0.5 * w0.weights[i], 1e-7) << l << " " << i;
      EXPECT_EQ(a.biases, b.biases) << l;
    }
    o.iterations = 300;
    auto long_decayed = train_mlp(x, y, n, f, k, o);
    o.weight_decay = 0.0;
    auto long_plain = train_mlp(x, y, n, f, k, o);
    ASSERT_TRUE(long_decayed && long_plain);
    double sd = 0.0, sp = 0.0;
    for (std::size_t l = 0; l < 2; ++l) {
      for (float w : long_decayed->layers[l].weights) sd += static_cast<double>(w) * w;
      for (float w : long_plain->layers[l].weights) sp += static_cast<double>(w) * w;
    }
    EXPECT_LT(sd, sp);
  }
  MlpOptions bad;
  bad.weight_decay = -1.0;
  auto refused = train_mlp(x, y, n, f, k, bad);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, "MODEL_OPTIONS");
  bad.weight_decay = 2000.0;  // lr * wd >= 1 would flip the weights' sign
  refused = train_mlp(x, y, n, f, k, bad);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, "MODEL_OPTIONS");
}

// Early stopping: the callback sees the network after every
// validation_every steps; training returns the network of its lowest loss,
// the very bits of a run of that many steps, and stops after `patience`
// checks without a lower one.
TEST(Mlp, EarlyStoppingReturnsTheBestCheckedNetwork) {
  const std::size_t n = 64;
  Rng r(3);
  std::vector<float> x(n * 3), y(n * 2);
  for (float& v : x) v = static_cast<float>(r.uniform(-1.0, 1.0));
  for (std::size_t i = 0; i < n; ++i) {
    y[2 * i] = x[3 * i] * x[3 * i + 1];
    y[2 * i + 1] = std::sin(x[3 * i + 2]);
  }
  MlpOptions o;
  o.hidden = {8};
  o.iterations = 1000;
  o.batch_size = 16;
  // A loss that falls to its lowest at the 6th check (step 120), then rises:
  // with patience 4, checks 7–10 do not improve and training stops at 200.
  std::vector<std::vector<float>> seen;
  o.validation = [&](const Mlp& m) {
    seen.push_back(m.layers[0].weights);
    const double k = static_cast<double>(seen.size());
    return (k - 6.0) * (k - 6.0);
  };
  o.validation_every = 20;
  o.patience = 4;
  MlpTrainStats st;
  auto m = train_mlp(x, y, n, 3, 2, o, &st);
  ASSERT_TRUE(m) << m.error().to_string();
  EXPECT_EQ(seen.size(), 10u);
  EXPECT_EQ(st.steps_run, 200u);
  EXPECT_EQ(st.best_step, 120u);
  EXPECT_EQ(st.best_validation, 0.0);
  EXPECT_EQ(m->layers[0].weights, seen[5]);
  // The same bits as 120 steps without early stopping (the same Rng stream).
  MlpOptions plain = o;
  plain.validation = {};
  plain.iterations = 120;
  auto ref = train_mlp(x, y, n, 3, 2, plain);
  ASSERT_TRUE(ref);
  for (std::size_t l = 0; l < ref->layers.size(); ++l) {
    EXPECT_EQ(m->layers[l].weights, ref->layers[l].weights) << l;
    EXPECT_EQ(m->layers[l].biases, ref->layers[l].biases) << l;
  }
  // Patience 0: every step runs, the last check (step 1000) included.
  seen.clear();
  o.patience = 0;
  auto all = train_mlp(x, y, n, 3, 2, o, &st);
  ASSERT_TRUE(all);
  EXPECT_EQ(seen.size(), 50u);
  EXPECT_EQ(st.steps_run, 1000u);
  EXPECT_EQ(st.best_step, 120u);
  EXPECT_EQ(all->layers[0].weights, seen[5]);
  // Refused: no check interval, a loss that is not finite.
  o.validation_every = 0;
  EXPECT_EQ(train_mlp(x, y, n, 3, 2, o).error().code, "MODEL_OPTIONS");
  o.validation_every = 20;
  o.validation = [](const Mlp&) { return std::nan(""); };
  auto nan = train_mlp(x, y, n, 3, 2, o);
  ASSERT_FALSE(nan);
  EXPECT_EQ(nan.error().code, "MODEL_OPTIONS");
  EXPECT_NE(nan.error().message.find("step 20"), std::string::npos) << nan.error().message;
}

TEST(Mlp, TrainingStepsEqualAdamOnTheReferenceGradients) {
  struct Restore {
    ~Restore() { detail::set_fused_products(true); }
  } restore;
  const std::size_t n = 40, f = 19, k = 21;
  Rng r(3);
  std::vector<float> x(n * f), y(n * k);
  for (float& v : x) v = static_cast<float>(r.uniform(-2.0, 2.0));
  for (float& v : y) v = static_cast<float>(r.uniform(-1.0, 1.0));
  struct Case {
    Activation hidden, output;
  };
  for (const Case c :
       {Case{Activation::kELU, Activation::kIdentity},
        Case{Activation::kReLU, Activation::kIdentity}, Case{Activation::kTanh, Activation::kELU},
        Case{Activation::kIdentity, Activation::kTanh}}) {
    // Both paths of a step: the fused products (AVX-512 CPUs) and gemm with
    // the elementwise passes (every CPU).
    for (int variant = 0; variant < 4; ++variant) {
      const std::size_t threads = variant % 2 == 0 ? 1 : 2;
      detail::set_fused_products(variant < 2);
      MlpOptions o;
      o.hidden = {37, 18};
      o.hidden_activation = c.hidden;
      o.output_activation = c.output;
      o.iterations = 3;
      o.batch_size = 24;
      o.seed = 11;
      o.threads = threads;
      // A large epsilon keeps each step linear in the gradient (no sign
      // flips from rounding), and standard deviations that are powers of
      // two make x·(1/sd) and x/sd the same float.
      o.adam.epsilon = 1.0;
      o.adam.learning_rate = 0.05;
      for (std::size_t j = 0; j < f; ++j) {
        o.fixed_input_mean.push_back(0.125F * static_cast<float>(j % 5));
        o.fixed_input_std.push_back(j % 2 == 0 ? 2.0F : 0.5F);
      }
      auto trained = train_mlp(x, y, n, f, k, o);
      ASSERT_TRUE(trained.ok()) << trained.error().to_string();

      auto init = init_mlp(f, k, o);
      ASSERT_TRUE(init.ok());
      Mlp ref = std::move(init).value();
      ref.input_mean = o.fixed_input_mean;
      ref.input_std = o.fixed_input_std;
      Rng rng(o.seed);  // the stream init_mlp drew its weights from
      for (const DenseLayer& d : ref.layers)
        for (std::size_t i = 0; i < d.weights.size(); ++i) (void)rng.uniform(-1.0, 1.0);
      std::vector<DenseLayer> mw(ref.layers), vw(ref.layers);
      for (DenseLayer& d : mw) std::fill(d.weights.begin(), d.weights.end(), 0.0F);
      for (DenseLayer& d : vw) std::fill(d.weights.begin(), d.weights.end(), 0.0F);
      std::vector<std::vector<float>> mb, vb;
      for (const DenseLayer& d : ref.layers) {
        mb.emplace_back(d.outputs, 0.0F);
        vb.emplace_back(d.outputs, 0.0F);
      }
      for (std::uint64_t step = 1; step <= o.iterations; ++step) {
        std::vector<float> xb, yb;
        for (std::size_t b = 0; b < o.batch_size; ++b) {
          auto row = static_cast<std::size_t>(rng.uniform() * static_cast<double>(n));
          row = std::min(row, n - 1);
          xb.insert(xb.end(), x.begin() + static_cast<std::ptrdiff_t>(row * f),
                    x.begin() + static_cast<std::ptrdiff_t>((row + 1) * f));
          yb.insert(yb.end(), y.begin() + static_cast<std::ptrdiff_t>(row * k),
                    y.begin() + static_cast<std::ptrdiff_t>((row + 1) * k));
        }
        std::vector<DenseLayer> grads;
        ASSERT_TRUE(mlp_loss(ref, xb, yb, o.batch_size, &grads).ok());
        for (std::size_t l = 0; l < ref.layers.size(); ++l) {
          adam_update(ref.layers[l].weights, grads[l].weights, mw[l].weights, vw[l].weights, step,
                      o.adam);
          adam_update(ref.layers[l].biases, grads[l].biases, mb[l], vb[l], step, o.adam);
        }
      }
      // Each step moves a parameter by at most about lr·|m^|; the two paths
      // differ only by float rounding in the products and sums.
      double worst = 0.0, moved = 0.0;
      for (std::size_t l = 0; l < ref.layers.size(); ++l) {
        const DenseLayer& t = trained->layers[l];
        const DenseLayer& e = ref.layers[l];
        ASSERT_EQ(t.weights.size(), e.weights.size());
        for (std::size_t i = 0; i < e.weights.size(); ++i)
          worst = std::max(worst, static_cast<double>(std::fabs(t.weights[i] - e.weights[i])));
        for (std::size_t i = 0; i < e.biases.size(); ++i) {
          worst = std::max(worst, static_cast<double>(std::fabs(t.biases[i] - e.biases[i])));
          moved = std::max(moved, static_cast<double>(std::fabs(e.biases[i])));
        }
      }
      EXPECT_GT(moved, 1e-3) << "the reference steps moved the biases";
      EXPECT_LT(worst, 2e-6) << "hidden " << static_cast<int>(c.hidden) << ", output "
                             << static_cast<int>(c.output) << ", " << threads
                             << " threads, variant " << variant;
    }
  }
}
