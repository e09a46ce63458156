// WebSocket keypoint streaming (ws.h, docs/contracts/websocket-keypoints.md).
// One WsSession per connection, on its own strand. Outgoing binary frames
// follow a "latest wins" policy: one write in flight, at most one frame
// queued behind it; a newer frame replaces the queued one and the old one
// is counted as skipped, so a slow client costs a bounded amount of memory.
#include "charkit/server/detail/ws.h"

#include <boost/asio.hpp>
#include <boost/beast/websocket.hpp>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstring>
#include <deque>
#include <optional>

#include <nlohmann/json.hpp>

#include "charkit/core/json.h"
#include "charkit/core/json_text.h"
#include "charkit/server/detail/drivers_playground.h"
#include "charkit/server/error_codes.h"

namespace charkit::server::ws {
namespace {

namespace net = boost::asio;
namespace websocket = beast::websocket;
using Clock = std::chrono::steady_clock;
using Msg = std::shared_ptr<const std::string>;
using core::Json;

Json error_body(std::string_view code, std::string_view message) {
  return Json{{"error", code}, {"message", message}, {"detail", nullptr}};
}

/// The connection as the WebSocket stream reads it: every byte the client
/// sends passes a FrameLengthGuard first (a 64-bit length with its top bit
/// set closes with 1002, not 1009); everything else is the next layer's.
template <class Next>
class GuardedStream {
 public:
  using executor_type = typename Next::executor_type;
  using next_layer_type = Next;

  explicit GuardedStream(Next&& next) : next_(std::move(next)) {}
  executor_type get_executor() noexcept { return next_.get_executor(); }
  Next& next_layer() noexcept { return next_; }
  const Next& next_layer() const noexcept { return next_; }

  template <class MutableBuffers, class Handler>
  auto async_read_some(const MutableBuffers& buffers, Handler&& handler) {
    auto ex = net::get_associated_executor(handler, next_.get_executor());
    return next_.async_read_some(
        buffers, net::bind_executor(ex, [this, buffers, h = std::forward<Handler>(handler)](
                                            beast::error_code ec, std::size_t n) mutable {
          std::size_t left = n;
          for (auto it = net::buffer_sequence_begin(buffers);
               left > 0 && it != net::buffer_sequence_end(buffers); ++it) {
            net::mutable_buffer b = *it;
            const std::size_t k = std::min(left, b.size());
            guard_.feed(static_cast<unsigned char*>(b.data()), k);
            left -= k;
          }
          std::move(h)(ec, n);
        }));
  }
  template <class ConstBuffers, class Handler>
  auto async_write_some(const ConstBuffers& buffers, Handler&& handler) {
    return next_.async_write_some(buffers, std::forward<Handler>(handler));
  }

