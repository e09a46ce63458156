// `charkit model inspect`: text and JSON output on the files in
// tests/data/models (facts from their JSON chunks, read independently with
// Python), exit codes, and the error line for a broken GLB written by hand.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "charkit/core/json.h"
#include "cli_support.h"

namespace charkit::clitest {
namespace {

const std::string kModels = std::string(CHARKIT_TEST_DATA) + "/models/";

using ModelCliFiles = ScratchDir;

TEST(ModelCli, JsonForVrm0) {
  auto r = run_charkit("model inspect " + quote(kModels + "Godette_vrm_v4.vrm") + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["valid"], true);
  EXPECT_EQ(j["format"], "vrm");
  EXPECT_EQ(j["container"], "glb");
  EXPECT_EQ(j["gltfVersion"], "2.0");
  EXPECT_EQ(j["vrm"]["version"], "0.x");
  EXPECT_EQ(j["vrm"]["title"], "Low-Poly Godette");
  EXPECT_EQ(j["vrm"]["humanoidBones"], 45);
  EXPECT_EQ(j["vrm"]["missingRequiredBones"].size(), 0u);
  EXPECT_EQ(j["skinned"], true);
  EXPECT_EQ(j["joints"], 68);
  EXPECT_EQ(j["vertices"], 8067);
  EXPECT_EQ(j["morphTargets"], 15);
  EXPECT_TRUE(j["warnings"].is_array());
  EXPECT_TRUE(j["fbxVersion"].is_null());
}

TEST(ModelCli, JsonForVrm1AndPlainGltf) {
  auto r = run_charkit("model inspect " + quote(kModels + "debug_robot.vrm") + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["vrm"]["version"], "1.0");
  EXPECT_EQ(j["vrm"]["humanoidBones"], 53);
  EXPECT_EQ(j["skinned"], false);
  auto g = run_charkit("model inspect " + quote(kModels + "CesiumMan.glb") + " --json");
  ASSERT_EQ(g.exit_code, 0);
  auto k = nlohmann::json::parse(g.out);
  EXPECT_EQ(k["format"], "gltf");
  EXPECT_TRUE(k["vrm"].is_null());
  EXPECT_EQ(k["generator"], "COLLADA2GLTF");
  EXPECT_EQ(k["joints"], 19);
  EXPECT_EQ(k["triangles"], 4672);
}

TEST(ModelCli, TextReport) {
  auto r = run_charkit("model inspect " + quote(kModels + "sphere.vrm"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("VRM 0.x (GLB)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("FMS_Cat"), std::string::npos);
  EXPECT_NE(r.out.find("22 bones, all required bones present"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1984 vertices"), std::string::npos);
}

TEST(ModelCli, DetailsForVrm0Vrm1AndGlb) {
  // VRM 0.x: the humanoid map (45 bones, as the summary counts them), each
  // bone on a node of the node list.
  auto r = run_charkit("model inspect " + quote(kModels + "Godette_vrm_v4.vrm") + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  const auto& d = j["details"];
  ASSERT_TRUE(d.is_object()) << r.out;
  ASSERT_EQ(d["humanoid"].size(), 45u);
  bool hips = false;
  for (const auto& b : d["humanoid"]) {
    ASSERT_LT(b["node"].get<std::size_t>(), d["nodes"].size());
    EXPECT_EQ(b["nodeName"], d["nodes"][b["node"].get<std::size_t>()]["name"]);
    hips = hips || b["bone"] == "hips";
  }
  EXPECT_TRUE(hips);
  std::size_t targets = 0;
  for (const auto& m : d["meshes"]) targets += m["morphTargets"].size();
  EXPECT_EQ(targets, 15u);
  EXPECT_EQ(d["skins"][0]["joints"].size(), 68u);
  // VRM 1.0: humanBones is an object keyed by bone name.
  auto v1 = run_charkit("model inspect " + quote(kModels + "debug_robot.vrm") + " --json");
  ASSERT_EQ(v1.exit_code, 0);
  EXPECT_EQ(nlohmann::json::parse(v1.out)["details"]["humanoid"].size(), 53u);
  // GLB: skins with joint names, animations with duration and channels.
  auto g = run_charkit("model inspect " + quote(kModels + "CesiumMan.glb") + " --json");
  ASSERT_EQ(g.exit_code, 0);
  auto k = nlohmann::json::parse(g.out)["details"];
  EXPECT_EQ(k["skins"][0]["joints"].size(), 19u);
  EXPECT_EQ(k["animations"][0]["channels"], 57);
  EXPECT_GT(k["animations"][0]["duration"].get<double>(), 1.0);
  EXPECT_TRUE(k["humanoid"].is_null());
  std::uint64_t triangles = 0;
  for (const auto& m : k["meshes"]) triangles += m["triangles"].get<std::uint64_t>();
  EXPECT_EQ(triangles, 4672u);
  // Text: the sections follow the summary.
  auto t = run_charkit("model inspect " + quote(kModels + "CesiumMan.glb"));
  ASSERT_EQ(t.exit_code, 0);
  for (const char* want : {"node tree (", "meshes (1):", "19 joints:", "57 channels", "bounds ["})
    EXPECT_NE(t.out.find(want), std::string::npos) << want << "\n" << t.out;
  auto s = run_charkit("model inspect " + quote(kModels + "sphere.vrm"));
  EXPECT_NE(s.out.find("humanoid (22 bones):"), std::string::npos) << s.out;
}

TEST_F(ModelCliFiles, TruncatedGlbExitsOneWithLocation) {
  // "glTF", version 2, declared length 100, but only 12 bytes.
  std::vector<std::uint8_t> b{'g', 'l', 'T', 'F', 2, 0, 0, 0, 100, 0, 0, 0};
  auto path = write("broken.glb", b);
  auto r = run_charkit("model inspect " + quote(path), true);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find(path.string() + ": byte 8: error GLB_TRUNCATED: "), std::string::npos)
      << r.out;
  auto j = run_charkit("model inspect " + quote(path) + " --json");
  EXPECT_EQ(j.exit_code, 1);
  auto k = nlohmann::json::parse(j.out);
  EXPECT_EQ(k["valid"], false);
  EXPECT_EQ(k["error"]["code"], "GLB_TRUNCATED");
  EXPECT_EQ(k["error"]["location"]["offset"], 8);
}

TEST_F(ModelCliFiles, VrmNameWithoutVrmExtensionWarns) {
  std::ifstream in(kModels + "RiggedSimple.glb", std::ios::binary);
  std::vector<std::uint8_t> b((std::istreambuf_iterator<char>(in)),
                              std::istreambuf_iterator<char>());
  auto path = write("avatar.vrm", b);
  auto r = run_charkit("model inspect " + quote(path) + " --json");
  ASSERT_EQ(r.exit_code, 0);
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["format"], "gltf");
  ASSERT_FALSE(j["warnings"].empty());
  EXPECT_EQ(j["warnings"][0]["code"], "VRM_EXTENSION_MISSING");
}

TEST_F(ModelCliFiles, UnknownAndMissingFiles) {
  auto path = write("notes.glb", {'h', 'e', 'l', 'l', 'o'});
  EXPECT_EQ(run_charkit("model inspect " + quote(path)).exit_code, 1);
  EXPECT_EQ(run_charkit("model inspect " + quote(dir_ / "absent.glb")).exit_code, 2);
  EXPECT_EQ(run_charkit("model inspect").exit_code, 2);
}

TEST(ModelCli, HelpTeaches) {
  auto r = run_charkit("model inspect --help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("VRMC_vrm"), std::string::npos);
  EXPECT_NE(r.out.find("docs/model.md"), std::string::npos);
}

}  // namespace
}  // namespace charkit::clitest
