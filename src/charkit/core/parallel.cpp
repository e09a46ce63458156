#include "charkit/core/parallel.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace charkit::core {

namespace {

// Spinning before blocking. A worker that has just run out of work, and a
// caller waiting for the last chunk, poll for a short while before they
// sleep on a condition variable: a wake-up through the kernel costs tens of
// microseconds on a VM, which is as long as a whole chunk of the short
// parallel sections that run thousands of times (an MLP training step has
// two, ~0.1 ms each). The poll is bounded, so an idle pool sleeps.
constexpr auto kSpin = std::chrono::microseconds(200);

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#else
  std::this_thread::yield();
#endif
}

// Polls done() until it is true (returns true) or kSpin has passed (false).
template <class Done>
bool spin_until(const Done& done) {
  const auto until = std::chrono::steady_clock::now() + kSpin;
  for (unsigned i = 1;; ++i) {
    if (done()) return true;
    cpu_relax();
    if (i % 64 == 0 && std::chrono::steady_clock::now() >= until) return done();
  }
}

std::size_t auto_grain(std::size_t n, std::size_t concurrency, std::size_t grain) {
  if (grain > 0) return grain;
  return grain_for(n, 4 * std::max<std::size_t>(concurrency, 1));
}

// One parallel_for in flight: chunks are claimed with an atomic counter by
// the caller and by any worker that picks the job up.
struct Job {
  std::size_t begin = 0, end = 0, grain = 1, chunks = 0;
  const ChunkFn* fn = nullptr;  // the caller's; only touched for a claimed chunk
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> finished{0};
  std::atomic<bool> failed{false};
  std::mutex mu;
  std::condition_variable done;
  std::exception_ptr error;  // guarded by mu

  bool exhausted() const { return next.load(std::memory_order_relaxed) >= chunks; }

  // Run chunks until none is left to claim.
  void work() {
    for (;;) {
      const std::size_t c = next.fetch_add(1);
      if (c >= chunks) return;
      if (!failed.load()) {
        const std::size_t b = begin + c * grain;
        try {
          (*fn)(b, std::min(end, b + grain));
        } catch (...) {
          std::lock_guard<std::mutex> lock(mu);
          if (!error) error = std::current_exception();
          failed.store(true);
        }
      }
      if (finished.fetch_add(1) + 1 == chunks) {
        std::lock_guard<std::mutex> lock(mu);  // no lost wake-up: the waiter holds mu to check
        done.notify_all();
      }
    }
  }
};

}  // namespace

std::size_t grain_for(std::size_t n, std::size_t pieces) {
  pieces = std::max<std::size_t>(pieces, 1);
  return std::max<std::size_t>((n + pieces - 1) / pieces, 1);
}

void SerialExecutor::parallel_for(std::size_t begin, std::size_t end, std::size_t grain,
                                  const ChunkFn& fn) {
  if (end <= begin) return;
  grain = auto_grain(end - begin, 1, grain);
  for (std::size_t b = begin; b < end; b += std::min(grain, end - b))
    fn(b, b + std::min(grain, end - b));
}

struct ThreadPool::State {
  std::mutex mu;
  std::condition_variable wake;
  std::deque<std::shared_ptr<Job>> queue;  // guarded by mu
  std::atomic<std::size_t> queued{0};      // queue.size(), stored under mu, polled without
  bool stop = false;                       // guarded by mu
  std::vector<std::thread> workers;

  void worker_loop() {
    std::unique_lock<std::mutex> lock(mu);
    for (;;) {
      if (!stop && queue.empty()) {
        lock.unlock();
        spin_until([&] { return queued.load(std::memory_order_acquire) != 0; });
        lock.lock();
      }
      wake.wait(lock, [&] { return stop || !queue.empty(); });
      if (queue.empty()) return;  // stop, nothing left
      std::shared_ptr<Job> job = queue.front();
      if (job->exhausted()) {
        queue.pop_front();
        queued.store(queue.size(), std::memory_order_release);
        continue;
      }
      lock.unlock();
      job->work();
      lock.lock();
    }
  }
};

ThreadPool::ThreadPool(std::size_t threads) : state_(std::make_unique<State>()) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  state_->workers.reserve(threads - 1);
  for (std::size_t i = 0; i + 1 < threads; ++i)
    state_->workers.emplace_back([s = state_.get()] { s->worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    state_->stop = true;
  }
  state_->wake.notify_all();
  for (std::thread& t : state_->workers) t.join();
}

std::size_t ThreadPool::concurrency() const {
  return state_->workers.size() + 1;
}

void ThreadPool::parallel_for(std::size_t begin, std::size_t end, std::size_t grain,
                              const ChunkFn& fn) {
  if (end <= begin) return;
  const std::size_t n = end - begin;
  grain = auto_grain(n, concurrency(), grain);
  const std::size_t chunks = (n + grain - 1) / grain;
  if (chunks == 1 || state_->workers.empty()) {
    serial_executor().parallel_for(begin, end, grain, fn);
    return;
  }
  auto job = std::make_shared<Job>();
  job->begin = begin;
  job->end = end;
  job->grain = grain;
  job->chunks = chunks;
  job->fn = &fn;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    state_->queue.push_back(job);
    state_->queued.store(state_->queue.size(), std::memory_order_release);
  }
  state_->wake.notify_all();
  job->work();
  {
    // Every chunk is claimed now; drop the job so workers move on.
    std::lock_guard<std::mutex> lock(state_->mu);
    auto& q = state_->queue;
    q.erase(std::remove(q.begin(), q.end(), job), q.end());
    state_->queued.store(q.size(), std::memory_order_release);
  }
  // The chunks still running elsewhere are usually about to end.
  if (!spin_until([&] { return job->finished.load() == job->chunks; })) {
    std::unique_lock<std::mutex> lock(job->mu);
    job->done.wait(lock, [&] { return job->finished.load() == job->chunks; });
  }
  if (job->error) std::rethrow_exception(job->error);
}

Executor& default_executor() {
  static ThreadPool pool(0);
  return pool;
}

Executor& serial_executor() {
  static SerialExecutor serial;
  return serial;
}

}  // namespace charkit::core