 private:
  Next next_;
  FrameLengthGuard guard_;
};

template <class Next>
void teardown(beast::role_type role, GuardedStream<Next>& s, beast::error_code& ec) {
  using beast::websocket::teardown;
  teardown(role, s.next_layer(), ec);
}

template <class Next, class Handler>
void async_teardown(beast::role_type role, GuardedStream<Next>& s, Handler&& handler) {
  using beast::websocket::async_teardown;
  async_teardown(role, s.next_layer(), std::forward<Handler>(handler));
}

}  // namespace

// ---- one WebSocket connection ---------------------------------------------------------

namespace {

enum class Mode { motion, publish, view, drivers };

template <class Stream>
class WsSessionImpl final : public WsSession,
                            public std::enable_shared_from_this<WsSessionImpl<Stream>> {
 public:
  WsSessionImpl(Hub& hub, Stream&& stream, http::request<http::string_body>&& req, Mode mode,
                std::shared_ptr<void> slot)
      : hub_(hub),
        ws_(std::move(stream)),
        timer_(ws_.get_executor()),
        stop_timer_(ws_.get_executor()),
        req_(std::move(req)),
        mode_(mode),
        slot_(std::move(slot)) {}

  ~WsSessionImpl() override {
    std::lock_guard lock(hub_.mutex);
    hub_.sessions.erase(this);
    if (channel_.empty()) return;
    auto it = hub_.channels.find(channel_);
    if (it == hub_.channels.end()) return;
    Channel& c = it->second;
    if (mode_ == Mode::publish && c.has_publisher && c.publisher.expired()) {
      c.has_publisher = false;  // a publisher whose connection never opened
      tell_viewers(c, channel_, "publisher-left");
    }
    std::erase_if(c.viewers, [](const std::weak_ptr<WsSession>& w) { return w.expired(); });
    if (!c.has_publisher && c.viewers.empty()) hub_.channels.erase(it);
  }

  void set_motion(std::shared_ptr<const FrameSource> source, std::int64_t id) {
    source_ = std::move(source);
    frame_count_ = static_cast<std::int64_t>(source_->frames());
    fps_ = source_->fps();
    motion_id_ = id;
  }
  void set_channel(std::string name, std::string owner) {
    channel_ = std::move(name);
    owner_ = std::move(owner);
  }
  void set_playground(std::shared_ptr<DriverPlayground> p) {
    playground_ = std::move(p);
    text_frames_ = true;
  }

  void start() {
    net::dispatch(ws_.get_executor(), [self = this->shared_from_this()] { self->begin(); });
  }

  /// On the strand, server shutdown: an open connection gets a close frame
  /// 1001 "going away" and 2 s for the close handshake; anything else (a
  /// handshake in progress, a close already under way that stalls) is dropped.
  void shutdown() override {
    if (open_ && !closing_) close_with(websocket::close_code::going_away, "server shutting down");
    if (!open_) return drop();
    stop_timer_.expires_after(std::chrono::seconds(2));
    // A weak reference: a session that finishes its close in time is destroyed
    // at once, and its timer with it (so stop() does not wait the 2 s).
    stop_timer_.async_wait([weak = this->weak_from_this()](beast::error_code ec) {
      if (ec) return;
      if (auto self = weak.lock()) self->drop();
    });
  }

  /// On the strand: close the socket now.
  void drop() {
    closing_ = true;
    ++gen_;
    timer_.cancel();
    beast::error_code ec;
    beast::get_lowest_layer(ws_).socket().shutdown(net::ip::tcp::socket::shutdown_both, ec);
    beast::get_lowest_layer(ws_).close();
  }

  /// On the strand: the latest-wins frame queue.
  void offer_frame(Msg frame) override {
    if (!open_ || closing_) return;
    if (!writing_) {
      ++offer_seq_;
      return write(std::move(frame), true);
    }
    if (pending_) {
      ++skipped_;
      hub_.metrics.frames_skipped.fetch_add(1);
    }
    pending_ = std::move(frame);
    pending_seq_ = ++offer_seq_;
    hub_.metrics.note_queue_depth(pending_ ? 1 : 0);
  }

  void notify_text(std::string text) override {
    if (!open_ || closing_) return;
    send_text(std::move(text));
  }

  net::any_io_executor executor() override { return ws_.get_executor(); }

 private:
  void begin() {
    std::optional<std::pair<http::status, Json>> refusal;
    {
      std::lock_guard lock(hub_.mutex);
      if (hub_.stopping)
        refusal.emplace(http::status::service_unavailable,
                        error_body(codes::SHUTTING_DOWN, "the server is stopping"));
      else
        hub_.sessions[this] = this->weak_from_this();
      if (!refusal && (mode_ == Mode::publish || mode_ == Mode::view)) refusal = claim_channel();
    }
    if (refusal) return refuse(refusal->first, refusal->second);
    beast::error_code ec;
    // A small kernel send buffer: a stalled client makes writes wait soon, so
    // frames are skipped instead of piling up seconds of latency in the kernel.
    beast::get_lowest_layer(ws_).socket().set_option(net::socket_base::send_buffer_size(16384), ec);
    beast::get_lowest_layer(ws_).expires_never();
    ws_.set_option(websocket::stream_base::timeout::suggested(beast::role_type::server));
    ws_.set_option(websocket::stream_base::decorator(
        [](websocket::response_type& res) { res.set(http::field::server, "charkit"); }));
    ws_.read_message_max(kMaxClientMessage);
    ws_.async_accept(
        req_, [self = this->shared_from_this()](beast::error_code e) { self->on_accept(e); });
  }

  /// Under hub_.mutex: takes the publisher slot or a viewer slot. Channels
  /// with a publisher and channels viewers wait on are counted apart, each
  /// in all and per owner, so that viewers never use up what publishers need.
  std::optional<std::pair<http::status, Json>> claim_channel() {
    auto too_many = [](const std::string& message) {
      return std::pair{http::status::service_unavailable,
                       error_body(codes::TOO_MANY_CHANNELS, message)};
    };
    std::size_t published = 0, published_by_owner = 0, waiting = 0, waiting_by_owner = 0;
    for (const auto& [name, c] : hub_.channels) {
      if (c.published()) {
        ++published;
        if (c.publisher_owner == owner_) ++published_by_owner;
      } else {
        ++waiting;
        if (c.opened_by == owner_) ++waiting_by_owner;
      }
    }
    auto it = hub_.channels.find(channel_);
    const bool exists = it != hub_.channels.end();
    if (mode_ == Mode::publish) {
      if (exists && it->second.published())
        return std::pair{
            http::status::conflict,
            error_body(codes::CHANNEL_BUSY, "channel '" + channel_ + "' already has a publisher")};
      if (published >= kMaxChannels)
        return too_many("at most " + std::to_string(kMaxChannels) +
                        " live channels have a publisher at once");
      if (published_by_owner >= kMaxChannelsPerOwner)
        return too_many("one token (or client, without tokens) publishes at most " +
                        std::to_string(kMaxChannelsPerOwner) + " channels at once");
      Channel& c = hub_.channels[channel_];
      c.publisher = this->weak_from_this();
      c.has_publisher = true;
      c.publisher_owner = owner_;
      // Told under the same lock that admits viewers: those here now hear
      // `live`, those that come later read `publishing: true` in their header.
      tell_viewers(c, channel_, "live");
      return std::nullopt;
    }
    if (!exists) {
      if (waiting >= kMaxWaitingChannels)
        return too_many("at most " + std::to_string(kMaxWaitingChannels) +
                        " channels wait for a publisher at once");
      if (waiting_by_owner >= kMaxWaitingChannelsPerOwner)
        return too_many("one token (or client, without tokens) waits on at most " +
                        std::to_string(kMaxWaitingChannelsPerOwner) +
                        " channels without a publisher at once");
    }
    Channel& c = hub_.channels[channel_];
    if (!exists) c.opened_by = owner_;
    std::erase_if(c.viewers, [](const std::weak_ptr<WsSession>& w) { return w.expired(); });
    if (c.viewers.size() >= kMaxViewersPerChannel)
      return std::pair{
          http::status::service_unavailable,
          error_body(codes::TOO_MANY_VIEWERS,
                     "at most " + std::to_string(kMaxViewersPerChannel) + " viewers per channel")};
    c.viewers.push_back(this->weak_from_this());
    return std::nullopt;
  }

  void refuse(http::status status, const Json& body) {
    channel_.clear();  // nothing claimed (or the claim is released by the destructor's cleanup)
    auto res = std::make_shared<http::response<http::string_body>>(status, 11);
    res->set(http::field::server, "charkit");
    res->set(http::field::content_type, "application/json");
    res->body() = core::dump_json(body) + "\n";
    res->keep_alive(false);
    res->prepare_payload();
    hub_.metrics.count_request("GET", res->result_int());
    hub_.metrics.response_bytes.fetch_add(res->body().size());
    http::async_write(ws_.next_layer(), *res,
                      [self = this->shared_from_this(), res](beast::error_code, std::size_t) {
                        beast::error_code ec;
                        beast::get_lowest_layer(self->ws_).socket().shutdown(
                            net::ip::tcp::socket::shutdown_send, ec);
                        beast::get_lowest_layer(self->ws_).close();
                      });
  }

  void on_accept(beast::error_code ec) {
    // A failed handshake was answered by Beast (400 and the like).
    hub_.metrics.count_request("GET", ec ? 400u : 101u);
    if (ec || closing_) return;
    open_ = true;
    client_.emplace(hub_.metrics.stream_clients);
    if (mode_ == Mode::drivers) {
      send_text(playground_->header());
      anchor_time_ = Clock::now();
      offer_frame(std::make_shared<const std::string>(playground_->advance(0)));
      schedule_drivers();
      return do_read();
    }
    Json header{{"type", "header"},
                {"format", kFormat},
                {"encoding", kEncoding},
                {"frameBytes", kFrameBytes}};
    if (mode_ == Mode::motion) {
      header["mode"] = "motion";
      header["motionId"] = motion_id_;
      header["fps"] = fps_;
      header["frames"] = frame_count_;
      header["durationMs"] = static_cast<double>(frame_count_) * 1000.0 / fps_;
    } else {
      header["mode"] = "live";
      header["role"] = mode_ == Mode::publish ? "publish" : "view";
      header["channel"] = channel_;
      header["fps"] = nullptr;
      header["frames"] = nullptr;
      if (mode_ == Mode::view) {
        std::lock_guard lock(hub_.mutex);
        auto it = hub_.channels.find(channel_);
        header["publishing"] = it != hub_.channels.end() && it->second.published();
      }
    }
    send_text(core::dump_json(header));
    if (mode_ == Mode::motion) {
      anchor_time_ = Clock::now();
      anchor_pos_ = 0;
      playing_ = true;
      schedule();
    }
    do_read();
  }

  // ---- reading client messages ----
  void do_read() {
    ws_.async_read(rbuf_, [self = this->shared_from_this()](beast::error_code ec, std::size_t) {
      self->on_read(ec);
    });
  }

  void on_read(beast::error_code ec) {
    if (ec) {  // closed by the peer, or a protocol error Beast already answered (1007, 1009…)
      release_publisher();
      closing_ = true;
      ++gen_;
      timer_.cancel();
      return;
    }
    const bool binary = ws_.got_binary();
    std::string msg = beast::buffers_to_string(rbuf_.data());
    rbuf_.consume(rbuf_.size());
    if (closing_) return;
    switch (mode_) {
      case Mode::motion: {
        if (binary)
          return close_with(websocket::close_code::unknown_data,
                            "binary messages are not accepted on a motion stream");
        std::string err = command(msg);
        if (!err.empty()) return close_with(websocket::close_code::policy_error, err);
        break;
      }
      case Mode::publish: {
        if (!binary)
          return close_with(websocket::close_code::unknown_data,
                            "a publisher sends binary frames only");
        auto v = decode_frame(msg);
        if (!v) return close_with(websocket::close_code::bad_payload, v.error().message);
        broadcast(std::make_shared<const std::string>(std::move(msg)));
        ++received_;
        break;
      }
      case Mode::view:
        return close_with(websocket::close_code::policy_error, "viewers send no messages");
      case Mode::drivers: {
        if (binary)
          return close_with(websocket::close_code::unknown_data,
                            "the drivers playground takes JSON text control messages");
        std::string err = playground_->control(msg);
        if (!err.empty()) send_text(std::move(err));  // answered; the connection stays open
        break;
      }
    }
    do_read();
  }

  /// The channel's viewers connected now (taken under the hub's lock).
  std::vector<std::shared_ptr<WsSession>> channel_viewers() {
    std::vector<std::shared_ptr<WsSession>> out;
    std::lock_guard lock(hub_.mutex);
    auto it = hub_.channels.find(channel_);
    if (it == hub_.channels.end()) return out;
    for (auto& w : it->second.viewers)
      if (auto v = w.lock()) out.push_back(std::move(v));
    return out;
  }

  /// A status to every viewer of channel `c` (the publisher came or left).
  /// The caller holds hub_.mutex; each viewer gets it on its own strand.
  static void tell_viewers(const Channel& c, const std::string& channel, const char* state) {
    const std::string text =
        core::dump_json(Json{{"type", "status"}, {"state", state}, {"channel", channel}});
    for (const auto& w : c.viewers)
      if (auto v = w.lock()) net::post(v->executor(), [v, text] { v->notify_text(text); });
  }

  void broadcast(Msg frame) {
    for (auto& v : channel_viewers())
      net::post(v->executor(), [v, frame] { v->offer_frame(frame); });
  }

  // ---- motion playback ----
  /// "" when done, else the reason to close with 1008.
  std::string command(const std::string& text) {
    std::string cmd;
    std::optional<double> arg;
    std::optional<bool> flag;
    auto trimmed = std::string_view(text);
    while (!trimmed.empty() && (trimmed.front() == ' ' || trimmed.front() == '\t'))
      trimmed.remove_prefix(1);
    if (!trimmed.empty() && trimmed.front() == '{') {
      auto j = core::parse_json_strict(trimmed);
      if (!j || !j->is_object() || !(*j)["cmd"].is_string())
        return "a JSON command is an object with a string \"cmd\"";
      cmd = (*j)["cmd"].get<std::string>();
      for (const char* k : {"frame", "factor"})
        if (j->contains(k)) {
          if (!(*j)[k].is_number()) return std::string("\"") + k + "\" must be a number";
          arg = (*j)[k].get<double>();
        }
      if (j->contains("on")) {
        if (!(*j)["on"].is_boolean()) return "\"on\" must be true or false";
        flag = (*j)["on"].get<bool>();
      }
    } else {
      auto sp = trimmed.find(' ');
      cmd = std::string(trimmed.substr(0, sp));
      std::string rest;
      if (sp != std::string_view::npos) rest = std::string(trimmed.substr(sp + 1));
      while (!rest.empty() && (rest.back() == ' ' || rest.back() == '\n' || rest.back() == '\r'))
        rest.pop_back();
      while (!cmd.empty() && (cmd.back() == '\n' || cmd.back() == '\r')) cmd.pop_back();
      if (cmd == "loop") {
        if (rest == "on")
          flag = true;
        else if (rest == "off")
          flag = false;
        else
          return "loop takes on or off";
      } else if (!rest.empty()) {
        double d = 0;
        auto [p, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), d);
        if (ec != std::errc() || p != rest.data() + rest.size())
          return "'" + rest.substr(0, 32) + "' is not a number";
        arg = d;
      }
    }
    const auto n = static_cast<double>(frame_count_);
    if (show_when_read_ >= 0) {  // a paused seek still waiting for its frame: answer it now
      show_when_read_ = -1;
      send_status();
    }
    if (cmd == "play") {
      if (!playing_) {
        if (last_ + 1 >= static_cast<std::int64_t>(n)) last_ = -1;  // replay from the start
        anchor_pos_ = static_cast<double>(last_ + 1);
        anchor_time_ = Clock::now();
        playing_ = true;
        ended_ = false;
        schedule();
      }
    } else if (cmd == "pause") {
      if (playing_) {
        anchor_pos_ = position();
        playing_ = false;
        ++gen_;
        timer_.cancel();
      }
    } else if (cmd == "seek") {
      if (!arg || *arg != std::floor(*arg) || *arg < 0 || *arg >= n)
        return "seek takes a frame number in 0.." + std::to_string(frame_count_ - 1);
      ended_ = false;
      last_ = static_cast<std::int64_t>(*arg) - 1;
      anchor_pos_ = *arg;
      anchor_time_ = Clock::now();
      if (playing_) {
        schedule();
      } else {  // paused: show the frame once, then the status
        last_ = static_cast<std::int64_t>(*arg);
        if (Msg f = frame_at(last_)) {
          offer_frame(std::move(f));
        } else {  // its window is being read: frame and status follow it (on_window)
          show_when_read_ = last_;
          return {};
        }
      }
    } else if (cmd == "speed") {
      if (!arg || !(*arg >= 0.0625 && *arg <= 16)) return "speed takes a factor in 0.0625..16";
      if (playing_) {
        anchor_pos_ = position();
        anchor_time_ = Clock::now();
      }
      speed_ = *arg;
      if (playing_) schedule();
    } else if (cmd == "loop") {
      if (!flag) return "loop takes on or off";
      loop_ = *flag;
    } else if (cmd != "status") {
      return "unknown command '" + cmd.substr(0, 32) + "'";
    }
    send_status();
    return {};
  }

