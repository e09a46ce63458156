// Access control: the pure rules of auth.h, and the server with
// tokens: each scope, revoked tokens, the login cookie, Host and Origin
// checks for HTTP and WebSocket, CORS, and the refusal to listen openly on
// a non-loopback address.
#include "charkit/server/detail/auth.h"
#include "charkit/server/detail/http_glue.h"
#include "charkit/server/detail/route_table.h"

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

// The access the route table gives a request.
Access required_access(std::string_view method, std::vector<std::string> segments,
                       QueryParams params) {
  return match_route(method, Target{std::move(segments), std::move(params)}, false).access;
}

TEST(Auth, RequiredAccessPerRoute) {
  using S = std::vector<std::string>;
  using Q = QueryParams;
  EXPECT_EQ(required_access("GET", S{}, {}), Access::open);
  EXPECT_EQ(required_access("GET", S{"healthz"}, {}), Access::open);
  EXPECT_EQ(required_access("GET", S{"login"}, {}), Access::open);
  EXPECT_EQ(required_access("POST", S{"api", "session"}, {}), Access::open);
  EXPECT_EQ(required_access("GET", S{"metrics"}, {}), Access::metrics);
  EXPECT_EQ(required_access("GET", S{"api", "motions"}, {}), Access::read);
  EXPECT_EQ(required_access("GET", S{"api", "assets", "ab"}, {}), Access::read);
  EXPECT_EQ(required_access("POST", S{"api", "motions"}, Q{{"filename", "a.bvh"}}), Access::write);
  EXPECT_EQ(required_access("DELETE", S{"api", "motions", "1"}, {}), Access::admin);
  EXPECT_EQ(required_access("GET", S{"api", "live", "cam"}, Q{{"role", "view"}}), Access::read);
  EXPECT_EQ(required_access("GET", S{"api", "live", "cam"}, Q{{"x", "1"}, {"role", "publish"}}),
            Access::write);
  EXPECT_EQ(required_access("GET", S{"api", "motions", "1", "stream"}, {}), Access::read);
  // Paths with no route keep the method's access under /api (no probing
  // with a read token), and are open elsewhere.
  EXPECT_EQ(required_access("DELETE", S{"api", "nothing"}, {}), Access::admin);
  EXPECT_EQ(required_access("GET", S{"api", "nothing", "x", "y"}, {}), Access::read);
  EXPECT_EQ(required_access("POST", S{"elsewhere"}, {}), Access::open);
}

