#include "charkit/store/jobs.h"

#include <gtest/gtest.h>

#include <map>
#include <mutex>
#include <thread>

#include "store_test_support.h"

namespace charkit::store {
namespace {

using namespace std::chrono_literals;
using testing::Backend;
using testing::StoreTest;

class JobsTest : public StoreTest {};

TEST_P(JobsTest, LifecyclePendingRunningDone) {
  auto c = open_catalogue();
  ASSERT_TRUE(c);
  JobQueue q(*c);
  auto j = q.enqueue("motion.preprocess", R"({"motion_id":1})");
  ASSERT_TRUE(j) << j.error().to_string();
  EXPECT_EQ(j->state, JobState::pending);
  EXPECT_EQ(j->attempts, 0);
  EXPECT_FALSE(j->lease_until.has_value());
  auto claim = q.claim("w1", 30s);
  ASSERT_TRUE(claim) << claim.error().to_string();
  ASSERT_TRUE(claim->has_value());
  const Job& job = **claim;
  EXPECT_EQ(job.id, j->id);
  EXPECT_EQ(job.state, JobState::running);
  EXPECT_EQ(job.attempts, 1);
  EXPECT_EQ(job.worker, "w1");
  EXPECT_EQ(job.payload, R"({"motion_id":1})");
  EXPECT_EQ(job.lease_until, clock_ms_.load() + 30000);
  // Nothing else to claim while it runs.
  auto none = q.claim("w2", 30s);
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->has_value());
  clock_ms_ += 10000;
  ASSERT_TRUE(*q.heartbeat(job, 30s));
  EXPECT_EQ((*q.get(job.id))->lease_until, clock_ms_.load() + 30000);
  ASSERT_TRUE(*q.complete(job));
  auto done = *q.get(job.id);
  ASSERT_TRUE(done.has_value());
  EXPECT_EQ(done->state, JobState::done);
  EXPECT_FALSE(done->lease_until.has_value());
  EXPECT_FALSE(*q.complete(job));  // a claim completes once
  EXPECT_EQ(*q.count(JobState::done), 1);
}

TEST_P(JobsTest, FailedJobKeepsItsError) {
  auto c = open_catalogue();
  ASSERT_TRUE(c);
  JobQueue q(*c);
  ASSERT_TRUE(q.enqueue("motion.preprocess", "{}"));
  auto claim = q.claim("w1", 30s);
  ASSERT_TRUE(claim && claim->has_value());
  const std::string why = "FBX import needs assimp, which is not available";
  ASSERT_TRUE(*q.fail(**claim, why));
  auto j = *q.get((*claim)->id);
  EXPECT_EQ(j->state, JobState::failed);
  EXPECT_EQ(j->error, why);
  // Failed jobs are not claimed again.
  auto none = q.claim("w2", 30s);
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->has_value());
  ListQuery failed;
  failed.state = "failed";
  auto page = q.list(failed);
  ASSERT_TRUE(page);
  ASSERT_EQ(page->items.size(), 1u);
  EXPECT_EQ(page->items[0].error, why);
}

TEST_P(JobsTest, ExpiredLeaseIsClaimedAgainAndTheOldClaimIsVoid) {
  auto c = open_catalogue();
  ASSERT_TRUE(c);
  JobQueue q(*c);
  ASSERT_TRUE(q.enqueue("motion.preprocess", "{}", 2));
  auto first = q.claim("dead-worker", 5s);
  ASSERT_TRUE(first && first->has_value());
  // Not yet expired: no one else gets it.
  clock_ms_ += 5000;
  auto early = q.claim("w2", 5s);
  ASSERT_TRUE(early);
  EXPECT_FALSE(early->has_value());
  // The worker died: its lease runs out.
  clock_ms_ += 1;
  auto second = q.claim("w2", 5s);
  ASSERT_TRUE(second) << second.error().to_string();
  ASSERT_TRUE(second->has_value());
  EXPECT_EQ((*second)->id, (*first)->id);
  EXPECT_EQ((*second)->attempts, 2);
  EXPECT_EQ((*second)->worker, "w2");
  // The first claim can neither renew nor complete any more.
  EXPECT_FALSE(*q.heartbeat(**first, 5s));
  EXPECT_FALSE(*q.complete(**first));
  EXPECT_FALSE(*q.fail(**first, "late"));
  // The second worker dies too: attempts are spent, the job ends failed.
  clock_ms_ += 6000;
  auto third = q.claim("w3", 5s);
  ASSERT_TRUE(third);
  EXPECT_FALSE(third->has_value());
  auto j = *q.get((*first)->id);
  EXPECT_EQ(j->state, JobState::failed);
  EXPECT_EQ(j->error, "lease expired after 2 attempts");
}

