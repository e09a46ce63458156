// Access control (issue 14): the pure rules of auth.h, and the server with
// tokens: each scope, revoked tokens, the login cookie, Host and Origin
// checks for HTTP and WebSocket, CORS, and the refusal to listen openly on
// a non-loopback address.
#include "charkit/server/detail/auth.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include "charkit/core/json.h"
#include "charkit/store/tokens.h"
#include "http_client.h"
#include "test_server.h"

namespace charkit::server {
namespace {

namespace fs = std::filesystem;
using core::Json;
using test_http::raw_exchange;
using test_http::raw_request;
using test_http::request;
using test_http::Response;
namespace http = test_http::http;

TEST(Auth, RequiredAccessPerRoute) {
  using S = std::vector<std::string>;
  EXPECT_EQ(required_access("GET", S{}, ""), Access::open);
  EXPECT_EQ(required_access("GET", S{"healthz"}, ""), Access::open);
  EXPECT_EQ(required_access("GET", S{"login"}, ""), Access::open);
  EXPECT_EQ(required_access("POST", S{"api", "session"}, ""), Access::open);
  EXPECT_EQ(required_access("GET", S{"metrics"}, ""), Access::metrics);
  EXPECT_EQ(required_access("GET", S{"api", "motions"}, ""), Access::read);
  EXPECT_EQ(required_access("GET", S{"api", "assets", "ab"}, ""), Access::read);
  EXPECT_EQ(required_access("POST", S{"api", "motions"}, "filename=a.bvh"), Access::write);
  EXPECT_EQ(required_access("DELETE", S{"api", "motions", "1"}, ""), Access::admin);
  EXPECT_EQ(required_access("GET", S{"api", "live", "cam"}, "role=view"), Access::read);
  EXPECT_EQ(required_access("GET", S{"api", "live", "cam"}, "x=1&role=publish"), Access::write);
  EXPECT_EQ(required_access("GET", S{"api", "motions", "1", "stream"}, ""), Access::read);
}

TEST(Auth, SecretFromBearerOrCookie) {
  EXPECT_EQ(request_secret("Bearer ckt_abc", ""), "ckt_abc");
  EXPECT_EQ(request_secret("bearer   ckt_abc  ", ""), "ckt_abc");
  EXPECT_EQ(request_secret("Basic dXNlcg==", "charkit_token=ckt_c"), "ckt_c");
  EXPECT_EQ(request_secret("", "a=1; charkit_token=\"ckt_q\"; b=2"), "ckt_q");
  EXPECT_EQ(request_secret("", "charkit_tokenx=1; xcharkit_token=2"), "");
  EXPECT_EQ(request_secret("", ""), "");
}

TEST(Auth, HostAndOriginRules) {
  AccessPolicy p;
  p.hosts = default_allowed_hosts("127.0.0.1", 8080);
  EXPECT_TRUE(host_allowed(p, "127.0.0.1:8080"));
  EXPECT_TRUE(host_allowed(p, "LOCALHOST:8080"));
  EXPECT_TRUE(host_allowed(p, "localhost"));
  EXPECT_TRUE(host_allowed(p, "[::1]:8080"));
  EXPECT_FALSE(host_allowed(p, "127.0.0.1:9090"));
  EXPECT_FALSE(host_allowed(p, "attacker.example:8080"));  // DNS rebinding
  EXPECT_FALSE(host_allowed(p, ""));
  AccessPolicy any;
  any.hosts = default_allowed_hosts("0.0.0.0", 8080);
  EXPECT_TRUE(any.hosts.empty());
  EXPECT_TRUE(host_allowed(any, "whatever:1"));
  auto v6 = default_allowed_hosts("::1", 80);
  EXPECT_EQ(v6.size(), 3u);
  auto lan = default_allowed_hosts("192.168.1.5", 80);
  EXPECT_TRUE(host_allowed(AccessPolicy{lan, {}}, "192.168.1.5:80"));

  p.cors_origins = {"https://app.example"};
  EXPECT_EQ(check_origin(p, "", "127.0.0.1:8080", false), OriginCheck::none);
  EXPECT_EQ(check_origin(p, "http://127.0.0.1:8080", "127.0.0.1:8080", false), OriginCheck::same);
  EXPECT_EQ(check_origin(p, "https://127.0.0.1:8080", "127.0.0.1:8080", true), OriginCheck::same);
  // Behind a TLS proxy the page is https:// while the server speaks HTTP.
  EXPECT_EQ(check_origin(p, "https://127.0.0.1:8080", "127.0.0.1:8080", false), OriginCheck::same);
  EXPECT_EQ(check_origin(p, "http://127.0.0.1:8081", "127.0.0.1:8080", false),
            OriginCheck::forbidden);
  EXPECT_EQ(check_origin(p, "http://127.0.0.1:8080.evil", "127.0.0.1:8080", false),
            OriginCheck::forbidden);
  EXPECT_EQ(check_origin(p, "https://APP.example", "127.0.0.1:8080", false), OriginCheck::cors);
  EXPECT_EQ(check_origin(p, "http://evil.example", "127.0.0.1:8080", false),
            OriginCheck::forbidden);
  EXPECT_EQ(check_origin(p, "null", "127.0.0.1:8080", false), OriginCheck::forbidden);
}

class AuthServerTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    dir_ = fs::temp_directory_path() /
           ("charkit_auth_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(dir_);
    auto [db, skip] = test_db(GetParam());
    if (!skip.empty()) GTEST_SKIP() << skip;
    db_ = db;
  }
  void TearDown() override {
    server_.reset();
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  void start(ServerOptions o) {
    server_.reset();
    auto t = start_test_server(o);
    ASSERT_TRUE(t.ok()) << t.error().to_string();
    server_ = std::move(t->server);
    port_ = t->port;
  }
  ServerOptions options() { return test_server_options(dir_, 1u << 20, db_); }
  std::unique_ptr<store::Catalogue> catalogue() {
    fs::create_directories(dir_);  // the server's SQLite file lives there
    store::CatalogueOptions co;
    co.pg_schema = db_.schema;
    auto c = store::Catalogue::open(resolved_db_url(options()), co);
    EXPECT_TRUE(c) << c.error().to_string();
    return c ? std::move(*c) : nullptr;
  }
  std::string make_token(store::Scope scope) {
    auto c = catalogue();
    auto t = store::TokenStore(*c).create(scope, "test");
    EXPECT_TRUE(t);
    return t ? t->secret : std::string();
  }
  Response get(const std::string& target, const std::string& token = {},
               std::map<std::string, std::string> headers = {}) {
    if (!token.empty()) headers["Authorization"] = "Bearer " + token;
    return request(port_, http::verb::get, target, {}, headers);
  }
  /// The AuthCache keeps decisions 5 s: wait until the server sees a change.
  template <class F>
  void eventually(F ok) {
    for (int i = 0; i < 100 && !ok(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_TRUE(ok());
  }

  fs::path dir_;
  TestDb db_;
  std::unique_ptr<Server> server_;
  std::uint16_t port_ = 0;
};

INSTANTIATE_TEST_SUITE_P(Catalogue, AuthServerTest,
                         ::testing::Values(Backend::sqlite, Backend::postgresql),
                         [](const ::testing::TestParamInfo<Backend>& i) {
                           return i.param == Backend::sqlite ? std::string("sqlite")
                                                             : std::string("postgresql");
                         });

TEST_P(AuthServerTest, OpenWithoutTokensThenEachScope) {
  start(options());
  EXPECT_EQ(get("/api/motions").status, 200u);  // no token in the catalogue: open
  const std::string reader = make_token(store::Scope::read);
  const std::string writer = make_token(store::Scope::write);
  const std::string admin = make_token(store::Scope::admin);
  // Tokens exist now: everything but /healthz, / and /login needs one.
  eventually([&] { return get("/api/motions").status == 401; });
  auto denied = get("/api/motions");
  EXPECT_EQ(denied.json()["error"], "UNAUTHENTICATED");
  EXPECT_EQ(denied.header("WWW-Authenticate"), "Bearer realm=\"charkit\"");
  EXPECT_EQ(get("/healthz").status, 200u);
  EXPECT_EQ(get("/").status, 200u);
  EXPECT_EQ(get("/login").status, 200u);
  EXPECT_EQ(get("/metrics").status, 401u);
  EXPECT_EQ(get("/api/motions", "ckt_" + std::string(43, 'A')).status, 401u);

  EXPECT_EQ(get("/api/motions", reader).status, 200u);
  EXPECT_EQ(get("/metrics", reader).status, 200u);
  auto up = [&](const std::string& token) {
    return request(port_, http::verb::post, "/api/motions?filename=a.json", "{}",
                   {{"Authorization", "Bearer " + token}});
  };
  auto r = up(reader);
  EXPECT_EQ(r.status, 403u);
  EXPECT_EQ(r.json()["error"], "FORBIDDEN");
  auto w = up(writer);
  ASSERT_EQ(w.status, 201u) << w.body;
  const std::string url = "/api/motions/" + std::to_string(w.json()["id"].get<int>());
  auto del = [&](const std::string& token) {
    return request(port_, http::verb::delete_, url, {}, {{"Authorization", "Bearer " + token}});
  };
  EXPECT_EQ(del(writer).status, 403u);
  EXPECT_EQ(del(reader).status, 403u);
  EXPECT_EQ(del(admin).status, 200u);
}

TEST_P(AuthServerTest, RevokedTokensStopWorking) {
  const std::string reader = make_token(store::Scope::read);
  start(options());
  EXPECT_EQ(get("/api/models", reader).status, 200u);
  auto c = catalogue();
  store::TokenStore tokens(*c);
  auto list = tokens.list();
  ASSERT_TRUE(list);
  ASSERT_TRUE(*tokens.revoke((*list)[0].id));
  // Revocation reaches the server within the cache's few seconds.
  eventually([&] { return get("/api/models", reader).status == 401; });
}

TEST_P(AuthServerTest, PublicReadAndMetricsOptions) {
  make_token(store::Scope::admin);
  auto o = options();
  o.public_read = true;
  o.public_metrics = true;
  start(o);
  EXPECT_EQ(get("/api/models").status, 200u);
  EXPECT_EQ(get("/metrics").status, 200u);
  EXPECT_EQ(request(port_, http::verb::post, "/api/motions?filename=a.json", "{}").status, 401u);
}

TEST_P(AuthServerTest, LoginCookieForBrowsers) {
  const std::string writer = make_token(store::Scope::write);
  start(options());
  const std::string origin = "http://127.0.0.1:" + std::to_string(port_);
  auto bad = request(port_, http::verb::post, "/api/session", "{\"token\":\"ckt_nope\"}",
                     {{"Content-Type", "application/json"}, {"Origin", origin}});
  EXPECT_EQ(bad.status, 401u);
  // The login form posts urlencoded and is sent on to the console.
  auto form = request(port_, http::verb::post, "/api/session", "token=" + writer,
                      {{"Content-Type", "application/x-www-form-urlencoded"}, {"Origin", origin}});
  EXPECT_EQ(form.status, 303u);
  EXPECT_EQ(form.header("Location"), "/");
  const std::string set = form.header("Set-Cookie");
  EXPECT_EQ(set.rfind("charkit_token=" + writer + ";", 0), 0u) << set;
  EXPECT_NE(set.find("HttpOnly"), std::string::npos);
  EXPECT_NE(set.find("SameSite=Strict"), std::string::npos);
  const std::string cookie = "charkit_token=" + writer;
  auto me = get("/api/session", {}, {{"Cookie", cookie}});
  ASSERT_EQ(me.status, 200u);
  EXPECT_EQ(me.json()["authenticated"], true);
  EXPECT_EQ(me.json()["scope"], "write");
  EXPECT_EQ(me.json()["authRequired"], true);
  EXPECT_EQ(get("/api/packages", {}, {{"Cookie", cookie}}).status, 200u);
  auto out = request(port_, http::verb::delete_, "/api/session", {}, {{"Origin", origin}});
  EXPECT_NE(out.header("Set-Cookie").find("Max-Age=0"), std::string::npos);
}

TEST_P(AuthServerTest, HostAndOriginChecksForHttpAndWebSocket) {
  auto o = options();
  o.cors_origins = {"https://app.example"};
  start(o);
  const std::string host = "127.0.0.1:" + std::to_string(port_);
  // DNS rebinding: a page of attacker.example resolved to 127.0.0.1.
  auto rebinding = raw_request(port_, "GET /api/motions HTTP/1.1\r\nHost: attacker.example:" +
                                          std::to_string(port_) + "\r\n\r\n");
  EXPECT_EQ(rebinding.status, 403u);
  EXPECT_EQ(rebinding.json()["error"], "HOST_FORBIDDEN");
  // A cross-site form post (no token needed: the server is open) is refused.
  auto csrf =
      raw_request(port_, "POST /api/motions?filename=a.json HTTP/1.1\r\nHost: " + host +
                             "\r\nOrigin: http://evil.example\r\nContent-Type: text/plain\r\n"
                             "Content-Length: 2\r\n\r\n{}");
  EXPECT_EQ(csrf.status, 403u);
  EXPECT_EQ(csrf.json()["error"], "ORIGIN_FORBIDDEN");
  EXPECT_EQ(get("/api/motions").json()["total"], 0);
  // The server's own origin and an allowed CORS origin pass; CORS answers say so.
  auto same = get("/api/motions", {}, {{"Origin", "http://" + host}});
  EXPECT_EQ(same.status, 200u);
  EXPECT_EQ(same.header("Access-Control-Allow-Origin"), "");
  auto cors = get("/api/motions", {}, {{"Origin", "https://app.example"}});
  EXPECT_EQ(cors.status, 200u);
  EXPECT_EQ(cors.header("Access-Control-Allow-Origin"), "https://app.example");
  EXPECT_EQ(cors.header("Vary"), "Origin");
  auto preflight =
      request(port_, http::verb::options, "/api/motions", {},
              {{"Origin", "https://app.example"}, {"Access-Control-Request-Method", "POST"}});
  EXPECT_EQ(preflight.status, 204u);
  EXPECT_NE(preflight.header("Access-Control-Allow-Headers").find("Authorization"),
            std::string::npos);
  // WebSocket upgrades from another site are refused before the handshake.
  for (const char* target : {"/api/live/cam?role=view", "/api/live/cam?role=publish"}) {
    std::string up = std::string("GET ") + target + " HTTP/1.1\r\nHost: " + host +
                     "\r\nOrigin: http://evil.example\r\nUpgrade: websocket\r\nConnection: "
                     "Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                     "Sec-WebSocket-Version: 13\r\n\r\n";
    auto r = raw_request(port_, up);
    EXPECT_EQ(r.status, 403u) << target;
  }
  std::string ok = "GET /api/live/cam?role=view HTTP/1.1\r\nHost: " + host + "\r\nOrigin: http://" +
                   host +
                   "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: "
                   "dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n";
  std::string got = raw_exchange(port_, ok, std::chrono::milliseconds(500));
  EXPECT_EQ(got.rfind("HTTP/1.1 101", 0), 0u) << got;
}

TEST_P(AuthServerTest, WebSocketNeedsATokenOnceTokensExist) {
  const std::string reader = make_token(store::Scope::read);
  start(options());
  const std::string host = "127.0.0.1:" + std::to_string(port_);
  auto upgrade = [&](const std::string& target, const std::string& token) {
    std::string up = "GET " + target + " HTTP/1.1\r\nHost: " + host +
                     "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: "
                     "dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n";
    if (!token.empty()) up += "Authorization: Bearer " + token + "\r\n";
    return raw_exchange(port_, up + "\r\n", std::chrono::milliseconds(500));
  };
  EXPECT_EQ(upgrade("/api/live/cam?role=view", "").rfind("HTTP/1.1 401", 0), 0u);
  EXPECT_EQ(upgrade("/api/live/cam?role=view", reader).rfind("HTTP/1.1 101", 0), 0u);
  EXPECT_EQ(upgrade("/api/live/cam?role=publish", reader).rfind("HTTP/1.1 403", 0), 0u);
}

TEST_P(AuthServerTest, NonLoopbackWithoutTokensRefusesToStart) {
  auto o = options();
  o.address = "0.0.0.0";
  auto s = Server::create(o);
  ASSERT_TRUE(s);
  auto p = (*s)->start();
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().code, "SERVER_INSECURE");
  o.insecure_open = true;
  {
    auto t = start_test_server(o);
    EXPECT_TRUE(t.ok());
  }
  // With a token it starts (and needs it).
  make_token(store::Scope::read);
  o.insecure_open = false;
  auto u = start_test_server(o);
  ASSERT_TRUE(u.ok()) << u.error().to_string();
}

}  // namespace
}  // namespace charkit::server
