// The glTF layer's typed elements (scene::GltfAsset) on documents written by
// hand from the glTF 2.0 specification, and scene::GltfEditor's output read
// back by tinygltf (an independent reader).
#include "charkit/scene/gltf_asset.h"

#include <gtest/gtest.h>

#include <array>
#include <bit>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "charkit/core/json.h"
#include "charkit/scene/error_codes.h"
#include "charkit/scene/gltf_document.h"
#include "charkit/scene/gltf_editor.h"
#include "glb_builder.h"
#include "tinygltf_include.h"

namespace charkit::scene {
namespace {

using core::Json;

std::vector<std::uint8_t> f32_bytes(const std::vector<float>& v) {
  std::vector<std::uint8_t> out(4 * v.size());
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}

// Two triangles' worth of a skinned, morphed, animated character: every
// element kind the asset models, with values that differ from the defaults.
Json character() {
  return Json::parse(R"({
    "asset": {"version": "2.0", "generator": "hand"},
    "extensionsUsed": ["KHR_materials_unlit"],
    "buffers": [{"byteLength": 48}],
    "bufferViews": [{"buffer": 0, "byteLength": 36, "target": 34962},
                    {"buffer": 0, "byteOffset": 36, "byteLength": 12, "byteStride": 4}],
    "accessors": [
      {"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3",
       "min": [0, 0, 0], "max": [1, 1, 0], "name": "pos"},
      {"componentType": 5126, "count": 3, "type": "VEC3"},
      {"bufferView": 1, "componentType": 5126, "count": 3, "type": "SCALAR"},
      {"bufferView": 1, "byteOffset": 4, "componentType": 5126, "count": 1, "type": "SCALAR"}
    ],
    "images": [{"uri": "skin.png", "name": "skin"}],
    "samplers": [{}],
    "textures": [{"source": 0, "sampler": 0}],
    "materials": [{"name": "body",
                   "pbrMetallicRoughness": {"baseColorFactor": [1, 0.5, 0.25, 1],
                                            "baseColorTexture": {"index": 0, "texCoord": 1},
                                            "metallicFactor": 0},
                   "normalTexture": {"index": 0, "scale": 0.5},
                   "alphaMode": "MASK", "alphaCutoff": 0.25, "doubleSided": true,
                   "extensions": {"KHR_materials_unlit": {}}}],
    "meshes": [{"name": "face",
                "primitives": [{"attributes": {"POSITION": 0, "NORMAL": 1},
                                "material": 0,
                                "targets": [{"POSITION": 1}]}],
                "weights": [0.5],
                "extras": {"targetNames": ["smile"], "other": 1}}],
    "nodes": [{"name": "root", "children": [1, 2]},
              {"name": "face", "mesh": 0, "skin": 0, "weights": [0.25],
               "translation": [1, 2, 3], "rotation": [0, 0, 0.7071068, 0.7071068]},
              {"name": "bone", "matrix": [1,0,0,0, 0,1,0,0, 0,0,1,0, 4,5,6,1]}],
    "skins": [{"joints": [2], "skeleton": 0}],
    "animations": [{"name": "blink",
                    "samplers": [{"input": 2, "output": 2, "interpolation": "STEP"}],
                    "channels": [{"sampler": 0, "target": {"node": 1, "path": "weights"}}]}],
    "scenes": [{"nodes": [0]}],
    "scene": 0
  })");
}

core::Result<GltfAsset> read(const Json& j) {
  return read_gltf_asset(j);
}

TEST(GltfAsset, ReadsEveryElementKind) {
  auto r = read(character());
  ASSERT_TRUE(r) << r.error().to_string();
  const GltfAsset& a = *r;
  EXPECT_EQ(a.version, "2.0");
  EXPECT_EQ(a.generator, "hand");
  EXPECT_EQ(a.extensions_used, std::vector<std::string>{"KHR_materials_unlit"});
  ASSERT_EQ(a.buffer_views.size(), 2u);
  EXPECT_EQ(a.buffer_views[0].target, 34962u);
  EXPECT_EQ(a.buffer_views[1].byte_offset, 36u);
  EXPECT_EQ(a.buffer_views[1].byte_stride, 4u);
  ASSERT_EQ(a.accessors.size(), 4u);
  EXPECT_EQ(a.accessors[0].components, 3u);
  EXPECT_EQ(a.accessors[0].max, (std::vector<double>{1, 1, 0}));
  EXPECT_EQ(a.accessors[0].name, "pos");
  EXPECT_FALSE(a.accessors[1].buffer_view.has_value());
  EXPECT_EQ(a.accessors[3].byte_offset, 4u);
  EXPECT_EQ(a.accessors[3].pointer, "/accessors/3");

  ASSERT_EQ(a.materials.size(), 1u);
  const GltfMaterial& m = a.materials[0];
  EXPECT_EQ(m.base_color_factor[1], 0.5);
  ASSERT_TRUE(m.base_color_texture);
  EXPECT_EQ(m.base_color_texture->tex_coord, 1u);
  EXPECT_EQ(m.metallic_factor, 0.0);
  EXPECT_EQ(m.roughness_factor, 1.0);  // the default
  ASSERT_TRUE(m.normal_texture);
  EXPECT_EQ(m.normal_texture->scale, 0.5);
  EXPECT_EQ(m.alpha_mode, GltfAlphaMode::kMask);
  EXPECT_EQ(m.alpha_cutoff, 0.25);
  EXPECT_TRUE(m.double_sided);
  EXPECT_EQ(m.extensions, std::vector<std::string>{"KHR_materials_unlit"});
  EXPECT_TRUE(m.unlit);
  ASSERT_EQ(a.textures.size(), 1u);
  EXPECT_EQ(a.textures[0].source, 0u);
  EXPECT_EQ(a.images[0].uri, "skin.png");

  ASSERT_EQ(a.meshes.size(), 1u);
  const GltfMesh& mesh = a.meshes[0];
  EXPECT_EQ(mesh.pointer, "/meshes/0");
  ASSERT_EQ(mesh.primitives.size(), 1u);
  const GltfPrimitive& p = mesh.primitives[0];
  EXPECT_EQ(p.pointer, "/meshes/0/primitives/0");
  EXPECT_EQ(p.attributes.find("NORMAL"), 1u);
  EXPECT_FALSE(p.attributes.find("TANGENT"));
  EXPECT_EQ(p.mode, 4u);
  EXPECT_EQ(p.material, 0u);
  EXPECT_FALSE(p.indices);
  EXPECT_EQ(mesh.target_count(), 1u);
  EXPECT_EQ(mesh.target_name(0), "smile");
  EXPECT_EQ(mesh.weights, std::vector<double>{0.5});
  ASSERT_TRUE(mesh.extras);  // the whole extras object, members the layer does not model kept
  EXPECT_EQ(mesh.extras->at("other"), 1);
  EXPECT_FALSE(a.nodes[0].extras);

  ASSERT_EQ(a.nodes.size(), 3u);
  EXPECT_EQ(a.nodes[0].children, (std::vector<std::size_t>{1, 2}));
  EXPECT_FALSE(a.nodes[0].parent);
  EXPECT_EQ(a.nodes[1].parent, 0u);
  EXPECT_EQ(a.nodes[1].translation[2], 3.0);
  EXPECT_EQ(a.nodes[1].scale[0], 1.0);  // the default
  EXPECT_EQ(a.nodes[1].weights, std::vector<double>{0.25});
  ASSERT_TRUE(a.nodes[2].matrix);
  EXPECT_EQ((*a.nodes[2].matrix)[13], 5.0);
  EXPECT_EQ(a.nodes_of_mesh(0), std::vector<std::size_t>{1});
  ASSERT_EQ(a.skins.size(), 1u);
  EXPECT_EQ(a.skins[0].joints, std::vector<std::size_t>{2});
  EXPECT_EQ(a.skins[0].skeleton, 0u);
  EXPECT_FALSE(a.skins[0].inverse_bind_matrices);

  ASSERT_EQ(a.animations.size(), 1u);
  EXPECT_EQ(a.animations[0].samplers[0].interpolation, GltfInterpolation::kStep);
  EXPECT_EQ(a.animations[0].channels[0].path, GltfPath::kWeights);
  EXPECT_EQ(a.animations[0].channels[0].node, 1u);
  EXPECT_EQ(a.scene, 0u);
  EXPECT_EQ(a.scenes[0].nodes, std::vector<std::size_t>{0});
}

TEST(GltfAsset, TargetNamesFallBackToTheFirstPrimitiveThenToIndices) {
  Json j = character();
  j["meshes"][0].erase("extras");
  EXPECT_EQ(read(j)->meshes[0].target_name(0), "target_0");
  j["meshes"][0]["primitives"][0]["extras"] = {{"targetNames", {"vrm0"}}};
  EXPECT_EQ(read(j)->meshes[0].target_name(0), "vrm0");
}

// Each broken document, the code and the JSON pointer of the error.
struct Broken {
  const char* what;
  std::string pointer_path;  // where the change goes, as a JSON pointer
  Json value;                // the new value (null: remove the member)
  const char* code;
  const char* at;
};

TEST(GltfAsset, RefusesBrokenDocumentsAtTheMember) {
  const std::vector<Broken> cases = {
      {"index past the accessors", "/meshes/0/primitives/0/attributes/NORMAL", 9, "GLTF_INDEX",
       "/meshes/0/primitives/0/attributes/NORMAL"},
      {"index of the wrong type", "/nodes/1/mesh", "0", "GLTF_TYPE", "/nodes/1/mesh"},
      {"negative index", "/nodes/1/skin", -1, "GLTF_TYPE", "/nodes/1/skin"},
      {"no primitives", "/meshes/0/primitives", Json::array(), "GLTF_VALUE",
       "/meshes/0/primitives"},
      {"no attributes", "/meshes/0/primitives/0/attributes", nullptr, "GLTF_VALUE",
       "/meshes/0/primitives/0/attributes"},
      {"weights for another target count", "/meshes/0/weights", Json::array({0, 1}), "GLTF_VALUE",
       "/meshes/0/weights"},
      {"matrix and TRS", "/nodes/2/scale", Json::array({1, 1, 1}), "GLTF_VALUE", "/nodes/2/scale"},
      {"rotation of three numbers", "/nodes/1/rotation", Json::array({0, 0, 1}), "GLTF_VALUE",
       "/nodes/1/rotation"},
      {"a node with two parents", "/nodes/0/children", Json::array({1, 2, 1}), "GLTF_VALUE",
       "/nodes/0/children/2"},
      {"a node its own child", "/nodes/2/children", Json::array({2}), "GLTF_VALUE",
       "/nodes/2/children/0"},
      {"a cycle", "/nodes/2/children", Json::array({0}), "GLTF_VALUE", "/nodes/0"},
      {"skin without joints", "/skins/0/joints", Json::array(), "GLTF_VALUE", "/skins/0/joints"},
      {"unknown interpolation", "/animations/0/samplers/0/interpolation", "BEZIER", "GLTF_VALUE",
       "/animations/0/samplers/0/interpolation"},
      {"channel without a path", "/animations/0/channels/0/target/path", nullptr, "GLTF_VALUE",
       "/animations/0/channels/0/target/path"},
      {"channel past the samplers", "/animations/0/channels/0/sampler", 1, "GLTF_INDEX",
       "/animations/0/channels/0/sampler"},
      {"unknown alpha mode", "/materials/0/alphaMode", "CLIP", "GLTF_VALUE",
       "/materials/0/alphaMode"},
      {"texture past the textures", "/materials/0/normalTexture/index", 3, "GLTF_INDEX",
       "/materials/0/normalTexture/index"},
      {"a name that is not a string", "/meshes/0/name", 7, "GLTF_TYPE", "/meshes/0/name"},
      {"a primitive mode past 6", "/meshes/0/primitives/0/mode", 7, "GLTF_VALUE",
       "/meshes/0/primitives/0/mode"},
      {"an element that is not an object", "/skins/0", 5, "GLTF_TYPE", "/skins/0"},
      {"a top-level member that is not an array", "/animations", Json::object(), "GLTF_TYPE",
       "/animations"},
      {"an accessor type", "/accessors/2/type", "VEC5", "GLTF_ACCESSOR", "/accessors/2/type"},
      {"a bufferView past its buffers", "/bufferViews/1/buffer", 1, "GLTF_BUFFER_VIEW",
       "/bufferViews/1/buffer"},
      {"a buffer without byteLength", "/buffers/0/byteLength", nullptr, "GLTF_BUFFER",
       "/buffers/0/byteLength"},
      {"a target name that is not a string", "/meshes/0/extras/targetNames/0", 1, "GLTF_TYPE",
       "/meshes/0/extras/targetNames/0"},
      {"the default scene past the scenes", "/scene", 1, "GLTF_INDEX", "/scene"},
  };
  for (const Broken& c : cases) {
    Json j = character();
    const Json::json_pointer ptr(c.pointer_path);
    if (c.value.is_null())
      j.at(ptr.parent_pointer()).erase(ptr.back());
    else
      j[ptr] = c.value;
    auto r = read(Json::parse(j.dump()));  // numbers typed as a file's are
    ASSERT_FALSE(r) << c.what;
    EXPECT_EQ(r.error().code, c.code) << c.what << ": " << r.error().to_string();
    EXPECT_EQ(r.error().location.pointer, c.at) << c.what << ": " << r.error().to_string();
    EXPECT_FALSE(r.error().message.empty());
  }
}

TEST(GltfAsset, DocumentsCarryTheirAsset) {
  Json j = character();
  std::vector<float> values(12, 0.5F);
  const auto bin = f32_bytes(values);
  auto doc = GltfDocument::load(testkit::build_glb(j.dump(), bin));
  ASSERT_TRUE(doc) << doc.error().to_string();
  EXPECT_EQ(doc->asset().meshes[0].name, "face");
  // An accessor declaration is the asset's.
  auto info = doc->accessor(3);
  ASSERT_TRUE(info);
  EXPECT_EQ(info->byte_offset, 4u);
  j["nodes"][0]["children"] = {1, 1};
  auto broken = GltfDocument::load(testkit::build_glb(j.dump(), bin));
  ASSERT_FALSE(broken);
  EXPECT_EQ(broken.error().code, "GLTF_VALUE");
}

TEST(GltfAsset, ReadsTheVrmExtensions) {
  Json j = character();
  j["extensions"]["VRM"] = Json::parse(R"({
    "specVersion": "0.0", "exporterVersion": "UniVRM-0.99",
    "meta": {"title": "Hand", "author": "A. Maker", "version": "3"},
    "humanoid": {"humanBones": [{"bone": "hips", "node": 0}, {"bone": "head", "node": 2}]},
    "materialProperties": [
      {"name": "body", "shader": "VRM/MToon", "renderQueue": 2000,
       "tagMap": {"RenderType": "Opaque"}},
      {"name": "hair", "shader": "VRM/MToon", "renderQueue": 3001},
      7
    ]})");
  auto r = read(Json::parse(j.dump()));
  ASSERT_TRUE(r) << r.error().to_string();
  ASSERT_TRUE(r->vrm);
  const GltfVrm& v = *r->vrm;
  EXPECT_EQ(v.version, "0.x");
  EXPECT_FALSE(v.both);
  EXPECT_EQ(v.exporter_version, "UniVRM-0.99");
  EXPECT_EQ(v.title, "Hand");
  EXPECT_EQ(v.author, "A. Maker");
  ASSERT_EQ(v.human_bones.size(), 2u);
  EXPECT_EQ(v.human_bones[1].bone, "head");
  EXPECT_EQ(v.human_bones[1].node, 2u);
  ASSERT_EQ(v.materials.size(), 2u);  // the entry that is not an object says nothing
  EXPECT_FALSE(v.materials[0].transparent());
  EXPECT_TRUE(v.materials[1].transparent());  // queue 3001

