#include "charkit/core/isolated.h"
#include "charkit/core/error_codes.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace charkit::core {
namespace {

using Bytes8 = std::vector<std::uint8_t>;

TEST(IsolatedTest, CarriesTheResultBackAndSeesTheCallersData) {
  const Bytes8 input{1, 2, 3, 250};
  auto r = run_isolated(
      [&]() -> Result<Bytes8> {
        Bytes8 out(input.rbegin(), input.rend());
        out.push_back(static_cast<std::uint8_t>(getpid() == getppid() ? 0 : 7));
        return out;
      },
      {}, "the test work");
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(*r, (Bytes8{250, 3, 2, 1, 7}));
}

TEST(IsolatedTest, ALargeResultCrossesThePipeWhole) {
  auto r = run_isolated(
      []() -> Result<Bytes8> {
        Bytes8 out(5'000'000);
        for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<std::uint8_t>(i * 31);
        return out;
      },
      {}, "big");
  ASSERT_TRUE(r) << r.error().to_string();
  ASSERT_EQ(r->size(), 5'000'000u);
  EXPECT_EQ((*r)[4'999'999], static_cast<std::uint8_t>(4'999'999u * 31));
}

TEST(IsolatedTest, TheWorksErrorComesBackWithItsCode) {
  auto r = run_isolated(
      []() -> Result<Bytes8> { return make_error(codes::IO_READ, "bad\0 input"); }, {}, "w");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "IO_READ");
  EXPECT_EQ(r.error().message, "bad");  // the C string literal stops at its NUL
}

TEST(IsolatedTest, ChangesInTheChildDoNotReachTheCaller) {
  int value = 1;
  auto r = run_isolated(
      [&]() -> Result<Bytes8> {
        value = 2;
        return Bytes8{};
      },
      {}, "w");
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->empty());
  EXPECT_EQ(value, 1);
}

TEST(IsolatedTest, AnAbortBecomesAnError) {
  auto r = run_isolated([]() -> Result<Bytes8> { std::abort(); }, {}, "the aborting work");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "ISOLATED_CRASH");
  EXPECT_NE(r.error().message.find("the aborting work crashed: its process was killed by signal 6 "
                                   "(SIGABRT) before it answered"),
            std::string::npos)
      << r.error().message;
}

TEST(IsolatedTest, ASegmentationFaultBecomesAnError) {
  auto r = run_isolated(
      []() -> Result<Bytes8> {
        ::raise(SIGSEGV);  // the child resets sanitizer handlers: plain SIGSEGV
        return Bytes8{1};
      },
      {}, "w");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "ISOLATED_CRASH") << r.error().to_string();
  EXPECT_NE(r.error().message.find("signal 11 (SIGSEGV)"), std::string::npos) << r.error().message;
}

TEST(IsolatedTest, AnExceptionBecomesAnError) {
  auto r = run_isolated([]() -> Result<Bytes8> { throw std::runtime_error("boom"); }, {}, "w");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "ISOLATED_EXCEPTION");
  EXPECT_EQ(r.error().message, "boom");
}

TEST(IsolatedTest, AHangIsStoppedAtTheTimeout) {
  IsolationLimits limits;
  limits.timeout = std::chrono::milliseconds(300);
  const auto t0 = std::chrono::steady_clock::now();
  auto r = run_isolated(
      []() -> Result<Bytes8> {
        for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
      },
      limits, "the endless work");
  const auto took = std::chrono::steady_clock::now() - t0;
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "ISOLATED_TIMEOUT");
  EXPECT_NE(r.error().message.find("300 ms"), std::string::npos) << r.error().message;
  EXPECT_LT(took, std::chrono::seconds(30));  // not a timing goal: it must not wait for the work
}

TEST(IsolatedTest, AnAnswerOverTheLimitIsRefused) {
  IsolationLimits limits;
  limits.max_result_bytes = 1000;
  auto r = run_isolated([]() -> Result<Bytes8> { return Bytes8(100'000, 9); }, limits, "w");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "ISOLATED_LIMIT");
}

TEST(IsolatedTest, AnExitWithoutAnswerIsACrash) {
  auto r = run_isolated([]() -> Result<Bytes8> { ::_exit(0); }, {}, "w");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "ISOLATED_CRASH");
  EXPECT_NE(r.error().message.find("exited with status 0"), std::string::npos) << r.error().message;
}

// A lock another thread holds at the fork stays held in the child for good:
// the child sleeps on it with its CPU time frozen. The stall check kills it
// and runs the work again; by then the lock is free and the retry answers.
TEST(IsolatedTest, AChildStuckOnAnInheritedLockIsRunAgain) {
  std::mutex lock;
  std::atomic<bool> held{false};
  std::thread holder([&] {
    std::lock_guard<std::mutex> g(lock);
    held = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  });
  while (!held) std::this_thread::yield();
  IsolationLimits limits;
  limits.stall_timeout = std::chrono::milliseconds(1000);  // > the 200 ms the lock is held
  auto r = run_isolated(
      [&]() -> Result<Bytes8> {
        std::lock_guard<std::mutex> g(lock);
        return Bytes8{42};
      },
      limits, "the locking work");
  holder.join();
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(*r, Bytes8{42});
}

TEST(IsolatedTest, AWorkThatAlwaysStallsEndsStalledAfterTheRetries) {
  IsolationLimits limits;
  limits.stall_timeout = std::chrono::milliseconds(300);
  limits.stall_retries = 1;
  const auto t0 = std::chrono::steady_clock::now();
  auto r = run_isolated(
      []() -> Result<Bytes8> {
        for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
      },
      limits, "the sleeping work");
  const auto took = std::chrono::steady_clock::now() - t0;
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "ISOLATED_STALLED");
  EXPECT_NE(r.error().message.find("in each of 2 attempts"), std::string::npos)
      << r.error().message;
  EXPECT_LT(took, std::chrono::seconds(60));  // not the 120 s timeout
}

TEST(IsolatedTest, AWorkThatComputesIsNotStalled) {
  IsolationLimits limits;
  limits.stall_timeout = std::chrono::milliseconds(100);
  limits.stall_retries = 0;
  auto r = run_isolated(
      []() -> Result<Bytes8> {
        volatile std::uint64_t x = 1;  // busy for about a second: runnable, CPU time moving
        const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(1);
        while (std::chrono::steady_clock::now() < end) x = x * 6364136223846793005ull + 1;
        return Bytes8{1};
      },
      limits, "the busy work");
  ASSERT_TRUE(r) << r.error().to_string();
}

}  // namespace
}  // namespace charkit::core
