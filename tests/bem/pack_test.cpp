// `bem pack` (bem/pack.h): glTF scenes written by hand here (accessors over a
// base64 buffer) packed into templates built by package_builder, the
// expected vertex and index bytes worked out by hand from §7 and the export's
// conventions (x negated, v' = 1 - v, winding reversed); and round trips
// export -> pack on hand-built packages and the examples.
#include "pack_test_support.h"

#include <gtest/gtest.h>
#include <unistd.h>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include "charkit/bem/error_codes.h"
#include "charkit/bem/export_gltf.h"
#include "charkit/bem/folder.h"
#include "charkit/bem/load.h"
#include "charkit/bem/pack.h"
#include "charkit/bem/pack_spec.h"
#include "charkit/bem/packed_tbn.h"
#include "charkit/bem/settings.h"
#include "charkit/bem/writer.h"
#include "charkit/core/base64.h"
#include "charkit/core/bytes.h"
#include "charkit/core/half.h"
#include "charkit/core/json.h"
#include "charkit/scene/gltf_document.h"
#include "charkit/scene/image.h"
#include "charkit/scene/texture_decode.h"
#include "charkit/scene/texture_encode.h"
#include "morph_test_support.h"
#include "package_builder.h"

namespace charkit::bem {
namespace {

using namespace packtest;  // NOLINT(google-build-using-namespace): the tests' shared helpers

TEST(BemPack, HandMadeSceneGivesTheBytesOfTheTemplateLayout) {
  // Template: make_valid_package(3), mesh 0 with Float32×3 positions, Float32×2
  // UVs and the 4-byte rigid skin (UInt8×4, first index used), palette [Pelvis].
  Template t;
  ASSERT_NO_FATAL_FAILURE(load_template(t, testkit::make_valid_package(3).binary()));
  SceneSpec s;
  s.positions = {1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 0, 1};
  s.uvs = {0.25f, 0.75f, 1, 0, 0, 1, 0.5f, 0.5f};
  // Skin joints: 0 = Spine (not in the template's palette: added from
  // component 0's bone_names, index 1), 1 = Pelvis.
  s.joint_names = {"Bip001_Spine", "Bip001_Pelvis"};
  s.joints = {0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0};
  s.weights = {0.75f, 0.25f, 0, 0, 1, 0, 0, 0, 0.5f, 0, 0, 0, 0.25f, 0.75f, 0, 0};
  s.primitives = {{"M_actor_example_body_01", {0, 1, 2, 0, 2, 3}}};
  auto r = pack(t, build_scene(s));
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  ASSERT_EQ(r->meshes.size(), 1u);
  EXPECT_EQ(r->meshes[0].vertices_before, 3u);
  EXPECT_EQ(r->meshes[0].vertices, 4u);
  EXPECT_EQ(r->meshes[0].bones_added, 1u);
  const PackageContent& c = r->content;
  const Json& mesh = c.manifest["meshes"][0];
  EXPECT_EQ(mesh["vertex_count"], 4);
  EXPECT_EQ(mesh["bones"], Json::parse(R"([{"component":0,"index":0,"name":"Bip001_Pelvis"},
                                           {"component":0,"index":1,"name":"Bip001_Spine"}])"));
  // x negated (0 becomes -0.0f: its sign bit is set).
  EXPECT_EQ(payload_at(c, "/meshes/0/streams/0/payload"),
            testkit::f32_bytes({-1, 2, 3, -4, 5, 6, -7, 8, 9, -0.0f, 0, 1}));
  // v' = 1 - v.
  EXPECT_EQ(payload_at(c, "/meshes/0/streams/1/payload"),
            testkit::f32_bytes({0.25f, 0.25f, 1, 1, 0, 0, 0.5f, 0.5f}));
  // Rigid skin: the heaviest influence's palette index (Spine = 1, Pelvis = 0).
  EXPECT_EQ(payload_at(c, "/meshes/0/streams/2/payload"),
            (ByteVec{1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0}));
  // Winding reversed, UInt16 indices as the template's index_size.
  EXPECT_EQ(payload_at(c, "/meshes/0/draws/0/indices"), testkit::u16_bytes({0, 2, 1, 0, 3, 2}));
  EXPECT_EQ(mesh["draws"][0]["count"], 6);
  // The texture payload is the template's.
  EXPECT_EQ(payload_at(c, "/textures/0/payload"), ByteVec(64, 0x80));
  // The result is a valid package.
  core::Report report;
  auto written = write_binary(c, {}, &report);
  ASSERT_TRUE(written.ok()) << written.error().to_string() << "\n" << report.to_text("packed");
  EXPECT_EQ(written->stats.unreferenced, 0u);
}

TEST(BemPack, TwelveByteSkinWeightsSumToExactly65535) {
  Template t;
  ASSERT_NO_FATAL_FAILURE(load_template(t, quad_package().binary()));
  SceneSpec s;
  s.positions = {0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0};
  s.normals = {0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1};
  s.uvs = {0, 0, 1, 0, 1, 1, 0, 1};
  s.joint_names = {"Bip001_Pelvis", "Bip001_Spine"};
  // v0: 0.5 / 0.25 / 0.25 -> 32767.5, 16383.75, 16383.75 round to 32768 +
  // 16384 + 16384 = 65536; the rest (-1) goes to the heaviest: 32767.
  // v1: 1/3 each of three -> 21845 × 3 = 65535. v2: weights 2 and 2 (not
  // normalised) -> 32768 + 32768 - 1 on the first of the equal heaviest.
  s.joints = {0, 1, 1, 0, 1, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 0};
  s.weights = {0.5f, 0.25f, 0.25f, 0, 1.f / 3, 1.f / 3, 1.f / 3, 0, 2, 2, 0, 0, 1, 0, 0, 0};
  s.primitives = {{"M_actor_example_body_01", {0, 1, 2}}, {"M_actor_example_body_01", {0, 2, 3}}};
  auto r = pack(t, build_scene(s));
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  const PackageContent& c = r->content;
  EXPECT_EQ(payload_at(c, "/meshes/0/streams/2/payload"),
            cat({testkit::u16_bytes({32767, 16384, 16384, 0}),
                 {0, 1, 1, 0},
                 testkit::u16_bytes({21845, 21845, 21845, 0}),
                 {1, 0, 1, 0},
                 testkit::u16_bytes({32767, 32768, 0, 0}),
                 {0, 1, 0, 0},
                 testkit::u16_bytes({65535, 0, 0, 0}),
                 {1, 0, 0, 0}}));
  // The two primitives fill the two draws of that material, in order.
  EXPECT_EQ(payload_at(c, "/meshes/0/draws/0/indices"), testkit::u16_bytes({0, 2, 1}));
  EXPECT_EQ(payload_at(c, "/meshes/0/draws/1/indices"), testkit::u16_bytes({0, 3, 2}));
  auto written = write_binary(c);
  ASSERT_TRUE(written.ok()) << written.error().to_string();
}

TEST(BemPack, ExportThenPackGivesTheTemplatesBytes) {
  for (const bool raw : {false, true}) {
    SCOPED_TRACE(raw ? "raw axes" : "converted axes");
    const ByteVec original = quad_package().binary();
    Template t;
    ASSERT_NO_FATAL_FAILURE(load_template(t, original));
    const ByteVec glb = export_default(original, raw);
    ASSERT_FALSE(glb.empty());
    PackOptions o;
    o.raw_axes = raw;
    auto r = pack(t, glb, o);
    ASSERT_TRUE(r.ok()) << r.error().to_string();
    // The exported images are the template's textures: no warning about them.
    EXPECT_TRUE(r->warnings.empty()) << r->warnings[0].code << ": " << r->warnings[0].message;
    for (const char* ptr : {"/meshes/0/streams/0/payload", "/meshes/0/streams/1/payload",
                            "/meshes/0/streams/2/payload", "/meshes/0/draws/0/indices",
                            "/meshes/0/draws/1/indices", "/textures/0/payload"})
      EXPECT_EQ(payload_at(r->content, ptr), payload_at(t.content, ptr)) << ptr;
    // The manifest is the template's but for the payload ids.
    Json a = r->content.manifest;
    Json b = t.content.manifest;
    for (Json* m : {&a, &b})
      for_each_payload_ref(*m, [](Json& v, const std::string&, std::uint32_t) { v = 0; });
    EXPECT_EQ(a, b);
    auto written = write_binary(r->content);
    ASSERT_TRUE(written.ok()) << written.error().to_string();
  }
}

TEST(BemPack, GameLayoutExampleRoundTripsThroughExport) {
  // The 16/12/12 layout: the packed normal/tangent word, SNorm8×4 outline
  // data as _TEXCOORD2, the 12-byte skin. Export, pack into the original,
  // export again: every attribute within its format's precision.
  std::ifstream in(std::string(CHARKIT_TEST_DATA) + "/examples/example-1.1-game-layout.bem",
                   std::ios::binary);
  const ByteVec original{std::istreambuf_iterator<char>(in), {}};
  ASSERT_FALSE(original.empty());
  Template t;
  ASSERT_NO_FATAL_FAILURE(load_template(t, original));
  const ByteVec glb = export_default(original);
  auto r = pack(t, glb);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  auto written = write_binary(r->content);
  ASSERT_TRUE(written.ok()) << written.error().to_string();
  const auto before = attributes_of(glb);
  const auto after = attributes_of(export_default(written->bytes));
  ASSERT_EQ(before.size(), after.size());
  ASSERT_TRUE(before.contains("0/NORMAL"));
  ASSERT_TRUE(before.contains("0/TANGENT"));
  for (const auto& [name, values] : before) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(after.contains(name));
    const auto& v2 = after.at(name);
    ASSERT_EQ(values.size(), v2.size());
    // Packed normal 10-bit octahedral, tangent angle 10 bits; SNorm8 1/127.
    const double tol =
        name.find("NORMAL") != std::string::npos || name.find("TANGENT") != std::string::npos
            ? 1e-6  // already quantised: decode(encode(decode(w))) = decode(w)
            : 1e-6;
    for (std::size_t i = 0; i < values.size(); ++i) EXPECT_NEAR(values[i], v2[i], tol) << i;
  }
}

TEST(BemPack, AMaterialNotInTheTemplateIsRefusedWithTheNames) {
  Template t;
  ASSERT_NO_FATAL_FAILURE(load_template(t, testkit::make_valid_package(3).binary()));
  SceneSpec s = triangle_scene();
  s.primitives[0].first = "M_something_else";
  auto r = pack(t, build_scene(s));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "BEM_PACK_MATERIAL");
  EXPECT_NE(r.error().message.find("\"M_actor_example_body_01\""), std::string::npos)
      << r.error().message;
  EXPECT_EQ(r.error().location.pointer, "/meshes/0/primitives/0/material");

