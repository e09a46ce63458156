// A minimal skeleton: named joints with parents, optional rest transforms and
// inverse bind matrices. Enough for a glTF skin; motion/deform build on it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "charkit/scene/mesh.h"

namespace charkit::scene {

/// Translation, rotation (quaternion x, y, z, w) and scale.
struct Transform {
  Vec3 translation{0.0F, 0.0F, 0.0F};
  Vec4 rotation{0.0F, 0.0F, 0.0F, 1.0F};
  Vec3 scale{1.0F, 1.0F, 1.0F};

  bool is_identity() const {
    return translation == Vec3{0.0F, 0.0F, 0.0F} && rotation == Vec4{0.0F, 0.0F, 0.0F, 1.0F} &&
           scale == Vec3{1.0F, 1.0F, 1.0F};
  }
};

struct Skeleton {
  std::string name;
  std::vector<std::string> joint_names;
  /// Parent joint index, or -1 for a root. A parent comes before its children.
  std::vector<std::int32_t> parents;
  /// Empty, or one local rest transform per joint.
  std::vector<Transform> local_transforms;
  /// Empty (identity for all; written out as identity matrices), or one matrix per joint.
  std::vector<Mat4> inverse_bind_matrices;

  std::size_t joint_count() const { return joint_names.size(); }
};

}  // namespace charkit::scene
