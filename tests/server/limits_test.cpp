// Bounded work at the connection level: a connection cap with a
// 503, accept back-off when file descriptors run out (no busy loop), a
// minimum upload rate and a whole-header deadline against trickling clients.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "charkit/core/json.h"
#include "http_client.h"
#include "test_server.h"

namespace charkit::server {
namespace {

namespace fs = std::filesystem;
namespace net = test_http::net;
namespace http = test_http::http;
using tcp = test_http::tcp;
using Clock = std::chrono::steady_clock;
using test_http::connect_from;
using test_http::count_files;
using test_http::get_from;
using test_http::raw_request;
using test_http::request;

fs::path fresh_dir(const char* tag) {
  static std::atomic<int> counter{0};
  auto d =
      fs::temp_directory_path() / (std::string("charkit_") + tag + "_" +
                                   std::to_string(::getpid()) + "_" + std::to_string(counter++));
  fs::remove_all(d);
  return d;
}

TEST(Limits, ConnectionCapAnswers503ThenRecovers) {
  auto dir = fresh_dir("cap");
  auto o = test_server_options(dir);
  o.max_connections = 3;
  auto t = start_test_server(o);
  ASSERT_TRUE(t.ok()) << t.error().to_string();
  net::io_context ioc;
  std::vector<std::unique_ptr<tcp::socket>> held;
  for (int i = 0; i < 3; ++i) {
    held.push_back(std::make_unique<tcp::socket>(ioc));
    held.back()->connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), t->port));
  }
  // Let the server accept all three (the counts are taken at accept).
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto refused = raw_request(t->port, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  EXPECT_EQ(refused.status, 503u);
  EXPECT_EQ(refused.json()["error"], "TOO_MANY_CONNECTIONS");
  held.clear();  // the server sees EOF and frees the slots
  unsigned status = 0;
  for (int i = 0; i < 100 && status != 200; ++i) {
    status = request(t->port, http::verb::get, "/healthz").status;
    if (status != 200) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(status, 200u);
  t->server.reset();
  fs::remove_all(dir);
}

// One client holding idle connections up to its cap cannot lock others out:
// its next connection is refused, another client's request is answered.
TEST(Limits, OneClientAtItsCapLeavesOthersServed) {
  auto dir = fresh_dir("percap");
  auto o = test_server_options(dir);
  o.max_connections = 64;
  o.max_connections_per_client = 8;
  auto t = start_test_server(o);
  ASSERT_TRUE(t.ok()) << t.error().to_string();
  net::io_context ioc;
  std::vector<std::unique_ptr<tcp::socket>> held;
  for (int i = 0; i < 8; ++i) held.push_back(connect_from(ioc, "127.0.0.2", t->port));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // all accepted
  const std::string refused = get_from("127.0.0.2", t->port, "/healthz");
  EXPECT_EQ(refused.rfind("HTTP/1.1 503", 0), 0u) << refused;
  EXPECT_NE(refused.find("TOO_MANY_CLIENT_CONNECTIONS"), std::string::npos) << refused;
  // Another client is served, on as many connections as it likes (up to its own cap).
  for (const char* other : {"127.0.0.1", "127.0.0.3"}) {
    const std::string ok = get_from(other, t->port, "/healthz");
    EXPECT_EQ(ok.rfind("HTTP/1.1 200", 0), 0u) << other << ": " << ok;
  }
  held.pop_back();  // one freed: the first client may connect again
  std::string again;
  for (int i = 0; i < 100; ++i) {
    again = get_from("127.0.0.2", t->port, "/healthz");
    if (again.rfind("HTTP/1.1 200", 0) == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(again.rfind("HTTP/1.1 200", 0), 0u) << again;
  t->server.reset();
  fs::remove_all(dir);
}

// A connection that sends nothing is closed after the header timeout, and
// its slot is free again (here well before the 30 s read timeout).
TEST(Limits, IdleConnectionsAreClosedAfterTheHeaderTimeout) {
  auto dir = fresh_dir("idle");
  auto o = test_server_options(dir);
  o.header_timeout = std::chrono::seconds(1);
  o.max_connections_per_client = 2;
  auto t = start_test_server(o);
  ASSERT_TRUE(t.ok()) << t.error().to_string();
  net::io_context ioc;
  auto a = connect_from(ioc, "127.0.0.2", t->port);
  auto b = connect_from(ioc, "127.0.0.2", t->port);
  const auto t0 = Clock::now();
  boost::system::error_code ec;
  char buf[64];
  a->read_some(net::buffer(buf), ec);  // blocks until the server closes it
  const double took = std::chrono::duration<double>(Clock::now() - t0).count();
  EXPECT_TRUE(ec == net::error::eof || ec == net::error::connection_reset) << ec.message();
  EXPECT_GT(took, 0.5);
  EXPECT_LT(took, 5.0);
  b->read_some(net::buffer(buf), ec);
  EXPECT_TRUE(ec == net::error::eof || ec == net::error::connection_reset) << ec.message();
  // Both slots are free: the client is served again.
  std::string ok;
  for (int i = 0; i < 100; ++i) {
    ok = get_from("127.0.0.2", t->port, "/healthz");
    if (ok.rfind("HTTP/1.1 200", 0) == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(ok.rfind("HTTP/1.1 200", 0), 0u) << ok;
  t->server.reset();
  fs::remove_all(dir);
}

TEST(Limits, DuplicateHostIsRefused) {
  auto dir = fresh_dir("dhost");
  auto t = start_test_server(test_server_options(dir));
  ASSERT_TRUE(t.ok()) << t.error().to_string();
  auto twice = raw_request(
      t->port, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: attacker.example\r\n\r\n");
  EXPECT_EQ(twice.status, 400u);
  EXPECT_EQ(twice.json()["error"], "DUPLICATE_HOST");
  auto once = raw_request(t->port, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  EXPECT_EQ(once.status, 200u);
  t->server.reset();
  fs::remove_all(dir);
}

TEST(Limits, TricklingUploadIsCutOffAndLeavesNothing) {
  auto dir = fresh_dir("trickle");
  auto o = test_server_options(dir);
  o.read_timeout = std::chrono::seconds(2);
  o.min_upload_rate = 1000;  // bytes/s after the 2 s grace
  auto t = start_test_server(o);
  ASSERT_TRUE(t.ok()) << t.error().to_string();
  net::io_context ioc;
  tcp::socket sock(ioc);
  sock.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), t->port));
  net::write(sock, net::buffer(std::string("POST /api/motions?filename=slow.bvh HTTP/1.1\r\n"
                                           "Host: 127.0.0.1\r\nContent-Length: 100000\r\n\r\n")));
  // One byte every 250 ms: each read arrives well within the read timeout,
  // so only the rate rule can end it.
  const auto t0 = Clock::now();
  bool closed = false;
  while (!closed && Clock::now() - t0 < std::chrono::seconds(15)) {
    boost::system::error_code ec;
    net::write(sock, net::buffer("x", 1), ec);
    if (ec) closed = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    sock.non_blocking(true);
    char b[256];
    sock.read_some(net::buffer(b), ec);
    sock.non_blocking(false);
    if (ec && ec != net::error::would_block) closed = true;
  }
  const double took = std::chrono::duration<double>(Clock::now() - t0).count();
  EXPECT_TRUE(closed);
  EXPECT_LT(took, 10.0);
  EXPECT_GT(took, 1.5);  // not before the grace period
  std::size_t left = 1;
  for (int i = 0; i < 200 && left; ++i) {
    left = count_files(dir / "blobs");
    if (left) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(left, 0u);
  // A normal upload at full speed is not affected.
  auto ok = request(t->port, http::verb::post, "/api/motions?filename=k.json", "{}");
  EXPECT_EQ(ok.status, 201u);
  t->server.reset();
  fs::remove_all(dir);
}

TEST(Limits, TricklingHeaderHitsOneDeadline) {
  auto dir = fresh_dir("hdr");
  auto o = test_server_options(dir);
  o.read_timeout = std::chrono::seconds(2);
  auto t = start_test_server(o);
  ASSERT_TRUE(t.ok()) << t.error().to_string();
  net::io_context ioc;
  tcp::socket sock(ioc);
  sock.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), t->port));
  const std::string head = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ";
  net::write(sock, net::buffer(head));
  const auto t0 = Clock::now();
  bool closed = false;
  while (!closed && Clock::now() - t0 < std::chrono::seconds(15)) {
    boost::system::error_code ec;
    net::write(sock, net::buffer("a", 1), ec);
    if (ec) closed = true;
    sock.non_blocking(true);
    char b[256];
    sock.read_some(net::buffer(b), ec);
    sock.non_blocking(false);
    if (ec && ec != net::error::would_block) closed = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  EXPECT_TRUE(closed);
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - t0).count(), 8.0);
  t->server.reset();
  fs::remove_all(dir);
}

/// utime + stime of a process, in clock ticks.
long cpu_ticks(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto close = all.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream rest(all.substr(close + 2));
  std::string field;
  long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14) utime = std::stol(field);
    if (i == 15) stime = std::stol(field);
  }
  return utime + stime;
}

