// stream_load: N concurrent WebSocket stream clients against a running
// `charkit serve` for T seconds (scripts/load_test runs it). Each client
// plays /api/motions/{id}/stream with loop on and times every binary frame
// on arrival; the frame-time drift of a frame is
//   (arrival − first arrival) − (position − first position) / fps,
// where position counts frames across loop wraps. The server paces frames
// from a fixed anchor, so the drift stays within network and scheduling
// jitter rather than growing. The server's resident memory (VmRSS of
// /proc/PID/status) is sampled once all clients play, every 5 s, and at the end.
//
//   stream_load --port 8080 --motion 1 --clients 100 --seconds 60 --pid 1234 [--json]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>

namespace {

namespace beast = boost::beast;
namespace websocket = beast::websocket;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using Clock = std::chrono::steady_clock;

struct Args {
  std::string host = "127.0.0.1";
  std::string token;  ///< API token sent as Authorization: Bearer (servers with tokens)
  unsigned short port = 8080;
  long motion = 1;
  int clients = 100;
  int seconds = 60;
  long pid = 0;
  bool json = false;
};

/// VmRSS of a process in KiB (0 when unreadable).
long rss_kib(long pid) {
  if (pid <= 0) return 0;
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::strtol(line.c_str() + 6, nullptr, 10);
  return 0;
}

/// A number field of a flat JSON text ("fps":30) without a JSON library.
double json_number(const std::string& text, const std::string& key) {
  auto p = text.find("\"" + key + "\":");
  if (p == std::string::npos) return 0;
  return std::strtod(text.c_str() + p + key.size() + 3, nullptr);
}

class Client : public std::enable_shared_from_this<Client> {
 public:
  Client(net::io_context& ioc, const Args& a) : ws_(net::make_strand(ioc)), args_(a) {}

  void start() {
    auto& sock = beast::get_lowest_layer(ws_);
    sock.expires_after(std::chrono::seconds(30));
    sock.async_connect(tcp::endpoint(net::ip::make_address(args_.host), args_.port),
                       [self = shared_from_this()](beast::error_code ec) { self->on_connect(ec); });
  }
  void stop() {
    net::post(ws_.get_executor(), [self = shared_from_this()] {
      self->stopping_ = true;
      beast::error_code ec;
      beast::get_lowest_layer(self->ws_).socket().close(ec);
    });
  }

  // Results (read after the io threads are joined).
  bool ok = false;
  std::string error;
  std::uint64_t frames = 0;
  double fps = 0;
  double max_abs_drift_s = 0;
  double last_drift_s = 0;
  std::vector<double> drifts;  ///< every frame's drift (s)

 private:
  void fail(const std::string& what, beast::error_code ec) {
    if (stopping_) return;
    error = what + ": " + ec.message();
  }
  void on_connect(beast::error_code ec) {
    if (ec) return fail("connect", ec);
    beast::get_lowest_layer(ws_).expires_never();
    beast::error_code ignored;  // small control messages go out at once, as the server's frames
    beast::get_lowest_layer(ws_).socket().set_option(tcp::no_delay(true), ignored);
    ws_.set_option(websocket::stream_base::timeout::suggested(beast::role_type::client));
    if (!args_.token.empty())
      ws_.set_option(
          websocket::stream_base::decorator([token = args_.token](websocket::request_type& req) {
            req.set(beast::http::field::authorization, "Bearer " + token);
          }));
    ws_.async_handshake(args_.host + ":" + std::to_string(args_.port),
                        "/api/motions/" + std::to_string(args_.motion) + "/stream",
                        [self = shared_from_this()](beast::error_code e) {
                          if (e) return self->fail("handshake", e);
                          self->read();
                        });
  }
  void read() {
    ws_.async_read(buf_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
      self->on_read(ec);
    });
  }
  void on_read(beast::error_code ec) {
    if (ec) return fail("read", ec);
    const auto now = Clock::now();
    std::string msg = beast::buffers_to_string(buf_.data());
    buf_.consume(buf_.size());
    if (!ws_.got_binary()) {
      if (msg.find("\"type\":\"header\"") != std::string::npos) {
        fps = json_number(msg, "fps");
        total_ = static_cast<std::int64_t>(json_number(msg, "frames"));
        ok = fps > 0 && total_ > 0;
        if (!ok) error = "bad header: " + msg;
        send_loop_on();
      }
      return read();
    }
    if (msg.size() != 572 || !ok) return read();
    std::uint32_t f = 0;
    std::memcpy(&f, msg.data(), 4);  // little-endian on the hosts we run on
    if (frames > 0 && static_cast<std::int64_t>(f) < last_frame_) ++wraps_;
    last_frame_ = f;
    const std::int64_t pos = wraps_ * total_ + f;
    if (frames == 0) {
      first_time_ = now;
      first_pos_ = pos;
    }
    const double elapsed = std::chrono::duration<double>(now - first_time_).count();
    const double drift = elapsed - static_cast<double>(pos - first_pos_) / fps;
    drifts.push_back(drift);
    last_drift_s = drift;
    max_abs_drift_s = std::max(max_abs_drift_s, std::abs(drift));
    ++frames;
    read();
  }
  void send_loop_on() {
    auto text = std::make_shared<std::string>("{\"cmd\":\"loop\",\"on\":true}");
    ws_.text(true);
    ws_.async_write(net::buffer(*text),
                    [self = shared_from_this(), text](beast::error_code ec, std::size_t) {
                      if (ec) self->fail("write", ec);
                    });
  }

