// The glTF layer's animation sampler (glTF 2.0 §3.11 and Appendix C): one
// sampler's key times and values, and their value at any time. STEP holds a
// key; LINEAR blends (spherical for rotations); CUBICSPLINE is the cubic
// Hermite spline of the keys' values and tangents, the tangents scaled by
// the interval's length. Before the first key and after the last the value
// is held. Rotations come out normalised.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "charkit/core/result.h"
#include "charkit/scene/gltf_asset.h"

namespace charkit::scene {

class GltfDocument;

struct GltfTrack {
  GltfInterpolation interpolation = GltfInterpolation::kLinear;
  std::vector<float> times;  ///< key times in seconds, not decreasing, at least one
  std::vector<float>
      values;  ///< keys × width values (× 3 for CUBICSPLINE: in-tangent, value, out-tangent)
  std::size_t width =
      0;  ///< values per key: 3 (translation, scale), 4 (rotation), targets (weights)
  bool rotation = false;  ///< values are x, y, z, w quaternions

  /// The value at time t (seconds) into out (width values). The caller has
  /// checked that values.size() is times.size() × width (× 3 for CUBICSPLINE).
  void evaluate(double t, std::span<double> out) const;
};

/// A sampler's key times (its input accessor): SCALAR float, at least one,
/// finite and not decreasing. Errors: GLTF_ANIMATION (at the accessor), the
/// document's accessor and buffer errors.
core::Result<std::vector<float>> read_gltf_key_times(GltfDocument& doc,
                                                     const GltfAnimationSampler& sampler);

/// A sampler as the track of a channel of `path`: its key times, and its
/// output as float, or as normalised integers where glTF 2.0 §3.11 allows
/// them (rotation, weights), every value finite. Values per key: 3
/// (translation, scale), 4 (rotation), the output count over the key count
/// (weights); CUBICSPLINE has three per key. Errors: GLTF_ANIMATION (at the
/// accessor, or at the sampler's output when the count does not fit the
/// keys), the document's accessor and buffer errors; a path of kOther is
/// refused at the sampler.
core::Result<GltfTrack> read_gltf_track(GltfDocument& doc, const GltfAnimationSampler& sampler,
                                        GltfPath path);

}  // namespace charkit::scene
