// The render passes' pipeline states (render/passes.h, the character-rendering
// frame analysis §3) on the GPU backend (lavapipe in CI) with the validation
// layers on: known geometry drawn with each pass's state and the attachments
// read back. Face pixels get stencil 0x80, the classification pass turns them
// into 0x84 and leaves pixels without bit 7 alone, masked colour targets keep
// their bits, the eye pass's premultiplied blend gives colour + dst × (1 −
// coverage), depth is written exactly where the table says. Skipped where no
// Vulkan device exists.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <vector>

#include "charkit/core/half.h"
#include "charkit/gpu/context.h"
#include "charkit/gpu/error_codes.h"
#include "charkit/render/passes.h"

#if CHARKIT_WITH_VULKAN
#include "probe_fs.spv.h"
#include "probe_vs.spv.h"
#endif

namespace charkit::render {
namespace {

#if CHARKIT_WITH_VULKAN
constexpr std::uint32_t kW = 16, kH = 8;
using Colour = std::array<float, 4>;
using Colours = std::array<Colour, 4>;  // hdr, material1, material2, normal

class RenderPasses : public ::testing::Test {
 protected:
  void SetUp() override {
    gpu::ContextOptions o;
    o.validation = true;
    auto ctx = gpu::Context::create(o);
    if (!ctx) GTEST_SKIP() << "no Vulkan device: " << ctx.error().message;
    ctx_ = std::move(*ctx);
    for (Target t : {Target::kHdr, Target::kMaterial1, Target::kMaterial2, Target::kNormal,
                     Target::kDepthStencil, Target::kShadowDepth}) {
      auto img = ctx_->create_image(kW, kH, target(t).format);
      ASSERT_TRUE(img) << img.error().message;
      images_[t] = *img;
    }
  }
  void TearDown() override {
    if (!ctx_) return;
    const auto messages = ctx_->validation_messages();
    EXPECT_TRUE(messages.empty()) << messages.front();
  }

  /// A quad over clip-space x in [x0, x1], all of y, at depth z.
  gpu::BufferId quad(float x0, float x1, float z) {
    const float v[] = {x0, -1, z, x1, -1, z, x1, 1, z, x0, -1, z, x1, 1, z, x0, 1, z};
    auto b = ctx_->create_buffer(sizeof v);
    EXPECT_TRUE(b);
    std::memcpy(ctx_->map(*b).data(), v, sizeof v);
    return *b;
  }
  gpu::PipelineId pipeline(PassId id) {
    const PassDesc& p = pass(id);
    auto pl = ctx_->create_graphics_pipeline(pipeline_desc(
        p, kProbe_vsSpirv,
        p.colour.empty() ? std::span<const std::uint32_t>{} : std::span(kProbe_fsSpirv), 12,
        {{0, 3, 0}}, p.colour.empty() ? 0 : 64));
    EXPECT_TRUE(pl) << pl.error().message;
    return *pl;
  }
  /// Six vertices of `vertices` with `pipeline`.
  static gpu::Draw draw(gpu::PipelineId pipeline, gpu::BufferId vertices,
                        std::vector<std::uint8_t> push_bytes) {
    gpu::Draw d;
    d.pipeline = pipeline;
    d.vertices = vertices;
    d.count = 6;
    d.push = std::move(push_bytes);
    return d;
  }
  static std::vector<std::uint8_t> push(const Colours& c) {
    std::vector<std::uint8_t> p(64);
    std::memcpy(p.data(), c.data(), 64);
    return p;
  }
  /// A pass over the four colour targets and depth-stencil: cleared to
  /// `clear`, depth 0 and `stencil` when `clear_first`, else loaded.
  gpu::RenderPass gbuffer_pass(bool clear_first, const Colours& clear = {},
                               std::uint32_t stencil = 0) {
    gpu::RenderPass r;
    int i = 0;
    for (Target t : {Target::kHdr, Target::kMaterial1, Target::kMaterial2, Target::kNormal}) {
      gpu::Attachment a{images_[t], clear_first, clear[static_cast<std::size_t>(i++)]};
      r.colour.push_back(a);
    }
    gpu::Attachment d{images_[Target::kDepthStencil], clear_first};
    d.clear_stencil = stencil;
    r.depth = d;
    return r;
  }
  std::vector<std::uint8_t> read(Target t, gpu::ImageAspect aspect = gpu::ImageAspect::kColour) {
    auto bytes = ctx_->read_image(images_[t], aspect);
    EXPECT_TRUE(bytes) << bytes.error().message;
    return bytes ? *bytes : std::vector<std::uint8_t>{};
  }
  /// Texel (x, y) of a colour target as floats.
  Colour texel(const std::vector<std::uint8_t>& bytes, Target t, std::uint32_t x, std::uint32_t y) {
    Colour c{};
    const std::size_t i = std::size_t{y} * kW + x;
    for (std::size_t k = 0; k < 4; ++k) {
      if (target(t).format == gpu::ImageFormat::kRgba16Float) {
        std::uint16_t h;
        std::memcpy(&h, bytes.data() + 8 * i + 2 * k, 2);
        c[k] = core::half_to_float(h);
      } else {
        c[k] = static_cast<float>(bytes[4 * i + k]) / 255.0F;
      }
    }
    return c;
  }
  static float depth_at(const std::vector<std::uint8_t>& bytes, std::uint32_t x, std::uint32_t y) {
    float d;
    std::memcpy(&d, bytes.data() + 4 * (std::size_t{y} * kW + x), 4);
    return d;
  }

