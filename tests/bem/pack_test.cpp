// `bem pack` (bem/pack.h): glTF scenes written by hand here (accessors over a
// base64 buffer) packed into templates built by package_builder, the
// expected vertex and index bytes worked out by hand from §7 and the export's
// conventions (x negated, v' = 1 - v, winding reversed); and round trips
// export -> pack on hand-built packages and the examples.
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
#include "charkit/scene/gltf_edit.h"
#include "charkit/scene/image.h"
#include "charkit/scene/texture_decode.h"
#include "charkit/scene/texture_encode.h"
#include "morph_test_support.h"
#include "package_builder.h"

namespace charkit::bem {
namespace {

using core::Json;
using testkit::ByteVec;
using testkit::cat;

/// A glTF 2.0 document built accessor by accessor over one embedded buffer.
struct GltfBuilder {
  Json doc = Json{{"asset", Json{{"version", "2.0"}}}};
  ByteVec bin;

  int view(const ByteVec& bytes) {
    while (bin.size() % 4 != 0) bin.push_back(0);
    const std::size_t offset = bin.size();
    bin.insert(bin.end(), bytes.begin(), bytes.end());
    doc["bufferViews"].push_back(
        Json{{"buffer", 0}, {"byteOffset", offset}, {"byteLength", bytes.size()}});
    return static_cast<int>(doc["bufferViews"].size() - 1);
  }
  int accessor(int view_index, int component, std::size_t count, const char* type) {
    doc["accessors"].push_back(Json{{"bufferView", view_index},
                                    {"componentType", component},
                                    {"count", count},
                                    {"type", type}});
    return static_cast<int>(doc["accessors"].size() - 1);
  }
  int floats(const std::vector<float>& v, const char* type, std::size_t comps) {
    return accessor(view(testkit::f32_bytes(v)), 5126, v.size() / comps, type);
  }
  int u16(const std::vector<std::uint16_t>& v, const char* type, std::size_t comps) {
    return accessor(view(testkit::u16_bytes(v)), 5123, v.size() / comps, type);
  }
  ByteVec bytes() {
    Json d = doc;
    d["buffers"] = Json::array(
        {Json{{"byteLength", bin.size()},
              {"uri", "data:application/octet-stream;base64," + core::base64_encode(bin)}}});
    const std::string text = d.dump();
    return ByteVec(text.begin(), text.end());
  }
};

/// A skinned triangle-list scene: one mesh (named `mesh_name`) on node 0
/// with skin 0 over joints named `joints` (nodes 1..n).
struct SceneSpec {
  std::string mesh_name = "mesh_0";
  std::string node_name = "S_actor_example_body_01_lod0";
  std::string node_component;  // node extras.bem_component ("" = none)
  std::vector<float> positions;
  std::vector<float> normals;
  std::vector<float> tangents;
  std::vector<float> uvs;
  std::vector<std::uint16_t> joints;
  std::vector<float> weights;
  std::vector<std::string> joint_names;
  std::vector<std::pair<std::string, std::vector<std::uint16_t>>> primitives;  // material, indices
  std::vector<std::vector<float>> targets;  // POSITION displacements, 3 per vertex
  std::vector<std::string> target_names;    // mesh.extras.targetNames (empty: none)
  std::vector<float> target_weights;        // mesh.weights (empty: none)
  std::vector<float> translation;           // node 0's translation (empty: none)
  bool decoy = false;  // mesh 1 "Cube" on a moved node: matches no template mesh
};

/// The rigid-skin triangle of make_valid_package (3 vertices, one bone).
SceneSpec triangle_scene() {
  SceneSpec s;
  s.positions = {0, 0, 0, 1, 0, 0, 0, 1, 0};
  s.uvs = {0, 0, 1, 0, 0, 1};
  s.joint_names = {"Bip001_Pelvis"};
  s.joints = std::vector<std::uint16_t>(12, 0);
  s.weights = {1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0};
  s.primitives = {{"M_actor_example_body_01", {0, 1, 2}}};
  return s;
}

ByteVec build_scene(const SceneSpec& s) {
  GltfBuilder b;
  Json attrs = Json{{"POSITION", b.floats(s.positions, "VEC3", 3)}};
  if (!s.normals.empty()) attrs["NORMAL"] = b.floats(s.normals, "VEC3", 3);
  if (!s.tangents.empty()) attrs["TANGENT"] = b.floats(s.tangents, "VEC4", 4);
  if (!s.uvs.empty()) attrs["TEXCOORD_0"] = b.floats(s.uvs, "VEC2", 2);
  if (!s.joints.empty()) {
    attrs["JOINTS_0"] = b.u16(s.joints, "VEC4", 4);
    attrs["WEIGHTS_0"] = b.floats(s.weights, "VEC4", 4);
  }
  Json targets = Json::array();
  for (const std::vector<float>& t : s.targets)
    targets.push_back(Json{{"POSITION", b.floats(t, "VEC3", 3)}});
  Json prims = Json::array();
  for (const auto& [material, indices] : s.primitives) {
    b.doc["materials"].push_back(Json{{"name", material}});
    prims.push_back(Json{{"attributes", attrs},
                         {"indices", b.u16(indices, "SCALAR", 1)},
                         {"material", b.doc["materials"].size() - 1},
                         {"mode", 4}});
    if (!targets.empty()) prims.back()["targets"] = targets;
  }
  Json mesh = Json{{"name", s.mesh_name}, {"primitives", prims}};
  if (!s.target_names.empty()) mesh["extras"] = Json{{"targetNames", s.target_names}};
  if (!s.target_weights.empty()) mesh["weights"] = s.target_weights;
  b.doc["meshes"] = Json::array({mesh});
  Json node = Json{{"name", s.node_name}, {"mesh", 0}};
  if (!s.joints.empty()) node["skin"] = 0;
  if (!s.node_component.empty()) node["extras"] = Json{{"bem_component", s.node_component}};
  if (!s.translation.empty()) node["translation"] = s.translation;
  b.doc["nodes"] = Json::array({node});
  if (s.decoy) {
    Json cube = mesh;
    cube["name"] = "Cube";
    b.doc["meshes"].push_back(cube);
    b.doc["nodes"].push_back(Json{{"name", "Cube"}, {"mesh", 1}, {"translation", {1, 2, 3}}});
  }
  Json skin_joints = Json::array();
  for (const std::string& j : s.joint_names) {
    b.doc["nodes"].push_back(Json{{"name", j}});
    skin_joints.push_back(b.doc["nodes"].size() - 1);
  }
  if (!s.joints.empty()) b.doc["skins"] = Json::array({Json{{"joints", skin_joints}}});
  b.doc["scenes"] = Json::array({Json{{"nodes", Json::array({0})}}});
  return b.bytes();
}

struct Template {
  ByteVec file;
  LoadedPackage loaded;
  PackageContent content;
};

void load_template(Template& t, const ByteVec& file) {
  t.file = file;
  t.loaded = load_package(t.file);
  ASSERT_TRUE(t.loaded.ok()) << t.loaded.error << "\n"
                             << t.loaded.validation.report.to_text("template");
  auto c = read_package_content(t.file);
  ASSERT_TRUE(c.ok()) << c.error().to_string();
  t.content = std::move(*c);
}

core::Result<PackResult> pack(const Template& t, const ByteVec& scene_bytes,
                              const PackOptions& o = {}) {
  auto doc = scene::GltfDocument::load(scene_bytes);
  if (!doc) return std::move(doc).error();
  return pack_scene(t.content, *t.loaded.model, *doc, o);
}

/// The decoded payload a manifest pointer (an integer payload id) refers to.
const std::vector<std::uint8_t>& payload_at(const PackageContent& c, const std::string& pointer) {
  const auto id = c.manifest.at(Json::json_pointer(pointer)).get<std::uint32_t>();
  return c.payloads.at(id);
}

/// The 12-byte-skin template: mesh 0 is a quad, stream 0 position + normal
/// (Float32×3 each), stream 1 UV (Float32×2), stream 2 UNorm16×4 weights +
/// UInt8×4 bones over Pelvis and Spine; two draws of the same material.
testkit::TestPackage quad_package() {
  testkit::TestPackage p = testkit::make_valid_package(3);
  Json& mesh = p.manifest["meshes"][0];
  mesh["vertex_count"] = 4;
  mesh["streams"] =
      Json::array({Json{{"stride", 24}, {"payload", 0}}, Json{{"stride", 8}, {"payload", 1}},
                   Json{{"stride", 12}, {"payload", 2}}});
  mesh["attributes"] = Json::array({Json::array({0, 0, 3, 0, 0}), Json::array({1, 0, 3, 0, 12}),
                                    Json::array({4, 0, 2, 1, 0}), Json::array({12, 4, 4, 2, 0}),
                                    Json::array({13, 6, 4, 2, 8})});
  mesh["bones"] = Json::array({Json{{"component", 0}, {"index", 0}, {"name", "Bip001_Pelvis"}},
                               Json{{"component", 0}, {"index", 1}, {"name", "Bip001_Spine"}}});
  Json draw1 = mesh["draws"][0];
  draw1["indices"] = 5;
  mesh["draws"].push_back(draw1);
  ByteVec s0;
  for (const std::vector<float>& v :
       std::initializer_list<std::vector<float>>{{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}})
    s0 = cat({s0, testkit::f32_bytes(v), testkit::f32_bytes({0, 0.6f, 0.8f})});
  ByteVec skin = cat({testkit::u16_bytes({65535, 0, 0, 0}),
                      {0, 0, 0, 0},
                      testkit::u16_bytes({65535, 0, 0, 0}),
                      {1, 0, 0, 0},
                      testkit::u16_bytes({32768, 32767, 0, 0}),
                      {0, 1, 0, 0},
                      testkit::u16_bytes({65535, 0, 0, 0}),
                      {1, 0, 0, 0}});
  p.payloads = {s0,
                testkit::f32_bytes({0, 0, 1, 0, 1, 1, 0, 1}),
                skin,
                testkit::u16_bytes({0, 1, 2}),
                ByteVec(64, 0x80),
                testkit::u16_bytes({0, 2, 3})};
  return p;
}

/// Exports the default selection of `file` as GLB.
/// Exports the selection of `file` at `parameters`: the sliders baked into
/// the positions, or (morph_targets) as morph targets, as `bem export`
/// writes them by default.
ByteVec export_selection(const ByteVec& file, const std::string& parameters, bool raw_axes,
                         bool morph_targets) {
  LoadedPackage loaded = load_package(file);
  EXPECT_TRUE(loaded.ok()) << loaded.error;
  if (!loaded.ok()) return {};
  auto settings = parse_settings(*loaded.model, "", parameters);
  EXPECT_TRUE(settings.ok());
  if (!settings.ok()) return {};
  ExportOptions eo;
  eo.unity_to_gltf = !raw_axes;
  eo.morph_targets = morph_targets;
  auto glb = export_glb(*loaded.model, *loaded.package, *settings, eo);
  EXPECT_TRUE(glb.ok()) << glb.error().to_string();
  return glb.ok() ? glb->glb : ByteVec{};
}

ByteVec export_default(const ByteVec& file, bool raw_axes = false) {
  return export_selection(file, "", raw_axes, false);
}

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

/// `glb` with image `index` replaced by `png` (a new buffer view at the end
/// of the buffer) and renamed `name` when not empty.
ByteVec with_image(const ByteVec& glb, std::size_t index, const ByteVec& png,
                   const std::string& name = "") {
  auto doc = scene::GltfDocument::load(glb);
  EXPECT_TRUE(doc.ok());
  if (!doc) return {};
  auto bin = scene::begin_edit(*doc, codes::BEM_PACK_TEXTURE);
  EXPECT_TRUE(bin.ok());
  if (!bin) return {};
  core::Json root = doc->json();
  while (bin->size() % 4 != 0) bin->push_back(0);
  const std::size_t offset = bin->size(), length = png.size();
  Json view = Json::object();
  view["buffer"] = 0;
  view["byteOffset"] = offset;
  view["byteLength"] = length;
  root["bufferViews"].push_back(std::move(view));
  bin->insert(bin->end(), png.begin(), png.end());
  root["images"][index]["bufferView"] = root["bufferViews"].size() - 1;
  if (!name.empty()) root["images"][index]["name"] = name;
  auto out = scene::finish_glb(root, std::move(*bin));
  EXPECT_TRUE(out.ok());
  return out.ok() ? *out : ByteVec{};
}

/// The RGBA32 quad package: its export has the image of texture 0.
ByteVec load_template_file_for_images() {
  return quad_package().binary();
}

/// A w × h test image: r = 16x + 3, g = 16y + 5, b = 40, a = 255.
scene::RgbaImage test_image(std::uint32_t w, std::uint32_t h) {
  scene::RgbaImage img;
  img.width = w;
  img.height = h;
  for (std::uint32_t y = 0; y < h; ++y)
    for (std::uint32_t x = 0; x < w; ++x)
      img.pixels.insert(img.pixels.end(), {static_cast<std::uint8_t>(16 * x + 3),
                                           static_cast<std::uint8_t>(16 * y + 5), 40, 255});
  return img;
}

// A changed image is encoded in the template texture's format: for RGBA32,
// the pixels with their rows back in Unity's order (bottom first) — or as
// stored with raw axes; the image bem export wrote keeps the payload.
TEST(BemPackTextures, ChangedImageBecomesTheTexturesPayload) {
  for (const bool raw : {false, true}) {
    SCOPED_TRACE(raw ? "raw axes" : "converted axes");
    Template t;
    ASSERT_NO_FATAL_FAILURE(load_template(t, quad_package().binary()));
    const scene::RgbaImage img = test_image(4, 4);
    const ByteVec glb = with_image(export_default(t.file, raw), 0, *scene::encode_png(img));
    PackOptions o;
    o.raw_axes = raw;
    auto r = pack(t, glb, o);
    ASSERT_TRUE(r.ok()) << r.error().to_string();
    ASSERT_EQ(r->textures.size(), 1U);
    EXPECT_TRUE(r->textures[0].encoded);
    EXPECT_TRUE(std::isinf(r->textures[0].psnr_db));  // RGBA32: exact
    ByteVec want;
    for (std::uint32_t row = 0; row < 4; ++row) {
      const std::uint32_t y = raw ? row : 3 - row;
      for (std::uint32_t x = 0; x < 4; ++x)
        want.insert(want.end(), {static_cast<std::uint8_t>(16 * x + 3),
                                 static_cast<std::uint8_t>(16 * y + 5), 40, 255});
    }
    EXPECT_EQ(payload_at(r->content, "/textures/0/payload"), want);
    ASSERT_TRUE(write_binary(r->content).ok());
  }
  // An image whose own name is another: extras.original_name says which
  // texture it replaces.
  {
    Template t;
    ASSERT_NO_FATAL_FAILURE(load_template(t, quad_package().binary()));
    ByteVec glb =
        with_image(export_default(t.file), 0, *scene::encode_png(test_image(4, 4)), "my_painting");
    auto doc = scene::GltfDocument::load(glb);
    ASSERT_TRUE(doc.ok());
    auto bin = scene::begin_edit(*doc, codes::BEM_PACK_TEXTURE);
    ASSERT_TRUE(bin.ok());
    Json root = doc->json();
    root["images"][0]["extras"] = Json{{"original_name", "T_actor_example_body_01_d"}};
    auto edited = scene::finish_glb(root, std::move(*bin));
    ASSERT_TRUE(edited.ok());
    auto r = pack(t, *edited);
    ASSERT_TRUE(r.ok()) << r.error().to_string();
    ASSERT_EQ(r->textures.size(), 1U);
    EXPECT_TRUE(r->textures[0].encoded);
    EXPECT_TRUE(r->warnings.empty());
  }
  // Unchanged: kept, not encoded.
  Template t;
  ASSERT_NO_FATAL_FAILURE(load_template(t, quad_package().binary()));
  auto kept = pack(t, export_default(t.file));
  ASSERT_TRUE(kept.ok());
  ASSERT_EQ(kept->textures.size(), 1U);
  EXPECT_FALSE(kept->textures[0].encoded);
}

// A BC7 template texture takes a new 8 × 8 image (size and mips change):
// our encoder's blocks decode back close to it, and the package validates.
TEST(BemPackTextures, Bc7TextureTakesANewSizeWithMips) {
  testkit::TestPackage p = quad_package();
  scene::RgbaImage flat;
  flat.width = flat.height = 4;
  flat.pixels.assign(64, 0x80);
  p.manifest["textures"][0]["format"] = scene::texture_format::kBC7;
  p.payloads[4] = scene::encode_bc7(flat);
  Template t;
  ASSERT_NO_FATAL_FAILURE(load_template(t, p.binary()));
  const scene::RgbaImage img = test_image(8, 8);
  t.content.manifest["textures"][0]["mips"] = 1;
  auto r = pack(t, with_image(export_default(t.file), 0, *scene::encode_png(img)));
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  ASSERT_EQ(r->textures.size(), 1U);
  EXPECT_TRUE(r->textures[0].encoded);
  EXPECT_GT(r->textures[0].psnr_db, 35.0);
  const Json& tj = r->content.manifest["textures"][0];
  EXPECT_EQ(tj["width"], 8);
  EXPECT_EQ(tj["height"], 8);
  const ByteVec& payload = payload_at(r->content, "/textures/0/payload");
  EXPECT_EQ(payload.size(), 4U * 16U);  // one mip (the template had one): 2 × 2 blocks
  auto back = scene::decode_top_mip(scene::texture_format::kBC7, 8, 8, true, payload);
  ASSERT_TRUE(back.ok());
  // Row 0 of the payload is the image's bottom row (Unity order).
  EXPECT_NEAR(back->pixels[0], 3, 6);           // x = 0
  EXPECT_NEAR(back->pixels[1], 16 * 7 + 5, 6);  // y = 7
  ASSERT_TRUE(write_binary(r->content).ok());
}

// An ASTC 6×6 texture (libastcenc) takes a new 12 × 12 image with two
// mips: blocks of 6 × 6, decoded back close to the image.
TEST(BemPackTextures, AstcTextureIsEncoded) {
  testkit::TestPackage p = quad_package();
  p.manifest["textures"][0]["format"] = scene::texture_format::kASTC6x6;
  p.manifest["textures"][0]["mips"] = 1;
  p.payloads[4] = ByteVec(16, 0);  // one block (its content does not matter here)
  Template t;
  ASSERT_NO_FATAL_FAILURE(load_template(t, p.binary()));
  const ByteVec base = export_default(load_template_file_for_images());
  const scene::RgbaImage img = test_image(12, 12);
  auto r = pack(t, with_image(base, 0, *scene::encode_png(img), "T_actor_example_body_01_d"));
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  ASSERT_EQ(r->textures.size(), 1U);
  EXPECT_TRUE(r->textures[0].encoded);
  EXPECT_GT(r->textures[0].psnr_db, 25.0);  // four colours on a line for a 2-D gradient
  const ByteVec& payload = payload_at(r->content, "/textures/0/payload");
  EXPECT_EQ(payload.size(), 4U * 16U);  // 2 × 2 blocks of 6 × 6
  ASSERT_TRUE(write_binary(r->content).ok());
}

// Refusals: a BC format needs multiples of 4; an image that does not
// decode. Each names the image.
TEST(BemPackTextures, Refusals) {
  testkit::TestPackage p = quad_package();
  Template t;
  ASSERT_NO_FATAL_FAILURE(load_template(t, p.binary()));
  const ByteVec glb = export_default(t.file);
  const std::string name = "T_actor_example_body_01_d";
  // Not decodable.
  auto bad = pack(t, with_image(glb, 0, ByteVec{1, 2, 3, 4}, name));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, codes::BEM_PACK_TEXTURE.str());
  EXPECT_EQ(bad.error().location.pointer, "/images/0");
  // BC7 at 6 × 6.
  testkit::TestPackage bc7 = quad_package();
  scene::RgbaImage flat;
  flat.width = flat.height = 4;
  flat.pixels.assign(64, 0x80);
  bc7.manifest["textures"][0]["format"] = scene::texture_format::kBC7;
  bc7.payloads[4] = scene::encode_bc7(flat);
  Template tb;
  ASSERT_NO_FATAL_FAILURE(load_template(tb, bc7.binary()));
  auto odd = pack(tb, with_image(export_default(tb.file), 0, *scene::encode_png(test_image(6, 6))));
  ASSERT_FALSE(odd.ok());
  EXPECT_EQ(odd.error().code, codes::BEM_PACK_TEXTURE.str());
  EXPECT_NE(odd.error().message.find("multiple of 4"), std::string::npos) << odd.error().message;
}

/// The attributes of the first primitive of each glTF mesh, as floats.
std::map<std::string, std::vector<float>> attributes_of(const ByteVec& glb) {
  std::map<std::string, std::vector<float>> out;
  auto doc = scene::GltfDocument::load(glb);
  EXPECT_TRUE(doc.ok());
  if (!doc) return out;
  const Json& j = doc->json();
  for (std::size_t m = 0; m < j["meshes"].size(); ++m) {
    const Json& attrs = j["meshes"][m]["primitives"][0]["attributes"];
    for (auto it = attrs.begin(); it != attrs.end(); ++it) {
      auto v = doc->read_accessor_floats(it.value().get<std::size_t>());
      EXPECT_TRUE(v.ok());
      if (v) out[std::to_string(m) + "/" + it.key()] = *v;
    }
  }
  return out;
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
  ASSERT_EQ(packages.size(), 17u);
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

/// The spec text parsed, or the test fails.
PackSpec spec_of(const char* text) {
  auto s = parse_pack_spec(core::as_bytes(std::string_view(text)));
  EXPECT_TRUE(s.ok()) << s.error().to_string();
  return s.ok() ? std::move(*s) : PackSpec{};
}

/// The packed content written and loaded back, with `settings` selected.
std::vector<float> exported_positions(const PackageContent& c, const std::string& settings) {
  core::Report report;
  auto written = write_binary(c, {}, &report);
  EXPECT_TRUE(written.ok()) << (written.ok() ? "" : written.error().to_string()) << "\n"
                            << report.to_text("packed");
  if (!written.ok()) return {};
  const ByteVec glb = export_selection(written->bytes, settings, false, false);
  return glb.empty() ? std::vector<float>{} : attributes_of(glb).at("0/POSITION");
}

// The spec sets the package's fields, options and rules; a slider made of
// two shape keys (one each side of a neutral tick in the middle) moves the
// vertices by each key's displacement, interpolated between the frames.
TEST(BemPackSpec, FieldsOptionsAndATwoSidedSlider) {
  Template t;
  ASSERT_NO_FATAL_FAILURE(load_template(t, testkit::make_valid_package(3).binary()));
  SceneSpec s = triangle_scene();
  s.targets = {{0, 0, 0, 0, 0, 0, 0, -0.5f, 0}, {0, 0, 0, 0.5f, 0, 0, 0, 0, 0}};
  s.target_names = {"chest small", "chest big"};
  const PackSpec spec = spec_of(R"({
    "package_id": "creator.outfit", "name": "My outfit", "author": "A. Creator",
    "version": "2.0.0",
    "option_groups": [{"id": "look", "name": "Look", "default": "new",
                       "choices": [{"id": "new", "name": "New"}, {"id": "old", "name": "Old"}]}],
    "component_rules": [
      {"target": 0, "candidates": [{"when": {"eq": ["look", "new"]}, "operation": "replace", "mesh": 0},
                                   {"when": {"eq": ["look", "old"]}, "operation": "keep"}]},
      {"target": 1, "candidates": [{"when": true, "operation": "hide"}]}],
    "parameters": [{"id": "chest", "name": "Chest", "default": 500, "step": 250,
                    "available_when": {"eq": ["look", "new"]},
                    "frames": [{"value": 0, "shape_key": "chest small"},
                               {"value": 500, "neutral": true},
                               {"value": 1000, "shape_key": "chest big"}]}]})");
  PackOptions o;
  o.spec = &spec;
  auto r = pack(t, build_scene(s), o);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  const Json& m = r->content.manifest;
  EXPECT_EQ(m["package_id"], "creator.outfit");
  EXPECT_EQ(m["name"], "My outfit");
  EXPECT_EQ(m["author"], "A. Creator");
  EXPECT_EQ(m["version"], "2.0.0");
  EXPECT_EQ(m["option_groups"][0]["id"], "look");
  EXPECT_EQ(m["component_rules"][1]["candidates"][0]["operation"], "hide");
  EXPECT_EQ(m["parameters"], Json::parse(R"([{"id":"chest","name":"Chest","min":0,"max":1000,
      "neutral":500,"default":500,"step":250,"available_when":{"eq":["look","new"]}}])"));
  ASSERT_EQ(m["mesh_deformations"].size(), 1u);
  const Json& frames = m["mesh_deformations"][0]["frames"];
  ASSERT_EQ(frames.size(), 3u);
  EXPECT_EQ(frames[0]["value"], 0);
  EXPECT_EQ(frames[1], Json::parse(R"({"value":500,"neutral":true})"));
  EXPECT_EQ(frames[2]["value"], 1000);
  EXPECT_EQ(payload_at(r->content, "/mesh_deformations/0/frames/0/payload"),
            morphtest::deformation_payload({{2, -0.0f, -0.5f, 0}}));
  EXPECT_EQ(payload_at(r->content, "/mesh_deformations/0/frames/2/payload"),
            morphtest::deformation_payload({{1, -0.5f, 0, 0}}));
  EXPECT_EQ(r->meshes[0].sliders, 1u);
  // The glTF positions (x mirrored back by the export) at four ticks.
  EXPECT_EQ(exported_positions(r->content, "chest:500"),
            (std::vector<float>{0, 0, 0, 1, 0, 0, 0, 1, 0}));
  EXPECT_EQ(exported_positions(r->content, "chest:1000"),
            (std::vector<float>{0, 0, 0, 1.5f, 0, 0, 0, 1, 0}));
  EXPECT_EQ(exported_positions(r->content, "chest:0"),
            (std::vector<float>{0, 0, 0, 1, 0, 0, 0, 0.5f, 0}));
  EXPECT_EQ(exported_positions(r->content, "chest:250"),
            (std::vector<float>{0, 0, 0, 1, 0, 0, 0, 0.75f, 0}));
}