  /// Fractional frame position now (playing) from the anchor: no accumulated drift.
  double position() const {
    if (!playing_) return anchor_pos_;
    std::chrono::duration<double> dt = Clock::now() - anchor_time_;
    return anchor_pos_ + dt.count() * fps_ * speed_;
  }

  void schedule() {
    const std::uint64_t my = ++gen_;
    // The next whole frame after the last one offered, due at a time derived
    // from the anchor (not from the previous tick).
    const double next = std::max(static_cast<double>(last_ + 1), anchor_pos_);
    const double wait_s = (next - anchor_pos_) / (fps_ * speed_);
    timer_.expires_at(anchor_time_ + std::chrono::duration_cast<Clock::duration>(
                                         std::chrono::duration<double>(wait_s)));
    timer_.async_wait([self = this->shared_from_this(), my](beast::error_code ec) {
      if (ec || my != self->gen_) return;
      self->tick();
    });
  }

  void tick() {
    if (!playing_ || closing_ || !open_) return;
    const auto n = frame_count_;
    double pos = position();
    if (pos >= static_cast<double>(n) && loop_) {
      // Move the anchor by whole passes: the schedule stays exact across loops.
      while (pos >= static_cast<double>(n)) {
        anchor_time_ += std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(
            (static_cast<double>(n) - anchor_pos_) / (fps_ * speed_)));
        anchor_pos_ = 0;
        if (last_ < n - 1) count_skips(n - 1 - last_);
        last_ = -1;
        pos = position();
      }
    }
    auto idx = static_cast<std::int64_t>(std::floor(pos));
    if (idx >= n) {  // the end, not looping: the last frame, then stop
      if (last_ < n - 1) {
        Msg f = frame_at(n - 1);
        if (!f) return stall(n - 1);  // its window is being read: tick() again then
        count_skips(n - 2 - last_);
        last_ = n - 1;
        offer_frame(std::move(f));
      }
      playing_ = false;
      ended_ = true;
      anchor_pos_ = static_cast<double>(n);
      send_status();
      return;
    }
    if (idx > last_) {
      Msg f = frame_at(idx);
      if (!f) return stall(idx);     // its window is being read: tick() again then
      count_skips(idx - last_ - 1);  // a late tick: frames whose time passed unsent
      last_ = idx;
      offer_frame(std::move(f));
    }
    schedule();
  }

