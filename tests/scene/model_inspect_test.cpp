// scene::model_details on the sample models (facts cross-checked against
// inspect_model's counts and the files' own JSON) and on an FBX written by
// Assimp's exporter from RiggedSimple.glb.
#include "charkit/scene/model_inspect.h"

#include <gtest/gtest.h>

#include <assimp/scene.h>
#include <assimp/Exporter.hpp>
#include <assimp/Importer.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "charkit/core/json.h"
#include "charkit/core/mapped_file.h"

#include "test_data.h"

namespace charkit::scene {
namespace {

using core::Json;
using testkit::kModels;

struct Inspected {
  ModelInfo info;
  Json details;
};

Inspected inspect_file(const std::string& name) {
  auto file = core::MappedFile::open(kModels + name);
  EXPECT_TRUE(file);
  auto model = inspect_and_load_model(file->bytes());
  EXPECT_TRUE(model) << model.error().to_string();
  auto d = model_details(file->bytes(), *model);
  EXPECT_TRUE(d) << d.error().to_string();
  return {model->info, d ? *d : Json()};
}

std::uint64_t sum(const Json& arr, const char* key) {
  std::uint64_t s = 0;
  for (const Json& e : arr) s += e[key].get<std::uint64_t>();
  return s;
}

TEST(ModelDetails, AgreesWithTheSurveyOnEverySampleModel) {
  for (const char* name : {"CesiumMan.glb", "RiggedSimple.glb", "RiggedFigure.glb",
                           "Godette_vrm_v4.vrm", "debug_robot.vrm", "sphere.vrm"}) {
    SCOPED_TRACE(name);
    const auto [info, d] = inspect_file(name);
    ASSERT_TRUE(d.is_object());
    EXPECT_EQ(d["nodes"].size(), info.nodes);
    EXPECT_EQ(d["meshes"].size(), info.meshes);
    EXPECT_EQ(sum(d["meshes"], "vertices"), info.vertices);
    EXPECT_EQ(sum(d["meshes"], "triangles"), info.triangles);
    std::size_t targets = 0;
    for (const Json& m : d["meshes"]) targets += m["morphTargets"].size();
    EXPECT_EQ(targets, info.morph_targets);
    EXPECT_EQ(d["skins"].size(), info.skins);
    EXPECT_EQ(d["materials"].size(), info.materials);
    EXPECT_EQ(d["textures"].size(), info.textures);
    EXPECT_EQ(d["animations"].size(), info.animations);
    for (const Json& m : d["meshes"]) {
      ASSERT_TRUE(m["bounds"].is_object()) << m.dump();
      for (std::size_t c = 0; c < 3; ++c)
        EXPECT_LE(m["bounds"]["min"][c].get<double>(), m["bounds"]["max"][c].get<double>());
    }
    // Every node's parent lists it as a child.
    for (const Json& n : d["nodes"])
      if (!n["parent"].is_null()) {
        const Json& kids = d["nodes"][n["parent"].get<std::size_t>()]["children"];
        EXPECT_NE(std::find(kids.begin(), kids.end(), n["index"]), kids.end());
      }
    if (info.vrm) {
      ASSERT_TRUE(d["humanoid"].is_array());
      EXPECT_EQ(d["humanoid"].size(), info.vrm->humanoid_bones);
      for (const Json& b : d["humanoid"]) {
        ASSERT_TRUE(b["node"].is_number_unsigned()) << b.dump();
        const Json& node = d["nodes"][b["node"].get<std::size_t>()];
        if (!node["name"].get<std::string>().empty()) {
          EXPECT_EQ(b["nodeName"], node["name"]);
        }
      }
    } else {
      EXPECT_TRUE(d["humanoid"].is_null());
    }
    const std::string text = model_details_text(d);
    EXPECT_NE(text.find("node tree (" + std::to_string(info.nodes) + " nodes)"), std::string::npos);
  }
}

TEST(ModelDetails, CesiumManSkinAndAnimation) {
  const auto [info, d] = inspect_file("CesiumMan.glb");
  ASSERT_EQ(d["skins"].size(), 1u);
  EXPECT_EQ(d["skins"][0]["joints"].size(), 19u);
  ASSERT_EQ(d["animations"].size(), 1u);
  // 57 channels (19 joints × T, R, S); the last key at about 2 s.
  EXPECT_EQ(d["animations"][0]["channels"], 57);
  EXPECT_GT(d["animations"][0]["duration"].get<double>(), 1.0);
  EXPECT_LT(d["animations"][0]["duration"].get<double>(), 3.0);
  const std::string text = model_details_text(d);
  EXPECT_NE(text.find("19 joints:"), std::string::npos) << text;
  EXPECT_NE(text.find("57 channels"), std::string::npos) << text;
}

TEST(ModelDetails, VrmHumanoidMapInText) {
  const auto [info, d] = inspect_file("sphere.vrm");
  const std::string text = model_details_text(d);
  EXPECT_NE(text.find("humanoid (22 bones):"), std::string::npos) << text;
  EXPECT_NE(text.find("hips -> "), std::string::npos) << text;
}

TEST(ModelDetails, FbxThroughAssimp) {
  Assimp::Importer importer;
  const aiScene* s = importer.ReadFile(kModels + "RiggedSimple.glb", 0);
  ASSERT_NE(s, nullptr);
  Assimp::Exporter exporter;
  const aiExportDataBlob* blob = exporter.ExportToBlob(s, "fbxa");
  ASSERT_NE(blob, nullptr) << exporter.GetErrorString();
  const core::Bytes fbx(static_cast<const std::uint8_t*>(blob->data), blob->size);
  auto model = inspect_and_load_model(fbx);
  ASSERT_TRUE(model) << model.error().to_string();
  EXPECT_FALSE(model->document);
  auto d = model_details(fbx, *model);
  ASSERT_TRUE(d) << d.error().to_string();
  // RiggedSimple: one mesh of 188 triangles skinned to 2 joints.
  ASSERT_EQ((*d)["meshes"].size(), 1u);
  EXPECT_EQ((*d)["meshes"][0]["triangles"], 188);
  ASSERT_EQ((*d)["skins"].size(), 1u);
  EXPECT_EQ((*d)["skins"][0]["joints"].size(), 2u);
  EXPECT_TRUE((*d)["meshes"][0]["bounds"].is_object());
  EXPECT_EQ((*d)["nodes"].size(), model->info.nodes);
  EXPECT_TRUE((*d)["humanoid"].is_null());
}

}  // namespace
}  // namespace charkit::scene