// One shape key with the spec's range and step: the key at max (or at min
// when the neutral tick is max), the default from the mesh's weight on the
// step grid; keys the spec does not name stay 0..1000 sliders.
TEST(BemPackSpec, OneShapeKeyTakesTheSpecsRange) {
  Template t;
  ASSERT_NO_FATAL_FAILURE(load_template(t, testkit::make_valid_package(3).binary()));
  SceneSpec s = triangle_scene();
  s.targets = {{0, 0, 0, 0.5f, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 0, 0, 0.5f, 0}, {}};
  s.targets[2] = std::vector<float>(9, 0.0f);
  s.target_names = {"Belly", "Blink", "Other"};
  s.target_weights = {0.25f, 0, 0.5f};
  const PackSpec spec = spec_of(R"({"parameters": [
      {"id": "belly", "shape_key": "Belly", "max": 100, "step": 10},
      {"id": "Blink", "neutral": 1000}]})");
  PackOptions o;
  o.spec = &spec;
  auto r = pack(t, build_scene(s), o);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  const Json& m = r->content.manifest;
  // Belly: weight 0.25 of 100 ticks = 25, on the step-10 grid: 30 (half away from zero).
  EXPECT_EQ(m["parameters"], Json::parse(R"([
      {"id":"belly","name":"Belly","min":0,"max":100,"neutral":0,"default":30,"step":10},
      {"id":"Blink","name":"Blink","min":0,"max":1000,"neutral":1000,"default":1000,"step":1},
      {"id":"Other","name":"Other","min":0,"max":1000,"neutral":0,"default":500,"step":1}])"));
  const Json& ch = m["mesh_deformations"];
  ASSERT_EQ(ch.size(), 3u);
  EXPECT_EQ(ch[0]["frames"][1]["value"], 100);
  EXPECT_EQ(ch[1]["frames"][0]["value"], 0);
  EXPECT_EQ(ch[1]["frames"][0]["count"], 1);
  EXPECT_EQ(ch[1]["frames"][1], Json::parse(R"({"value":1000,"neutral":true})"));
  EXPECT_EQ(exported_positions(r->content, "belly:50&Blink:0"),
            (std::vector<float>{0, 0, 0, 1.25f, 0, 0, 0, 1.5f, 0}));
}

