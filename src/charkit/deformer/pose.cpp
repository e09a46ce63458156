#include "charkit/deformer/pose.h"

#include <cmath>
#include <numbers>
#include <set>

#include "charkit/deformer/detail/prng.h"
#include "charkit/deformer/error_codes.h"

namespace charkit::deformer {

using core::make_error;

Quaternion quaternion_from_euler_xyz_degrees(double x_deg, double y_deg, double z_deg) {
  constexpr double kRad = std::numbers::pi / 180.0;
  return core::quat_from_euler_xyz(core::Vec3d{x_deg * kRad, y_deg * kRad, z_deg * kRad});
}

std::array<double, 6> engine_rotation_features(const Quaternion& q) {
  const double xx = 2.0 * q.x * q.x;
  const double yy = 2.0 * q.y * q.y;
  const double zz = 2.0 * q.z * q.z;
  const double xy = 2.0 * q.x * q.y;
  const double xz = 2.0 * q.x * q.z;
  const double yz = 2.0 * q.y * q.z;
  const double wx = 2.0 * q.w * q.x;
  const double wy = 2.0 * q.w * q.y;
  const double wz = 2.0 * q.w * q.z;
  return {1.0 - (yy + zz), xy - wz, xz + wy, xy + wz, 1.0 - (xx + zz), yz - wx};
}

core::Status validate(const InputSpec& spec) {
  std::set<std::string> names;
  for (std::size_t b = 0; b < spec.bones.size(); ++b) {
    const BoneInput& bone = spec.bones[b];
    const std::string where = "/bones/" + std::to_string(b);
    if (bone.name.empty() || !names.insert("bone:" + bone.name).second)
      return core::error_at_pointer(codes::POSE_SPEC_NAME,
                                    "bone name is empty or repeated: '" + bone.name + "'",
                                    where + "/name");
    for (std::size_t a = 0; a < 3; ++a) {
      const AxisRange& r = bone.axes[a];
      if (!std::isfinite(r.min_deg) || !std::isfinite(r.max_deg) || r.min_deg > r.max_deg ||
          std::fabs(r.min_deg) > 360.0 || std::fabs(r.max_deg) > 360.0)
        return core::error_at_pointer(
            codes::POSE_SPEC_RANGE,
            "bone '" + bone.name + "' axis " + "xyz"[a] +
                ": range must be finite, min <= max, within +-360 degrees",
            where + "/axes/" + std::to_string(a));
    }
  }
  for (std::size_t c = 0; c < spec.curves.size(); ++c) {
    const CurveInput& curve = spec.curves[c];
    const std::string where = "/curves/" + std::to_string(c);
    if (curve.name.empty() || !names.insert("curve:" + curve.name).second)
      return core::error_at_pointer(codes::POSE_SPEC_NAME,
                                    "curve name is empty or repeated: '" + curve.name + "'",
                                    where + "/name");
    if (!std::isfinite(curve.min) || !std::isfinite(curve.max) || curve.min > curve.max)
      return core::error_at_pointer(
          codes::POSE_SPEC_RANGE,
          "curve '" + curve.name + "': range must be finite with min <= max", where);
  }
  return core::Ok{};
}

Pose rest_pose(const InputSpec& spec) {
  Pose p;
  p.rotations.assign(spec.bones.size(), Quaternion{});
  p.curves.assign(spec.curves.size(), 0.0);
  p.euler_deg.assign(3 * spec.bones.size(), 0.0);
  return p;
}

core::Result<std::vector<Pose>> sample_poses(const InputSpec& spec, const SampleOptions& options) {
  if (auto st = validate(spec); !st) return std::move(st).error();
  const std::size_t per_pose = spec.feature_count();
  if (options.random_poses >= options.max_values ||
      (per_pose != 0 && options.random_poses + 1 > options.max_values / per_pose))
    return make_error(codes::POSE_SAMPLE_TOO_MANY,
                      std::to_string(options.random_poses) + " poses of " +
                          std::to_string(per_pose) + " values exceed the limit of " +
                          std::to_string(options.max_values) + " values");
  std::vector<Pose> poses;
  poses.reserve(options.random_poses + 1);
  poses.push_back(rest_pose(spec));
  Rng rng(options.seed);
  for (std::size_t i = 0; i < options.random_poses; ++i) {
    Pose p;
    p.rotations.reserve(spec.bones.size());
    p.euler_deg.reserve(3 * spec.bones.size());
    for (const BoneInput& bone : spec.bones) {
      std::array<double, 3> e{0.0, 0.0, 0.0};
      for (std::size_t a = 0; a < 3; ++a)
        if (bone.axes[a].enabled) e[a] = rng.uniform(bone.axes[a].min_deg, bone.axes[a].max_deg);
      p.euler_deg.insert(p.euler_deg.end(), e.begin(), e.end());
      p.rotations.push_back(quaternion_from_euler_xyz_degrees(e[0], e[1], e[2]));
    }
    p.curves.reserve(spec.curves.size());
    for (const CurveInput& c : spec.curves) p.curves.push_back(rng.uniform(c.min, c.max));
    poses.push_back(std::move(p));
  }
  return poses;
}

namespace {
core::Status check_pose(const InputSpec& spec, const Pose& pose, std::size_t out_size,
                        std::size_t want) {
  if (pose.rotations.size() != spec.bones.size() || pose.curves.size() != spec.curves.size())
    return make_error(codes::FEATURE_SHAPE,
                      "pose has " + std::to_string(pose.rotations.size()) + " rotations and " +
                          std::to_string(pose.curves.size()) + " curves; the input spec has " +
                          std::to_string(spec.bones.size()) + " and " +
                          std::to_string(spec.curves.size()));
  if (out_size != want)
    return make_error(codes::FEATURE_SHAPE, "output holds " + std::to_string(out_size) +
                                                " floats; the layout needs " +
                                                std::to_string(want));
  return core::Ok{};
}
}  // namespace

core::Status pose_features(const InputSpec& spec, const Pose& pose, std::span<float> out) {
  if (auto st = check_pose(spec, pose, out.size(), spec.feature_count()); !st) return st;
  std::size_t k = 0;
  for (const Quaternion& q : pose.rotations)
    for (double v : axis_angle(q)) out[k++] = static_cast<float>(v);
  for (double c : pose.curves) out[k++] = static_cast<float>(c);
  return core::Ok{};
}

core::Status engine_pose_features(const InputSpec& spec, const Pose& pose,
                                  std::span<const Quaternion> rest_local, std::span<float> out) {
  if (auto st = check_pose(spec, pose, out.size(), spec.engine_feature_count()); !st) return st;
  if (!rest_local.empty() && rest_local.size() != spec.bones.size())
    return make_error(codes::FEATURE_SHAPE,
                      "rest rotations given for " + std::to_string(rest_local.size()) +
                          " bones; the spec has " + std::to_string(spec.bones.size()));
  std::size_t k = 0;
  for (std::size_t b = 0; b < pose.rotations.size(); ++b) {
    const Quaternion local =
        rest_local.empty() ? pose.rotations[b] : multiply(rest_local[b], pose.rotations[b]);
    for (double v : engine_rotation_features(local)) out[k++] = static_cast<float>(v);
  }
  for (double c : pose.curves) out[k++] = static_cast<float>(c);
  return core::Ok{};
}

core::Result<std::vector<float>> feature_matrix(const InputSpec& spec, std::span<const Pose> poses,
                                                FeatureLayout layout,
                                                std::span<const Quaternion> rest_local) {
  const std::size_t f =
      layout == FeatureLayout::kEngine ? spec.engine_feature_count() : spec.feature_count();
  std::vector<float> m(poses.size() * f);
  for (std::size_t i = 0; i < poses.size(); ++i) {
    std::span<float> row(m.data() + i * f, f);
    core::Status st = layout == FeatureLayout::kEngine
                          ? engine_pose_features(spec, poses[i], rest_local, row)
                          : pose_features(spec, poses[i], row);
    if (!st) {
      core::Error e = std::move(st).error();
      e.message = "pose " + std::to_string(i) + ": " + e.message;
      return e;
    }
  }
  return m;
}

}  // namespace charkit::deformer
