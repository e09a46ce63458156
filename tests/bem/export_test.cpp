// `bem export`: a package built by hand (positions + normals in stream 0, UVs
// in stream 1, the 12-byte skin layout in stream 2, two draws, an RGBA32 and
// a BC1 texture, one deformation channel) exported with given settings, the
// GLB read back with tinygltf. Expected values are worked out by hand below
// from §7, §8, §10 and the documented Unity -> glTF conversion (x negated,
// winding reversed, v' = 1 - v, image rows flipped).
#include <gtest/gtest.h>

#include <cstring>

#include "../scene/glb_test_util.h"
#include "charkit/bem/export_gltf.h"
#include "charkit/bem/load.h"
#include "charkit/bem/settings.h"
#include "charkit/core/json.h"
#include "morph_test_support.h"
#include "package_builder.h"

#include "tinygltf_include.h"

namespace charkit::bem {
namespace {

using core::Json;
using testkit::ByteVec;
using testkit::cat;

/// Payloads: 0 stream 0 (position + normal), 1 UVs, 2 skin, 3 draw 0 indices,
/// 4 RGBA32 texture, 5 draw 1 indices, 6 BC1 texture, 7 deformation frame.
testkit::TestPackage export_package() {
  testkit::TestPackage p = testkit::make_valid_package(3);
  Json& m = p.manifest;
  m["required_capabilities"].push_back("body-parameters");
  m["required_capabilities"].push_back("mesh-position-deltas");
  m["option_groups"].push_back(Json{
      {"id", "sleeves"},
      {"name", "Sleeves"},
      {"default", "on"},
      {"choices",
       Json::array({Json{{"id", "on"}, {"name", "On"}}, Json{{"id", "off"}, {"name", "Off"}}})}});
  Json& mesh = m["meshes"][0];
  testkit::make_quad_skin_mesh(mesh);
  Json draw1 = mesh["draws"][0];
  draw1["when"] = Json{{"eq", Json::array({"sleeves", "on"})}};
  draw1["indices"] = 5;
  draw1["textures"] = Json::array({1});
  mesh["draws"].push_back(draw1);
  Json tex0 = m["textures"][0];
  tex0["width"] = 2;
  tex0["height"] = 2;
  Json tex1 = m["textures"][0];
  tex1["format"] = 10;  // BC1
  tex1["payload"] = 6;
  tex1["original_name"] = "T_actor_example_body_01_b";
  m["textures"] = Json::array({tex0, tex1});
  m["parameters"] = Json::array({morphtest::body_parameter()});
  m["mesh_deformations"] =
      Json::array({Json{{"mesh", 0},
                        {"parameter", "body"},
                        {"frames", Json::array({Json{{"value", 0}, {"neutral", true}},
                                                Json{{"value", 1000},
                                                     {"payload", 7},
                                                     {"count", 2},
                                                     {"encoding", "sparse-position-f32"}}})}}});

  // Quad: v0 (0,0,0), v1 (1,0,0), v2 (1,1,0), v3 (0,1,0); every normal (0,0,1).
  ByteVec s0;
  for (const std::vector<float>& v :
       std::initializer_list<std::vector<float>>{{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}}) {
    s0 = cat({s0, testkit::f32_bytes(v), testkit::f32_bytes({0, 0, 1})});
  }
  // Skin (UNorm16 x4 weights, UInt8 x4 bones): v0 bone 0; v1, v3 bone 1; v2 half and half.
  ByteVec skin = cat({testkit::u16_bytes({65535, 0, 0, 0}),
                      {0, 0, 0, 0},
                      testkit::u16_bytes({65535, 0, 0, 0}),
                      {1, 0, 0, 0},
                      testkit::u16_bytes({32768, 32767, 0, 0}),
                      {0, 1, 0, 0},
                      testkit::u16_bytes({65535, 0, 0, 0}),
                      {1, 0, 0, 0}});
  // RGBA32 2x2, rows bottom first (Unity): red, green / blue, white.
  ByteVec rgba = {255, 0, 0, 255, 0, 255, 0, 255, 0, 0, 255, 255, 255, 255, 255, 255};
  // BC1: c0 = c1 = 0x07E0 (pure green), all indices 0.
  ByteVec bc1 = {0xE0, 0x07, 0xE0, 0x07, 0, 0, 0, 0};
  p.payloads = {s0,   testkit::f32_bytes({0, 0, 1, 0, 1, 1, 0, 1}),
                skin, testkit::u16_bytes({0, 1, 2}),
                rgba, testkit::u16_bytes({0, 2, 3}),
                bc1,  morphtest::deformation_payload({{1, 0.5f, 0, 0}, {3, 0, -1, 0.25f}})};
  return p;
}

struct Exported {
  ByteVec file;
  LoadedPackage loaded;
  std::optional<GlbExport> glb;
};

void run_export(Exported& e, const std::string& options, const std::string& parameters,
                const ExportOptions& eo = {},
                const testkit::TestPackage& package = export_package()) {
  e.file = package.binary();
  e.loaded = load_package(e.file);
  ASSERT_TRUE(e.loaded.ok()) << e.loaded.error << "\n" << e.loaded.validation.report.to_text("pkg");
  auto settings = parse_settings(*e.loaded.model, options, parameters);
  ASSERT_TRUE(settings.ok()) << settings.error().to_string();
  EXPECT_TRUE(settings->warnings.empty());
  auto r = export_glb(*e.loaded.model, *e.loaded.package, *settings, eo);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  e.glb = std::move(*r);
}

tinygltf::Model read_back(const ByteVec& glb) {
  tinygltf::TinyGLTF loader;
  tinygltf::Model model;
  std::string err;
  std::string warn;
  EXPECT_TRUE(loader.LoadBinaryFromMemory(&model, &err, &warn, glb.data(),
                                          static_cast<unsigned>(glb.size())))
      << err;
  EXPECT_TRUE(err.empty()) << err;
  return model;
}

template <typename T>
std::vector<T> accessor(const tinygltf::Model& m, int index, std::size_t components) {
  const auto& acc = m.accessors[static_cast<std::size_t>(index)];
  const auto& view = m.bufferViews[static_cast<std::size_t>(acc.bufferView)];
  const auto& buf = m.buffers[static_cast<std::size_t>(view.buffer)];
  std::vector<T> out(acc.count * components);
  std::memcpy(out.data(), buf.data.data() + view.byteOffset + acc.byteOffset,
              out.size() * sizeof(T));
  return out;
}

TEST(BemExport, MeshesMorphsSkinMaterialsAndTextures) {
  Exported e;
  run_export(e, "outfit:a&sleeves:on", "body:500");
  ASSERT_TRUE(e.glb.has_value());
  EXPECT_TRUE(e.glb->result.warnings.empty());
  testkit::split_glb(e.glb->glb);  // header, chunks and padding as glTF 2.0 §4.4 lays them out
  const tinygltf::Model m = read_back(e.glb->glb);

  ASSERT_EQ(m.meshes.size(), 1u);
  EXPECT_EQ(m.meshes[0].name, "mesh_0");
  // The replaced component, one node per palette bone, and a common root
  // ("palette") over the flat joints, which glTF skins need.
  ASSERT_EQ(m.nodes.size(), 4u);
  EXPECT_EQ(m.nodes[3].name, "palette");
  EXPECT_EQ(m.nodes[3].children, (std::vector<int>{1, 2}));
  ASSERT_EQ(m.skins.size(), 1u);
  EXPECT_EQ(m.skins[0].skeleton, 3);
  EXPECT_EQ(m.nodes[0].name, "S_actor_example_body_01_lod0");
  EXPECT_EQ(m.nodes[0].mesh, 0);
  EXPECT_EQ(m.nodes[0].skin, 0);

  const auto& prims = m.meshes[0].primitives;
  ASSERT_EQ(prims.size(), 2u);  // both draws selected
  // §10 at tick 500 between frames 0 (neutral) and 1000: weight 0.5 of the 1000 deltas:
  // v1 + (0.25, 0, 0) = (1.25, 0, 0); v3 + (0, -0.5, 0.125) = (0, 0.5, 0.125). Then x negated.
  EXPECT_EQ(accessor<float>(m, prims[0].attributes.at("POSITION"), 3),
            (std::vector<float>{-0.0f, 0, 0, -1.25f, 0, 0, -1, 1, 0, -0.0f, 0.5f, 0.125f}));
  EXPECT_EQ(accessor<float>(m, prims[0].attributes.at("NORMAL"), 3),
            (std::vector<float>{-0.0f, 0, 1, -0.0f, 0, 1, -0.0f, 0, 1, -0.0f, 0, 1}));
  EXPECT_EQ(accessor<float>(m, prims[0].attributes.at("TEXCOORD_0"), 2),
            (std::vector<float>{0, 1, 1, 1, 1, 0, 0, 0}));  // v' = 1 - v
  // Draw order kept, winding reversed: [0,1,2] -> [0,2,1]; [0,2,3] -> [0,3,2].
  EXPECT_EQ(accessor<std::uint16_t>(m, prims[0].indices, 1), (std::vector<std::uint16_t>{0, 2, 1}));
  EXPECT_EQ(accessor<std::uint16_t>(m, prims[1].indices, 1), (std::vector<std::uint16_t>{0, 3, 2}));

  // Skin: palette order = joint order; v2: 32768/65535 and 32767/65535, sum already 1.
  EXPECT_EQ(accessor<std::uint16_t>(m, prims[0].attributes.at("JOINTS_0"), 4),
            (std::vector<std::uint16_t>{0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0}));
  const auto weights = accessor<float>(m, prims[0].attributes.at("WEIGHTS_0"), 4);
  EXPECT_FLOAT_EQ(weights[0], 1.0f);
  EXPECT_NEAR(weights[8], 32768.0 / 65535.0, 1e-6);
  EXPECT_NEAR(weights[9], 32767.0 / 65535.0, 1e-6);
  ASSERT_EQ(m.skins.size(), 1u);
  ASSERT_EQ(m.skins[0].joints.size(), 2u);
  EXPECT_EQ(m.nodes[static_cast<std::size_t>(m.skins[0].joints[0])].name, "Bip001_Pelvis");
  EXPECT_EQ(m.nodes[static_cast<std::size_t>(m.skins[0].joints[1])].name, "Bip001_Spine");

  // Materials: named after material_name; each draw's texture as base colour.
  ASSERT_EQ(m.materials.size(), 2u);
  EXPECT_EQ(m.materials[0].name, "M_actor_example_body_01");
  EXPECT_EQ(m.materials[1].name, "M_actor_example_body_01");
  EXPECT_EQ(prims[0].material, 0);
  EXPECT_EQ(prims[1].material, 1);
  ASSERT_EQ(m.images.size(), 2u);
  const auto& img0 = m.images[static_cast<std::size_t>(
      m.textures[static_cast<std::size_t>(
                     m.materials[0].pbrMetallicRoughness.baseColorTexture.index)]
          .source)];
  EXPECT_EQ(img0.name, "T_actor_example_body_01_d");
  // Rows flipped: PNG top row = Unity's last row (blue, white), then (red, green).
  EXPECT_EQ(img0.image, (std::vector<unsigned char>{0, 0, 255, 255, 255, 255, 255, 255, 255, 0, 0,
                                                    255, 0, 255, 0, 255}));
  const auto& img1 = m.images[static_cast<std::size_t>(
      m.textures[static_cast<std::size_t>(
                     m.materials[1].pbrMetallicRoughness.baseColorTexture.index)]
          .source)];
  ASSERT_EQ(img1.image.size(), 64u);
  for (std::size_t i = 0; i < 64; i += 4) {
    EXPECT_EQ((std::vector<unsigned char>(img1.image.begin() + static_cast<std::ptrdiff_t>(i),
                                          img1.image.begin() + static_cast<std::ptrdiff_t>(i + 4))),
              (std::vector<unsigned char>{0, 255, 0, 255}));
  }
}

TEST(BemExport, UnselectedDrawIsNotAPrimitive) {
  Exported e;
  run_export(e, "outfit:a&sleeves:off", "");
  ASSERT_TRUE(e.glb.has_value());
  const tinygltf::Model m = read_back(e.glb->glb);
  ASSERT_EQ(m.meshes.size(), 1u);
  ASSERT_EQ(m.meshes[0].primitives.size(), 1u);
  // Default tick 0 is the neutral frame: positions as stored (x negated).
  EXPECT_EQ(accessor<float>(m, m.meshes[0].primitives[0].attributes.at("POSITION"), 3),
            (std::vector<float>{-0.0f, 0, 0, -1, 0, 0, -1, 1, 0, -0.0f, 1, 0}));
  EXPECT_EQ(m.images.size(), 1u);
}

TEST(BemExport, KeptComponentExportsNothing) {
  Exported e;
  run_export(e, "outfit:b", "");
  ASSERT_TRUE(e.glb.has_value());
  const tinygltf::Model m = read_back(e.glb->glb);
  EXPECT_TRUE(m.meshes.empty());
  EXPECT_TRUE(m.images.empty());
  // An export without geometry says so.
  ASSERT_EQ(e.glb->result.warnings.size(), 1u);
  EXPECT_EQ(e.glb->result.warnings[0].code, "BEM_EXPORT_EMPTY");
}

TEST(BemExport, RawAxesKeepStoredValues) {
  Exported e;
  ExportOptions eo;
  eo.unity_to_gltf = false;
  run_export(e, "outfit:a&sleeves:on", "body:1000", eo);
  ASSERT_TRUE(e.glb.has_value());
  const tinygltf::Model m = read_back(e.glb->glb);
  const auto& prims = m.meshes[0].primitives;
  // Full frame: v1 + (0.5, 0, 0), v3 + (0, -1, 0.25).
  EXPECT_EQ(accessor<float>(m, prims[0].attributes.at("POSITION"), 3),
            (std::vector<float>{0, 0, 0, 1.5f, 0, 0, 1, 1, 0, 0, 0, 0.25f}));
  EXPECT_EQ(accessor<float>(m, prims[0].attributes.at("TEXCOORD_0"), 2),
            (std::vector<float>{0, 0, 1, 0, 1, 1, 0, 1}));
  EXPECT_EQ(accessor<std::uint16_t>(m, prims[0].indices, 1), (std::vector<std::uint16_t>{0, 1, 2}));
}

// glTF wants unit normals (the Khronos validator's ACCESSOR_VECTOR3_NON_UNIT):
// long and short ones are normalised, a zero one is recomputed from the
// faces that use the vertex, and a warning counts them.
TEST(BemExport, NonUnitNormalsAreMadeUnit) {
  testkit::TestPackage p = export_package();
  ByteVec s0;
  const std::vector<std::vector<float>> pos = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}};
  const std::vector<std::vector<float>> nrm = {{0, 0, 2}, {0, 0, 0}, {0, 0.6f, 0.8f}, {0, 0, 0.5f}};
  for (std::size_t v = 0; v < 4; ++v)
    s0 = cat({s0, testkit::f32_bytes(pos[v]), testkit::f32_bytes(nrm[v])});
  p.payloads[0] = s0;
  Exported e;
  ExportOptions eo;
  eo.unity_to_gltf = false;
  run_export(e, "outfit:a&sleeves:on", "", eo, p);
  ASSERT_TRUE(e.glb.has_value());
  ASSERT_EQ(e.glb->result.warnings.size(), 1u);
  const auto& w = e.glb->result.warnings[0];
  EXPECT_EQ(w.code, "BEM_EXPORT_NORMALS");
  EXPECT_NE(w.message.find("2 normals were not unit length"), std::string::npos) << w.message;
  EXPECT_NE(w.message.find("1 normals were zero"), std::string::npos) << w.message;
  const tinygltf::Model m = read_back(e.glb->glb);
  const auto n = accessor<float>(m, m.meshes[0].primitives[0].attributes.at("NORMAL"), 3);
  // v1 lies on triangle (0, 1, 2) only: (1,0,0) x (1,1,0) = (0,0,1).
  const std::vector<float> want = {0, 0, 1, 0, 0, 1, 0, 0.6f, 0.8f, 0, 0, 1};
  ASSERT_EQ(n.size(), want.size());
  for (std::size_t i = 0; i < n.size(); ++i) EXPECT_NEAR(n[i], want[i], 1e-6) << i;
  // Unit normals as stored: no warning.
  Exported plain;
  run_export(plain, "outfit:a&sleeves:on", "", eo);
  ASSERT_TRUE(plain.glb.has_value());
  EXPECT_TRUE(plain.glb->result.warnings.empty());
}

