// End-to-end tests of the HTTP server: a Server on 127.0.0.1:0 with a
// temporary data folder and SQLite, driven by a small Beast client.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "charkit/core/json.h"
#include "charkit/core/sha256.h"
#include "charkit/server/detail/multipart.h"
#include "charkit/server/server.h"
#include "charkit/store/catalogue.h"
#include "charkit/store/jobs.h"
#include "glb_builder.h"
#include "http_client.h"
#include "package_builder.h"
#include "test_server.h"

namespace charkit::server {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using core::Json;
namespace fs = std::filesystem;

using test_http::count_files;
using test_http::raw_request;
using test_http::read_file;
using test_http::request;
using test_http::Response;

/// Every API test runs on SQLite and on PostgreSQL (a fresh schema each;
/// skipped without CHARKIT_TEST_PG_URL).
class ServerTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    dir_ = fs::temp_directory_path() /
           ("charkit_server_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(dir_);
    auto [db, skip] = test_db(GetParam());
    if (!skip.empty()) GTEST_SKIP() << skip;
    db_ = db;
    start_server(1u << 20);
  }
  void TearDown() override {
    server_.reset();
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  void start_server(std::uint64_t max_upload) {
    server_.reset();
    auto t = start_test_server(dir_, max_upload, db_);
    ASSERT_TRUE(t.ok()) << t.error().to_string();
    server_ = std::move(t->server);
    port_ = t->port;
    ASSERT_NE(port_, 0);
  }
  Response upload(const std::string& kind, const std::string& name, const std::string& body) {
    return request(port_, http::verb::post, "/api/" + kind + "?filename=" + name, body);
  }
  /// Polls GET url until field is no longer one of the waiting states (bounded tries).
  /// Uploads a package that a job budget stops: its record ends invalid and
  /// its report names `code`; the report.
  Json budget_report(const testkit::ByteVec& zip, const std::string& name,
                     const std::string& code) {
    auto r = upload("packages", name, std::string(zip.begin(), zip.end()));
    EXPECT_EQ(r.status, 201u) << r.body;
    const std::string id = std::to_string(r.json().value("id", std::int64_t{0}));
    const Json pkg = wait_for("/api/packages/" + id, "validity");
    EXPECT_EQ(pkg["validity"], "invalid") << pkg.dump();
    Json rep = request(port_, http::verb::get, "/api/packages/" + id + "/report").json();
    EXPECT_TRUE(rep.contains("budget")) << rep.dump();
    EXPECT_EQ(rep.value("budget", Json::object()).value("code", ""), code) << rep.dump();
    return rep;
  }
  Json wait_for(const std::string& url, const std::string& field) {
    // A deadline, not a count of polls: on a loaded 2-core machine under
    // ASan a job (a forked Assimp import included) can take well over 10 s.
    Json j;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
    do {
      j = request(port_, http::verb::get, url).json();
      std::string s = j.value(field, "");
      if (s != "pending" && s != "running" && s != "unknown") return j;
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    } while (std::chrono::steady_clock::now() < deadline);
    return j;
  }

  /// Another connection to the test's catalogue (for jobs and rows).
  std::unique_ptr<store::Catalogue> open_catalogue() {
    auto o = test_server_options(dir_, 1u << 20, db_);
    store::CatalogueOptions co;
    co.pg_schema = db_.schema;
    auto c = store::Catalogue::open(resolved_db_url(o), co);
    EXPECT_TRUE(c) << c.error().to_string();
    return c ? std::move(*c) : nullptr;
  }

  fs::path dir_;
  TestDb db_;
  std::unique_ptr<Server> server_;
  std::uint16_t port_ = 0;
};

INSTANTIATE_TEST_SUITE_P(Catalogue, ServerTest,
                         ::testing::Values(Backend::sqlite, Backend::postgresql),
                         [](const ::testing::TestParamInfo<Backend>& i) {
                           return i.param == Backend::sqlite ? std::string("sqlite")
                                                             : std::string("postgresql");
                         });

TEST_P(ServerTest, Healthz) {
  auto r = request(port_, http::verb::get, "/healthz");
  EXPECT_EQ(r.status, 200u);
  auto j = r.json();
  EXPECT_EQ(j["status"], "ok");
  EXPECT_EQ(j["database"], GetParam() == Backend::sqlite ? "sqlite" : "postgresql");
  EXPECT_GE(j["schemaVersion"].get<int>(), 1);
}

TEST_P(ServerTest, UnknownRouteAndMethod) {
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

// The job judges an upload by its content, as `charkit motion`
// judges the same file: a BVH named .json converts as BVH (its `format`
// stays the name's), and a .bvh that is none of the formats fails with
// the CLI's MOTION_FORMAT.
TEST_P(ServerTest, MotionJobJudgesTheContentNotTheName) {
  std::string bvh = read_file(kData / "bvh" / "test_freebvh.bvh");
  ASSERT_FALSE(bvh.empty());
  auto r = upload("motions", "walk.json", bvh);
  ASSERT_EQ(r.status, 201u) << r.body;
  EXPECT_EQ(r.json()["format"], "json");
  Json m = wait_for("/api/motions/" + std::to_string(r.json()["id"].get<std::int64_t>()),
                    "preprocessState");
  EXPECT_EQ(m["preprocessState"], "done") << m.dump();
  EXPECT_GT(m["frames"].get<std::int64_t>(), 0) << m.dump();

  auto bad = upload("motions", "notes.bvh", "these are notes, not a motion");
  ASSERT_EQ(bad.status, 201u) << bad.body;
  Json b = wait_for("/api/motions/" + std::to_string(bad.json()["id"].get<std::int64_t>()),
                    "preprocessState");
  EXPECT_EQ(b["preprocessState"], "failed") << b.dump();
  EXPECT_EQ(b["error"].get<std::string>().rfind("MOTION_FORMAT: ", 0), 0u) << b.dump();
}

TEST_P(ServerTest, BvhUploadDedupPreprocessKeypoints) {
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

TEST_P(ServerTest, ListPaging) {
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

TEST_P(ServerTest, WrongExtensionIs422) {
  auto r = upload("motions", "notes.txt", "hello");
  EXPECT_EQ(r.status, 422u);
  EXPECT_EQ(r.json()["error"], "UNSUPPORTED_EXTENSION");
  EXPECT_EQ(r.json()["detail"]["extension"], "txt");
  auto missing = request(port_, http::verb::post, "/api/motions", "x");
  EXPECT_EQ(missing.status, 400u);
  EXPECT_EQ(missing.json()["error"], "MISSING_FILENAME");
  EXPECT_EQ(count_files(dir_ / "blobs"), 0u);
}

TEST_P(ServerTest, ContentLengthOverLimitIs413BeforeReading) {
  start_server(1000);
  // Only the header: the server must answer without waiting for the body.
  auto r = raw_request(port_,
                       "POST /api/motions?filename=big.bvh HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                       "Content-Length: 5000\r\n\r\n");
  EXPECT_EQ(r.status, 413u);
  EXPECT_EQ(Json::parse(r.body)["error"], "UPLOAD_TOO_LARGE");
  // A chunked body that grows past the limit is cut off too.
  std::string chunk(800, 'a');
  std::string chunked =
      "POST /api/motions?filename=big.bvh HTTP/1.1\r\nHost: 127.0.0.1\r\n"
      "Transfer-Encoding: chunked\r\n\r\n";
  for (int i = 0; i < 3; ++i) chunked += "320\r\n" + chunk + "\r\n";
  chunked += "0\r\n\r\n";
  auto c = raw_request(port_, chunked);
  EXPECT_EQ(c.status, 413u);
  EXPECT_EQ(test_http::files_left(dir_ / "blobs"), 0u);
  auto list = request(port_, http::verb::get, "/api/motions").json();
  EXPECT_EQ(list["total"], 0);
}

TEST_P(ServerTest, HugeHeaderRefused) {
  std::string req =
      "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + std::string(100 * 1024, 'a') +
      "\r\n\r\n";
  auto r = raw_request(port_, req);
  // Either a 431 or a closed connection; never a 200.
  EXPECT_TRUE(r.status == 431u || r.status == 0u) << r.status;
  // The server still works.
  EXPECT_EQ(request(port_, http::verb::get, "/healthz").status, 200u);
}

TEST_P(ServerTest, PathTraversalInFilenameStaysInTheStore) {
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

TEST_P(ServerTest, RangeAndDelete) {
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

TEST_P(ServerTest, PackageReport) {
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

// The console's package page: the package's summary (bem
// inspect's JSON) and a selection exported as GLB, cached by the selection.
TEST_P(ServerTest, PackageSummaryAndSelectionExport) {
  std::string bem = read_file(kData / "examples" / "example-1.5.bem");
  auto r = upload("packages", "example-1.5.bem", bem);
  ASSERT_EQ(r.status, 201u) << r.body;
  const std::string url = "/api/packages/" + std::to_string(r.json()["id"].get<std::int64_t>());
  ASSERT_EQ(wait_for(url, "validity")["validity"], "valid");

  auto sum = request(port_, http::verb::get, url + "/summary");
  ASSERT_EQ(sum.status, 200u) << sum.body;
  Json s = sum.json();
  EXPECT_EQ(s["container"], "binary");
  EXPECT_EQ(s["declaredVersion"], "1.5");
  ASSERT_TRUE(s["optionGroups"].is_array() && !s["optionGroups"].empty()) << s.dump();
  EXPECT_GT(s["payloadTotals"]["count"].get<int>(), 0);

  // The default selection: a GLB with meshes, and the normalised strings.
  auto glb = request(port_, http::verb::get, url + "/export.glb");
  ASSERT_EQ(glb.status, 200u) << glb.body;
  EXPECT_EQ(glb.header("Content-Type"), "model/gltf-binary");
  EXPECT_EQ(glb.header("X-Charkit-Cache"), "miss");
  ASSERT_GT(glb.body.size(), 20u);
  EXPECT_EQ(glb.body.substr(0, 4), "glTF");
  std::uint32_t json_len = 0;
  std::memcpy(&json_len, glb.body.data() + 12, 4);
  Json doc = Json::parse(glb.body.substr(20, json_len));
  EXPECT_FALSE(doc["meshes"].empty());
  Json sel = Json::parse(glb.header("X-Charkit-Selection"));
  const std::string defaults = sel["options"];
  EXPECT_FALSE(defaults.empty());
  EXPECT_EQ(sel["warnings"].size(), 0u) << sel.dump();
  // Asked again: the cached bytes.
  auto again = request(port_, http::verb::get, url + "/export.glb");
  EXPECT_EQ(again.header("X-Charkit-Cache"), "hit");
  EXPECT_EQ(again.body, glb.body);

  // Each choice of the first group: the normalised string names it.
  const Json& group = s["optionGroups"][0];
  const std::string gid = group["id"];
  bool some_other = false;
  for (const Json& c : group["choices"]) {
    const std::string asked = gid + ":" + c["id"].get<std::string>();
    auto e = request(port_, http::verb::get, url + "/export.glb?options=" + asked);
    ASSERT_EQ(e.status, 200u) << asked << ": " << e.body;
    Json es = Json::parse(e.header("X-Charkit-Selection"));
    EXPECT_NE(es["options"].get<std::string>().find(asked), std::string::npos) << es.dump();
    some_other = some_other || es["options"] != defaults;
  }
  EXPECT_TRUE(some_other || group["choices"].size() == 1u);
  // An unknown choice is normalised away with a warning; bad syntax is a 400.
  auto unknown = request(port_, http::verb::get, url + "/export.glb?options=" + gid + ":nope");
  ASSERT_EQ(unknown.status, 200u) << unknown.body;
  Json us = Json::parse(unknown.header("X-Charkit-Selection"));
  ASSERT_FALSE(us["warnings"].empty()) << us.dump();
  EXPECT_EQ(us["warnings"][0]["in"], "options");
  EXPECT_EQ(us["options"], defaults);
  auto syntax = request(port_, http::verb::get, url + "/export.glb?options=%26%26");
  EXPECT_EQ(syntax.status, 400u) << syntax.body;
  EXPECT_EQ(syntax.json()["error"], "BEM_SETTINGS_SYNTAX");
  EXPECT_EQ(request(port_, http::verb::post, url + "/export.glb").status, 405u);
  EXPECT_EQ(request(port_, http::verb::get, "/api/packages/999/export.glb").status, 404u);

  // Texture thumbnails: PNG (header read by hand from the PNG spec), at the
  // texture's own size when it is smaller than the bound, cached.
  ASSERT_FALSE(s["textures"].empty()) << s.dump();
  auto png = request(port_, http::verb::get, url + "/textures/0.png?size=64");
  ASSERT_EQ(png.status, 200u) << png.body;
  EXPECT_EQ(png.header("Content-Type"), "image/png");
  ASSERT_GT(png.body.size(), 33u);
  EXPECT_EQ(png.body.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  EXPECT_EQ(png.body.substr(12, 4), "IHDR");
  auto be32 = [&](std::size_t at) {
    const auto* b = reinterpret_cast<const unsigned char*>(png.body.data()) + at;
    return (std::uint32_t{b[0]} << 24) | (std::uint32_t{b[1]} << 16) | (std::uint32_t{b[2]} << 8) |
           b[3];
  };
  EXPECT_EQ(be32(16), s["textures"][0]["width"].get<std::uint32_t>());
  EXPECT_EQ(be32(20), s["textures"][0]["height"].get<std::uint32_t>());
  EXPECT_EQ(
      request(port_, http::verb::get, url + "/textures/0.png?size=64").header("X-Charkit-Cache"),
      "hit");
  EXPECT_EQ(request(port_, http::verb::get, url + "/textures/99.png").status, 404u);
  EXPECT_EQ(request(port_, http::verb::get, url + "/textures/x.png").status, 404u);
  EXPECT_EQ(request(port_, http::verb::get, url + "/textures/0.png?size=8").status, 400u);

  // An invalid package has a summary but no export.
  auto bad = upload("packages", "junk.bem", "not a package at all");
  ASSERT_EQ(bad.status, 201u);
  const std::string bad_url =
      "/api/packages/" + std::to_string(bad.json()["id"].get<std::int64_t>());
  const Json bad_rec = wait_for(bad_url, "validity");
  ASSERT_EQ(bad_rec["validity"], "invalid");
  // Named as `charkit bem validate` names a file it cannot open, not by its extension.
  EXPECT_EQ(bad_rec["container"], "unknown") << bad_rec.dump();
  auto bad_glb = request(port_, http::verb::get, bad_url + "/export.glb");
  EXPECT_EQ(bad_glb.status, 409u);
  EXPECT_EQ(bad_glb.json()["error"], "PACKAGE_INVALID");
  EXPECT_EQ(request(port_, http::verb::get, bad_url + "/textures/0.png").status, 409u);
  auto bad_sum = request(port_, http::verb::get, bad_url + "/summary");
  EXPECT_EQ(bad_sum.status, 200u);
  EXPECT_FALSE(bad_sum.json()["readable"].get<bool>());
}

/// A ZIP package: make_valid_package(2)'s payloads after `manifest`
/// (DEFLATE), then `extra` unreferenced payload files of `extra_bytes`
/// zeros each (DEFLATE).
testkit::ByteVec budget_zip(const std::string& manifest, std::size_t extra,
                            std::size_t extra_bytes) {
  const testkit::TestPackage p = testkit::make_valid_package(2);
  std::vector<testkit::ZipEntry> entries{
      {"manifest.json", testkit::ByteVec(manifest.begin(), manifest.end()), std::uint16_t{8}}};
  for (std::size_t i = 0; i < p.payloads.size() + extra; ++i) {
    char name[48];
    std::snprintf(name, sizeof name, "payloads/%04zu.bin", i);
    entries.push_back({name,
                       i < p.payloads.size() ? p.payloads[i] : testkit::ByteVec(extra_bytes, 0),
                       std::uint16_t{8}});
  }
  return testkit::build_zip(entries);
}

/// make_valid_package(2)'s manifest as BEM 1.2, with `tail` (JSON members)
/// added to its object.
std::string budget_manifest(const std::string& tail = {}) {
  testkit::Json m = testkit::make_valid_package(2).manifest;
  m["format_version"] = "1.2";
  std::string text = m.dump();
  if (tail.empty()) return text;
  text.pop_back();
  return text + "," + tail + "}";
}

// Per-job budgets on the defaults (docs/server.md §Limits). The test
// server's upload limit is 1 MiB, so a package may decode 4 MiB: eight 1 MiB
// payload files (1 KB each as DEFLATE) are more than that.
TEST_P(ServerTest, PackageOverTheDecodeBudgetIsInvalid) {
  const testkit::ByteVec zip = budget_zip(budget_manifest(), 8, 1u << 20);
  ASSERT_LT(zip.size(), 1u << 20);
  const Json rep = budget_report(zip, "bomb.zip", "JOB_BUDGET_DECODED_BYTES");
  EXPECT_LE(rep["decodedBytes"].get<std::uint64_t>(), 4u << 20);
  EXPECT_NE(rep["issues"].dump().find("BEM_DECODE_BUDGET"), std::string::npos) << rep.dump();
}

// The default memory budget of a package job is the larger of 64 MiB and 8 ×
// the package's size: a 7 KB package whose manifest holds 800 000 empty
// objects (2.4 MB of text, about 77 MB once parsed) is stopped at the
// manifest, the record invalid with JOB_BUDGET_MEMORY.
TEST_P(ServerTest, PackageOverTheMemoryBudgetIsInvalid) {
  std::string junk = R"("junk":[)";
  for (int i = 0; i < 800'000; ++i) junk += i ? ",{}" : "{}";
  const testkit::ByteVec zip = budget_zip(budget_manifest(junk + "]"), 0, 0);
  ASSERT_LT(zip.size(), 64'000u);
  const Json rep = budget_report(zip, "values.zip", "JOB_BUDGET_MEMORY");
  EXPECT_NE(rep["issues"].dump().find("BEM_MEMORY_BUDGET"), std::string::npos) << rep.dump();
  EXPECT_LE(rep["peakMemoryBytes"].get<std::uint64_t>(), 64u << 20);
}

// A 1.7 KB glTF animation of 6 000 s (180 001 frames, 388 MB of
// keypoints) fails on the default output budget before any frame is written.
TEST_P(ServerTest, LongGltfAnimationFailsOnTheDefaultBudget) {
  const std::string buffer_b64 =  // times {0, 6000}, 2 quaternions, 2 translations (floats)
      testkit::base64([] {
        std::vector<std::uint8_t> b;
        for (float f : {0.0f, 6000.0f, 0.0f, 0.0f, 0.0f, 1.0f, 0.0f, 0.0f, 0.7071068f, 0.7071068f,
                        0.0f, 0.0f, 0.0f, 2.0f, 0.0f, 0.0f}) {
          std::uint8_t v[4];
          std::memcpy(v, &f, 4);
          b.insert(b.end(), v, v + 4);
        }
        return b;
      }());
  const std::string gltf =
      R"({"asset":{"version":"2.0"},"scene":0,"scenes":[{"nodes":[0]}],)"
      R"("nodes":[{"name":"Hips","children":[1]},{"name":"Spine","translation":[0,1,0]}],)"
      R"("buffers":[{"byteLength":64,"uri":"data:application/octet-stream;base64,)" +
      buffer_b64 +
      R"("}],"bufferViews":[{"buffer":0,"byteOffset":0,"byteLength":8},)"
      R"({"buffer":0,"byteOffset":8,"byteLength":32},{"buffer":0,"byteOffset":40,"byteLength":24}],)"
      R"("accessors":[{"bufferView":0,"componentType":5126,"count":2,"type":"SCALAR","min":[0],"max":[6000]},)"
      R"({"bufferView":1,"componentType":5126,"count":2,"type":"VEC4"},)"
      R"({"bufferView":2,"componentType":5126,"count":2,"type":"VEC3"}],)"
      R"("animations":[{"channels":[{"sampler":0,"target":{"node":0,"path":"rotation"}},)"
      R"({"sampler":1,"target":{"node":0,"path":"translation"}}],)"
      R"("samplers":[{"input":0,"output":1},{"input":0,"output":2}]}]})";
  auto r = upload("motions", "long.gltf", gltf);
  ASSERT_EQ(r.status, 201u) << r.body;
  Json m = wait_for("/api/motions/" + std::to_string(r.json()["id"].get<std::int64_t>()),
                    "preprocessState");
  EXPECT_EQ(m["preprocessState"], "failed") << m.dump();
  EXPECT_EQ(m["error"].get<std::string>().rfind("JOB_BUDGET_OUTPUT_BYTES: ", 0), 0u) << m.dump();
  EXPECT_TRUE(m["keypointsSha256"].is_null());
  EXPECT_EQ(count_files(dir_ / "blobs" / "keypoints"), 0u);

  // Uploading the same bytes again runs the failed record's job again (a
  // storage outage or a budget since raised may have failed it): the
  // answer says so and the record is pending until its new job ends.
  auto again = upload("motions", "long.gltf", gltf);
  ASSERT_EQ(again.status, 200u) << again.body;
  EXPECT_FALSE(again.json()["created"].get<bool>());
  EXPECT_TRUE(again.json().value("rerun", false)) << again.body;
  EXPECT_EQ(again.json()["id"], r.json()["id"]);
  EXPECT_NE(again.json()["preprocessState"], "failed") << again.body;
  Json m2 = wait_for("/api/motions/" + std::to_string(r.json()["id"].get<std::int64_t>()),
                     "preprocessState");
  EXPECT_EQ(m2["preprocessState"], "failed") << m2.dump();
  auto cat = open_catalogue();
  auto jobs = store::JobQueue(*cat).list(store::ListQuery{});
  ASSERT_TRUE(jobs) << jobs.error().to_string();
  EXPECT_EQ(jobs->items.size(), 2u);  // the first run and the rerun
  // A record that did not fail is not run again.
  const std::string bvh = read_file(kData / "bvh" / "test_freebvh.bvh");
  auto third = upload("motions", "other.bvh", bvh);
  ASSERT_EQ(third.status, 201u) << third.body;
  EXPECT_EQ(wait_for("/api/motions/" + std::to_string(third.json()["id"].get<std::int64_t>()),
                     "preprocessState")["preprocessState"],
            "done");
  auto fourth = upload("motions", "other.bvh", bvh);
  ASSERT_EQ(fourth.status, 200u) << fourth.body;
  EXPECT_FALSE(fourth.json().contains("rerun")) << fourth.body;
  auto all = store::JobQueue(*cat).list(store::ListQuery{});
  ASSERT_TRUE(all);
  EXPECT_EQ(all->items.size(), 3u);
}

// A BVH chain of the given joint names, two frames of zeros.
std::string chain_bvh(const std::vector<std::string>& names) {
  std::string t = "HIERARCHY\n";
  for (std::size_t i = 0; i < names.size(); ++i)
    t += (i ? "JOINT " : "ROOT ") + names[i] + "\n{\nOFFSET 0 1 0\nCHANNELS 3 " +
         (i ? "Zrotation Xrotation Yrotation\n" : "Xposition Yposition Zposition\n");
  for (std::size_t i = 0; i < names.size(); ++i) t += "}\n";
  t += "MOTION\nFrames: 2\nFrame Time: 0.04\n";
  for (int f = 0; f < 2; ++f) {
    for (std::size_t c = 0; c < names.size() * 3; ++c) t += c ? " 0" : "0";
    t += "\n";
  }
  return t;
}

TEST_P(ServerTest, MotionWarningsAndUnmappedSkeletons) {
  // 7 of the 15 mapped points: converted, with the warning on the record.
  auto few = upload("motions", "arms.bvh",
                    chain_bvh({"Hips", "Head", "LeftArm", "LeftForeArm", "LeftHand", "RightArm",
                               "RightForeArm", "RightHand"}));
  ASSERT_EQ(few.status, 201u) << few.body;
  const std::string few_url = "/api/motions/" + std::to_string(few.json()["id"].get<int>());
  EXPECT_EQ(few.json()["warnings"], Json::array());  // not preprocessed yet
  Json m = wait_for(few_url, "preprocessState");
  ASSERT_EQ(m["preprocessState"], "done") << m.dump();
  ASSERT_TRUE(m["warnings"].is_array()) << m.dump();
  ASSERT_EQ(m["warnings"].size(), 1u) << m.dump();
  EXPECT_EQ(m["warnings"][0]["code"], "MOTION_FEW_MAPPED_JOINTS");
  EXPECT_EQ(m["warnings"][0]["message"].get<std::string>().rfind(
                "only 7 of the 15 MediaPipe points the table maps were found", 0),
            0u)
      << m.dump();
  // The list carries them too.
  auto list = request(port_, http::verb::get, "/api/motions?state=done").json();
  ASSERT_EQ(list["items"].size(), 1u);
  EXPECT_EQ(list["items"][0]["warnings"], m["warnings"]);

  // No mapped point: preprocessing fails with the joints listed.
  auto none = upload("motions", "odd.bvh", chain_bvh({"Root", "Spine_a", "Skull_c"}));
  ASSERT_EQ(none.status, 201u) << none.body;
  Json n =
      wait_for("/api/motions/" + std::to_string(none.json()["id"].get<int>()), "preprocessState");
  ASSERT_EQ(n["preprocessState"], "failed") << n.dump();
  const std::string err = n["error"].get<std::string>();
  EXPECT_EQ(err.rfind("MOTION_NO_MAPPED_JOINTS: ", 0), 0u) << err;
  EXPECT_NE(err.find("the skeleton's joints: 'Root', 'Spine_a', 'Skull_c'"), std::string::npos)
      << err;
  EXPECT_EQ(n["warnings"], Json::array());
  EXPECT_TRUE(n["keypointsUrl"].is_null());

  // The console shows the warnings column.
  auto page = request(port_, http::verb::get, "/");
  EXPECT_NE(page.body.find("\"fps\", \"error\", \"warnings\"]"), std::string::npos);
}

TEST_P(ServerTest, IndexPage) {
  auto r = request(port_, http::verb::get, "/");
  EXPECT_EQ(r.status, 200u);
  EXPECT_NE(r.body.find("<form"), std::string::npos);
  EXPECT_EQ(r.headers["Content-Type"], "text/html; charset=utf-8");
}

TEST_P(ServerTest, StopDiscardsUploadInFlight) {
  net::io_context ioc;
  tcp::socket sock(ioc);
  sock.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port_));
  std::string head =
      "POST /api/motions?filename=slow.bvh HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: "
      "100000\r\n\r\n" +
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

// ---- multipart/form-data uploads ------------------------------------------------

const std::string kBoundary = "----formBoundary7MA4YWxk";

/// A browser-shaped form body: a text field, then the file part; `close`
/// false leaves out the closing boundary.
std::string form_body(const std::string& part_name, const std::string& content, bool close = true) {
  std::string b = "--" + kBoundary +
                  "\r\nContent-Disposition: form-data; name=\"comment\"\r\n\r\nfrom a form\r\n"
                  "--" +
                  kBoundary + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"" +
                  part_name + "\"\r\nContent-Type: application/octet-stream\r\n\r\n" + content;
  if (close) b += "\r\n--" + kBoundary + "--\r\n";
  return b;
}

std::string form_head(const std::string& target, std::size_t length) {
  return "POST " + target +
         " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary=" +
         kBoundary + "\r\nContent-Length: " + std::to_string(length) + "\r\n\r\n";
}

/// Sends head + body in pieces of the given sizes (cycled) with a short
/// pause after each, so the server's reads end at those places; then reads
/// the answer (status 0 when the connection closed without one).
Response send_in_pieces(std::uint16_t port, const std::string& head, const std::string& body,
                        const std::vector<std::size_t>& pieces) {
  net::io_context ioc;
  tcp::socket sock(ioc);
  sock.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port));
  sock.set_option(tcp::no_delay(true));
  beast::error_code ec;
  net::write(sock, net::buffer(head), ec);
  std::size_t pos = 0, k = 0;
  while (pos < body.size() && !ec) {
    std::size_t n = std::min(pieces[k++ % pieces.size()], body.size() - pos);
    net::write(sock, net::buffer(body.data() + pos, n), ec);
    pos += n;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return test_http::read_response(sock, ec);
}

TEST_P(ServerTest, MultipartUploadSplitAtAwkwardPlaces) {
  // CRLFs and a boundary-like line inside the file: only CRLF "--" + the
  // exact boundary ends the part.
  std::string bvh = read_file(kData / "bvh" / "test_freebvh.bvh");
  std::string content =
      bvh.substr(0, 200) + "\r\n--" + kBoundary.substr(0, 12) + "\r\n\r\n" + bvh.substr(200);
  const std::string body = form_body("walk.bvh", content);
  const auto boundary_at = body.find("\r\n--" + kBoundary + "--");
  // Pieces that cut the part headers, the CRLF before the closing boundary
  // and the boundary itself.
  const std::vector<std::size_t> pieces{1, 3, 17, 64, 5, 1000, 2, 4093};
  auto r = send_in_pieces(port_, form_head("/api/motions", body.size()), body, pieces);
  ASSERT_EQ(r.status, 201u) << r.body;
  auto j = r.json();
  EXPECT_EQ(j["originalName"], "walk.bvh");
  EXPECT_EQ(j["size"], content.size());
  EXPECT_EQ(j["sha256"],
            core::to_hex(core::sha256(core::Bytes(
                reinterpret_cast<const std::uint8_t*>(content.data()), content.size()))));
  auto got = request(port_, http::verb::get, j["contentUrl"].get<std::string>());
  EXPECT_EQ(got.body, content);
  ASSERT_NE(boundary_at, std::string::npos);
  // The same body cut exactly inside "\r\n--boundary--": same record (dedup).
  auto again = send_in_pieces(port_, form_head("/api/motions", body.size()), body,
                              {boundary_at + 1, 3, 3, 100});
  ASSERT_EQ(again.status, 200u) << again.body;
  EXPECT_EQ(again.json()["id"], j["id"]);
}

TEST_P(ServerTest, MultipartQueryFilenameWins) {
  const std::string body = form_body("notes.txt", "{\"x\":1}");
  auto r = raw_request(port_, form_head("/api/motions?filename=take1.json", body.size()) + body);
  ASSERT_EQ(r.status, 201u) << r.body;
  EXPECT_EQ(Json::parse(r.body)["originalName"], "take1.json");
  EXPECT_EQ(Json::parse(r.body)["format"], "json");
}

TEST_P(ServerTest, MultipartRefusalsLeaveNothing) {
  struct Case {
    std::string body;
    unsigned status;
    std::string code;
  };
  const std::string file_part = "--" + kBoundary +
                                "\r\nContent-Disposition: form-data; name=\"f\"; "
                                "filename=\"a.bvh\"\r\n\r\nHIERARCHY\r\n";
  const std::vector<Case> cases{
      {form_body("walk.bvh", "HIERARCHY\r\n", false), 400, "MULTIPART_TRUNCATED"},
      {form_body("notes.txt", "hello"), 422, "UNSUPPORTED_EXTENSION"},
      {form_body("", "x"), 400, "MISSING_FILENAME"},
      {form_body("walk.bvh", ""), 400, "EMPTY_BODY"},
      {file_part + file_part + "--" + kBoundary + "--\r\n", 400, "MULTIPART_TWO_FILES"},
      {"--" + kBoundary + "\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nv\r\n--" +
           kBoundary + "--\r\n",
       400, "MULTIPART_NO_FILE"},
      {"--" + kBoundary + "\r\nBroken header\r\n\r\nv\r\n--" + kBoundary + "--\r\n", 400,
       "MULTIPART_BAD_HEADER"},
  };
  for (const auto& c : cases) {
    auto r = send_in_pieces(port_, form_head("/api/motions", c.body.size()), c.body, {7});
    ASSERT_EQ(r.status, c.status) << c.code << ": " << r.body;
    auto j = Json::parse(r.body);
    EXPECT_EQ(j["error"], c.code);
    EXPECT_TRUE(j.contains("message") && j.contains("detail"));
  }
  // Content-Type problems are answered before the body.
  auto nb = raw_request(port_,
                        "POST /api/motions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                        "multipart/form-data\r\nContent-Length: 3\r\n\r\nabc");
  EXPECT_EQ(nb.status, 400u);
  EXPECT_EQ(Json::parse(nb.body)["error"], "MULTIPART_BAD_BOUNDARY");
  EXPECT_EQ(test_http::files_left(dir_ / "blobs"), 0u);
  EXPECT_EQ(request(port_, http::verb::get, "/api/motions").json()["total"], 0);
}

TEST_P(ServerTest, MultipartOverTheLimitIs413) {
  start_server(1000);
  // The file part alone passes the limit; the body is within the framing margin.
  const std::string body = form_body("big.bvh", std::string(1001, 'a'));
  auto r = raw_request(port_, form_head("/api/motions", body.size()) + body);
  EXPECT_EQ(r.status, 413u);
  EXPECT_EQ(Json::parse(r.body)["error"], "UPLOAD_TOO_LARGE");
  // Exactly the limit is fine.
  const std::string ok = form_body("fits.bvh", std::string(1000, 'b'));
  EXPECT_EQ(raw_request(port_, form_head("/api/motions", ok.size()) + ok).status, 201u);
  // Content-Length past limit + margin: refused before reading.
  auto early = raw_request(port_, form_head("/api/motions", 1000 + kMultipartOverheadBytes + 1));
  EXPECT_EQ(early.status, 413u);
  auto list = request(port_, http::verb::get, "/api/motions").json();
  EXPECT_EQ(list["total"], 1);
  EXPECT_EQ(list["items"][0]["originalName"], "fits.bvh");
}

// ---- jobs and interrupted uploads, on both catalogues ------------------------------

TEST_P(ServerTest, JobOfAKilledWorkerIsRetried) {
  // A server that only enqueues; a "worker" claims the job with a short
  // lease and dies (never completes). Once the lease has run out, a real
  // worker takes the job again and finishes it.
  server_.reset();
  auto o = test_server_options(dir_, 1u << 20, db_);
  o.job_workers = 0;
  auto t = start_test_server(o);
  ASSERT_TRUE(t) << t.error().to_string();
  server_ = std::move(t->server);
  port_ = t->port;
  std::string bvh = read_file(kData / "bvh" / "test_freebvh.bvh");
  auto r = upload("motions", "walk.bvh", bvh);
  ASSERT_EQ(r.status, 201u) << r.body;
  std::int64_t id = r.json()["id"];
  auto cat = open_catalogue();
  ASSERT_TRUE(cat);
  store::JobQueue queue(*cat);
  auto dead = queue.claim("killed-worker", std::chrono::milliseconds(300));
  ASSERT_TRUE(dead && dead->has_value());
  EXPECT_EQ((*dead)->attempts, 1);

  WorkerPoolOptions w;
  w.db_url = resolved_db_url(o);
  w.pg_schema = db_.schema;
  w.blob_root = resolved_blob_root(o);
  w.threads = 1;
  w.idle_poll = std::chrono::milliseconds(50);
  auto pool = WorkerPool::start(w);
  ASSERT_TRUE(pool) << pool.error().to_string();
  Json m = wait_for("/api/motions/" + std::to_string(id), "preprocessState");
  EXPECT_EQ(m["preprocessState"], "done") << m.dump();
  (*pool)->stop();
  auto job = queue.get((*dead)->id);
  ASSERT_TRUE(job && job->has_value());
  EXPECT_EQ((*job)->state, store::JobState::done);
  EXPECT_EQ((*job)->attempts, 2);  // the dead claim, then the retry
  EXPECT_NE((*job)->worker, "killed-worker");
  EXPECT_FALSE(*queue.complete(**dead));  // the dead claim is void
}

TEST_P(ServerTest, TwoServersNeverShareAJob) {
  // Two servers with two job threads each on one catalogue and one data
  // folder; every job is a runner that notes who runs it and whether another
  // thread holds the same job at that moment.
  server_.reset();
  constexpr int kJobs = 24;
  std::mutex mu;
  std::map<std::int64_t, int> active, runs;
  std::atomic<int> overlaps{0};
  auto runner = [&](const store::Job& j, const std::atomic<bool>&) -> core::Status {
    {
      std::lock_guard lock(mu);
      if (active[j.id]++ > 0) ++overlaps;
      ++runs[j.id];
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(15));
    std::lock_guard lock(mu);
    --active[j.id];
    return core::Ok{};
  };
  std::vector<std::unique_ptr<Server>> servers;
  for (int i = 0; i < 2; ++i) {
    auto o = test_server_options(dir_, 1u << 20, db_);
    o.job_workers = 2;
    o.job_runner = runner;
    auto t = start_test_server(o);
    ASSERT_TRUE(t) << t.error().to_string();
    servers.push_back(std::move(t->server));
  }
  auto cat = open_catalogue();
  ASSERT_TRUE(cat);
  store::JobQueue queue(*cat);
  for (int i = 0; i < kJobs; ++i) ASSERT_TRUE(queue.enqueue("test.job", job_payload(i + 1)));
  std::int64_t done = 0;
  for (int i = 0; i < 1000 && done < kJobs; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    done = *queue.count(store::JobState::done);
  }
  servers.clear();
  EXPECT_EQ(done, kJobs);
  EXPECT_EQ(overlaps.load(), 0);
  std::lock_guard lock(mu);
  EXPECT_EQ(runs.size(), static_cast<std::size_t>(kJobs));
  for (const auto& [id, n] : runs) EXPECT_EQ(n, 1) << "job " << id;
}

TEST_P(ServerTest, UploadCutOffMidBodyLeavesNothing) {
  for (bool multipart : {false, true}) {
    {
      net::io_context ioc;
      tcp::socket sock(ioc);
      sock.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port_));
      std::string head =
          multipart
              ? form_head("/api/motions", 100000) +
                    form_body("cut.bvh", std::string(2000, 'y'), false)
              : "POST /api/motions?filename=cut.bvh HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: "
                "100000\r\n\r\n" +
                    std::string(2000, 'x');
      net::write(sock, net::buffer(head));
      // Wait (bounded) until the server holds a temporary file, then hang up.
      for (int i = 0; i < 500 && count_files(dir_ / "blobs" / "tmp") == 0; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      EXPECT_EQ(count_files(dir_ / "blobs" / "tmp"), 1u) << multipart;
    }  // the socket closes here, mid-body
    std::size_t left = 1;
    for (int i = 0; i < 500 && left != 0; ++i) {
      left = count_files(dir_ / "blobs");
      if (left) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_EQ(left, 0u) << multipart;
  }
  EXPECT_EQ(request(port_, http::verb::get, "/api/motions").json()["total"], 0);
  auto cat = open_catalogue();
  ASSERT_TRUE(cat);
  EXPECT_EQ(*store::JobQueue(*cat).count(store::JobState::pending), 0);
}

}  // namespace
}  // namespace charkit::server