  // A joint the component has no bone of.
  s.primitives = {{"M_actor_example_body_01", {0, 1, 2}}};
  s.joint_names = {"Bip001_Tail"};
  r = pack(t, build_scene(s));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "BEM_PACK_JOINT");
  EXPECT_NE(r.error().message.find("Bip001_Tail"), std::string::npos);

  // A mesh name that matches nothing and a node of no replaced component.
  s.joint_names = {"Bip001_Pelvis"};
  s.mesh_name = "Body";
  s.node_name = "Cube";
  r = pack(t, build_scene(s));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "BEM_PACK_NO_MESH");
  // It names the component a node may name, not the one the template keeps.
  EXPECT_NE(r.error().message.find("S_actor_example_body_01_lod0"), std::string::npos)
      << r.error().message;
  EXPECT_EQ(r.error().message.find("S_actor_example_hair_01_lod0"), std::string::npos)
      << r.error().message;
  // The node's extras.bem_component names the component ...
  s.node_component = "S_actor_example_body_01_lod0";
  r = pack(t, build_scene(s));
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  s.node_component.clear();
  // ... and so does BEM_C<n>, the public BEM exporter's name for component n ...
  s.node_name = "BEM_C0";
  r = pack(t, build_scene(s));
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  s.node_name = "BEM_C1";  // component 1 is kept, not replaced: its layout is unknown
  r = pack(t, build_scene(s));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "BEM_PACK_MESH");
  EXPECT_NE(r.error().message.find("JSON template"), std::string::npos) << r.error().message;
  EXPECT_EQ(r.error().location.pointer, "/nodes/0");
  // ... and so does the node's name.
  s.node_name = "S_actor_example_body_01_lod0";
  r = pack(t, build_scene(s));
  ASSERT_TRUE(r.ok()) << r.error().to_string();
}