// §12/§5 pass-through: the spec's draw material overrides, root offset and
// drivers land in the manifest, and the capabilities they use are declared
// (so the package is BEM 1.5 without the creator listing them).
TEST(BemPackSpec, OverridesRootOffsetAndDriversDeclareTheirCapabilities) {
  Template t;
  ASSERT_NO_FATAL_FAILURE(load_template(t, testkit::make_valid_package(3).binary()));
  SceneSpec s = triangle_scene();
  s.targets = {{0, 0, 0, 0.5f, 0, 0, 0, 0, 0}};
  s.target_names = {"sway"};
  const PackSpec spec = spec_of(R"({
    "material_overrides": [{"mesh": 0, "draw": 0, "floats": {"_Smoothness": 0.25},
                            "enable_keywords": ["_EMISSION"]}],
    "root_offset": {"path": "Bip001", "translation": [0.0, 0.04, 0.0]},
    "drivers": [{"id": "swing", "name": "Swing", "waveform": "sine", "default_playing": false,
                 "base_frequency": 0.5,
                 "bindings": [{"type": "morph_parameter", "target": "sway",
                               "range": [0.0, 1.0]}]}]})");
  PackOptions o;
  o.spec = &spec;
  auto r = pack(t, build_scene(s), o);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  const Json& m = r->content.manifest;
  EXPECT_EQ(m["meshes"][0]["draws"][0]["material_overrides"],
            Json::parse(R"({"floats":{"_Smoothness":0.25},"enable_keywords":["_EMISSION"]})"));
  const Json& caps = m["required_capabilities"];
  for (const char* cap :
       {"material-overrides-v1", "root-offset-v1", "body-parameters", "mesh-position-deltas"})
    EXPECT_NE(std::find(caps.begin(), caps.end(), Json(cap)), caps.end()) << cap;
  core::Report report;
  auto written = write_binary(r->content, {}, &report);
  if (written.ok()) {
    EXPECT_EQ(written->stats.minor, 5);
    EXPECT_NE(std::find(caps.begin(), caps.end(), Json("dynamic-drivers-v1")), caps.end());
  } else {
    // The driver object above may not be complete per §13; the report names what is missing.
    ADD_FAILURE() << written.error().to_string() << "\n" << report.to_text("packed");
  }
}

