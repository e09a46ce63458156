// WebSocket keypoint streaming (docs/contracts/websocket-keypoints.md):
// GET /api/motions/{id}/stream plays a preprocessed motion's frames at its
// fps, /api/live/{channel} relays a publisher's frames to viewers.
// Internal to the server module: only server.cpp and ws.cpp include this
// (it pulls in Beast); WebSocket headers stay inside ws.cpp.
#pragma once

#include <array>
#include <boost/asio/any_io_executor.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "charkit/core/result.h"
#include "charkit/server/detail/any_stream.h"
#include "charkit/server/detail/frame_source.h"
#include "charkit/server/detail/metrics.h"

namespace charkit::server {
class DriverPlayground;  // detail/drivers_playground.h
}  // namespace charkit::server

namespace charkit::server::ws {

inline constexpr std::string_view kFormat = "mediapipe33@0.1.0";
inline constexpr std::string_view kEncoding = "f32le-frame-v1";
inline constexpr std::size_t kPoints = 33;
inline constexpr std::size_t kAngles = 9;
/// u32 frame + f32 timeMs + 33×4 f32 + 9 f32.
inline constexpr std::size_t kFrameBytes = 4 + 4 + kPoints * 4 * 4 + kAngles * 4;
static_assert(kFrameBytes == 572);
/// Largest client message read (control commands; a live frame is 572 bytes).
inline constexpr std::size_t kMaxClientMessage = 4096;
/// Live channels with a publisher, at most; one owner (an API token, or a
/// client address on a server without tokens) publishes at most
/// kMaxChannelsPerOwner of them.
inline constexpr std::size_t kMaxChannels = 64;
inline constexpr std::size_t kMaxChannelsPerOwner = 8;
/// Channels that viewers wait on before any publisher came, at most, and per
/// owner: they never count against the publishers' kMaxChannels, so viewers
/// cannot squat the channels publishers need.
inline constexpr std::size_t kMaxWaitingChannels = 256;
inline constexpr std::size_t kMaxWaitingChannelsPerOwner = 8;
inline constexpr std::size_t kMaxViewersPerChannel = 256;
inline constexpr std::size_t kMaxChannelName = 64;
/// Longest motion streamed (its line index costs 8 bytes a frame).
inline constexpr std::size_t kMaxStreamFrames = 400000;
inline constexpr std::uint64_t kMaxNdjsonBytes = 512ull << 20;
/// Frames a motion stream reads ahead at a time (two windows at most are held).
inline constexpr std::size_t kStreamWindow = 128;

/// One frame's values, as on the wire.
struct FrameValues {
  std::uint32_t frame = 0;
  float time_ms = 0;
  std::array<float, kPoints * 4> points{};  ///< x, y, z, confidence per point
  std::array<float, kAngles> angles{};
};

/// The 572-byte little-endian encoding.
std::string encode_frame(const FrameValues& v);
/// Decodes and validates (exact size, every float finite).
core::Result<FrameValues> decode_frame(std::string_view bytes);
/// One keypoints NDJSON line; numbers are read straight to float32 (from their text).
core::Result<FrameValues> parse_ndjson_line(std::string_view line);

/// [A-Za-z0-9_-], 1..kMaxChannelName characters.
bool valid_channel_name(std::string_view name);

/// Follows the frame headers of a client's byte stream as it arrives, before
/// the WebSocket library parses it. RFC 6455 §5.2: a 64-bit payload length
/// must have its most significant bit clear. The library (Beast 1.74) takes
/// such a length for a merely large message and closes with 1009 (too big);
/// the scan sets that length's eight bytes to zero, which the library
/// refuses as a non-minimal length: close 1002 (protocol error), as the RFC
/// wants. Bytes are scanned once each, in order, in any split.
class FrameLengthGuard {
 public:
  /// Scans (and where needed rewrites) the next `n` bytes of the stream.
  void feed(unsigned char* bytes, std::size_t n);
  /// An impossible length was seen (and its bytes zeroed as they came);
  /// bytes after that length are not scanned.
  bool tripped() const { return tripped_; }