// A transform is worth a warning only on the node of a mesh that is packed.
TEST(BemPack, OnlyPackedNodesWarnAboutTheirTransform) {
  Template t;
  ASSERT_NO_FATAL_FAILURE(load_template(t, testkit::make_valid_package(3).binary()));
  SceneSpec s = triangle_scene();
  s.decoy = true;
  auto codes = [](const PackResult& r) {
    std::vector<std::string> out;
    for (const PackWarning& w : r.warnings) out.push_back(w.code + " " + w.pointer);
    return out;
  };
  auto r = pack(t, build_scene(s));
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_EQ(codes(*r), std::vector<std::string>{"BEM_PACK_MESH_UNUSED /meshes/1"});
  s.translation = {0, 0.5f, 0};
  r = pack(t, build_scene(s));
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_EQ(codes(*r), (std::vector<std::string>{"BEM_PACK_MESH_UNUSED /meshes/1",
                                                 "BEM_PACK_NODE_TRANSFORM /nodes/0"}));
}

TEST(BemPack, MoreThan256PaletteBonesAreRefused) {
  testkit::TestPackage p = testkit::make_valid_package(3);
  Json names = Json::array();
  for (int b = 0; b < 300; ++b) names.push_back("Bone" + std::to_string(b));
  p.manifest["target"]["components"][0]["bone_names"] = names;
  p.manifest["meshes"][0]["bones"][0]["name"] = "Bone0";
  Template t;
  ASSERT_NO_FATAL_FAILURE(load_template(t, p.binary()));
  SceneSpec s;
  for (std::uint16_t v = 0; v < 75; ++v) {  // 75 vertices × 4 joints = 300 joints used
    s.positions.insert(s.positions.end(), {static_cast<float>(v), 0, 0});
    s.uvs.insert(s.uvs.end(), {0, 0});
    for (std::uint16_t k = 0; k < 4; ++k) s.joints.push_back(static_cast<std::uint16_t>(4 * v + k));
    s.weights.insert(s.weights.end(), {0.25f, 0.25f, 0.25f, 0.25f});
  }
  for (int b = 0; b < 300; ++b) s.joint_names.push_back("Bone" + std::to_string(b));
  std::vector<std::uint16_t> indices(75);
  for (std::uint16_t i = 0; i < 75; ++i) indices[i] = i;
  s.primitives = {{"M_actor_example_body_01", indices}};
  auto r = pack(t, build_scene(s));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "BEM_PACK_JOINT");
  EXPECT_NE(r.error().message.find("300 palette bones"), std::string::npos) << r.error().message;
}