  j["extensions"]["VRMC_vrm"] = Json::parse(R"({
    "specVersion": "1.0", "meta": {"name": "Hand 1", "authors": ["A", "B"]},
    "humanoid": {"humanBones": {"hips": {"node": 1}}}})");
  r = read(Json::parse(j.dump()));
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(r->vrm->version, "1.0");
  EXPECT_TRUE(r->vrm->both);
  EXPECT_EQ(r->vrm->author, "A, B");
  ASSERT_EQ(r->vrm->human_bones.size(), 1u);
  EXPECT_EQ(r->vrm->human_bones[0].node, 1u);

  j["extensions"]["VRMC_vrm"]["humanoid"]["humanBones"]["hips"]["node"] = 9;
  r = read(Json::parse(j.dump()));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "GLTF_INDEX");
  EXPECT_EQ(r.error().location.pointer, "/extensions/VRMC_vrm/humanoid/humanBones/hips/node");
  j["extensions"].erase("VRMC_vrm");
  j["extensions"]["VRM"]["humanoid"]["humanBones"] = Json::object();
  r = read(Json::parse(j.dump()));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "VRM_TYPE");
  EXPECT_EQ(r.error().location.pointer, "/extensions/VRM/humanoid/humanBones");
}

// VRM expressions: 0.x blend shape groups (preset names in their 1.0 form,
// weights 0–100 scaled) and 1.0 expressions (node binds, overrides); a bind
// past the mesh's targets is refused at its member.
TEST(GltfAsset, ReadsVrmExpressions) {
  Json j = character();  // mesh 0 (on node 1) has one morph target
  j["extensions"]["VRM"] = Json::parse(R"({
    "blendShapeMaster": {"blendShapeGroups": [
      {"name": "A", "presetName": "a", "binds": [{"mesh": 0, "index": 0, "weight": 50}]},
      {"name": "Blink_L", "presetName": "blink_l", "isBinary": true, "binds": []},
      {"name": "Wink2", "presetName": "unknown"}]}})");
  auto r = read(Json::parse(j.dump()));
  ASSERT_TRUE(r) << r.error().to_string();
  const auto& e = r->vrm->expressions;
  ASSERT_EQ(e.size(), 3u);
  EXPECT_EQ(e[0].name, "aa");
  EXPECT_TRUE(e[0].preset);
  ASSERT_EQ(e[0].binds.size(), 1u);
  EXPECT_EQ(e[0].binds[0].mesh, 0u);
  EXPECT_EQ(e[0].binds[0].target, 0u);
  EXPECT_DOUBLE_EQ(e[0].binds[0].weight, 0.5);
  EXPECT_EQ(e[1].name, "blinkLeft");
  EXPECT_TRUE(e[1].is_binary);
  EXPECT_EQ(e[2].name, "Wink2");
  EXPECT_FALSE(e[2].preset);

  j["extensions"]["VRMC_vrm"] = Json::parse(R"({"expressions": {
    "preset": {"blink": {"morphTargetBinds": [{"node": 1, "index": 0, "weight": 0.75}]},
               "happy": {"overrideBlink": "block", "overrideMouth": "blend"}},
    "custom": {"wink": {"isBinary": true}}}})");
  r = read(Json::parse(j.dump()));
  ASSERT_TRUE(r) << r.error().to_string();
  const auto& e1 = r->vrm->expressions;
  ASSERT_EQ(e1.size(), 3u);
  EXPECT_EQ(e1[0].name, "blink");
  ASSERT_EQ(e1[0].binds.size(), 1u);
  EXPECT_EQ(e1[0].binds[0].mesh, 0u);  // node 1's mesh
  EXPECT_DOUBLE_EQ(e1[0].binds[0].weight, 0.75);
  EXPECT_EQ(e1[1].override_blink, VrmOverride::kBlock);
  EXPECT_EQ(e1[1].override_mouth, VrmOverride::kBlend);
  EXPECT_EQ(e1[1].override_look_at, VrmOverride::kNone);
  EXPECT_EQ(e1[2].name, "wink");
  EXPECT_FALSE(e1[2].preset);

  j["extensions"]["VRMC_vrm"]["expressions"]["preset"]["blink"]["morphTargetBinds"][0]["index"] = 1;
  r = read(Json::parse(j.dump()));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "GLTF_INDEX");
  EXPECT_EQ(r.error().location.pointer,
            "/extensions/VRMC_vrm/expressions/preset/blink/morphTargetBinds/0/index");
  j["extensions"]["VRMC_vrm"]["expressions"]["preset"]["blink"]["morphTargetBinds"][0] = {
      {"node", 0}, {"index", 0}};
  r = read(Json::parse(j.dump()));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "VRM_TYPE");  // node 0 has no mesh
}

