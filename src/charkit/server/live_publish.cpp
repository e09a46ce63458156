// The live publisher (live_publish.h): a Beast WebSocket client on one
// io_context thread. One read is kept pending (the header, the server's
// close), and frames are written one at a time, each at its own time on a
// steady clock: frame k of a pass at start + k / fps.
#include "charkit/server/live_publish.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket.hpp>

#include "charkit/core/json.h"
#include "charkit/server/detail/frame_source.h"
#include "charkit/server/detail/ws.h"
#include "charkit/server/error_codes.h"

namespace charkit::server {

namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace websocket = beast::websocket;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using Clock = std::chrono::steady_clock;

struct Endpoint {
  std::string host;
  std::string port;
};

core::Result<Endpoint> parse_server(const std::string& url) {
  constexpr std::string_view kHttp = "http://";
  if (url.rfind("https://", 0) == 0)
    return core::make_error(codes::LIVE_URL,
                            "'" + url +
                                "': the publisher speaks plain WebSocket (http://), not TLS; "
                                "reach a TLS server through a local address or a tunnel");
  if (url.rfind(kHttp, 0) != 0)
    return core::make_error(codes::LIVE_URL, "'" + url + "' is not http://HOST[:PORT]");
  std::string rest = url.substr(kHttp.size());
  while (!rest.empty() && rest.back() == '/') rest.pop_back();
  if (rest.empty() || rest.find('/') != std::string::npos || rest.find('@') != std::string::npos)
    return core::make_error(codes::LIVE_URL,
                            "'" + url + "' is not http://HOST[:PORT] (no path, no user)");
  Endpoint e;
  const auto colon = rest.rfind(':');
  if (colon != std::string::npos && rest.find(']') == std::string::npos) {
    e.host = rest.substr(0, colon);
    e.port = rest.substr(colon + 1);
  } else {
    e.host = rest;
    e.port = "80";
  }
  if (e.host.size() > 2 && e.host.front() == '[' && e.host.back() == ']')
    e.host = e.host.substr(1, e.host.size() - 2);
  const bool digits =
      !e.port.empty() && e.port.size() <= 5 &&
      std::all_of(e.port.begin(), e.port.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (e.host.empty() || !digits || std::stoi(e.port) == 0 || std::stoi(e.port) > 65535)
    return core::make_error(codes::LIVE_URL, "'" + url + "' is not http://HOST[:PORT]");
  return e;
}

/// The JSON error body of a refused request, as a sentence.
std::string answer_text(unsigned status, const std::string& body) {
  std::string text = "HTTP " + std::to_string(status);
  auto j = core::parse_json_strict(body);
  if (j && j->is_object() && (*j)["error"].is_string())
    text += " " + (*j)["error"].get<std::string>() +
            ((*j)["message"].is_string() ? ": " + (*j)["message"].get<std::string>() : "");
  return text;
}

core::Result<tcp::resolver::results_type> resolve(net::io_context& ioc, const Endpoint& e,
                                                  const std::string& url) {
  tcp::resolver resolver(ioc);
  beast::error_code ec;
  auto found = resolver.resolve(e.host, e.port, ec);
  if (ec)
    return core::make_error(codes::LIVE_CONNECT, "cannot resolve " + url + ": " + ec.message());
  return found;
}

/// The publishing session: connect, handshake, then frames on a timer.
class Publisher {
 public:
  Publisher(net::io_context& ioc, const ws::FrameSource& source, const LivePublishOptions& o)
      : ioc_(ioc), ws_(ioc), timer_(ioc), source_(source), options_(o) {}

  core::Result<LivePublishStats> run(const tcp::resolver::results_type& found, const Endpoint& e) {
    beast::error_code ec;
    beast::get_lowest_layer(ws_).expires_after(std::chrono::seconds(30));
    beast::get_lowest_layer(ws_).connect(found, ec);
    if (ec)
      return core::make_error(codes::LIVE_CONNECT,
                              "cannot connect to " + options_.server + ": " + ec.message());
    ws_.set_option(websocket::stream_base::decorator([this](websocket::request_type& req) {
      req.set(http::field::user_agent, "charkit live publish");
      if (!options_.token.empty()) req.set(http::field::authorization, "Bearer " + options_.token);
    }));
    // The asynchronous handshake: Boost 1.74's synchronous one leaves the
    // response empty when the server declines, and its answer is the message.
    const std::string target = "/api/live/" + options_.channel + "?role=publish";
    res_.result(http::status::unknown);  // 0 until a response is read
    ws_.async_handshake(res_, e.host + ":" + e.port, target, [this](beast::error_code hec) {
      if (hec) {
        if (res_.result_int() != 0 && res_.result() != http::status::switching_protocols)
          error_ = core::make_error(codes::LIVE_REFUSED,
                                    "the server refused channel '" + options_.channel +
                                        "': " + answer_text(res_.result_int(), res_.body()));
        else
          error_ =
              core::make_error(codes::LIVE_CONNECT, "WebSocket handshake with " + options_.server +
                                                        ": " + hec.message());
        return;
      }
      // From here the WebSocket's own timeouts: a server that stops answering
      // its pings for 30 s ends the run (LIVE_CLOSED) instead of hanging it.
      beast::get_lowest_layer(ws_).expires_never();
      websocket::stream_base::timeout t{};
      t.handshake_timeout = std::chrono::seconds(30);
      t.idle_timeout = std::chrono::seconds(30);
      t.keep_alive_pings = true;
      ws_.set_option(t);
      ws_.binary(true);
      read();
      start_ = Clock::now();
      next_frame();
    });
    ioc_.run();
    stats_.seconds = std::chrono::duration<double>(Clock::now() - start_).count();
    if (error_) return std::move(*error_);
    return stats_;
  }

 private:
  void read() {
    ws_.async_read(buf_, [this](beast::error_code ec, std::size_t) {
      buf_.consume(buf_.size());
      if (!ec) return read();  // the header, or anything else the server says
      timer_.cancel();
      if (closing_) return;  // our own close finished
      const auto reason = ws_.reason();
      if (ec == websocket::error::closed)
        error_ =
            core::make_error(codes::LIVE_CLOSED,
                             "the server closed channel '" + options_.channel + "' (" +
                                 std::to_string(reason.code) + (reason.reason.empty() ? "" : ": ") +
                                 std::string(reason.reason.data(), reason.reason.size()) + ")");
      else
        error_ = core::make_error(
            codes::LIVE_CLOSED, "the connection to " + options_.server + " ended: " + ec.message());
    });
  }

  /// Frame `index_` of the pass, at its time.
  void next_frame() {
    if (error_ || closing_) return;
    if (options_.stop && options_.stop->load()) {
      stats_.stopped = true;
      return close();
    }
    if (index_ == source_.frames()) {
      if (!options_.loop) return close();
      index_ = 0;
      ++pass_;
    }
    const auto due =
        start_ + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(
                     (static_cast<double>(pass_) * static_cast<double>(source_.frames()) +
                      static_cast<double>(index_)) /
                     source_.fps()));
    // Wake at least every 100 ms, so that `stop` is seen while waiting.
    timer_.expires_at(std::min(due, Clock::now() + std::chrono::milliseconds(100)));
    timer_.async_wait([this, due](beast::error_code ec) {
      if (ec || error_) return;
      if (Clock::now() < due) return next_frame();
      send();
    });
  }

  void send() {
    if (window_first_ > index_ || index_ >= window_first_ + window_.size()) {
      auto got = source_.read(index_, ws::kMaxReadFrames);
      if (!got) {
        error_ = std::move(got).error();
        return close();
      }
      window_ = std::move(*got);
      window_first_ = index_;
    }
    const auto& frame = window_[index_ - window_first_];
    ws_.async_write(net::buffer(*frame), [this](beast::error_code ec, std::size_t) {
      if (ec) {
        if (!error_)
          error_ = core::make_error(codes::LIVE_CLOSED,
                                    "sending a frame to " + options_.server + ": " + ec.message());
        return;
      }
      ++stats_.frames_sent;
      ++index_;
      if (options_.progress) options_.progress(stats_.frames_sent, source_.frames());
      next_frame();
    });
  }

  void close() {
    closing_ = true;
    timer_.cancel();
    ws_.async_close(websocket::close_code::normal, [](beast::error_code) {});
  }

  net::io_context& ioc_;
  websocket::stream<beast::tcp_stream> ws_;
  net::steady_timer timer_;
  beast::flat_buffer buf_;
  websocket::response_type res_;
  const ws::FrameSource& source_;
  const LivePublishOptions& options_;
  Clock::time_point start_;
  std::size_t index_ = 0;
  std::uint64_t pass_ = 0;
  std::vector<std::shared_ptr<const std::string>> window_;
  std::size_t window_first_ = 0;
  bool closing_ = false;
  std::optional<core::Error> error_;
  LivePublishStats stats_;
};

}  // namespace

