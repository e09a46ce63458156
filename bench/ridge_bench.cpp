// Ridge solve of the linear pose deformer at game-character scale: 10,000
// vertices (30,000 outputs) x 300 features (100 bones x 3), 600 samples,
// and one allocation-free evaluation of that model.
#include <benchmark/benchmark.h>

#include <vector>

#include "charkit/deformer/detail/prng.h"
#include "charkit/deformer/ridge.h"

using namespace charkit::deformer;

namespace {

struct Problem {
  std::size_t samples, features, outputs;
  std::vector<float> x, y;
};

Problem make_problem(std::size_t samples, std::size_t features, std::size_t vertices) {
  Problem p{samples, features, 3 * vertices, {}, {}};
  Rng r(2024);
  p.x.resize(samples * features);
  p.y.resize(samples * p.outputs);
  for (float& v : p.x) v = static_cast<float>(r.uniform(-0.8, 0.8));
  for (float& v : p.y) v = static_cast<float>(r.uniform(-0.01, 0.01));
  return p;
}

void BM_RidgeSolve(benchmark::State& state) {
  const Problem p = make_problem(static_cast<std::size_t>(state.range(0)), 300, 10000);
  RidgeOptions o;
  o.lambda = 1e-3;
  for (auto _ : state) {
    auto m = fit_ridge(p.x, p.y, p.samples, p.features, p.outputs, o);
    if (!m) state.SkipWithError(m.error().message.c_str());
    benchmark::DoNotOptimize(m);
  }
  state.counters["vertices"] = 10000;
  state.counters["features"] = 300;
}
BENCHMARK(BM_RidgeSolve)->Arg(600)->Unit(benchmark::kMillisecond);

void BM_LinearEvaluate(benchmark::State& state) {
  const Problem p = make_problem(400, 300, 10000);
  auto m = fit_ridge(p.x, p.y, p.samples, p.features, p.outputs);
  if (!m) {
    state.SkipWithError(m.error().message.c_str());
    return;
  }
  std::vector<float> out(p.outputs);
  const std::span<const float> features(p.x.data(), p.features);
  for (auto _ : state) {
    if (!m->evaluate(features, out)) state.SkipWithError("size mismatch");
    benchmark::DoNotOptimize(out.data());
  }
}
BENCHMARK(BM_LinearEvaluate)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