  // ---- the drivers playground: a frame period clock from the anchor ----
  void schedule_drivers() {
    const std::uint64_t my = ++gen_;
    const double next_s = static_cast<double>(ticks_ + 1) / DriverPlayground::kFps;
    timer_.expires_at(anchor_time_ + std::chrono::duration_cast<Clock::duration>(
                                         std::chrono::duration<double>(next_s)));
    timer_.async_wait([self = this->shared_from_this(), my](beast::error_code ec) {
      if (ec || my != self->gen_) return;
      self->drivers_tick();
    });
  }

  /// Every period: the runtime advances by the periods since the last tick
  /// (a late wake-up catches up in one step) and, when anything changes, the
  /// frame goes to the latest-wins queue.
  void drivers_tick() {
    if (closing_ || !open_) return;
    std::chrono::duration<double> since = Clock::now() - anchor_time_;
    const auto due =
        static_cast<std::uint64_t>(std::max(0.0, since.count()) * DriverPlayground::kFps);
    if (due > ticks_) {
      const std::uint64_t periods = due - ticks_;
      ticks_ = due;
      // Idle (nothing plays, no control since): nothing moves, nothing is sent.
      if (playground_->changing())
        offer_frame(std::make_shared<const std::string>(playground_->advance(periods)));
    }
    schedule_drivers();
  }

