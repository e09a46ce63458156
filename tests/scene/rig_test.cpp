// Rig import: the three rigged test models checked against their glTF JSON
// read independently (nlohmann json), a hand-built glTF with the joints
// listed child-first and a named morph target, and malformed input.
#include "charkit/scene/rig.h"
#include "charkit/core/json.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "glb_builder.h"

namespace charkit::scene {
namespace {

std::vector<std::uint8_t> read_all(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// The JSON chunk of a GLB: length at byte 12, data from byte 20.
nlohmann::json glb_json(const std::vector<std::uint8_t>& b) {
  std::uint32_t n = 0;
  std::memcpy(&n, b.data() + 12, 4);
  return nlohmann::json::parse(std::string(b.begin() + 20, b.begin() + 20 + n));
}

class RigModels : public ::testing::TestWithParam<const char*> {};

TEST_P(RigModels, MatchesItsGltfJson) {
  const std::string path = std::string(CHARKIT_TEST_DATA) + "/models/" + GetParam();
  const auto bytes = read_all(path);
  ASSERT_GT(bytes.size(), 20u);
  const auto j = glb_json(bytes);
  // Independently: the first node with a mesh and a skin, its counts.
  std::size_t node = 0;
  while (!(j["nodes"][node].contains("mesh") && j["nodes"][node].contains("skin"))) ++node;
  const auto& mesh = j["meshes"][j["nodes"][node]["mesh"].get<std::size_t>()];
  const auto& skin = j["skins"][j["nodes"][node]["skin"].get<std::size_t>()];
  std::size_t vertices = 0, indices = 0;
  std::vector<std::size_t> offsets;
  for (const auto& p : mesh["primitives"]) {
    offsets.push_back(vertices);
    vertices +=
        j["accessors"][p["attributes"]["POSITION"].get<std::size_t>()]["count"].get<std::size_t>();
    indices += j["accessors"][p["indices"].get<std::size_t>()]["count"].get<std::size_t>();
  }
  // Parent node of every node, from the children lists.
  std::map<std::size_t, std::size_t> parent;
  for (std::size_t i = 0; i < j["nodes"].size(); ++i)
    if (j["nodes"][i].contains("children"))
      for (const auto& c : j["nodes"][i]["children"]) parent[c.get<std::size_t>()] = i;

  auto rig = load_rig_file(path);
  ASSERT_TRUE(rig) << rig.error().to_string();
  EXPECT_EQ(rig->node_index, node);
  EXPECT_EQ(rig->vertex_count(), vertices);
  EXPECT_EQ(rig->primitive_vertex_offsets, offsets);
  EXPECT_EQ(rig->triangles.size(), indices);
  bool normals = true;
  for (const auto& p : mesh["primitives"]) normals = normals && p["attributes"].contains("NORMAL");
  EXPECT_EQ(rig->normals.size(), normals ? vertices * 3 : 0u);
  EXPECT_EQ(rig->joints.size(), vertices * 4);
  EXPECT_EQ(rig->skeleton.joint_count(), skin["joints"].size());
  EXPECT_EQ(rig->skeleton.inverse_bind_matrices.size(), skin["joints"].size());
  const std::size_t targets =
      mesh["primitives"][0].value("targets", nlohmann::json::array()).size();
  ASSERT_EQ(rig->morph_targets.size(), targets);
  for (const auto& t : rig->morph_targets) EXPECT_EQ(t.position_deltas.size(), vertices * 3);
  for (std::size_t k = 0; k < rig->skeleton.joint_count(); ++k) {
    const std::size_t n = rig->joint_nodes[k];
    // Unnamed joint nodes (RiggedSimple's) are called joint_<node>.
    EXPECT_EQ(rig->skeleton.joint_names[k],
              j["nodes"][n].value("name", "joint_" + std::to_string(n)));
    // Parents first, and the parent is the nearest joint ancestor in the JSON.
    const std::int32_t p = rig->skeleton.parents[k];
    ASSERT_LT(p, static_cast<std::int32_t>(k));
    std::int64_t expect = -1;
    for (auto it = parent.find(n); it != parent.end(); it = parent.find(it->second)) {
      const auto& js = skin["joints"];
      if (std::find(js.begin(), js.end(), it->second) != js.end()) {
        expect = static_cast<std::int64_t>(it->second);
        break;
      }
    }
    if (p < 0)
      EXPECT_EQ(expect, -1);
    else
      EXPECT_EQ(static_cast<std::int64_t>(rig->joint_nodes[static_cast<std::size_t>(p)]), expect);
  }
  for (std::size_t v = 0; v < vertices; ++v) {
    float sum = 0;
    for (std::size_t k = 0; k < 4; ++k) sum += rig->weights[v * 4 + k];
    EXPECT_NEAR(sum, 1.0F, 1e-5F) << v;
  }
  // These models are bound in their rest pose up to one global rotation (their
  // bind space is Z-up; a node above the joints turns it Y-up — checked by
  // hand from the JSON and BIN for RiggedSimple and CesiumMan: world × IBM
  // is a -90° turn about x). So at rest every joint's skinning matrix is the
  // same rigid transform.
  auto mats = skinning_matrices(*rig, rig->skeleton.local_transforms);
  ASSERT_TRUE(mats);
  float extent = 1.0F;
  for (float x : rig->positions) extent = std::max(extent, std::abs(x));
  const float* m0 = mats->data();
  for (std::size_t jnt = 1; jnt < rig->skeleton.joint_count(); ++jnt)
    for (std::size_t i = 0; i < 16; ++i) {
      const float tol = i >= 12 ? 1e-4F * extent : 1e-4F;
      EXPECT_NEAR((*mats)[jnt * 16 + i], m0[i], tol) << "joint " << jnt << " [" << i << "]";
    }
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b) {
      float dot = 0;
      for (int r = 0; r < 3; ++r) dot += m0[a * 4 + r] * m0[b * 4 + r];
      EXPECT_NEAR(dot, a == b ? 1.0F : 0.0F, 1e-4F) << a << b;  // orthonormal columns
    }
  if (std::string(GetParam()) == "RiggedSimple.glb" || std::string(GetParam()) == "CesiumMan.glb") {
    // Columns (x, y, z): x stays, y goes to -z, z goes to +y.
    EXPECT_NEAR(m0[0], 1.0F, 1e-4F);
    EXPECT_NEAR(m0[6], -1.0F, 1e-4F);
    EXPECT_NEAR(m0[9], 1.0F, 1e-4F);
  }
}

INSTANTIATE_TEST_SUITE_P(Rig, RigModels,
                         ::testing::Values("RiggedSimple.glb", "RiggedFigure.glb", "CesiumMan.glb",
                                           "Godette_vrm_v4.vrm", "sphere.vrm"));

void put_f(std::vector<std::uint8_t>& b, float f) {
  const auto u = std::bit_cast<std::uint32_t>(f);
  for (int i = 0; i < 4; ++i) b.push_back(static_cast<std::uint8_t>(u >> (8 * i)));
}

// One triangle skinned to two joints. Nodes: 0 "root" (children [1]),
// 1 "child" at (0,1,0), 2 the mesh. skin.joints lists the child first, so
// the loader must reorder. Buffer: positions @0 (36 B), JOINTS_0 u8 @36
// (12 B), WEIGHTS_0 f32 @48 (48 B), indices u16 @96 (6 B + 2 pad), morph
// POSITION deltas @104 (36 B), inverse bind matrices @140 (128 B).
std::string tiny_gltf_json(std::uint8_t bad_joint = 0) {
  std::vector<std::uint8_t> b;
  for (float f : {0.F, 0.F, 0.F, 1.F, 0.F, 0.F, 0.F, 2.F, 0.F}) put_f(b, f);
  // Vertex 0 on skin joint 1 (root), vertices 1 and 2 on skin joint 0
  // (child); vertex 2 also names joint 1 with weight 0.
  for (std::uint8_t x : {std::uint8_t{1}, std::uint8_t{0}, std::uint8_t{0}, std::uint8_t{0},
                         std::uint8_t{0}, std::uint8_t{0}, std::uint8_t{0}, std::uint8_t{0},
                         bad_joint, std::uint8_t{1}, std::uint8_t{0}, std::uint8_t{0}})
    b.push_back(x);
  for (float f : {2.F, 0.F, 0.F, 0.F, 1.F, 0.F, 0.F, 0.F, 0.5F, 0.F, 0.F, 0.F}) put_f(b, f);
  for (int x : {0, 0, 1, 0, 2, 0, 0, 0}) b.push_back(static_cast<std::uint8_t>(x));
  for (float f : {0.F, 0.F, 0.1F, 0.F, 0.F, 0.2F, 0.F, 0.F, 0.3F}) put_f(b, f);
  for (float ty : {-1.F, 0.F})  // child's inverse bind, then root's
    for (float f : {1.F, 0.F, 0.F, 0.F, 0.F, 1.F, 0.F, 0.F, 0.F, 0.F, 1.F, 0.F, 0.F, ty, 0.F, 1.F})
      put_f(b, f);
  EXPECT_EQ(b.size(), 268u);
  nlohmann::json j = {
      {"asset", {{"version", "2.0"}}},
      {"scene", 0},
      {"scenes", {{{"nodes", {0, 2}}}}},
      {"nodes",
       {{{"name", "root"}, {"children", {1}}},
        {{"name", "child"}, {"translation", {0, 1, 0}}},
        {{"name", "body"}, {"mesh", 0}, {"skin", 0}}}},
      {"skins", {{{"joints", {1, 0}}, {"inverseBindMatrices", 5}}}},
      {"meshes",
       {{{"name", "tri"},
         {"extras", {{"targetNames", {"smile"}}}},
         {"primitives",
          {{{"attributes", {{"POSITION", 0}, {"JOINTS_0", 1}, {"WEIGHTS_0", 2}}},
            {"indices", 3},
            {"targets", {{{"POSITION", 4}}}}}}}}}},
      {"buffers", {{{"byteLength", b.size()}, {"uri", testkit::gltf_data_uri(b)}}}},
      {"bufferViews",
       {{{"buffer", 0}, {"byteOffset", 0}, {"byteLength", 36}},
        {{"buffer", 0}, {"byteOffset", 36}, {"byteLength", 12}},
        {{"buffer", 0}, {"byteOffset", 48}, {"byteLength", 48}},
        {{"buffer", 0}, {"byteOffset", 96}, {"byteLength", 6}},
        {{"buffer", 0}, {"byteOffset", 104}, {"byteLength", 36}},
        {{"buffer", 0}, {"byteOffset", 140}, {"byteLength", 128}}}},
      {"accessors",
       {{{"bufferView", 0},
         {"componentType", 5126},
         {"count", 3},
         {"type", "VEC3"},
         {"min", {0, 0, 0}},
         {"max", {1, 2, 0}}},
        {{"bufferView", 1}, {"componentType", 5121}, {"count", 3}, {"type", "VEC4"}},
        {{"bufferView", 2}, {"componentType", 5126}, {"count", 3}, {"type", "VEC4"}},
        {{"bufferView", 3}, {"componentType", 5123}, {"count", 3}, {"type", "SCALAR"}},
        {{"bufferView", 4}, {"componentType", 5126}, {"count", 3}, {"type", "VEC3"}},
        {{"bufferView", 5}, {"componentType", 5126}, {"count", 2}, {"type", "MAT4"}}}}};
  return j.dump();
}

TEST(RigLoad, HandBuiltGltfReordersJointsAndReadsMorphs) {
  const std::string text = tiny_gltf_json();
  auto rig = load_rig(core::as_bytes(text));
  ASSERT_TRUE(rig) << rig.error().to_string();
  EXPECT_EQ(rig->mesh_name, "tri");
  EXPECT_EQ(rig->node_index, 2u);
  ASSERT_EQ(rig->skeleton.joint_names, (std::vector<std::string>{"root", "child"}));
  EXPECT_EQ(rig->skeleton.parents, (std::vector<std::int32_t>{-1, 0}));
  EXPECT_EQ(rig->joint_nodes, (std::vector<std::size_t>{0, 1}));
  // Skin joint 1 (root) is now 0, skin joint 0 (child) is now 1.
  EXPECT_EQ(rig->joints[0], 0u);
  EXPECT_EQ(rig->joints[4], 1u);
  EXPECT_EQ(rig->joints[8], 1u);
  EXPECT_FLOAT_EQ(rig->weights[0], 1.0F);  // 2 normalised
  EXPECT_FLOAT_EQ(rig->weights[8], 1.0F);  // 0.5 normalised
  EXPECT_EQ(rig->triangles, (std::vector<std::uint32_t>{0, 1, 2}));
  EXPECT_TRUE(rig->normals.empty());
  ASSERT_EQ(rig->morph_targets.size(), 1u);
  EXPECT_EQ(rig->morph_targets[0].name, "smile");
  EXPECT_FLOAT_EQ(rig->morph_targets[0].position_deltas[8], 0.3F);
  // Child's inverse bind (translation -1 in y) moved along with its joint.
  EXPECT_FLOAT_EQ(rig->skeleton.inverse_bind_matrices[1][13], -1.0F);
  EXPECT_FLOAT_EQ(rig->skeleton.local_transforms[1].translation[1], 1.0F);
  auto mats = skinning_matrices(*rig, rig->skeleton.local_transforms);
  ASSERT_TRUE(mats);
  for (std::size_t jnt = 0; jnt < 2; ++jnt)
    for (std::size_t i = 0; i < 16; ++i)
      EXPECT_FLOAT_EQ((*mats)[jnt * 16 + i], kIdentity4[i]) << jnt << " " << i;
}

TEST(RigLoad, WeightedJointPastTheSkinIsAnError) {
  const std::string text = tiny_gltf_json(7);
  auto rig = load_rig(core::as_bytes(text));
  ASSERT_FALSE(rig);
  EXPECT_EQ(rig.error().code, "RIG_JOINT_INDEX");
  EXPECT_EQ(rig.error().location.pointer, "/accessors/1");
}

TEST(RigLoad, MalformedInputIsRefused) {
  const std::string path = std::string(CHARKIT_TEST_DATA) + "/models/RiggedSimple.glb";
  auto bytes = read_all(path);
  bytes.resize(bytes.size() / 2);
  auto rig = load_rig(bytes);
  ASSERT_FALSE(rig);
  EXPECT_FALSE(rig.error().code.empty());
  RigOptions by_name;
  by_name.mesh_name = "no such mesh";
  auto named = load_rig_file(path, by_name);
  ASSERT_FALSE(named);
  EXPECT_EQ(named.error().code, "RIG_NO_SKINNED_MESH");
  const std::string not_skinned =
      R"({"asset":{"version":"2.0"},"nodes":[{"name":"a"}],"scenes":[{"nodes":[0]}]})";
  auto none = load_rig(core::as_bytes(not_skinned));
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code, "RIG_NO_SKINNED_MESH");
}

TEST(RigChoice, JointInfluenceCountsTheJointsAndEverythingBelow) {
  const std::string text = tiny_gltf_json();
  auto rig = load_rig(core::as_bytes(text));
  ASSERT_TRUE(rig) << rig.error().to_string();
  // Vertex 0 is on root, vertices 1 and 2 on child (weights normalised to 1).
  const std::vector<std::string> child{"child"}, root{"root"}, none{}, unknown{"nope"};
  EXPECT_DOUBLE_EQ(joint_influence(*rig, child), 2.0);
  EXPECT_DOUBLE_EQ(joint_influence(*rig, root), 3.0);  // child is below root
  EXPECT_DOUBLE_EQ(joint_influence(*rig, none), 0.0);
  EXPECT_DOUBLE_EQ(joint_influence(*rig, unknown), 0.0);
  auto list = list_skinned_meshes(core::as_bytes(text));
  ASSERT_TRUE(list) << list.error().to_string();
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ((*list)[0].node, 2u);
  EXPECT_EQ((*list)[0].label(), "tri");
  EXPECT_EQ((*list)[0].vertex_count, 3u);
}

// Godette's VRM has two skinned meshes, the face (630 vertices, node 68)
// first and the body (7437, node 69): a leg bone moves only the body.
TEST(RigChoice, TheMeshTheBonesMoveMostIsChosen) {
  const std::string path = std::string(CHARKIT_TEST_DATA) + "/models/Godette_vrm_v4.vrm";
  const auto bytes = read_all(path);
  auto list = list_skinned_meshes(bytes);
  ASSERT_TRUE(list) << list.error().to_string();
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].label(), "FaceMesh");
  EXPECT_EQ((*list)[0].vertex_count, 630u);
  EXPECT_EQ((*list)[1].label(), "BodyMesh");
  EXPECT_EQ((*list)[1].vertex_count, 7437u);

  const std::vector<std::string> leg{"thigh.l_Armature"};
  auto first = load_rig(bytes);  // no bones to go by: the first skinned mesh
  ASSERT_TRUE(first);
  EXPECT_EQ(first->mesh_name, "FaceMesh");
  EXPECT_EQ(joint_influence(*first, leg), 0.0);

  auto chosen = load_rig_moved_most(bytes, leg);
  ASSERT_TRUE(chosen) << chosen.error().to_string();
  EXPECT_EQ(chosen->chosen, 1u);
  EXPECT_EQ(chosen->rig.mesh_name, "BodyMesh");
  EXPECT_EQ(chosen->rig.vertex_count(), 7437u);
  EXPECT_GT(chosen->influence, 100.0);
  EXPECT_LT(chosen->influence, 7437.0);
  EXPECT_DOUBLE_EQ(chosen->influence, joint_influence(chosen->rig, leg));

  // A named mesh is taken as named, with its (here zero) influence.
  RigOptions face;
  face.mesh_name = "FaceMesh";
  auto named = load_rig_moved_most(bytes, leg, face);
  ASSERT_TRUE(named);
  EXPECT_EQ(named->chosen, 0u);
  EXPECT_EQ(named->influence, 0.0);
  // The root moves every vertex of both: the larger mesh wins.
  const std::vector<std::string> root{"Armature_rootJoint"};
  auto all = load_rig_moved_most(bytes, root);
  ASSERT_TRUE(all);
  EXPECT_EQ(all->rig.mesh_name, "BodyMesh");
  EXPECT_NEAR(all->influence, 7437.0, 0.5);

  // A wrong name lists the meshes there are.
  RigOptions wrong;
  wrong.mesh_name = "Bdy";
  auto missing = load_rig(bytes, wrong);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, "RIG_NO_SKINNED_MESH");
  EXPECT_NE(missing.error().message.find("\"FaceMesh\", \"BodyMesh\""), std::string::npos)
      << missing.error().message;
  RigOptions by_node;
  by_node.node = 69;
  auto node = load_rig(bytes, by_node);
  ASSERT_TRUE(node);
  EXPECT_EQ(node->mesh_name, "BodyMesh");
}

}  // namespace
}  // namespace charkit::scene
