// Random access to the frames of a stored keypoints NDJSON file for
// WebSocket streaming, without holding the file: one bounded-memory scan
// records where each line starts (8 bytes a frame), and frames are read and
// parsed on demand, a window at a time. Reads block (a file, or object
// storage): call open() and read() off the I/O threads. A FrameSource is
// immutable after open() and may be shared by every client streaming it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "charkit/core/result.h"

namespace charkit::server::ws {

/// Longest NDJSON line accepted (a MediaPipe-33 line is about 2 KB).
inline constexpr std::size_t kMaxNdjsonLine = 64 * 1024;
/// Most frames read by one FrameSource::read call.
inline constexpr std::size_t kMaxReadFrames = 4096;

class FrameSource {
 public:
  /// Reads up to out.size() bytes at an offset; the count (0 at the end).
  using ReadAt =
      std::function<core::Result<std::size_t>(std::uint64_t offset, std::span<std::uint8_t> out)>;

  /// Scans `size` bytes through `read_at` (1 MiB at a time) for line starts.
  /// Errors: KEYPOINTS_FPS (fps outside (0, 1000]), KEYPOINTS_TOO_LONG (more
  /// than kMaxStreamFrames frames), KEYPOINTS_LINE (a line over
  /// kMaxNdjsonLine bytes), KEYPOINTS_EMPTY, a read error, JOB_CANCELLED-like
  /// SERVER_STOPPING when `cancel` turns true.
  static core::Result<std::shared_ptr<const FrameSource>> open(
      ReadAt read_at, std::uint64_t size, double fps, const std::atomic<bool>* cancel = nullptr);

  std::size_t frames() const { return starts_.size(); }
  double fps() const { return fps_; }

  /// Frames [first, first + count) (count clamped to the end and to
  /// kMaxReadFrames), each encoded as a 572-byte wire frame. Errors: the
  /// read's, KEYPOINTS_LINE with the frame index when a line does not parse.
  core::Result<std::vector<std::shared_ptr<const std::string>>> read(std::size_t first,
                                                                     std::size_t count) const;

 private:
  FrameSource() = default;
  ReadAt read_at_;
  std::uint64_t size_ = 0;
  double fps_ = 30;
  std::vector<std::uint64_t> starts_;  ///< byte offset of each non-empty line
};

}  // namespace charkit::server::ws
