// A whole frame through the character passes (render/frame.h) on lavapipe
// with the validation layers on: a known camera motion gives the encoded
// motion vector the C++ reference computes, and the test models render with
// the coverage and per-pass pixels expected. Skipped without Vulkan.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <set>

#include "charkit/core/half.h"
#include "charkit/gpu/context.h"
#include "charkit/render/frame.h"
#include "charkit/render/model.h"
#include "charkit/render/shading.h"

namespace charkit::render {
namespace {

class RenderFrame : public ::testing::Test {
 protected:
  void SetUp() override {
    gpu::ContextOptions o;
    o.validation = true;
    auto ctx = gpu::Context::create(o);
    if (!ctx) GTEST_SKIP() << "no Vulkan device: " << ctx.error().message;
    ctx_ = std::move(*ctx);
  }
  void TearDown() override {
    if (!ctx_) return;
    const auto messages = ctx_->validation_messages();
    EXPECT_TRUE(messages.empty()) << (messages.empty() ? "" : messages.front());
  }
  std::unique_ptr<gpu::Context> ctx_;
};

/// A 2 × 2 quad in the z = 0 plane facing +Z.
RenderModel quad() {
  RenderModel m;
  RenderPrimitive p;
  p.pointer = "/meshes/0/primitives/0";
  const float xy[4][2] = {{-1, -1}, {1, -1}, {1, 1}, {-1, 1}};
  for (const auto& c : xy)
    p.vertices.push_back({{c[0], c[1], 0}, {0, 0, 1}, {0, 0}, {c[0], c[1], 0}});
  p.indices = {0, 1, 2, 0, 2, 3};
  p.base_colour = {0.8F, 0.4F, 0.2F, 1.0F};
  m.primitives.push_back(p);
  m.min = {-1, -1, 0};
  m.max = {1, 1, 0};
  return m;
}

/// A size × size frame (and light map) seen from `eye_z` on the Z axis,
/// looking at the origin: the quad fills its centre.
FrameOptions facing_quad(std::uint32_t size, float eye_z = 3.0F, bool shadows = true) {
  FrameOptions o;
  o.width = size;
  o.height = size;
  o.shadow_map_size = size;
  o.shadows = shadows;
  o.camera.eye = {0, 0, eye_z};
  o.camera.target = {0, 0, 0};
  return o;
}

// A camera sliding sideways in front of a fronto-parallel quad moves every
// point of it by the same screen offset: the second material map's RG hold
// encode_motion(now, before) of any of its points (8-bit quantised).
TEST_F(RenderFrame, KnownCameraMotionGivesTheEncodedMotionVector) {
  const RenderModel m = quad();
  FrameOptions o = facing_quad(64);
  Camera before = o.camera;
  before.eye = {-0.08F, 0.05F, 3};
  before.target = {-0.08F, 0.05F, 0};
  o.previous_camera = before;
  auto f = render_frame(*ctx_, m, o);
  ASSERT_TRUE(f) << f.error().message;
  const core::Mat4f now = camera_view_projection(o.camera, 1.0F);
  const core::Mat4f prev = camera_view_projection(before, 1.0F);
  auto clip = [](const core::Mat4f& vp, const core::Vec3f& p) {
    Vec4 c{};
    for (std::size_t r = 0; r < 4; ++r)
      c[r] = vp[r] * p[0] + vp[4 + r] * p[1] + vp[8 + r] * p[2] + vp[12 + r];
    return c;
  };
  const Vec2 want = encode_motion(clip(now, {0.3F, -0.2F, 0}), clip(prev, {0.3F, -0.2F, 0}));
  // The camera moved +x and −y since the previous frame, so the quad moved
  // −x and +y on screen: texture-space (−, −) (y flipped), encoded below the
  // zero 127/255.
  EXPECT_LT(want[0], 0.45F);
  EXPECT_LT(want[1], 0.45F);
  for (std::uint32_t y : {20U, 32U, 40U})
    for (std::uint32_t x : {24U, 32U, 44U}) {
      const std::size_t i = (std::size_t{y} * 64 + x) * 4;
      EXPECT_NEAR(f->material2[i] / 255.0F, want[0], 0.6F / 255.0F) << x << "," << y;
      EXPECT_NEAR(f->material2[i + 1] / 255.0F, want[1], 0.6F / 255.0F) << x << "," << y;
      EXPECT_EQ(f->material2[i + 2] & 8U, 8U);  // the motion flag
    }
  // Without a previous camera the motion is the constant zero.
  o.previous_camera.reset();
  auto still = render_frame(*ctx_, m, o);
  ASSERT_TRUE(still);
  const std::size_t c = (32 * 64 + 32) * 4;
  EXPECT_EQ(still->material2[c], 127);
  EXPECT_EQ(still->material2[c + 1], 127);
  // The quad is lit from the front: its normal map reads (0.5, 0.5, 1).
  EXPECT_NEAR(still->normal[c + 2], 255, 1);
  EXPECT_EQ(still->normal[c + 3], 255);
}

// A posed model: the quad's previous positions one step to the left, the
// camera still: the motion vector is the screen step of the vertices.
TEST_F(RenderFrame, VertexMotionGivesTheEncodedMotionVector) {
  RenderModel m = quad();
  for (RenderVertex& v : m.primitives[0].vertices) v.previous[0] -= 0.1F;
  FrameOptions o = facing_quad(64);
  o.motion = true;
  auto f = render_frame(*ctx_, m, o);
  ASSERT_TRUE(f) << f.error().message;
  const core::Mat4f vp = camera_view_projection(o.camera, 1.0F);
  auto clip = [&](const core::Vec3f& p) {
    Vec4 c{};
    for (std::size_t r = 0; r < 4; ++r)
      c[r] = vp[r] * p[0] + vp[4 + r] * p[1] + vp[8 + r] * p[2] + vp[12 + r];
    return c;
  };
  const Vec2 want = encode_motion(clip({0.2F, 0.1F, 0}), clip({0.1F, 0.1F, 0}));
  EXPECT_GT(want[0], 0.55F);  // moved right: positive x
  EXPECT_NEAR(want[1], 127.0F / 255.0F, 1e-6F);
  const std::size_t i = (32 * 64 + 32) * 4;
  EXPECT_NEAR(f->material2[i] / 255.0F, want[0], 0.6F / 255.0F);
  EXPECT_NEAR(f->material2[i + 1] / 255.0F, want[1], 0.6F / 255.0F);
}

// MToon lighting on a quad facing +Z, the light at a known angle and no
// shadow map: every pixel is mix(shade, base, linearstep(from, to, N·L)) ×
// light + base × ambient + emissive + rim (docs/render/shading.md),
// computed here.
TEST_F(RenderFrame, MToonShadingFollowsItsFormula) {
  RenderModel m = quad();
  MToonShading mt;
  mt.shade_colour = {0.1F, 0.2F, 0.6F};
  mt.shade_from = -0.2F;
  mt.shade_to = 0.4F;
  mt.emissive = {0.02F, 0.03F, 0.04F};
  mt.source = "test";
  m.primitives[0].mtoon = mt;
  FrameOptions o = facing_quad(32, 3.0F, false);
  o.light_colour = {0.9F, 1.0F, 0.8F};
  // The rim light faces the camera here (N·V ≈ 1 at the centre pixel): its
  // fresnel term is clamp(lift, 0, 1)^power; a lift of 1 makes it 1.
  struct Rim {
    core::Vec3f colour;
    float power, lift, mix;
  };
  for (const Rim& rim :
       {Rim{{0, 0, 0}, 5.0F, 0.0F, 1.0F}, Rim{{0.5F, 0.25F, 1.0F}, 2.0F, 0.3F, 0.5F},
        Rim{{0.2F, 0.4F, 0.1F}, 3.0F, 1.0F, 0.0F}}) {
    mt.rim_colour = rim.colour;
    mt.rim_fresnel_power = rim.power;
    mt.rim_lift = rim.lift;
    mt.rim_lighting_mix = rim.mix;
    m.primitives[0].mtoon = mt;
    for (float ndl : {0.1F, -0.5F, 0.7F, 0.0F}) {
      o.light_direction = {0.0F, std::sqrt(1.0F - ndl * ndl), ndl};
      auto f = render_frame(*ctx_, m, o);
      ASSERT_TRUE(f) << f.error().message;
      const float lit =
          std::clamp((ndl - mt.shade_from) / (mt.shade_to - mt.shade_from), 0.0F, 1.0F);
      const float fresnel = std::pow(std::clamp(rim.lift, 0.0F, 1.0F), rim.power);
      const std::size_t i = (16 * 32 + 16) * 4;
      for (std::size_t c = 0; c < 3; ++c) {
        const float base = m.primitives[0].base_colour[c];
        const float received = o.light_colour[c] * lit + o.ambient[c];
        const float want =
            (mt.shade_colour[c] + (base - mt.shade_colour[c]) * lit) * o.light_colour[c] +
            base * o.ambient[c] + mt.emissive[c] +
            rim.colour[c] * fresnel * (1.0F + (received - 1.0F) * rim.mix);
        EXPECT_NEAR(core::half_to_float(f->hdr[i + c]), want, 2e-3F * std::max(1.0F, want))
            << "N.L " << ndl << " channel " << c << " rim lift " << rim.lift;
      }
    }
  }
  // The emissive and rim textures multiply their colours (sRGB-decoded): a
  // 1 × 1 texture of sRGB 128 is 0.2158 linear.
  scene::RgbaImage grey;
  grey.width = grey.height = 1;
  grey.pixels = {128, 128, 128, 255};
  m.images.push_back(grey);
  mt.emissive_texture = 0;
  mt.rim_texture = 0;
  mt.rim_colour = {0.5F, 0.25F, 1.0F};
  mt.rim_lift = 1.0F;
  mt.rim_lighting_mix = 0.0F;
  m.primitives[0].mtoon = mt;
  o.light_direction = {0.0F, 0.0F, 1.0F};
  auto f = render_frame(*ctx_, m, o);
  ASSERT_TRUE(f) << f.error().message;
  const float g = std::pow((128.0F / 255.0F + 0.055F) / 1.055F, 2.4F);
  const std::size_t i = (16 * 32 + 16) * 4;
  for (std::size_t c = 0; c < 3; ++c) {
    const float base = m.primitives[0].base_colour[c];
    const float want =
        base * o.light_colour[c] + base * o.ambient[c] + (mt.emissive[c] + mt.rim_colour[c]) * g;
    EXPECT_NEAR(core::half_to_float(f->hdr[i + c]), want, 2e-3F * std::max(1.0F, want)) << c;
  }
  // The matcap adds its colour × its texture (read at the view-space
  // normal: the centre of a texture here) to the rim; the shading shift
  // texture's red channel × its scale is added to N·L (raw, not decoded).
  mt.matcap_texture = 0;
  mt.matcap_colour = {0.3F, 0.6F, 0.9F};
  mt.shift_texture = 0;
  mt.shift_scale = 0.4F;
  m.primitives[0].mtoon = mt;
  o.light_direction = {0.0F, std::sqrt(1.0F - 0.01F), 0.1F};
  auto shifted = render_frame(*ctx_, m, o);
  ASSERT_TRUE(shifted) << shifted.error().message;
  const float ndl = 0.1F + 128.0F / 255.0F * 0.4F;
  const float lit = std::clamp((ndl - mt.shade_from) / (mt.shade_to - mt.shade_from), 0.0F, 1.0F);
  for (std::size_t c = 0; c < 3; ++c) {
    const float base = m.primitives[0].base_colour[c];
    const float want =
        (mt.shade_colour[c] + (base - mt.shade_colour[c]) * lit) * o.light_colour[c] +
        base * o.ambient[c] + mt.emissive[c] * g + (mt.rim_colour[c] + mt.matcap_colour[c] * g) * g;
    EXPECT_NEAR(core::half_to_float(shifted->hdr[i + c]), want, 2e-3F * std::max(1.0F, want)) << c;
  }
}

// Without MToon a primitive follows its glTF material: unlit gives the base
// colour; metallic-roughness gives glTF's BRDF. Lit and seen head-on at
// roughness 1 (α = 1: D = 1/π, Vis = 1/4, F = f0), a metal returns base / 4
// of the light and nothing of the ambient; a dielectric 0.96 × base + 0.01
// of the light (diffuse under the 0.04 Fresnel, plus the specular lobe) and
// base × (1 − 0.01647) of the ambient (the dielectric layer's albedo by
// Karis's fit, 0.015696, with the multiple-scattering term 0.000777).
TEST_F(RenderFrame, GltfMaterialsUnlitAndMetallicRoughness) {
  RenderModel m = quad();
  FrameOptions o = facing_quad(32, 3.0F, false);
  o.light_direction = {0, 0, 1};
  o.light_colour = {0.9F, 1.0F, 0.8F};
  struct Case {
    bool unlit;
    float metallic;
    float light, ambient, offset;  // want = base × (light × L + ambient × A) + offset × L
  };
  for (const Case& k : {Case{true, 0.0F, 0, 0, 0}, Case{false, 1.0F, 0.25F, 0.0F, 0.0F},
                        Case{false, 0.0F, 0.96F, 1.0F - 0.016473F, 0.01F}}) {
    m.primitives[0].unlit = k.unlit;
    m.primitives[0].metallic = k.metallic;
    m.primitives[0].roughness = 1.0F;
    auto f = render_frame(*ctx_, m, o);
    ASSERT_TRUE(f) << f.error().message;
    const std::size_t i = (16 * 32 + 16) * 4;
    for (std::size_t c = 0; c < 3; ++c) {
      const float base = m.primitives[0].base_colour[c];
      const float want = k.unlit ? base
                                 : base * (k.light * o.light_colour[c] + k.ambient * o.ambient[c]) +
                                       k.offset * o.light_colour[c];
      EXPECT_NEAR(core::half_to_float(f->hdr[i + c]), want, 2e-3F)
          << "unlit " << k.unlit << " metallic " << k.metallic << " channel " << c;
    }
  }
}

// The pipelines do not cull; a single-sided primitive's back faces are
// dropped by the fragment program, a double-sided one's are drawn.
TEST_F(RenderFrame, SingleSidedPrimitivesDropTheirBackFaces) {
  RenderModel m = quad();
  FrameOptions o = facing_quad(16, -3.0F, false);  // behind the quad, which faces +Z
  for (bool two_sided : {true, false}) {
    m.primitives[0].double_sided = two_sided;
    auto f = render_frame(*ctx_, m, o);
    ASSERT_TRUE(f) << f.error().message;
    EXPECT_EQ(f->stats.character_pixels, two_sided ? 16U * 16U : 0U) << two_sided;
  }
}

/// A UV sphere of `radius` about the origin with radial normals.
RenderModel sphere(float radius, int rings = 32, int segments = 64) {
  RenderModel m;
  RenderPrimitive p;
  p.pointer = "/meshes/0/primitives/0";
  constexpr float kPi = 3.14159265358979F;
  for (int i = 0; i <= rings; ++i) {
    const float theta = kPi * static_cast<float>(i) / static_cast<float>(rings);
    for (int j = 0; j <= segments; ++j) {
      const float phi = 2.0F * kPi * static_cast<float>(j) / static_cast<float>(segments);
      const float n[3] = {std::sin(theta) * std::sin(phi), std::cos(theta),
                          std::sin(theta) * std::cos(phi)};
      p.vertices.push_back({{radius * n[0], radius * n[1], radius * n[2]},
                            {n[0], n[1], n[2]},
                            {0.5F, 0.5F},
                            {radius * n[0], radius * n[1], radius * n[2]}});
    }
  }
  const auto at = [&](int i, int j) { return static_cast<std::uint32_t>(i * (segments + 1) + j); };
  for (int i = 0; i < rings; ++i)
    for (int j = 0; j < segments; ++j) {  // counter-clockwise seen from outside
      p.indices.insert(p.indices.end(), {at(i, j), at(i + 1, j), at(i + 1, j + 1)});
      p.indices.insert(p.indices.end(), {at(i, j), at(i + 1, j + 1), at(i, j + 1)});
    }
  p.base_colour = {0.8F, 0.4F, 0.2F, 1.0F};
  p.double_sided = false;
  m.primitives.push_back(p);
  m.min = {-radius, -radius, -radius};
  m.max = {radius, radius, radius};
  return m;
}

// MToon's outline on a sphere of radius r seen from distance D: the ring
// between the sphere's silhouette and the hull's, on the centre row, has the
// width the camera's projection predicts, and the outline colour × mix(1,
// the surface colour, lighting mix). Light colour 0: the MToon colour is
// base × ambient everywhere, so the ring's colour is known exactly.
TEST_F(RenderFrame, OutlineRingHasThePredictedWidthAndColour) {
  constexpr float r = 0.5F, D = 3.0F, kPi = 3.14159265358979F;
  constexpr std::uint32_t N = 128;
  RenderModel m = sphere(r);
  MToonShading mt;
  mt.source = "test";
  mt.shade_colour = {0.3F, 0.3F, 0.3F};
  mt.outline_colour = {0.1F, 0.9F, 0.3F};
  mt.outline_lighting_mix = 0.0F;
  FrameOptions o = facing_quad(N, D, false);
  o.light_colour = {0, 0, 0};
  o.ambient = {0.5F, 0.5F, 0.5F};
  const float t = std::tan(15.0F * kPi / 180.0F);
  // Pixel radius of a sphere's silhouette (a cone of half-angle asin(R/D)).
  const auto sphere_px = [&](float radius) {
    return N / 2.0F * std::tan(std::asin(radius / D)) / t;
  };
  // Screen coordinates: the silhouette point P (in the y = 0 plane), pushed
  // along its normal by width × its view depth × tan(fov / 2), projected.
  const auto screen_px = [&](float width) {
    const float px = r * std::sqrt(1.0F - (r / D) * (r / D)), pz = r * r / D;
    const float push = width * (D - pz) * t;
    const float x = px + px / r * push, z = pz + pz / r * push;
    return N / 2.0F * x / (D - z) / t;
  };
  struct Case {
    MToonShading::OutlineMode mode;
    float width, texture_green;  // texture_green < 0: no width texture
    float outer_px;
  };
  const Case cases[] = {
      {MToonShading::OutlineMode::kWorld, 0.05F, -1.0F, sphere_px(r + 0.05F)},
      {MToonShading::OutlineMode::kWorld, 0.05F, 128.0F, sphere_px(r + 0.05F * 128.0F / 255.0F)},
      {MToonShading::OutlineMode::kScreen, 0.06F, -1.0F, screen_px(0.06F)},
  };
  const float inner_px = sphere_px(r);
  const auto hdr = [](const Frame& f, std::uint32_t x, std::uint32_t y, std::size_t c) {
    return core::half_to_float(f.hdr[(std::size_t{y} * N + x) * 4 + c]);
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.mode == MToonShading::OutlineMode::kWorld ? "world" : "screen");
    mt.outline_mode = k.mode;
    mt.outline_width = k.width;
    m.images.clear();
    mt.outline_width_texture.reset();
    if (k.texture_green >= 0.0F) {
      scene::RgbaImage g;
      g.width = g.height = 1;
      g.pixels = {0, static_cast<std::uint8_t>(k.texture_green), 0, 255};
      m.images.push_back(g);
      mt.outline_width_texture = 0;
    }
    m.primitives[0].mtoon = mt;
    auto f = render_frame(*ctx_, m, o);
    ASSERT_TRUE(f) << f.error().message;
    EXPECT_EQ(f->stats.outline_draws, 1U);
    // The centre row (pixel centres 0.5 px below the axis: negligible).
    int ring = 0, outermost = 0, innermost = N;
    for (std::uint32_t x = 0; x < N / 2; ++x) {
      const float off = N / 2.0F - (static_cast<float>(x) + 0.5F);
      const bool is_outline = hdr(*f, x, N / 2, 3) == 1.0F &&
                              std::fabs(hdr(*f, x, N / 2, 1) - 0.9F) < 2e-3F &&
                              std::fabs(hdr(*f, x, N / 2, 0) - 0.1F) < 2e-3F;
      const bool is_sphere = std::fabs(hdr(*f, x, N / 2, 0) - 0.4F) < 2e-3F &&
                             std::fabs(hdr(*f, x, N / 2, 1) - 0.2F) < 2e-3F;
      EXPECT_TRUE(is_outline || is_sphere || hdr(*f, x, N / 2, 3) == 0.0F) << x;
      if (!is_outline) continue;
      ++ring;
      outermost = std::max(outermost, static_cast<int>(std::ceil(off)));
      innermost = std::min(innermost, static_cast<int>(std::floor(off)));
    }
    EXPECT_NEAR(ring, k.outer_px - inner_px, 1.0)
        << "predicted " << inner_px << " to " << k.outer_px << " px";
    EXPECT_NEAR(outermost, k.outer_px, 1.0);
    EXPECT_NEAR(innermost, inner_px, 1.0);
  }
  // The lighting mix: outline × mix(1, base × ambient, 0.5).
  mt.outline_mode = MToonShading::OutlineMode::kWorld;
  mt.outline_width = 0.05F;
  mt.outline_width_texture.reset();
  mt.outline_lighting_mix = 0.5F;
  m.primitives[0].mtoon = mt;
  auto mixed = render_frame(*ctx_, m, o);
  ASSERT_TRUE(mixed) << mixed.error().message;
  const auto x = static_cast<std::uint32_t>(N / 2.0F - (inner_px + sphere_px(r + 0.05F)) / 2.0F);
  for (std::size_t c = 0; c < 3; ++c) {
    const float surface = m.primitives[0].base_colour[c] * o.ambient[c];
    EXPECT_NEAR(hdr(*mixed, x, N / 2, c), mt.outline_colour[c] * (0.5F + 0.5F * surface), 2e-3F)
        << c;
  }
  // Outlines off: the sphere alone, no outline colour anywhere.
  o.outlines = false;
  auto off = render_frame(*ctx_, m, o);
  ASSERT_TRUE(off) << off.error().message;
  EXPECT_EQ(off->stats.outline_draws, 0U);
  EXPECT_LT(off->stats.character_pixels, mixed->stats.character_pixels);
  const double disc = kPi * inner_px * inner_px;
  EXPECT_NEAR(static_cast<double>(off->stats.character_pixels), disc, 0.02 * disc);
}

// MToon's UV animation at --frame N (time N / fps): a texture scrolled at
// 0.25 texture widths a second, rendered at frames 6 and 18 at 30 fps, moves
// by 0.25 × 12 / 30 = 0.1 of the texture; on a quad that spans the 80-pixel
// image with u from 0 to 1 that is 8 pixels: the later image at x is the
// earlier at x + 8 (sampling u + offset shows the texture moving left).
// A mask texture of blue 0 holds it still.
TEST_F(RenderFrame, UvScrollMovesTheTextureByThePredictedTexels) {
  constexpr std::uint32_t W = 80;
  RenderModel m = quad();
  for (RenderVertex& v : m.primitives[0].vertices) {
    v.uv[0] = (v.position[0] + 1.0F) / 2.0F;
    v.uv[1] = (1.0F - v.position[1]) / 2.0F;
  }
  m.primitives[0].base_colour = {1, 1, 1, 1};
  scene::RgbaImage ramp;  // 16 × 1, a different colour in each texel
  ramp.width = 16;
  ramp.height = 1;
  for (std::uint8_t i = 0; i < 16; ++i)
    ramp.pixels.insert(ramp.pixels.end(), {static_cast<std::uint8_t>(i * 16 + 8),
                                           static_cast<std::uint8_t>(255 - i * i),
                                           static_cast<std::uint8_t>((i * 97) % 256), 255});
  m.images.push_back(ramp);
  m.primitives[0].base_texture = 0;
  MToonShading mt;
  mt.source = "test";
  mt.uv_scroll_x = 0.25F;
  m.primitives[0].mtoon = mt;
  // The quad fills the image: eye at 1 / tan(15°) with a 30° field of view.
  FrameOptions o = facing_quad(W, 1.0F / std::tan(15.0F * 3.14159265358979F / 180.0F), false);
  o.light_colour = {0, 0, 0};
  o.ambient = {1, 1, 1};
  const auto at = [&](double frame) {
    o.time = frame / 30.0;
    auto f = render_frame(*ctx_, m, o);
    EXPECT_TRUE(f) << f.error().message;
    return f ? f->hdr : std::vector<std::uint16_t>{};
  };
  const auto early = at(6), late = at(18);
  ASSERT_FALSE(early.empty());
  ASSERT_FALSE(late.empty());
  const std::uint32_t y = W / 2;
  const auto px = [&](const std::vector<std::uint16_t>& h, std::uint32_t x, std::size_t c) {
    return core::half_to_float(h[(std::size_t{y} * W + x) * 4 + c]);
  };
  float moved = 0.0F;
  // Away from the wrap (u + 0.15 past 1 at x > 68) and the texture's clamped ends.
  for (std::uint32_t x = 4; x < 60; ++x)
    for (std::size_t c = 0; c < 3; ++c) {
      EXPECT_NEAR(px(late, x, c), px(early, x + 8, c), 2e-3F) << x << " channel " << c;
      moved = std::max(moved, std::fabs(px(late, x, c) - px(early, x, c)));
    }
  EXPECT_GT(moved, 0.05F);  // the two frames differ where they are compared
  // A mask of blue 0: no motion, frame 18 as frame 0.
  scene::RgbaImage still;
  still.width = still.height = 1;
  still.pixels = {255, 255, 0, 255};
  m.images.push_back(still);
  m.primitives[0].mtoon->uv_mask_texture = 1;
  const auto masked = at(18), rest = at(0);
  ASSERT_FALSE(masked.empty());
  EXPECT_EQ(masked, rest);
}

TEST_F(RenderFrame, GodetteRendersWithFaceAndShadow) {
  auto doc = scene::GltfDocument::load_file(
      (std::filesystem::path(CHARKIT_TEST_DATA) / "models" / "Godette_vrm_v4.vrm").string());
  ASSERT_TRUE(doc);
  auto m = load_render_model(*doc);
  ASSERT_TRUE(m);
  FrameOptions o;
  o.width = 128;
  o.height = 160;
  o.shadow_map_size = 512;
  o.camera = framing_camera(*m, 128.0F / 160.0F);
  o.light_direction = {0.4F, 0.7F, -0.6F};
  auto f = render_frame(*ctx_, *m, o);
  ASSERT_TRUE(f) << f.error().message;
  const FrameStats& s = f->stats;
  const double coverage = static_cast<double>(s.character_pixels) / static_cast<double>(s.pixels);
  EXPECT_GT(coverage, 0.08);  // the framed T-pose fills a fair part of the image
  EXPECT_LT(coverage, 0.5);
  EXPECT_GT(s.face_pixels, 50U);
  EXPECT_LT(s.face_pixels, s.character_pixels);
  EXPECT_GT(s.shadow_map_pixels, 1000U);
  EXPECT_EQ(s.draws[1], 1U);  // one face primitive
  // Only the table's stencil values appear: background, character, face.
  const std::set<std::uint8_t> values(f->stencil.begin(), f->stencil.end());
  EXPECT_EQ(values, (std::set<std::uint8_t>{0x00, 0x80, 0x84}));
  // Not blank: every character pixel has colour with alpha 1.
  std::uint64_t opaque = 0;
  for (std::size_t i = 0; i < f->stencil.size(); ++i)
    if ((f->stencil[i] & 0x80) != 0 && core::half_to_float(f->hdr[4 * i + 3]) == 1.0F) ++opaque;
  EXPECT_EQ(opaque, s.character_pixels);
  const scene::RgbaImage img = tone_map(*f);
  EXPECT_EQ(img.width, 128U);
  EXPECT_EQ(img.pixels.size(), 128U * 160U * 4U);
}

}  // namespace
}  // namespace charkit::render
