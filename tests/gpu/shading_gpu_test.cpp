// The GLSL shading functions (render/shaders/shading.glsl) in the compute
// harness on the GPU backend, held to the C++ references within 1e-5 on the
// same random inputs (issue 18's bar). Skipped where no Vulkan device exists.
#include <gtest/gtest.h>

#include <random>
#include <vector>

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

}  // namespace
}  // namespace charkit::render