TEST(BemExport, UndecodableTextureIsAWarningAndTheMaterialStays) {
  Exported e;
  ExportOptions eo;
  eo.texture_limits.max_pixels = 4;  // the 2x2 RGBA32 decodes, the 4x4 BC1 does not
  run_export(e, "outfit:a&sleeves:on", "", eo);
  ASSERT_TRUE(e.glb.has_value());
  ASSERT_EQ(e.glb->result.warnings.size(), 1u);
  EXPECT_EQ(e.glb->result.warnings[0].code, "BEM_EXPORT_TEXTURE_DECODE");
  EXPECT_EQ(e.glb->result.warnings[0].pointer, "/textures/1");
  const tinygltf::Model m = read_back(e.glb->glb);
  ASSERT_EQ(m.materials.size(), 2u);
  EXPECT_EQ(m.materials[1].name, "M_actor_example_body_01");
  EXPECT_EQ(m.materials[1].pbrMetallicRoughness.baseColorTexture.index, -1);
  EXPECT_EQ(m.images.size(), 1u);
}

// The game's 16/12/12 layout (docs/bem/export.md): stream 0 position +
// packed normal/tangent word, stream 1 UV + SNorm8×4 outline data, stream 2
// the 12-byte skin. Words from the bit layout (packed_tbn_test.cpp works
// the same three out by hand).
testkit::TestPackage packed_layout_package() {
  testkit::TestPackage p = export_package();
  Json& mesh = p.manifest["meshes"][0];
  mesh["streams"][0]["stride"] = 16;
  mesh["streams"][1]["stride"] = 12;
  mesh["attributes"] = Json::array({Json::array({0, 0, 3, 0, 0}), Json::array({1, 0, 1, 0, 12}),
                                    Json::array({4, 0, 2, 1, 0}), Json::array({6, 3, 4, 1, 8}),
                                    Json::array({12, 4, 4, 2, 0}), Json::array({13, 6, 4, 2, 8})});
  constexpr std::uint32_t kFlag = 1u << 30;
  constexpr std::uint32_t kPlus = 1u << 31;
  const std::uint32_t words[4] = {
      128u << 20 | kFlag | kPlus,              // n +z, t ≈ +x, sign +
      0x201u | 383u << 20 | kFlag | kPlus,     // n −x, t ≈ +y, sign +
      511u | 511u << 10 | 383u << 20 | kFlag,  // n −z, t ≈ +x, sign −
      128u << 20 | kPlus,                      // as v0 without the flag
  };
  const std::vector<std::vector<float>> pos = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}};
  const std::vector<std::vector<float>> uv = {{0, 0}, {1, 0}, {1, 1}, {0, 1}};
  ByteVec s0;
  ByteVec s1;
  for (int v = 0; v < 4; ++v) {
    s0 = cat({s0, testkit::f32_bytes(pos[v]), testkit::u32_bytes({words[v]})});
    s1 = cat({s1, testkit::f32_bytes(uv[v]), ByteVec{127, static_cast<std::uint8_t>(-127), 0, 64}});
  }
  p.payloads[0] = s0;
  p.payloads[1] = s1;
  return p;
}