  // ---- frames, read a window at a time off the I/O threads ----
  /// The frame if its window is in memory; else nullptr, and the window is
  /// being read (tick() or the paused seek resumes when it arrives). Reads
  /// ahead: past the middle of a window the next one is requested.
  Msg frame_at(std::int64_t idx) {
    auto in = [&](const std::vector<Msg>& w, std::int64_t first) {
      return idx >= first && idx < first + static_cast<std::int64_t>(w.size());
    };
    if (!in(window_, window_first_) && in(ahead_, ahead_first_)) {
      window_ = std::move(ahead_);
      window_first_ = ahead_first_;
      ahead_.clear();
    }
    if (!in(window_, window_first_)) {
      request_window(idx);
      return nullptr;
    }
    const std::int64_t end = window_first_ + static_cast<std::int64_t>(window_.size());
    if (idx - window_first_ >= static_cast<std::int64_t>(window_.size() / 2) &&
        end < frame_count_ && !(ahead_first_ == end && !ahead_.empty()))
      request_window(end);
    return window_[static_cast<std::size_t>(idx - window_first_)];
  }

  /// Playback waits for frame `idx`, whose window is being read. The clock
  /// stops meanwhile, as a player's does while buffering: when the window
  /// arrives the stream goes on from `idx` (frame 0 first, on a slow open)
  /// instead of skipping the frames whose time passed during the read.
  void stall(std::int64_t idx) {
    stalled_at_ = idx;
    stalled_gen_ = gen_;  // a command (play, pause, seek, speed) moves gen_ and the anchor itself
  }