// MToon: VRM 1.0's VRMC_materials_mtoon with the schema's defaults for what
// is absent, and VRM 0.x MToon properties as written.
TEST(GltfAsset, ReadsMToonData) {
  Json j = character();
  j["materials"][0]["extensions"]["VRMC_materials_mtoon"] = Json::parse(R"({
    "specVersion": "1.0", "transparentWithZWrite": true, "renderQueueOffsetNumber": -3,
    "shadeColorFactor": [0.5, 0.25, 0.125], "shadeMultiplyTexture": {"index": 0},
    "shadingShiftFactor": -0.2, "shadingShiftTexture": {"index": 0, "scale": 2},
    "parametricRimColorFactor": [1, 0, 0], "parametricRimFresnelPowerFactor": 5,
    "outlineWidthMode": "screenCoordinates", "outlineWidthFactor": 0.01,
    "uvAnimationScrollXSpeedFactor": 0.5})");
  auto r = read(Json::parse(j.dump()));
  ASSERT_TRUE(r) << r.error().to_string();
  ASSERT_TRUE(r->materials[0].mtoon);
  const GltfMToon& t = *r->materials[0].mtoon;
  EXPECT_EQ(t.spec_version, "1.0");
  EXPECT_TRUE(t.transparent_with_z_write);
  EXPECT_EQ(t.render_queue_offset, -3);
  EXPECT_EQ(t.shade_color, (std::array<double, 3>{0.5, 0.25, 0.125}));
  ASSERT_TRUE(t.shade_multiply_texture);
  EXPECT_DOUBLE_EQ(t.shading_shift, -0.2);
  ASSERT_TRUE(t.shading_shift_texture);
  EXPECT_DOUBLE_EQ(t.shading_shift_texture->scale, 2.0);
  EXPECT_DOUBLE_EQ(t.shading_toony, 0.9);  // the schema's default
  EXPECT_DOUBLE_EQ(t.gi_equalization, 0.9);
  EXPECT_DOUBLE_EQ(t.rim_fresnel_power, 5.0);
  EXPECT_EQ(t.outline_width_mode, MToonOutlineWidthMode::kScreenCoordinates);
  EXPECT_DOUBLE_EQ(t.outline_lighting_mix, 1.0);
  EXPECT_DOUBLE_EQ(t.uv_animation_scroll_x, 0.5);

  Json bad = j;
  bad["materials"][0]["extensions"]["VRMC_materials_mtoon"]["outlineWidthMode"] = "thick";
  r = read(Json::parse(bad.dump()));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "VRM_TYPE");
  EXPECT_EQ(r.error().location.pointer,
            "/materials/0/extensions/VRMC_materials_mtoon/outlineWidthMode");
  bad = j;
  bad["materials"][0]["extensions"]["VRMC_materials_mtoon"]["matcapTexture"] = {{"index", 4}};
  r = read(Json::parse(bad.dump()));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "GLTF_INDEX");
  EXPECT_EQ(r.error().location.pointer,
            "/materials/0/extensions/VRMC_materials_mtoon/matcapTexture/index");

  j["extensions"]["VRM"] = Json::parse(R"({"materialProperties": [{"name": "body",
    "shader": "VRM/MToon", "floatProperties": {"_ShadeToony": 0.8, "_Bad": "x"},
    "vectorProperties": {"_ShadeColor": [0.8, 0.7, 0.9, 1], "_Short": [1, 2]},
    "textureProperties": {"_MainTex": 0, "_Missing": 9},
    "keywordMap": {"MTOON_OUTLINE_WIDTH_SCREEN": true}}]})");
  r = read(Json::parse(j.dump()));
  ASSERT_TRUE(r) << r.error().to_string();
  const VrmMaterialProperties& m0 = r->vrm->materials[0];
  EXPECT_EQ(m0.float_properties, (std::map<std::string, double>{{"_ShadeToony", 0.8}}));
  ASSERT_EQ(m0.vector_properties.size(), 1u);
  EXPECT_EQ(m0.vector_properties.at("_ShadeColor"), (std::array<double, 4>{0.8, 0.7, 0.9, 1}));
  EXPECT_EQ(m0.texture_properties, (std::map<std::string, std::size_t>{{"_MainTex", 0}}));
  EXPECT_TRUE(m0.keywords.at("MTOON_OUTLINE_WIDTH_SCREEN"));
}

