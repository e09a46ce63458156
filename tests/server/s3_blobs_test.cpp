// The server with its blobs in S3-compatible storage (--blobs s3://…): an
// upload lands in the bucket, the job worker preprocesses it from a
// downloaded copy, downloads and Range requests stream from ranged GETs, and
// a delete removes the objects. Runs against the s3rver of the ctest fixture
// (tests/store: scripts/s3_test_server) found through CHARKIT_TEST_S3_ENV, or
// CHARKIT_TEST_S3_URL with AWS_* credentials; skips without them.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "charkit/core/json.h"
#include "charkit/server/worker.h"
#include "charkit/store/blob_store.h"
#include "charkit/store/catalogue.h"
#include "charkit/store/detail/s3_client.h"
#include "charkit/store/jobs.h"
#include "http_client.h"
#include "test_server.h"

namespace charkit::server {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using core::Json;
using test_http::request;
namespace fs = std::filesystem;

/// The S3 test server's URL with a fresh prefix ("" when there is none).
std::string s3_test_location() {
  static std::once_flag once;
  std::call_once(once, [] {
    const char* env = std::getenv("CHARKIT_TEST_S3_ENV");
    if (!env || !*env) return;
    std::ifstream f(env);
    std::string line;
    while (std::getline(f, line))
      if (const auto eq = line.find('='); eq != std::string::npos && eq > 0)
        ::setenv(line.substr(0, eq).c_str(), line.substr(eq + 1).c_str(), 1);
  });
  const char* url = std::getenv("CHARKIT_TEST_S3_URL");
  if (!url || !*url) return {};
  std::string u = url;
  const auto q = u.find('?');
  std::string base = u.substr(0, q);
  while (!base.empty() && base.back() == '/') base.pop_back();
  return base + "/srv" + std::to_string(::getpid()) + "-" +
         std::to_string(std::chrono::steady_clock::now().time_since_epoch().count() % 1000000) +
         (q == std::string::npos ? "" : u.substr(q));
}

/// Objects under the location's prefix.
std::size_t count_objects(const std::string& location) {
  auto loc = store::s3::parse_url(location);
  auto cred = store::s3::credentials_from_env();
  if (!loc || !cred) return 0;
  store::s3::Client client(*loc, *cred, {});
  store::s3::Call c;
  c.query = {{"list-type", "2"}, {"prefix", loc->prefix + "/"}};
  auto r = client.send(c);
  if (!r || r->status != 200) return 0;
  auto doc = store::xml::parse(r->body);
  return doc ? doc->all("Contents").size() : 0;
}

TEST(ServerOnS3, UploadPreprocessStreamRangeAndDelete) {
  const std::string location = s3_test_location();
  if (location.empty())
    GTEST_SKIP() << "CHARKIT_TEST_S3_URL is not set (ctest starts s3rver with "
                    "scripts/s3_test_server)";
  static std::atomic<int> counter{0};
  const fs::path dir =
      fs::temp_directory_path() /
      ("charkit_server_s3_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
  fs::remove_all(dir);
  ServerOptions o = test_server_options(dir);
  o.blob_root = location;
  auto t = start_test_server(o);
  ASSERT_TRUE(t) << t.error().to_string();
  const std::uint16_t port = t->port;

  std::ifstream in(kData / "bvh" / "test_freebvh.bvh", std::ios::binary);
  const std::string bvh((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(bvh.empty());
  auto up = request(port, http::verb::post, "/api/motions?filename=walk.bvh", bvh);
  ASSERT_EQ(up.status, 201u) << up.body;
  const Json j = Json::parse(up.body);
  const std::int64_t id = j["id"];
  const std::string sha = j["sha256"];
  EXPECT_FALSE(fs::exists(dir / "blobs"));  // nothing local but the catalogue

  Json m;
  for (int i = 0; i < 400; ++i) {
    m = Json::parse(request(port, http::verb::get, "/api/motions/" + std::to_string(id)).body);
    const std::string s = m.value("preprocessState", "");
    if (s != "pending" && s != "running") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  ASSERT_EQ(m["preprocessState"], "done") << m.dump();
  EXPECT_GT(m["frames"].get<std::int64_t>(), 0);
  EXPECT_EQ(count_objects(location), 4u);  // the BVH, its keypoints, and their index entries

  auto kp =
      request(port, http::verb::get, "/api/motions/" + std::to_string(id) + "/keypoints.ndjson");
  ASSERT_EQ(kp.status, 200u);
  EXPECT_EQ(static_cast<std::int64_t>(std::count(kp.body.begin(), kp.body.end(), '\n')),
            m["frames"].get<std::int64_t>());

  auto full = request(port, http::verb::get, "/api/assets/" + sha);
  EXPECT_EQ(full.status, 200u);
  EXPECT_EQ(full.body, bvh);
  auto part =
      request(port, http::verb::get, "/api/assets/" + sha, {}, {{"Range", "bytes=70000-70009"}});
  EXPECT_EQ(part.status, 206u);
  EXPECT_EQ(part.body, bvh.substr(70000, 10));
  EXPECT_EQ(part.headers["Content-Range"], "bytes 70000-70009/" + std::to_string(bvh.size()));

  auto del = request(port, http::verb::delete_, "/api/motions/" + std::to_string(id));
  EXPECT_EQ(del.status, 200u) << del.body;
  EXPECT_EQ(request(port, http::verb::get, "/api/assets/" + sha).status, 404u);
  EXPECT_EQ(count_objects(location), 0u);
  t->server.reset();
  std::error_code ec;
  fs::remove_all(dir, ec);
}

// A storage outage under a running job: a private s3rver (started by
// scripts/s3_test_server) is stopped after the upload and before the job
// runs. The job meets STORE_S3_NETWORK after its client's retries: the motion
// waits as `pending`, the job goes back to the queue with a delay. Once
// s3rver is back on the same port with the same objects, the job runs again
// and the motion is done; the bucket holds exactly what the records name.
TEST(ServerOnS3, AStorageOutageSendsTheJobBackToTheQueue) {
  if (s3_test_location().empty())
    GTEST_SKIP() << "no s3rver (ctest starts one with scripts/s3_test_server)";
  static std::atomic<int> counter{0};
  const fs::path dir =
      fs::temp_directory_path() /
      ("charkit_server_s3_outage_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
  fs::remove_all(dir);
  const std::string script =
      (kData.parent_path().parent_path() / "scripts" / "s3_test_server").string();
  const std::string s3dir = (dir / "s3").string();
  auto s3 = [&](const char* what) {
    return std::system((script + " " + what + " '" + s3dir + "' > /dev/null").c_str());
  };
  ASSERT_EQ(s3("start"), 0);
  std::string url;
  std::getline(std::ifstream(dir / "s3" / "url"), url);
  ASSERT_FALSE(url.empty());
  const auto q = url.find('?');
  const std::string location = url.substr(0, q) + "/outage" + url.substr(q);

  ServerOptions o = test_server_options(dir / "srv");
  o.blob_root = location;
  o.job_workers = 0;  // the job runs in the pool below, once storage is out
  auto t = start_test_server(o);
  ASSERT_TRUE(t) << t.error().to_string();
  // A pool that claims only when told (its idle poll is long; the server
  // does not wake it), started while the storage is up.
  WorkerPoolOptions wo;
  wo.db_url = "sqlite:" + (dir / "srv" / "charkit.sqlite3").string();
  wo.blob_root = location;
  wo.threads = 1;
  wo.idle_poll = std::chrono::milliseconds(60'000);
  auto pool = WorkerPool::start(wo);
  ASSERT_TRUE(pool) << pool.error().to_string();
  // Its first claim, at start, finds nothing; then it sleeps.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_EQ((*pool)->stats().claims, 0u);
  std::ifstream in(kData / "bvh" / "test_freebvh.bvh", std::ios::binary);
  const std::string bvh((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto up = request(t->port, http::verb::post, "/api/motions?filename=walk.bvh", bvh);
  ASSERT_EQ(up.status, 201u) << up.body;
  const std::string motion =
      "/api/motions/" + std::to_string(Json::parse(up.body)["id"].get<std::int64_t>());

  ASSERT_EQ(s3("down"), 0);
  (*pool)->notify();
  for (int i = 0; i < 400 && (*pool)->stats().storage_retries == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  ASSERT_EQ((*pool)->stats().storage_retries, 1u);
  EXPECT_EQ((*pool)->stats().failures, 0u);
  Json m = Json::parse(request(t->port, http::verb::get, motion).body);
  EXPECT_EQ(m["preprocessState"], "pending") << m.dump();
  {
    auto cat = store::Catalogue::open(wo.db_url);
    ASSERT_TRUE(cat) << cat.error().to_string();
    auto jobs = store::JobQueue(**cat).list(store::ListQuery{});
    ASSERT_TRUE(jobs) << jobs.error().to_string();
    ASSERT_EQ(jobs->items.size(), 1u);
    const store::Job& j = jobs->items[0];
    EXPECT_EQ(j.state, store::JobState::pending);
    EXPECT_EQ(j.attempts, 0);  // a storage retry does not spend an attempt
    EXPECT_NE(j.error.find("STORE_S3_NETWORK"), std::string::npos) << j.error;
    ASSERT_TRUE(j.lease_until.has_value());  // not to be claimed before this
    EXPECT_GE(*j.lease_until - j.updated_at, 1000);
  }

  ASSERT_EQ(s3("up"), 0);
  for (int i = 0; i < 400; ++i) {
    (*pool)->notify();  // the job may be claimed once its delay (1-2 s) has passed
    m = Json::parse(request(t->port, http::verb::get, motion).body);
    if (m["preprocessState"] != "pending" && m["preprocessState"] != "running") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  EXPECT_EQ(m["preprocessState"], "done") << m.dump();
  EXPECT_EQ((*pool)->stats().failures, 0u);
  EXPECT_EQ(count_objects(location), 4u);  // the BVH, its keypoints and their index entries
  pool->reset();
  t->server.reset();
  s3("stop");
  std::error_code ec;
  fs::remove_all(dir, ec);
}

}  // namespace
}  // namespace charkit::server
