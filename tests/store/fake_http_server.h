// A scripted HTTP/1.1 server on 127.0.0.1 for the S3 client tests: each
// request (one per connection; the answer closes it) is recorded and
// answered by a handler, so tests can serve what s3rver cannot (listings of
// multipart uploads, garbage, errors, silence) and check what was sent.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace charkit::store::testing {

class FakeHttpServer {
 public:
  struct Request {
    std::string method;
    std::string target;                          ///< path and query as sent
    std::map<std::string, std::string> headers;  ///< lower-case names
    std::string body;
  };
  struct Reply {
    int status = 200;
    std::string body;
    std::vector<std::pair<std::string, std::string>> headers;
    std::chrono::milliseconds delay{0};  ///< wait this long before answering
  };
  using Handler = std::function<Reply(const Request&)>;

  explicit FakeHttpServer(Handler handler) : handler_(std::move(handler)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        ::listen(fd_, 16) != 0)
      return;
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { loop(); });
  }
  ~FakeHttpServer() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    if (fd_ >= 0) ::close(fd_);
  }
  FakeHttpServer(const FakeHttpServer&) = delete;
  FakeHttpServer& operator=(const FakeHttpServer&) = delete;

  int port() const { return port_; }
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::vector<Request> requests() const {
    std::lock_guard lock(mutex_);
    return requests_;
  }

 private:
  void loop() {
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      const int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) continue;
      serve(c);
      ::close(c);
    }
  }

  static bool read_more(int c, std::string& buf) {
    char tmp[16384];
    pollfd p{c, POLLIN, 0};
    if (::poll(&p, 1, 5000) <= 0) return false;
    const ssize_t n = ::recv(c, tmp, sizeof tmp, 0);
    if (n <= 0) return false;
    buf.append(tmp, static_cast<std::size_t>(n));
    return true;
  }

  void serve(int c) {
    std::string buf;
    std::size_t head_end;
    while ((head_end = buf.find("\r\n\r\n")) == std::string::npos)
      if (!read_more(c, buf)) return;
    Request req;
    std::size_t line_end = buf.find("\r\n");
    const std::string first = buf.substr(0, line_end);
    const auto sp1 = first.find(' '), sp2 = first.rfind(' ');
    req.method = first.substr(0, sp1);
    req.target = first.substr(sp1 + 1, sp2 - sp1 - 1);
    std::size_t pos = line_end + 2;
    while (pos < head_end) {
      const std::size_t e = buf.find("\r\n", pos);
      const std::string line = buf.substr(pos, e - pos);
      const auto colon = line.find(':');
      if (colon != std::string::npos) {
        std::string name = line.substr(0, colon);
        for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        std::string value = line.substr(colon + 1);
        while (!value.empty() && value.front() == ' ') value.erase(0, 1);
        req.headers[name] = value;
      }
      pos = e + 2;
    }
    std::size_t length = 0;
    if (auto it = req.headers.find("content-length"); it != req.headers.end())
      length = static_cast<std::size_t>(std::stoull(it->second));
    req.body = buf.substr(head_end + 4);
    while (req.body.size() < length)
      if (!read_more(c, req.body)) return;
    {
      std::lock_guard lock(mutex_);
      requests_.push_back(req);
    }
    const Reply r = handler_(req);
    if (r.delay.count() > 0) std::this_thread::sleep_for(r.delay);
    std::string out = "HTTP/1.1 " + std::to_string(r.status) + " X\r\nConnection: close\r\n";
    bool has_length = false;
    for (const auto& [n, v] : r.headers) {
      out += n + ": " + v + "\r\n";
      has_length = has_length || n == "Content-Length";
    }
    if (!has_length) out += "Content-Length: " + std::to_string(r.body.size()) + "\r\n";
    out += "\r\n";
    if (req.method != "HEAD") out += r.body;
    std::size_t sent = 0;
    while (sent < out.size()) {
      const ssize_t n = ::send(c, out.data() + sent, out.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return;
      sent += static_cast<std::size_t>(n);
    }
  }

  Handler handler_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  mutable std::mutex mutex_;
  std::vector<Request> requests_;
};

}  // namespace charkit::store::testing