// --- GltfEditor ---------------------------------------------------------------

// The character without its image (a file tinygltf would go looking for).
Json plain() {
  Json j = character();
  for (const char* key : {"images", "textures", "samplers", "materials", "extensionsUsed"})
    j.erase(key);
  j["meshes"][0]["primitives"][0].erase("material");
  return j;
}

tinygltf::Model read_back(const std::vector<std::uint8_t>& glb) {
  tinygltf::TinyGLTF loader;
  tinygltf::Model model;
  std::string err, warn;
  EXPECT_TRUE(loader.LoadBinaryFromMemory(&model, &err, &warn, glb.data(),
                                          static_cast<unsigned>(glb.size())))
      << err;
  return model;
}

template <typename T>
std::vector<T> values_of(const tinygltf::Model& m, int accessor) {
  const tinygltf::Accessor& a = m.accessors[static_cast<std::size_t>(accessor)];
  const tinygltf::BufferView& v = m.bufferViews[static_cast<std::size_t>(a.bufferView)];
  const std::size_t n = a.count * static_cast<std::size_t>(tinygltf::GetNumComponentsInType(
                                      static_cast<std::uint32_t>(a.type)));
  std::vector<T> out(n);
  std::memcpy(out.data(), m.buffers[0].data.data() + v.byteOffset + a.byteOffset, n * sizeof(T));
  return out;
}

