// The keypoint NDJSON line (seed contracts/model-formats.md §2.1,
// docs/contracts/keypoints.md): one frame per line,
// {"frame":0,"timeMs":0.0,"points":[[x,y,z,c],…33],"angles":[…9]}\n
#pragma once

#include <cstdint>
#include <span>
#include <string>

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

}  // namespace charkit::motion