TEST(BemPackSpec, Refusals) {
  auto parse_error = [](const char* text) {
    auto s = parse_pack_spec(core::as_bytes(std::string_view(text)));
    return s.ok() ? std::string("ok") : s.error().code + " " + s.error().location.pointer;
  };
  EXPECT_EQ(parse_error(R"({"colour": 1})"), "BEM_PACK_SPEC /colour");
  EXPECT_EQ(parse_error(R"({"name": 3})"), "BEM_PACK_SPEC /name");
  EXPECT_EQ(parse_error(R"({"parameters": [{"name": "x"}]})"), "BEM_PACK_SPEC /parameters/0");
  EXPECT_EQ(parse_error(R"({"parameters": [{"id": "x", "max": 2000}]})"),
            "BEM_PACK_SPEC /parameters/0/max");
  EXPECT_EQ(parse_error(R"({"parameters": [{"id": "x", "frames": [
      {"value": 500, "neutral": true}, {"value": 0, "shape_key": "a"}]}]})"),
            "BEM_PACK_SPEC /parameters/0/frames/1/value");
  EXPECT_EQ(parse_error(R"({"parameters": [{"id": "x", "frames": [
      {"value": 0, "shape_key": "b"}, {"value": 1000, "shape_key": "a"}]}]})"),
            "BEM_PACK_SPEC /parameters/0/frames");
  EXPECT_EQ(parse_error(R"({"parameters": [{"id": "x"}, {"id": "x"}]})"),
            "BEM_PACK_SPEC /parameters/1");
  EXPECT_EQ(parse_error(R"({"material_overrides": [{"draw": 0}]})"),
            "BEM_PACK_SPEC /material_overrides/0/mesh");
  EXPECT_EQ(parse_error(R"({"name": "x",)"), "JSON_SYNTAX ");

  Template t;
  ASSERT_NO_FATAL_FAILURE(load_template(t, testkit::make_valid_package(3).binary()));
  SceneSpec s = triangle_scene();
  s.targets = {{0, 0, 0, 0.5f, 0, 0, 0, 0, 0}};
  s.target_names = {"Belly"};
  auto pack_error = [&](const char* text) {
    const PackSpec spec = spec_of(text);
    PackOptions o;
    o.spec = &spec;
    auto r = pack(t, build_scene(s), o);
    return r.ok() ? std::string("ok") : r.error().code + " " + r.error().location.pointer;
  };
  EXPECT_EQ(pack_error(R"({"parameters": [{"id": "waist"}]})"), "BEM_PACK_SPEC /parameters/0");
  EXPECT_EQ(pack_error(R"({"parameters": [{"id": "w", "shape_key": "Waist"}]})"),
            "BEM_PACK_SPEC /parameters/0/shape_key");
  EXPECT_EQ(pack_error(R"({"parameters": [{"id": "w", "shape_key": "Belly", "neutral": 500}]})"),
            "BEM_PACK_SPEC /parameters/0/neutral");
  EXPECT_EQ(pack_error(R"({"parameters": [{"id": "a", "shape_key": "Belly"},
                                          {"id": "b", "shape_key": "Belly"}]})"),
            "BEM_PACK_SPEC /parameters/1/shape_key");
  EXPECT_EQ(pack_error(R"({"material_overrides": [{"mesh": 0, "draw": 4}]})"),
            "BEM_PACK_SPEC /material_overrides/0");
  EXPECT_EQ(pack_error(R"({"parameters": [{"id": "Belly", "step": 300}]})"), "ok");
}