namespace {

/// The server's endpoint, once the URL and the channel are checked.
core::Result<Endpoint> checked_target(const LivePublishOptions& options) {
  auto endpoint = parse_server(options.server);
  if (!endpoint) return endpoint;
  if (!ws::valid_channel_name(options.channel))
    return core::make_error(codes::BAD_CHANNEL, "'" + options.channel + "': a channel name is 1.." +
                                                    std::to_string(ws::kMaxChannelName) +
                                                    " characters of A-Z a-z 0-9 _ -");
  return endpoint;
}

}  // namespace

core::Status check_live_target(const LivePublishOptions& options) {
  if (auto endpoint = checked_target(options); !endpoint) return std::move(endpoint).error();
  return core::Ok{};
}

core::Result<LivePublishStats> publish_live(std::string_view keypoints, double fps,
                                            const LivePublishOptions& options) {
  auto endpoint = checked_target(options);
  if (!endpoint) return std::move(endpoint).error();
  auto source = ws::FrameSource::open(
      [keypoints](std::uint64_t at, std::span<std::uint8_t> out) -> core::Result<std::size_t> {
        if (at >= keypoints.size()) return std::size_t{0};
        const std::size_t n = std::min<std::size_t>(out.size(), keypoints.size() - at);
        std::copy_n(keypoints.data() + at, n, out.data());
        return n;
      },
      keypoints.size(), fps);
  if (!source) return std::move(source).error();
  if ((*source)->frames() == 0)
    return core::make_error(codes::KEYPOINTS_EMPTY, "the motion has no frames to publish");
  if (auto first = (*source)->read(0, 1); !first) return std::move(first).error();
  net::io_context ioc;
  auto found = resolve(ioc, *endpoint, options.server);
  if (!found) return std::move(found).error();
  Publisher publisher(ioc, **source, options);
  auto stats = publisher.run(*found, *endpoint);
  if (stats) {
    stats->frames = (*source)->frames();
    stats->fps = fps;
  }
  return stats;
}

