// Two revisions of the training step in one process, alternated run by run
// (bench/compare_train_revisions.sh builds it). On a shared VM the speed
// drifts by 5-10 % between separate benchmark runs, more than most changes
// to the step are worth; runs of both revisions interleaved in one process
// see the same drift, and the median of the per-round ratios is steady to
// about 1 %.
//
// Compiled three times: with CHARKIT_REVISION_WRAP=a (or b) next to that
// revision's deformer-module sources, all built with -Ddeformer=deformer_a
// (deformer_b; also -Dlearn=, the module's former name) so that both
// copies of charkit::deformer link into one program, it defines
// train_revision_a (_b); without it, the driver below.
#include <cstddef>

#if defined(CHARKIT_REVISION_WRAP)

#include <span>

#include "charkit/core/parallel.h"
#include "charkit/deformer/mlp.h"

#define CHARKIT_CAT2(a, b) a##b
#define CHARKIT_CAT(a, b) CHARKIT_CAT2(a, b)

// The benchmark's network (bench/mlp_bench.cpp): 2 x 128 ELU, batch 128.
// Returns 0 and the first weight of the trained network, or 1 on an error.
extern "C" int CHARKIT_CAT(train_revision_, CHARKIT_REVISION_WRAP)(
    const float* x, const float* y, std::size_t samples, std::size_t features, std::size_t outputs,
    std::size_t steps, charkit::core::ThreadPool* pool, std::size_t threads, float* first_weight) {
  using namespace charkit::deformer;
  MlpOptions o;
  o.hidden = {128, 128};
  o.hidden_activation = Activation::kELU;
  o.iterations = steps;
  o.batch_size = 128;
  o.threads = threads;
  o.executor = pool;
  auto m = train_mlp(std::span<const float>(x, samples * features),
                     std::span<const float>(y, samples * outputs), samples, features, outputs, o,
                     nullptr);
  if (!m) return 1;
  *first_weight = m->layers[0].weights[0];
  return 0;
}

#else

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "charkit/core/parallel.h"

extern "C" int train_revision_a(const float*, const float*, std::size_t, std::size_t, std::size_t,
                                std::size_t, charkit::core::ThreadPool*, std::size_t, float*);
extern "C" int train_revision_b(const float*, const float*, std::size_t, std::size_t, std::size_t,
                                std::size_t, charkit::core::ThreadPool*, std::size_t, float*);

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
}

}  // namespace

// Usage: train_revisions THREADS ROUNDS STEPS
int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s THREADS ROUNDS STEPS\n", argv[0]);
    return 2;
  }
  const auto threads = static_cast<std::size_t>(std::strtoul(argv[1], nullptr, 10));
  const int rounds = std::atoi(argv[2]);
  const auto steps = static_cast<std::size_t>(std::strtoul(argv[3], nullptr, 10));
  if (threads == 0 || rounds < 1 || steps == 0) {
    std::fprintf(stderr, "THREADS, ROUNDS and STEPS must be > 0\n");
    return 2;
  }
  // mlp_bench's shapes: 1,000 samples of 300 inputs, 128 outputs of a
  // smooth function of them.
  constexpr std::size_t kSamples = 1000, kFeatures = 300, kOutputs = 128;
  std::mt19937 gen(2024);
  std::uniform_real_distribution<float> ux(-0.8F, 0.8F), uw(-0.17F, 0.17F);
  std::vector<float> x(kSamples * kFeatures), y(kSamples * kOutputs), w(kFeatures * kOutputs);
  for (float& v : x) v = ux(gen);
  for (float& v : w) v = uw(gen);
  for (std::size_t i = 0; i < kSamples; ++i)
    for (std::size_t o = 0; o < kOutputs; ++o) {
      double s = 0.0;
      for (std::size_t f = 0; f < kFeatures; ++f)
        s += double{x[i * kFeatures + f]} * double{w[f * kOutputs + o]};
      y[i * kOutputs + o] = static_cast<float>(std::tanh(s));
    }
  charkit::core::ThreadPool pool(threads);
  std::vector<double> ta, tb, ratio;
  float wa = 0.0F, wb = 0.0F;
  for (int r = 0; r < rounds; ++r) {
    double t[2] = {0.0, 0.0};
    for (int i = 0; i < 2; ++i) {
      const int which = r % 2 == 0 ? i : 1 - i;  // a then b, then b then a
      const auto start = std::chrono::steady_clock::now();
      const int rc = which == 0 ? train_revision_a(x.data(), y.data(), kSamples, kFeatures,
                                                   kOutputs, steps, &pool, threads, &wa)
                                : train_revision_b(x.data(), y.data(), kSamples, kFeatures,
                                                   kOutputs, steps, &pool, threads, &wb);
      const auto end = std::chrono::steady_clock::now();
      if (rc != 0) {
        std::fprintf(stderr, "revision %c: training failed\n", which == 0 ? 'a' : 'b');
        return 1;
      }
      t[which] = std::chrono::duration<double, std::micro>(end - start).count() /
                 static_cast<double>(steps);
    }
    ta.push_back(t[0]);
    tb.push_back(t[1]);
    ratio.push_back(t[1] / t[0]);
  }
  std::printf(
      "threads %zu, %d rounds of %zu steps: A %.1f us/step, B %.1f us/step (medians); "
      "B/A per round: median %.4f, quartiles %.4f-%.4f; first weight %s\n",
      threads, rounds, steps, median(ta), median(tb), median(ratio), quantile(ratio, 0.25),
      quantile(ratio, 0.75), std::memcmp(&wa, &wb, sizeof wa) == 0 ? "equal" : "differs");
  return 0;
}

#endif