  std::unique_ptr<gpu::Context> ctx_;
  std::map<Target, gpu::ImageId> images_;
};

const std::array<Target, 4> kColourTargets = {Target::kHdr, Target::kMaterial1, Target::kMaterial2,
                                              Target::kNormal};

// Values exact in 8-bit UNorm and in half floats.
const Colours kClear = {{{0.25F, 0.5F, 0.75F, 1.0F},
                         {40 / 255.0F, 80 / 255.0F, 120 / 255.0F, 160 / 255.0F},
                         {127 / 255.0F, 127 / 255.0F, 3 / 255.0F, 0.0F},
                         {128 / 255.0F, 128 / 255.0F, 1.0F, 1.0F}}};
const Colours kDraw = {{{0.5F, 0.25F, 0.125F, 0.5F},
                        {200 / 255.0F, 10 / 255.0F, 20 / 255.0F, 0.0F},
                        {90 / 255.0F, 160 / 255.0F, 15 / 255.0F, 87 / 255.0F},
                        {64 / 255.0F, 192 / 255.0F, 32 / 255.0F, 1.0F}}};

// Every pass of the table, drawn full screen over cleared attachments:
// each channel is kept, written or blended as its state says, depth written
// only where the table says, the stencil as the table's function gives.
TEST_F(RenderPasses, EveryPassWritesWhatItsTableSays) {
  for (const PassDesc& p : passes()) {
    if (p.depth != Target::kDepthStencil) continue;
    SCOPED_TRACE(p.name);
    const gpu::BufferId q = quad(-1, 1, 0.5F);
    gpu::RenderPass r = gbuffer_pass(true, kClear, 0x80);
    r.draws.push_back(draw(pipeline(p.id), q, push(kDraw)));
    ASSERT_TRUE(ctx_->render(std::span(&r, 1)));
    for (std::size_t i = 0; i < 4; ++i) {
      const Target t = kColourTargets[i];
      const gpu::BlendState& b = p.state.colour[i];
      const Colour got = texel(read(t), t, 3, 5);
      for (std::size_t c = 0; c < 4; ++c) {
        float want = kClear[i][c];
        if ((b.write_mask >> c) & 1U)
          want = b.enabled ? kDraw[i][c] + kClear[i][c] * (1.0F - kDraw[i][3]) : kDraw[i][c];
        EXPECT_NEAR(got[c], want, 1e-6F) << target(t).name << " channel " << c;
      }
    }
    EXPECT_EQ(depth_at(read(Target::kDepthStencil, gpu::ImageAspect::kDepth), 3, 5),
              p.state.depth.write ? 0.5F : 0.0F);
    const std::uint8_t stencil =
        read(Target::kDepthStencil, gpu::ImageAspect::kStencil)[5 * kW + 3];
    std::uint8_t want = 0x80;
    const gpu::StencilState& s = p.state.stencil;
    if (s.enabled && s.pass == gpu::StencilOp::kReplace &&
        (s.compare == gpu::CompareOp::kAlways ||
         (s.compare == gpu::CompareOp::kEqual &&
          (s.reference & s.compare_mask) == (0x80 & s.compare_mask))))
      want = static_cast<std::uint8_t>((0x80 & ~s.write_mask) | (s.reference & s.write_mask));
    EXPECT_EQ(stencil, want);
  }
}

// The frame analysis's sequence: the face stamps 0x80 on its pixels; the
// classification pass drawn over everything turns exactly those into 0x84,
// leaves the rest (stencil 0x41: bit 7 clear) and every colour bit alone,
// and writes no depth.
TEST_F(RenderPasses, FaceThenClassificationSetsBitTwoOnlyUnderBitSeven) {
  const gpu::BufferId left = quad(-1, 0, 0.5F);
  gpu::RenderPass face = gbuffer_pass(true, kClear, 0x41);
  face.draws.push_back(draw(pipeline(PassId::kFaceMain), left, push(kDraw)));
  ASSERT_TRUE(ctx_->render(std::span(&face, 1)));
  std::vector<std::vector<std::uint8_t>> before;
  for (Target t : kColourTargets) before.push_back(read(t));
  const auto stencil0 = read(Target::kDepthStencil, gpu::ImageAspect::kStencil);
  EXPECT_EQ(stencil0[2 * kW + 2], 0x80);   // face (left half)
  EXPECT_EQ(stencil0[2 * kW + 12], 0x41);  // not face
  EXPECT_EQ(depth_at(read(Target::kDepthStencil, gpu::ImageAspect::kDepth), 2, 2), 0.5F);

  const gpu::BufferId all = quad(-1, 1, 0.75F);
  gpu::RenderPass cls = gbuffer_pass(false);
  cls.draws.push_back(draw(pipeline(PassId::kShadowClassification), all, push(kDraw)));
  ASSERT_TRUE(ctx_->render(std::span(&cls, 1)));
  const auto stencil1 = read(Target::kDepthStencil, gpu::ImageAspect::kStencil);
  for (std::uint32_t y = 0; y < kH; ++y)
    for (std::uint32_t x = 0; x < kW; ++x)
      EXPECT_EQ(stencil1[y * kW + x], x < kW / 2 ? 0x84 : 0x41) << x << "," << y;
  for (std::size_t i = 0; i < 4; ++i)
    EXPECT_EQ(read(kColourTargets[i]), before[i]) << target(kColourTargets[i]).name;
  const auto depth1 = read(Target::kDepthStencil, gpu::ImageAspect::kDepth);
  EXPECT_EQ(depth_at(depth1, 2, 2), 0.5F);
  EXPECT_EQ(depth_at(depth1, 12, 2), 0.0F);
}

// Other stencil bits survive the classification: 0xC1 (bit 7 set) → 0xC5.
TEST_F(RenderPasses, ClassificationKeepsTheOtherStencilBits) {
  gpu::RenderPass cls = gbuffer_pass(true, kClear, 0xC1);
  cls.draws.push_back(
      draw(pipeline(PassId::kShadowClassification), quad(-1, 1, 0.5F), push(kDraw)));
  ASSERT_TRUE(ctx_->render(std::span(&cls, 1)));
  const auto stencil = read(Target::kDepthStencil, gpu::ImageAspect::kStencil);
  EXPECT_EQ(stencil[3 * kW + 5], 0xC5);
}

// The eye over a shaded face: premultiplied colour p (coverage a) gives
// p + face × (1 − a); straight alpha would give p·a + face × (1 − a), darker.
// The first material map takes the eye's value, the second and the normal
// map keep the face's bits; an eye behind the face depth is not drawn.
TEST_F(RenderPasses, EyeBlendsPremultipliedAndKeepsTheSurfaceData) {
  gpu::RenderPass face = gbuffer_pass(true, kClear, 0);
  face.draws.push_back(draw(pipeline(PassId::kFaceMain), quad(-1, 1, 0.5F), push(kDraw)));
  ASSERT_TRUE(ctx_->render(std::span(&face, 1)));
  std::vector<std::vector<std::uint8_t>> before;
  for (Target t : kColourTargets) before.push_back(read(t));
  const Colour surface = texel(before[0], Target::kHdr, 2, 2);

  const float a = 0.5F;
  const Colour eye = {1.0F * a, 0.75F * a, 0.25F * a, a};  // premultiplied
  const Colours eye_push = {eye, Colour{0, 0, 0, 0}, Colour{1, 1, 1, 1}, Colour{1, 1, 1, 1}};
  gpu::RenderPass pass = gbuffer_pass(false);
  const gpu::PipelineId eye_pipeline = pipeline(PassId::kEyeComposite);
  pass.draws.push_back(draw(eye_pipeline, quad(-1, 0, 0.9F), push(eye_push)));
  pass.draws.push_back(draw(eye_pipeline, quad(0, 1, 0.3F), push(eye_push)));
  ASSERT_TRUE(ctx_->render(std::span(&pass, 1)));

  const auto hdr = read(Target::kHdr);
  const Colour got = texel(hdr, Target::kHdr, 2, 2);
  for (std::size_t c = 0; c < 4; ++c) {
    const float premultiplied = eye[c] + surface[c] * (1.0F - a);
    const float straight = eye[c] * a + surface[c] * (1.0F - a);
    EXPECT_NEAR(got[c], premultiplied, 1e-3F) << c;
    if (c < 3) {
      EXPECT_GT(got[c] - straight, 0.05F) << c;
    }
  }
  EXPECT_EQ(texel(hdr, Target::kHdr, 12, 2), texel(before[0], Target::kHdr, 12, 2));
  const Colour m1 = texel(read(Target::kMaterial1), Target::kMaterial1, 2, 2);
  EXPECT_EQ(m1, (Colour{0, 0, 0, 0}));
  EXPECT_EQ(read(Target::kMaterial2), before[2]);
  EXPECT_EQ(read(Target::kNormal), before[3]);
  EXPECT_EQ(depth_at(read(Target::kDepthStencil, gpu::ImageAspect::kDepth), 2, 2), 0.5F);
}

// The outline pass culls front faces: of two quads over the same pixels, the
// one wound counter-clockwise on screen (front-facing: the state-test quad
// reversed) is not drawn, the clockwise one (its back) is, with depth,
// stencil 0x80 and every colour target written.
TEST_F(RenderPasses, OutlineDrawsOnlyBackFaces) {
  const gpu::PipelineId outline = pipeline(PassId::kOutline);
  // quad() is wound clockwise in Vulkan's framebuffer (y down): a back face.
  const gpu::BufferId back = quad(-1, 0, 0.5F);
  const float front_vertices[] = {0, -1, 0.5F, 1, 1, 0.5F, 1, -1, 0.5F,
                                  0, -1, 0.5F, 0, 1, 0.5F, 1, 1,  0.5F};
  auto front = ctx_->create_buffer(sizeof front_vertices);
  ASSERT_TRUE(front);
  std::memcpy(ctx_->map(*front).data(), front_vertices, sizeof front_vertices);
  gpu::RenderPass r = gbuffer_pass(true, kClear, 0);
  r.draws.push_back(draw(outline, back, push(kDraw)));
  r.draws.push_back(draw(outline, *front, push(kDraw)));
  ASSERT_TRUE(ctx_->render(std::span(&r, 1)));
  const auto stencil = read(Target::kDepthStencil, gpu::ImageAspect::kStencil);
  const auto depth = read(Target::kDepthStencil, gpu::ImageAspect::kDepth);
  for (std::uint32_t y = 0; y < kH; ++y)
    for (std::uint32_t x = 0; x < kW; ++x) {
      const bool drawn = x < kW / 2;
      EXPECT_EQ(stencil[y * kW + x], drawn ? 0x80 : 0x00) << x << "," << y;
      EXPECT_EQ(depth_at(depth, x, y), drawn ? 0.5F : 0.0F) << x << "," << y;
    }
  for (std::size_t i = 0; i < 4; ++i) {
    const auto bytes = read(kColourTargets[i]);
    EXPECT_EQ(texel(bytes, kColourTargets[i], 2, 3), kDraw[i]) << target(kColourTargets[i]).name;
    EXPECT_EQ(texel(bytes, kColourTargets[i], 12, 3), kClear[i]) << target(kColourTargets[i]).name;
  }
}

// The face shadow geometry: depth only (no fragment shader, no colour).
TEST_F(RenderPasses, FaceShadowWritesOnlyLightDepth) {
  gpu::RenderPass r;
  r.depth = gpu::Attachment{images_[Target::kShadowDepth], true};
  r.draws.push_back(draw(pipeline(PassId::kFaceShadow), quad(-1, 0, 0.625F), {}));
  ASSERT_TRUE(ctx_->render(std::span(&r, 1)));
  const auto d = read(Target::kShadowDepth, gpu::ImageAspect::kDepth);
  EXPECT_EQ(depth_at(d, 1, 1), 0.625F);
  EXPECT_EQ(depth_at(d, 14, 1), 0.0F);
  EXPECT_FALSE(ctx_->read_image(images_[Target::kShadowDepth], gpu::ImageAspect::kStencil));
}

// A pass whose attachments do not fit the pipeline is refused before
// anything is recorded.
TEST_F(RenderPasses, MismatchedAttachmentsAreRefused) {
  gpu::RenderPass r;
  r.colour.push_back(gpu::Attachment{images_[Target::kHdr], true});
  r.draws.push_back(draw(pipeline(PassId::kFaceMain), quad(-1, 1, 0.5F), push(kDraw)));
  auto st = ctx_->render(std::span(&r, 1));
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().code, gpu::codes::GPU_VULKAN.str());
}
#endif

}  // namespace
}  // namespace charkit::render