TEST(BemPack, APackedNormalLayoutNeedsTangents) {
  testkit::TestPackage p = testkit::make_valid_package(3);
  Json& mesh = p.manifest["meshes"][0];
  mesh["streams"][0]["stride"] = 16;
  mesh["attributes"] = Json::array({Json::array({0, 0, 3, 0, 0}), Json::array({1, 0, 1, 0, 12}),
                                    Json::array({4, 0, 2, 1, 0}), Json::array({13, 6, 4, 2, 0})});
  // The packed word of normal (0,0,1), tangent (1,0,0), w +1, as packed_tbn_test works it out.
  const std::uint32_t word = pack_tbn({0, 0, 1}, {1, 0, 0, 1});
  ByteVec s0;
  for (const std::vector<float>& v :
       std::initializer_list<std::vector<float>>{{0, 0, 0}, {1, 0, 0}, {0, 1, 0}})
    s0 = cat({s0, testkit::f32_bytes(v), testkit::u32_bytes({word})});
  p.payloads[0] = s0;
  Template t;
  ASSERT_NO_FATAL_FAILURE(load_template(t, p.binary()));
  SceneSpec s = triangle_scene();
  s.normals = {0, 0, 1, 0, 0, 1, 0, 0, 1};
  auto r = pack(t, build_scene(s));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "BEM_PACK_ATTRIBUTE");
  EXPECT_NE(r.error().message.find("tangents"), std::string::npos) << r.error().message;

  // With tangents: glTF (0,0,1) / (1,0,0,1) is Unity (-0,0,1) / (-1,0,0,-1)
  // after the mirror; the word is pack_tbn of that.
  s.tangents = {1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1};
  r = pack(t, build_scene(s));
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  const std::uint32_t mirrored = pack_tbn({-0.0f, 0, 1}, {-1, 0, 0, -1});
  const auto& stream = payload_at(r->content, "/meshes/0/streams/0/payload");
  ASSERT_EQ(stream.size(), 48u);
  for (std::size_t v = 0; v < 3; ++v)
    EXPECT_EQ(core::load_le<std::uint32_t>(stream.data() + 16 * v + 12), mirrored);
  const UnpackedTbn back = unpack_tbn(mirrored);
  EXPECT_NEAR(back.tangent[0], -1.0, 1e-3);
  EXPECT_EQ(back.tangent[3], -1.0f);
}

/// The JSON chunk of a GLB.
Json gltf_json(const ByteVec& glb) {
  auto doc = scene::GltfDocument::load(glb);
  EXPECT_TRUE(doc.ok());
  return doc.ok() ? doc->json() : Json{};
}

/// Exports the selection of `file` at `parameters` with the sliders as
/// morph targets (what `bem export` writes by default).
ByteVec export_with_targets(const ByteVec& file, const std::string& parameters,
                            bool raw_axes = false) {
  return export_selection(file, parameters, raw_axes, true);
}

/// Every accessor a GLB's meshes use, as floats: attributes, indices and
/// morph targets of every primitive, keyed "mesh/primitive/what".
std::map<std::string, std::vector<float>> mesh_data_of(const ByteVec& glb) {
  std::map<std::string, std::vector<float>> out;
  auto doc = scene::GltfDocument::load(glb);
  EXPECT_TRUE(doc.ok());
  if (!doc) return out;
  const Json& j = doc->json();
  auto read = [&](const std::string& key, const Json& accessor) {
    auto v = doc->read_accessor_floats(accessor.get<std::size_t>());
    EXPECT_TRUE(v.ok()) << key;
    if (v) out[key] = *v;
  };
  for (std::size_t m = 0; m < j["meshes"].size(); ++m) {
    const Json& mesh = j["meshes"][m];
    for (std::size_t p = 0; p < mesh["primitives"].size(); ++p) {
      const Json& prim = mesh["primitives"][p];
      const std::string at = std::to_string(m) + "/" + std::to_string(p) + "/";
      for (auto it = prim["attributes"].begin(); it != prim["attributes"].end(); ++it)
        read(at + it.key(), it.value());
      read(at + "indices", prim["indices"]);
      if (prim.contains("targets"))
        for (std::size_t t = 0; t < prim["targets"].size(); ++t)
          read(at + "target" + std::to_string(t), prim["targets"][t]["POSITION"]);
    }
    if (mesh.contains("extras")) out[std::to_string(m) + "/targetNames"] = {};
  }
  return out;
}

// The round trip over the test corpus (the builder's valid package
// of every version, the 1.4 explicit-target one, packages with sliders) and
// the examples: export -> pack into the original -> valid -> export again
// gives the same positions, normals, tangents, UVs, skin, indices and morph
// targets (within float precision), and every texture is kept byte for byte.
TEST(BemPack, CorpusAndExamplesRoundTrip) {
  std::vector<std::pair<std::string, ByteVec>> packages;
  for (int minor = 0; minor <= 5; ++minor)
    packages.emplace_back("builder 1." + std::to_string(minor),
                          testkit::make_valid_package(minor).binary());
  packages.emplace_back("builder 1.4 explicit", testkit::make_valid_package_v14().binary());
  for (int minor = 3; minor <= 5; ++minor)
    packages.emplace_back("sliders 1." + std::to_string(minor),
                          morphtest::with_morph(minor).binary());
  packages.emplace_back("quad", quad_package().binary());
  for (const auto& e :
       std::filesystem::directory_iterator(std::string(CHARKIT_TEST_DATA) + "/examples")) {
    if (e.path().extension() != ".bem" && e.path().extension() != ".zip") continue;
    std::ifstream in(e.path(), std::ios::binary);
    packages.emplace_back(e.path().filename().string(),
                          ByteVec{std::istreambuf_iterator<char>(in), {}});
  }
  ASSERT_EQ(packages.size(), 18u);
  for (const auto& [name, original] : packages)
    for (const bool raw : {false, true}) {
      SCOPED_TRACE(name + (raw ? ", raw axes" : ""));
      Template t;
      ASSERT_NO_FATAL_FAILURE(load_template(t, original));
      const ByteVec glb = export_with_targets(original, "", raw);
      PackOptions o;
      o.raw_axes = raw;
      auto r = pack(t, glb, o);
      ASSERT_TRUE(r.ok()) << r.error().to_string();
      for (const PackedTexture& tex : r->textures) EXPECT_FALSE(tex.encoded) << tex.name;
      for (const PackWarning& w : r->warnings)
        EXPECT_NE(w.code, "BEM_PACK_TEXTURES_KEPT") << w.message;
      core::Report report;
      auto written = write_binary(r->content, {}, &report);
      ASSERT_TRUE(written.ok()) << written.error().to_string() << "\n" << report.to_text("packed");
      const auto before = mesh_data_of(glb);
      const auto after = mesh_data_of(export_with_targets(written->bytes, "", raw));
      ASSERT_EQ(before.size(), after.size());
      for (const auto& [key, values] : before) {
        SCOPED_TRACE(key);
        ASSERT_TRUE(after.contains(key));
        const auto& v2 = after.at(key);
        ASSERT_EQ(values.size(), v2.size());
        for (std::size_t i = 0; i < values.size(); ++i) ASSERT_NEAR(values[i], v2[i], 1e-6) << i;
      }
    }
}

