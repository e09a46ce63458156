// Forward kinematics of a BVH skeleton for one frame: a job (core/job.h:
// validate(), then run(); spans in and out, no allocation in run()).
//
// Conventions (docs/contracts/skeleton-topology.md §3):
// - A joint's local rotation is the product of its rotation channels in the
//   order they are listed, applied intrinsically: CHANNELS Zrotation Xrotation
//   Yrotation gives R = Rz · Rx · Ry; angles in degrees, right-handed.
// - Its local translation is OFFSET; where the joint has position channels
//   (on any joint, not only the root) their values *replace* the matching
//   OFFSET components, as three.js BVHLoader and Blender's importer do and as
//   files with 6 channels on every joint (Bandai-Namco style) expect.
// - world rotation = parent world rotation · local rotation;
//   world position = parent world position + parent world rotation · translation.
#pragma once

#include <array>
#include <span>

#include "charkit/core/job.h"
#include "charkit/core/math.h"
#include "charkit/core/result.h"
#include "charkit/motion/bvh.h"

namespace charkit::motion {

using Vec3 = core::Vec3d;
using Mat3 = core::Mat3d;  ///< column-major (core/math.h)

/// Local rotation of one joint from its channel values (the joint's slice of a frame row).
Mat3 local_rotation(const BvhJoint& joint, std::span<const double> frame);

struct ForwardKinematicsJob {
  std::span<const BvhJoint> joints;  ///< parents before children
  std::span<const double> frame;     ///< one frame row (all channels)
  std::span<Mat3> world_rotations;   ///< scratch, one per joint
  std::span<Vec3> world_positions;   ///< output, one per joint

  /// Sizes agree, every parent index precedes its joint, channels lie in
  /// frame. Error: MOTION_INTERNAL, naming the joint.
  core::Status validate() const;
  /// One frame is too little work to split: runs on the calling thread
  /// whatever `options` say. Never fails on a validated job.
  core::Status run(const core::RunOptions& options = {}) const;
};

}  // namespace charkit::motion
