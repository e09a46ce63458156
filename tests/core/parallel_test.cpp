#include "charkit/core/parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace charkit::core {
namespace {

// Every index of [begin, end) is visited exactly once, chunks respect grain.
void expect_covers_once(Executor& ex, std::size_t begin, std::size_t end, std::size_t grain) {
  std::vector<std::atomic<int>> hits(end + 1);
  std::atomic<std::size_t> max_chunk{0};
  ex.parallel_for(begin, end, grain, [&](std::size_t b, std::size_t e) {
    ASSERT_LT(b, e);
    std::size_t len = e - b, seen = max_chunk.load();
    while (len > seen && !max_chunk.compare_exchange_weak(seen, len)) {
    }
    for (std::size_t i = b; i < e; ++i) hits[i].fetch_add(1);
  });
  for (std::size_t i = 0; i <= end; ++i)
    EXPECT_EQ(hits[i].load(), i >= begin && i < end ? 1 : 0) << i;
  if (grain > 0) {
    EXPECT_LE(max_chunk.load(), grain);
  }
}

TEST(Parallel, EveryIndexExactlyOnce) {
  ThreadPool pool(4);
  EXPECT_EQ(pool.concurrency(), 4u);
  for (std::size_t grain : {0u, 1u, 3u, 7u, 1000u, 5000u}) {
    expect_covers_once(pool, 0, 1000, grain);
    expect_covers_once(pool, 17, 1001, grain);
    expect_covers_once(serial_executor(), 5, 999, grain);
    expect_covers_once(default_executor(), 0, 777, grain);
  }
  expect_covers_once(pool, 10, 10, 1);  // empty: nothing called
  expect_covers_once(pool, 0, 1, 0);
}

TEST(Parallel, SerialRunsInOrderOnTheCallingThread) {
  std::vector<std::pair<std::size_t, std::size_t>> chunks;
  const auto me = std::this_thread::get_id();
  serial_executor().parallel_for(0, 10, 4, [&](std::size_t b, std::size_t e) {
    EXPECT_EQ(std::this_thread::get_id(), me);
    chunks.emplace_back(b, e);
  });
  EXPECT_EQ(chunks, (std::vector<std::pair<std::size_t, std::size_t>>{{0, 4}, {4, 8}, {8, 10}}));
  EXPECT_EQ(serial_executor().concurrency(), 1u);
  ThreadPool one(1);  // no workers: runs on the caller
  EXPECT_EQ(one.concurrency(), 1u);
  one.parallel_for(0, 3, 1,
                   [&](std::size_t, std::size_t) { EXPECT_EQ(std::this_thread::get_id(), me); });
}

TEST(Parallel, UsesMoreThanOneThread) {
  ThreadPool pool(4);
  std::mutex mu;
  std::set<std::thread::id> ids;
  std::atomic<int> arrived{0};
  // Each chunk waits (bounded) until two chunks run at once: only possible
  // when a worker helps the caller.
  pool.parallel_for(0, 4, 1, [&](std::size_t, std::size_t) {
    arrived.fetch_add(1);
    for (int i = 0; i < 2000 && arrived.load() < 2; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::lock_guard<std::mutex> lock(mu);
    ids.insert(std::this_thread::get_id());
  });
  EXPECT_GE(ids.size(), 2u);
}

TEST(Parallel, FirstExceptionPropagatesAndTheRestAreSkipped) {
  ThreadPool pool(3);
  std::atomic<int> ran{0};
  // Every chunk throws: a thread that has seen a failure claims no more, so
  // each of the 4 threads (3 workers and the caller) runs at most one chunk.
  // (With only chunk 0 throwing, the others may all finish first: trivial
  // chunks outrun one exception's unwinding.)
  EXPECT_THROW(pool.parallel_for(0, 10000, 1,
                                 [&](std::size_t b, std::size_t) {
                                   ran.fetch_add(1);
                                   throw std::runtime_error("chunk " + std::to_string(b));
                                 }),
               std::runtime_error);
  EXPECT_GE(ran.load(), 1);
  EXPECT_LE(ran.load(), 4);
  EXPECT_THROW(serial_executor().parallel_for(
                   0, 5, 1, [](std::size_t, std::size_t) { throw std::logic_error("x"); }),
               std::logic_error);
  // The pool is still usable afterwards.
  expect_covers_once(pool, 0, 100, 1);
}

TEST(Parallel, NestedCallsDoNotDeadlock) {
  ThreadPool pool(2);
  std::atomic<std::size_t> total{0};
  pool.parallel_for(0, 8, 1, [&](std::size_t, std::size_t) {
    pool.parallel_for(0, 8, 1, [&](std::size_t, std::size_t) {
      pool.parallel_for(0, 4, 1, [&](std::size_t b, std::size_t e) { total.fetch_add(e - b); });
    });
  });
  EXPECT_EQ(total.load(), 8u * 8u * 4u);
}

TEST(Parallel, ConcurrentCallersShareOnePool) {
  ThreadPool pool(3);
  std::vector<std::thread> callers;
  std::atomic<std::size_t> total{0};
  for (int c = 0; c < 4; ++c)
    callers.emplace_back([&] {
      for (int r = 0; r < 20; ++r)
        pool.parallel_for(0, 100, 3, [&](std::size_t b, std::size_t e) { total.fetch_add(e - b); });
    });
  for (auto& t : callers) t.join();
  EXPECT_EQ(total.load(), 4u * 20u * 100u);
}

TEST(Parallel, GrainFor) {
  EXPECT_EQ(grain_for(10, 3), 4u);
  EXPECT_EQ(grain_for(9, 3), 3u);
  EXPECT_EQ(grain_for(0, 3), 1u);
  EXPECT_EQ(grain_for(5, 0), 5u);
}

}  // namespace
}  // namespace charkit::core
