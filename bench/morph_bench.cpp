// §10 morph evaluation at the §7 maximum vertex count: 1,048,576 vertices,
// 64 channels, each evaluated between two frames (so both frames are read),
// each frame touching 10 % of the vertices (104,858 random distinct indices,
// sorted ascending as a writer emits them; frames drawn independently).
//
// Every case reports the same byte count — the record bytes read
// (64 × 2 × 104,858 × 16) plus the output positions (1,048,576 × 12) — so
// Google Benchmark's bytes_per_second compares directly with BM_Memcpy, a
// plain memcpy of exactly those bytes into a buffer of the same size. Goals:
// one thread ≥ 85 % of memcpy, two threads ≥ 1.7× one.
// bench/compare_morph.sh runs it several times and reports both ratios.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "charkit/deform/sparse_morph.h"

namespace {

using charkit::deform::SparseChannel;
using charkit::deform::SparseMorphJob;
namespace core = charkit::core;
namespace detail = charkit::deform::detail;

constexpr std::uint32_t kVertices = 1u << 20;
constexpr std::uint32_t kChannels = 64;
constexpr std::uint32_t kTouched = (kVertices + 9) / 10;  // 10 %, rounded up

struct Data {
  std::vector<std::uint8_t> base;
  std::vector<std::vector<std::uint8_t>> frames;  // 2 per channel
  std::vector<SparseChannel> channels;
  std::vector<float> deltas, out;
  std::size_t record_bytes = 0;

  Data() {
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> val(-0.01f, 0.01f);
    base.resize(static_cast<std::size_t>(kVertices) * 12);
    for (std::size_t i = 0; i < base.size() / 4; ++i) {
      const float f = val(rng) * 100.0f;
      std::memcpy(base.data() + i * 4, &f, 4);
    }
    std::vector<std::uint32_t> ids(kVertices);
    std::iota(ids.begin(), ids.end(), 0u);
    for (std::uint32_t f = 0; f < kChannels * 2; ++f) {
      // A partial Fisher–Yates shuffle picks kTouched distinct vertices.
      for (std::uint32_t i = 0; i < kTouched; ++i) {
        std::uniform_int_distribution<std::uint32_t> pick(i, kVertices - 1);
        std::swap(ids[i], ids[pick(rng)]);
      }
      std::vector<std::uint32_t> chosen(ids.begin(), ids.begin() + kTouched);
      std::sort(chosen.begin(), chosen.end());
      std::vector<std::uint8_t> rec(static_cast<std::size_t>(kTouched) * 16);
      for (std::uint32_t i = 0; i < kTouched; ++i) {
        const float d[3] = {val(rng), val(rng), val(rng)};
        std::memcpy(rec.data() + static_cast<std::size_t>(i) * 16, &chosen[i], 4);
        std::memcpy(rec.data() + static_cast<std::size_t>(i) * 16 + 4, d, 12);
      }
      record_bytes += rec.size();
      frames.push_back(std::move(rec));
    }
    for (std::uint32_t c = 0; c < kChannels; ++c) {
      SparseChannel ch;
      ch.frames[0] = {frames[2 * c], 0.75f};  // e.g. tick 250 between 0 and 1000
      ch.frames[1] = {frames[2 * c + 1], 0.25f};
      ch.frame_count = 2;
      channels.push_back(ch);
    }
    deltas.resize(static_cast<std::size_t>(kVertices) * 3);
    out.resize(static_cast<std::size_t>(kVertices) * 3);
  }
  std::size_t touched_bytes() const { return record_bytes + out.size() * sizeof(float); }
  SparseMorphJob job() {
    SparseMorphJob j;
    j.vertex_count = kVertices;
    j.base = base;
    j.channels = channels;
    j.deltas = deltas;
    j.out = out;
    return j;
  }
};

Data& data() {
  static Data d;
  return d;
}

void BM_MorphReference(benchmark::State& state) {
  Data& d = data();
  SparseMorphJob j = d.job();
  if (!j.validate()) state.SkipWithError("invalid job");
  for (auto _ : state) {
    auto s = detail::run_sparse_morph_reference(j);
    benchmark::DoNotOptimize(s);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * d.touched_bytes()));
}

void BM_MorphFast(benchmark::State& state) {
  Data& d = data();
  SparseMorphJob j = d.job();
  const auto threads = static_cast<std::size_t>(state.range(0));
  const core::RunOptions run{threads > 1 ? &core::default_executor() : nullptr, threads};
  for (auto _ : state) {
    auto s = j.run(run);
    benchmark::DoNotOptimize(s);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * d.touched_bytes()));
}

void BM_Memcpy(benchmark::State& state) {
  Data& d = data();
  std::vector<std::uint8_t> dst(d.touched_bytes());
  for (auto _ : state) {
    std::size_t at = 0;
    for (const auto& f : d.frames) {
      std::memcpy(dst.data() + at, f.data(), f.size());
      at += f.size();
    }
    std::memcpy(dst.data() + at, d.base.data(), d.out.size() * sizeof(float));
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * d.touched_bytes()));
}

BENCHMARK(BM_MorphReference)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_MorphFast)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Memcpy)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
