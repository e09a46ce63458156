#include "charkit/deformer/targets.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <utility>

#include "charkit/deformer/detail/common.h"
#include "charkit/deformer/error_codes.h"

namespace charkit::deformer {

using core::make_error;

namespace {

// Joint index of every input bone, by name.
core::Result<std::vector<std::size_t>> bone_joints(const scene::Rig& rig, const InputSpec& spec) {
  std::vector<std::size_t> out;
  for (std::size_t b = 0; b < spec.bones.size(); ++b) {
    const auto j = scene::find_joint(rig, spec.bones[b].name);
    if (!j)
      return make_error(codes::TARGETS_BONE, "input bone \"" + spec.bones[b].name +
                                                 "\" is not a joint of the rig's skeleton");
    out.push_back(*j);
  }
  return out;
}

core::Result<std::vector<scene::Transform>> locals_for(const scene::Rig& rig, const InputSpec& spec,
                                                       std::span<const std::size_t> joints,
                                                       const Pose& pose) {
  if (pose.rotations.size() != spec.bones.size() || pose.curves.size() != spec.curves.size())
    return make_error(codes::TARGETS_POSE, "pose does not match the input spec");
  std::vector<scene::Transform> locals = rig.skeleton.local_transforms;
  for (std::size_t b = 0; b < joints.size(); ++b) {
    auto& r = locals[joints[b]].rotation;
    // The pose acts in the bone's rest frame: local = rest × pose.
    const Quaternion q = multiply(to_q(r), pose.rotations[b]);
    r = {static_cast<float>(q.x), static_cast<float>(q.y), static_cast<float>(q.z),
         static_cast<float>(q.w)};
  }
  return locals;
}

// Shared driver: `target` fills the world-space reference positions of
// sample i given its skinning matrices.
template <typename TargetFn>
core::Result<BuiltTargets> build(const scene::Rig& rig, const InputSpec& spec,
                                 std::span<const Pose> poses, FeatureLayout layout,
                                 TargetFn&& target, const core::ProgressFn& progress = {}) {
  if (auto st = validate(spec); !st) return std::move(st).error();
  if (poses.empty()) return make_error(codes::TARGETS_EMPTY, "no poses");
  auto joints = bone_joints(rig, spec);
  if (!joints) return std::move(joints).error();
  const deform::SkinView skin{rig.positions, rig.joints, rig.weights};
  const std::size_t joint_count = rig.skeleton.joint_count();
  if (auto st = skin.validate(joint_count); !st) return std::move(st).error();
  std::vector<Quaternion> rest_local;
  for (std::size_t j : *joints)
    rest_local.push_back(to_q(rig.skeleton.local_transforms[j].rotation));

  DatasetBuilder builder(spec, layout, rig.mesh_name);
  const std::size_t n3 = rig.positions.size();
  std::vector<float> lbs(n3), ref(n3), bind(n3), delta(n3);
  std::vector<float> features(layout == FeatureLayout::kEngine ? spec.engine_feature_count()
                                                               : spec.feature_count());
  LbsBaselineAccumulator base;
  // The skin was validated above; each pose brings its matrices.
  deform::SkinJob forward{skin, joint_count, {}, lbs};
  deform::InverseSkinJob inverse{skin, joint_count, {}, ref, bind};
  for (std::size_t i = 0; i < poses.size(); ++i) {
    auto locals = locals_for(rig, spec, *joints, poses[i]);
    if (!locals) return std::move(locals).error();
    auto mats = scene::skinning_matrices(rig, *locals);
    if (!mats) return std::move(mats).error();
    forward.matrices = *mats;
    inverse.matrices = *mats;
    if (auto st = forward.run(); !st) return std::move(st).error();
    if (auto st = target(i, *mats, ref); !st) return std::move(st).error();
    base.add(lbs, ref);
    if (auto st = inverse.run(); !st) {
      auto e = std::move(st).error();
      e.message = "pose " + std::to_string(i) + ": " + e.message;
      return e;
    }
    for (std::size_t k = 0; k < n3; ++k) delta[k] = bind[k] - rig.positions[k];
    auto fs = layout == FeatureLayout::kEngine
                  ? engine_pose_features(spec, poses[i], rest_local, features)
                  : pose_features(spec, poses[i], features);
    if (!fs) return std::move(fs).error();
    if (auto st = builder.add_sample(features, delta, "pose_" + std::to_string(i)); !st)
      return std::move(st).error();
    if (progress) progress(i + 1, poses.size());
  }
  return BuiltTargets{std::move(builder).take(), base.baseline()};
}

}  // namespace

void LbsBaselineAccumulator::add(std::span<const float> lbs, std::span<const float> reference) {
  const std::size_t n = std::min(lbs.size(), reference.size()) / 3;
  for (std::size_t v = 0; v < n; ++v) {
    const double d = std::hypot(static_cast<double>(lbs[v * 3] - reference[v * 3]),
                                static_cast<double>(lbs[v * 3 + 1] - reference[v * 3 + 1]),
                                static_cast<double>(lbs[v * 3 + 2] - reference[v * 3 + 2]));
    sum_ += d;
    max_ = std::max(max_, d);
  }
  vertices_ += n;
}

LbsBaseline LbsBaselineAccumulator::baseline() const {
  LbsBaseline out;
  if (vertices_ > 0) out.mean_error = sum_ / static_cast<double>(vertices_);
  out.max_error = max_;
  return out;
}

core::Result<std::vector<scene::Transform>> pose_locals(const scene::Rig& rig,
                                                        const InputSpec& spec, const Pose& pose) {
  auto joints = bone_joints(rig, spec);
  if (!joints) return std::move(joints).error();
  return locals_for(rig, spec, *joints, pose);
}

core::Result<BuiltTargets> build_targets(const scene::Rig& rig, const InputSpec& spec,
                                         std::span<const Pose> poses,
                                         const TargetOptions& options) {
  const deform::SkinView skin{rig.positions, rig.joints, rig.weights};
  std::optional<deform::DeltaMush> mush;
  if (options.source == TargetSource::kDeltaMush) {
    auto dm = deform::DeltaMush::create(skin, rig.skeleton.joint_count(), rig.triangles,
                                        options.delta_mush);
    if (!dm) return std::move(dm).error();
    mush.emplace(std::move(*dm));
  }
  return build(
      rig, spec, poses, options.layout,
      [&](std::size_t, std::span<const float> mats, std::span<float> out) {
        if (mush) return mush->deform(mats, out);
        return deform::SkinJob{skin, rig.skeleton.joint_count(), mats, out,
                               deform::SkinMethod::kDualQuaternion}
            .run();
      },
      options.progress);
}

core::Result<BuiltTargets> build_targets_from_cache(const scene::Rig& rig, const InputSpec& spec,
                                                    std::span<const Pose> poses,
                                                    const PointCache& cache, FeatureLayout layout) {
  if (cache.point_count != rig.vertex_count())
    return make_error(codes::TARGETS_VERTEX_COUNT,
                      "point cache has " + std::to_string(cache.point_count) +
                          " points, the rig's mesh " + std::to_string(rig.vertex_count()) +
                          " vertices");
  if (cache.sample_count != poses.size())
    return make_error(codes::TARGETS_SAMPLE_COUNT,
                      "point cache has " + std::to_string(cache.sample_count) + " samples for " +
                          std::to_string(poses.size()) + " poses");
  if (cache.positions.size() != cache.point_count * cache.sample_count * 3)
    return make_error(codes::TARGETS_SAMPLE_COUNT, "point cache positions have the wrong size");
  return build(rig, spec, poses, layout,
               [&](std::size_t i, std::span<const float>, std::span<float> out) -> core::Status {
                 const auto s = cache.sample(i);
                 std::copy(s.begin(), s.end(), out.begin());
                 return core::Ok{};
               });
}

}  // namespace charkit::deformer