// A template's own sliders come back: bem export writes each frame as a
// morph target named after the parameter (base positions unmorphed, the
// weight showing the ticks), and pack rebuilds the channel's frames from
// them, giving the template's payload bytes back. A three-frame channel
// (neutral in the middle) names its targets id@tick. An export with the
// sliders baked has no targets and is refused.
TEST(BemPack, TemplateSlidersRoundTripThroughMorphTargets) {
  testkit::TestPackage p = morphtest::with_morph(3);
  for (const bool raw : {false, true}) {
    SCOPED_TRACE(raw ? "raw axes" : "converted axes");
    Template t;
    ASSERT_NO_FATAL_FAILURE(load_template(t, p.binary()));
    const ByteVec glb = export_with_targets(t.file, "body:250", raw);
    // The GLB: mesh_0 with one target "body" at weight 0.25, x mirrored.
    const Json doc = gltf_json(glb);
    const Json& mesh = doc["meshes"][0];
    EXPECT_EQ(mesh["extras"]["targetNames"], Json::parse(R"(["body"])"));
    EXPECT_EQ(mesh["weights"], Json::parse("[0.25]"));
    const auto attrs = attributes_of(glb);
    EXPECT_EQ(attrs.at("0/POSITION"),
              (std::vector<float>{0, 0, 0, raw ? 1.0f : -1.0f, 0, 0, 0, 1, 0}));
    PackOptions o;
    o.raw_axes = raw;
    auto r = pack(t, glb, o);
    ASSERT_TRUE(r.ok()) << r.error().to_string();
    EXPECT_EQ(r->content.manifest["mesh_deformations"], p.manifest["mesh_deformations"]);
    EXPECT_EQ(r->content.manifest["parameters"], p.manifest["parameters"]);
    EXPECT_EQ(payload_at(r->content, "/mesh_deformations/0/frames/1/payload"),
              p.payloads[morphtest::kFramePayload]);
    EXPECT_EQ(r->meshes[0].sliders, 0u);  // no new slider
  }
  {
    Template t;
    ASSERT_NO_FATAL_FAILURE(load_template(t, p.binary()));
    auto r = pack(t, export_default(t.file));  // baked: no targets
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, "BEM_PACK_MORPHS");
    EXPECT_NE(r.error().message.find("\"body\""), std::string::npos) << r.error().message;
  }
  // Three frames: 0 (a payload), 500 neutral, 1000 (the template's frame).
  testkit::TestPackage three = p;
  three.manifest["parameters"][0]["neutral"] = 500;
  three.manifest["parameters"][0]["default"] = 500;
  three.payloads.push_back(morphtest::deformation_payload({{1, 0, 0, 0.5f}}));
  three.manifest["mesh_deformations"][0]["frames"] = Json::parse(R"([
      {"value": 0, "payload": 6, "count": 1, "encoding": "sparse-position-f32"},
      {"value": 500, "neutral": true},
      {"value": 1000, "payload": 5, "count": 2, "encoding": "sparse-position-f32"}])");
  Template t;
  ASSERT_NO_FATAL_FAILURE(load_template(t, three.binary()));
  const ByteVec glb = export_with_targets(t.file, "body:250");
  const Json doc = gltf_json(glb);
  EXPECT_EQ(doc["meshes"][0]["extras"]["targetNames"], Json::parse(R"(["body@0","body@1000"])"));
  EXPECT_EQ(doc["meshes"][0]["weights"], Json::parse("[0.5, 0.0]"));
  auto r = pack(t, glb);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  auto without_ids = [](Json channels) {
    for (Json& f : channels[0]["frames"]) f.erase("payload");
    return channels;
  };
  EXPECT_EQ(without_ids(r->content.manifest["mesh_deformations"]),
            without_ids(three.manifest["mesh_deformations"]));
  EXPECT_EQ(payload_at(r->content, "/mesh_deformations/0/frames/0/payload"), three.payloads[6]);
  EXPECT_EQ(payload_at(r->content, "/mesh_deformations/0/frames/2/payload"), three.payloads[5]);
}