// Every route of the table, how it is served, and paths that are none.
TEST(Auth, RouteTable) {
  struct Case {
    const char* method;
    const char* target;
    bool console;
    RouteId id;
    RouteKind kind;
  };
  const Case cases[] = {
      {"GET", "/", false, RouteId::console_page, RouteKind::answer},
      {"GET", "/motions/3", true, RouteId::console_page, RouteKind::answer},
      {"GET", "/motions/3", false, RouteId::not_found, RouteKind::answer},
      {"GET", "/assets/app.js", true, RouteId::console_asset, RouteKind::answer},
      {"GET", "/assets/app.js", false, RouteId::not_found, RouteKind::answer},
      {"GET", "/login", false, RouteId::login, RouteKind::answer},
      {"DELETE", "/api/session", false, RouteId::session, RouteKind::answer},
      {"GET", "/healthz", false, RouteId::healthz, RouteKind::answer},
      {"GET", "/metrics", false, RouteId::metrics, RouteKind::answer},
      {"GET", "/api/assets/ab", false, RouteId::asset, RouteKind::answer},
      {"GET", "/api/models", false, RouteId::records, RouteKind::answer},
      {"POST", "/api/models?filename=a.glb", false, RouteId::records, RouteKind::upload},
      {"POST", "/api/keypoints", false, RouteId::not_found, RouteKind::answer},
      {"PUT", "/api/packages", false, RouteId::records, RouteKind::answer},
      {"GET", "/api/motions/7", false, RouteId::record, RouteKind::answer},
      {"GET", "/api/keypoints/7", false, RouteId::not_found, RouteKind::answer},
      {"GET", "/api/packages/7/textures/t0", false, RouteId::package_texture, RouteKind::answer},
      {"GET", "/api/packages/7/summary", false, RouteId::package_view, RouteKind::answer},
      {"GET", "/api/packages/7/export.glb", false, RouteId::package_view, RouteKind::answer},
      {"GET", "/api/packages/7/report", false, RouteId::package_report, RouteKind::answer},
      {"GET", "/api/motions/7/keypoints.ndjson", false, RouteId::motion_keypoints,
       RouteKind::answer},
      {"GET", "/api/motions/7/stream", false, RouteId::motion_stream, RouteKind::websocket},
      {"POST", "/api/motions/7/stream", false, RouteId::motion_stream, RouteKind::websocket},
      {"GET", "/api/packages/7/drivers", false, RouteId::package_drivers, RouteKind::websocket},
      {"GET", "/api/live/cam?role=view", false, RouteId::live, RouteKind::websocket},
      {"GET", "/api/live", false, RouteId::live_channels, RouteKind::answer},
      {"GET", "/live", true, RouteId::console_page, RouteKind::answer},
      {"GET", "/api/models/7/stream", false, RouteId::not_found, RouteKind::answer},
      {"GET", "/api/motions/7/unknown", false, RouteId::not_found, RouteKind::answer},
      {"GET", "/api", false, RouteId::not_found, RouteKind::answer},
  };
  for (const Case& c : cases) {
    auto t = parse_target(c.target);
    ASSERT_TRUE(t.ok()) << c.target;
    const Route r = match_route(c.method, *t, c.console);
    EXPECT_EQ(r.id, c.id) << c.method << " " << c.target;
    EXPECT_EQ(r.kind, c.kind) << c.method << " " << c.target;
  }
  auto upload = parse_target("/api/packages");
  ASSERT_TRUE(upload.ok());
  EXPECT_EQ(match_route("POST", *upload, false).record_kind, store::Kind::package);
}

// Access is decided on the decoded query the router reads: every spelling of
// ?role=publish that the router takes as publishing needs write.
TEST(Auth, LiveRoleIsDecidedOnTheDecodedQuery) {
  using S = std::vector<std::string>;
  for (const char* target :
       {"/api/live/x?role=publish", "/api/live/x?role=%70ublish", "/api/live/x?rol%65=publish",
        "/api/live/x?role=publis%68", "/api/live/x?%72%6F%6C%65=%70%75%62%6C%69%73%68",
        "/api/%6Cive/x?role=publish", "/api/live/x?a=1&&role=publish&role=view"}) {
    auto t = parse_target(target);
    ASSERT_TRUE(t.ok()) << target;
    EXPECT_EQ(live_role(t->params), LiveRoleRequest::publish) << target;
    EXPECT_EQ(required_access("GET", t->segments, t->params), Access::write) << target;
  }
  for (const char* target :
       {"/api/live/x?role=view", "/api/live/x?role=%76iew", "/api/live/x?role=view&role=publish"}) {
    auto t = parse_target(target);
    ASSERT_TRUE(t.ok()) << target;
    EXPECT_EQ(live_role(t->params), LiveRoleRequest::view) << target;
    EXPECT_EQ(required_access("GET", t->segments, t->params), Access::read) << target;
  }
  // Neither role: the route answers 400 BAD_ROLE, and access is read.
  for (const char* target : {"/api/live/x", "/api/live/x?role=Publish", "/api/live/x?role=publish+",
                             "/api/live/x?roles=publish"}) {
    auto t = parse_target(target);
    ASSERT_TRUE(t.ok()) << target;
    EXPECT_EQ(live_role(t->params), std::nullopt) << target;
  }
  EXPECT_EQ(required_access("GET", S{"api", "live", "x"}, {}), Access::read);
}

