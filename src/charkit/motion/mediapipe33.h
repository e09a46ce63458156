// MediaPipe Pose (33 points) from a BVH skeleton: the joint table (the model
// and motion format contract §2.2, kept as data in mediapipe33.cpp), the
// joint-name normaliser, user joint maps, and the pose job that turns world
// joint positions into 33 points and the 9 joint-angle cosines.
// Rules and topology: docs/contracts/skeleton-topology.md.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "charkit/core/result.h"
#include "charkit/motion/bvh.h"
#include "charkit/motion/forward_kinematics.h"

namespace charkit::motion {

inline constexpr std::size_t kPointCount = 33;
inline constexpr std::size_t kAngleCount = 9;

/// MediaPipe name of point i ("nose", "left_eye_inner", …).
std::string_view point_name(std::size_t i);
/// Index of a point name (exact, lower case) or a decimal index "0".."32".
std::optional<std::size_t> point_index(std::string_view name_or_index);
/// Angle names in output order: shoulder_L … spine.
std::string_view angle_name(std::size_t i);

/// True for the points the skeleton-topology rules estimate when nothing is
/// mapped to them: face 1–10, hands 17–22, heels 29–30.
bool is_estimated_point(std::size_t i);

/// Canonical form of a joint name for matching: namespace ("mixamorig:") and
/// rig prefixes ("Bip01 ", "Character1_") removed, side words turned into
/// "left"/"right" ("L", "_R", "lThigh", "Bip01 R Calf"), part synonyms folded
/// onto the format contract's vocabulary ("Thigh" → "upleg"), lower case.
/// "Bip01 L Thigh" → "leftupleg", "mixamorig:LeftUpLeg" → "leftupleg".
std::string normalise_joint_name(std::string_view name);

/// Candidate joint names per point, tried in order.
struct JointTable {
  std::array<std::vector<std::string>, kPointCount> candidates;
};

/// The default table of the model and motion format contract.
JointTable default_joint_table();

/// Add a user joint map (JSON object: point name or index → array of joint
/// names) in front of the table's candidates. Errors: JSON_* (offset),
/// JOINT_MAP (JSON pointer).
core::Result<JointTable> apply_joint_map(JointTable table, std::string_view json_text);

enum class PointSource : std::uint8_t { kMapped, kMissing, kEstimated };
const char* point_source_name(PointSource s);

struct PointMapping {
  PointSource source = PointSource::kMissing;
  int joint = -1;  ///< the BVH joint (kMapped)
};

struct JointMapping {
  std::array<PointMapping, kPointCount> points;
  /// Pelvis: the midpoint of the hips when both are mapped (pelvis_joint = -1),
  /// else this joint ("Hips"/"Hip"/"Pelvis" or the first ROOT).
  int pelvis_joint = -1;
};

/// Match the table against the skeleton (End Sites are not matched):
/// per candidate, an exact case-insensitive name first, then the normalised
/// name; the first joint in file order wins.
JointMapping map_joints(std::span<const BvhJoint> joints, const JointTable& table);

enum class UpAxis : std::uint8_t { kY, kZ };

struct Keypoint {
  double x = 0, y = 0, z = 0, confidence = 0;
};

/// World joint positions of one frame → 33 points in the pelvis-centred,
/// Y-up, right-handed frame (not yet projected) and the 9 angle cosines.
struct PoseJob {
  const JointMapping* mapping = nullptr;
  std::span<const Vec3> world_positions;  ///< one per joint
  UpAxis up = UpAxis::kY;
  std::span<Keypoint> points;  ///< output, 33
  std::span<double> angles;    ///< output, 9

  /// A mapping, 33 points and 9 angles, every mapped joint (and the
  /// pelvis) within world_positions. Error: MOTION_INTERNAL.
  core::Status validate() const;
  /// One frame: runs on the calling thread whatever `options` say. Never
  /// fails on a validated job.
  core::Status run(const core::RunOptions& options = {}) const;
};

/// Cosine of the angle between a and b, clamped to [-1, 1]; 0.0 when either
/// vector is shorter than 1e-9 (skeleton-topology.md §5).
double angle_cosine(const Vec3& a, const Vec3& b);

/// The 9 joint-angle cosines of skeleton-topology.md §5 from 33 points in a
/// Y-up, right-handed frame (any origin and uniform scale): PoseJob uses it on
/// the pelvis-centred points, the keypoint-JSON reader on un-projected points.
/// p: 33, angles: 9.
void joint_angles(std::span<const Vec3> p, std::span<double> angles);

/// The projection scale: 0.35 / max_abs, or 1 when max_abs is 0.
double projection_scale(double max_abs);
/// x = 0.5 + x·s, y = 0.5 − y·s, z = −z·s (the model and motion format
/// contract §2.1), clamped to the ranges the scale guarantees (x, y in
/// [0.15, 0.85], z in [−0.35, 0.35]).
Keypoint project(const Keypoint& p, double scale);

}  // namespace charkit::motion
