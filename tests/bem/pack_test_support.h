// What the `bem pack` tests share (pack_test.cpp, pack_textures_test.cpp,
// pack_spec_test.cpp, pack_template_test.cpp): glTF scenes written accessor
// by accessor, the hand-built templates they are packed into, and the export
// that reads a package back.
#pragma once

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
#include "charkit/scene/gltf_writer.h"
#include "charkit/scene/image.h"
#include "charkit/scene/texture_decode.h"
#include "charkit/scene/texture_encode.h"
#include "morph_test_support.h"
#include "package_builder.h"

namespace charkit::bem::packtest {

using core::Json;
using testkit::ByteVec;
using testkit::cat;

/// A GLB's JSON and buffer 0, to change by hand (as the glTF 2.0
/// specification writes them) and put back together with glb_of.
struct GlbParts {
  Json root;
  ByteVec bin;
};
inline std::optional<GlbParts> glb_parts(const ByteVec& glb) {
  auto doc = scene::GltfDocument::load(glb);
  if (!doc) {
    ADD_FAILURE() << doc.error().to_string();
    return std::nullopt;
  }
  GlbParts parts{doc->json(), {}};
  if (!doc->asset().buffers.empty()) {
    auto b0 = doc->buffer(0);
    if (!b0) {
      ADD_FAILURE() << b0.error().to_string();
      return std::nullopt;
    }
    parts.bin.assign(b0->begin(), b0->end());
  }
  for (const char* key : {"accessors", "bufferViews"})
    if (!parts.root.contains(key)) parts.root[key] = Json::array();
  return parts;
}
inline ByteVec glb_of(GlbParts parts) {
  while (parts.bin.size() % 4 != 0) parts.bin.push_back(0);
  parts.root["buffers"] = Json::array({Json{{"byteLength", parts.bin.size()}}});
  auto out = scene::assemble_glb(parts.root.dump(), std::move(parts.bin));
  EXPECT_TRUE(out.ok());
  return out.ok() ? *out : ByteVec{};
}

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
inline SceneSpec triangle_scene() {
  SceneSpec s;
  s.positions = {0, 0, 0, 1, 0, 0, 0, 1, 0};
  s.uvs = {0, 0, 1, 0, 0, 1};
  s.joint_names = {"Bip001_Pelvis"};
  s.joints = std::vector<std::uint16_t>(12, 0);
  s.weights = {1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0};
  s.primitives = {{"M_actor_example_body_01", {0, 1, 2}}};
  return s;
}

inline ByteVec build_scene(const SceneSpec& s) {
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

inline void load_template(Template& t, const ByteVec& file) {
  t.file = file;
  t.loaded = load_package(t.file);
  ASSERT_TRUE(t.loaded.ok()) << t.loaded.error << "\n"
                             << t.loaded.validation.report.to_text("template");
  auto c = read_package_content(t.file);
  ASSERT_TRUE(c.ok()) << c.error().to_string();
  t.content = std::move(*c);
}

inline core::Result<PackResult> pack(const Template& t, const ByteVec& scene_bytes,
                                     const PackOptions& o = {}) {
  auto doc = scene::GltfDocument::load(scene_bytes);
  if (!doc) return std::move(doc).error();
  return pack_scene(t.content, *t.loaded.model, *doc, o);
}

/// The decoded payload a manifest pointer (an integer payload id) refers to.
inline const std::vector<std::uint8_t>& payload_at(const PackageContent& c,
                                                   const std::string& pointer) {
  const auto id = c.manifest.at(Json::json_pointer(pointer)).get<std::uint32_t>();
  return c.payloads.at(id);
}

/// The 12-byte-skin template: mesh 0 is a quad, stream 0 position + normal
/// (Float32×3 each), stream 1 UV (Float32×2), stream 2 UNorm16×4 weights +
/// UInt8×4 bones over Pelvis and Spine; two draws of the same material.
inline testkit::TestPackage quad_package() {
  testkit::TestPackage p = testkit::make_valid_package(3);
  Json& mesh = p.manifest["meshes"][0];
  testkit::make_quad_skin_mesh(mesh);
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
inline ByteVec export_selection(const ByteVec& file, const std::string& parameters, bool raw_axes,
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

inline ByteVec export_default(const ByteVec& file, bool raw_axes = false) {
  return export_selection(file, "", raw_axes, false);
}

/// The attributes of the first primitive of each glTF mesh, as floats.
inline std::map<std::string, std::vector<float>> attributes_of(const ByteVec& glb) {
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

/// The spec text parsed, or the test fails.
inline PackSpec spec_of(const char* text) {
  auto s = parse_pack_spec(core::as_bytes(std::string_view(text)));
  EXPECT_TRUE(s.ok()) << s.error().to_string();
  return s.ok() ? std::move(*s) : PackSpec{};
}

}  // namespace charkit::bem::packtest
