// The pass table (render/passes.h) against the values of the
// character-rendering frame analysis §3, written out here by hand, and
// docs/render/passes.md against the table.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "charkit/render/passes.h"

namespace charkit::render {
namespace {

using gpu::BlendFactor;
using gpu::CompareOp;
using gpu::StencilOp;

TEST(RenderPassTable, FaceMainIsTheSeedsState) {
  const PassDesc& p = pass(PassId::kFaceMain);
  EXPECT_TRUE(p.state.depth.test);
  EXPECT_TRUE(p.state.depth.write);
  EXPECT_EQ(p.state.depth.compare, CompareOp::kGreaterOrEqual);
  EXPECT_TRUE(p.state.stencil.enabled);
  EXPECT_EQ(p.state.stencil.compare, CompareOp::kAlways);
  EXPECT_EQ(p.state.stencil.pass, StencilOp::kReplace);
  EXPECT_EQ(p.state.stencil.reference, 128);
  EXPECT_EQ(p.state.stencil.write_mask, 255);
  ASSERT_EQ(p.colour.size(), 4U);
  for (const gpu::BlendState& b : p.state.colour) {
    EXPECT_FALSE(b.enabled);
    EXPECT_EQ(b.write_mask, 0xF);
  }
}

TEST(RenderPassTable, ShadowClassificationIsTheSeedsState) {
  const PassDesc& p = pass(PassId::kShadowClassification);
  EXPECT_TRUE(p.state.depth.test);
  EXPECT_FALSE(p.state.depth.write);
  EXPECT_EQ(p.state.depth.compare, CompareOp::kGreaterOrEqual);
  EXPECT_EQ(p.state.stencil.compare, CompareOp::kEqual);
  EXPECT_EQ(p.state.stencil.compare_mask, 128);
  EXPECT_EQ(p.state.stencil.reference, 132);
  EXPECT_EQ(p.state.stencil.pass, StencilOp::kReplace);
  EXPECT_EQ(p.state.stencil.write_mask, 4);
  ASSERT_EQ(p.colour.size(), 4U);
  for (const gpu::BlendState& b : p.state.colour) EXPECT_EQ(b.write_mask, 0);
}

TEST(RenderPassTable, EyeCompositeIsTheSeedsState) {
  const PassDesc& p = pass(PassId::kEyeComposite);
  EXPECT_TRUE(p.state.depth.test);
  EXPECT_FALSE(p.state.depth.write);
  EXPECT_EQ(p.state.depth.compare, CompareOp::kGreaterOrEqual);
  EXPECT_FALSE(p.state.stencil.enabled);
  ASSERT_EQ(p.colour.size(), 4U);
  ASSERT_EQ(p.colour[0], Target::kHdr);
  EXPECT_TRUE(p.state.colour[0].enabled);
  EXPECT_EQ(p.state.colour[0].src_colour, BlendFactor::kOne);
  EXPECT_EQ(p.state.colour[0].dst_colour, BlendFactor::kOneMinusSrcAlpha);
  EXPECT_EQ(p.colour[1], Target::kMaterial1);
  EXPECT_FALSE(p.state.colour[1].enabled);
  EXPECT_EQ(p.state.colour[1].write_mask, 0xF);
  EXPECT_EQ(p.state.colour[2].write_mask, 0);
  EXPECT_EQ(p.state.colour[3].write_mask, 0);
}

TEST(RenderPassTable, FaceShadowIsDepthOnlyAndAttachmentsAreTheIssuesFormats) {
  const PassDesc& p = pass(PassId::kFaceShadow);
  EXPECT_TRUE(p.colour.empty());
  EXPECT_EQ(p.depth, Target::kShadowDepth);
  EXPECT_TRUE(p.state.depth.write);
  EXPECT_EQ(target(Target::kHdr).format, gpu::ImageFormat::kRgba16Float);
  EXPECT_EQ(target(Target::kDepthStencil).format, gpu::ImageFormat::kDepth32Stencil8);
  // Every pass has one blend state per colour attachment.
  for (const PassDesc& q : passes()) EXPECT_EQ(q.state.colour.size(), q.colour.size()) << q.name;
}

// MToon's outline (VRMC_materials_mtoon 1.0): an inverted hull, so front
// faces are culled and the hull's far side is drawn; it is opaque geometry of
// the character (depth tested and written, the character's stencil), drawn
// after face main shading and before the classification.
TEST(RenderPassTable, OutlineIsAnInvertedHull) {
  const PassDesc& p = pass(PassId::kOutline);
  EXPECT_STREQ(p.name, "outline");
  EXPECT_EQ(p.state.cull, gpu::CullMode::kFront);
  // Otherwise face main shading's state, checked against the frame analysis above.
  const PassDesc& face = pass(PassId::kFaceMain);
  EXPECT_EQ(p.colour, face.colour);
  EXPECT_EQ(p.depth, face.depth);
  EXPECT_TRUE(p.state.depth.write);
  EXPECT_EQ(p.state.depth.compare, CompareOp::kGreaterOrEqual);
  EXPECT_EQ(p.state.stencil.reference, 0x80);
  EXPECT_EQ(p.state.stencil.pass, StencilOp::kReplace);
  for (const gpu::BlendState& b : p.state.colour) EXPECT_EQ(b.write_mask, 0xF);
  std::vector<std::string> order;
  for (const PassDesc& q : passes()) order.push_back(q.name);
  EXPECT_EQ(order, (std::vector<std::string>{"face-shadow", "body", "face-main", "outline",
                                             "shadow-classification", "eye", "transparent"}));
  // Every other pass keeps its state: no culling.
  for (const PassDesc& q : passes()) {
    if (q.id != PassId::kOutline) {
      EXPECT_EQ(q.state.cull, gpu::CullMode::kNone) << q.name;
    }
  }
}

TEST(RenderPassTable, PipelineDescCarriesTheTable) {
  const PassDesc& p = pass(PassId::kEyeComposite);
  const gpu::GraphicsPipelineDesc d = pipeline_desc(p, {}, {}, 12, {{0, 3, 0}}, 64);
  ASSERT_EQ(d.colour_formats.size(), 4U);
  EXPECT_EQ(d.colour_formats[0], gpu::ImageFormat::kRgba16Float);
  EXPECT_EQ(d.colour_formats[2], gpu::ImageFormat::kRgba8Unorm);
  EXPECT_EQ(d.depth_format, gpu::ImageFormat::kDepth32Stencil8);
  EXPECT_EQ(d.state.colour[0].dst_colour, BlendFactor::kOneMinusSrcAlpha);
  EXPECT_EQ(d.push_bytes, 64U);
}

TEST(RenderPassTable, DocsHoldTheGeneratedTables) {
  const auto path =
      std::filesystem::path(CHARKIT_TEST_DATA) / ".." / ".." / "docs" / "render" / "passes.md";
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  std::stringstream s;
  s << in.rdbuf();
  const std::string doc = s.str();
  const auto begin = doc.find("-->\n", doc.find("<!-- passes:begin"));
  const auto end = doc.find("<!-- passes:end -->");
  ASSERT_NE(begin, std::string::npos);
  ASSERT_NE(end, std::string::npos);
  EXPECT_EQ(doc.substr(begin + 4, end - begin - 4), passes_markdown())
      << "regenerate docs/render/passes.md's tables from render::passes_markdown()";
}

}  // namespace
}  // namespace charkit::render
