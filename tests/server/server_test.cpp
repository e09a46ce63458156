// End-to-end tests of the HTTP server: a Server on 127.0.0.1:0 with a
// temporary data folder and SQLite, driven by a small Beast client.
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
#include <string>
#include <thread>

#include "charkit/core/json.h"
#include "charkit/core/sha256.h"
#include "charkit/server/server.h"
#include "test_server.h"

namespace charkit::server {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using core::Json;
namespace fs = std::filesystem;

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

struct Response {
  unsigned status = 0;
  std::string body;
  std::map<std::string, std::string> headers;
  Json json() const { return Json::parse(body); }
};

/// One request on a fresh connection.
Response request(std::uint16_t port, http::verb method, const std::string& target,
                 const std::string& body = {},
                 const std::map<std::string, std::string>& headers = {}) {
  net::io_context ioc;
  tcp::socket sock(ioc);
  sock.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port));
  http::request<http::string_body> req{method, target, 11};
  req.set(http::field::host, "127.0.0.1");
  for (const auto& [k, v] : headers) req.set(k, v);
  if (!body.empty() || method == http::verb::post) {
    req.body() = body;
    req.prepare_payload();
  }
  http::write(sock, req);
  beast::flat_buffer buf;
  http::response_parser<http::string_body> parser;
  parser.body_limit(64u << 20);
  http::read(sock, buf, parser);
  Response r;
  r.status = parser.get().result_int();
  r.body = parser.get().body();
  for (const auto& f : parser.get())
    r.headers[std::string(f.name_string())] = std::string(f.value());
  return r;
}

/// Writes raw bytes, then reads a response if one comes; status 0 when the
/// server closed the connection without one.
Response raw_request(std::uint16_t port, const std::string& bytes) {
  net::io_context ioc;
  tcp::socket sock(ioc);
  sock.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port));
  beast::error_code ec;
  net::write(sock, net::buffer(bytes), ec);
  Response r;
  beast::flat_buffer buf;
  http::response_parser<http::string_body> parser;
  http::read(sock, buf, parser, ec);
  if (ec) return r;
  r.status = parser.get().result_int();
  r.body = parser.get().body();
  return r;
}

/// Regular files under dir (recursively).
std::size_t count_files(const fs::path& dir) {
  std::size_t n = 0;
  if (!fs::exists(dir)) return 0;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) ++n;
  return n;
}

class ServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    dir_ = fs::temp_directory_path() /
           ("charkit_server_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(dir_);
    start_server(1u << 20);
  }
  void TearDown() override {
    server_.reset();
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  void start_server(std::uint64_t max_upload) {
    server_.reset();
    auto t = start_test_server(dir_, max_upload);
    ASSERT_TRUE(t.ok()) << t.error().to_string();
    server_ = std::move(t->server);
    port_ = t->port;
    ASSERT_NE(port_, 0);
  }
  Response upload(const std::string& kind, const std::string& name, const std::string& body) {
    return request(port_, http::verb::post, "/api/" + kind + "?filename=" + name, body);
  }
  /// Polls GET url until field is no longer one of the waiting states (bounded tries).
  Json wait_for(const std::string& url, const std::string& field) {
    Json j;
    for (int i = 0; i < 400; ++i) {
      j = request(port_, http::verb::get, url).json();
      std::string s = j.value(field, "");
      if (s != "pending" && s != "running" && s != "unknown") return j;
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    return j;
  }

  fs::path dir_;
  std::unique_ptr<Server> server_;
  std::uint16_t port_ = 0;
};

const fs::path kData = CHARKIT_TEST_DATA;

TEST_F(ServerTest, Healthz) {
  auto r = request(port_, http::verb::get, "/healthz");
  EXPECT_EQ(r.status, 200u);
  auto j = r.json();
  EXPECT_EQ(j["status"], "ok");
  EXPECT_EQ(j["database"], "sqlite");
  EXPECT_GE(j["schemaVersion"].get<int>(), 1);
}

TEST_F(ServerTest, UnknownRouteAndMethod) {
  auto r = request(port_, http::verb::get, "/nope");
  EXPECT_EQ(r.status, 404u);
  EXPECT_EQ(r.json()["error"], "NOT_FOUND");
  auto m = request(port_, http::verb::put, "/api/motions/1");
  EXPECT_EQ(m.status, 405u);
  EXPECT_EQ(m.headers["Allow"], "GET, DELETE");
  auto bad = request(port_, http::verb::get, "/api/motions/abc");
  EXPECT_EQ(bad.status, 400u);
  EXPECT_EQ(request(port_, http::verb::get, "/api/motions/99").status, 404u);
}

TEST_F(ServerTest, BvhUploadDedupPreprocessKeypoints) {
  std::string bvh = read_file(kData / "bvh" / "test_freebvh.bvh");
  ASSERT_FALSE(bvh.empty());
  auto r1 = upload("motions", "walk.bvh", bvh);
  ASSERT_EQ(r1.status, 201u) << r1.body;
  auto j1 = r1.json();
  std::string digest = core::to_hex(
      core::sha256(core::Bytes(reinterpret_cast<const std::uint8_t*>(bvh.data()), bvh.size())));
  EXPECT_EQ(j1["sha256"], digest);
  EXPECT_EQ(j1["format"], "bvh");
  EXPECT_EQ(j1["originalName"], "walk.bvh");
  EXPECT_TRUE(j1["created"].get<bool>());
  std::int64_t id = j1["id"];

  auto r2 = upload("motions", "again.bvh", bvh);
  EXPECT_EQ(r2.status, 200u);
  EXPECT_EQ(r2.json()["id"], id);
  EXPECT_FALSE(r2.json()["created"].get<bool>());

  Json m = wait_for("/api/motions/" + std::to_string(id), "preprocessState");
  ASSERT_EQ(m["preprocessState"], "done") << m.dump();
  EXPECT_GT(m["frames"].get<std::int64_t>(), 0);

  auto kp =
      request(port_, http::verb::get, "/api/motions/" + std::to_string(id) + "/keypoints.ndjson");
  ASSERT_EQ(kp.status, 200u);
  EXPECT_EQ(kp.headers["Content-Type"], "application/x-ndjson");
  std::size_t lines = 0;
  std::size_t pos = 0;
  while (pos < kp.body.size()) {
    std::size_t nl = kp.body.find('\n', pos);
    ASSERT_NE(nl, std::string::npos);
    Json line = Json::parse(kp.body.substr(pos, nl - pos));
    ASSERT_EQ(line["points"].size(), 33u);
    EXPECT_EQ(line["frame"].get<std::int64_t>(), static_cast<std::int64_t>(lines));
    ++lines;
    pos = nl + 1;
  }
  EXPECT_EQ(static_cast<std::int64_t>(lines), m["frames"].get<std::int64_t>());

  auto list = request(port_, http::verb::get, "/api/motions?limit=10&state=done").json();
  EXPECT_EQ(list["total"], 1);
  EXPECT_EQ(list["items"][0]["id"], id);
  auto none = request(port_, http::verb::get, "/api/motions?state=failed").json();
  EXPECT_EQ(none["total"], 0);
}

TEST_F(ServerTest, ListPaging) {
  std::vector<std::int64_t> ids;
  for (int i = 0; i < 3; ++i) {
    auto r = upload("motions", "k" + std::to_string(i) + ".json",
                    "{\"not keypoints\": " + std::to_string(i) + "}");
    ASSERT_EQ(r.status, 201u) << r.body;
    ids.push_back(r.json()["id"]);
  }
  auto p1 = request(port_, http::verb::get, "/api/motions?limit=2").json();
  ASSERT_EQ(p1["items"].size(), 2u);
  EXPECT_EQ(p1["total"], 3);
  EXPECT_EQ(p1["items"][0]["id"], ids[0]);
  auto p2 = request(port_, http::verb::get,
                    "/api/motions?limit=2&after=" + std::to_string(p1["nextAfter"].get<int>()))
                .json();
  ASSERT_EQ(p2["items"].size(), 1u);
  EXPECT_EQ(p2["items"][0]["id"], ids[2]);
  EXPECT_TRUE(p2["nextAfter"].is_null());
  EXPECT_EQ(request(port_, http::verb::get, "/api/motions?limit=x").status, 400u);
  // Not keypoint JSON: preprocessing fails with the reason.
  Json m = wait_for("/api/motions/" + std::to_string(ids[0]), "preprocessState");
  EXPECT_EQ(m["preprocessState"], "failed");
  EXPECT_FALSE(m["error"].get<std::string>().empty());
  EXPECT_EQ(request(port_, http::verb::get,
                    "/api/motions/" + std::to_string(ids[0]) + "/keypoints.ndjson")
                .status,
            409u);
}

TEST_F(ServerTest, WrongExtensionIs422) {
  auto r = upload("motions", "notes.txt", "hello");
  EXPECT_EQ(r.status, 422u);
  EXPECT_EQ(r.json()["error"], "UNSUPPORTED_EXTENSION");
  EXPECT_EQ(r.json()["detail"]["extension"], "txt");
  auto missing = request(port_, http::verb::post, "/api/motions", "x");
  EXPECT_EQ(missing.status, 400u);
  EXPECT_EQ(missing.json()["error"], "MISSING_FILENAME");
  EXPECT_EQ(count_files(dir_ / "blobs"), 0u);
}

TEST_F(ServerTest, ContentLengthOverLimitIs413BeforeReading) {
  start_server(1000);
  // Only the header: the server must answer without waiting for the body.
  auto r = raw_request(port_,
                       "POST /api/motions?filename=big.bvh HTTP/1.1\r\nHost: x\r\n"
                       "Content-Length: 5000\r\n\r\n");
  EXPECT_EQ(r.status, 413u);
  EXPECT_EQ(Json::parse(r.body)["error"], "UPLOAD_TOO_LARGE");
  // A chunked body that grows past the limit is cut off too.
  std::string chunk(800, 'a');
  std::string chunked =
      "POST /api/motions?filename=big.bvh HTTP/1.1\r\nHost: x\r\n"
      "Transfer-Encoding: chunked\r\n\r\n";
  for (int i = 0; i < 3; ++i) chunked += "320\r\n" + chunk + "\r\n";
  chunked += "0\r\n\r\n";
  auto c = raw_request(port_, chunked);
  EXPECT_EQ(c.status, 413u);
  EXPECT_EQ(count_files(dir_ / "blobs"), 0u);
  auto list = request(port_, http::verb::get, "/api/motions").json();
  EXPECT_EQ(list["total"], 0);
}

TEST_F(ServerTest, HugeHeaderRefused) {
  std::string req =
      "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(100 * 1024, 'a') + "\r\n\r\n";
  auto r = raw_request(port_, req);
  // Either a 431 or a closed connection; never a 200.
  EXPECT_TRUE(r.status == 431u || r.status == 0u) << r.status;
  // The server still works.
  EXPECT_EQ(request(port_, http::verb::get, "/healthz").status, 200u);
}

TEST_F(ServerTest, PathTraversalInFilenameStaysInTheStore) {
  std::string bvh = read_file(kData / "bvh" / "test_freebvh.bvh");
  auto r = upload("motions", "..%2F..%2F..%2Fescape.bvh", bvh);
  ASSERT_EQ(r.status, 201u) << r.body;
  auto j = r.json();
  EXPECT_EQ(j["originalName"], "escape.bvh");
  EXPECT_FALSE(fs::exists(dir_.parent_path() / "escape.bvh"));
  EXPECT_FALSE(fs::exists(dir_ / "escape.bvh"));
  // The only stored file is at its content address.
  std::string sha = j["sha256"];
  bool found = false;
  for (const auto& e : fs::recursive_directory_iterator(dir_ / "blobs"))
    if (e.is_regular_file() && e.path().filename() == sha + ".bvh") found = true;
  EXPECT_TRUE(found);
  // Encoded traversal in the path is refused.
  EXPECT_EQ(request(port_, http::verb::get, "/api/%2e%2e/healthz").status, 400u);
}

TEST_F(ServerTest, RangeAndDelete) {
  std::string bvh = read_file(kData / "bvh" / "test_freebvh.bvh");
  auto r = upload("motions", "walk.bvh", bvh);
  ASSERT_EQ(r.status, 201u);
  std::string sha = r.json()["sha256"];
  std::int64_t id = r.json()["id"];

  auto full = request(port_, http::verb::get, "/api/assets/" + sha);
  EXPECT_EQ(full.status, 200u);
  EXPECT_EQ(full.body, bvh);
  auto part = request(port_, http::verb::get, "/api/assets/" + sha, {}, {{"Range", "bytes=10-19"}});
  EXPECT_EQ(part.status, 206u);
  EXPECT_EQ(part.body, bvh.substr(10, 10));
  EXPECT_EQ(part.headers["Content-Range"], "bytes 10-19/" + std::to_string(bvh.size()));
  auto tail = request(port_, http::verb::get, "/api/assets/" + sha, {}, {{"Range", "bytes=-5"}});
  EXPECT_EQ(tail.status, 206u);
  EXPECT_EQ(tail.body, bvh.substr(bvh.size() - 5));
  auto past = request(port_, http::verb::get, "/api/assets/" + sha, {},
                      {{"Range", "bytes=" + std::to_string(bvh.size()) + "-"}});
  EXPECT_EQ(past.status, 416u);

  wait_for("/api/motions/" + std::to_string(id), "preprocessState");
  auto del = request(port_, http::verb::delete_, "/api/motions/" + std::to_string(id));
  EXPECT_EQ(del.status, 200u) << del.body;
  EXPECT_EQ(request(port_, http::verb::get, "/api/motions/" + std::to_string(id)).status, 404u);
  EXPECT_EQ(request(port_, http::verb::get, "/api/assets/" + sha).status, 404u);
  EXPECT_EQ(count_files(dir_ / "blobs"), 0u);  // the BVH and its keypoints are gone
  EXPECT_EQ(request(port_, http::verb::delete_, "/api/motions/" + std::to_string(id)).status, 404u);
}

TEST_F(ServerTest, PackageReport) {
  std::string bem = read_file(kData / "examples" / "example-1.5.bem");
  auto r = upload("packages", "example-1.5.bem", bem);
  ASSERT_EQ(r.status, 201u) << r.body;
  std::int64_t id = r.json()["id"];
  Json p = wait_for("/api/packages/" + std::to_string(id), "validity");
  EXPECT_EQ(p["validity"], "valid") << p.dump();
  EXPECT_EQ(p["bemVersion"], "1.5");
  auto rep = request(port_, http::verb::get, "/api/packages/" + std::to_string(id) + "/report");
  ASSERT_EQ(rep.status, 200u);
  Json j = rep.json();
  EXPECT_TRUE(j["valid"].get<bool>());
  EXPECT_EQ(j["effectiveVersion"], "1.5");
  EXPECT_EQ(j["issues"]["numErrors"], 0);

  // Garbage named .bem: invalid, with a report that says why.
  auto bad = upload("packages", "junk.bem", "not a package at all");
  ASSERT_EQ(bad.status, 201u);
  Json b = wait_for("/api/packages/" + std::to_string(bad.json()["id"].get<int>()), "validity");
  EXPECT_EQ(b["validity"], "invalid");
  auto brep = request(port_, http::verb::get,
                      "/api/packages/" + std::to_string(bad.json()["id"].get<int>()) + "/report");
  ASSERT_EQ(brep.status, 200u);
  EXPECT_GT(brep.json()["issues"]["numErrors"].get<int>(), 0);
}

TEST_F(ServerTest, IndexPage) {
  auto r = request(port_, http::verb::get, "/");
  EXPECT_EQ(r.status, 200u);
  EXPECT_NE(r.body.find("<form"), std::string::npos);
  EXPECT_EQ(r.headers["Content-Type"], "text/html; charset=utf-8");
}

TEST_F(ServerTest, StopDiscardsUploadInFlight) {
  net::io_context ioc;
  tcp::socket sock(ioc);
  sock.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port_));
  std::string head =
      "POST /api/motions?filename=slow.bvh HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n" +
      std::string(1000, 'x');
  net::write(sock, net::buffer(head));
  // Wait (bounded) until the temporary file exists, then stop the server.
  bool tmp_seen = false;
  for (int i = 0; i < 200 && !tmp_seen; ++i) {
    tmp_seen = count_files(dir_ / "blobs" / "tmp") > 0;
    if (!tmp_seen) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(tmp_seen);
  server_->stop();
  EXPECT_EQ(count_files(dir_ / "blobs"), 0u);
}

}  // namespace
}  // namespace charkit::server
