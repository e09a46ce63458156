// Publishing a motion to a live channel of a running `charkit serve`: its
// keypoint frames sent over `GET /api/live/{channel}?role=publish` at the
// motion's rate (contracts/websocket-keypoints.md §6). `charkit live
// publish` is the command; this is the client it runs.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "charkit/core/result.h"

namespace charkit::server {

struct LivePublishOptions {
  /// The server: `http://HOST[:PORT]` (port 80 when left out). https:// is
  /// refused (LIVE_URL): the client speaks plain WebSocket only.
  std::string server = "http://127.0.0.1:8080";
  /// The channel, [A-Za-z0-9_-]{1,64}.
  std::string channel;
  /// An API token with the `write` scope, sent as `Authorization: Bearer`;
  /// empty: none (a server without tokens).
  std::string token;
  /// Start again from the first frame after the last, until stopped.
  bool loop = false;
  /// Turned true by the caller (a signal): the channel is closed normally
  /// (1000) after the frame being sent.
  const std::atomic<bool>* stop = nullptr;
  /// After each frame sent: (frames sent so far, frames in the motion).
  std::function<void(std::uint64_t sent, std::size_t frames)> progress;
};

struct LivePublishStats {
  std::uint64_t frames_sent = 0;
  std::size_t frames = 0;  ///< frames in the motion
  double fps = 0;          ///< the rate they were sent at
  double seconds = 0;      ///< from the first frame sent to the close
  bool stopped = false;    ///< ended by `stop`, not by the motion's end
};

/// The server URL and channel of `options` checked, as publish_live checks
/// them first: LIVE_URL, BAD_CHANNEL.
core::Status check_live_target(const LivePublishOptions& options);

/// Streams `keypoints` (keypoint NDJSON, one line a frame, as `charkit
/// motion convert` writes it) to the channel, one frame every 1/fps s on a
/// steady clock, and closes the connection normally at the end (or when
/// `stop` turns true). Errors: LIVE_URL (the server URL), BAD_CHANNEL,
/// KEYPOINTS_* (the NDJSON, fps outside (0, 1000]), LIVE_CONNECT (the
/// server cannot be reached), LIVE_REFUSED (the server answered the upgrade
/// with an error: its HTTP status, code and message, e.g. 401, 403 without
/// the `write` scope, 409 CHANNEL_BUSY), LIVE_CLOSED (the server closed the
/// channel: its close code and reason).
core::Result<LivePublishStats> publish_live(std::string_view keypoints, double fps,
                                            const LivePublishOptions& options);

/// A stored motion of the server: its keypoint NDJSON and rate
/// (`GET /api/motions/{id}` and `…/keypoints.ndjson`, with the token).
struct StoredMotion {
  std::string keypoints;
  double fps = 0;
  std::string name;  ///< the uploaded file's name
};
/// Errors: LIVE_URL, LIVE_CONNECT, LIVE_REFUSED (404 for an unknown id,
/// 409 while it is not preprocessed…).
core::Result<StoredMotion> fetch_stored_motion(const LivePublishOptions& server, std::int64_t id);

}  // namespace charkit::server
