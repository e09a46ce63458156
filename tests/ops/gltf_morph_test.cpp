// glTF morph targets through the 40-byte kernel (scene/gltf_morph.h): a GLB
// built here by hand, morphed, and read back with tinygltf; the expected
// values are worked out by hand.
#include "charkit/ops/gltf_morph.h"

#include <gtest/gtest.h>

#include <bit>
#include <cstring>

#include "charkit/core/json.h"
#include "charkit/scene/gltf_writer.h"
#include "tinygltf_include.h"

namespace charkit::ops {
namespace {

using core::Json;
using scene::assemble_glb;
using scene::GltfDocument;

void put_floats(std::vector<std::uint8_t>& b, std::initializer_list<float> v) {
  for (float f : v) {
    const auto u = std::bit_cast<std::uint32_t>(f);
    for (int i = 0; i < 4; ++i) b.push_back(static_cast<std::uint8_t>(u >> (8 * i)));
  }
}

/// A triangle (0,0,0) (1,0,0) (0,1,0), normals +z, tangents (1,0,0,−1), and
/// two targets: "smile" moves vertex 1 by (0,0,1) and tilts its normal by
/// (0.5,0,0); "blink" moves vertex 2 by (0,−1,0). Default weights: smile
/// 0.25, blink 0 (on the mesh and on its node).
std::vector<std::uint8_t> morph_glb() {
  std::vector<std::uint8_t> bin;
  put_floats(bin, {0, 0, 0, 1, 0, 0, 0, 1, 0});              // 0: POSITION      @0
  put_floats(bin, {0, 0, 1, 0, 0, 1, 0, 0, 1});              // 1: NORMAL        @36
  put_floats(bin, {1, 0, 0, -1, 1, 0, 0, -1, 1, 0, 0, -1});  // 2: TANGENT       @72
  put_floats(bin, {0, 0, 0, 0, 0, 1, 0, 0, 0});              // 3: smile POSITION @120
  put_floats(bin, {0, 0, 0, 0.5F, 0, 0, 0, 0, 0});           // 4: smile NORMAL  @156
  put_floats(bin, {0, 0, 0, 0, 0, 0, 0, -1, 0});             // 5: blink POSITION @192
  Json views = Json::array();
  Json accessors = Json::array();
  const std::size_t offsets[6] = {0, 36, 72, 120, 156, 192};
  for (int i = 0; i < 6; ++i) {
    const bool tangent = i == 2;
    views.push_back(
        Json{{"buffer", 0}, {"byteOffset", offsets[i]}, {"byteLength", tangent ? 48 : 36}});
    Json a{{"bufferView", i},
           {"componentType", 5126},
           {"count", 3},
           {"type", tangent ? "VEC4" : "VEC3"}};
    if (i == 0) {
      a["min"] = Json::array({0, 0, 0});
      a["max"] = Json::array({1, 1, 0});
    }
    accessors.push_back(std::move(a));
  }
  Json root{
      {"asset", Json{{"version", "2.0"}}},
      {"buffers", Json::array({Json{{"byteLength", bin.size()}}})},
      {"bufferViews", views},
      {"accessors", accessors},
      {"meshes",
       Json::array({Json{
           {"name", "face"},
           {"weights", Json::array({0.25, 0.0})},
           {"extras", Json{{"targetNames", Json::array({"smile", "blink"})}}},
           {"primitives",
            Json::array({Json{{"attributes", Json{{"POSITION", 0}, {"NORMAL", 1}, {"TANGENT", 2}}},
                              {"targets", Json::array({Json{{"POSITION", 3}, {"NORMAL", 4}},
                                                       Json{{"POSITION", 5}}})}}})}}})},
      {"nodes", Json::array({Json{{"mesh", 0}, {"weights", Json::array({0.25, 0.0})}}})},
      {"scenes", Json::array({Json{{"nodes", Json::array({0})}}})}};
  auto glb = assemble_glb(root.dump(), bin);
  EXPECT_TRUE(glb.ok());
  return glb.ok() ? *glb : std::vector<std::uint8_t>{};
}

std::vector<float> floats_of(const tinygltf::Model& m, int accessor) {
  const auto& acc = m.accessors[static_cast<std::size_t>(accessor)];
  const auto& view = m.bufferViews[static_cast<std::size_t>(acc.bufferView)];
  const auto& buf = m.buffers[static_cast<std::size_t>(view.buffer)];
  const std::size_t n = acc.count * (acc.type == TINYGLTF_TYPE_VEC4 ? 4 : 3);
  std::vector<float> out(n);
  std::memcpy(out.data(), buf.data.data() + view.byteOffset + acc.byteOffset, n * 4);
  return out;
}

TEST(GltfMorph, NamedAndDefaultWeightsThroughTheKernel) {
  const std::vector<std::uint8_t> input = morph_glb();
  auto doc = GltfDocument::load(input);
  ASSERT_TRUE(doc.ok()) << doc.error().to_string();
  GltfMorphOptions o;
  o.weights["blink"] = 2.0F;  // smile keeps its default 0.25
  o.run.executor = &core::serial_executor();
  auto r = apply_gltf_morphs(*doc, o);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  ASSERT_EQ(r->meshes.size(), 1u);
  EXPECT_EQ(r->meshes[0].records, 2u);  // smile: vertex 1; blink: vertex 2
  EXPECT_EQ(r->meshes[0].applied.at("smile"), 0.25F);
  EXPECT_EQ(r->meshes[0].applied.at("blink"), 2.0F);

  tinygltf::TinyGLTF loader;
  tinygltf::Model m;
  std::string err;
  std::string warn;
  ASSERT_TRUE(loader.LoadBinaryFromMemory(&m, &err, &warn, r->glb.data(),
                                          static_cast<unsigned>(r->glb.size())))
      << err;
  const auto& prim = m.meshes[0].primitives[0];
  // v1 = (1,0,0) + 0.25·(0,0,1); v2 = (0,1,0) + 2·(0,−1,0).
  EXPECT_EQ(floats_of(m, prim.attributes.at("POSITION")),
            (std::vector<float>{0, 0, 0, 1, 0, 0.25F, 0, -1, 0}));
  // n1 = (0,0,1) + 0.25·(0.5,0,0) = (0.125, 0, 1) from the kernel, then made
  // unit length for glTF: (0.125, 0, 1) / 1.0077822.
  const std::vector<float> n = floats_of(m, prim.attributes.at("NORMAL"));
  const std::vector<float> want_n = {0, 0, 1, 0.1240347F, 0, 0.9922779F, 0, 0, 1};
  ASSERT_EQ(n.size(), want_n.size());
  for (std::size_t i = 0; i < n.size(); ++i) EXPECT_NEAR(n[i], want_n[i], 1e-6) << i;
  EXPECT_EQ(floats_of(m, prim.attributes.at("TANGENT")),
            (std::vector<float>{1, 0, 0, -1, 1, 0, 0, -1, 1, 0, 0, -1}));
  const auto& pos = m.accessors[static_cast<std::size_t>(prim.attributes.at("POSITION"))];
  EXPECT_EQ(pos.minValues, (std::vector<double>{0, -1, 0}));
  EXPECT_EQ(pos.maxValues, (std::vector<double>{1, 0, 0.25}));
  // The targets stay; the applied weights are 0 now.
  EXPECT_EQ(prim.targets.size(), 2u);
  EXPECT_EQ(m.meshes[0].weights, (std::vector<double>{0, 0}));
  EXPECT_EQ(m.nodes[0].weights, (std::vector<double>{0, 0}));
}

TEST(GltfMorph, UnknownNameListsTheTargets) {
  const std::vector<std::uint8_t> input = morph_glb();
  auto doc = GltfDocument::load(input);
  ASSERT_TRUE(doc.ok());
  GltfMorphOptions o;
  o.weights["smiel"] = 1.0F;
  auto r = apply_gltf_morphs(*doc, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "DEFORM_MORPH_TARGET");
  EXPECT_NE(r.error().message.find("blink, smile"), std::string::npos) << r.error().message;
  // By index and target_<i> it works.
  auto doc2 = GltfDocument::load(input);
  ASSERT_TRUE(doc2.ok());
  o.weights.clear();
  o.weights["1"] = 1.0F;
  o.weights["target_0"] = 0.0F;
  auto r2 = apply_gltf_morphs(*doc2, o);
  ASSERT_TRUE(r2.ok()) << r2.error().to_string();
  EXPECT_EQ(r2->meshes[0].records, 1u);  // only blink
}

}  // namespace
}  // namespace charkit::ops