TEST_P(JobsTest, ReleaseReturnsTheJobWithoutSpendingAnAttempt) {
  auto c = open_catalogue();
  ASSERT_TRUE(c);
  JobQueue q(*c);
  ASSERT_TRUE(q.enqueue("package.validate", "{}", 1));
  auto a = q.claim("w1", 5s, "package.validate");
  ASSERT_TRUE(a && a->has_value());
  ASSERT_TRUE(*q.release(**a));
  auto j = *q.get((*a)->id);
  EXPECT_EQ(j->state, JobState::pending);
  EXPECT_EQ(j->attempts, 0);
  auto other_kind = q.claim("w2", 5s, "model.intake");
  ASSERT_TRUE(other_kind);
  EXPECT_FALSE(other_kind->has_value());
  auto b = q.claim("w2", 5s);
  ASSERT_TRUE(b && b->has_value());
  EXPECT_EQ((*b)->attempts, 1);
}

// Several workers, each with its own connection, drain one queue: every job
// is claimed exactly once (SQLite: BEGIN IMMEDIATE; PostgreSQL: SKIP LOCKED).
TEST_P(JobsTest, ConcurrentWorkersNeverShareAJob) {
  constexpr int kJobs = 60;
  constexpr int kWorkers = 4;
  {
    auto c = open_catalogue();
    ASSERT_TRUE(c);
    JobQueue q(*c);
    for (int i = 0; i < kJobs; ++i) ASSERT_TRUE(q.enqueue("k", std::to_string(i)));
  }
  std::vector<std::unique_ptr<Catalogue>> conns;
  for (int w = 0; w < kWorkers; ++w) {
    conns.push_back(open_catalogue());
    ASSERT_TRUE(conns.back());
  }
  std::mutex mu;
  std::map<std::int64_t, int> claims;
  std::vector<std::string> errors;
  std::vector<std::thread> threads;
  for (int w = 0; w < kWorkers; ++w)
    threads.emplace_back([&, w] {
      JobQueue q(*conns[static_cast<std::size_t>(w)]);
      const std::string name = "w" + std::to_string(w);
      while (true) {
        auto j = q.claim(name, 60s);
        if (!j) {
          std::lock_guard lock(mu);
          errors.push_back(j.error().to_string());
          return;
        }
        if (!j->has_value()) return;
        {
          std::lock_guard lock(mu);
          claims[(*j)->id]++;
        }
        auto done = q.complete(**j);
        if (!done || !*done) {
          std::lock_guard lock(mu);
          errors.push_back("complete failed for job " + std::to_string((*j)->id));
        }
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_TRUE(errors.empty()) << errors.front();
  EXPECT_EQ(claims.size(), static_cast<std::size_t>(kJobs));
  for (const auto& [id, n] : claims) EXPECT_EQ(n, 1) << "job " << id;
  JobQueue q(*conns[0]);
  EXPECT_EQ(*q.count(JobState::done), kJobs);
  EXPECT_EQ(*q.count(JobState::pending), 0);
}

TEST_P(JobsTest, RefusesBadArguments) {
  auto c = open_catalogue();
  ASSERT_TRUE(c);
  JobQueue q(*c);
  EXPECT_FALSE(q.enqueue("", "{}"));
  EXPECT_FALSE(q.enqueue("k", "{}", 0));
  EXPECT_FALSE(q.claim("", 1s));
  EXPECT_FALSE(q.claim("w", 0s));
}

INSTANTIATE_TEST_SUITE_P(Backends, JobsTest,
                         ::testing::Values(Backend::sqlite, Backend::postgresql),
                         testing::backend_name);

}  // namespace
}  // namespace charkit::store
