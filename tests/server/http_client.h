// The small HTTP client of the server tests: one request per connection
// (Beast), raw bytes for framing attacks, and file helpers.
#pragma once

#include <array>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "charkit/core/json.h"

namespace charkit::server::test_http {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

struct Response {
  unsigned status = 0;
  std::string body;
  std::map<std::string, std::string> headers;
  core::Json json() const { return core::Json::parse(body); }
  std::string header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? std::string() : it->second;
  }
};

/// Reads one response (bodies up to 64 MiB); on an error, `ec` says which
/// and the result has status 0.
inline Response read_response(tcp::socket& sock, beast::error_code& ec) {
  beast::flat_buffer buf;
  http::response_parser<http::string_body> parser;
  parser.body_limit(64u << 20);
  http::read(sock, buf, parser, ec);
  Response r;
  if (ec) return r;
  r.status = parser.get().result_int();
  r.body = parser.get().body();
  for (const auto& f : parser.get())
    r.headers[std::string(f.name_string())] = std::string(f.value());
  return r;
}

/// One request on a fresh connection.
inline Response request(std::uint16_t port, http::verb method, const std::string& target,
                        const std::string& body = {},
                        const std::map<std::string, std::string>& headers = {}) {
  net::io_context ioc;
  tcp::socket sock(ioc);
  sock.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port));
  http::request<http::string_body> req{method, target, 11};
  // As a browser sends it: the port is part of Host (and of the origin).
  req.set(http::field::host, "127.0.0.1:" + std::to_string(port));
  for (const auto& [k, v] : headers) req.set(k, v);
  if (!body.empty() || method == http::verb::post) {
    req.body() = body;
    req.prepare_payload();
  }
  http::write(sock, req);
  beast::error_code ec;
  Response r = read_response(sock, ec);
  if (ec) throw beast::system_error(ec);
  return r;
}

/// Writes raw bytes, then reads a response if one comes; status 0 when the
/// server closed the connection without one.
inline Response raw_request(std::uint16_t port, const std::string& bytes) {
  net::io_context ioc;
  tcp::socket sock(ioc);
  sock.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port));
  beast::error_code ec;
  net::write(sock, net::buffer(bytes), ec);
  return read_response(sock, ec);
}

/// A socket connected to the server from `source` (any 127.0.0.0/8 address is
/// this machine's: several clients on one host).
inline std::unique_ptr<tcp::socket> connect_from(net::io_context& ioc, const char* source,
                                                 std::uint16_t port) {
  auto s = std::make_unique<tcp::socket>(ioc);
  s->open(tcp::v4());
  s->bind(tcp::endpoint(net::ip::make_address(source), 0));
  s->connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port));
  return s;
}

/// The answer to one GET sent from `source` on a new connection.
inline std::string get_from(const char* source, std::uint16_t port, const std::string& target,
                            const std::string& extra = {}) {
  net::io_context ioc;
  auto s = connect_from(ioc, source, port);
  const std::string req =
      "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n" + extra + "\r\n";
  net::write(*s, net::buffer(req));
  std::string got;
  boost::system::error_code ec;
  char b[4096];
  for (;;) {
    const std::size_t n = s->read_some(net::buffer(b), ec);
    got.append(b, n);
    if (ec) break;
  }
  return got;
}

/// Writes raw bytes and returns everything the server sends until it closes
/// the connection (or `wait` passes with nothing more arriving).
inline std::string raw_exchange(std::uint16_t port, const std::string& bytes,
                                std::chrono::milliseconds wait = std::chrono::seconds(5)) {
  net::io_context ioc;
  tcp::socket sock(ioc);
  sock.connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port));
  beast::error_code ec;
  net::write(sock, net::buffer(bytes), ec);
  std::string got;
  std::array<char, 4096> buf{};
  for (;;) {
    bool done = false;
    std::size_t n = 0;
    sock.async_read_some(net::buffer(buf), [&](beast::error_code e, std::size_t k) {
      n = k;
      done = e.failed();
    });
    ioc.restart();
    if (ioc.run_for(wait) == 0) {  // nothing within `wait`
      sock.cancel(ec);
      ioc.restart();
      ioc.run();
      break;
    }
    got.append(buf.data(), n);
    if (done) break;
  }
  return got;
}

/// Regular files under dir (recursively); 0 when dir does not exist.
inline std::size_t count_files(const std::filesystem::path& dir) {
  std::size_t n = 0;
  std::error_code ec;
  if (!std::filesystem::exists(dir, ec)) return 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir, ec))
    if (e.is_regular_file()) ++n;
  return n;
}

/// Regular files under dir once the server is done removing discarded
/// uploads (it does that on its blocking threads, after answering): polls
/// for up to 5 s while any are left.
inline std::size_t files_left(const std::filesystem::path& dir) {
  std::size_t left = count_files(dir);
  for (int i = 0; i < 500 && left != 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    left = count_files(dir);
  }
  return left;
}

}  // namespace charkit::server::test_http