TEST(BemExport, PackedNormalWordBecomesNormalAndTangent) {
  Exported e;
  run_export(e, "outfit:a&sleeves:off", "", {}, packed_layout_package());
  ASSERT_TRUE(e.glb.has_value());
  ASSERT_EQ(e.glb->result.warnings.size(), 1u);
  EXPECT_EQ(e.glb->result.warnings[0].code, "BEM_EXPORT_PACKED_NORMAL");
  EXPECT_NE(e.glb->result.warnings[0].message.find("1 of 4"), std::string::npos);
  const tinygltf::Model m = read_back(e.glb->glb);
  const auto& attrs = m.meshes[0].primitives[0].attributes;
  // Unity -> glTF: x negated in normals and tangents, tangent w negated.
  const std::vector<float> n = accessor<float>(m, attrs.at("NORMAL"), 3);
  const std::vector<float> want_n = {0, 0, 1, 1, 0, 0, 0, 0, -1, 0, 0, 1};
  ASSERT_EQ(n.size(), want_n.size());
  for (std::size_t i = 0; i < n.size(); ++i) EXPECT_NEAR(n[i], want_n[i], 1e-6) << i;
  const std::vector<float> t = accessor<float>(m, attrs.at("TANGENT"), 4);
  const std::vector<float> want_t = {-1, 0, 0, -1, 0, 1, 0, -1, -1, 0, 0, 1, -1, 0, 0, -1};
  ASSERT_EQ(t.size(), want_t.size());
  for (std::size_t i = 0; i < t.size(); ++i) EXPECT_NEAR(t[i], want_t[i], 3e-3) << i;
  // TexCoord2 (SNorm8×4) has no glTF semantic: kept whole as _TEXCOORD2,
  // while TexCoord0 stays TEXCOORD_0 and no TEXCOORD_1 appears.
  ASSERT_TRUE(attrs.count("_TEXCOORD2"));
  EXPECT_FALSE(attrs.count("TEXCOORD_1"));
  const auto& acc = m.accessors[static_cast<std::size_t>(attrs.at("_TEXCOORD2"))];
  EXPECT_EQ(acc.type, TINYGLTF_TYPE_VEC4);
  const std::vector<float> extra = accessor<float>(m, attrs.at("_TEXCOORD2"), 4);
  ASSERT_EQ(extra.size(), 16u);
  EXPECT_FLOAT_EQ(extra[0], 1.0F);
  EXPECT_FLOAT_EQ(extra[1], -1.0F);
  EXPECT_FLOAT_EQ(extra[2], 0.0F);
  EXPECT_FLOAT_EQ(extra[3], static_cast<float>(64 / 127.0));
  EXPECT_EQ(accessor<float>(m, attrs.at("TEXCOORD_0"), 2),
            (std::vector<float>{0, 1, 1, 1, 1, 0, 0, 0}));
}

}  // namespace
}  // namespace charkit::bem
