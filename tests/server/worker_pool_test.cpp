// The worker pool's lease protocol (docs/contracts/data-models.md §5): short
// leases renewed by heartbeats, a dead worker's job retried within seconds, a
// lost claim cancelling its run and discarding its result, the wall-time
// budget, a failed job failing its motion, and on PostgreSQL the
// LISTEN/NOTIFY wake-up. Every test runs on SQLite and on PostgreSQL (a
// fresh schema; skipped without the ctest fixture). Waits are bounded
// polls with generous limits; the only timing claims are "within about two
// leases" and "well under the poll interval".
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "charkit/core/json.h"
#include "charkit/server/worker.h"
#include "charkit/store/blob_store.h"
#include "charkit/store/catalogue.h"
#include "charkit/store/detail/blob_backend.h"
#include "charkit/store/detail/sql_connection.h"
#include "charkit/store/jobs.h"
#include "package_builder.h"
#include "raw_zip.h"
#include "test_server.h"

namespace charkit::server {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

/// Polls pred every 10 ms until it holds or `limit` passed.
bool eventually(const std::function<bool()>& pred, std::chrono::milliseconds limit = 30s) {
  const auto end = Clock::now() + limit;
  while (Clock::now() < end) {
    if (pred()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return pred();
}

class WorkerPoolTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    dir_ = fs::temp_directory_path() /
           ("charkit_pool_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    auto [db, skip] = test_db(GetParam());
    if (!skip.empty()) GTEST_SKIP() << skip;
    db_ = db;
    url_ = db_.url.empty() ? "sqlite:" + (dir_ / "c.sqlite3").string() : db_.url;
    cat_ = open_catalogue();
    ASSERT_TRUE(cat_);
    queue_ = std::make_unique<store::JobQueue>(*cat_);
  }
  void TearDown() override {
    queue_.reset();
    cat_.reset();
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::unique_ptr<store::Catalogue> open_catalogue() {
    store::CatalogueOptions co;
    co.pg_schema = db_.schema;
    auto c = store::Catalogue::open(url_, co);
    EXPECT_TRUE(c) << c.error().to_string();
    return c ? std::move(*c) : nullptr;
  }
  WorkerPoolOptions pool_options(JobRunner runner) {
    WorkerPoolOptions o;
    o.db_url = url_;
    o.pg_schema = db_.schema;
    o.blob_root = dir_ / "blobs";
    o.threads = 1;
    o.idle_poll = 50ms;
    o.notify_poll = 100ms;
    o.runner = std::move(runner);
    return o;
  }
  std::unique_ptr<WorkerPool> start(const WorkerPoolOptions& o) {
    auto p = WorkerPool::start(o);
    EXPECT_TRUE(p) << p.error().to_string();
    return p ? std::move(*p) : nullptr;
  }
  store::Job job(std::int64_t id) {
    auto j = queue_->get(id);
    EXPECT_TRUE(j && j->has_value());
    return j && j->has_value() ? **j : store::Job{};
  }
  /// Makes the database refuse `event` (INSERT, UPDATE) on `table` when
  /// `when` (an SQL condition on NEW; "" = always) holds, with the message
  /// "injected fault": a trigger made over a raw connection, for faults the
  /// API cannot cause.
  void inject_fault(const std::string& table, const std::string& event, const std::string& when) {
    const bool pg = GetParam() == Backend::postgresql;
    auto c = pg ? store::detail::open_postgresql(db_.url, db_.schema)
                : store::detail::open_sqlite((dir_ / "c.sqlite3").string(), 10s);
    ASSERT_TRUE(c) << c.error().to_string();
    std::vector<std::string> sql;
    if (pg) {
      sql.push_back(
          "CREATE FUNCTION inject_fault() RETURNS trigger LANGUAGE plpgsql AS "
          "$$ BEGIN RAISE EXCEPTION 'injected fault'; END $$");
      sql.push_back("CREATE TRIGGER inject_fault BEFORE " + event + " ON " + table +
                    " FOR EACH ROW" + (when.empty() ? "" : " WHEN (" + when + ")") +
                    " EXECUTE FUNCTION inject_fault()");
    } else {
      sql.push_back("CREATE TRIGGER inject_fault BEFORE " + event + " ON " + table +
                    (when.empty() ? "" : " WHEN " + when) +
                    " BEGIN SELECT RAISE(ABORT, 'injected fault'); END");
    }
    for (const auto& q : sql) {
      auto r = (*c)->exec(q);
      ASSERT_TRUE(r) << q << ": " << r.error().to_string();
    }
  }

  fs::path dir_;
  TestDb db_;
  std::string url_;
  std::unique_ptr<store::Catalogue> cat_;
  std::unique_ptr<store::JobQueue> queue_;
};

INSTANTIATE_TEST_SUITE_P(Catalogue, WorkerPoolTest,
                         ::testing::Values(Backend::sqlite, Backend::postgresql),
                         [](const ::testing::TestParamInfo<Backend>& i) {
                           return i.param == Backend::sqlite ? std::string("sqlite")
                                                             : std::string("postgresql");
                         });

// A worker claims a job with a short lease and dies (never heartbeats): a
// pool takes the job over once the lease ran out, within about two leases.
TEST_P(WorkerPoolTest, DeadWorkersJobIsRetriedWithinTwoLeases) {
  const auto lease = 3000ms;
  auto enq = queue_->enqueue("test.job", job_payload(1));
  ASSERT_TRUE(enq);
  auto dead = queue_->claim("killed-worker", lease);
  ASSERT_TRUE(dead && dead->has_value());
  const auto claimed_at = Clock::now();

  // A pid that no process has any more: a child that has exited and been
  // reaped (taken before the pool starts its threads).
  const pid_t dead_pid = ::fork();
  ASSERT_GE(dead_pid, 0);
  if (dead_pid == 0) ::_exit(0);
  ASSERT_EQ(::waitpid(dead_pid, nullptr, 0), dead_pid);

  std::atomic<bool> retried{false};
  std::atomic<std::int64_t> retry_ms{-1};
  auto o = pool_options([&](const store::Job& j, const std::atomic<bool>&) -> core::Status {
    if (!retried.exchange(true))
      retry_ms =
          std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - claimed_at).count();
    EXPECT_EQ(j.attempts, 2);
    return core::Ok{};
  });
  o.lease = lease;
  auto pool = start(o);
  ASSERT_TRUE(pool);
  // The dead worker left a partial upload, named as this host's uploads are
  // (tag-host-pid-XXXXXX) with the pid of a process that is gone, after the
  // pool's store was opened (and swept).
  const fs::path tmp = dir_ / "blobs" / "tmp";
  auto made = store::detail::make_temp_file(tmp, "upload");
  ASSERT_TRUE(made) << made.error().to_string();
  ::close(made->first);
  std::string name = made->second.filename().string();
  const std::string own = "-" + std::to_string(::getpid()) + "-";
  ASSERT_NE(name.find(own), std::string::npos) << name;
  name.replace(name.find(own), own.size(), "-" + std::to_string(dead_pid) + "-");
  fs::rename(made->second, tmp / name);
  auto count_files = [](const fs::path& d) {
    std::size_t n = 0;
    for (const auto& e : fs::directory_iterator(d)) n += e.is_regular_file() ? 1 : 0;
    return n;
  };
  ASSERT_EQ(count_files(tmp), 1u);
  ASSERT_TRUE(eventually([&] { return job(enq->id).state == store::JobState::done; }));
  EXPECT_EQ(count_files(tmp), 0u);                // the worker that took the job over swept it
  EXPECT_GE(retry_ms.load(), lease.count());      // not before the lease ran out
  EXPECT_LT(retry_ms.load(), 2 * lease.count());  // and soon after
  EXPECT_EQ(job(enq->id).attempts, 2);
  EXPECT_FALSE(*queue_->complete(**dead));  // the dead claim is void
  pool->stop();
  EXPECT_EQ(pool->stats().retries, 1u);
  EXPECT_EQ(pool->stats().completions, 1u);
}

// A job running for several leases keeps its claim: the heartbeat renews it,
// and a second pool polling all the while never gets it.
TEST_P(WorkerPoolTest, HeartbeatKeepsALongJobClaimed) {
  const auto lease = 2000ms;
  auto enq = queue_->enqueue("test.job", job_payload(1));
  ASSERT_TRUE(enq);
  std::atomic<bool> started{false};
  std::atomic<int> runs{0};
  auto slow = pool_options([&](const store::Job&, const std::atomic<bool>& cancel) -> core::Status {
    ++runs;
    started = true;
    const auto end = Clock::now() + 3 * lease;
    while (Clock::now() < end && !cancel.load()) std::this_thread::sleep_for(10ms);
    if (cancel.load()) return core::make_error(kJobCancelled, "cancelled");
    return core::Ok{};
  });
  slow.lease = lease;
  slow.heartbeat = 250ms;  // a beat late by most of a lease still holds
  auto a = start(slow);
  ASSERT_TRUE(a);
  ASSERT_TRUE(eventually([&] { return started.load(); }));
  auto other = pool_options([&](const store::Job&, const std::atomic<bool>&) -> core::Status {
    ++runs;
    return core::Ok{};
  });
  other.lease = lease;
  other.name = "other";
  auto b = start(other);
  ASSERT_TRUE(b);
  ASSERT_TRUE(eventually([&] { return job(enq->id).state == store::JobState::done; }));
  store::Job j = job(enq->id);
  EXPECT_EQ(j.attempts, 1);
  EXPECT_EQ(runs.load(), 1);
  EXPECT_EQ(j.worker.rfind("worker-", 0), 0u) << j.worker;
  a->stop();
  b->stop();
  EXPECT_EQ(a->stats().lost_claims, 0u);
  EXPECT_EQ(a->stats().completions, 1u);
  EXPECT_EQ(b->stats().claims, 0u);
}

// The claim is taken away while the job runs (here: another party fails
// it): the next heartbeat is refused, the run is cancelled, and what it
// returns is discarded, not recorded over the new state.
TEST_P(WorkerPoolTest, LostClaimCancelsTheRunAndDiscardsItsResult) {
  auto enq = queue_->enqueue("test.job", job_payload(1));
  ASSERT_TRUE(enq);
  std::atomic<bool> started{false}, saw_cancel{false};
  auto o = pool_options([&](const store::Job&, const std::atomic<bool>& cancel) -> core::Status {
    started = true;
    const auto end = Clock::now() + 30s;
    while (Clock::now() < end && !cancel.load()) std::this_thread::sleep_for(5ms);
    saw_cancel = cancel.load();
    return core::Ok{};  // a finished-looking result, which must not count
  });
  o.lease = 1500ms;
  auto pool = start(o);
  ASSERT_TRUE(pool);
  ASSERT_TRUE(eventually([&] { return started.load(); }));
  store::Job held = job(enq->id);
  ASSERT_EQ(held.state, store::JobState::running);
  ASSERT_TRUE(*queue_->fail(held, "taken away"));
  ASSERT_TRUE(eventually([&] { return saw_cancel.load(); }));
  ASSERT_TRUE(eventually([&] { return pool->stats().lost_claims == 1; }));
  pool->stop();
  store::Job after = job(enq->id);
  EXPECT_EQ(after.state, store::JobState::failed);
  EXPECT_EQ(after.error, "taken away");
  const WorkerPoolStats s = pool->stats();
  EXPECT_EQ(s.completions, 0u);
  EXPECT_EQ(s.releases, 0u);
  EXPECT_EQ(s.lost_claims, 1u);
}

// The wall-time budget: a job that runs past it is cancelled and failed
// with JOB_BUDGET_TIME (a runner that ignores nothing).
TEST_P(WorkerPoolTest, WallTimeBudgetFailsTheJob) {
  auto enq = queue_->enqueue("test.job", job_payload(1));
  ASSERT_TRUE(enq);
  auto o = pool_options([](const store::Job&, const std::atomic<bool>& cancel) -> core::Status {
    const auto end = Clock::now() + 30s;
    while (Clock::now() < end && !cancel.load()) std::this_thread::sleep_for(5ms);
    return core::make_error(kJobCancelled, "cancelled");
  });
  o.budgets.timeout = 300ms;
  auto pool = start(o);
  ASSERT_TRUE(pool);
  ASSERT_TRUE(eventually([&] { return job(enq->id).state == store::JobState::failed; }));
  EXPECT_EQ(job(enq->id).error.rfind("JOB_BUDGET_TIME: ", 0), 0u) << job(enq->id).error;
  pool->stop();
  EXPECT_EQ(pool->stats().budget_failures, 1u);
  EXPECT_EQ(pool->stats().failures, 1u);
}

// A valid ZIP package plus 64 payload files of 64 MiB of zeros each (one
// DEFLATE stream per file, 4 MB in all): 4 GiB to decode, seconds of work.
testkit::rawzip::ByteVec slow_package() {
  using namespace testkit::rawzip;
  testkit::TestPackage p = testkit::make_valid_package(2);
  core::Json m = p.manifest;
  m["format_version"] = "1.2";
  const std::string text = m.dump();
  std::vector<Stored> blobs{stored(ByteVec(text.begin(), text.end()))};
  std::vector<Record> records{{"manifest.json", 0}};
  const Stored zeros = deflated_zeros(64 * kMiB);
  for (std::size_t i = 0; i < p.payloads.size() + 64; ++i) {
    blobs.push_back(i < p.payloads.size() ? stored(p.payloads[i]) : zeros);
    char name[48];
    std::snprintf(name, sizeof name, "payloads/%04zu.bin", i);
    records.push_back({name, blobs.size() - 1});
  }
  return write_zip(blobs, records);
}

/// Stores the bytes as a package record with its package.validate job.
std::int64_t add_package_job(const fs::path& blob_root, store::Catalogue& cat,
                             const testkit::rawzip::ByteVec& bytes, std::int64_t* package_id) {
  auto blobs = store::BlobStore::open(blob_root);
  EXPECT_TRUE(blobs);
  auto blob = blobs->put(store::Kind::package, "zip", core::Bytes(bytes.data(), bytes.size()));
  EXPECT_TRUE(blob) << blob.error().to_string();
  auto asset = cat.put_asset(
      store::NewAsset{blob->sha256, store::Kind::package, "zip", blob->size, "p.zip", blob->key});
  EXPECT_TRUE(asset);
  auto pkg = cat.add_package(asset->record.id, store::Package{});
  EXPECT_TRUE(pkg);
  *package_id = pkg->record.id;
  auto job = store::JobQueue(cat).enqueue(kJobPackageValidate, job_payload(pkg->record.id));
  EXPECT_TRUE(job);
  return job->id;
}

// SIGTERM during a long validation (it used to run 44 s to the end): the
// pool stops within seconds, the package stays unvalidated and its job
// pending, its attempt not counted.
TEST_P(WorkerPoolTest, StopCancelsARunningValidation) {
  std::int64_t package = 0;
  const std::int64_t id = add_package_job(dir_ / "blobs", *cat_, slow_package(), &package);
  auto o = pool_options({});
  o.budgets.max_decoded_bytes = 0;  // no budgets: only the stop ends it
  o.budgets.max_memory_bytes = 0;
  o.budgets.timeout = 0ms;
  auto pool = start(o);
  ASSERT_TRUE(pool);
  ASSERT_TRUE(eventually([&] { return job(id).state == store::JobState::running; }));
  std::this_thread::sleep_for(200ms);
  const auto t0 = Clock::now();
  pool->stop();
  EXPECT_LT(Clock::now() - t0, 5s);
  store::Job j = job(id);
  EXPECT_EQ(j.state, store::JobState::pending);
  EXPECT_EQ(j.attempts, 0);
  auto p = cat_->get_package(package);
  ASSERT_TRUE(p && p->has_value());
  EXPECT_EQ((*p)->validity, store::Validity::unknown);
  EXPECT_EQ((*p)->report_json, "");
  EXPECT_EQ(pool->stats().releases, 1u);
}

// The wall-time budget on a real job: the validation is cut short and the
// package recorded invalid with JOB_BUDGET_TIME; the job itself is done.
TEST_P(WorkerPoolTest, WallTimeBudgetEndsARealValidation) {
  std::int64_t package = 0;
  const std::int64_t id = add_package_job(dir_ / "blobs", *cat_, slow_package(), &package);
  auto o = pool_options({});
  o.budgets.max_decoded_bytes = 0;
  o.budgets.max_memory_bytes = 0;  // the 64 MiB entries are held whole
  o.budgets.timeout = 300ms;
  auto pool = start(o);
  ASSERT_TRUE(pool);
  ASSERT_TRUE(eventually([&] { return job(id).state == store::JobState::done; }));
  pool->stop();
  auto p = cat_->get_package(package);
  ASSERT_TRUE(p && p->has_value());
  EXPECT_EQ((*p)->validity, store::Validity::invalid);
  core::Json report = core::Json::parse((*p)->report_json);
  EXPECT_EQ(report["budget"]["code"], "JOB_BUDGET_TIME") << report.dump();
  EXPECT_EQ(pool->stats().budget_failures, 1u);
}

std::size_t files_under(const fs::path& dir) {
  std::size_t n = 0;
  if (!fs::exists(dir)) return 0;
  for (const auto& e : fs::recursive_directory_iterator(dir)) n += e.is_regular_file() ? 1 : 0;
  return n;
}

// Jobs are at-least-once (a lost claim may still finish, a retry runs
// again): running a preprocessing job twice leaves one keypoint asset, one
// blob and no temporary file.
TEST_P(WorkerPoolTest, RerunningAPreprocessJobIsHarmless) {
  auto blobs = store::BlobStore::open(dir_ / "blobs");
  ASSERT_TRUE(blobs);
  std::ifstream in(fs::path(CHARKIT_TEST_DATA) / "bvh" / "test_freebvh.bvh", std::ios::binary);
  const std::string bvh((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(bvh.empty());
  auto blob =
      blobs->put(store::Kind::motion, "bvh",
                 core::Bytes(reinterpret_cast<const std::uint8_t*>(bvh.data()), bvh.size()));
  ASSERT_TRUE(blob);
  auto asset = cat_->put_asset(
      store::NewAsset{blob->sha256, store::Kind::motion, "bvh", blob->size, "a.bvh", blob->key});
  ASSERT_TRUE(asset);
  store::Motion fields;
  fields.format = "bvh";
  auto motion = cat_->add_motion(asset->record.id, fields);
  ASSERT_TRUE(motion);
  std::optional<std::int64_t> first;
  for (int run = 0; run < 2; ++run) {
    auto s = run_job(kJobMotionPreprocess, job_payload(motion->record.id), *blobs, *cat_);
    ASSERT_TRUE(s) << s.error().to_string();
    auto m = cat_->get_motion(motion->record.id);
    ASSERT_TRUE(m && m->has_value());
    EXPECT_EQ((*m)->preprocess_state, store::PreprocessState::done);
    ASSERT_TRUE((*m)->keypoints_asset_id.has_value());
    if (!first) first = (*m)->keypoints_asset_id;
    EXPECT_EQ((*m)->keypoints_asset_id, first);
  }
  auto kp = cat_->get_asset(*first);
  ASSERT_TRUE(kp && kp->has_value());
  EXPECT_EQ((*kp)->refcount, 1);
  EXPECT_EQ(files_under(dir_ / "blobs" / "keypoints"), 1u);
  EXPECT_EQ(files_under(dir_ / "blobs" / "tmp"), 0u);
}

/// A BVH motion (pending) whose file is in the blob store at `blob_root`.
std::int64_t add_bvh_motion(const fs::path& blob_root, store::Catalogue& cat) {
  auto blobs = store::BlobStore::open(blob_root);
  EXPECT_TRUE(blobs);
  std::ifstream in(fs::path(CHARKIT_TEST_DATA) / "bvh" / "test_freebvh.bvh", std::ios::binary);
  const std::string bvh((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_FALSE(bvh.empty());
  auto blob =
      blobs->put(store::Kind::motion, "bvh",
                 core::Bytes(reinterpret_cast<const std::uint8_t*>(bvh.data()), bvh.size()));
  EXPECT_TRUE(blob) << blob.error().to_string();
  auto asset = cat.put_asset(
      store::NewAsset{blob->sha256, store::Kind::motion, "bvh", blob->size, "a.bvh", blob->key});
  EXPECT_TRUE(asset);
  store::Motion fields;
  fields.format = "bvh";
  auto motion = cat.add_motion(asset->record.id, fields);
  EXPECT_TRUE(motion);
  return motion->record.id;
}

// An error after the motion was marked running (here the content lock of the
// keypoints cannot be taken: the database refuses the lock row) fails the
// job for good, so the motion fails with it, with the job's error text; it
// used to stay `running` forever.
TEST_P(WorkerPoolTest, ContentLockErrorFailsThePreprocessedMotion) {
  const std::int64_t id = add_bvh_motion(dir_ / "blobs", *cat_);
  ASSERT_NO_FATAL_FAILURE(inject_fault("content_locks", "INSERT", ""));
  auto blobs = store::BlobStore::open(dir_ / "blobs");
  ASSERT_TRUE(blobs);
  auto s = run_job(kJobMotionPreprocess, job_payload(id), *blobs, *cat_);
  ASSERT_FALSE(s);
  auto m = cat_->get_motion(id);
  ASSERT_TRUE(m && m->has_value());
  EXPECT_EQ((*m)->preprocess_state, store::PreprocessState::failed);
  EXPECT_EQ((*m)->error.rfind(s.error().code + ": ", 0), 0u) << (*m)->error;
  EXPECT_NE((*m)->error.find("injected fault"), std::string::npos) << (*m)->error;
  EXPECT_FALSE((*m)->keypoints_asset_id.has_value());
  EXPECT_EQ(files_under(dir_ / "blobs" / "tmp"), 0u);  // the upload was aborted
}

// The same through the pool, the last write failing (the motion's `done`
// record is refused): the job is failed (not retried) and the motion is
// `failed` with the job's error text and no keypoints, not `running`.
TEST_P(WorkerPoolTest, FailedFinalRecordFailsTheJobAndTheMotion) {
  const std::int64_t id = add_bvh_motion(dir_ / "blobs", *cat_);
  ASSERT_NO_FATAL_FAILURE(inject_fault("motions", "UPDATE", "NEW.preprocess_state = 'done'"));
  auto enq = queue_->enqueue(kJobMotionPreprocess, job_payload(id));
  ASSERT_TRUE(enq);
  auto pool = start(pool_options({}));
  ASSERT_TRUE(pool);
  ASSERT_TRUE(eventually([&] { return job(enq->id).state == store::JobState::failed; }));
  pool->stop();
  const store::Job j = job(enq->id);
  EXPECT_EQ(j.attempts, 1);
  EXPECT_NE(j.error.find("injected fault"), std::string::npos) << j.error;
  auto m = cat_->get_motion(id);
  ASSERT_TRUE(m && m->has_value());
  EXPECT_EQ((*m)->preprocess_state, store::PreprocessState::failed);
  EXPECT_EQ((*m)->error, j.error);
  EXPECT_FALSE((*m)->keypoints_asset_id.has_value());
  EXPECT_EQ(pool->stats().failures, 1u);
  EXPECT_EQ(pool->stats().completions, 0u);
}

// PostgreSQL only (SQLite has no notifications): an idle pool whose poll
// interval is a minute wakes on the NOTIFY of an enqueue made through another
// connection. Instantiated for PostgreSQL alone, so no run reports a skip.
class WorkerPoolNotifyTest : public WorkerPoolTest {};
INSTANTIATE_TEST_SUITE_P(Catalogue, WorkerPoolNotifyTest, ::testing::Values(Backend::postgresql),
                         [](const ::testing::TestParamInfo<Backend>&) {
                           return std::string("postgresql");
                         });

TEST_P(WorkerPoolNotifyTest, NotifyWakesAnIdlePool) {
  std::atomic<bool> ran{false};
  auto o = pool_options([&](const store::Job&, const std::atomic<bool>&) -> core::Status {
    ran = true;
    return core::Ok{};
  });
  o.idle_poll = 60s;
  o.notify_poll = 60s;
  auto pool = start(o);
  ASSERT_TRUE(pool);
  std::this_thread::sleep_for(500ms);  // the thread's first claim found nothing: it waits
  auto other = open_catalogue();
  ASSERT_TRUE(other);
  const auto t0 = Clock::now();
  ASSERT_TRUE(store::JobQueue(*other).enqueue("test.job", job_payload(1)));
  ASSERT_TRUE(eventually([&] { return ran.load(); }, 20s));
  EXPECT_LT(Clock::now() - t0, 20s);  // well under the 60 s poll
  pool->stop();
  EXPECT_GE(pool->stats().notifications, 1u);
  // The channel names the schema: catalogues in other schemas use other channels.
  EXPECT_EQ(store::job_channel_for_schema(db_.schema), "charkit_jobs:" + db_.schema);
  EXPECT_NE(store::job_channel_for_schema(db_.schema + "_x"),
            store::job_channel_for_schema(db_.schema));
}

}  // namespace
}  // namespace charkit::server
