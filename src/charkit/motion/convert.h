// BVH → MediaPipe-33 NDJSON, streaming in two passes over the text
// (docs/contracts/keypoints.md): pass 1 runs FK on every frame to find the
// projection scale (the model and motion format contract §2.1: 0.35 / max
// |coordinate| over the whole motion); pass 2 runs FK again, projects and
// writes the lines. Memory is the hierarchy plus one frame and a 64 KiB
// output buffer, whatever the length.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "charkit/core/mapped_file.h"
#include "charkit/core/progress.h"
#include "charkit/core/result.h"
#include "charkit/motion/bvh.h"
#include "charkit/motion/error_codes.h"
#include "charkit/motion/mediapipe33.h"

namespace charkit::motion {

inline constexpr double kDefaultFps = 30.0;

/// fps from a BVH Frame Time: 1 / frame_time, snapped to the nearest integer
/// when within 0.1 % of it (0.0333333 → 30), else rounded to 0.001 fps;
/// nullopt when frame_time is not in (0.0001 s, 3600 s].
std::optional<double> fps_from_frame_time(double frame_time);

/// Bounds on the work and output of one conversion (docs/motion.md
/// §Budgets); 0 = none (the CLI default; the server sets both per job).
/// Checked before the work wherever the frame count is known up front
/// (Assimp: duration × fps; keypoint JSON: the frames array; BVH: after the
/// first pass, which itself stops at max_joint_frames), and again while
/// writing. Errors MOTION_BUDGET_JOINT_FRAMES, MOTION_BUDGET_OUTPUT_BYTES.
struct MotionBudget {
  std::uint64_t max_joint_frames = 0;  ///< frames × skeleton joints (keypoint JSON: × 33)
  std::uint64_t max_output_bytes = 0;  ///< NDJSON bytes
};

/// What one NDJSON frame line is taken to cost before it is written (real
/// lines: 1.5–2.5 KiB); the output budget is checked up front with it.
inline constexpr std::uint64_t kEstimatedFrameLineBytes = 2048;
/// Frames between two looks at a cancel flag.
inline constexpr std::uint64_t kCancelPollFrames = 256;

/// MOTION_BUDGET_JOINT_FRAMES when frames × joints passes the budget,
/// MOTION_BUDGET_OUTPUT_BYTES when frames × kEstimatedFrameLineBytes does.
core::Status check_motion_budget(const MotionBudget& budget, std::uint64_t frames,
                                 std::uint64_t joints);
/// MOTION_BUDGET_OUTPUT_BYTES when `written` bytes pass max_output_bytes
/// (the check while writing: the estimate may be off either way).
core::Status check_output_budget(const MotionBudget& budget, std::uint64_t written);
/// MOTION_CANCELLED when the flag (may be null) is up.
core::Status check_cancel(const std::atomic<bool>* cancel);

struct ConvertOptions {
  UpAxis up = UpAxis::kY;
  std::optional<double> fps;  ///< overrides the Frame Time
  JointTable table = default_joint_table();
  BvhLimits limits;
  const core::InputHints* hints = nullptr;  ///< e.g. the MappedFile holding the text
  MotionBudget budget;
  /// Polled every kCancelPollFrames frames; once true the conversion ends
  /// with MOTION_CANCELLED. May be null.
  const std::atomic<bool>* cancel = nullptr;
  /// Frames written of the total, every kCancelPollFrames frames and at the
  /// end (core/progress.h). May be empty.
  core::ProgressFn progress;
};

struct ConvertSummary {
  BvhHeader header;
  JointMapping mapping;
  std::uint64_t frames = 0;
  double fps = kDefaultFps;
  double max_abs = 0;  ///< largest |coordinate| before projection
  double scale = 1;
  std::vector<BvhWarning> warnings;
};

/// Codes of the joint-mapping check (docs/motion.md §Joint mapping).
inline constexpr core::ErrorCode kNoMappedJoints = codes::MOTION_NO_MAPPED_JOINTS;
inline constexpr core::ErrorCode kFewMappedJoints = codes::MOTION_FEW_MAPPED_JOINTS;

/// How well the table's points were found in a skeleton: the points the
/// table has candidate names for (`wanted`; 15 with the default table) and
/// those of them map_joints found a joint for.
struct MappingCoverage {
  std::size_t wanted = 0;
  std::size_t found = 0;
  std::vector<std::string_view> missing;  ///< point names, in point order
};
MappingCoverage mapping_coverage(const JointMapping& mapping, const JointTable& table);

/// The check every skeleton conversion makes after map_joints: no wanted
/// point found → MOTION_NO_MAPPED_JOINTS (the message lists the skeleton's
/// joint names, End Sites left out, with core::format_name_list, and points
/// at a joint map), unless `to_warning`, when it becomes the warning below;
/// fewer than half found → a MOTION_FEW_MAPPED_JOINTS warning naming the
/// missing points, appended to `warnings`.
core::Status check_joint_mapping(std::span<const BvhJoint> joints, const JointMapping& mapping,
                                 const JointTable& table, bool to_warning,
                                 std::vector<BvhWarning>& warnings);

/// Receives the output in chunks of whole lines; returns false on a write error.
using OutputSink = std::function<bool(std::string_view)>;

/// Errors: those of parse_bvh_header and FrameReader, MOTION_NO_MAPPED_JOINTS
/// (checked before any frame is read), MOTION_NOT_FINITE,
/// MOTION_BUDGET_*, MOTION_CANCELLED, IO_WRITE (the sink failed).
core::Result<ConvertSummary> convert_bvh(std::string_view text, const ConvertOptions& options,
                                         const OutputSink& sink);

/// Pass 1 only: header, mapping, frames, fps, scale and warnings (used by
/// `motion inspect`). A skeleton with no mapped point is not an error here:
/// the summary carries a MOTION_FEW_MAPPED_JOINTS warning instead.
core::Result<ConvertSummary> analyse_bvh(std::string_view text, const ConvertOptions& options);

}  // namespace charkit::motion
