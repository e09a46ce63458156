// Small helpers shared by the deformer module's passes (dataset, models,
// targets, baking, actions), so each is written once.
#pragma once

#include <algorithm>
#include <cmath>
#include <span>
#include <string>
#include <utility>

#include "charkit/core/math.h"
#include "charkit/core/result.h"
#include "charkit/deformer/pose.h"
#include "charkit/scene/mesh.h"

namespace charkit::deformer {

/// True when no value is NaN or infinite.
inline bool all_finite(std::span<const float> v) {
  return std::all_of(v.begin(), v.end(), [](float x) { return std::isfinite(x); });
}

/// A glTF rotation (x, y, z, w) as a quaternion, as stored (not normalised).
inline Quaternion to_q(const scene::Vec4& v) {
  return core::quat_from_xyzw<double>(v);
}

}  // namespace charkit::deformer
