#include "charkit/core/parallel.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace charkit::core {

namespace {

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
  bool stop = false;                       // guarded by mu
  std::vector<std::thread> workers;

  void worker_loop() {
    std::unique_lock<std::mutex> lock(mu);
    for (;;) {
      wake.wait(lock, [&] { return stop || !queue.empty(); });
      if (queue.empty()) return;  // stop, nothing left
      std::shared_ptr<Job> job = queue.front();
      if (job->exhausted()) {
        queue.pop_front();
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
  }
  state_->wake.notify_all();
  job->work();
  {
    // Every chunk is claimed now; drop the job so workers move on.
    std::lock_guard<std::mutex> lock(state_->mu);
    auto& q = state_->queue;
    q.erase(std::remove(q.begin(), q.end(), job), q.end());
  }
  std::unique_lock<std::mutex> lock(job->mu);
  job->done.wait(lock, [&] { return job->finished.load() == job->chunks; });
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
