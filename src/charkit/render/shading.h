// The shading functions of the character passes (the character-rendering
// frame analysis §7–§9; docs/render/shading.md), as C++ references: the face
// shadow's 9-tap PCF with its 0.1111 constant, the character LUT's input
// shaper and strip lookup, the signed-square-root motion-vector encoding, and
// the HSV-type shadow colour. The render passes' GLSL implements the same
// formulas; these are what it is tested against.
#pragma once

#include <array>
#include <cstdint>
#include <span>

#include "charkit/core/math.h"
#include "charkit/scene/mesh.h"

namespace charkit::render {

// The maths types are core/math.h's (float), as the scene layer names them;
// Mat4 is column-major, as glTF and GLSL store it.
using scene::Mat4, scene::Vec2, scene::Vec3, scene::Vec4;

// ---- 9-tap PCF (§8) -------------------------------------------------------

/// The constant of the frame analysis, kept as captured (not 1/9).
inline constexpr float kPcfWeight = 0.1111F;

/// A square shadow depth map (reversed-Z unless `greater_equal` is false).
struct ShadowMap {
  std::uint32_t size = 0;        ///< width = height
  std::span<const float> depth;  ///< size × size, row-major, v down
};

struct PcfParams {
  float normal_offset = 0.0F;  ///< world units along the normal before projecting
  Mat4 light_view_projection{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
  /// The shadow sub-region of the map: uv = region.xy + ndc_uv × region.zw.
  Vec4 region{0.0F, 0.0F, 1.0F, 1.0F};
  /// Reversed-Z: a tap passes (is lit) when the surface depth ≥ the stored
  /// depth. False: it passes when ≤.
  bool greater_equal = true;
  /// The taps' rotation in radians (the cascade path's perturbation angle,
  /// cascade_rotation); 0 for the additional shadow map.
  float rotation = 0.0F;
};

/// The pass rate: 0.1111 × the number of lit taps among the centre, the four
/// diagonals (±1, ±1) and the four axial taps (±√2, 0), (0, ±√2) texels
/// (base offset 1 / size). Each tap reads the nearest texel; taps outside the
/// map read its edge. 9 lit taps give 0.9999, not 1 (the frame analysis's
/// constant).
float pcf9(const ShadowMap& map, const Vec3& position, const Vec3& normal, const PcfParams& p);

// ---- cascade selection (§8) -------------------------------------------------

/// The main camera's shadow cascades: four reference centres with squared
/// range thresholds (xyz centre, w = r²).
using CascadeSpheres = std::array<Vec4, 4>;
/// The first level whose sphere holds the position (|p − c|² < r², squared
/// distances, no square root); 4 when none does (outside every cascade: no
/// shadow from the cascades).
std::uint32_t cascade_level(const Vec3& position, const CascadeSpheres& spheres);
/// The perturbation angle of the cascade taps from the projected position in
/// pixels: 2π · fract(52.9829189 · fract(0.06711056 x + 0.00583715 y))
/// (interleaved gradient noise: our reading of "an angle derived from the
/// projected position", docs/render/shading.md).
float cascade_rotation(const Vec2& pixel);

/// How the pass rate shades: 1 when the switch is off, else
/// 1 − strength × (1 − pass × occlusion) (our reading of "combined with the
/// material's occlusion, strength and switch", docs/render/shading.md).
float shadow_visibility(float pass_rate, float occlusion, float strength, bool enabled);

// ---- character LUT (§9) ---------------------------------------------------

/// saturate(log2(colour × exposure × 5.555556 + 0.047996) × 0.0735 + 0.386036)
/// per channel.
Vec3 lut_shape(const Vec3& colour, float exposure);
/// The inverse of lut_shape for a value inside (0, 1): the colour it came
/// from (exposure applied).
Vec3 lut_unshape(const Vec3& shaped, float exposure);

/// A 32-level colour cube laid out as a 1024 × 32 strip: slice s (the slice
/// axis's level) occupies x in [32 s, 32 s + 32), the other two axes are x
/// and y inside it. RGBA, row-major.
struct LutStrip {
  static constexpr std::uint32_t kLevels = 32;
  std::span<const Vec4> texels;  ///< 1024 × 32
  /// Which input channel picks the slices (0 r, 1 g, 2 b: the default);
  /// the two others, in r, g, b order, are the slice's x and y.
  std::uint32_t slice_axis = 2;
};

/// The identity cube: texel (x, y) of slice s holds the coordinates that
/// address it, in the slice axis's order.
void fill_identity_lut(std::span<Vec4> texels, std::uint32_t slice_axis = 2);

/// Looks a shaped colour up: two bilinear samples in the neighbouring
/// slices (texel centres at (i + 0.5) / 32 inside a slice), interpolated by
/// the slice coordinate's fraction.
Vec3 lut_sample(const LutStrip& lut, const Vec3& shaped);

// ---- motion vectors (§7) ---------------------------------------------------

struct MotionEncoding {
  float scale = 0.5F;            ///< applied to the signed square root
  float zero = 127.0F / 255.0F;  ///< what no motion encodes to (≈ 0.498039)
};

/// RG of the second material map: the screen difference of the current and
/// previous clip positions (each divided by w), × (0.5, −0.5) into texture
/// space, then sign(d) √|d| × scale + zero, clamped to [0, 1].
Vec2 encode_motion(const Vec4& clip_now, const Vec4& clip_before, const MotionEncoding& e = {});
/// The texture-space screen difference back from RG.
Vec2 decode_motion(const Vec2& rg, const MotionEncoding& e = {});

// ---- HSV-type shadow colour (§7) -------------------------------------------

struct ShadowColourParams {
  float value_scale = 0.6F;       ///< how much darker the shadow colour is
  float saturation_scale = 1.2F;  ///< how much more saturated
};

/// Hue and saturation from the max / min channel, value = max; the shadow
/// colour keeps the hue, takes saturation × saturation_scale (≤ 1) and
/// value × value_scale, and is rebuilt as RGB.
Vec3 shadow_colour(const Vec3& base, const ShadowColourParams& p = {});

/// RGB ↔ HSV (h in [0, 1), s and v in [0, 1]) from the max and min channels.
Vec3 rgb_to_hsv(const Vec3& rgb);
Vec3 hsv_to_rgb(const Vec3& hsv);

}  // namespace charkit::render
