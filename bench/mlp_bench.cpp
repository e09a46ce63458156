// The MLP benchmarks: training (300 inputs = 100 bones x 3,
// 2 x 128 ELU hidden, 128 outputs, batch 128, 5000 Adam steps on 1000
// samples), single-pose inference of that network, allocation-free, and
// batched inference (bench/compare_mlp_batch.sh against onnxruntime-node).
// The same algorithm in numpy and PyTorch is in bench/peer/mlp_{numpy,torch}.py;
// bench/compare_mlp.sh runs all of them side by side.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <vector>

#include "charkit/core/parallel.h"
#include "charkit/deformer/detail/prng.h"
#include "charkit/deformer/mlp.h"
#include "charkit/deformer/onnx.h"

using namespace charkit::deformer;

namespace {

constexpr std::size_t kSamples = 1000, kFeatures = 300, kOutputs = 128;

struct Problem {
  std::vector<float> x, y;
};

Problem make_problem() {
  Problem p;
  Rng r(2024);
  p.x.resize(kSamples * kFeatures);
  for (float& v : p.x) v = static_cast<float>(r.uniform(-0.8, 0.8));
  std::vector<float> w(kFeatures * kOutputs);
  for (float& v : w) v = static_cast<float>(r.uniform(-0.17, 0.17));
  p.y.assign(kSamples * kOutputs, 0.0F);
  for (std::size_t i = 0; i < kSamples; ++i)
    for (std::size_t o = 0; o < kOutputs; ++o) {
      double s = 0;
      for (std::size_t f = 0; f < kFeatures; ++f)
        s += double{p.x[i * kFeatures + f]} * double{w[f * kOutputs + o]};
      p.y[i * kOutputs + o] = static_cast<float>(std::tanh(s));
    }
  return p;
}

MlpOptions options(std::size_t iterations) {
  MlpOptions o;
  o.hidden = {128, 128};
  o.hidden_activation = Activation::kELU;
  o.iterations = iterations;
  o.batch_size = 128;
  return o;
}

// Args: steps, threads (the step split over a pool of that many threads).
void BM_MlpTrain(benchmark::State& state) {
  const Problem p = make_problem();
  MlpOptions o = options(static_cast<std::size_t>(state.range(0)));
  const auto threads = static_cast<std::size_t>(state.range(1));
  charkit::core::ThreadPool pool(threads);
  o.threads = threads;
  o.executor = &pool;
  MlpTrainStats stats;
  for (auto _ : state) {
    auto m = train_mlp(p.x, p.y, kSamples, kFeatures, kOutputs, o, &stats);
    if (!m) state.SkipWithError(m.error().message.c_str());
    benchmark::DoNotOptimize(m);
  }
  state.counters["final_loss"] = stats.final_loss;
  // The products' FLOP per step (forward, weight gradients, and the input
  // gradients of every layer but the first): 44.8 M for this network. Set
  // against bench/fma_peak_bench (bench/compare_train_peak.sh).
  double macs = 0.0, first = 0.0;
  std::size_t in = kFeatures;
  for (std::size_t width : {o.hidden[0], o.hidden[1], kOutputs}) {
    const double layer = static_cast<double>(in) * static_cast<double>(width);
    if (in == kFeatures) first = layer;
    macs += layer;
    in = width;
  }
  const double flop_per_step = 2.0 * static_cast<double>(o.batch_size) * (3.0 * macs - first);
  state.counters["FLOP/s"] = benchmark::Counter(
      static_cast<double>(state.range(0)) * static_cast<double>(state.iterations()) * flop_per_step,
      benchmark::Counter::kIsRate);
  state.counters["steps_per_s"] = benchmark::Counter(
      static_cast<double>(state.range(0)) * static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate);
}
BENCHMARK(BM_MlpTrain)
    ->Args({5000, 1})
    ->Args({5000, 2})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->Repetitions(3);

void BM_MlpInferOnePose(benchmark::State& state) {
  const Problem p = make_problem();
  auto m = init_mlp(kFeatures, kOutputs, options(0));
  if (!m) {
    state.SkipWithError(m.error().message.c_str());
    return;
  }
  MlpEvaluator eval(*m);
  std::vector<float> out(kOutputs);
  std::size_t row = 0;
  for (auto _ : state) {
    const std::span<const float> in(p.x.data() + row * kFeatures, kFeatures);
    if (!eval.evaluate(in, out)) state.SkipWithError("size mismatch");
    benchmark::DoNotOptimize(out.data());
    row = (row + 1) % kSamples;
  }
}
BENCHMARK(BM_MlpInferOnePose)->Unit(benchmark::kMicrosecond);

// Batched inference (bake, preview, `deformer run` over many poses): the
// Arg rows per MlpEvaluator::evaluate_batch call; `us_per_pose` is the
// figure bench/compare_mlp_batch.sh sets against onnxruntime-node.
void BM_MlpInferBatch(benchmark::State& state) {
  const Problem p = make_problem();
  auto m = init_mlp(kFeatures, kOutputs, options(0));
  if (!m) {
    state.SkipWithError(m.error().message.c_str());
    return;
  }
  const auto rows = static_cast<std::size_t>(state.range(0));
  MlpEvaluator eval(*m);
  std::vector<float> in(rows * kFeatures), out(rows * kOutputs);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = p.x[i % p.x.size()];
  for (auto _ : state) {
    if (!eval.evaluate_batch(in, rows, out)) state.SkipWithError("size mismatch");
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["us_per_pose"] =
      benchmark::Counter(static_cast<double>(state.iterations() * rows),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  // 2·(300·128 + 128·128 + 128·128) flops per pose in the products.
  state.counters["GFLOPs"] =
      benchmark::Counter(static_cast<double>(state.iterations() * rows) * 2.0 *
                             (kFeatures * 128.0 + 128.0 * 128.0 + 128.0 * kOutputs),
                         benchmark::Counter::kIsRate, benchmark::Counter::kIs1000);
}
BENCHMARK(BM_MlpInferBatch)->Arg(1)->Arg(64)->Arg(256)->Arg(1024)->Unit(benchmark::kMicrosecond);

// The same kind of network through charkit's ONNX runner, on a file exported
// by PyTorch (bench/compare_mlp.sh sets CHARKIT_BENCH_ONNX; skipped without).
void BM_OnnxInferOnePose(benchmark::State& state) {
  const char* path = std::getenv("CHARKIT_BENCH_ONNX");
  if (path == nullptr) {
    state.SkipWithError("CHARKIT_BENCH_ONNX is not set");
    return;
  }
  std::ifstream f(path, std::ios::binary);
  const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(f)),
                                        std::istreambuf_iterator<char>());
  auto model = load_onnx(bytes);
  if (!model) {
    state.SkipWithError(model.error().message.c_str());
    return;
  }
  const Problem p = make_problem();
  std::vector<OnnxTensor> in(1);
  in[0] = OnnxTensor::from_f32({1, static_cast<std::int64_t>(kFeatures)},
                               std::vector<float>(p.x.begin(), p.x.begin() + kFeatures));
  for (auto _ : state) {
    auto out = model->run(in);
    if (!out) state.SkipWithError(out.error().message.c_str());
    benchmark::DoNotOptimize(out);
  }
}
BENCHMARK(BM_OnnxInferOnePose)->Unit(benchmark::kMicrosecond);

// charkit's ONNX runner with Arg rows per run on CHARKIT_BENCH_ONNX_BATCH
// (bench/peer/mlp_onnx_batch.py: a dynamic batch axis).
void BM_OnnxInferBatch(benchmark::State& state) {
  const char* path = std::getenv("CHARKIT_BENCH_ONNX_BATCH");
  if (path == nullptr) {
    state.SkipWithError("CHARKIT_BENCH_ONNX_BATCH is not set");
    return;
  }
  std::ifstream f(path, std::ios::binary);
  const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(f)),
                                        std::istreambuf_iterator<char>());
  auto model = load_onnx(bytes);
  if (!model) {
    state.SkipWithError(model.error().message.c_str());
    return;
  }
  const Problem p = make_problem();
  const auto rows = static_cast<std::size_t>(state.range(0));
  std::vector<float> in(rows * kFeatures);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = p.x[i % p.x.size()];
  for (auto _ : state) {
    std::size_t outputs = 0;
    auto out = run_onnx_rows(*model, in, rows, kFeatures, &outputs);
    if (!out) state.SkipWithError(out.error().message.c_str());
    benchmark::DoNotOptimize(out);
  }
  state.counters["us_per_pose"] =
      benchmark::Counter(static_cast<double>(state.iterations() * rows),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_OnnxInferBatch)->Arg(64)->Arg(256)->Arg(1024)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
