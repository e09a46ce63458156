// BC7 encoding throughput (scene/texture_encode.h) in megapixels per second:
// a 512×512 image of smooth gradients with noise and a few hard edges (the
// mix of a painted character texture), encoded on one thread with every
// mode (1, 5, 6) and with mode 6 alone, and on the process-wide pool.
// Run with --benchmark_repetitions=5 and read the medians.
#include <benchmark/benchmark.h>

#include <random>

#include "charkit/core/parallel.h"
#include "charkit/scene/texture_encode.h"

namespace {

using charkit::scene::Bc7EncodeOptions;
using charkit::scene::RgbaImage;

RgbaImage test_image() {
  RgbaImage img;
  img.width = img.height = 512;
  img.pixels.resize(std::size_t{img.width} * img.height * 4);
  std::mt19937 rng(3);
  for (std::uint32_t y = 0; y < img.height; ++y)
    for (std::uint32_t x = 0; x < img.width; ++x) {
      const bool edge = ((x / 37) + (y / 53)) % 2 == 0;
      std::uint8_t* p = img.pixels.data() + img.pixel_offset(x, y);
      p[0] = static_cast<std::uint8_t>((x / 2 + (edge ? 60 : 0) + rng() % 6) & 0xFF);
      p[1] = static_cast<std::uint8_t>((y / 2 + rng() % 6) & 0xFF);
      p[2] = static_cast<std::uint8_t>(((x + y) / 4 + (edge ? 0 : 90)) & 0xFF);
      p[3] = 255;
    }
  return img;
}

void run(benchmark::State& state, const Bc7EncodeOptions& options, charkit::core::Executor* ex) {
  const RgbaImage img = test_image();
  for (auto _ : state) {
    auto blocks = charkit::scene::encode_bc7(img, options, ex);
    benchmark::DoNotOptimize(blocks.data());
  }
  state.counters["MPix/s"] = benchmark::Counter(
      static_cast<double>(img.width) * img.height * static_cast<double>(state.iterations()) / 1e6,
      benchmark::Counter::kIsRate);
}

void BM_Bc7AllModesOneThread(benchmark::State& state) {
  run(state, {}, &charkit::core::serial_executor());
}
void BM_Bc7Mode6OneThread(benchmark::State& state) {
  Bc7EncodeOptions o;
  o.modes = 1u << 6;
  run(state, o, &charkit::core::serial_executor());
}
void BM_Bc7AllModesPool(benchmark::State& state) {
  run(state, {}, nullptr);
}

BENCHMARK(BM_Bc7AllModesOneThread)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Bc7Mode6OneThread)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Bc7AllModesPool)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
