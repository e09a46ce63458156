// Upload, delete and commit consistent under concurrency: the
// same bytes as a package, a model and a motion (one asset, three records
// with their own format and name), and uploads racing deletions of the same
// bytes (no 500, and a record's blob is always there).
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "charkit/core/json.h"
#include "charkit/core/sha256.h"
#include "http_client.h"
#include "test_server.h"

namespace charkit::server {
namespace {

namespace fs = std::filesystem;
using core::Json;
using test_http::count_files;
using test_http::request;
namespace http = test_http::http;

class ConsistencyTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    dir_ = fs::temp_directory_path() /
           ("charkit_consistency_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(dir_);
    auto [db, skip] = test_db(GetParam());
    if (!skip.empty()) GTEST_SKIP() << skip;
    auto o = test_server_options(dir_, 1u << 20, db);
    o.http_threads = 4;
    o.blocking_threads = 4;
    o.job_workers = 0;  // records and blobs only: no job changes them meanwhile
    auto t = start_test_server(o);
    ASSERT_TRUE(t.ok()) << t.error().to_string();
    server_ = std::move(t->server);
    port_ = t->port;
  }
  void TearDown() override {
    server_.reset();
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  fs::path dir_;
  std::unique_ptr<Server> server_;
  std::uint16_t port_ = 0;
};

INSTANTIATE_TEST_SUITE_P(Catalogue, ConsistencyTest,
                         ::testing::Values(Backend::sqlite, Backend::postgresql),
                         [](const ::testing::TestParamInfo<Backend>& i) {
                           return i.param == Backend::sqlite ? std::string("sqlite")
                                                             : std::string("postgresql");
                         });

TEST_P(ConsistencyTest, SameBytesAsThreeKindsAreOneAssetAndThreeRecords) {
  const std::string bytes = "{\"any\": \"bytes\"}";
  auto p = request(port_, http::verb::post, "/api/packages?filename=pack.zip", bytes);
  auto m = request(port_, http::verb::post, "/api/models?filename=figure.glb", bytes);
  auto n = request(port_, http::verb::post, "/api/motions?filename=walk.json", bytes);
  ASSERT_EQ(p.status, 201u) << p.body;
  ASSERT_EQ(m.status, 201u) << m.body;
  ASSERT_EQ(n.status, 201u) << n.body;
  EXPECT_EQ(p.json()["container"], "zip");
  EXPECT_EQ(p.json()["originalName"], "pack.zip");
  EXPECT_EQ(m.json()["format"], "glb");
  EXPECT_EQ(m.json()["originalName"], "figure.glb");
  EXPECT_EQ(n.json()["format"], "json");
  EXPECT_EQ(n.json()["originalName"], "walk.json");
  const std::string sha = p.json()["sha256"];
  EXPECT_EQ(m.json()["sha256"], sha);
  EXPECT_EQ(n.json()["sha256"], sha);
  // Deleting two of the three keeps the bytes for the third.
  EXPECT_EQ(request(port_, http::verb::delete_,
                    "/api/packages/" + std::to_string(p.json()["id"].get<int>()))
                .json()["removedBlobs"]
                .size(),
            0u);
  EXPECT_EQ(request(port_, http::verb::delete_,
                    "/api/models/" + std::to_string(m.json()["id"].get<int>()))
                .json()["removedBlobs"]
                .size(),
            0u);
  auto content = request(port_, http::verb::get, "/api/assets/" + sha);
  EXPECT_EQ(content.status, 200u);
  EXPECT_EQ(content.body, bytes);
  auto last = request(port_, http::verb::delete_,
                      "/api/motions/" + std::to_string(n.json()["id"].get<int>()));
  ASSERT_EQ(last.json()["removedBlobs"].size(), 1u);
  EXPECT_EQ(test_http::files_left(dir_ / "blobs"), 0u);
}

TEST_P(ConsistencyTest, UploadsRacingDeletesOfTheSameBytes) {
  const std::string bytes = "{\"frames\": []}";
  const std::string sha = core::to_hex(
      core::sha256(core::Bytes(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size())));
  std::atomic<bool> stop{false};
  std::mutex mu;
  std::map<unsigned, int> upload_status, delete_status;
  auto uploader = [&] {
    while (!stop) {
      auto r = request(port_, http::verb::post, "/api/motions?filename=race.json", bytes);
      std::lock_guard lock(mu);
      ++upload_status[r.status];
      if (r.status >= 500) ADD_FAILURE() << r.body;
    }
  };
  auto deleter = [&] {
    while (!stop) {
      const auto list = request(port_, http::verb::get, "/api/motions").json();
      for (const auto& item : list["items"]) {
        auto d = request(port_, http::verb::delete_,
                         "/api/motions/" + std::to_string(item["id"].get<int>()));
        std::lock_guard lock(mu);
        ++delete_status[d.status];
        if (d.status >= 500) ADD_FAILURE() << d.body;
      }
    }
  };
  std::thread u1(uploader), u2(uploader), d1(deleter);
  std::this_thread::sleep_for(std::chrono::seconds(4));
  stop = true;
  u1.join();
  u2.join();
  d1.join();
  EXPECT_GT(upload_status[201], 2) << "the race did not happen";
  EXPECT_GT(delete_status[200], 2) << "the race did not happen";
  // Whatever the last step was, a record's bytes are there; without a record, none are.
  auto list = request(port_, http::verb::get, "/api/motions").json();
  if (list["total"] == 1) {
    auto content = request(port_, http::verb::get, "/api/assets/" + sha);
    EXPECT_EQ(content.status, 200u);
    EXPECT_EQ(content.body, bytes);
  } else {
    EXPECT_EQ(list["total"], 0);
    EXPECT_EQ(test_http::files_left(dir_ / "blobs"), 0u);
  }
}

}  // namespace
}  // namespace charkit::server
