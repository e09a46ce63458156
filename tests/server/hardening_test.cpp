// Requests that used to kill or desynchronise the server, each
// sent with its exact bytes: invalid UTF-8 that reached a JSON answer (also
// after being stored by a failed job and the server restarted), chunked
// trailers past the header limit, Transfer-Encoding values other than
// `chunked`, malformed chunk framing and empty chunked uploads. After each
// one the server must still answer.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "charkit/core/json.h"
#include "charkit/core/utf8.h"
#include "http_client.h"
#include "test_server.h"

namespace charkit::server {
namespace {

namespace fs = std::filesystem;
using core::Json;
using test_http::count_files;
using test_http::files_left;
using test_http::raw_exchange;
using test_http::raw_request;
using test_http::read_file;
using test_http::request;
using test_http::Response;
namespace http = test_http::http;

class HardeningTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    dir_ = fs::temp_directory_path() /
           ("charkit_hardening_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(dir_);
    auto [db, skip] = test_db(GetParam());
    if (!skip.empty()) GTEST_SKIP() << skip;
    db_ = db;
    start();
  }
  void TearDown() override {
    server_.reset();
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  void start() {
    server_.reset();
    auto t = start_test_server(dir_, 1u << 20, db_);
    ASSERT_TRUE(t.ok()) << t.error().to_string();
    server_ = std::move(t->server);
    port_ = t->port;
  }
  /// The server is alive and answers normally.
  void expect_alive() {
    auto r = request(port_, http::verb::get, "/healthz");
    EXPECT_EQ(r.status, 200u);
  }
  Json wait_done(const std::string& url, const std::string& field) {
    Json j;  // a deadline, not a count of polls (a loaded machine under ASan is slow)
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
    do {
      auto r = request(port_, http::verb::get, url);
      EXPECT_TRUE(core::is_valid_utf8(r.body));
      j = r.json();
      std::string s = j.value(field, "");
      if (s != "pending" && s != "running" && s != "unknown") return j;
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    } while (std::chrono::steady_clock::now() < deadline);
    return j;
  }

  fs::path dir_;
  TestDb db_;
  std::unique_ptr<Server> server_;
  std::uint16_t port_ = 0;
};

INSTANTIATE_TEST_SUITE_P(Catalogue, HardeningTest,
                         ::testing::Values(Backend::sqlite, Backend::postgresql),
                         [](const ::testing::TestParamInfo<Backend>& i) {
                           return i.param == Backend::sqlite ? std::string("sqlite")
                                                             : std::string("postgresql");
                         });

TEST_P(HardeningTest, InvalidUtf8InTheTargetIsAnsweredInValidJson) {
  for (const char* target : {"/api/motions/%FF", "/api/models/%FF", "/api/packages/%C3%28/report",
                             "/api/packages/%ED%A0%80", "/api/motions/%F0%9F%98"}) {
    auto r = request(port_, http::verb::get, target);
    EXPECT_EQ(r.status, 400u) << target;
    EXPECT_TRUE(core::is_valid_utf8(r.body)) << target;
    EXPECT_EQ(r.json()["error"], "BAD_ID") << target;
  }
  auto d = request(port_, http::verb::delete_, "/api/motions/%FF");
  EXPECT_EQ(d.status, 400u);
  EXPECT_TRUE(core::is_valid_utf8(d.body));
  // A WebSocket upgrade to a bad id is refused before the handshake, in valid JSON.
  std::string upgrade =
      "GET /api/motions/%FF/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
      "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
      "Sec-WebSocket-Version: 13\r\n\r\n";
  auto w = raw_request(port_, upgrade);
  EXPECT_EQ(w.status, 400u);
  EXPECT_TRUE(core::is_valid_utf8(w.body));
  expect_alive();
}

TEST_P(HardeningTest, StoredErrorsQuotingInvalidUtf8AreServedAfterARestart) {
  // Each upload fails its job with a message that quotes the bad bytes.
  const std::string keypoints = "{\"format\":\"mediapipe33@0.1.0\",\"frames\":[\xff\xfe]}";
  const std::string bvh =
      "HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0 0\n  CHANNELS 3 Xposition "
      "Yposition Zposition\n  End Site\n  {\n    OFFSET 0 1 0\n  }\n}\n"
      "MOTION\nFrames: \xff\xfe\nFrame Time: 0.033\n0 0 0\n";
  // A multi-byte character (U+00E9) cut by the message's 40-byte quote.
  const std::string bvh_cut =
      "HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0 0\n  CHANNELS 3 Xposition "
      "Yposition Zposition\n  End Site\n  {\n    OFFSET 0 1 0\n  }\n}\n"
      "MOTION\nFrames: " +
      std::string(39, 'a') + "\xC3\xA9" + "\nFrame Time: 0.033\n0 0 0\n";
  const std::string gltf = "{\"asset\":{\"version\":\"2.0\"},\"nodes\":[\xff\xfe]}";
  auto a = request(port_, http::verb::post, "/api/motions?filename=bad.json", keypoints);
  ASSERT_EQ(a.status, 201u) << a.body;
  auto b = request(port_, http::verb::post, "/api/motions?filename=bad.bvh", bvh);
  ASSERT_EQ(b.status, 201u) << b.body;
  auto c = request(port_, http::verb::post, "/api/motions?filename=cut.bvh", bvh_cut);
  ASSERT_EQ(c.status, 201u) << c.body;
  auto m = request(port_, http::verb::post, "/api/models?filename=bad.gltf", gltf);
  ASSERT_EQ(m.status, 201u) << m.body;
  for (const auto& r : {a, b, c}) {
    Json j =
        wait_done("/api/motions/" + std::to_string(r.json()["id"].get<int>()), "preprocessState");
    EXPECT_EQ(j["preprocessState"], "failed") << j.dump();
    EXPECT_TRUE(j["error"].is_string());
  }
  Json mj = wait_done("/api/models/" + std::to_string(m.json()["id"].get<int>()), "intakeState");
  EXPECT_EQ(mj["intakeState"], "failed") << mj.dump();

  for (int round = 0; round < 2; ++round) {
    auto list = request(port_, http::verb::get, "/api/motions");
    ASSERT_EQ(list.status, 200u);
    ASSERT_TRUE(core::is_valid_utf8(list.body));
    EXPECT_EQ(list.json()["total"], 3);
    auto models = request(port_, http::verb::get, "/api/models");
    ASSERT_EQ(models.status, 200u);
    ASSERT_TRUE(core::is_valid_utf8(models.body));
    start();  // and again after a restart, from the stored rows
  }
  expect_alive();
}

TEST_P(HardeningTest, ChunkedTrailerOverTheHeaderLimitIsRefusedAndTheUploadRemoved) {
  const std::string big(70000, 'a');
  // On a plain route.
  std::string healthz =
      "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n"
      "0\r\nX-Big: " +
      big + "\r\n\r\n";
  auto r = raw_request(port_, healthz);
  EXPECT_EQ(r.status, 431u);
  expect_alive();
  // On an upload: the file data arrives, then the trailer.
  std::string upload =
      "POST /api/motions?filename=t.bvh HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: "
      "chunked\r\n\r\n"
      "5\r\nhello\r\n0\r\nX-Big: " +
      big + "\r\n\r\n";
  auto u = raw_request(port_, upload);
  EXPECT_EQ(u.status, 431u);
  EXPECT_EQ(u.json()["error"], "HEADER_TOO_LARGE");
  std::size_t left = 1;
  for (int i = 0; i < 500 && left != 0; ++i) {
    left = count_files(dir_ / "blobs");
    if (left) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(left, 0u);
  // A trailer within the limit is accepted (and ignored).
  std::string fine =
      "POST /api/motions?filename=t.json HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: "
      "chunked\r\n\r\n"
      "2\r\n{}\r\n0\r\nX-Small: 1\r\n\r\n";
  EXPECT_EQ(raw_request(port_, fine).status, 201u);
  expect_alive();
}

TEST_P(HardeningTest, TransferEncodingOtherThanChunkedIsRefusedNotSmuggled) {
  // The body is a second request: a server that ignored the coding would answer it too.
  const std::string smuggled = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  for (const char* te : {"xchunked", "chunked, identity", "identity", "gzip, chunked",
                         "chunked\r\nTransfer-Encoding: chunked"}) {
    for (const char* target : {"/healthz", "/api/motions?filename=a.bvh"}) {
      std::string req = std::string(target[1] == 'h' ? "GET " : "POST ") + target +
                        " HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: " + te + "\r\n\r\n" +
                        smuggled;
      std::string got = raw_exchange(port_, req);
      EXPECT_EQ(got.rfind("HTTP/1.1 400", 0), 0u) << te << " " << target << ": " << got;
      EXPECT_NE(got.find("BAD_TRANSFER_ENCODING"), std::string::npos) << te;
      std::size_t answers = 0;
      for (std::size_t p = got.find("HTTP/1.1 "); p != std::string::npos;
           p = got.find("HTTP/1.1 ", p + 1))
        ++answers;
      EXPECT_EQ(answers, 1u) << te << " " << target << ": " << got;
    }
  }
  expect_alive();
}

TEST_P(HardeningTest, MalformedChunkFramingIs400) {
  for (const char* body :
       {"zz\r\nhello\r\n0\r\n\r\n", "5\r\nhelloXX0\r\n\r\n", "5;\x01=1\r\nhello\r\n0\r\n\r\n"}) {
    for (const char* target : {"GET /healthz", "POST /api/motions?filename=a.bvh"}) {
      std::string req = std::string(target) +
                        " HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n" + body;
      auto r = raw_request(port_, req);
      EXPECT_EQ(r.status, 400u) << target << " " << body;
      EXPECT_EQ(r.json()["error"], "HTTP_BAD_FRAMING") << target;
    }
  }
  EXPECT_EQ(files_left(dir_ / "blobs" / "tmp"), 0u);
  expect_alive();
}

TEST_P(HardeningTest, EmptyChunkedUploadIs400EmptyBody) {
  auto r = raw_request(port_,
                       "POST /api/motions?filename=a.bvh HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                       "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n");
  EXPECT_EQ(r.status, 400u);
  EXPECT_EQ(r.json()["error"], "EMPTY_BODY");
  EXPECT_EQ(request(port_, http::verb::get, "/api/motions").json()["total"], 0);
  EXPECT_EQ(files_left(dir_ / "blobs"), 0u);
  expect_alive();
}

TEST_P(HardeningTest, HugeDeclaredLengthsAreRefusedBeforeAnythingIsReserved) {
  // The http_framing fuzzer's finding against a reader that made a string
  // body first: Beast reserves the declared length. The server refuses first.
  const std::string huge = "17774258721798138";
  for (const char* head : {"GET /healthz", "POST /login", "DELETE /api/motions/1"}) {
    auto r = raw_request(port_, std::string(head) +
                                    " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: " + huge +
                                    "\r\n\r\nabc");
    EXPECT_EQ(r.status, 413u) << head;
    EXPECT_EQ(r.json()["error"], "BODY_TOO_LARGE") << head;
  }
  auto up = raw_request(port_,
                        "POST /api/motions?filename=a.bvh HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                        "Content-Length: " +
                            huge + "\r\n\r\nabc");
  EXPECT_EQ(up.status, 413u);
  EXPECT_EQ(up.json()["error"], "UPLOAD_TOO_LARGE");
  EXPECT_EQ(files_left(dir_ / "blobs"), 0u);
  expect_alive();
}

}  // namespace
}  // namespace charkit::server
