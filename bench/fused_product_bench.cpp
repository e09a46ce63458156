// The products of one training step of bench/mlp_bench.cpp's network (300
// inputs, 2 x 128 ELU, 128 outputs, batch 128) one at a time, each at its
// shape and with its epilogue as train_mlp runs it on detail::fused_product
// (docs/deformer/batch.md, "Products with their epilogues"), plus the same
// shapes with no epilogue (what the epilogues cost). Counter
// FLOP/s: 2·rows·depth·cols per product; bench/compare_train_peak.sh
// --products divides it by BM_Fma512 measured in the same run.
//
// The batch's sample and target rows are drawn from 1,000 rows before the
// timing, 64 draws used in turn, so that a product reads rows spread over
// the samples as in a step without the drawing being timed.
#include <benchmark/benchmark.h>

#include <cstddef>
#include <string>
#include <vector>

#include "charkit/deformer/detail/batch_kernels.h"
#include "charkit/deformer/detail/prng.h"

using namespace charkit::deformer;
using namespace charkit::deformer::detail;

namespace {

constexpr std::size_t kSamples = 1000, kFeatures = 300, kHidden = 128, kBatch = 128, kDraws = 64;

struct Operands {
  AlignedFloats xs, ys, w1, w2, wt, bias, a1, a2, dz1, dz2, out, m1, v1, m2, v2, sums;
  std::vector<const float*> xrows, trows, a1rows, dzrows;  // kDraws × kBatch for the first two
  std::vector<float> lanes;
  AdamStep adam{};
};

AlignedFloats filled(std::size_t n, Rng& r, double lo, double hi) {
  AlignedFloats v(n);
  for (float& f : v) f = static_cast<float>(r.uniform(lo, hi));
  return v;
}

Operands& operands() {
  static Operands o = [] {
    Operands s;
    Rng r(22);
    s.xs = filled(kSamples * kFeatures, r, -1.0, 1.0);
    s.ys = filled(kSamples * kHidden, r, -0.5, 0.5);
    s.w1 = filled(kFeatures * kHidden, r, -0.1, 0.1);
    s.w2 = filled(kHidden * kHidden, r, -0.15, 0.15);
    s.wt = filled(kHidden * kHidden, r, -0.15, 0.15);
    s.bias = filled(kHidden, r, -0.1, 0.1);
    s.a1 = filled(kBatch * kHidden, r, -1.0, 2.0);
    s.a2 = filled(kBatch * kHidden, r, -1.0, 2.0);
    s.dz1 = filled(kBatch * kHidden, r, -0.01, 0.01);
    s.dz2 = filled(kBatch * kHidden, r, -0.01, 0.01);
    s.out = AlignedFloats(kBatch * kHidden);
    s.m1 = filled(kFeatures * kHidden, r, -1e-3, 1e-3);
    s.v1 = filled(kFeatures * kHidden, r, 0.0, 1e-5);
    s.m2 = filled(kHidden * kHidden, r, -1e-3, 1e-3);
    s.v2 = filled(kHidden * kHidden, r, 0.0, 1e-5);
    s.sums = AlignedFloats(kHidden);
    s.lanes.assign(kBatch * 16, 0.0F);
    s.xrows.resize(kDraws * kBatch);
    s.trows.resize(kDraws * kBatch);
    for (std::size_t i = 0; i < kDraws * kBatch; ++i) {
      const auto row = static_cast<std::size_t>(r.uniform() * static_cast<double>(kSamples));
      s.xrows[i] = s.xs.data() + row * kFeatures;
      s.trows[i] = s.ys.data() + row * kHidden;
    }
    for (std::size_t b = 0; b < kBatch; ++b) {
      s.a1rows.push_back(s.a1.data() + b * kHidden);
      s.dzrows.push_back(s.dz2.data() + b * kHidden);
    }
    // Adam's constants at step 10 of the benchmark's settings; the weights
    // move by about 1e-3 per run, so thousands of runs stay finite.
    s.adam = adam_step_constants(0.9, 0.999, 1e-3, 1e-8, 10);
    return s;
  }();
  return o;
}

enum class Case {
  kForward1Elu,
  kForward2Elu,
  kForward2,
  kOutputResidual,
  kInputGradElu,
  kWeightGrad1Adam,
  kWeightGrad1,
  kWeightGrad2Adam,
  kWeightGrad2
};

// The product of one case; draw selects the batch's rows where it reads samples.
FusedProduct product(Case c, std::size_t draw) {
  Operands& s = operands();
  Operands& o = s;  // what the products write: outputs, weights, m and v
  FusedProduct p;
  p.rows = kBatch, p.depth = kHidden, p.cols = kHidden, p.ldb = kHidden, p.ldy = kHidden;
  p.x = s.a1rows.data();
  p.b = s.w2.data(), p.bias = s.bias.data(), p.y = o.out.data();
  switch (c) {
    case Case::kForward1Elu:
      p.x = s.xrows.data() + draw * kBatch, p.depth = kFeatures, p.b = s.w1.data();
      p.epilogue = FusedEpilogue::kElu;
      break;
    case Case::kForward2Elu:
      p.epilogue = FusedEpilogue::kElu;
      break;
    case Case::kForward2:
      break;
    case Case::kOutputResidual:
      p.epilogue = FusedEpilogue::kResidual;
      p.t = s.trows.data() + draw * kBatch, p.scale = 1e-4F, p.lanes = o.lanes.data();
      break;
    case Case::kInputGradElu:
      p.x = s.dzrows.data(), p.b = s.wt.data(), p.bias = nullptr;
      p.epilogue = FusedEpilogue::kEluGrad, p.e = s.a2.data(), p.lde = kHidden;
      break;
    case Case::kWeightGrad1Adam:
    case Case::kWeightGrad1:
      p.x = s.xrows.data() + draw * kBatch, p.layout = FusedRows::kPerK;
      p.rows = kFeatures, p.depth = kBatch, p.b = s.dz1.data(), p.bias = nullptr;
      if (c == Case::kWeightGrad1Adam) {
        p.epilogue = FusedEpilogue::kAdam, p.adam = &s.adam, p.column_sums = o.sums.data();
        p.y = o.w1.data(), p.m = o.m1.data(), p.v = o.v1.data();
      } else {
        p.y = o.m1.data();  // 300 × 128: the store needs a buffer that large
      }
      break;
    case Case::kWeightGrad2Adam:
    case Case::kWeightGrad2:
      p.layout = FusedRows::kPerK, p.b = s.dz2.data(), p.bias = nullptr;
      if (c == Case::kWeightGrad2Adam) {
        p.epilogue = FusedEpilogue::kAdam, p.adam = &s.adam, p.column_sums = o.sums.data();
        p.y = o.w2.data(), p.m = o.m2.data(), p.v = o.v2.data();
      }
      break;
  }
  return p;
}

void run(benchmark::State& state, Case c) {
  if (!fused_product_available()) {
    state.SkipWithError("no fused kernel on this CPU (AVX-512 and GCC needed)");
    return;
  }
  std::vector<FusedProduct> ps;
  for (std::size_t d = 0; d < kDraws; ++d) ps.push_back(product(c, d));
  std::size_t i = 0;
  for (auto _ : state) {
    fused_product(ps[i]);
    i = (i + 1) % kDraws;
    benchmark::ClobberMemory();
  }
  const FusedProduct& p = ps[0];
  const double flop = 2.0 * static_cast<double>(p.rows * p.depth * p.cols);
  state.counters["FLOP/s"] = benchmark::Counter(flop * static_cast<double>(state.iterations()),
                                                benchmark::Counter::kIsRate);
}

const int registered = [] {
  const std::pair<const char*, Case> cases[] = {
      {"Forward1Elu/128x300x128", Case::kForward1Elu},
      {"Forward2Elu/128x128x128", Case::kForward2Elu},
      {"Forward2NoEpilogue/128x128x128", Case::kForward2},
      {"OutputResidual/128x128x128", Case::kOutputResidual},
      {"InputGradElu/128x128x128", Case::kInputGradElu},
      {"WeightGrad1Adam/300x128x128", Case::kWeightGrad1Adam},
      {"WeightGrad1NoEpilogue/300x128x128", Case::kWeightGrad1},
      {"WeightGrad2Adam/128x128x128", Case::kWeightGrad2Adam},
      {"WeightGrad2NoEpilogue/128x128x128", Case::kWeightGrad2},
  };
  for (const auto& [name, c] : cases)
    benchmark::RegisterBenchmark((std::string("BM_FusedProduct/") + name).c_str(),
                                 [c = c](benchmark::State& st) { run(st, c); })
        ->Unit(benchmark::kMicrosecond);
  return 0;
}();

}  // namespace

BENCHMARK_MAIN();
