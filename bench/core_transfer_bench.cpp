// What it costs a core to use cache lines another core has just used: the
// ceiling of the two-thread training (bench/RESULTS.md), where in
// every step each core reads the weights the other core's Adam has just
// updated, and writes rows (activations, dz) and weights the other core
// has read since it last wrote them.
//
// Two threads: the benchmark's, pinned to the first CPU of the process's
// affinity mask and timed, and a helper pinned to the second, which touches
// the buffer first (untimed) in every iteration:
//  - BM_Lines/ReadAfterOtherWrote: the helper writes every line, then the timed
//    thread reads one word of every line (the lines come from the other
//    core's cache);
//  - BM_Lines/WriteAfterOtherRead: the helper reads every line the timed thread
//    wrote, then the timed thread writes every line again (each line must
//    be taken back from the other core's cache first);
//  - BM_Lines/ReadOwn, BM_Lines/WriteOwn: the same passes with a helper that does
//    nothing (the lines stay in the timed core's L1/L2).
// Counter ns_per_line. Argument (the last part of the name): the buffer in KiB (142: half the
// training network's 285 KiB of weights; 32: one layer's dz or activations of half the batch).
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

#include <benchmark/benchmark.h>

#include "charkit/deformer/detail/batch_kernels.h"

namespace {

constexpr std::size_t kLine = 64;
constexpr std::size_t kWords = kLine / sizeof(std::uint32_t);

/// The first two CPUs this process may run on (false when there is one).
bool two_cpus(int* a, int* b) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return false;
  int found = 0;
  for (int c = 0; c < CPU_SETSIZE && found < 2; ++c)
    if (CPU_ISSET(c, &set)) (found == 0 ? *a : *b) = c, ++found;
  return found == 2;
}

bool pin_self(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

/// One word of every line read; the loads do not depend on each other.
std::uint32_t read_lines(const std::uint32_t* p, std::size_t lines) {
  std::uint32_t acc = 0;
  for (std::size_t i = 0; i < lines; ++i) acc ^= p[i * kWords];
  return acc;
}

/// Every word of every line written, then a full fence, so that the time
/// includes taking ownership of the last lines (the store buffer drained).
void write_lines(std::uint32_t* p, std::size_t lines, std::uint32_t value) {
  for (std::size_t i = 0; i < lines * kWords; ++i) p[i] = value;
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

enum class Touch { kNothing, kRead, kWrite };

/// The helper thread on the second CPU: waits for a request, touches the
/// buffer as asked, reports back.
class Helper {
 public:
  Helper(int cpu, std::uint32_t* buf, std::size_t lines) : buf_(buf), lines_(lines) {
    thread_ = std::thread([this, cpu] {
      pinned_.store(pin_self(cpu) ? 1 : -1);
      for (;;) {
        int r;
        while ((r = request_.load(std::memory_order_acquire)) == 0) {
        }
        if (r < 0) return;
        const auto t = static_cast<Touch>(r - 1);
        if (t == Touch::kRead) sink_.fetch_xor(read_lines(buf_, lines_), std::memory_order_relaxed);
        if (t == Touch::kWrite) write_lines(buf_, lines_, ++value_);
        request_.store(0, std::memory_order_release);
      }
    });
    while (pinned_.load() == 0) {
    }
  }
  ~Helper() {
    request_.store(-1, std::memory_order_release);
    thread_.join();
  }
  Helper(const Helper&) = delete;
  Helper& operator=(const Helper&) = delete;

  bool pinned() const { return pinned_.load() > 0; }
  void touch(Touch t) {
    request_.store(static_cast<int>(t) + 1, std::memory_order_release);
    while (request_.load(std::memory_order_acquire) != 0) {
    }
  }

 private:
  std::uint32_t* buf_;
  std::size_t lines_;
  std::uint32_t value_ = 0;
  std::atomic<int> pinned_{0};
  alignas(kLine) std::atomic<int> request_{0};
  alignas(kLine) std::atomic<std::uint32_t> sink_{0};
  std::thread thread_;
};

/// One case: the helper touches the buffer (`other`), then the timed thread
/// reads or writes every line (`write`).
void BM_Lines(benchmark::State& state, Touch other, bool write) {
  int a = 0, b = 0;
  if (!two_cpus(&a, &b)) {
    state.SkipWithError("needs two CPUs");
    return;
  }
  cpu_set_t saved;
  pthread_getaffinity_np(pthread_self(), sizeof saved, &saved);
  if (!pin_self(a)) {
    state.SkipWithError("cannot pin the benchmark thread");
    return;
  }
  const std::size_t lines = static_cast<std::size_t>(state.range(0)) * 1024 / kLine;
  // On cache-line boundaries (the training's buffers are too).
  std::vector<std::uint32_t, charkit::deformer::detail::CacheLineAllocator<std::uint32_t>> storage(
      lines * kWords);
  std::uint32_t* buf = storage.data();
  write_lines(buf, lines, 1);
  double ns = 0.0;
  {
    Helper helper(b, buf, lines);
    if (!helper.pinned()) {
      state.SkipWithError("cannot pin the helper thread");
    } else {
      std::uint32_t value = 1, sink = 0;
      for (auto _ : state) {
        // WriteAfterOtherRead: the timed core holds the lines (it wrote
        // them last iteration), the helper's read makes them shared.
        helper.touch(other);
        const auto t0 = std::chrono::steady_clock::now();
        if (write)
          write_lines(buf, lines, ++value);
        else
          sink ^= read_lines(buf, lines);
        const auto t1 = std::chrono::steady_clock::now();
        const double s = std::chrono::duration<double>(t1 - t0).count();
        state.SetIterationTime(s);
        ns += s * 1e9;
      }
      benchmark::DoNotOptimize(sink);
    }
  }
  pthread_setaffinity_np(pthread_self(), sizeof saved, &saved);
  if (state.iterations() > 0)
    state.counters["ns_per_line"] =
        ns / static_cast<double>(state.iterations()) / static_cast<double>(lines);
}

// Each case at both buffer sizes, timed by the timed thread's own clock.
void sizes(benchmark::internal::Benchmark* b) {
  b->Arg(32)->Arg(142)->UseManualTime()->Unit(benchmark::kMicrosecond);
}

BENCHMARK_CAPTURE(BM_Lines, ReadAfterOtherWrote, Touch::kWrite, false)->Apply(sizes);
BENCHMARK_CAPTURE(BM_Lines, ReadOwn, Touch::kNothing, false)->Apply(sizes);
BENCHMARK_CAPTURE(BM_Lines, WriteAfterOtherRead, Touch::kRead, true)->Apply(sizes);
BENCHMARK_CAPTURE(BM_Lines, WriteOwn, Touch::kNothing, true)->Apply(sizes);

}  // namespace

BENCHMARK_MAIN();