  void request_window(std::int64_t first) {
    if (reading_) {
      want_first_ = first;  // read after the one in flight
      return;
    }
    reading_ = true;
    want_first_ = -1;
    net::post(hub_.blocking, [self = this->shared_from_this(), first,
                              work = net::make_work_guard(ws_.get_executor())] {
      auto frames = self->source_->read(static_cast<std::size_t>(first), kStreamWindow);
      net::post(self->ws_.get_executor(), [self, first, frames = std::move(frames)]() mutable {
        self->on_window(first, std::move(frames));
      });
    });
  }

  void on_window(std::int64_t first, core::Result<std::vector<Msg>> frames) {
    reading_ = false;
    if (closing_ || !open_) return;
    if (!frames) return close_with(websocket::close_code::internal_error, frames.error().message);
    ahead_ = std::move(*frames);
    ahead_first_ = first;
    if (want_first_ >= 0) {
      const std::int64_t w = want_first_;
      if (!(w >= ahead_first_ && w < ahead_first_ + static_cast<std::int64_t>(ahead_.size())))
        request_window(w);
      want_first_ = -1;
    }
    if (show_when_read_ >= 0) {
      if (Msg f = frame_at(show_when_read_)) {
        show_when_read_ = -1;
        offer_frame(std::move(f));
        send_status();  // the paused seek's answer, after its frame
      }
    }
    if (playing_) {
      if (stalled_at_ >= 0 && stalled_gen_ == gen_ && frame_ready(stalled_at_)) {
        anchor_pos_ = static_cast<double>(stalled_at_);
        anchor_time_ = Clock::now();
      }
      stalled_at_ = -1;
      tick();
    }
  }

  bool frame_ready(std::int64_t idx) const {
    auto in = [&](const std::vector<Msg>& w, std::int64_t first) {
      return idx >= first && idx < first + static_cast<std::int64_t>(w.size());
    };
    return in(window_, window_first_) || in(ahead_, ahead_first_);
  }

