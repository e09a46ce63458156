// The web console's serving (docs/console.md §Serving): files read once into
// memory, the page routes answered with index.html, /assets/NAME with ETags
// and 304s, the plain page without a console, and the refusals of
// load_console for folders it must not serve.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>

#include "charkit/server/detail/console.h"
#include "charkit/server/error_codes.h"
#include "charkit/server/server.h"
#include "http_client.h"
#include "test_server.h"

namespace charkit::server {
namespace {

namespace fs = std::filesystem;
namespace http = boost::beast::http;
using test_http::request;

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

class ConsoleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    dir_ = fs::temp_directory_path() /
           ("charkit_console_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(dir_);
    web_ = dir_ / "web";
    write(web_ / "index.html", "<!doctype html><script src=/assets/console.js></script>");
    write(web_ / "assets" / "console.js", "console.log('charkit');");
    write(web_ / "assets" / "console.css", "body{}");
    write(web_ / "assets" / ".hidden", "secret");
    write(web_ / "assets" / "sub" / "nested.js", "nested");
  }
  void TearDown() override {
    server_.reset();
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  void start(const fs::path& console) {
    auto o = test_server_options(dir_ / "data");
    o.console_dir = console;
    auto t = start_test_server(o);
    ASSERT_TRUE(t.ok()) << t.error().to_string();
    server_ = std::move(t->server);
    port_ = t->port;
  }
  fs::path dir_, web_;
  std::unique_ptr<Server> server_;
  std::uint16_t port_ = 0;
};

TEST_F(ConsoleTest, PageRoutesAnswerIndexAndAssetsComeWithEtags) {
  start(web_);
  for (const char* path : {"/", "/models", "/models/12", "/motions", "/motions/3", "/packages",
                           "/packages/9", "/live", "/live/cam-1"}) {
    auto r = request(port_, http::verb::get, path);
    EXPECT_EQ(r.status, 200u) << path;
    EXPECT_NE(r.body.find("/assets/console.js"), std::string::npos) << path;
    EXPECT_EQ(r.header("Content-Type"), "text/html; charset=utf-8") << path;
    EXPECT_NE(r.header("Content-Security-Policy").find("script-src 'self'"), std::string::npos);
  }
  auto js = request(port_, http::verb::get, "/assets/console.js");
  ASSERT_EQ(js.status, 200u);
  EXPECT_EQ(js.body, "console.log('charkit');");
  EXPECT_EQ(js.header("Content-Type"), "text/javascript; charset=utf-8");
  EXPECT_EQ(js.header("Cache-Control"), "no-cache");
  EXPECT_EQ(js.header("X-Content-Type-Options"), "nosniff");
  const std::string etag = js.header("ETag");
  ASSERT_EQ(etag.size(), 66u) << etag;  // a quoted SHA-256
  auto again = request(port_, http::verb::get, "/assets/console.js", {}, {{"If-None-Match", etag}});
  EXPECT_EQ(again.status, 304u);
  EXPECT_TRUE(again.body.empty());
  auto weak = request(port_, http::verb::get, "/assets/console.js", {},
                      {{"If-None-Match", "\"other\", W/" + etag}});
  EXPECT_EQ(weak.status, 304u);
  auto stale =
      request(port_, http::verb::get, "/assets/console.js", {}, {{"If-None-Match", "\"x\""}});
  EXPECT_EQ(stale.status, 200u);
  EXPECT_EQ(request(port_, http::verb::get, "/assets/console.css").header("Content-Type"),
            "text/css; charset=utf-8");
}

TEST_F(ConsoleTest, NothingOutsideTheLoadedFilesIsServed) {
  start(web_);
  // Files added after the start are not served: the console is read once.
  write(web_ / "assets" / "late.js", "late");
  for (const char* path :
       {"/assets/late.js", "/assets/.hidden", "/assets/sub", "/assets/sub/nested.js",
        "/assets/%2e%2e/index.html", "/assets/..%2Findex.html", "/assets/", "/index.html",
        "/models/1/extra", "/live/a/b", "/lives"}) {
    auto r = request(port_, http::verb::get, path);
    EXPECT_TRUE(r.status == 404u || r.status == 400u) << path << ": " << r.status;
    EXPECT_EQ(r.body.find("secret"), std::string::npos) << path;
  }
  EXPECT_EQ(request(port_, http::verb::post, "/models").status, 405u);
  EXPECT_EQ(request(port_, http::verb::delete_, "/assets/console.js").status, 405u);
  // The API keeps its paths.
  EXPECT_EQ(request(port_, http::verb::get, "/api/models").status, 200u);
}

TEST_F(ConsoleTest, WithoutAConsoleThePlainPageIsServed) {
  start({});
  auto r = request(port_, http::verb::get, "/");
  ASSERT_EQ(r.status, 200u);
  EXPECT_NE(r.body.find("<h1>charkit</h1>"), std::string::npos);
  EXPECT_EQ(request(port_, http::verb::get, "/models").status, 404u);
  EXPECT_EQ(request(port_, http::verb::get, "/assets/console.js").status, 404u);
}

// The icon the console and the built-in pages link to: an SVG at the path
// browsers ask for, with or without a console.
TEST_F(ConsoleTest, TheIconIsServedWithOrWithoutAConsole) {
  for (bool with_console : {true, false}) {
    SCOPED_TRACE(with_console);
    server_.reset();
    start(with_console ? web_ : fs::path());
    auto r = request(port_, http::verb::get, "/favicon.ico");
    EXPECT_EQ(r.status, 200u);
    EXPECT_EQ(r.header("Content-Type"), "image/svg+xml");
    EXPECT_EQ(r.body.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u) << r.body;
    EXPECT_NE(r.body.find("</svg>"), std::string::npos);
    EXPECT_EQ(request(port_, http::verb::post, "/favicon.ico", "x").status, 405u);
  }
  // The built-in pages name it.
  EXPECT_NE(request(port_, http::verb::get, "/").body.find("href=\"/favicon.ico\""),
            std::string::npos);
  EXPECT_NE(request(port_, http::verb::get, "/login").body.find("href=\"/favicon.ico\""),
            std::string::npos);
}

TEST_F(ConsoleTest, FoldersThatCannotBeServedStopTheStart) {
  auto refused = [&](const fs::path& console) {
    auto o = test_server_options(dir_ / "data");
    o.console_dir = console;
    auto s = Server::create(o);
    EXPECT_FALSE(s.ok()) << console;
    return s.ok() ? std::string() : s.error().code + ": " + s.error().message;
  };
  EXPECT_NE(refused(dir_ / "missing").find("SERVER_CONSOLE: "), std::string::npos);
  EXPECT_NE(refused(dir_ / "missing").find("index.html is missing"), std::string::npos);
  const fs::path many = dir_ / "many";
  write(many / "index.html", "x");
  for (std::size_t i = 0; i <= kConsoleMaxFiles; ++i)
    write(many / "assets" / ("f" + std::to_string(i) + ".js"), "x");
  EXPECT_NE(refused(many).find("more than 64 files"), std::string::npos);
}

TEST(ConsoleFiles, EtagMatchingFollowsRfc9110) {
  EXPECT_TRUE(etag_matches("\"a\"", "\"a\""));
  EXPECT_TRUE(etag_matches(" \"b\" , \"a\"", "\"a\""));
  EXPECT_TRUE(etag_matches("W/\"a\"", "\"a\""));
  EXPECT_TRUE(etag_matches("*", "\"a\""));
  EXPECT_FALSE(etag_matches("", "\"a\""));
  EXPECT_FALSE(etag_matches("\"ab\"", "\"a\""));
  EXPECT_FALSE(etag_matches("a", "\"a\""));
}

TEST(ConsoleFiles, RoutesAndContentTypes) {
  EXPECT_TRUE(is_console_route({"models"}));
  EXPECT_TRUE(is_console_route({"packages", "7"}));
  EXPECT_TRUE(is_console_route({"live", "cam"}));
  EXPECT_FALSE(is_console_route({}));
  EXPECT_TRUE(is_console_route({"live"}));  // the channel list
  EXPECT_FALSE(is_console_route({"lives"}));
  EXPECT_FALSE(is_console_route({"api", "models"}));
  EXPECT_FALSE(is_console_route({"models", "1", "x"}));
  EXPECT_EQ(console_content_type("a.mjs"), "text/javascript; charset=utf-8");
  EXPECT_EQ(console_content_type("LEGAL.txt"), "text/plain; charset=utf-8");
  EXPECT_EQ(console_content_type("blob"), "application/octet-stream");
}

}  // namespace
}  // namespace charkit::server