TEST(Limits, OutOfDescriptorsBacksOffInsteadOfSpinning) {
  auto dir = fresh_dir("emfile");
  int pipefd[2];
  ASSERT_EQ(::pipe(pipefd), 0);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // A server with few descriptors: the catalogue, blob store, epoll and
    // the listening socket take some; the rest go to connections fast.
    ::close(pipefd[0]);
    auto o = test_server_options(dir);
    o.job_workers = 0;
    auto s = Server::create(o);
    if (!s) ::_exit(3);
    struct rlimit lim {
      48, 48
    };
    ::setrlimit(RLIMIT_NOFILE, &lim);
    auto p = (*s)->start();
    if (!p) ::_exit(4);
    std::uint16_t port = *p;
    if (::write(pipefd[1], &port, sizeof port) != sizeof port) ::_exit(5);
    for (;;) ::pause();
  }
  ::close(pipefd[1]);
  std::uint16_t port = 0;
  ASSERT_EQ(::read(pipefd[0], &port, sizeof port), static_cast<ssize_t>(sizeof port));
  ::close(pipefd[0]);

  net::io_context ioc;
  std::vector<std::unique_ptr<tcp::socket>> conns;
  for (int i = 0; i < 80; ++i) {
    auto s = std::make_unique<tcp::socket>(ioc);
    boost::system::error_code ec;
    s->connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port), ec);
    if (!ec) conns.push_back(std::move(s));
  }
  ASSERT_GT(conns.size(), 48u);  // more than the server can accept: some wait in the backlog
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const long before = cpu_ticks(child);
  std::this_thread::sleep_for(std::chrono::seconds(2));
  const long after = cpu_ticks(child);
  const long hz = ::sysconf(_SC_CLK_TCK);
  // A spinning accept loop burns a whole core: ~2 s of CPU in 2 s.
  EXPECT_LT(after - before, hz / 2) << "accept loop spins on EMFILE";
  conns.clear();
  unsigned status = 0;
  for (int i = 0; i < 100 && status != 200; ++i) {
    try {
      status = request(port, http::verb::get, "/healthz").status;
    } catch (const std::exception&) {
      status = 0;
    }
    if (status != 200) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(status, 200u);  // serving again once descriptors are free
  ::kill(child, SIGKILL);
  int st = 0;
  ::waitpid(child, &st, 0);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace charkit::server
