// glTF writer: the GLB bytes checked against the glTF 2.0 layout rules
// (header, chunk types and padding, bufferView alignment, accessor counts and
// POSITION bounds worked out by hand), then read back with tinygltf and the
// vertex data, indices, names, skin and image compared with the input.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "charkit/core/json.h"
#include "charkit/scene/gltf_writer.h"
#include "charkit/scene/image.h"
#include "glb_test_util.h"

#include "tinygltf_include.h"

namespace charkit::scene {
namespace {

using testkit::split_glb;

RgbaImage small_image() {
  RgbaImage img;
  img.width = 2;
  img.height = 2;
  img.pixels = {255, 0, 0, 255, 0, 255, 0, 255, 0, 0, 255, 255, 10, 20, 30, 40};
  return img;
}

Scene sample_scene() {
  Scene s;
  s.name = "sample";
  Skeleton sk;
  sk.name = "skeleton";
  sk.joint_names = {"root", "spine", "head"};
  sk.parents = {-1, 0, 1};
  s.skeleton = sk;

  Mesh a;
  a.name = "mesh_a";
  a.positions = {{0, 0, 0}, {1, 0, 0}, {1, 2, 0}, {0, 2, -3}};
  a.normals = {{0, 0, 1}, {0, 0, 1}, {0, 0, 1}, {0, 0, 1}};
  a.tangents = {{1, 0, 0, 1}, {1, 0, 0, 1}, {1, 0, 0, -1}, {1, 0, 0, 1}};
  a.texcoords = {{{0, 0}, {1, 0}, {1, 1}, {0, 1}}};
  a.colors = {{1, 0, 0, 1}, {0, 1, 0, 1}, {0, 0, 1, 1}, {1, 1, 1, 0.5F}};
  a.joints = {{0, 0, 0, 0}, {1, 0, 0, 0}, {2, 1, 0, 0}, {2, 0, 0, 0}};
  a.weights = {{1, 0, 0, 0}, {1, 0, 0, 0}, {0.75F, 0.25F, 0, 0}, {1, 0, 0, 0}};
  a.primitives = {{{0, 1, 2}, 0}, {{0, 2, 3}, 1}};
  s.meshes.push_back(a);

  Mesh big;  // more than 65535 vertices: UNSIGNED_INT indices
  big.name = "big";
  for (int i = 0; i < 70000; ++i) {
    big.positions.push_back({static_cast<float>(i), 0.5F, -1.0F});
  }
  big.primitives = {{{0, 1, 69999}, std::nullopt}};
  s.meshes.push_back(big);

  s.nodes = {Node{"node_a", 0, {}, {}}, Node{"node_b", 1, {}, {}}};
  s.nodes[1].transform.translation = {0, 1, 0};
  Material m0;
  m0.name = "mat0";
  m0.base_color_texture = 0;
  Material m1;
  m1.name = "mat1";
  m1.normal_texture = 0;
  s.materials = {m0, m1};
  s.textures = {Texture{"tex", 0}};
  auto png = encode_png(small_image());
  EXPECT_TRUE(png.ok());
  s.images = {Image{"img", png.ok() ? *png : std::vector<std::uint8_t>{}}};
  return s;
}

std::vector<std::uint8_t> glb_of(const Scene& s) {
  auto r = write_glb(s);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().to_string());
  return r.ok() ? *r : std::vector<std::uint8_t>{};
}

TEST(GltfWriter, GlbLayout) {
  const auto glb = glb_of(sample_scene());
  const auto chunks = split_glb(glb);
  ASSERT_TRUE(chunks.has_bin);
  const auto& j = chunks.json;
  EXPECT_EQ(j["asset"]["version"], "2.0");
  EXPECT_EQ(j["buffers"].size(), 1u);
  EXPECT_FALSE(j["buffers"][0].contains("uri"));
  EXPECT_EQ(j["buffers"][0]["byteLength"].get<std::size_t>(), chunks.bin.size());

  std::size_t end_of_views = 0;
  for (const auto& view : j["bufferViews"]) {
    EXPECT_EQ(view["byteOffset"].get<std::size_t>() % 4, 0u) << view.dump();
    EXPECT_FALSE(view.contains("byteStride")) << "one accessor per view needs no stride";
    end_of_views = std::max(end_of_views, view["byteOffset"].get<std::size_t>() +
                                              view["byteLength"].get<std::size_t>());
  }
  for (std::size_t i = end_of_views; i < chunks.bin.size(); ++i) {
    EXPECT_EQ(chunks.bin[i], 0) << "BIN padding byte " << i;
  }

  // Mesh A: 4 vertices; POSITION min (0, 0, -3), max (1, 2, 0).
  const auto& prim_a = j["meshes"][0]["primitives"];
  ASSERT_EQ(prim_a.size(), 2u);
  EXPECT_EQ(j["meshes"][0]["name"], "mesh_a");
  const auto& attrs = prim_a[0]["attributes"];
  EXPECT_EQ(attrs, prim_a[1]["attributes"]) << "primitives share the vertex accessors";
  const auto& pos = j["accessors"][attrs["POSITION"].get<std::size_t>()];
  EXPECT_EQ(pos["count"], 4);
  EXPECT_EQ(pos["type"], "VEC3");
  EXPECT_EQ(pos["componentType"], 5126);
  EXPECT_EQ(pos["min"], nlohmann::json::parse("[0.0, 0.0, -3.0]"));
  EXPECT_EQ(pos["max"], nlohmann::json::parse("[1.0, 2.0, 0.0]"));
  for (const char* name : {"NORMAL", "TANGENT", "TEXCOORD_0", "COLOR_0", "JOINTS_0", "WEIGHTS_0"}) {
    ASSERT_TRUE(attrs.contains(name)) << name;
    EXPECT_EQ(j["accessors"][attrs[name].get<std::size_t>()]["count"], 4) << name;
  }
  const auto& joints = j["accessors"][attrs["JOINTS_0"].get<std::size_t>()];
  EXPECT_EQ(joints["componentType"], 5123);
  EXPECT_EQ(joints["type"], "VEC4");
  const auto& idx_a = j["accessors"][prim_a[0]["indices"].get<std::size_t>()];
  EXPECT_EQ(idx_a["componentType"], 5123);
  EXPECT_EQ(idx_a["count"], 3);
  EXPECT_EQ(prim_a[1]["material"], 1);

  // Mesh B: index 69999 still fits UNSIGNED_SHORT? No: 69999 > 65534 -> UNSIGNED_INT.
  const auto& prim_b = j["meshes"][1]["primitives"][0];
  EXPECT_EQ(j["accessors"][prim_b["indices"].get<std::size_t>()]["componentType"], 5125);
  EXPECT_FALSE(prim_b.contains("material"));
  const auto& pos_b = j["accessors"][prim_b["attributes"]["POSITION"].get<std::size_t>()];
  EXPECT_EQ(pos_b["max"], nlohmann::json::parse("[69999.0, 0.5, -1.0]"));
  EXPECT_EQ(pos_b["min"], nlohmann::json::parse("[0.0, 0.5, -1.0]"));

  // Nodes: two scene nodes, then one per joint; the skinned mesh's node has the skin.
  ASSERT_EQ(j["nodes"].size(), 5u);
  EXPECT_EQ(j["nodes"][0]["skin"], 0);
  EXPECT_FALSE(j["nodes"][1].contains("skin"));
  EXPECT_EQ(j["nodes"][1]["translation"], nlohmann::json::parse("[0.0, 1.0, 0.0]"));
  EXPECT_EQ(j["scenes"][0]["nodes"], nlohmann::json::parse("[0, 1, 2]"));
  EXPECT_EQ(j["skins"][0]["joints"], nlohmann::json::parse("[2, 3, 4]"));
  // No matrices given: identity written out, 3 MAT4 floats.
  const auto ibm_index = j["skins"][0]["inverseBindMatrices"].get<std::size_t>();
  EXPECT_EQ(j["accessors"][ibm_index]["type"], "MAT4");
  EXPECT_EQ(j["accessors"][ibm_index]["count"], 3);
  const auto ibm = testkit::accessor_bytes(chunks, ibm_index, 64);
  ASSERT_EQ(ibm.size(), 3u * 64u);
  for (std::size_t m = 0; m < 3; ++m) {
    for (std::size_t e = 0; e < 16; ++e) {
      float v = 0;
      std::memcpy(&v, &ibm[m * 64 + e * 4], 4);
      EXPECT_EQ(v, (e % 5 == 0) ? 1.0F : 0.0F) << m << "/" << e;  // diagonal: 0, 5, 10, 15
    }
  }
  EXPECT_EQ(j["nodes"][2]["children"], nlohmann::json::parse("[3]"));
  EXPECT_EQ(j["skins"][0]["skeleton"], 2);  // the one root joint
  EXPECT_EQ(j["images"][0]["mimeType"], "image/png");
}

template <typename T>
std::vector<T> read_accessor(const tinygltf::Model& m, int accessor, std::size_t components) {
  const auto& acc = m.accessors[static_cast<std::size_t>(accessor)];
  const auto& view = m.bufferViews[static_cast<std::size_t>(acc.bufferView)];
  const auto& buf = m.buffers[static_cast<std::size_t>(view.buffer)];
  std::vector<T> out(acc.count * components);
  const std::size_t offset = view.byteOffset + acc.byteOffset;
  EXPECT_LE(offset + out.size() * sizeof(T), buf.data.size());
  std::memcpy(out.data(), buf.data.data() + offset, out.size() * sizeof(T));
  return out;
}

TEST(GltfWriter, TinygltfReadsBackEqualData) {
  const Scene scene = sample_scene();
  const auto glb = glb_of(scene);
  tinygltf::TinyGLTF loader;
  tinygltf::Model model;
  std::string err;
  std::string warn;
  ASSERT_TRUE(loader.LoadBinaryFromMemory(&model, &err, &warn, glb.data(),
                                          static_cast<unsigned>(glb.size())))
      << err;
  EXPECT_TRUE(err.empty()) << err;
  EXPECT_TRUE(warn.empty()) << warn;
  ASSERT_EQ(model.meshes.size(), 2u);
  EXPECT_EQ(model.meshes[0].name, "mesh_a");
  EXPECT_EQ(model.meshes[1].name, "big");
  const auto& p0 = model.meshes[0].primitives[0];
  const auto positions = read_accessor<float>(model, p0.attributes.at("POSITION"), 3);
  std::vector<float> want;
  for (const auto& v : scene.meshes[0].positions) {
    want.insert(want.end(), v.begin(), v.end());
  }
  EXPECT_EQ(positions, want);
  const auto joints = read_accessor<std::uint16_t>(model, p0.attributes.at("JOINTS_0"), 4);
  EXPECT_EQ(joints, (std::vector<std::uint16_t>{0, 0, 0, 0, 1, 0, 0, 0, 2, 1, 0, 0, 2, 0, 0, 0}));
  const auto weights = read_accessor<float>(model, p0.attributes.at("WEIGHTS_0"), 4);
  EXPECT_EQ(weights[8], 0.75F);
  EXPECT_EQ(weights[9], 0.25F);
  const auto uv = read_accessor<float>(model, p0.attributes.at("TEXCOORD_0"), 2);
  EXPECT_EQ(uv, (std::vector<float>{0, 0, 1, 0, 1, 1, 0, 1}));
  EXPECT_EQ(read_accessor<std::uint16_t>(model, p0.indices, 1),
            (std::vector<std::uint16_t>{0, 1, 2}));
  EXPECT_EQ(read_accessor<std::uint16_t>(model, model.meshes[0].primitives[1].indices, 1),
            (std::vector<std::uint16_t>{0, 2, 3}));
  EXPECT_EQ(read_accessor<std::uint32_t>(model, model.meshes[1].primitives[0].indices, 1),
            (std::vector<std::uint32_t>{0, 1, 69999}));

  ASSERT_EQ(model.skins.size(), 1u);
  std::vector<std::string> joint_names;
  for (int n : model.skins[0].joints) {
    joint_names.push_back(model.nodes[static_cast<std::size_t>(n)].name);
  }
  EXPECT_EQ(joint_names, (std::vector<std::string>{"root", "spine", "head"}));
  EXPECT_EQ(model.nodes[0].name, "node_a");
  EXPECT_EQ(model.nodes[0].mesh, 0);
  ASSERT_EQ(model.materials.size(), 2u);
  EXPECT_EQ(model.materials[0].name, "mat0");
  EXPECT_EQ(model.materials[0].pbrMetallicRoughness.baseColorTexture.index, 0);
  EXPECT_EQ(model.materials[1].normalTexture.index, 0);
  ASSERT_EQ(model.images.size(), 1u);
  EXPECT_EQ(model.images[0].width, 2);
  EXPECT_EQ(model.images[0].height, 2);
  EXPECT_EQ(model.images[0].image, small_image().pixels);
}

// Morph targets (shape keys): every primitive gets the mesh's targets, each a
// POSITION accessor with min/max (glTF 2.0 requires them); mesh.weights and
// extras.targetNames carry the weights and names. tinygltf reads them back.
TEST(GltfWriter, MorphTargetsWithNamesAndWeights) {
  Scene scene = sample_scene();
  Mesh& a = scene.meshes[0];
  a.targets = {MorphTarget{"smile", {{0, 0, 0}, {0.5F, 0, 0}, {0, 0, 0}, {0, -1, 2}}, 0.25F},
               MorphTarget{"blink", {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}}, 0.0F}};
  const auto glb = glb_of(scene);
  tinygltf::TinyGLTF loader;
  tinygltf::Model model;
  std::string err;
  std::string warn;
  ASSERT_TRUE(loader.LoadBinaryFromMemory(&model, &err, &warn, glb.data(),
                                          static_cast<unsigned>(glb.size())))
      << err;
  const auto& mesh = model.meshes[0];
  EXPECT_EQ(mesh.weights, (std::vector<double>{0.25, 0.0}));
  ASSERT_TRUE(mesh.extras.Has("targetNames"));
  EXPECT_EQ(mesh.extras.Get("targetNames").Get(0).Get<std::string>(), "smile");
  EXPECT_EQ(mesh.extras.Get("targetNames").Get(1).Get<std::string>(), "blink");
  for (const auto& prim : mesh.primitives) {
    ASSERT_EQ(prim.targets.size(), 2u);
    const int acc = prim.targets[0].at("POSITION");
    EXPECT_EQ(read_accessor<float>(model, acc, 3),
              (std::vector<float>{0, 0, 0, 0.5F, 0, 0, 0, 0, 0, 0, -1, 2}));
    const auto& accessor = model.accessors[static_cast<std::size_t>(acc)];
    EXPECT_EQ(accessor.minValues, (std::vector<double>{0, -1, 0}));
    EXPECT_EQ(accessor.maxValues, (std::vector<double>{0.5, 0, 2}));
  }
  EXPECT_FALSE(model.meshes[1].primitives[0].targets.size());  // the mesh without targets
  // One displacement per vertex, finite.
  a.targets[1].positions.pop_back();
  auto bad = write_glb(scene);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, "SCENE_MESH_ATTRIBUTE_COUNT");
  a.targets[1].positions.push_back({0, std::nanf(""), 0});
  bad = write_glb(scene);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, "SCENE_MESH_NOT_FINITE");
}

