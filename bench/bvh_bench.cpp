// BVH → MediaPipe-33 NDJSON throughput on a generated 100,000-frame file
// (mocapbank-style hierarchy, 19 joints, 60 channels, sinusoidal channels).
//
//   bvh_bench --benchmark_repetitions=5      frames/s of the full convert
//   bvh_bench --write-bvh FILE [FRAMES]      write the file, e.g. for
//                                            /usr/bin/time -v charkit motion convert FILE -o
//                                            /dev/null
#include <benchmark/benchmark.h>

#include <unistd.h>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

#include "charkit/core/mapped_file.h"
#include "charkit/motion/convert.h"

namespace {

struct JointSpec {
  const char* name;
  int depth;
  double x, y, z;
  bool end_site_after;  // an End Site closes this joint
};

// The mocapbank hierarchy of tests/data/bvh/test_mocapbank.bvh (offsets rounded).
constexpr JointSpec kJoints[] = {{"Hips", 0, 0, 0, 0, false},
                                 {"Chest", 1, -0.17, 10.29, 0.13, false},
                                 {"Chest2", 2, 0.32, 15.82, -2.64, false},
                                 {"LeftCollar", 3, -0.07, 16.88, 0.30, false},
                                 {"LeftShoulder", 4, 16.01, -3.08, 2.05, false},
                                 {"LeftElbow", 5, 2.62, -25.42, 1.72, false},
                                 {"LeftWrist", 6, 2.36, -22.47, 1.05, true},
                                 {"RightCollar", 3, -0.07, 16.88, 0.30, false},
                                 {"RightShoulder", 4, -16.01, -3.08, 2.05, false},
                                 {"RightElbow", 5, -2.62, -25.42, 1.72, false},
                                 {"RightWrist", 6, -2.36, -22.47, 1.05, true},
                                 {"Neck", 3, 0.0, 20.0, 0.5, false},
                                 {"Head", 4, 0.0, 10.0, 1.0, true},
                                 {"LeftHip", 1, 9.5, -2.0, 0.5, false},
                                 {"LeftKnee", 2, 0.5, -42.0, 1.0, false},
                                 {"LeftAnkle", 3, 0.3, -40.0, -2.0, true},
                                 {"RightHip", 1, -9.5, -2.0, 0.5, false},
                                 {"RightKnee", 2, -0.5, -42.0, 1.0, false},
                                 {"RightAnkle", 3, -0.3, -40.0, -2.0, true}};

std::string hierarchy() {
  std::string s = "HIERARCHY\n";
  int open = 0;
  auto indent = [](int d) { return std::string(static_cast<std::size_t>(d) * 2, ' '); };
  for (const auto& j : kJoints) {
    while (open > j.depth) s += indent(--open) + "}\n";
    char line[160];
    s += indent(j.depth) + (j.depth == 0 ? "ROOT " : "JOINT ") + j.name + "\n" + indent(j.depth) +
         "{\n";
    std::snprintf(line, sizeof line, "%sOFFSET %.4f %.4f %.4f\n", indent(j.depth + 1).c_str(), j.x,
                  j.y, j.z);
    s += line;
    s += indent(j.depth + 1) +
         (j.depth == 0 ? "CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n"
                       : "CHANNELS 3 Zrotation Xrotation Yrotation\n");
    open = j.depth + 1;
    if (j.end_site_after)
      s += indent(open) + "End Site\n" + indent(open) + "{\n" + indent(open + 1) +
           "OFFSET 0.0000 -5.0000 0.0000\n" + indent(open) + "}\n";
  }
  while (open > 0) s += indent(--open) + "}\n";
  return s;
}

bool write_bvh(const std::string& path, std::size_t frames) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return false;
  std::string h = hierarchy();
  std::fprintf(f, "%sMOTION\nFrames: %zu\nFrame Time: 0.0083333\n", h.c_str(), frames);
  constexpr std::size_t kChannels = 6 + 18 * 3;
  for (std::size_t i = 0; i < frames; ++i) {
    const double t = static_cast<double>(i) / 120.0;
    std::string row;
    char buf[32];
    for (std::size_t c = 0; c < kChannels; ++c) {
      double v = c < 3 ? 40.0 * std::sin(0.3 * t + static_cast<double>(c)) + (c == 1 ? 90.0 : 0.0)
                       : 35.0 * std::sin(1.7 * t + 0.37 * static_cast<double>(c));
      std::snprintf(buf, sizeof buf, c ? " %.4f" : "%.4f", v);
      row += buf;
    }
    row += '\n';
    std::fwrite(row.data(), 1, row.size(), f);
  }
  return std::fclose(f) == 0;
}

void BM_ConvertBvh(benchmark::State& state) {
  const auto frames = static_cast<std::size_t>(state.range(0));
  const std::string path = "/tmp/charkit_bvh_bench_" + std::to_string(getpid()) + ".bvh";
  if (!write_bvh(path, frames)) {
    state.SkipWithError("cannot write the BVH file");
    return;
  }
  auto file = charkit::core::MappedFile::open(path);
  std::remove(path.c_str());  // the mapping keeps the data
  if (!file) {
    state.SkipWithError("cannot map the BVH file");
    return;
  }
  std::size_t bytes = 0;
  for (auto _ : state) {
    charkit::motion::ConvertOptions o;
    o.hints = &*file;
    bytes = 0;
    auto r = charkit::motion::convert_bvh(charkit::core::as_chars(file->bytes()), o,
                                          [&](std::string_view s) {
                                            bytes += s.size();
                                            return true;
                                          });
    if (!r || r->frames != frames) state.SkipWithError("conversion failed");
    benchmark::DoNotOptimize(bytes);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * frames));
  state.counters["input_MB"] = static_cast<double>(file->size()) / 1e6;
  state.counters["output_MB"] = static_cast<double>(bytes) / 1e6;
}
BENCHMARK(BM_ConvertBvh)->Arg(100000)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 3 && std::strcmp(argv[1], "--write-bvh") == 0) {
    std::size_t frames = argc >= 4 ? std::stoul(argv[3]) : 100000;
    if (!write_bvh(argv[2], frames)) {
      std::fprintf(stderr, "cannot write %s\n", argv[2]);
      return 2;
    }
    return 0;
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
