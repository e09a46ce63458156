// The GLSL shading functions (render/shaders/shading.glsl) in the compute
// harness on the GPU backend, held to the C++ references within 1e-5 on the
// same random inputs. Skipped where no Vulkan device exists.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "charkit/core/half.h"
#include "charkit/gpu/context.h"
#include "charkit/render/shading.h"
#include "charkit/render/shading_gpu.h"

namespace charkit::render {
namespace {

class ShadingGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    gpu::ContextOptions o;
    o.validation = true;
    auto c = gpu::Context::create(o);
    if (!c) GTEST_SKIP() << "no Vulkan device: " << c.error().message;
    ctx_ = std::move(*c);
  }
  void TearDown() override {
    if (ctx_) {
      const auto messages = ctx_->validation_messages();
      EXPECT_TRUE(messages.empty()) << messages.front();
    }
  }
  std::vector<Vec4> run(ShadingFunction f, const std::vector<Vec4>& a, const std::vector<Vec4>& b,
                        Vec2 params) {
    auto r = run_shading_function(*ctx_, f, a, b, params);
    EXPECT_TRUE(static_cast<bool>(r)) << (r ? "" : r.error().message);
    return r ? *r : std::vector<Vec4>(a.size());
  }
  std::unique_ptr<gpu::Context> ctx_;
  std::mt19937 rng_{12};
};

TEST_F(ShadingGpu, LutShaperMatchesTheCpu) {
  std::uniform_real_distribution<float> u(0.0F, 8.0F);
  std::vector<Vec4> a(1000);
  for (auto& v : a) v = {u(rng_), u(rng_), u(rng_), 0};
  const auto out = run(ShadingFunction::kLutShape, a, {}, {1.7F, 0});
  for (std::size_t i = 0; i < a.size(); ++i) {
    const Vec3 want = lut_shape({a[i][0], a[i][1], a[i][2]}, 1.7F);
    for (std::size_t c = 0; c < 3; ++c) ASSERT_NEAR(out[i][c], want[c], 1e-5) << i;
  }
}

TEST_F(ShadingGpu, MotionVectorsMatchTheCpu) {
  std::uniform_real_distribution<float> u(-1.0F, 1.0F);
  std::uniform_real_distribution<float> w(0.5F, 3.0F);
  std::vector<Vec4> now(1000), before(1000), rg(1000);
  for (std::size_t i = 0; i < now.size(); ++i) {
    now[i] = {u(rng_), u(rng_), u(rng_), w(rng_)};
    before[i] = {u(rng_), u(rng_), u(rng_), w(rng_)};
  }
  const MotionEncoding e;
  const auto enc = run(ShadingFunction::kEncodeMotion, now, before, {e.scale, e.zero});
  for (std::size_t i = 0; i < now.size(); ++i) {
    const Vec2 want = encode_motion(now[i], before[i], e);
    ASSERT_NEAR(enc[i][0], want[0], 1e-5) << i;
    ASSERT_NEAR(enc[i][1], want[1], 1e-5) << i;
    rg[i] = {want[0], want[1], 0, 0};
  }
  const auto dec = run(ShadingFunction::kDecodeMotion, rg, {}, {e.scale, e.zero});
  for (std::size_t i = 0; i < rg.size(); ++i) {
    const Vec2 want = decode_motion({rg[i][0], rg[i][1]}, e);
    ASSERT_NEAR(dec[i][0], want[0], 1e-5) << i;
    ASSERT_NEAR(dec[i][1], want[1], 1e-5) << i;
  }
}

TEST_F(ShadingGpu, ShadowColourAndVisibilityMatchTheCpu) {
  std::uniform_real_distribution<float> u(0.0F, 1.0F);
  std::vector<Vec4> a(1000), vis(1000);
  for (std::size_t i = 0; i < a.size(); ++i) {
    a[i] = {u(rng_), u(rng_), u(rng_), 0};
    vis[i] = {u(rng_), u(rng_), u(rng_), i % 3 == 0 ? 0.0F : 1.0F};
  }
  a[0] = {0.5F, 0.5F, 0.5F, 0};  // grey: hue undefined
  a[1] = {1.0F, 0.0F, 0.0F, 0};
  const ShadowColourParams p;
  const auto out = run(ShadingFunction::kShadowColour, a, {}, {p.value_scale, p.saturation_scale});
  for (std::size_t i = 0; i < a.size(); ++i) {
    const Vec3 want = shadow_colour({a[i][0], a[i][1], a[i][2]}, p);
    for (std::size_t c = 0; c < 3; ++c) ASSERT_NEAR(out[i][c], want[c], 1e-5) << i;
  }
  const auto v = run(ShadingFunction::kVisibility, vis, {}, {0, 0});
  for (std::size_t i = 0; i < vis.size(); ++i)
    ASSERT_NEAR(v[i][0], shadow_visibility(vis[i][0], vis[i][1], vis[i][2], vis[i][3] != 0.0F),
                1e-6)
        << i;
}

