// GltfTrack::evaluate (gltf_animation.h).
#include "charkit/scene/gltf_animation.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "charkit/core/json.h"
#include "charkit/core/math.h"
#include "charkit/scene/error_codes.h"
#include "charkit/scene/gltf_document.h"

namespace charkit::scene {
namespace {

// Accessor `index` as floats, `comps` per element: float components, or
// normalised (u)byte / (u)short ones where allowed (glTF 2.0 §3.11:
// rotations and weights), every value finite.
core::Result<std::vector<float>> read_animation_floats(GltfDocument& doc, std::size_t index,
                                                       std::size_t comps, bool allow_normalized) {
  const std::string ptr = core::json_pointer_join("/accessors", index);
  auto info = doc.accessor(index);
  if (!info) return std::move(info).error();
  const char* want_type = comps == 1 ? "SCALAR" : comps == 3 ? "VEC3" : "VEC4";
  if (info->type != want_type)
    return core::error_at_pointer(codes::GLTF_ANIMATION, std::string("type must be ") + want_type,
                                  ptr + "/type");
  const auto ct = info->component_type;
  const bool small_int = ct != GltfComponent::kFloat && ct != GltfComponent::kUnsignedInt;
  if (ct != GltfComponent::kFloat && !(allow_normalized && info->normalized && small_int))
    return core::error_at_pointer(
        codes::GLTF_ANIMATION,
        std::string("componentType must be float") +
            (allow_normalized ? " or a normalised (u)byte / (u)short" : ""),
        ptr + "/componentType");
  if (info->count == 0)
    return core::error_at_pointer(codes::GLTF_ANIMATION, "count must be at least 1",
                                  ptr + "/count");
  if (!info->buffer_view && !info->sparse)
    return core::error_at_pointer(codes::GLTF_ANIMATION, "an animation accessor needs a bufferView",
                                  ptr);
  auto out = doc.read_accessor_floats(index);
  if (!out) return std::move(out).error();
  for (std::size_t i = 0; i < out->size(); ++i)
    if (!std::isfinite((*out)[i]))
      return core::error_at_pointer(codes::GLTF_ANIMATION,
                                    "element " + std::to_string(i / comps) + " is not finite", ptr);
  return out;
}

}  // namespace

core::Result<std::vector<float>> read_gltf_key_times(GltfDocument& doc,
                                                     const GltfAnimationSampler& sampler) {
  auto times = read_animation_floats(doc, sampler.input, 1, false);
  if (!times) return std::move(times).error();
  for (std::size_t k = 1; k < times->size(); ++k)
    if ((*times)[k] < (*times)[k - 1])
      return core::error_at_pointer(codes::GLTF_ANIMATION,
                                    "key times decrease at key " + std::to_string(k),
                                    core::json_pointer_join("/accessors", sampler.input));
  return times;
}

core::Result<GltfTrack> read_gltf_track(GltfDocument& doc, const GltfAnimationSampler& sampler,
                                        GltfPath path) {
  if (path == GltfPath::kOther)
    return core::error_at_pointer(codes::GLTF_ANIMATION,
                                  "only translation, rotation, scale and weights are sampled",
                                  sampler.pointer);
  auto times = read_gltf_key_times(doc, sampler);
  if (!times) return std::move(times).error();
  GltfTrack t;
  t.times = std::move(*times);
  t.interpolation = sampler.interpolation;
  t.rotation = path == GltfPath::kRotation;
  const bool weights = path == GltfPath::kWeights;
  const std::size_t comps = t.rotation ? 4 : weights ? 1 : 3;
  auto values = read_animation_floats(doc, sampler.output, comps, t.rotation || weights);
  if (!values) return std::move(values).error();
  const std::size_t per_key = t.interpolation == GltfInterpolation::kCubicSpline ? 3 : 1;
  const std::size_t slots = t.times.size() * per_key;
  t.width = weights ? values->size() / slots : comps;
  if (t.width == 0 || values->size() != slots * t.width)
    return core::error_at_pointer(
        codes::GLTF_ANIMATION,
        std::to_string(values->size() / comps) + " output elements for " +
            std::to_string(t.times.size()) + " keys (need " +
            (weights ? "a multiple of " + std::to_string(slots) : std::to_string(slots)) + ")",
        sampler.pointer + "/output");
  t.values = std::move(*values);
  return t;
}

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
