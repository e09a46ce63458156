// GltfTrack::evaluate (gltf_animation.h).
#include "charkit/scene/gltf_animation.h"

#include <algorithm>

#include "charkit/core/math.h"

namespace charkit::scene {

void GltfTrack::evaluate(double t, std::span<double> out) const {
  const bool cubic = interpolation == GltfInterpolation::kCubicSpline;
  // CUBICSPLINE keys hold an in-tangent (slot 0), the value (1), an out-tangent (2).
  const auto at = [&](std::size_t key, std::size_t slot, std::size_t c) {
    const std::size_t k = cubic ? key * 3 + slot : key;
    return static_cast<double>(values[k * width + c]);
  };
  const auto quat = [&](std::size_t key) {
    return core::Quatd{at(key, 1, 0), at(key, 1, 1), at(key, 1, 2), at(key, 1, 3)};
  };
  const auto key_value = [&](std::size_t k) {
    for (std::size_t c = 0; c < width; ++c) out[c] = at(k, 1, c);
  };
  const std::size_t n = times.size();
  if (t <= static_cast<double>(times[0]) || n == 1) {
    key_value(0);
  } else if (t >= static_cast<double>(times[n - 1])) {
    key_value(n - 1);
  } else {
    // times[k] <= t < times[k + 1], so the interval is not empty.
    const auto it = std::upper_bound(times.begin(), times.end(), t, [](double v, float key) {
      return v < static_cast<double>(key);
    });
    const auto k = static_cast<std::size_t>(it - times.begin()) - 1;
    const double t0 = static_cast<double>(times[k]);
    const double td = static_cast<double>(times[k + 1]) - t0;
    const double s = (t - t0) / td;
    switch (interpolation) {
      case GltfInterpolation::kStep:
        key_value(k);
        break;
      case GltfInterpolation::kLinear:
        if (rotation) {
          const core::Quatd q = core::slerp(quat(k), quat(k + 1), s);
          out[0] = q.x;
          out[1] = q.y;
          out[2] = q.z;
          out[3] = q.w;
        } else {
          for (std::size_t c = 0; c < width; ++c)
            out[c] = (1.0 - s) * at(k, 1, c) + s * at(k + 1, 1, c);
        }
        break;
      case GltfInterpolation::kCubicSpline: {
        // v_k, out-tangent b_k, v_k+1, in-tangent a_k+1; tangents × td.
        const double s2 = s * s, s3 = s2 * s;
        const double h00 = 2 * s3 - 3 * s2 + 1, h10 = s3 - 2 * s2 + s;
        const double h01 = -2 * s3 + 3 * s2, h11 = s3 - s2;
        for (std::size_t c = 0; c < width; ++c)
          out[c] = h00 * at(k, 1, c) + td * h10 * at(k, 2, c) + h01 * at(k + 1, 1, c) +
                   td * h11 * at(k + 1, 0, c);
        break;
      }
    }
  }
  if (rotation) {
    const core::Quatd q = core::normalize(core::Quatd{out[0], out[1], out[2], out[3]});
    out[0] = q.x;
    out[1] = q.y;
    out[2] = q.z;
    out[3] = q.w;
  }
}

}  // namespace charkit::scene