TEST(GltfWriter, FlatSkeletonGetsOneCommonRoot) {
  Scene s = sample_scene();
  s.skeleton->parents = {-1, -1, -1};
  const auto j = split_glb(glb_of(s)).json;
  // Nodes 0, 1 are the scene's, 2..4 the joints, 5 their common parent.
  ASSERT_EQ(j["nodes"].size(), 6u);
  EXPECT_EQ(j["nodes"][5]["name"], "skeleton");
  EXPECT_EQ(j["nodes"][5]["children"], nlohmann::json::parse("[2, 3, 4]"));
  EXPECT_EQ(j["scenes"][0]["nodes"], nlohmann::json::parse("[0, 1, 5]"));
  EXPECT_EQ(j["skins"][0]["skeleton"], 5);
  EXPECT_EQ(j["skins"][0]["joints"], nlohmann::json::parse("[2, 3, 4]"));
}

TEST(GltfWriter, Deterministic) {
  EXPECT_EQ(glb_of(sample_scene()), glb_of(sample_scene()));
}

TEST(GltfWriter, SeparateBufferFile) {
  auto files = write_gltf(sample_scene(), "model.bin");
  ASSERT_TRUE(files.ok());
  const auto j = nlohmann::json::parse(files->json);
  EXPECT_EQ(j["buffers"][0]["uri"], "model.bin");
  EXPECT_EQ(j["buffers"][0]["byteLength"].get<std::size_t>(), files->bin.size());
  EXPECT_EQ(files->bin, split_glb(glb_of(sample_scene())).bin);
}