core::Result<StoredMotion> fetch_stored_motion(const LivePublishOptions& server, std::int64_t id) {
  auto endpoint = parse_server(server.server);
  if (!endpoint) return std::move(endpoint).error();
  net::io_context ioc;
  auto found = resolve(ioc, *endpoint, server.server);
  if (!found) return std::move(found).error();
  beast::tcp_stream stream(ioc);
  stream.expires_after(std::chrono::seconds(60));
  beast::error_code ec;
  stream.connect(*found, ec);
  if (ec)
    return core::make_error(codes::LIVE_CONNECT,
                            "cannot connect to " + server.server + ": " + ec.message());
  auto get = [&](const std::string& target) -> core::Result<std::string> {
    http::request<http::empty_body> req{http::verb::get, target, 11};
    req.set(http::field::host, endpoint->host + ":" + endpoint->port);
    req.set(http::field::user_agent, "charkit live publish");
    if (!server.token.empty()) req.set(http::field::authorization, "Bearer " + server.token);
    req.keep_alive(true);
    http::write(stream, req, ec);
    beast::flat_buffer buf;
    http::response_parser<http::string_body> parser;
    parser.body_limit(std::uint64_t{1} << 31);
    if (!ec) http::read(stream, buf, parser, ec);
    if (ec)
      return core::make_error(codes::LIVE_CONNECT,
                              "GET " + target + " from " + server.server + ": " + ec.message());
    const auto& res = parser.get();
    if (res.result() != http::status::ok)
      return core::make_error(codes::LIVE_REFUSED,
                              "GET " + target + ": " + answer_text(res.result_int(), res.body()));
    return res.body();
  };
  const std::string base = "/api/motions/" + std::to_string(id);
  auto record = get(base);
  if (!record) return std::move(record).error();
  auto j = core::parse_json_strict(*record);
  if (!j || !j->is_object())
    return core::make_error(codes::LIVE_REFUSED, "GET " + base + ": the answer is not a record");
  const std::string state =
      (*j)["preprocessState"].is_string() ? (*j)["preprocessState"].get<std::string>() : "";
  if (state != "done")
    return core::make_error(codes::LIVE_REFUSED, "motion " + std::to_string(id) + " is " +
                                                     (state.empty() ? "not a motion" : state) +
                                                     ", not preprocessed: nothing to publish yet");
  StoredMotion out;
  out.fps = (*j)["fps"].is_number() ? (*j)["fps"].get<double>() : 0.0;
  out.name = (*j)["originalName"].is_string() ? (*j)["originalName"].get<std::string>() : "";
  auto keypoints = get(base + "/keypoints.ndjson");
  if (!keypoints) return std::move(keypoints).error();
  out.keypoints = std::move(*keypoints);
  return out;
}

}  // namespace charkit::server
