// BEM validation throughput on a ~256 MiB package of zstd payloads, against
// plain zstd decoding of the same frames (the floor: validation must decode
// every payload once). bench/compare_zstd.sh does the same with the real
// `charkit` and `zstd` programs and reports peak memory.
//
//   bem_validate_bench                 run the Google Benchmark cases
//   bem_validate_bench --write DIR     write DIR/big.bem and DIR/frames/NNNN.zst, then exit
#include <benchmark/benchmark.h>
#include <zstd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

#include "big_package.h"
#include "charkit/bem/container.h"
#include "charkit/bem/validate.h"

namespace {

using charkit::bench::BigPackage;

const BigPackage& package() {
  static const BigPackage p = charkit::bench::make_big_package();
  return p;
}

// The payload frames as spans into the package file.
std::vector<charkit::core::Bytes> frames(const BigPackage& p) {
  charkit::core::Report report;
  auto pkg = charkit::bem::open_binary(p.file, report);
  std::vector<charkit::core::Bytes> out;
  if (!pkg) return out;
  for (const auto& info : pkg->payloads())
    out.push_back(charkit::core::Bytes(p.file).subspan(info.offset, info.stored_size));
  return out;
}

// Arg: ValidateOptions::threads (wall time: the pieces run on other threads).
void BM_ValidatePackage(benchmark::State& state) {
  const BigPackage& p = package();
  charkit::bem::ValidateOptions o;
  o.threads = static_cast<unsigned>(state.range(0));
  for (auto _ : state) {
    auto r = charkit::bem::validate_package(p.file, o);
    if (!r.valid()) state.SkipWithError(r.report.to_text("big.bem").c_str());
    benchmark::DoNotOptimize(r);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * p.decoded_total));
}

void BM_ZstdDecodeFrames(benchmark::State& state) {
  const BigPackage& p = package();
  auto fs = frames(p);
  std::vector<std::uint8_t> buf(p.largest_decoded);
  ZSTD_DCtx* dctx = ZSTD_createDCtx();
  for (auto _ : state) {
    for (auto f : fs) {
      std::size_t n = ZSTD_decompressDCtx(dctx, buf.data(), buf.size(), f.data(), f.size());
      if (ZSTD_isError(n)) state.SkipWithError(ZSTD_getErrorName(n));
      benchmark::DoNotOptimize(buf.data());
    }
  }
  ZSTD_freeDCtx(dctx);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * p.decoded_total));
}

BENCHMARK(BM_ValidatePackage)
    ->Arg(1)
    ->Arg(2)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond)
    ->Repetitions(5)
    ->ReportAggregatesOnly(true);
BENCHMARK(BM_ZstdDecodeFrames)
    ->Unit(benchmark::kMillisecond)
    ->Repetitions(5)
    ->ReportAggregatesOnly(true);

bool write_file(const std::filesystem::path& path, charkit::core::Bytes bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  return static_cast<bool>(out);
}

int write_package(const std::filesystem::path& dir) {
  const BigPackage& p = package();
  std::filesystem::create_directories(dir / "frames");
  if (!write_file(dir / "big.bem", p.file)) return 2;
  auto fs = frames(p);
  for (std::size_t i = 0; i < fs.size(); ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "%04zu.zst", i);
    if (!write_file(dir / "frames" / name, fs[i])) return 2;
  }
  std::cout << "file_bytes=" << p.file.size() << " payloads=" << fs.size()
            << " decoded_bytes=" << p.decoded_total << " largest_decoded=" << p.largest_decoded
            << " second_largest_decoded=" << p.second_largest_decoded << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "--write") == 0) return write_package(argv[2]);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