TEST(BemPack, OneZeroTemplatesGetOneIndexStreamInDrawOrder) {
  // BEM 1.0: the mesh's one index stream (meshes[].indices, index_count),
  // each draw a range of it (start, count) in draw order, no gap (§7).
  testkit::TestPackage p = testkit::make_valid_package(0);
  Json& mesh = p.manifest["meshes"][0];
  Json d1 = mesh["draws"][0];
  d1["start"] = 3;
  mesh["draws"].push_back(d1);
  mesh["index_count"] = 6;
  p.payloads[3] = testkit::u16_bytes({0, 1, 2, 2, 1, 0});
  Template t;
  ASSERT_NO_FATAL_FAILURE(load_template(t, p.binary()));
  SceneSpec s;
  s.positions = {0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 1, 0};
  s.uvs = {0, 0, 1, 0, 0, 1, 1, 1};
  s.joint_names = {"Bip001_Pelvis"};
  s.joints = std::vector<std::uint16_t>(16, 0);
  s.weights = {1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0};
  s.primitives = {{"M_actor_example_body_01", {0, 1, 2, 1, 3, 2}},
                  {"M_actor_example_body_01", {3, 1, 2}}};
  auto r = pack(t, build_scene(s));
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  const Json& m = r->content.manifest["meshes"][0];
  EXPECT_EQ(m["index_count"], 9);
  EXPECT_EQ(m["draws"][0]["start"], 0);
  EXPECT_EQ(m["draws"][0]["count"], 6);
  EXPECT_EQ(m["draws"][1]["start"], 6);
  EXPECT_EQ(m["draws"][1]["count"], 3);
  EXPECT_FALSE(m["draws"][0].contains("indices"));
  // Winding reversed, the draws one after the other.
  EXPECT_EQ(payload_at(r->content, "/meshes/0/indices"),
            testkit::u16_bytes({0, 2, 1, 1, 2, 3, 3, 2, 1}));
  core::Report report;
  auto written = write_binary(r->content, {}, &report);
  ASSERT_TRUE(written.ok()) << written.error().to_string() << "\n" << report.to_text("packed");
  EXPECT_EQ(written->stats.minor, 0);

  // A draw without a primitive keeps its range when the vertices stay.
  s.positions.resize(9);
  s.uvs.resize(6);
  s.joints.resize(12);
  s.weights.resize(12);
  s.primitives = {{"M_actor_example_body_01", {0, 2, 1}}};
  r = pack(t, build_scene(s));
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_EQ(payload_at(r->content, "/meshes/0/indices"), testkit::u16_bytes({0, 1, 2, 2, 1, 0}));
  EXPECT_EQ(r->content.manifest["meshes"][0]["draws"][1]["start"], 3);
  ASSERT_TRUE(write_binary(r->content).ok());

  // Shape keys cannot become sliders in 1.0.
  s.targets = {{0, 0, 0, 0, 0, 0, 0, 0, 1}};
  r = pack(t, build_scene(s));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "BEM_PACK_SLIDER");
}

TEST(BemPack, ADrawWithoutAPrimitiveIsKeptOnlyWhenTheVerticesStay) {
  Template t;
  ASSERT_NO_FATAL_FAILURE(load_template(t, quad_package().binary()));
  SceneSpec s;
  s.positions = {0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0};
  s.normals = {0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1};
  s.uvs = {0, 0, 1, 0, 1, 1, 0, 1};
  s.joint_names = {"Bip001_Pelvis"};
  s.joints = std::vector<std::uint16_t>(16, 0);
  s.weights = {1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0};
  s.primitives = {{"M_actor_example_body_01", {0, 1, 2}}};
  auto r = pack(t, build_scene(s));
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  ASSERT_EQ(r->warnings.size(), 1u);
  EXPECT_EQ(r->warnings[0].code, "BEM_PACK_DRAW_KEPT");
  EXPECT_EQ(r->warnings[0].pointer, "/meshes/0/draws/1");
  EXPECT_EQ(payload_at(r->content, "/meshes/0/draws/1/indices"), testkit::u16_bytes({0, 2, 3}));

  // One vertex more: draw 1's indices cannot be kept.
  s.positions.insert(s.positions.end(), {2, 2, 0});
  s.normals.insert(s.normals.end(), {0, 0, 1});
  s.uvs.insert(s.uvs.end(), {0, 0});
  s.joints.insert(s.joints.end(), {0, 0, 0, 0});
  s.weights.insert(s.weights.end(), {1, 0, 0, 0});
  r = pack(t, build_scene(s));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "BEM_PACK_DRAW_MISSING");
  EXPECT_EQ(r.error().location.pointer, "/meshes/0/draws/1");
}