 private:
  unsigned char header_[14] = {};
  std::size_t have_ = 0;    ///< header bytes seen of the current frame
  std::size_t need_ = 2;    ///< header bytes the current frame has (known after 2)
  std::uint64_t skip_ = 0;  ///< payload bytes left of the current frame
  bool tripped_ = false;
  bool done_ = false;
};

/// One WebSocket connection (plain or TLS), as the hub sees it.
class WsSession {
 public:
  virtual ~WsSession() = default;
  /// On the session's strand: server shutdown (close frame 1001, then drop).
  virtual void shutdown() = 0;
  /// On the session's strand: a frame for the latest-wins queue.
  virtual void offer_frame(std::shared_ptr<const std::string> frame) = 0;
  /// On the session's strand: a text message (a status), queued in order.
  virtual void notify_text(std::string text) = 0;
  virtual boost::asio::any_io_executor executor() = 0;
};

struct Channel {
  std::weak_ptr<WsSession> publisher;
  bool has_publisher = false;
  std::string publisher_owner;  ///< who publishes (per-owner limit)
  std::string opened_by;        ///< the owner of the viewer that opened it waiting
  std::vector<std::weak_ptr<WsSession>> viewers;
  bool published() const { return has_publisher && !publisher.expired(); }
};

/// The server's WebSocket state: live channels, open sessions, frame cache.
struct Hub {
  explicit Hub(Metrics& m) : metrics(m) {}
  Metrics& metrics;
  /// Where a motion stream reads its frames (file or object-storage reads
  /// never run on the I/O threads): the server's blocking-work pool.
  boost::asio::any_io_executor blocking;
  std::mutex mutex;
  bool stopping = false;  ///< under mutex: no new sessions once shutdown_all ran
  std::map<WsSession*, std::weak_ptr<WsSession>> sessions;
  std::map<std::string, Channel> channels;
  /// Opened keypoint files by sha256, while some client streams them.
  std::map<std::string, std::weak_ptr<const FrameSource>> cache;
};

enum class LiveRole { publish, view };

/// A live channel as GET /api/live lists it.
struct LiveChannelInfo {
  std::string name;
  bool publishing = false;  ///< a publisher is connected
  std::size_t viewers = 0;  ///< viewers connected
};
/// The channels open now (with a publisher or a waiting viewer), by name.
std::vector<LiveChannelInfo> live_channels(Hub& hub);

namespace beast = boost::beast;
namespace http = beast::http;

/// Upgrades and plays `source` (the route already checked the motion is
/// done). `slot` is held for the connection's life (the server's connection count).
void start_motion_stream(Hub& hub, AnyStream&& stream, http::request<http::string_body>&& req,
                         std::shared_ptr<const FrameSource> source, std::int64_t motion_id,
                         std::shared_ptr<void> slot = {});
/// Joins a live channel: answers the upgrade, or an HTTP error (409 a second
/// publisher, 503 too many channels or viewers). `owner` names who asks
/// ("token:ID", or "client:ADDRESS" without a token) for the per-owner limits.
void start_live(Hub& hub, AnyStream&& stream, http::request<http::string_body>&& req,
                std::string channel, LiveRole role, std::string owner,
                std::shared_ptr<void> slot = {});
/// Runs a package's drivers playground (the route already opened it): a
/// {"type": "drivers"} header, then a {"type": "frame"} text message per
/// frame period while anything changes; the page's control messages apply
/// at once (docs/api.md §Drivers playground).
void start_drivers(Hub& hub, AnyStream&& stream, http::request<http::string_body>&& req,
                   std::shared_ptr<DriverPlayground> playground, std::shared_ptr<void> slot = {});
/// Server::stop: closes every WebSocket connection (posted to their strands).
void shutdown_all(Hub& hub);

}  // namespace charkit::server::ws
