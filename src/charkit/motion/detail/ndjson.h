// The keypoint NDJSON line (the model and motion format contract §2.1,
// docs/contracts/keypoints.md): one frame per line,
// {"frame":0,"timeMs":0.0,"points":[[x,y,z,c],…33],"angles":[…9]}\n
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "charkit/core/result.h"
#include "charkit/motion/convert.h"
#include "charkit/motion/mediapipe33.h"

namespace charkit::motion {

/// Append a number: the shortest text that reads back as the same double
/// (std::to_chars), with ".0" added to integral values ("1.0", not "1") and
/// -0 written as "0.0". Non-finite values (never produced) are written as 0.0.
void append_number(std::string& out, double v);

/// Append one NDJSON line, '\n' included. points: 33 (projected), angles: 9.
void append_frame_line(std::string& out, std::uint64_t frame, double time_ms,
                       std::span<const Keypoint> points, std::span<const double> angles);

/// timeMs of a frame: frame × 1000 / fps.
inline double frame_time_ms(std::uint64_t frame, double fps) {
  return static_cast<double>(frame) * 1000.0 / fps;
}

/// The NDJSON output of a conversion, one for every motion format: frame
/// lines gathered into writes of about 64 KiB to the sink, each write
/// checked against budget.max_output_bytes before it is made
/// (MOTION_BUDGET_OUTPUT_BYTES), a refused write → IO_WRITE.
class FrameLineWriter {
 public:
  FrameLineWriter(const MotionBudget& budget, const OutputSink& sink);
  /// Appends one frame line; writes when the buffer is full.
  core::Status add(std::uint64_t frame, double time_ms, std::span<const Keypoint> points,
                   std::span<const double> angles);
  /// Writes what is left. Call once, after the last frame.
  core::Status finish();

 private:
  static constexpr std::size_t kFlushBytes = 64 * 1024;
  core::Status write();

  const MotionBudget& budget_;
  const OutputSink& sink_;
  std::string out_;
  std::uint64_t written_ = 0;
};

}  // namespace charkit::motion