TEST(BemPack, ShapeKeysBecomeSliders) {
  Template t;
  ASSERT_NO_FATAL_FAILURE(load_template(t, testkit::make_valid_package(3).binary()));
  SceneSpec s = triangle_scene();
  s.targets = {{0, 0, 0, 0.5f, 0, 0, 0, 0.25f, 0}, {0, 0, 0, 0, 0, 0, 0, 0, 0}};
  s.target_names = {"Smile Wide", "Blink"};
  s.target_weights = {0.25f, 0};
  auto r = pack(t, build_scene(s));
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  ASSERT_EQ(r->meshes.size(), 1u);
  EXPECT_EQ(r->meshes[0].sliders, 2u);
  EXPECT_TRUE(r->warnings.empty());
  const PackageContent& c = r->content;
  // §10 parameters: id from the name ("Smile Wide" -> "Smile_Wide"), ticks
  // 0..1000, neutral 0, default = the mesh weight × 1000.
  EXPECT_EQ(c.manifest["parameters"], Json::parse(R"([
      {"id":"Smile_Wide","name":"Smile Wide","min":0,"max":1000,"neutral":0,"default":250,"step":1},
      {"id":"Blink","name":"Blink","min":0,"max":1000,"neutral":0,"default":0,"step":1}])"));
  const Json& caps = c.manifest["required_capabilities"];
  EXPECT_NE(std::find(caps.begin(), caps.end(), Json("body-parameters")), caps.end());
  EXPECT_NE(std::find(caps.begin(), caps.end(), Json("mesh-position-deltas")), caps.end());
  const Json& ch = c.manifest["mesh_deformations"];
  ASSERT_EQ(ch.size(), 2u);
  EXPECT_EQ(ch[0]["mesh"], 0);
  EXPECT_EQ(ch[0]["parameter"], "Smile_Wide");
  EXPECT_EQ(ch[0]["frames"][0], Json::parse(R"({"value":0,"neutral":true})"));
  EXPECT_EQ(ch[0]["frames"][1]["value"], 1000);
  EXPECT_EQ(ch[0]["frames"][1]["count"], 2);
  // Records: the moved vertices 1 and 2, x mirrored (0 becomes -0.0f).
  EXPECT_EQ(payload_at(c, "/mesh_deformations/0/frames/1/payload"),
            morphtest::deformation_payload({{1, -0.5f, 0, 0}, {2, -0.0f, 0.25f, 0}}));
  EXPECT_EQ(payload_at(c, "/mesh_deformations/1/frames/1/payload"),
            morphtest::deformation_payload({}));  // Blink moves nothing: count 0
  core::Report report;
  auto written = write_binary(c, {}, &report);
  ASSERT_TRUE(written.ok()) << written.error().to_string() << "\n" << report.to_text("packed");
  EXPECT_EQ(written->stats.minor, 3);  // parameters need BEM 1.3

  // The slider at full tick, exported: the glTF positions plus the target.
  LoadedPackage loaded = load_package(written->bytes);
  ASSERT_TRUE(loaded.ok()) << loaded.error;
  auto settings = parse_settings(*loaded.model, "", "Smile_Wide:1000");
  ASSERT_TRUE(settings.ok());
  auto glb = export_glb(*loaded.model, *loaded.package, *settings);
  ASSERT_TRUE(glb.ok()) << glb.error().to_string();
  const auto attrs = attributes_of(glb->glb);
  EXPECT_EQ(attrs.at("0/POSITION"), (std::vector<float>{0, 0, 0, 1.5f, 0, 0, 0, 1.25f, 0}));
}

TEST(BemPack, ASliderSharesTheTemplatesParameterOfItsName) {
  testkit::TestPackage p = testkit::make_valid_package(3);
  p.manifest["required_capabilities"].push_back("body-parameters");
  p.manifest["parameters"] = Json::array({morphtest::body_parameter()});
  Template t;
  ASSERT_NO_FATAL_FAILURE(load_template(t, p.binary()));
  SceneSpec s = triangle_scene();
  s.targets = {{0, 0, 0, 0, 0, 0, 0, 0, 0.5f}};
  s.target_names = {"body"};
  auto r = pack(t, build_scene(s));
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_EQ(r->content.manifest["parameters"].size(), 1u);
  EXPECT_EQ(r->content.manifest["mesh_deformations"][0]["parameter"], "body");
  ASSERT_TRUE(write_binary(r->content).ok());

  // A template parameter of that id with another neutral cannot take the
  // channel's frames (neutral at 0, target at 1000).
  p.manifest["parameters"][0]["neutral"] = 500;
  p.manifest["parameters"][0]["default"] = 500;
  Template t2;
  ASSERT_NO_FATAL_FAILURE(load_template(t2, p.binary()));
  r = pack(t2, build_scene(s));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "BEM_PACK_SLIDER");
  EXPECT_EQ(r.error().location.pointer, "/meshes/0/extras/targetNames/0");

  // Unnamed targets: target_N, with a warning.
  s.target_names.clear();
  r = pack(t, build_scene(s));
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  ASSERT_EQ(r->warnings.size(), 1u);
  EXPECT_EQ(r->warnings[0].code, "BEM_PACK_MORPH_NAMES");
  EXPECT_EQ(r->content.manifest["parameters"][1]["id"], "target_0");
}

