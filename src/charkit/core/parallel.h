// The one way charkit's kernels run work in parallel (docs/core.md
// §Parallel work): an Executor that a kernel accepts as a parameter, instead
// of threads created inside each call. An embedder passes its own executor
// (a serial one, a pool shared with its engine) or takes the process-wide
// default.
//
// Threading contract:
// - parallel_for(begin, end, grain, fn) calls fn(chunk_begin, chunk_end) on
//   consecutive chunks of at most `grain` indices covering [begin, end), each
//   index exactly once, and returns when every call has returned. Chunks run
//   concurrently and in no particular order: fn must only write what its
//   chunk owns.
// - The calling thread works on chunks too, so nested parallel_for calls
//   (from inside fn) and calls from several threads at once cannot deadlock:
//   a caller never waits for a chunk that nobody is running.
// - If fn throws, the chunks not yet started are skipped, the call waits for
//   the ones running, and the first exception is rethrown to the caller.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>

namespace charkit::core {

/// fn(chunk_begin, chunk_end) for one chunk of a parallel_for.
using ChunkFn = std::function<void(std::size_t, std::size_t)>;

class Executor {
 public:
  virtual ~Executor() = default;
  /// How many chunks may run at the same time (1 for a serial executor).
  virtual std::size_t concurrency() const = 0;
  /// See the contract above. grain 0 picks one: about four chunks per unit of
  /// concurrency. An empty range calls nothing.
  virtual void parallel_for(std::size_t begin, std::size_t end, std::size_t grain,
                            const ChunkFn& fn) = 0;
};

/// Runs every chunk on the calling thread, in order.
class SerialExecutor final : public Executor {
 public:
  std::size_t concurrency() const override { return 1; }
  void parallel_for(std::size_t begin, std::size_t end, std::size_t grain,
                    const ChunkFn& fn) override;
};

/// A fixed pool of worker threads, started by the constructor and joined by
/// the destructor (which must not run while a parallel_for on it is in
/// flight). Safe to call from several threads at once.
class ThreadPool final : public Executor {
 public:
  /// threads = the concurrency including the calling thread, so threads - 1
  /// workers are started; 0 = std::thread::hardware_concurrency() (at least 1).
  explicit ThreadPool(std::size_t threads = 0);
  ~ThreadPool() override;
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  std::size_t concurrency() const override;
  void parallel_for(std::size_t begin, std::size_t end, std::size_t grain,
                    const ChunkFn& fn) override;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

/// The process-wide pool, sized from hardware_concurrency, started on first use.
Executor& default_executor();

/// A process-wide serial executor.
Executor& serial_executor();

/// The chunk size that splits n indices into `pieces` chunks (at least 1).
std::size_t grain_for(std::size_t n, std::size_t pieces);

}  // namespace charkit::core