TEST(GltfEditor, AppendsDataAndRepointsElements) {
  Json j = plain();
  const std::vector<float> base = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0.5F};
  const auto bin = f32_bytes({0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 1, 2});  // 48 bytes
  auto doc = GltfDocument::load(testkit::build_glb(j.dump(), bin));
  ASSERT_TRUE(doc) << doc.error().to_string();
  auto edit = GltfEditor::begin(*doc, codes::GLTF_BUFFER);
  ASSERT_TRUE(edit) << edit.error().to_string();
  EXPECT_EQ(edit->buffer_size(), 48u);
  const std::vector<float> lift = {0, 0, 1, 0, 0, 2, 0, 0, 3};
  const std::size_t t = edit->append_floats(lift, 3, true);
  EXPECT_EQ(t, 4u);  // after the four accessors of the file
  edit->add_target(0, 0, GltfAttributes{{{"POSITION", t}}});
  edit->set_target_names(0, {"smile", "lift"});
  edit->set_mesh_weights(0, {0.5, 0.0});
  edit->set_node_weights(1, {0.25, 1.0});
  const std::vector<std::uint32_t> idx = {0, 1, 2};
  edit->set_indices(0, 0, edit->append_uints(idx, 1, GltfViewUse::kIndices));
  const std::vector<std::uint32_t> big = {0, 70000, 2};
  const std::size_t big_acc = edit->append_uints(big, 1, GltfViewUse::kOther);
  const std::vector<float> key = {1.0F};
  edit->set_sampler_output(0, 0, edit->append_floats(key, 1, false, GltfViewUse::kOther));
  auto glb = edit->finish_glb();
  ASSERT_TRUE(glb) << glb.error().to_string();

  // Read back by tinygltf.
  const tinygltf::Model m = read_back(*glb);
  const tinygltf::Primitive& p = m.meshes[0].primitives[0];
  ASSERT_EQ(p.targets.size(), 2u);
  const int lift_acc = p.targets[1].at("POSITION");
  EXPECT_EQ(values_of<float>(m, lift_acc), lift);
  EXPECT_EQ(m.accessors[static_cast<std::size_t>(lift_acc)].maxValues,
            (std::vector<double>{0, 0, 3}));
  EXPECT_EQ(m.accessors[static_cast<std::size_t>(lift_acc)].minValues,
            (std::vector<double>{0, 0, 1}));
  EXPECT_EQ(m.bufferViews[static_cast<std::size_t>(
                              m.accessors[static_cast<std::size_t>(lift_acc)].bufferView)]
                .target,
            34962);
  // Indices below 65535 are UNSIGNED_SHORT on an ELEMENT_ARRAY_BUFFER view.
  const tinygltf::Accessor& ia = m.accessors[static_cast<std::size_t>(p.indices)];
  EXPECT_EQ(ia.componentType, 5123);
  EXPECT_EQ(m.bufferViews[static_cast<std::size_t>(ia.bufferView)].target, 34963);
  EXPECT_EQ(values_of<std::uint16_t>(m, p.indices), (std::vector<std::uint16_t>{0, 1, 2}));
  // 70000 needs UNSIGNED_INT; an "other" view has no target.
  const tinygltf::Accessor& ba = m.accessors[big_acc];
  EXPECT_EQ(ba.componentType, 5125);
  EXPECT_EQ(m.bufferViews[static_cast<std::size_t>(ba.bufferView)].target, 0);
  EXPECT_EQ(values_of<std::uint32_t>(m, static_cast<int>(big_acc)), big);
  EXPECT_EQ(m.meshes[0].weights, (std::vector<double>{0.5, 0.0}));
  EXPECT_EQ(m.nodes[1].weights, (std::vector<double>{0.25, 1.0}));
  EXPECT_EQ(values_of<float>(m, m.animations[0].samplers[0].output), key);
  // Every bufferView starts on a multiple of 4; the old data is kept.
  for (const tinygltf::BufferView& v : m.bufferViews) EXPECT_EQ(v.byteOffset % 4, 0u);
  EXPECT_EQ(values_of<float>(m, 0), std::vector<float>(base.begin(), base.begin() + 9));
  // The names, and extras the editor does not own, as a JSON reader sees them.
  auto again = GltfDocument::load(*glb);
  ASSERT_TRUE(again) << again.error().to_string();
  EXPECT_EQ(again->asset().meshes[0].target_names, (std::vector<std::string>{"smile", "lift"}));
  EXPECT_EQ(again->json()["meshes"][0]["extras"]["other"], 1);
}