/// `glb` with morph targets added to glTF mesh `mesh` (every primitive):
/// target k moves vertex v by (0, (k + 1) * 0.125 * (v + 1), 0); names in
/// extras.targetNames.
ByteVec with_targets(const ByteVec& glb, std::size_t mesh, const std::vector<std::string>& names) {
  auto parts = glb_parts(glb);
  if (!parts) return {};
  Json& root = parts->root;
  ByteVec* bin = &parts->bin;
  Json& mj = root["meshes"][mesh];
  const auto pos = mj["primitives"][0]["attributes"]["POSITION"].get<std::size_t>();
  const std::size_t n = root["accessors"][pos]["count"].get<std::size_t>();
  Json targets = Json::array();
  for (std::size_t k = 0; k < names.size(); ++k) {
    std::vector<float> d(3 * n, 0.0f);
    for (std::size_t v = 0; v < n; ++v) d[3 * v + 1] = float(k + 1) * 0.125f * float(v + 1);
    while (bin->size() % 4 != 0) bin->push_back(0);
    const ByteVec bytes = testkit::f32_bytes(d);
    root["bufferViews"].push_back(
        Json{{"buffer", 0}, {"byteOffset", bin->size()}, {"byteLength", bytes.size()}});
    bin->insert(bin->end(), bytes.begin(), bytes.end());
    float hi = 0.125f * float(k + 1) * float(n);
    root["accessors"].push_back(Json{{"bufferView", root["bufferViews"].size() - 1},
                                     {"componentType", 5126},
                                     {"count", n},
                                     {"type", "VEC3"},
                                     {"min", {0.0, 0.0, 0.0}},
                                     {"max", {0.0, hi, 0.0}}});
    targets.push_back(Json{{"POSITION", root["accessors"].size() - 1}});
  }
  for (Json& prim : mj["primitives"]) prim["targets"] = targets;
  mj["extras"] = Json{{"targetNames", names}};
  return glb_of(std::move(*parts));
}

// A hand-made scene: a body of two meshes (body and hair, two
// components) sharing two shape keys: one parameter per name, one channel
// per mesh and name, each with that mesh's own displacements.
TEST(BemPack, TwoMeshesShareTheirShapeKeysSliders) {
  testkit::TestPackage p = testkit::make_valid_package(3);
  Json hair = p.manifest["meshes"][0];
  hair["bones"] = Json::parse(R"([{"component":1,"index":0,"name":"Bip001_Head"}])");
  hair["draws"][0]["material_component"] = 1;
  hair["draws"][0]["material_name"] = "M_actor_example_hair_01";
  hair["draws"][0]["textures"] = Json::array();
  p.manifest["meshes"].push_back(hair);
  p.manifest["component_rules"][1]["candidates"][0] =
      Json::parse(R"({"when":true,"operation":"replace","mesh":1})");
  Template t;
  ASSERT_NO_FATAL_FAILURE(load_template(t, p.binary()));
  ByteVec glb = export_default(t.file);
  glb = with_targets(glb, 0, {"smile", "blink"});
  glb = with_targets(glb, 1, {"blink", "smile"});
  auto r = pack(t, glb);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  const Json& m = r->content.manifest;
  ASSERT_EQ(m["parameters"].size(), 2u);
  EXPECT_EQ(m["parameters"][0]["id"], "smile");
  EXPECT_EQ(m["parameters"][1]["id"], "blink");
  const Json& ch = m["mesh_deformations"];
  ASSERT_EQ(ch.size(), 4u);
  std::map<std::pair<int, std::string>, ByteVec> payload_of;
  for (std::size_t i = 0; i < ch.size(); ++i)
    payload_of[{ch[i]["mesh"].get<int>(), ch[i]["parameter"].get<std::string>()}] =
        payload_at(r->content, "/mesh_deformations/" + std::to_string(i) + "/frames/1/payload");
  // Target k moves vertex v up by (k + 1) / 8 × (v + 1): smile is target 0
  // on mesh 0 and target 1 on mesh 1.
  auto records = [](float step) {
    return morphtest::deformation_payload(
        {{0, -0.0f, step, 0}, {1, -0.0f, 2 * step, 0}, {2, -0.0f, 3 * step, 0}});
  };
  EXPECT_EQ(payload_of.at({0, "smile"}), records(0.125f));
  EXPECT_EQ(payload_of.at({0, "blink"}), records(0.25f));
  EXPECT_EQ(payload_of.at({1, "blink"}), records(0.125f));
  EXPECT_EQ(payload_of.at({1, "smile"}), records(0.25f));
  EXPECT_EQ(r->meshes.size(), 2u);
  ASSERT_TRUE(write_binary(r->content).ok());
}

TEST(BemPack, HalfFloatsRoundToNearestEven) {
  EXPECT_EQ(core::float_to_half(0.0f), 0x0000);
  EXPECT_EQ(core::float_to_half(-0.0f), 0x8000);
  EXPECT_EQ(core::float_to_half(1.0f), 0x3C00);
  EXPECT_EQ(core::float_to_half(-2.0f), 0xC000);
  EXPECT_EQ(core::float_to_half(65504.0f), 0x7BFF);
  EXPECT_EQ(core::float_to_half(65520.0f), 0x7C00);            // rounds past the largest half: inf
  EXPECT_EQ(core::float_to_half(1.0f + 1.0f / 2048), 0x3C00);  // a tie: to even (down)
  EXPECT_EQ(core::float_to_half(1.0f + 3.0f / 2048), 0x3C02);  // a tie: to even (up)
  EXPECT_EQ(core::float_to_half(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(core::float_to_half(std::ldexp(1.0f, -14)), 0x0400);  // smallest normal
  EXPECT_EQ(core::float_to_half(INFINITY), 0x7C00);
  EXPECT_EQ(core::float_to_half(NAN) & 0x7C00, 0x7C00);
  EXPECT_NE(core::float_to_half(NAN) & 0x03FF, 0);
}

}  // namespace
}  // namespace charkit::bem