/// A DX10 DDS file (header fields by hand, as in tests/scene/dds_test.cpp)
/// of a w × h texture in DXGI format `dxgi` with `data` after the headers.
ByteVec dds_file(std::uint32_t w, std::uint32_t h, std::uint32_t dxgi, const ByteVec& data) {
  ByteVec out = {'D', 'D', 'S', ' '};
  auto put32 = [&](std::uint32_t v) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  };
  for (std::uint32_t v : {124u, 0x1007u, h, w, 0u, 0u, 1u}) put32(v);
  for (int i = 0; i < 11; ++i) put32(0);
  for (std::uint32_t v : {32u, 4u, 0x30315844u /* "DX10" */, 0u, 0u, 0u, 0u, 0u}) put32(v);
  for (std::uint32_t v : {0x1000u, 0u, 0u, 0u, 0u}) put32(v);
  for (std::uint32_t v : {dxgi, 3u, 0u, 1u, 0u}) put32(v);
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

// DDS images pass through: their data is the texture's payload byte for
// byte, their header gives format, size, mips and (DX10) colour space.
TEST(BemPackTextures, DdsImagesPassThroughUnchanged) {
  Template t;
  ASSERT_NO_FATAL_FAILURE(load_template(t, quad_package().binary()));
  // BC7 sRGB 8x8: four 16-byte blocks (any bytes: they are not decoded).
  ByteVec blocks;
  for (int i = 0; i < 64; ++i) blocks.push_back(static_cast<std::uint8_t>(i * 7));
  const ByteVec glb = with_image(export_default(t.file), 0, dds_file(8, 8, 99, blocks));
  auto r = pack(t, glb);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  ASSERT_EQ(r->textures.size(), 1u);
  EXPECT_TRUE(r->textures[0].dds);
  const Json& tj = r->content.manifest["textures"][0];
  EXPECT_EQ(tj["format"], 25);
  EXPECT_EQ(tj["width"], 8);
  EXPECT_EQ(tj["height"], 8);
  EXPECT_EQ(tj["mips"], 1);
  EXPECT_EQ(tj["srgb"], true);
  EXPECT_EQ(payload_at(r->content, "/textures/0/payload"), blocks);
  EXPECT_TRUE(r->warnings.empty());
  core::Report report;
  ASSERT_TRUE(write_binary(r->content, {}, &report).ok()) << report.to_text("packed");
  // A linear DXGI format for an sRGB texture: kept, with a warning.
  auto linear = pack(t, with_image(export_default(t.file), 0, dds_file(8, 8, 98, blocks)));
  ASSERT_TRUE(linear.ok());
  ASSERT_EQ(linear->warnings.size(), 1u);
  EXPECT_EQ(linear->warnings[0].code, "BEM_PACK_TEXTURE_SRGB");
  EXPECT_EQ(linear->content.manifest["textures"][0]["srgb"], false);
  // A DDS the packer cannot take: refused at the image.
  auto bad = pack(t, with_image(export_default(t.file), 0, dds_file(8, 8, 95, blocks)));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, "BEM_PACK_TEXTURE");
  EXPECT_NE(bad.error().message.find("DXGI format 95"), std::string::npos);
}

