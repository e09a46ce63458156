// The character shading functions (render/shading.h) against values worked
// out by hand from the formulas of the character-rendering frame analysis: a
// shadow edge through the 9-tap kernel, the LUT shaper and an identity LUT, a
// known screen motion, and the HSV shadow colour.
#include "charkit/render/shading.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace charkit::render {
namespace {

/// A 2048² map whose columns < 1024 hold an occluder at depth 1 (nearest,
/// reversed-Z) and the rest nothing (depth 0).
std::vector<float> edge_map() {
  std::vector<float> d(2048u * 2048u, 0.0F);
  for (std::size_t y = 0; y < 2048; ++y)
    for (std::size_t x = 0; x < 1024; ++x) d[y * 2048 + x] = 1.0F;
  return d;
}

/// The NDC x of texel column c's centre.
float ndc_of_column(float c) {
  return 2.0F * (c + 0.5F) / 2048.0F - 1.0F;
}

TEST(Pcf9, AShadowEdgeGivesSixNinths) {
  const std::vector<float> depth = edge_map();
  const ShadowMap map{2048, depth};
  PcfParams p;  // identity light transform: NDC = world
  // Centre on column 1024, the first lit one: the taps at −1 and −√2 texels
  // (two diagonals and one axial) fall in column 1023, in shadow.
  const float y = ndc_of_column(700);
  const float pass = pcf9(map, {ndc_of_column(1024), y, 0.5F}, {0, 0, 0}, p);
  EXPECT_FLOAT_EQ(pass, 6.0F * 0.1111F);
  // Well inside the lit side: 9 × 0.1111 = 0.9999 (the frame analysis's
  // constant, not 1).
  EXPECT_FLOAT_EQ(pcf9(map, {ndc_of_column(1500), y, 0.5F}, {0, 0, 0}, p), 0.9999F);
  // Inside the shadow: 0.
  EXPECT_EQ(pcf9(map, {ndc_of_column(200), y, 0.5F}, {0, 0, 0}, p), 0.0F);
  // One column further in shadow (1023): only the +1 and +√2 taps are lit.
  EXPECT_FLOAT_EQ(pcf9(map, {ndc_of_column(1023), y, 0.5F}, {0, 0, 0}, p), 3.0F * 0.1111F);
  // The normal offset moves the lookup before projecting: 3 texels along +x
  // from column 1021 lands on 1024 again.
  p.normal_offset = 3.0F * 2.0F / 2048.0F;
  EXPECT_FLOAT_EQ(pcf9(map, {ndc_of_column(1021), y, 0.5F}, {1, 0, 0}, p), 6.0F * 0.1111F);
  // Forward Z: a surface at 0.5 against an occluder at 1 is lit.
  PcfParams forward;
  forward.greater_equal = false;
  EXPECT_FLOAT_EQ(pcf9(map, {ndc_of_column(200), y, 0.5F}, {0, 0, 0}, forward), 0.9999F);
}

// The cascade path rotates the taps. The eight outer taps sit at radius √2,
// 45° apart, so a quarter-turn multiple maps the kernel onto itself; at 22.5°
// their x offsets are ±1.307 and ±0.541 texels, so at column 1024 four fall
// in column 1023 (shadow) and five taps stay lit.
TEST(Pcf9, RotatedTaps) {
  const std::vector<float> depth = edge_map();
  const ShadowMap map{2048, depth};
  PcfParams p;
  const float y = ndc_of_column(700);
  p.rotation = 3.14159265F / 4.0F;
  EXPECT_FLOAT_EQ(pcf9(map, {ndc_of_column(1024), y, 0.5F}, {0, 0, 0}, p), 6.0F * 0.1111F);
  p.rotation = 3.14159265F / 8.0F;
  EXPECT_FLOAT_EQ(pcf9(map, {ndc_of_column(1024), y, 0.5F}, {0, 0, 0}, p), 5.0F * 0.1111F);
}

// Cascade selection: the first sphere holding the point, by squared
// distance; 4 outside all.
TEST(Cascades, LevelFromSquaredDistances) {
  const CascadeSpheres s = {{{0, 0, 0, 1}, {0.5F, 0, 0, 4}, {1, 0.5F, 0, 16}, {2, 1, 0.5F, 64}}};
  EXPECT_EQ(cascade_level({0.5F, 0, 0}, s), 0U);     // d² = 0.25 < 1
  EXPECT_EQ(cascade_level({1.0F, 0, 0}, s), 1U);     // d² = 1, not < 1; 0.25 < 4
  EXPECT_EQ(cascade_level({3.0F, 0, 0}, s), 2U);     // 9, 6.25, then 4.25 < 16
  EXPECT_EQ(cascade_level({9.0F, 1, 0.5F}, s), 3U);  // 49 < 64
  EXPECT_EQ(cascade_level({20.0F, 0, 0}, s), 4U);
  // The perturbation angle: 2π·fract(52.9829189·fract(0.06711056·x + 0.00583715·y)).
  EXPECT_FLOAT_EQ(cascade_rotation({0, 0}), 0.0F);
  EXPECT_NEAR(cascade_rotation({1, 0}), 3.49165F, 1e-4);
  EXPECT_NEAR(cascade_rotation({10.5F, 3.5F}), 2.62281F, 1e-3);
}

TEST(Pcf9, VisibilityCombinesOcclusionStrengthAndSwitch) {
  EXPECT_EQ(shadow_visibility(0.0F, 1.0F, 1.0F, false), 1.0F);
  EXPECT_FLOAT_EQ(shadow_visibility(0.0F, 1.0F, 1.0F, true), 0.0F);
  EXPECT_FLOAT_EQ(shadow_visibility(0.0F, 1.0F, 0.25F, true), 0.75F);
  EXPECT_FLOAT_EQ(shadow_visibility(0.5F, 0.5F, 1.0F, true), 0.25F);
}

TEST(CharacterLut, ShaperFormulaByHand) {
  // 0.18 grey, exposure 1: log2(0.18 × 5.555556 + 0.047996) × 0.0735 + 0.386036.
  const double want = std::log2(0.18 * 5.555556 + 0.047996) * 0.0735 + 0.386036;
  const Vec3 s = lut_shape({0.18F, 0.18F, 0.18F}, 1.0F);
  EXPECT_NEAR(s[0], want, 1e-6);
  EXPECT_NEAR(s[0], 0.39101, 1e-4);
  // Exposure scales the colour first; the result saturates.
  EXPECT_NEAR(lut_shape({0.09F, 0, 0}, 2.0F)[0], s[0], 1e-6);
  // Black is not 0: log2(0.047996) × 0.0735 + 0.386036 ≈ 0.0640.
  EXPECT_NEAR(lut_shape({0, 0, 0}, 1.0F)[0], std::log2(0.047996) * 0.0735 + 0.386036, 1e-6);
  EXPECT_EQ(lut_shape({1e6F, 0, 0}, 1.0F)[0], 1.0F);
}

TEST(CharacterLut, IdentityLutReturnsTheShapedInput) {
  std::vector<Vec4> texels(1024u * 32u);
  for (std::uint32_t axis = 0; axis < 3; ++axis) {
    fill_identity_lut(texels, axis);
    const LutStrip lut{texels, axis};
    std::mt19937 rng(axis + 1);
    std::uniform_real_distribution<float> u(0.01F, 4.0F);
    for (int i = 0; i < 200; ++i) {
      const Vec3 colour{u(rng), u(rng), u(rng)};
      const Vec3 shaped = lut_shape(colour, 1.0F);
      const Vec3 out = lut_sample(lut, shaped);
      const Vec3 back = lut_unshape(out, 1.0F);
      for (std::size_t c = 0; c < 3; ++c) {
        EXPECT_NEAR(out[c], shaped[c], 2e-6) << "axis " << axis;
        EXPECT_NEAR(back[c], colour[c], 2e-4F * colour[c]) << "axis " << axis;
      }
    }
  }
}

TEST(CharacterLut, SlicesAreInterpolatedByTheFraction) {
  // A cube whose red output is the slice level only (blue picks slices):
  // halfway between slices 3 and 4 gives (3.5 / 31).
  std::vector<Vec4> texels(1024u * 32u);
  for (std::size_t y = 0; y < 32; ++y)
    for (std::size_t x = 0; x < 1024; ++x)
      texels[y * 1024 + x] = {static_cast<float>(x / 32) / 31.0F, 0, 0, 1};
  const LutStrip lut{texels, 2};
  const Vec3 out = lut_sample(lut, {0.7F, 0.2F, 3.5F / 31.0F});
  EXPECT_NEAR(out[0], 3.5F / 31.0F, 1e-6);
}

TEST(MotionVectors, KnownMotionEncodesAndDecodes) {
  // Clip positions (0.4, 0.2, 0, 2) now and (0, 0, 0, 1) before: NDC moves
  // by (0.2, 0.1), texture space by (0.1, −0.05); encoded as
  // ±√|d| × 0.5 + 127/255.
  const Vec2 rg = encode_motion({0.4F, 0.2F, 0.0F, 2.0F}, {0.0F, 0.0F, 0.0F, 1.0F});
  EXPECT_NEAR(rg[0], std::sqrt(0.1) * 0.5 + 127.0 / 255.0, 1e-6);
  EXPECT_NEAR(rg[1], -std::sqrt(0.05) * 0.5 + 127.0 / 255.0, 1e-6);
  const Vec2 d = decode_motion(rg);
  EXPECT_NEAR(d[0], 0.1F, 1e-6);
  EXPECT_NEAR(d[1], -0.05F, 1e-6);
  // No motion: the zero ≈ 0.498039.
  const Vec2 zero = encode_motion({0.3F, -0.2F, 0.5F, 1.0F}, {0.3F, -0.2F, 0.1F, 1.0F});
  EXPECT_FLOAT_EQ(zero[0], 127.0F / 255.0F);
  EXPECT_FLOAT_EQ(zero[1], 127.0F / 255.0F);
  EXPECT_NEAR(zero[0], 0.498039, 1e-6);
}

TEST(ShadowColour, HsvByHand) {
  EXPECT_EQ(rgb_to_hsv({1, 0, 0}), (Vec3{0, 1, 1}));
  // (0.8, 0.4, 0.2): max 0.8, min 0.2, chroma 0.6; hue (0.4 − 0.2) / 0.6 / 6,
  // saturation 0.75. Shadow: saturation 0.9, value 0.48 → (0.48, 0.192, 0.048).
  const Vec3 s = shadow_colour({0.8F, 0.4F, 0.2F});
  EXPECT_NEAR(s[0], 0.48F, 1e-6);
  EXPECT_NEAR(s[1], 0.192F, 1e-6);
  EXPECT_NEAR(s[2], 0.048F, 1e-6);
  // Saturation is capped at 1; grey stays grey (hue undefined → 0).
  EXPECT_EQ(shadow_colour({1, 0, 0}), (Vec3{0.6F, 0, 0}));
  const Vec3 g = shadow_colour({0.5F, 0.5F, 0.5F});
  EXPECT_FLOAT_EQ(g[0], 0.3F);
  EXPECT_FLOAT_EQ(g[2], 0.3F);
  // RGB → HSV → RGB round trip.
  std::mt19937 rng(4);
  std::uniform_real_distribution<float> u(0.0F, 1.0F);
  for (int i = 0; i < 500; ++i) {
    const Vec3 c{u(rng), u(rng), u(rng)};
    const Vec3 back = hsv_to_rgb(rgb_to_hsv(c));
    for (std::size_t k = 0; k < 3; ++k) EXPECT_NEAR(back[k], c[k], 1e-5);
  }
}

}  // namespace
}  // namespace charkit::render
