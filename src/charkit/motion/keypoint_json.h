// Keypoint JSON input (`mediapipe33@0.1.0`, the model and motion format
// contract §2 "关键点 JSON: 直通校验"): keypoints already estimated, e.g. from
// video.
// The reader validates the structure, normalises ranges, fills in missing
// timeMs and angles, and writes the same NDJSON as the BVH path.
// The format and its rules: docs/contracts/keypoints.md §6.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "charkit/core/progress.h"
#include "charkit/core/result.h"
#include "charkit/motion/bvh.h"
#include "charkit/motion/convert.h"
#include "charkit/motion/mediapipe33.h"

namespace charkit::motion {

inline constexpr std::string_view kKeypointFormatTag = "mediapipe33@0.1.0";

/// What a motion file holds, judged from its first bytes (not its name).
enum class MotionFormat : std::uint8_t { kBvh, kKeypointJson, kUnknown };

/// After an optional UTF-8 BOM and whitespace: `HIERARCHY` (any case) → BVH,
/// `{` → keypoint JSON, anything else → unknown.
MotionFormat detect_motion_format(std::string_view text);

struct KeypointJsonLimits {
  /// The whole document is parsed into a DOM (about 3× the text), so the
  /// text is bounded before parsing.
  std::size_t max_bytes = 64u << 20;
  std::size_t max_frames = 1'000'000;
};

struct KeypointJsonOptions {
  std::optional<double> fps;  ///< overrides the file's fps (and the default 30)
  KeypointJsonLimits limits;
  /// Checked once the frames array is parsed (frames × 33 joints, frames ×
  /// the estimated line size), before anything is written; and while writing.
  MotionBudget budget;
  /// Polled every kCancelPollFrames frames (MOTION_CANCELLED). May be null.
  const std::atomic<bool>* cancel = nullptr;
  /// Frames done of the total, every kCancelPollFrames frames and at the end
  /// (core/progress.h). May be empty.
  core::ProgressFn progress;
};

struct KeypointJsonSummary {
  std::uint64_t frames = 0;
  double fps = kDefaultFps;
  bool fps_in_file = false;
  std::uint64_t computed_times = 0;   ///< frames without timeMs
  std::uint64_t computed_angles = 0;  ///< frames without angles
  std::uint64_t clamped_values = 0;   ///< coordinates/confidences moved into range
  std::vector<BvhWarning> warnings;   ///< KEYPOINTS_CLAMPED
};

/// Validate and summarise. Errors: JSON_* (byte offset) from the strict
/// parser; KEYPOINTS_LIMIT, KEYPOINTS_FORMAT, KEYPOINTS_TYPE,
/// KEYPOINTS_MEMBER, KEYPOINTS_COUNT, KEYPOINTS_RANGE, KEYPOINTS_FRAME,
/// KEYPOINTS_TIME, each with the JSON pointer of the offending value;
/// MOTION_BUDGET_*, MOTION_CANCELLED.
core::Result<KeypointJsonSummary> analyse_keypoint_json(std::string_view text,
                                                        const KeypointJsonOptions& options = {});

/// Validate everything first (nothing is written for an invalid file), then
/// write the NDJSON through the sink. Errors: as analyse, and IO_WRITE.
core::Result<KeypointJsonSummary> convert_keypoint_json(std::string_view text,
                                                        const KeypointJsonOptions& options,
                                                        const OutputSink& sink);

/// The 9 angle cosines of points already in image space: the projection is
/// undone up to its scale, (x − 0.5, 0.5 − y, −z), then joint_angles() — the
/// function the BVH path uses. points: 33, angles: 9.
void angles_from_image_points(std::span<const Keypoint> points, std::span<double> angles);

}  // namespace charkit::motion