TEST(Auth, SecretFromBearerOrCookie) {
  EXPECT_EQ(request_secret("Bearer ckt_abc", ""), "ckt_abc");
  EXPECT_EQ(request_secret("bearer   ckt_abc  ", ""), "ckt_abc");
  EXPECT_EQ(request_secret("Basic dXNlcg==", "charkit_session=cks_c"), "cks_c");
  EXPECT_EQ(request_secret("", "a=1; charkit_session=\"cks_q\"; b=2"), "cks_q");
  EXPECT_EQ(request_secret("", "charkit_sessionx=1; xcharkit_session=2"), "");
  // The cookie carries sessions only, never a token.
  EXPECT_EQ(request_secret("", "charkit_session=ckt_abc"), "");
  EXPECT_EQ(request_secret("", "charkit_token=ckt_abc"), "");
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
  AccessPolicy named{{"charkit.example", "other.example:443"}, {}};
  EXPECT_TRUE(host_allowed(named, "charkit.example:8443"));  // a name listed without a port
  EXPECT_TRUE(host_allowed(named, "charkit.example"));
  EXPECT_TRUE(host_allowed(named, "other.example:443"));
  EXPECT_FALSE(host_allowed(named, "other.example:444"));  // listed with its port
  EXPECT_FALSE(host_allowed(named, "charkit.example.evil:8443"));
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

TEST_P(AuthServerTest, LoginOpensASessionNotTheToken) {
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
  // The cookie holds a session's own secret, never the token.
  ASSERT_EQ(set.rfind("charkit_session=cks_", 0), 0u) << set;
  EXPECT_EQ(set.find(writer), std::string::npos) << set;
  EXPECT_NE(set.find("HttpOnly"), std::string::npos);
  EXPECT_NE(set.find("SameSite=Strict"), std::string::npos);
  EXPECT_NE(set.find("Max-Age=604800"), std::string::npos) << set;  // the default 7 days
  const std::string cookie = set.substr(0, set.find(';'));
  const std::string session = cookie.substr(cookie.find('=') + 1);
  EXPECT_EQ(session.size(), store::kSessionSecretLength);
  auto me = get("/api/session", {}, {{"Cookie", cookie}});
  ASSERT_EQ(me.status, 200u);
  EXPECT_EQ(me.json()["authenticated"], true);
  EXPECT_EQ(me.json()["scope"], "write");
  EXPECT_EQ(me.json()["authRequired"], true);
  EXPECT_EQ(get("/api/packages", {}, {{"Cookie", cookie}}).status, 200u);
  // Hashed at rest: the catalogue holds its SHA-256 and the token it came from.
  {
    auto c = catalogue();
    auto list = store::TokenStore(*c).list_sessions();
    ASSERT_TRUE(list);
    ASSERT_EQ(list->size(), 1u);
    EXPECT_EQ((*list)[0].scope, store::Scope::write);
    EXPECT_GT((*list)[0].expires_at, (*list)[0].created_at);
  }
  // A cookie holding the raw token (what older servers set) is not a login.
  EXPECT_EQ(get("/api/packages", {}, {{"Cookie", "charkit_session=" + writer}}).status, 401u);
  EXPECT_EQ(get("/api/packages", {}, {{"Cookie", "charkit_token=" + writer}}).status, 401u);
  // A session does not open another session.
  auto renew = request(port_, http::verb::post, "/api/session", "{\"token\":\"" + session + "\"}",
                       {{"Content-Type", "application/json"}, {"Origin", origin}});
  EXPECT_EQ(renew.status, 401u);
  // Logout ends the session on the server: a copy of the cookie stops working.
  auto out = request(port_, http::verb::delete_, "/api/session", {},
                     {{"Origin", origin}, {"Cookie", cookie}});
  EXPECT_EQ(out.status, 200u);
  EXPECT_EQ(out.json()["sessionEnded"], true);
  EXPECT_NE(out.header("Set-Cookie").find("Max-Age=0"), std::string::npos);
  EXPECT_EQ(get("/api/packages", {}, {{"Cookie", cookie}}).status, 401u);
  EXPECT_EQ(get("/api/packages", writer).status, 200u);  // the token itself still works
}

TEST_P(AuthServerTest, RevokingATokenEndsItsSessions) {
  const std::string writer = make_token(store::Scope::write);
  start(options());
  const std::string origin = "http://127.0.0.1:" + std::to_string(port_);
  auto login = request(port_, http::verb::post, "/api/session", "{\"token\":\"" + writer + "\"}",
                       {{"Content-Type", "application/json"}, {"Origin", origin}});
  ASSERT_EQ(login.status, 200u) << login.body;
  const std::string set = login.header("Set-Cookie");
  const std::string cookie = set.substr(0, set.find(';'));
  EXPECT_EQ(get("/api/motions", {}, {{"Cookie", cookie}}).status, 200u);
  auto c = catalogue();
  store::TokenStore tokens(*c);
  auto list = tokens.list();
  ASSERT_TRUE(list);
  ASSERT_TRUE(*tokens.revoke((*list)[0].id));
  auto open = tokens.list_sessions();
  ASSERT_TRUE(open);
  EXPECT_TRUE(open->empty());
  auto all = tokens.list_sessions(true);
  ASSERT_TRUE(all);
  ASSERT_EQ(all->size(), 1u);
  EXPECT_TRUE((*all)[0].revoked_at.has_value());
  eventually([&] { return get("/api/motions", {}, {{"Cookie", cookie}}).status == 401; });
}

TEST_P(AuthServerTest, SessionsExpire) {
  make_token(store::Scope::read);
  auto c = catalogue();
  store::TokenStore tokens(*c);
  auto list = tokens.list();
  ASSERT_TRUE(list);
  const std::int64_t id = (*list)[0].id;
  auto s = tokens.create_session(id, 200);
  ASSERT_TRUE(s) << s.error().to_string();
  auto live = tokens.verify(s->secret);
  ASSERT_TRUE(live);
  ASSERT_TRUE(live->has_value());
  EXPECT_EQ((*live)->id, id);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto ended = tokens.verify(s->secret);
  ASSERT_TRUE(ended);
  EXPECT_FALSE(ended->has_value());
  EXPECT_EQ(tokens.create_session(id, 0).error().code, "TOKEN_INVALID");
  EXPECT_EQ(tokens.create_session(id + 1000, 1000).error().code, "TOKEN_UNKNOWN");
  // Malformed and unknown session secrets are simply not valid.
  for (std::string bad :
       {std::string("cks_"), "cks_" + std::string(43, '!'), "cks_" + std::string(43, 'A')}) {
    auto v = tokens.verify(bad);
    ASSERT_TRUE(v);
    EXPECT_FALSE(v->has_value()) << bad;
  }
}

// One client holding connections up to its cap cannot lock out others:
// another client's authenticated request is answered.
TEST_P(AuthServerTest, ClientAtItsConnectionCapLeavesOthersServed) {
  const std::string reader = make_token(store::Scope::read);
  auto o = options();
  o.max_connections_per_client = 16;
  start(o);
  boost::asio::io_context ioc;
  std::vector<std::unique_ptr<test_http::tcp::socket>> held;
  for (int i = 0; i < 16; ++i) held.push_back(test_http::connect_from(ioc, "127.0.0.2", port_));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const std::string refused = test_http::get_from("127.0.0.2", port_, "/api/motions",
                                                  "Authorization: Bearer " + reader + "\r\n");
  EXPECT_EQ(refused.rfind("HTTP/1.1 503", 0), 0u) << refused;
  const std::string ok = test_http::get_from("127.0.0.1", port_, "/api/motions",
                                             "Authorization: Bearer " + reader + "\r\n");
  EXPECT_EQ(ok.rfind("HTTP/1.1 200", 0), 0u) << ok;
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

// A read token (or none, under --public-read) could publish by spelling
// role=publish with percent-escapes: the access check compared the raw query
// while the router decoded it. Every spelling is refused now, and a viewer
// stays a viewer.
TEST_P(AuthServerTest, EncodedPublishRoleNeedsWrite) {
  const std::string reader = make_token(store::Scope::read);
  const std::string writer = make_token(store::Scope::write);
  auto o = options();
  o.public_read = true;
  start(o);
  const std::string host = "127.0.0.1:" + std::to_string(port_);
  auto upgrade = [&](const std::string& target, const std::string& token) {
    std::string up = "GET " + target + " HTTP/1.1\r\nHost: " + host +
                     "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: "
                     "dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n";
    if (!token.empty()) up += "Authorization: Bearer " + token + "\r\n";
    return raw_exchange(port_, up + "\r\n", std::chrono::milliseconds(500));
  };
  int channel = 0;
  for (const char* target : {"/api/live/cam?role=publish", "/api/live/cam?role=%70ublish",
                             "/api/live/cam?rol%65=publish", "/api/live/cam?role=publis%68",
                             "/api/live/cam?%72ole=%70ublis%68", "/api/%6cive/cam?role=%70ublish",
                             "/api/live/cam?x=1&role=%70ublish&role=view"}) {
    EXPECT_EQ(upgrade(target, "").rfind("HTTP/1.1 401", 0), 0u) << target;
    EXPECT_EQ(upgrade(target, reader).rfind("HTTP/1.1 403", 0), 0u) << target;
    // A channel of its own per spelling: the previous publisher may still be closing.
    std::string own = target;
    own.replace(own.find("cam"), 3, "cam" + std::to_string(++channel));
    const std::string as_writer = upgrade(own, writer);
    EXPECT_EQ(as_writer.rfind("HTTP/1.1 101", 0), 0u) << target;
    EXPECT_NE(as_writer.find("\"role\":\"publish\""), std::string::npos) << target;
  }
  // Viewing needs no token under --public-read, and stays viewing.
  for (const char* target : {"/api/live/cam?role=view", "/api/live/cam?role=%76iew",
                             "/api/live/cam?role=view&role=publish"}) {
    const std::string got = upgrade(target, "");
    EXPECT_EQ(got.rfind("HTTP/1.1 101", 0), 0u) << target;
    EXPECT_NE(got.find("\"role\":\"view\""), std::string::npos) << target;
  }
  // A query that does not decode is refused before access is decided.
  EXPECT_EQ(upgrade("/api/live/cam?role=%7publish", reader).rfind("HTTP/1.1 400", 0), 0u);
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
    // Told to, it starts, and says what that means (DNS rebinding without a Host allow-list).
    auto t = start_test_server(o);
    ASSERT_TRUE(t.ok());
    auto w = t->server->warnings();
    ASSERT_EQ(w.size(), 1u);
    EXPECT_EQ(w[0].code, "SERVER_OPEN_NETWORK");
    EXPECT_NE(w[0].message.find("DNS rebinding"), std::string::npos) << w[0].message;
  }
  {
    // With --allowed-host the Host allow-list still applies on an open server.
    auto named = o;
    named.allowed_hosts = {"charkit.test"};
    auto t = start_test_server(named);
    ASSERT_TRUE(t.ok());
    auto w = t->server->warnings();
    ASSERT_EQ(w.size(), 1u);
    EXPECT_EQ(w[0].message.find("DNS rebinding"), std::string::npos) << w[0].message;
    const std::string port = std::to_string(t->port);
    EXPECT_EQ(raw_request(t->port, "GET /api/motions HTTP/1.1\r\nHost: attacker.example:" + port +
                                       "\r\n\r\n")
                  .status,
              403u);
    EXPECT_EQ(
        raw_request(t->port, "GET /api/motions HTTP/1.1\r\nHost: charkit.test:" + port + "\r\n\r\n")
            .status,
        200u);
  }
  {
    auto t = start_test_server(options());  // loopback: nothing to warn about
    ASSERT_TRUE(t.ok());
    EXPECT_TRUE(t->server->warnings().empty());
  }
  // With a token it starts (and needs it).
  make_token(store::Scope::read);
  o.insecure_open = false;
  auto u = start_test_server(o);
  ASSERT_TRUE(u.ok()) << u.error().to_string();
}

}  // namespace
}  // namespace charkit::server
