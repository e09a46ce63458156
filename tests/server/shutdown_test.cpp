// Graceful shutdown of the job side: a job running when its pool (or the
// server holding it) stops goes back to `pending` with its attempt not
// counted, and the next pool runs it. The running job is a test runner that
// blocks until the pool raises its cancel flag, so "running at stop()" is
// certain rather than a matter of timing.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "charkit/core/error_codes.h"
#include "charkit/core/json.h"
#include "charkit/server/server.h"
#include "charkit/server/worker.h"
#include "charkit/store/catalogue.h"
#include "charkit/store/jobs.h"

namespace charkit::server {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

fs::path fresh_dir() {
  static std::atomic<int> counter{0};
  auto dir = fs::temp_directory_path() /
             ("charkit_shutdown_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

/// Waits (bounded, 10 s) until flag is true.
bool wait_until(const std::atomic<bool>& flag) {
  for (int i = 0; i < 2000 && !flag.load(); ++i) std::this_thread::sleep_for(5ms);
  return flag.load();
}

/// A runner that says it started, then blocks until cancelled (bounded: 20 s).
JobRunner blocking_runner(std::atomic<bool>& started, std::atomic<int>& runs) {
  return [&started, &runs](const store::Job&, const std::atomic<bool>& cancel) -> core::Status {
    ++runs;
    started = true;
    for (int i = 0; i < 4000 && !cancel.load(); ++i) std::this_thread::sleep_for(5ms);
    if (!cancel.load()) return core::make_error(core::codes::INTERNAL, "never cancelled");
    return core::make_error(kJobCancelled, "stopping");
  };
}

TEST(WorkerShutdown, BlockingJobIsPendingAfterStopAndRunsOnNextStart) {
  const fs::path dir = fresh_dir();
  const std::string url = "sqlite:" + (dir / "c.sqlite3").string();
  auto cat = store::Catalogue::open(url);
  ASSERT_TRUE(cat) << cat.error().to_string();
  store::JobQueue queue(**cat);
  auto job = queue.enqueue("test.block", "{}");
  ASSERT_TRUE(job) << job.error().to_string();

  std::atomic<bool> started{false};
  std::atomic<int> runs{0};
  WorkerPoolOptions o;
  o.db_url = url;
  o.blob_root = dir / "blobs";
  o.threads = 1;
  o.idle_poll = 10ms;
  o.runner = blocking_runner(started, runs);
  auto pool = WorkerPool::start(o);
  ASSERT_TRUE(pool) << pool.error().to_string();
  ASSERT_TRUE(wait_until(started));
  auto running = queue.get(job->id);
  ASSERT_TRUE(running && running->has_value());
  EXPECT_EQ((*running)->state, store::JobState::running);
  EXPECT_EQ((*running)->attempts, 1);

  (*pool)->stop();
  auto after = queue.get(job->id);
  ASSERT_TRUE(after && after->has_value());
  EXPECT_EQ((*after)->state, store::JobState::pending);
  EXPECT_EQ((*after)->attempts, 0);  // the interrupted attempt is not counted
  EXPECT_EQ((*after)->error, "");
  EXPECT_FALSE((*after)->lease_until.has_value());
  EXPECT_EQ(runs.load(), 1);

  // The next pool (a restart, or another worker) runs it to the end.
  std::atomic<bool> ran{false};
  o.runner = [&ran](const store::Job&, const std::atomic<bool>&) -> core::Status {
    ran = true;
    return core::Ok{};
  };
  auto again = WorkerPool::start(o);
  ASSERT_TRUE(again) << again.error().to_string();
  ASSERT_TRUE(wait_until(ran));
  store::JobState state = store::JobState::pending;
  for (int i = 0; i < 2000; ++i) {
    auto j = queue.get(job->id);
    ASSERT_TRUE(j && j->has_value());
    state = (*j)->state;
    if (state == store::JobState::done) {
      EXPECT_EQ((*j)->attempts, 1);
      break;
    }
    std::this_thread::sleep_for(5ms);
  }
  EXPECT_EQ(state, store::JobState::done);
  (*again)->stop();
  cat->reset();
  fs::remove_all(dir);
}

TEST(WorkerShutdown, FinishedJobIsRecordedEvenWhileStopping) {
  // A runner that ignores the flag and succeeds: stop() waits for it and
  // the job is done, not pending (nothing is run twice without need).
  const fs::path dir = fresh_dir();
  const std::string url = "sqlite:" + (dir / "c.sqlite3").string();
  auto cat = store::Catalogue::open(url);
  ASSERT_TRUE(cat);
  store::JobQueue queue(**cat);
  auto job = queue.enqueue("test.finish", "{}");
  ASSERT_TRUE(job);
  std::atomic<bool> started{false};
  WorkerPoolOptions o;
  o.db_url = url;
  o.blob_root = dir / "blobs";
  o.threads = 1;
  o.idle_poll = 10ms;
  o.runner = [&started](const store::Job&, const std::atomic<bool>& cancel) -> core::Status {
    started = true;
    for (int i = 0; i < 4000 && !cancel.load(); ++i) std::this_thread::sleep_for(5ms);
    return core::Ok{};
  };
  auto pool = WorkerPool::start(o);
  ASSERT_TRUE(pool);
  ASSERT_TRUE(wait_until(started));
  (*pool)->stop();
  auto after = queue.get(job->id);
  ASSERT_TRUE(after && after->has_value());
  EXPECT_EQ((*after)->state, store::JobState::done);
  EXPECT_EQ((*after)->attempts, 1);
  cat->reset();
  fs::remove_all(dir);
}

TEST(WorkerShutdown, CancelledPreprocessLeavesMotionPending) {
  // run_job itself with the flag already up: no work, JOB_CANCELLED, the
  // motion untouched (pending), no keypoint asset.
  const fs::path dir = fresh_dir();
  const std::string url = "sqlite:" + (dir / "c.sqlite3").string();
  auto cat = store::Catalogue::open(url);
  ASSERT_TRUE(cat);
  auto blobs = store::BlobStore::open(dir / "blobs");
  ASSERT_TRUE(blobs);
  auto up = blobs->begin_upload(store::Kind::motion, "bvh");
  ASSERT_TRUE(up);
  const std::string text = "HIERARCHY\n";
  ASSERT_TRUE(
      up->write(core::Bytes(reinterpret_cast<const std::uint8_t*>(text.data()), text.size())));
  auto blob = up->commit();
  ASSERT_TRUE(blob);
  auto asset = (*cat)->put_asset(
      store::NewAsset{blob->sha256, store::Kind::motion, "bvh", blob->size, "a.bvh", blob->key});
  ASSERT_TRUE(asset);
  store::Motion fields;
  fields.format = "bvh";
  auto motion = (*cat)->add_motion(asset->record.id, fields);
  ASSERT_TRUE(motion);
  std::atomic<bool> cancel{true};
  auto s = run_job(kJobMotionPreprocess, job_payload(motion->record.id), *blobs, **cat, &cancel);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, kJobCancelled);
  auto m = (*cat)->get_motion(motion->record.id);
  ASSERT_TRUE(m && m->has_value());
  EXPECT_EQ((*m)->preprocess_state, store::PreprocessState::pending);
  EXPECT_FALSE((*m)->keypoints_asset_id.has_value());
  // Without the flag the same (broken) BVH runs and fails with a reason.
  cancel = false;
  ASSERT_TRUE(
      run_job(kJobMotionPreprocess, job_payload(motion->record.id), *blobs, **cat, &cancel));
  m = (*cat)->get_motion(motion->record.id);
  EXPECT_EQ((*m)->preprocess_state, store::PreprocessState::failed);
  EXPECT_FALSE((*m)->error.empty());
  cat->reset();
  fs::remove_all(dir);
}

TEST(ServerShutdown, RunningJobIsPendingAfterServerStop) {
  const fs::path dir = fresh_dir();
  std::atomic<bool> started{false};
  std::atomic<int> runs{0};
  ServerOptions o;
  o.port = 0;
  o.data_dir = dir;
  o.http_threads = 1;
  o.job_workers = 1;
  o.quiet = true;
  o.job_runner = blocking_runner(started, runs);
  auto srv = Server::create(o);
  ASSERT_TRUE(srv) << srv.error().to_string();
  auto port = (*srv)->start();
  ASSERT_TRUE(port) << port.error().to_string();
  {
    namespace beast = boost::beast;
    namespace http = beast::http;
    namespace net = boost::asio;
    net::io_context ioc;
    net::ip::tcp::socket sock(ioc);
    sock.connect({net::ip::make_address("127.0.0.1"), *port});
    http::request<http::string_body> req{http::verb::post, "/api/motions?filename=a.bvh", 11};
    req.set(http::field::host, "127.0.0.1");
    req.body() = "HIERARCHY\n";
    req.prepare_payload();
    http::write(sock, req);
    beast::flat_buffer buf;
    http::response<http::string_body> res;
    http::read(sock, buf, res);
    ASSERT_EQ(res.result_int(), 201u) << res.body();
  }
  ASSERT_TRUE(wait_until(started));
  const auto t0 = std::chrono::steady_clock::now();
  (*srv)->stop();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
  srv->reset();
  auto cat = store::Catalogue::open(resolved_db_url(o));
  ASSERT_TRUE(cat);
  store::JobQueue queue(**cat);
  auto page = queue.list({});
  ASSERT_TRUE(page);
  ASSERT_EQ(page->items.size(), 1u);
  EXPECT_EQ(page->items[0].state, store::JobState::pending);
  EXPECT_EQ(page->items[0].attempts, 0);
  EXPECT_EQ(runs.load(), 1);
  cat->reset();
  fs::remove_all(dir);
}

}  // namespace
}  // namespace charkit::server