TEST(GltfEditor, WritesEmbeddedGltfAndRefusesSeveralBuffers) {
  Json j = plain();
  j["buffers"][0]["uri"] = testkit::gltf_data_uri(f32_bytes({0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 1, 2}));
  const std::string text = j.dump();
  auto doc = GltfDocument::load(core::as_bytes(text));
  ASSERT_TRUE(doc) << doc.error().to_string();
  auto edit = GltfEditor::begin(*doc, codes::GLTF_BUFFER);
  ASSERT_TRUE(edit);
  const std::vector<float> v = {2, 3};
  const std::size_t a = edit->append_floats(v, 2, false);
  const std::string out = edit->finish_gltf_embedded();
  tinygltf::TinyGLTF loader;
  tinygltf::Model m;
  std::string err, warn;
  ASSERT_TRUE(loader.LoadASCIIFromString(&m, &err, &warn, out.data(),
                                         static_cast<unsigned>(out.size()), ""))
      << err;
  EXPECT_EQ(m.accessors[a].type, TINYGLTF_TYPE_VEC2);
  EXPECT_EQ(values_of<float>(m, static_cast<int>(a)), v);

  j["buffers"].push_back(j["buffers"][0]);
  const std::string two = j.dump();
  auto doc2 = GltfDocument::load(core::as_bytes(two));
  ASSERT_TRUE(doc2);
  auto refused = GltfEditor::begin(*doc2, codes::GLTF_BUFFER);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, "GLTF_BUFFER");
  EXPECT_EQ(refused.error().location.pointer, "/buffers");
  // Kept when asked: the second buffer is written back as it was.
  auto kept = GltfEditor::begin(*doc2, codes::GLTF_BUFFER, GltfEditor::OtherBuffers::kKeep);
  ASSERT_TRUE(kept) << kept.error().to_string();
  kept->append_floats(v, 2, false);
  auto glb = kept->finish_glb();
  ASSERT_TRUE(glb);
  auto back = GltfDocument::load(*glb);
  ASSERT_TRUE(back) << back.error().to_string();
  ASSERT_EQ(back->asset().buffers.size(), 2u);
  EXPECT_FALSE(back->asset().buffers[0].uri);
  EXPECT_EQ(back->asset().buffers[1].uri, j["buffers"][1]["uri"].get<std::string>());
  EXPECT_EQ(back->asset().buffers[0].byte_length, 56u);  // 48 + 8
}

}  // namespace
}  // namespace charkit::scene