  websocket::stream<beast::tcp_stream> ws_;
  Args args_;
  beast::flat_buffer buf_;
  bool stopping_ = false;
  std::int64_t total_ = 0, last_frame_ = 0, wraps_ = 0, first_pos_ = 0;
  Clock::time_point first_time_;
};

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  auto i = static_cast<std::size_t>(std::ceil(p * static_cast<double>(v.size()))) - 1;
  return v[std::min(i, v.size() - 1)];
}

int usage() {
  std::cerr << "usage: stream_load --port P --motion ID [--host H] [--clients N] [--seconds T] "
               "[--pid SERVER_PID] [--token API_TOKEN] [--json]\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    auto next = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    const char* v = nullptr;
    if (k == "--json") {
      a.json = true;
      continue;
    }
    if (!(v = next())) return usage();
    if (k == "--host")
      a.host = v;
    else if (k == "--port")
      a.port = static_cast<unsigned short>(std::atoi(v));
    else if (k == "--motion")
      a.motion = std::atol(v);
    else if (k == "--clients")
      a.clients = std::atoi(v);
    else if (k == "--seconds")
      a.seconds = std::atoi(v);
    else if (k == "--pid")
      a.pid = std::atol(v);
    else if (k == "--token")
      a.token = v;
    else
      return usage();
  }
  if (a.port == 0 || a.clients < 1 || a.seconds < 1) return usage();

  net::io_context ioc;
  auto guard = net::make_work_guard(ioc);
  std::vector<std::shared_ptr<Client>> clients;
  for (int i = 0; i < a.clients; ++i) clients.push_back(std::make_shared<Client>(ioc, a));
  std::vector<std::thread> threads;
  for (int i = 0; i < 2; ++i) threads.emplace_back([&] { ioc.run(); });
  for (auto& c : clients) c->start();

  std::this_thread::sleep_for(std::chrono::seconds(2));  // all connected and playing
  const long rss_start = rss_kib(a.pid);
  std::vector<long> samples{rss_start};
  const auto t0 = Clock::now();
  while (Clock::now() - t0 < std::chrono::seconds(a.seconds)) {
    std::this_thread::sleep_for(std::chrono::seconds(std::min(5, a.seconds)));
    samples.push_back(rss_kib(a.pid));
  }
  const long rss_end = rss_kib(a.pid);
  for (auto& c : clients) c->stop();
  guard.reset();
  for (auto& t : threads) t.join();

  int ok = 0;
  double fps = 0;
  std::uint64_t frames = 0;
  std::vector<double> max_drift, all;
  std::string first_error;
  for (auto& c : clients) {
    if (c->ok && c->error.empty() && c->frames > 0) {
      ++ok;
      fps = c->fps;
      frames += c->frames;
      max_drift.push_back(c->max_abs_drift_s);
      for (double d : c->drifts) all.push_back(std::abs(d));
    } else if (first_error.empty()) {
      first_error = c->error.empty() ? "no frames" : c->error;
    }
  }
  const double frame_s = fps > 0 ? 1.0 / fps : 0;
  const double worst =
      max_drift.empty() ? 0 : *std::max_element(max_drift.begin(), max_drift.end());
  const double med_client = percentile(max_drift, 0.5);
  const double p99 = percentile(all, 0.99);
  const double expected = static_cast<double>(ok) * fps * (a.seconds + 2);
  long rss_max = *std::max_element(samples.begin(), samples.end());

  std::ostringstream out;
  if (a.json) {
    out << "{\"clients\":" << a.clients << ",\"clientsOk\":" << ok << ",\"seconds\":" << a.seconds
        << ",\"fps\":" << fps << ",\"frames\":" << frames
        << ",\"framesExpected\":" << static_cast<long>(expected)
        << ",\"maxDriftMs\":" << worst * 1000 << ",\"medianClientMaxDriftMs\":" << med_client * 1000
        << ",\"p99DriftMs\":" << p99 * 1000 << ",\"frameMs\":" << frame_s * 1000
        << ",\"rssStartKiB\":" << rss_start << ",\"rssEndKiB\":" << rss_end
        << ",\"rssMaxKiB\":" << rss_max << "}\n";
  } else {
    out << "clients " << ok << "/" << a.clients << " streaming for " << a.seconds << " s at " << fps
        << " fps; frames received " << frames << " (" << static_cast<long>(expected)
        << " at full rate)\n"
        << "frame-time drift: worst " << worst * 1000 << " ms, median of per-client worst "
        << med_client * 1000 << " ms, p99 over all frames " << p99 * 1000
        << " ms (one frame = " << frame_s * 1000 << " ms)\n"
        << "server VmRSS: start " << rss_start << " KiB, end " << rss_end << " KiB, max " << rss_max
        << " KiB\n";
    if (!first_error.empty()) out << "first client error: " << first_error << "\n";
  }
  std::cout << out.str();
  return ok == a.clients ? 0 : 1;
}
