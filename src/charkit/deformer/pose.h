// Inputs of a pose-driven deformer, seeded pose sampling and the two feature
// layouts (docs/deformer/datasets.md).
//
// A pose here is each input bone's local rotation relative to its rest
// rotation (identity at rest) plus the curve values. Features:
// - axis-angle: per bone the rotation vector (axis * angle, radians, 3
//   floats), zero at rest, then the curves — what the linear model uses;
// - engine: per bone the first two rows of the local rotation matrix
//   (6 floats, the Unreal ML Deformer `.nmn` input layout), then the curves.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "charkit/core/math.h"
#include "charkit/core/result.h"

namespace charkit::deformer {

/// Unit quaternion (x, y, z, w), Hamilton convention, rotating column
/// vectors: core/math.h's; core::multiply(a, b) applies b first, then a.
using Quaternion = core::Quatd;

/// Euler angles in degrees, order XYZ as Blender and glTF tools mean it: the
/// X rotation is applied first, then Y, then Z, i.e. q = qz * qy * qx.
Quaternion quaternion_from_euler_xyz_degrees(double x_deg, double y_deg, double z_deg);

/// The rotation vector (unit axis * angle in radians, angle in [0, pi]) of q:
/// core::rotation_vector. Exactly zero for the identity; accurate for tiny
/// angles (no acos) and for angles near pi (q and -q give the same rotation).
inline std::array<double, 3> axis_angle(const Quaternion& q) {
  return core::rotation_vector(q);
}

/// The engine's six numbers for a unit quaternion: (1-(yy+zz), xy-wz, xz+wy,
/// xy+wz, 1-(xx+zz), yz-wx) with xx = 2x*x, xy = 2x*y, … (ue-nmn-notes.md).
std::array<double, 6> engine_rotation_features(const Quaternion& q);

/// Training range of one rotation axis of a bone.
struct AxisRange {
  bool enabled = true;
  double min_deg = -45.0;
  double max_deg = 45.0;
};

struct BoneInput {
  std::string name;
  std::array<AxisRange, 3> axes{};  ///< x, y, z
};

struct CurveInput {
  std::string name;
  double min = 0.0;
  double max = 1.0;
};

/// What drives the deformer: bones with per-axis ranges, then curves.
struct InputSpec {
  std::vector<BoneInput> bones;
  std::vector<CurveInput> curves;

  /// 3 per bone + 1 per curve.
  std::size_t feature_count() const { return 3 * bones.size() + curves.size(); }
  /// 6 per bone + 1 per curve.
  std::size_t engine_feature_count() const { return 6 * bones.size() + curves.size(); }
};

/// Errors: POSE_SPEC_NAME (empty or duplicate bone/curve name),
/// POSE_SPEC_RANGE (non-finite bound, min > max, or |bound| > 360 degrees).
core::Status validate(const InputSpec& spec);

/// One pose: per input bone the rotation relative to rest, per curve its value.
struct Pose {
  std::vector<Quaternion> rotations;
  std::vector<double> curves;
  /// The sampled Euler angles (degrees, x y z per bone) the rotations came from.
  std::vector<double> euler_deg;
};

/// The rest pose of spec: identity rotations, zero angles, zero curves.
Pose rest_pose(const InputSpec& spec);

struct SampleOptions {
  std::size_t random_poses = 100;  ///< poses drawn after the rest pose
  std::uint64_t seed = 777;
  /// Refuse when (random_poses + 1) * (3 * bones + curves) exceeds this.
  std::size_t max_values = std::size_t{1} << 28;
};

/// Sample 0 is the rest pose; then random_poses poses. Each pose draws, in
/// this order, for every bone and for x, y, z an angle uniform in
/// [min_deg, max_deg] if the axis is enabled (no draw and 0 if not), then for
/// every curve a value uniform in [min, max]; Rng(seed).uniform(lo, hi).
/// Errors: those of validate(), POSE_SAMPLE_TOO_MANY.
core::Result<std::vector<Pose>> sample_poses(const InputSpec& spec, const SampleOptions& options);

/// Axis-angle features of one pose into out (size spec.feature_count()).
/// Errors: FEATURE_SHAPE (pose or out does not match spec).
core::Status pose_features(const InputSpec& spec, const Pose& pose, std::span<float> out);

/// Engine features of one pose into out (size spec.engine_feature_count()).
/// The bone's local rotation is rest_local[b] * pose.rotations[b] (the pose
/// applied in the bone's rest frame); rest_local may be empty (identity).
/// Errors: FEATURE_SHAPE.
core::Status engine_pose_features(const InputSpec& spec, const Pose& pose,
                                  std::span<const Quaternion> rest_local, std::span<float> out);

enum class FeatureLayout { kAxisAngle, kEngine };

/// Row-major N x F matrix of the poses' features in the given layout.
core::Result<std::vector<float>> feature_matrix(const InputSpec& spec, std::span<const Pose> poses,
                                                FeatureLayout layout,
                                                std::span<const Quaternion> rest_local = {});

}  // namespace charkit::deformer
