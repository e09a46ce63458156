// 40-byte sparse morph blend (deform/morph40.h, the character-rendering frame
// analysis §5) on a 1,048,576-vertex mesh with 64 targets, each touching 10 %
// of the vertices (104,858 distinct random vertices, records sorted by vertex
// as a baker emits them; targets drawn independently).
//
// Every case reports the same byte count, the touched bytes: each record
// read (40 B) plus its vertex read and written back (36 B each way), so
// Google Benchmark's bytes_per_second compares directly with BM_Memcpy, a
// memcpy of the record and vertex bytes (the physical bound on the machine).
// Goal: threaded ≥ 80 % of memcpy. Run with
// --benchmark_repetitions=5 and read the medians.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "charkit/deform/morph40.h"

namespace {

using charkit::deform::Morph40Job;
using charkit::deform::Morph40Target;

constexpr std::uint32_t kVertices = 1u << 20;
constexpr std::uint32_t kTargets = 64;
constexpr std::uint32_t kTouched = (kVertices + 9) / 10;

struct Data {
  std::vector<std::vector<std::uint8_t>> records;
  std::vector<Morph40Target> targets;
  std::vector<std::uint8_t> vertices;
  std::int64_t touched_bytes = 0;

  Data() : vertices(std::size_t{kVertices} * 40, 0) {
    std::mt19937 rng(9);
    std::uniform_real_distribution<float> val(-0.01F, 0.01F);
    std::vector<std::uint32_t> all(kVertices);
    std::iota(all.begin(), all.end(), 0u);
    for (std::uint32_t t = 0; t < kTargets; ++t) {
      std::shuffle(all.begin(), all.end(), rng);
      std::vector<std::uint32_t> pick(all.begin(), all.begin() + kTouched);
      std::sort(pick.begin(), pick.end());
      std::vector<std::uint8_t> r(std::size_t{kTouched} * 40);
      for (std::uint32_t k = 0; k < kTouched; ++k) {
        std::memcpy(r.data() + std::size_t{k} * 40, &pick[k], 4);
        float d[9];
        for (float& x : d) x = val(rng);
        std::memcpy(r.data() + std::size_t{k} * 40 + 4, d, 36);
      }
      records.push_back(std::move(r));
    }
    for (std::uint32_t t = 0; t < kTargets; ++t)
      targets.push_back({records[t], 1.0F / static_cast<float>(t + 1)});
    touched_bytes = std::int64_t{kTargets} * kTouched * (40 + 36 + 36);
  }
};

Data& data() {
  static Data d;
  return d;
}

void BM_Morph40Scalar(benchmark::State& state) {
  Data& d = data();
  Morph40Job job{kVertices, d.targets, d.vertices};
  for (auto _ : state) {
    benchmark::DoNotOptimize(job.run().ok());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * d.touched_bytes);
}

void BM_Morph40Threaded(benchmark::State& state) {
  Data& d = data();
  Morph40Job job{kVertices, d.targets, d.vertices};
  for (auto _ : state) {
    benchmark::DoNotOptimize(job.run({&charkit::core::default_executor()}).ok());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * d.touched_bytes);
}

void BM_Memcpy(benchmark::State& state) {
  Data& d = data();
  const std::size_t bytes = static_cast<std::size_t>(d.touched_bytes) / 2;  // read + write
  std::vector<std::uint8_t> src(bytes, 1);
  std::vector<std::uint8_t> dst(bytes, 0);
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), bytes);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * d.touched_bytes);
}

BENCHMARK(BM_Memcpy)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Morph40Scalar)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Morph40Threaded)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