  void count_skips(std::int64_t k) {
    if (k <= 0) return;
    skipped_ += static_cast<std::uint64_t>(k);
    hub_.metrics.frames_skipped.fetch_add(static_cast<std::uint64_t>(k));
  }

  void send_status() {
    Json j{{"type", "status"},
           {"state", playing_ ? "playing"
                     : ended_ ? "ended"
                              : "paused"},
           {"frame", last_ >= 0 ? Json(last_) : Json(nullptr)},
           {"frames", frame_count_},
           {"speed", speed_},
           {"loop", loop_},
           {"sent", sent_},
           {"skipped", skipped_}};
    send_text(core::dump_json(j));
  }

  // ---- writing ----
  void send_text(std::string text) {
    // Status messages answer commands (one each, commands are read one at a
    // time); the bound only guards against a client that never reads.
    if (texts_.size() >= 16) texts_.pop_front();
    texts_.push_back({std::make_shared<const std::string>(std::move(text)), offer_seq_});
    pump();
  }

  void pump() {
    if (writing_) return;
    if (closing_) {
      if (close_pending_) {
        close_pending_ = false;
        do_close();
      }
      return;
    }
    // In the order offered: a frame queued before a status message goes first.
    if (!texts_.empty() && !(pending_ && pending_seq_ <= texts_.front().second)) {
      Msg m = std::move(texts_.front().first);
      texts_.pop_front();
      return write(std::move(m), false);
    }
    if (pending_) {
      Msg m = std::move(pending_);
      pending_.reset();
      return write(std::move(m), true);
    }
  }

  /// `frame`: from the latest-wins queue (binary keypoint frames; the
  /// playground's text frames), else a text message.
  void write(Msg m, bool frame) {
    writing_ = true;
    ws_.binary(frame && !text_frames_);
    ws_.async_write(net::buffer(*m),
                    [self = this->shared_from_this(), m, frame](beast::error_code ec, std::size_t) {
                      self->writing_ = false;
                      if (ec) {
                        self->closing_ = true;
                        ++self->gen_;
                        self->timer_.cancel();
                        return;
                      }
                      if (frame) {
                        ++self->sent_;
                        self->hub_.metrics.frames_sent.fetch_add(1);
                      }
                      self->pump();
                    });
  }

  /// A closing publisher frees its channel at once, so a reconnect is not
  /// refused while the old connection finishes its close handshake.
  /// Its viewers are told (`publisher-left`).
  void release_publisher() {
    if (mode_ != Mode::publish || channel_.empty()) return;
    std::lock_guard lock(hub_.mutex);
    auto it = hub_.channels.find(channel_);
    if (it == hub_.channels.end()) return;
    if (it->second.publisher.lock().get() != this) return;
    it->second.publisher.reset();
    it->second.has_publisher = false;
    tell_viewers(it->second, channel_, "publisher-left");
  }

  void close_with(websocket::close_code code, std::string reason) {
    if (closing_) return;
    release_publisher();
    closing_ = true;
    ++gen_;
    timer_.cancel();
    std::string tail = "; sent " + std::to_string(sent_) + ", skipped " + std::to_string(skipped_);
    if (reason.size() + tail.size() <= 123) reason += tail;
    if (reason.size() > 123) reason.resize(123);  // a close frame's reason fits 123 bytes
    close_reason_ = websocket::close_reason(code, reason);
    if (writing_) {
      close_pending_ = true;
      return;
    }
    do_close();
  }

  void do_close() {
    writing_ = true;  // no more writes after the close frame
    ws_.async_close(close_reason_, [self = this->shared_from_this()](beast::error_code) {});
  }

