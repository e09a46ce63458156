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
