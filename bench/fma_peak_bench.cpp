// One core's float32 FMA throughput: the ceiling every GEMM-bound figure in
// bench/RESULTS.md is measured against (the MLP training goal
// asks for more than this ceiling; see RESULTS.md). 24 independent
// accumulator chains of 256- or 512-bit FMAs, fully unrolled, so that
// neither latency nor memory limits them. Compiled for AVX2+FMA and
// AVX-512 with target attributes; skipped where the CPU lacks them.
// Counter: FLOP/s (2 FLOP per FMA lane), printed with an SI prefix (G).
#include <immintrin.h>

#include <benchmark/benchmark.h>

namespace {

constexpr int kChains = 24;
constexpr long kRounds = 1 << 16;

// Runtime values: the compiler cannot fold the chains.
volatile float g_mul = 0.9999999f, g_add = 1e-7f, g_start = 1.0f;

__attribute__((target("avx2,fma"))) float fma256(long rounds) {
  __m256 a[kChains];
  for (int k = 0; k < kChains; ++k) a[k] = _mm256_set1_ps(g_start + static_cast<float>(k) * 1e-7f);
  const __m256 m = _mm256_set1_ps(g_mul), c = _mm256_set1_ps(g_add);
  for (long i = 0; i < rounds; ++i) {
#pragma GCC unroll 24
    for (int k = 0; k < kChains; ++k) a[k] = _mm256_fmadd_ps(a[k], m, c);
  }
  __m256 s = a[0];
  for (int k = 1; k < kChains; ++k) s = _mm256_add_ps(s, a[k]);
  float out[8];
  _mm256_storeu_ps(out, s);
  return out[0];
}

__attribute__((target("avx512f"))) float fma512(long rounds) {
  __m512 a[kChains];
  for (int k = 0; k < kChains; ++k) a[k] = _mm512_set1_ps(g_start + static_cast<float>(k) * 1e-7f);
  const __m512 m = _mm512_set1_ps(g_mul), c = _mm512_set1_ps(g_add);
  for (long i = 0; i < rounds; ++i) {
#pragma GCC unroll 24
    for (int k = 0; k < kChains; ++k) a[k] = _mm512_fmadd_ps(a[k], m, c);
  }
  __m512 s = a[0];
  for (int k = 1; k < kChains; ++k) s = _mm512_add_ps(s, a[k]);
  float out[16];
  _mm512_storeu_ps(out, s);
  return out[0] + out[15];
}

void BM_Fma256(benchmark::State& state) {
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) {
    state.SkipWithError("no AVX2/FMA");
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(fma256(kRounds));
  state.counters["FLOP/s"] = benchmark::Counter(static_cast<double>(kRounds) * kChains * 8 * 2 *
                                                    static_cast<double>(state.iterations()) / 1e9,
                                                benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Fma256)->Unit(benchmark::kMicrosecond);

void BM_Fma512(benchmark::State& state) {
  if (!__builtin_cpu_supports("avx512f")) {
    state.SkipWithError("no AVX-512");
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize(fma512(kRounds));
  state.counters["FLOP/s"] = benchmark::Counter(static_cast<double>(kRounds) * kChains * 16 * 2 *
                                                    static_cast<double>(state.iterations()) / 1e9,
                                                benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Fma512)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
