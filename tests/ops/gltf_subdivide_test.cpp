// glTF meshes through the subdivision kernels (scene/gltf_subdivide.h): a GLB
// built here by hand (a quad in two primitives sharing their attributes,
// with UVs, a skin and a morph target), subdivided, and read back with
// tinygltf; the expected values are worked out by hand.
#include "charkit/ops/gltf_subdivide.h"

#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <map>

#include "charkit/core/json.h"
#include "charkit/scene/gltf_writer.h"
#include "tinygltf_include.h"

namespace charkit::ops {
namespace {

using core::Json;
using scene::assemble_glb;
using scene::GltfDocument;

void put(std::vector<std::uint8_t>& b, std::initializer_list<float> v) {
  for (float f : v) {
    const auto u = std::bit_cast<std::uint32_t>(f);
    for (int i = 0; i < 4; ++i) b.push_back(static_cast<std::uint8_t>(u >> (8 * i)));
  }
}
void put_u16(std::vector<std::uint8_t>& b, std::initializer_list<int> v) {
  for (int x : v) {
    b.push_back(static_cast<std::uint8_t>(x));
    b.push_back(static_cast<std::uint8_t>(x >> 8));
  }
}

/// Quad (0,0,0) (1,0,0) (0,1,0) (1,1,1): primitive 0 = (0,1,2), primitive 1
/// = (2,1,3), both on the same accessors. UV = the position's xy. Vertex v is
/// bound to joint v with weight 1. A target "lift" moves vertex 1 by (0,0,1).
/// `_S` holds a strength per vertex: 1, 1, 1, 0. Primitive 1 has mode
/// `second_mode` (4: triangles).
std::vector<std::uint8_t> quad_glb(int second_mode = 4) {
  std::vector<std::uint8_t> bin;
  std::vector<std::pair<std::size_t, std::size_t>> views;  // offset, length
  auto view = [&](std::size_t start) { views.emplace_back(start, bin.size() - start); };
  std::size_t s = bin.size();
  put(bin, {0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 1, 1});  // 0 POSITION
  view(s);
  s = bin.size();
  put(bin, {0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1});  // 1 NORMAL
  view(s);
  s = bin.size();
  put(bin, {0, 0, 1, 0, 0, 1, 1, 1});  // 2 TEXCOORD_0
  view(s);
  s = bin.size();
  put_u16(bin, {0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0});  // 3 JOINTS_0
  view(s);
  s = bin.size();
  put(bin, {1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0});  // 4 WEIGHTS_0
  view(s);
  s = bin.size();
  put(bin, {0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0});  // 5 target POSITION
  view(s);
  s = bin.size();
  put(bin, {1, 1, 1, 0});  // 6 _S
  view(s);
  s = bin.size();
  put_u16(bin, {0, 1, 2});  // 7 indices of primitive 0
  view(s);
  put_u16(bin, {0});  // padding to 4 bytes
  s = bin.size();
  put_u16(bin, {2, 1, 3});  // 8 indices of primitive 1
  view(s);
  put_u16(bin, {0});
  Json jviews = Json::array();
  for (const auto& [off, len] : views)
    jviews.push_back(Json{{"buffer", 0}, {"byteOffset", off}, {"byteLength", len}});
  auto acc = [](int v, int type, const char* t, int count) {
    return Json{{"bufferView", v}, {"componentType", type}, {"count", count}, {"type", t}};
  };
  Json accessors = Json::array(
      {acc(0, 5126, "VEC3", 4), acc(1, 5126, "VEC3", 4), acc(2, 5126, "VEC2", 4),
       acc(3, 5123, "VEC4", 4), acc(4, 5126, "VEC4", 4), acc(5, 5126, "VEC3", 4),
       acc(6, 5126, "SCALAR", 4), acc(7, 5123, "SCALAR", 3), acc(8, 5123, "SCALAR", 3)});
  accessors[0]["min"] = Json::array({0, 0, 0});
  accessors[0]["max"] = Json::array({1, 1, 1});
  accessors[5]["min"] = Json::array({0, 0, 0});
  accessors[5]["max"] = Json::array({0, 0, 1});
  const Json attrs{{"POSITION", 0}, {"NORMAL", 1},    {"TEXCOORD_0", 2},
                   {"JOINTS_0", 3}, {"WEIGHTS_0", 4}, {"_S", 6}};
  const Json targets = Json::array({Json{{"POSITION", 5}}});
  Json root{
      {"asset", Json{{"version", "2.0"}}},
      {"buffers", Json::array({Json{{"byteLength", bin.size()}}})},
      {"bufferViews", jviews},
      {"accessors", accessors},
      {"meshes",
       Json::array({Json{
           {"name", "quad"},
           {"extras", Json{{"targetNames", Json::array({"lift"})}}},
           {"primitives",
            Json::array({Json{{"attributes", attrs}, {"indices", 7}, {"targets", targets}},
                         Json{{"attributes", attrs}, {"indices", 8}, {"targets", targets}}})}}})},
      {"nodes", Json::array({Json{{"mesh", 0}}})},
      {"scenes", Json::array({Json{{"nodes", Json::array({0})}}})}};
  if (second_mode != 4) root["meshes"][0]["primitives"][1]["mode"] = second_mode;
  auto glb = assemble_glb(root.dump(), bin);
  EXPECT_TRUE(glb.ok());
  return glb.ok() ? *glb : std::vector<std::uint8_t>{};
}

template <typename T>
std::vector<T> values_of(const tinygltf::Model& m, int accessor, int components) {
  const auto& a = m.accessors[static_cast<std::size_t>(accessor)];
  const auto& v = m.bufferViews[static_cast<std::size_t>(a.bufferView)];
  const auto& b = m.buffers[static_cast<std::size_t>(v.buffer)];
  std::vector<T> out(a.count * static_cast<std::size_t>(components));
  std::memcpy(out.data(), b.data.data() + v.byteOffset + a.byteOffset, out.size() * sizeof(T));
  return out;
}

std::vector<std::uint32_t> indices_of(const tinygltf::Model& m, int accessor) {
  const auto& a = m.accessors[static_cast<std::size_t>(accessor)];
  std::vector<std::uint32_t> out;
  if (a.componentType == TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT)
    for (std::uint16_t x : values_of<std::uint16_t>(m, accessor, 1)) out.push_back(x);
  else
    out = values_of<std::uint32_t>(m, accessor, 1);
  return out;
}

tinygltf::Model read_back(const std::vector<std::uint8_t>& glb) {
  tinygltf::TinyGLTF loader;
  tinygltf::Model m;
  std::string err;
  std::string warn;
  EXPECT_TRUE(
      loader.LoadBinaryFromMemory(&m, &err, &warn, glb.data(), static_cast<unsigned>(glb.size())))
      << err;
  return m;
}

/// The new vertex (index ≥ 4) whose UV is (u, v): UVs are midpoints, so they
/// name the edge.
std::size_t vertex_with_uv(const std::vector<float>& uv, float u, float v) {
  for (std::size_t i = 0; i < uv.size() / 2; ++i)
    if (uv[2 * i] == u && uv[2 * i + 1] == v) return i;
  ADD_FAILURE() << "no vertex with uv " << u << "," << v;
  return 0;
}

TEST(GltfSubdivide, QuadInTwoPrimitivesByHand) {
  auto doc = GltfDocument::load(quad_glb());
  ASSERT_TRUE(doc.ok()) << doc.error().to_string();
  auto r = subdivide_gltf(*doc, {});
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  ASSERT_EQ(r->meshes.size(), 1U);
  EXPECT_EQ(r->meshes[0].primitives, 2U);
  EXPECT_EQ(r->meshes[0].vertices_in, 4U);
  EXPECT_EQ(r->meshes[0].vertices_out, 9U);  // 4 + 5 edges
  EXPECT_EQ(r->meshes[0].triangles_out, 8U);
  EXPECT_EQ(r->meshes[0].edges_split, 5U);

  const tinygltf::Model m = read_back(r->glb);
  const auto& p0 = m.meshes[0].primitives[0];
  const auto& p1 = m.meshes[0].primitives[1];
  EXPECT_EQ(p0.attributes, p1.attributes);  // one vertex set, as in the input
  const auto pos = values_of<float>(m, p0.attributes.at("POSITION"), 3);
  const auto uv = values_of<float>(m, p0.attributes.at("TEXCOORD_0"), 2);
  ASSERT_EQ(pos.size(), 27U);
  // The shared edge 1-2 (uv (0.5, 0.5)) has full adjacency across the two
  // primitives: 3/8 ((1,0,0) + (0,1,0)) + 1/8 ((0,0,0) + (1,1,1)).
  const std::size_t d = vertex_with_uv(uv, 0.5F, 0.5F);
  EXPECT_FLOAT_EQ(pos[3 * d], 0.5F);
  EXPECT_FLOAT_EQ(pos[3 * d + 1], 0.5F);
  EXPECT_FLOAT_EQ(pos[3 * d + 2], 0.125F);
  // Boundary edge 1-3 (uv (1, 0.5)): the midpoint (1, 0.5, 0.5).
  const std::size_t b = vertex_with_uv(uv, 1.0F, 0.5F);
  EXPECT_EQ(pos[3 * b], 1.0F);
  EXPECT_EQ(pos[3 * b + 1], 0.5F);
  EXPECT_EQ(pos[3 * b + 2], 0.5F);
  // Skin of edge 0-1's vertex (uv (0.5, 0)): joints 0 and 1 at 0.5 each.
  const std::size_t e01 = vertex_with_uv(uv, 0.5F, 0.0F);
  const auto joints = values_of<std::uint16_t>(m, p0.attributes.at("JOINTS_0"), 4);
  const auto weights = values_of<float>(m, p0.attributes.at("WEIGHTS_0"), 4);
  EXPECT_EQ(m.accessors[static_cast<std::size_t>(p0.attributes.at("JOINTS_0"))].componentType,
            TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT);
  EXPECT_EQ(std::vector<std::uint16_t>(joints.begin() + 4 * e01, joints.begin() + 4 * e01 + 4),
            (std::vector<std::uint16_t>{0, 1, 0, 0}));
  EXPECT_EQ(std::vector<float>(weights.begin() + 4 * e01, weights.begin() + 4 * e01 + 4),
            (std::vector<float>{0.5F, 0.5F, 0, 0}));
  // The target's delta at that vertex: half of vertex 1's (0,0,1).
  ASSERT_EQ(p0.targets.size(), 1U);
  const auto lift = values_of<float>(m, p0.targets[0].at("POSITION"), 3);
  EXPECT_EQ(lift[3 * e01 + 2], 0.5F);
  const auto& lift_acc = m.accessors[static_cast<std::size_t>(p0.targets[0].at("POSITION"))];
  EXPECT_EQ(lift_acc.maxValues, (std::vector<double>{0, 0, 1}));
  // _S is carried as any other attribute: the midpoint of 1 and 0 on 1-3.
  const auto strength = values_of<float>(m, p0.attributes.at("_S"), 1);
  EXPECT_EQ(strength[b], 0.5F);
  // Each primitive: its triangle in four, all indices inside the vertex set.
  for (const auto* p : {&p0, &p1}) {
    const auto idx = indices_of(m, p->indices);
    EXPECT_EQ(idx.size(), 12U);
    for (std::uint32_t i : idx) EXPECT_LT(i, 9U);
  }
  EXPECT_EQ(indices_of(m, p0.indices)[0], 0U);  // the corner triangle (0, m01, m20)
}

TEST(GltfSubdivide, StrengthAttributeAndEdgeRule) {
  // Vertex 3 has strength 0 in _S: with the min rule its two edges stay
  // whole, so primitive 1 (2,1,3) has one split edge (1-2): two triangles.
  auto doc = GltfDocument::load(quad_glb());
  ASSERT_TRUE(doc.ok());
  GltfSubdivideOptions o;
  o.strength_attribute = "_S";
  o.params.edge_rule = deform::EdgeStrengthRule::kMinimum;
  auto r = subdivide_gltf(*doc, o);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_EQ(r->meshes[0].edges_split, 3U);
  const tinygltf::Model m = read_back(r->glb);
  EXPECT_EQ(indices_of(m, m.meshes[0].primitives[1].indices).size(), 6U);
  EXPECT_EQ(r->meshes[0].vertices_out, 7U);  // only referenced new vertices are kept
}

TEST(GltfSubdivide, ErrorsNameThePlace) {
  auto doc = GltfDocument::load(quad_glb());
  ASSERT_TRUE(doc.ok());
  GltfSubdivideOptions o;
  o.mesh = "quadd";
  auto r = subdivide_gltf(*doc, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "DEFORM_GLTF");
  EXPECT_NE(r.error().message.find("quad"), std::string::npos);
  auto doc2 = GltfDocument::load(quad_glb());
  ASSERT_TRUE(doc2.ok());
  GltfSubdivideOptions o2;
  o2.strength_attribute = "_MISSING";
  auto r2 = subdivide_gltf(*doc2, o2);
  ASSERT_FALSE(r2.ok());
  EXPECT_EQ(r2.error().code, "DEFORM_GLTF");
  EXPECT_EQ(r2.error().location.pointer, "/meshes/0/primitives/0/attributes");
  auto doc3 = GltfDocument::load(quad_glb(1));
  ASSERT_TRUE(doc3.ok());
  auto r3 = subdivide_gltf(*doc3, {});
  ASSERT_FALSE(r3.ok());
  EXPECT_EQ(r3.error().location.pointer, "/meshes/0/primitives/1/mode");
  auto doc4 = GltfDocument::load(quad_glb());
  ASSERT_TRUE(doc4.ok());
  GltfSubdivideOptions o4;
  o4.params.branch_multiplier = 2.0F;
  auto r4 = subdivide_gltf(*doc4, o4);
  ASSERT_FALSE(r4.ok());
  EXPECT_EQ(r4.error().code, "DEFORM_SUBDIV_PARAM");
}

}  // namespace
}  // namespace charkit::ops
