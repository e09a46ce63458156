// Training targets for the pose-driven deformer (docs/deformer/rig.md §4): pose
// a rig for each sampled pose, compute a reference result (dual-quaternion
// skinning, Delta Mush, or world positions from a point cache aligned with
// the poses) and the plain LBS result, and store the correction in bind
// space — inverse-LBS(target) − rest, the engine's convention — in a Dataset.
#pragma once

#include <cstddef>
#include <span>

#include "charkit/core/progress.h"
#include "charkit/core/result.h"
#include "charkit/deform/skinning.h"
#include "charkit/deformer/dataset.h"
#include "charkit/deformer/pc2.h"
#include "charkit/deformer/pose.h"
#include "charkit/scene/rig.h"

namespace charkit::deformer {

enum class TargetSource { kDualQuaternion, kDeltaMush };

struct TargetOptions {
  TargetSource source = TargetSource::kDeltaMush;
  deform::DeltaMushOptions delta_mush;
  FeatureLayout layout = FeatureLayout::kAxisAngle;
  /// Optional: called after each pose with (poses done, poses).
  core::ProgressFn progress;
};

/// How far plain LBS is from the targets (world units, over every vertex of
/// every sample): the error a corrective model starts from.
struct LbsBaseline {
  double mean_error = 0.0;
  double max_error = 0.0;
};

/// Gathers an LbsBaseline over samples: add() takes one sample's plain-LBS
/// positions and its reference positions (3 floats per vertex, same size);
/// baseline() is the mean and largest per-vertex distance over all of them.
class LbsBaselineAccumulator {
 public:
  void add(std::span<const float> lbs, std::span<const float> reference);
  LbsBaseline baseline() const;

 private:
  double sum_ = 0.0;
  double max_ = 0.0;
  std::size_t vertices_ = 0;
};

struct BuiltTargets {
  Dataset dataset;
  LbsBaseline lbs;
};

/// The local transforms of every rig joint for one pose: rest TRS, with the
/// rotation of each input bone replaced by rest rotation × pose rotation.
/// Errors: TARGETS_BONE (an input bone the skeleton lacks), TARGETS_POSE
/// (pose does not match spec).
core::Result<std::vector<scene::Transform>> pose_locals(const scene::Rig& rig,
                                                        const InputSpec& spec, const Pose& pose);

/// Targets from a built-in reference deformer. Errors: validate(spec)'s,
/// TARGETS_BONE, TARGETS_POSE, TARGETS_EMPTY (no poses), the deformers'
/// DEFORM_* (e.g. DEFORM_SINGULAR where a posed skinning matrix has no
/// inverse), the DatasetBuilder's DATASET_*.
core::Result<BuiltTargets> build_targets(const scene::Rig& rig, const InputSpec& spec,
                                         std::span<const Pose> poses,
                                         const TargetOptions& options = {});

/// Targets from a point cache: sample i holds the world positions for pose i.
/// Errors: as build_targets(), and TARGETS_VERTEX_COUNT (cache points differ
/// from the rig's vertices), TARGETS_SAMPLE_COUNT (cache samples differ from
/// the poses).
core::Result<BuiltTargets> build_targets_from_cache(
    const scene::Rig& rig, const InputSpec& spec, std::span<const Pose> poses,
    const PointCache& cache, FeatureLayout layout = FeatureLayout::kAxisAngle);

}  // namespace charkit::deformer