TEST(GltfWriter, SceneWithoutMeshesHasNoBinChunk) {
  Scene s;
  s.nodes = {Node{"empty", std::nullopt, {}, {}}};
  const auto glb = glb_of(s);
  const auto chunks = split_glb(glb);
  EXPECT_FALSE(chunks.has_bin);
  EXPECT_FALSE(chunks.json.contains("buffers"));
  EXPECT_EQ(glb.size(), 20 + testkit::glb_u32(glb, 12));
}

void expect_error(const Scene& s, const std::string& code) {
  auto r = write_glb(s);
  ASSERT_FALSE(r.ok()) << code;
  EXPECT_EQ(r.error().code, code);
  EXPECT_FALSE(r.error().location.pointer.empty());
}

TEST(GltfWriter, InvalidScenesAreErrors) {
  Scene s = sample_scene();
  s.meshes[0].primitives[0].indices = {0, 1, 4};
  expect_error(s, "SCENE_MESH_INDEX_RANGE");
  s = sample_scene();
  s.meshes[0].primitives[0].indices = {0, 1};
  expect_error(s, "SCENE_MESH_INDEX_COUNT");
  s = sample_scene();
  s.meshes[0].primitives.clear();
  expect_error(s, "SCENE_MESH_NO_PRIMITIVES");
  s = sample_scene();
  s.meshes[0].positions[1][0] = std::numeric_limits<float>::quiet_NaN();
  expect_error(s, "SCENE_MESH_NOT_FINITE");
  s = sample_scene();
  s.meshes[0].normals.pop_back();
  expect_error(s, "SCENE_MESH_ATTRIBUTE_COUNT");
  s = sample_scene();
  s.skeleton.reset();
  expect_error(s, "SCENE_MESH_NO_SKELETON");
  s = sample_scene();
  s.meshes[0].joints[0][2] = 3;
  expect_error(s, "SCENE_MESH_JOINT_RANGE");
  s = sample_scene();
  s.nodes[0].children = {1};
  s.nodes[1].children = {0};
  expect_error(s, "SCENE_NODE_CYCLE");
  s = sample_scene();
  s.skeleton->parents = {-1, 2, 0};
  expect_error(s, "SCENE_SKELETON_PARENT");
  s = sample_scene();
  s.materials[0].base_color_texture = 5;
  expect_error(s, "SCENE_MATERIAL_TEXTURE");
}

}  // namespace
}  // namespace charkit::scene