/// `glb` with morph targets added to glTF mesh `mesh` (every primitive):
/// target k moves vertex v by (0, (k + 1) * 0.125 * (v + 1), 0); names in
/// extras.targetNames.
ByteVec with_targets(const ByteVec& glb, std::size_t mesh, const std::vector<std::string>& names) {
  auto doc = scene::GltfDocument::load(glb);
  EXPECT_TRUE(doc.ok());
  if (!doc) return {};
  auto bin = scene::begin_edit(*doc, codes::BEM_PACK_TEXTURE);
  EXPECT_TRUE(bin.ok());
  if (!bin) return {};
  Json root = doc->json();
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
  auto out = scene::finish_glb(root, std::move(*bin));
  EXPECT_TRUE(out.ok());
  return out.ok() ? *out : ByteVec{};
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

// PNG into BC5 (a two-channel normal map) and BC4 (a mask) templates:
// libsquish's blocks, close to the image in the channels that hold data.
TEST(BemPackTextures, NormalMapsAndMasksAreBc5AndBc4) {
  for (const std::uint32_t format : {scene::texture_format::kBC5, scene::texture_format::kBC4}) {
    SCOPED_TRACE(scene::texture_format_name(format));
    testkit::TestPackage p = quad_package();
    scene::RgbaImage grey;
    grey.width = grey.height = 4;
    grey.pixels.assign(64, 128);
    Json& tex = p.manifest["textures"][0];
    tex["format"] = format;
    tex["srgb"] = false;
    if (format == scene::texture_format::kBC5) {
      tex["semantic"] = "normal";
      tex["normal_encoding"] = "xy-unorm";
    }
    p.payloads[4] = *scene::encode_texture(format, grey, 1, false);
    Template t;
    ASSERT_NO_FATAL_FAILURE(load_template(t, p.binary()));
    const ByteVec glb = with_image(export_default(t.file), 0, *scene::encode_png(test_image(8, 8)));
    auto r = pack(t, glb);
    ASSERT_TRUE(r.ok()) << r.error().to_string();
    ASSERT_EQ(r->textures.size(), 1u);
    EXPECT_TRUE(r->textures[0].encoded);
    EXPECT_EQ(r->content.manifest["textures"][0]["format"], format);
    EXPECT_EQ(r->content.manifest["textures"][0]["width"], 8);
    EXPECT_EQ(payload_at(r->content, "/textures/0/payload").size(),
              format == scene::texture_format::kBC5 ? 64u : 32u);  // 4 blocks of 16 / 8
    EXPECT_GT(r->textures[0].psnr_db, 35.0);
    ASSERT_TRUE(write_binary(r->content).ok());
  }
}

// --texture-format: an edited texture in another format than the
// template's (by its name here), the manifest's format following.
TEST(BemPackTextures, AFormatOverrideReencodesEditedTextures) {
  Template t;
  ASSERT_NO_FATAL_FAILURE(load_template(t, quad_package().binary()));
  const ByteVec glb = with_image(export_default(t.file), 0, *scene::encode_png(test_image(4, 4)));
  PackOptions o;
  o.texture_formats["T_actor_example_body_01_d"] = scene::texture_format::kBC1;
  auto r = pack(t, glb, o);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  ASSERT_EQ(r->textures.size(), 1U);
  EXPECT_EQ(r->textures[0].format, scene::texture_format::kBC1);
  EXPECT_EQ(r->content.manifest["textures"][0]["format"], 10);
  EXPECT_EQ(payload_at(r->content, "/textures/0/payload").size(), 8u);  // one BC1 block
  EXPECT_GT(r->textures[0].psnr_db, 25.0);  // four colours on a line for a 2-D gradient
  ASSERT_TRUE(write_binary(r->content).ok());
  // R8 cannot be sRGB (§8): refused, naming the texture.
  o.texture_formats.clear();
  o.texture_formats["color"] = scene::texture_format::kR8;
  r = pack(t, glb, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "BEM_PACK_TEXTURE");
  // A name that is neither a texture of the template nor a kind would be
  // ignored: refused, listing the template's texture names.
  o.texture_formats.clear();
  o.texture_formats["T_actor_example_body_01_D"] = scene::texture_format::kBC1;  // case differs
  r = pack(t, glb, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "BEM_PACK_TEXTURE_FORMAT");
  EXPECT_NE(r.error().message.find("\"T_actor_example_body_01_d\""), std::string::npos)
      << r.error().message;
  EXPECT_EQ(scene::texture_format_from_name("astc_6x6"), scene::texture_format::kASTC6x6);
  EXPECT_EQ(scene::texture_format_from_name("bc7"), scene::texture_format::kBC7);
  EXPECT_EQ(scene::texture_format_from_name("63"), scene::texture_format::kR8);
  EXPECT_EQ(scene::texture_format_from_name("BC6H"), std::nullopt);
}

/// A JSON template for the builder's target: component 0 in the builder's
/// rigid layout (position, UV, one bone index) with its colour texture.
std::string builder_json_template(const std::string& texture_extra = "") {
  const Json target = testkit::make_valid_package(3).manifest["target"];
  return R"({"target": )" + target.dump() + R"(, "layouts": [{"component": 0,
      "attributes": [[0,0,3,0,0],[4,0,2,1,0],[13,6,4,2,0]], "strides": [12, 8, 4],
      "textures": [{"material_slot": 0, "original_name": "T_actor_example_body_01_d",
                    "srgb": true, "format": "RGBA32")" +
         texture_extra + "}]}]}";
}

// No package to start from: a JSON template (the target, the layout and
// texture facts) and the builder package's export give that package's mesh
// and texture bytes back, in a package of their own (no options: BEM 1.3).
TEST(BemPackTemplate, AJsonTemplateAndASceneMakeAPackage) {
  const std::string text = builder_json_template();
  auto tmpl = load_json_template(core::as_bytes(text));
  ASSERT_TRUE(tmpl.ok()) << tmpl.error().to_string();
  const testkit::TestPackage original = testkit::make_valid_package(3);
  auto doc = scene::GltfDocument::load(export_default(original.binary()));
  ASSERT_TRUE(doc.ok());
  PackOptions o;
  o.fresh = true;
  auto r = pack_scene(tmpl->content, tmpl->model, *doc, o);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  const Json& m = r->content.manifest;
  ASSERT_EQ(m["meshes"].size(), 1u);
  ASSERT_EQ(m["meshes"][0]["draws"].size(), 1u);
  EXPECT_EQ(m["meshes"][0]["vertex_count"], 3);
  EXPECT_EQ(m["option_groups"], Json::array());
  EXPECT_EQ(m["component_rules"], Json::parse(R"([
      {"target":0,"candidates":[{"when":true,"operation":"replace","mesh":0}]},
      {"target":1,"candidates":[{"when":true,"operation":"keep"}]}])"));
  EXPECT_EQ(m["target"], original.manifest["target"]);
  for (const char* ptr :
       {"/meshes/0/streams/0/payload", "/meshes/0/streams/1/payload", "/meshes/0/streams/2/payload",
        "/meshes/0/draws/0/indices", "/textures/0/payload"})
    EXPECT_EQ(
        payload_at(r->content, ptr),
        original.payloads.at(original.manifest.at(Json::json_pointer(ptr)).get<std::size_t>()))
        << ptr;
  EXPECT_EQ(m["meshes"][0]["bones"],
            Json::parse(R"([{"component":0,"index":0,"name":"Bip001_Pelvis"}])"));
  core::Report report;
  auto written = write_binary(r->content, {}, &report);
  ASSERT_TRUE(written.ok()) << written.error().to_string() << "\n" << report.to_text("packed");
  EXPECT_EQ(written->stats.minor, 3);
  EXPECT_TRUE(load_package(written->bytes).ok());

  // The scene without the texture's image: the draw needs it.
  auto no_image = scene::GltfDocument::load(build_scene(triangle_scene()));
  ASSERT_TRUE(no_image.ok());
  r = pack_scene(tmpl->content, tmpl->model, *no_image, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "BEM_PACK_TEXTURE");
  EXPECT_NE(r.error().message.find("T_actor_example_body_01_d"), std::string::npos);
}

// A second primitive of a material gets a draw of its own (a copy of the
// first one's material and textures), in a template package too.
TEST(BemPackTemplate, ASecondPrimitiveOfAMaterialIsANewDraw) {
  Template t;
  ASSERT_NO_FATAL_FAILURE(load_template(t, testkit::make_valid_package(3).binary()));
  SceneSpec s = triangle_scene();
  s.primitives.push_back({"M_actor_example_body_01", {2, 1, 0}});
  auto r = pack(t, build_scene(s));
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  const Json& draws = r->content.manifest["meshes"][0]["draws"];
  ASSERT_EQ(draws.size(), 2u);
  EXPECT_EQ(draws[1]["material_name"], "M_actor_example_body_01");
  EXPECT_EQ(draws[1]["textures"], draws[0]["textures"]);
  EXPECT_EQ(r->meshes[0].draws_added, 1u);
  EXPECT_TRUE(write_binary(r->content).ok());
  // The hair component's material on the body mesh: a draw of component 1's
  // slot 0 (§7: any component can donate a material), no textures of its own.
  s.primitives.back().first = "M_actor_example_hair_01";
  r = pack(t, build_scene(s));
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_EQ(r->content.manifest["meshes"][0]["draws"][1]["material_component"], 1);
  EXPECT_EQ(r->content.manifest["meshes"][0]["draws"][1]["material_slot"], 0);
  EXPECT_EQ(r->content.manifest["meshes"][0]["draws"][1]["textures"], Json::array());
  EXPECT_TRUE(write_binary(r->content).ok());
  // A name no component has: refused, listing the names it can have.
  s.primitives.back().first = "M_unknown";
  r = pack(t, build_scene(s));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "BEM_PACK_MATERIAL");
  EXPECT_NE(r.error().message.find("\"M_actor_example_hair_01\""), std::string::npos)
      << r.error().message;
}

TEST(BemPackTemplate, FactsAreNeverGuessed) {
  auto code_of = [](const std::string& text) {
    auto r = load_json_template(core::as_bytes(text));
    return r.ok() ? std::string("ok") : r.error().code + " " + r.error().location.pointer;
  };
  EXPECT_EQ(code_of(builder_json_template()), "ok");
  std::string no_srgb = builder_json_template();
  no_srgb.replace(no_srgb.find(R"("srgb": true,)"), 13, "");
  EXPECT_EQ(code_of(no_srgb), "BEM_PACK_TEMPLATE /layouts/0/textures/0/srgb");
  std::string no_layout = builder_json_template();
  no_layout.replace(no_layout.find(R"("attributes")"), 12, R"("attributez")");
  EXPECT_EQ(code_of(no_layout), "BEM_PACK_TEMPLATE /layouts/0/attributez");
  EXPECT_EQ(code_of(R"({"target": {"components": []}, "layouts": []})"),
            "BEM_PACK_TEMPLATE /layouts");
  EXPECT_EQ(code_of(builder_json_template(R"(, "semantic": "mask")")),
            "BEM_PACK_TEMPLATE /layouts/0/textures/0/semantic");
  // A layout the validator refuses (a stride that does not match the
  // attributes): its first issue, at the manifest pointer.
  std::string stride = builder_json_template();
  stride.replace(stride.find("[12, 8, 4]"), 10, "[16, 8, 4]");
  EXPECT_EQ(code_of(stride).rfind("BEM_PACK_TEMPLATE /meshes/0", 0), 0u) << code_of(stride);
}

/// A scratch folder for project files, removed at the end of the test.
struct ProjectDir {
  std::filesystem::path dir;
  ProjectDir() {
    dir = std::filesystem::temp_directory_path() /
          ("charkit-project-" + std::to_string(::getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir / "payloads");
  }
  ~ProjectDir() { std::filesystem::remove_all(dir); }
  void put(const std::string& name, const ByteVec& bytes) const {
    std::ofstream(dir / name, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
  }
  /// project.json of `p`'s manifest with payload i in payloads/i.bin (paths
  /// written with the public tool's backslashes on odd ids).
  std::string write_project(const testkit::TestPackage& p, Json manifest) const {
    Json files = Json::array();
    for (std::size_t i = 0; i < p.payloads.size(); ++i) {
      const std::string name = "payloads/" + std::to_string(i) + ".bin";
      put(name, p.payloads[i]);
      files.push_back(i % 2 ? "payloads\\" + std::to_string(i) + ".bin" : name);
    }
    const std::string text = Json{{"manifest", manifest}, {"payload_files", files}}.dump(1);
    put("project.json", ByteVec(text.begin(), text.end()));
    return (dir / "project.json").string();
  }
};

// The public BEM project's project.json: payload i is payload_files[i];
// the capabilities the manifest uses and does not list are declared; the
// package written from it holds the same manifest and payloads.
TEST(BemPackProject, ProjectJsonBecomesThePackage) {
  ProjectDir d;
  testkit::TestPackage p = testkit::make_valid_package(5);
  Json manifest = p.manifest;
  manifest["root_offset"] = Json{{"path", "Bip001"}, {"translation", {0.0, 0.04, 0.0}}};
  const std::string path = d.write_project(p, manifest);
  ASSERT_TRUE(looks_like_project_file(path));
  auto content = read_project_file(path);
  ASSERT_TRUE(content.ok()) << content.error().to_string();
  ASSERT_EQ(content->payloads.size(), p.payloads.size());
  for (std::size_t i = 0; i < p.payloads.size(); ++i)
    EXPECT_EQ(content->payloads[i], p.payloads[i]);
  const PackSpec spec = spec_of(R"({"package_id": "creator.project", "version": "3.0.0"})");
  PackOptions o;
  o.spec = &spec;
  auto r = pack_project(std::move(*content), o);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  const Json& caps = r->content.manifest["required_capabilities"];
  EXPECT_NE(std::find(caps.begin(), caps.end(), Json("root-offset-v1")), caps.end());
  EXPECT_EQ(r->content.manifest["package_id"], "creator.project");
  core::Report report;
  auto written = write_binary(r->content, {}, &report);
  ASSERT_TRUE(written.ok()) << written.error().to_string() << "\n" << report.to_text("project");
  EXPECT_EQ(written->stats.minor, 5);
  auto back = read_package_content(written->bytes);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->payloads, p.payloads);
  EXPECT_EQ(back->manifest["root_offset"], manifest["root_offset"]);
  // Spec parameters have no shape keys to come from here.
  const PackSpec sliders = spec_of(R"({"parameters": [{"id": "x"}]})");
  o.spec = &sliders;
  auto refused = pack_project(*read_project_file(path), o);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, "BEM_PACK_SPEC");
}

TEST(BemPackProject, PathsStayInsideTheProject) {
  ProjectDir d;
  d.put("payloads/0.bin", ByteVec{1, 2, 3});
  d.put("empty.bin", ByteVec{});
  std::filesystem::create_symlink(d.dir / "payloads" / "0.bin", d.dir / "link.bin");
  auto code_of = [&](const Json& project) {
    const std::string text = project.dump();
    d.put("p.json", ByteVec(text.begin(), text.end()));
    auto r = read_project_file((d.dir / "p.json").string());
    return r.ok() ? std::string("ok") : r.error().code + " " + r.error().location.pointer;
  };
  const Json m = Json::object();
  EXPECT_EQ(code_of(Json{{"manifest", m}, {"payload_files", {"payloads/0.bin"}}}), "ok");
  EXPECT_EQ(code_of(Json{{"manifest", m}, {"payload_files", {"../x.bin"}}}),
            "BEM_PROJECT /payload_files/0");
  EXPECT_EQ(code_of(Json{{"manifest", m}, {"payload_files", {"payloads/../../x.bin"}}}),
            "BEM_PROJECT /payload_files/0");
  EXPECT_EQ(code_of(Json{{"manifest", m}, {"payload_files", {"/etc/passwd"}}}),
            "BEM_PROJECT /payload_files/0");
  EXPECT_EQ(code_of(Json{{"manifest", m}, {"payload_files", {"C:/x.bin"}}}),
            "BEM_PROJECT /payload_files/0");
  EXPECT_EQ(code_of(Json{{"manifest", m}, {"payload_files", {"link.bin"}}}), "BEM_FOLDER_SYMLINK ");
  EXPECT_EQ(code_of(Json{{"manifest", m}, {"payload_files", {"empty.bin"}}}),
            "BEM_PAYLOAD_DECODED_SIZE ");
  EXPECT_EQ(code_of(Json{{"manifest", m}, {"payload_files", {"missing.bin"}}}), "IO_OPEN ");
  EXPECT_EQ(code_of(Json{{"manifest", m}, {"payload_files", {3}}}), "BEM_PROJECT /payload_files/0");
  EXPECT_EQ(code_of(Json{{"payload_files", Json::array()}}), "BEM_PROJECT /manifest");
  EXPECT_EQ(code_of(Json{{"manifest", m}}), "BEM_PROJECT /payload_files");
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