  Hub& hub_;
  websocket::stream<GuardedStream<Stream>> ws_;
  net::steady_timer timer_;
  net::steady_timer stop_timer_;  ///< bounds the close handshake at shutdown
  http::request<http::string_body> req_;
  Mode mode_;
  std::string channel_;
  std::string owner_;           ///< who opened a live connection (per-owner channel limits)
  std::shared_ptr<void> slot_;  ///< the server's connection count, held while open
  std::shared_ptr<const FrameSource> source_;
  std::int64_t frame_count_ = 0;
  double fps_ = 30;
  // Two windows of encoded frames at most: the current one and the one read ahead.
  std::vector<Msg> window_, ahead_;
  std::int64_t window_first_ = 0, ahead_first_ = 0;
  bool reading_ = false;          ///< a window read is in flight
  std::int64_t want_first_ = -1;  ///< a window to read once the one in flight is done
  /// A paused seek's frame, shown (then the status sent) once its window is read.
  std::int64_t show_when_read_ = -1;
  /// The frame playback waits for (stall()), and gen_ then; -1: none.
  std::int64_t stalled_at_ = -1;
  std::uint64_t stalled_gen_ = 0;
  std::int64_t motion_id_ = 0;
  std::shared_ptr<DriverPlayground> playground_;
  bool text_frames_ = false;  ///< the queue's frames are text (the playground)
  std::uint64_t ticks_ = 0;   ///< playground: frame periods since the anchor
  beast::flat_buffer rbuf_;
  std::optional<GaugeToken> client_;
  bool open_ = false, closing_ = false, close_pending_ = false, writing_ = false;
  websocket::close_reason close_reason_;
  std::deque<std::pair<Msg, std::uint64_t>> texts_;  ///< (text, offer_seq_ when queued)
  Msg pending_;                                      ///< the one queued frame (latest wins)
  std::uint64_t offer_seq_ = 0, pending_seq_ = 0;
  std::uint64_t sent_ = 0, skipped_ = 0, received_ = 0;
  // Playback: position = anchor_pos_ + (now - anchor_time_) × fps × speed_.
  bool playing_ = false, ended_ = false, loop_ = false;
  double speed_ = 1;
  double anchor_pos_ = 0;
  Clock::time_point anchor_time_;
  std::int64_t last_ = -1;  ///< last frame offered
  std::uint64_t gen_ = 0;   ///< timer generation: a stale wake-up is ignored
};

template <class Stream>
void start_motion_stream_on(Hub& hub, Stream&& stream, http::request<http::string_body>&& req,
                            std::shared_ptr<const FrameSource> source, std::int64_t motion_id,
                            std::shared_ptr<void> slot) {
  auto s = std::make_shared<WsSessionImpl<Stream>>(hub, std::move(stream), std::move(req),
                                                   Mode::motion, std::move(slot));
  s->set_motion(std::move(source), motion_id);
  s->start();
}

template <class Stream>
void start_live_on(Hub& hub, Stream&& stream, http::request<http::string_body>&& req,
                   std::string channel, LiveRole role, std::string owner,
                   std::shared_ptr<void> slot) {
  auto s = std::make_shared<WsSessionImpl<Stream>>(
      hub, std::move(stream), std::move(req),
      role == LiveRole::publish ? Mode::publish : Mode::view, std::move(slot));
  s->set_channel(std::move(channel), std::move(owner));
  s->start();
}

template <class Stream>
void start_drivers_on(Hub& hub, Stream&& stream, http::request<http::string_body>&& req,
                      std::shared_ptr<DriverPlayground> playground, std::shared_ptr<void> slot) {
  auto s = std::make_shared<WsSessionImpl<Stream>>(hub, std::move(stream), std::move(req),
                                                   Mode::drivers, std::move(slot));
  s->set_playground(std::move(playground));
  s->start();
}

}  // namespace

void start_drivers(Hub& hub, AnyStream&& stream, http::request<http::string_body>&& req,
                   std::shared_ptr<DriverPlayground> playground, std::shared_ptr<void> slot) {
  start_drivers_on(hub, std::move(stream), std::move(req), std::move(playground), std::move(slot));
}
void start_motion_stream(Hub& hub, AnyStream&& stream, http::request<http::string_body>&& req,
                         std::shared_ptr<const FrameSource> source, std::int64_t motion_id,
                         std::shared_ptr<void> slot) {
  start_motion_stream_on(hub, std::move(stream), std::move(req), std::move(source), motion_id,
                         std::move(slot));
}
void start_live(Hub& hub, AnyStream&& stream, http::request<http::string_body>&& req,
                std::string channel, LiveRole role, std::string owner, std::shared_ptr<void> slot) {
  start_live_on(hub, std::move(stream), std::move(req), std::move(channel), role, std::move(owner),
                std::move(slot));
}

void shutdown_all(Hub& hub) {
  std::vector<std::shared_ptr<WsSession>> live;
  {
    std::lock_guard lock(hub.mutex);
    hub.stopping = true;
    for (auto& [p, w] : hub.sessions)
      if (auto s = w.lock()) live.push_back(std::move(s));
  }
  for (auto& s : live) net::post(s->executor(), [s] { s->shutdown(); });
}

std::vector<LiveChannelInfo> live_channels(Hub& hub) {
  std::vector<LiveChannelInfo> out;
  std::lock_guard lock(hub.mutex);
  for (const auto& [name, c] : hub.channels) {  // a std::map: by name
    LiveChannelInfo info;
    info.name = name;
    info.publishing = c.published();
    for (const auto& v : c.viewers) info.viewers += v.expired() ? 0 : 1;
    out.push_back(std::move(info));
  }
  return out;
}

}  // namespace charkit::server::ws