// The 9-tap PCF reading a 64 × 64 D32F map (random depths around the
// surfaces' light depths, so taps split between lit and shadowed) through a
// sub-region, with a normal offset, unrotated and rotated.
TEST_F(ShadingGpu, Pcf9MatchesTheCpu) {
  constexpr std::uint32_t size = 64;
  std::uniform_real_distribution<float> d(0.3F, 0.7F);
  std::vector<float> depth(size * size);
  for (float& x : depth) x = d(rng_);
  auto img = ctx_->create_image(size, size, gpu::ImageFormat::kDepth32);
  ASSERT_TRUE(img);
  std::vector<std::uint8_t> bytes(depth.size() * 4);
  std::memcpy(bytes.data(), depth.data(), bytes.size());
  ASSERT_TRUE(ctx_->write_image(*img, bytes));
  std::uniform_real_distribution<float> u(-1.0F, 1.0F);
  std::vector<Vec4> pos(1000), nrm(1000);
  for (std::size_t i = 0; i < pos.size(); ++i) {
    pos[i] = {u(rng_), u(rng_), 0.5F + 0.2F * u(rng_), 0};
    Vec3 n{u(rng_), u(rng_), u(rng_)};
    const float len = std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]) + 1e-3F;
    nrm[i] = {n[0] / len, n[1] / len, n[2] / len, 0};
  }
  TextureFunctionParams tp;
  // An orthographic light: x, y scaled by 0.9, z kept, a small shift.
  tp.pcf.light_view_projection = {0.9F, 0, 0, 0, 0, 0.9F, 0, 0, 0, 0, 1, 0, 0.01F, -0.02F, 0, 1};
  tp.pcf.region = {0.25F, 0.125F, 0.5F, 0.75F};
  tp.pcf.normal_offset = 0.01F;
  const ShadowMap map{size, depth};
  for (float rotation : {0.0F, 0.7F}) {
    tp.pcf.rotation = rotation;
    auto out = run_texture_function(*ctx_, TextureFunction::kPcf9, pos, nrm, tp, *img);
    ASSERT_TRUE(out) << out.error().message;
    std::size_t partial = 0;
    for (std::size_t i = 0; i < pos.size(); ++i) {
      const float want =
          pcf9(map, {pos[i][0], pos[i][1], pos[i][2]}, {nrm[i][0], nrm[i][1], nrm[i][2]}, tp.pcf);
      ASSERT_NEAR((*out)[i][0], want, 1e-5) << i << " rotation " << rotation;
      partial += want > 0.2F && want < 0.9F ? 1 : 0;
    }
    EXPECT_GT(partial, 500U);  // most points sit on a mix of lit and shadowed taps
  }
}

// The LUT strip lookup reading a random 1024 × 32 RGBA16F strip, every
// slice axis.
TEST_F(ShadingGpu, LutStripLookupMatchesTheCpu) {
  constexpr std::uint32_t w = 1024, h = 32;
  std::uniform_real_distribution<float> v(0.0F, 1.0F);
  std::vector<Vec4> texels(w * h);
  std::vector<std::uint8_t> bytes(w * h * 8);
  for (std::size_t i = 0; i < texels.size(); ++i)
    for (std::size_t c = 0; c < 4; ++c) {
      const std::uint16_t half = core::float_to_half(v(rng_));
      texels[i][c] = core::half_to_float(half);
      std::memcpy(bytes.data() + i * 8 + c * 2, &half, 2);
    }
  auto img = ctx_->create_image(w, h, gpu::ImageFormat::kRgba16Float);
  ASSERT_TRUE(img);
  ASSERT_TRUE(ctx_->write_image(*img, bytes));
  std::vector<Vec4> a(1000);
  for (auto& x : a) x = {v(rng_), v(rng_), v(rng_), 0};
  a[0] = {0, 0, 0, 0};
  a[1] = {1, 1, 1, 0};  // the cube's corners: no neighbour past the last level
  for (std::uint32_t axis = 0; axis < 3; ++axis) {
    TextureFunctionParams tp;
    tp.slice_axis = axis;
    auto out = run_texture_function(*ctx_, TextureFunction::kLutSample, a, {}, tp, *img);
    ASSERT_TRUE(out) << out.error().message;
    const LutStrip lut{texels, axis};
    for (std::size_t i = 0; i < a.size(); ++i) {
      const Vec3 want = lut_sample(lut, {a[i][0], a[i][1], a[i][2]});
      for (std::size_t c = 0; c < 3; ++c)
        ASSERT_NEAR((*out)[i][c], want[c], 1e-5) << i << " axis " << axis;
    }
  }
}

// Cascade selection by squared distances, and the perturbation angle.
TEST_F(ShadingGpu, CascadeSelectionMatchesTheCpu) {
  TextureFunctionParams tp;
  tp.spheres = {{{0.0F, 0.0F, 0.0F, 1.0F},
                 {0.5F, 0.0F, 0.0F, 4.0F},
                 {1.0F, 0.5F, 0.0F, 16.0F},
                 {2.0F, 1.0F, 0.5F, 64.0F}}};
  std::uniform_real_distribution<float> u(-9.0F, 9.0F);
  std::vector<Vec4> a(1000);
  for (auto& x : a) x = {u(rng_), u(rng_), u(rng_), 0};
  auto out = run_texture_function(*ctx_, TextureFunction::kCascadeLevel, a, {}, tp, std::nullopt);
  ASSERT_TRUE(out) << out.error().message;
  std::array<int, 5> histogram{};
  for (std::size_t i = 0; i < a.size(); ++i) {
    const std::uint32_t want = cascade_level({a[i][0], a[i][1], a[i][2]}, tp.spheres);
    ASSERT_EQ(static_cast<std::uint32_t>((*out)[i][0]), want) << i;
    ++histogram[want];
  }
  for (int level = 1; level < 5; ++level) EXPECT_GT(histogram[level], 0) << level;
  std::uniform_real_distribution<float> px(0.0F, 2048.0F);
  for (auto& x : a) x = {std::floor(px(rng_)) + 0.5F, std::floor(px(rng_)) + 0.5F, 0, 0};
  out = run_texture_function(*ctx_, TextureFunction::kCascadeRotation, a, {}, tp, std::nullopt);
  ASSERT_TRUE(out) << out.error().message;
  for (std::size_t i = 0; i < a.size(); ++i)
    ASSERT_NEAR((*out)[i][0], cascade_rotation({a[i][0], a[i][1]}), 1e-4) << i;
}

}  // namespace
}  // namespace charkit::render
