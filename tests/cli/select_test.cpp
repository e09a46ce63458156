// `charkit bem select`: the real program on packages built by hand; the
// expected plans are worked out from the manifests below and the spec.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <sstream>

#include "charkit/core/json.h"
#include "cli_support.h"
#include "package_builder.h"

namespace charkit {
namespace {

using clitest::quote;
using clitest::run_charkit;
using core::Json;
using testkit::ByteVec;

// §10 delta payload: UInt32 J, J bytes of JSON, 16-byte records.
ByteVec delta_payload(const std::vector<std::pair<std::uint32_t, std::vector<float>>>& recs) {
  const std::string j =
      "{\"count\":" + std::to_string(recs.size()) + ",\"encoding\":\"sparse-position-f32\"}";
  ByteVec b = testkit::u32_bytes({static_cast<std::uint32_t>(j.size())});
  b.insert(b.end(), j.begin(), j.end());
  for (const auto& [v, d] : recs) {
    ByteVec vb = testkit::u32_bytes({v});
    ByteVec db = testkit::f32_bytes(d);
    b.insert(b.end(), vb.begin(), vb.end());
    b.insert(b.end(), db.begin(), db.end());
  }
  return b;
}

// The 1.3 baseline (group outfit {a,b}: a replaces component 0 with mesh 0,
// b keeps it) plus a group colour {red, blue} whose blue adds draw 1 (index
// payload 5), a group part only available with outfit b, and parameter body
// with a channel on mesh 0 (neutral 0, frame 1000 = payload 6).
testkit::TestPackage select_package() {
  testkit::TestPackage p = testkit::make_valid_package(3);
  Json& m = p.manifest;
  m["required_capabilities"].push_back("body-parameters");
  m["required_capabilities"].push_back("mesh-position-deltas");
  m["option_groups"].push_back(Json::parse(
      R"({"id": "colour", "name": "Colour", "default": "red", "choices": [{"id": "red", "name": "Red"}, {"id": "blue", "name": "Blue"}]})"));
  m["option_groups"].push_back(Json::parse(
      R"({"id": "part", "name": "Part", "default": "on", "available_when": {"eq": ["outfit", "b"]}, "choices": [{"id": "on", "name": "On"}, {"id": "off", "name": "Off"}]})"));
  Json d1 = m["meshes"][0]["draws"][0];
  d1["when"] = Json::parse(R"({"eq": ["colour", "blue"]})");
  d1["indices"] = 5;
  d1["textures"] = Json::array();
  m["meshes"][0]["draws"].push_back(d1);
  m["parameters"] = Json::parse(
      R"([{"id": "body", "name": "Body", "min": 0, "max": 1000, "neutral": 0, "default": 0, "step": 1}])");
  m["mesh_deformations"] = Json::parse(
      R"([{"mesh": 0, "parameter": "body", "frames": [{"value": 0, "neutral": true},
          {"value": 1000, "payload": 6, "count": 1, "encoding": "sparse-position-f32"}]}])");
  p.payloads.push_back(testkit::u16_bytes({2, 1, 0}));       // 5
  p.payloads.push_back(delta_payload({{1, {0.5f, 0, 0}}}));  // 6
  return p;
}

class SelectCli : public clitest::ScratchDir {
 protected:
  Json select_json(const testkit::TestPackage& p, const std::string& args, int want_exit = 0) {
    auto path = write("p.bem", p.binary());
    auto r = run_charkit("bem select " + quote(path) + " --json " + args);
    EXPECT_EQ(r.exit_code, want_exit) << r.out;
    Json j = Json::parse(r.out, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << r.out;
    return j;
  }
};

TEST_F(SelectCli, Defaults) {
  Json j = select_json(select_package(), "");
  EXPECT_EQ(j["settings"], "outfit:a&colour:red&part:on");
  EXPECT_EQ(j["parametersSettings"], "body:0");
  EXPECT_EQ(j["effective"], Json::parse(R"({"outfit": "a", "colour": "red", "part": null})"));
  ASSERT_EQ(j["components"].size(), 2u);
  EXPECT_EQ(j["components"][0]["target"], 0);
  EXPECT_EQ(j["components"][0]["operation"], "replace");
  EXPECT_EQ(j["components"][0]["mesh"], 0);
  EXPECT_EQ(j["components"][0]["draws"], Json::parse("[0]"));
  EXPECT_EQ(j["components"][1]["operation"], "keep");
  EXPECT_FALSE(j["components"][1].contains("draws"));
  EXPECT_EQ(j["draws"], Json::parse("[[0, 0]]"));
  ASSERT_EQ(j["textures"].size(), 1u);
  EXPECT_EQ(j["textures"][0]["mesh"], 0);
  EXPECT_EQ(j["textures"][0]["draw"], 0);
  EXPECT_EQ(j["textures"][0]["texture"], 0);
  EXPECT_EQ(j["textures"][0]["originalName"], "T_actor_example_body_01_d");
  EXPECT_EQ(j["parameters"], Json::parse(R"({"body": 0})"));
  ASSERT_EQ(j["deformations"].size(), 1u);
  EXPECT_EQ(j["deformations"][0]["parameter"], "body");
  EXPECT_EQ(j["deformations"][0]["frames"].size(), 1u);
  EXPECT_EQ(j["deformations"][0]["frames"][0]["neutral"], true);
  // streams 0–2, index payload 3, texture 4; not draw 1's 5, not the frame's 6.
  EXPECT_EQ(j["payloads"], Json::parse("[0, 1, 2, 3, 4]"));
  EXPECT_EQ(j["warnings"], Json::array());
}

TEST_F(SelectCli, BlueBetweenFrames) {
  Json j = select_json(select_package(), "--options colour:blue --parameters body:500");
  EXPECT_EQ(j["settings"], "outfit:a&colour:blue&part:on");
  EXPECT_EQ(j["draws"], Json::parse("[[0, 0], [0, 1]]"));
  EXPECT_EQ(j["components"][0]["draws"], Json::parse("[0, 1]"));
  EXPECT_EQ(j["meshes"][0]["segments"][1]["start"], 3);
  EXPECT_EQ(j["meshes"][0]["indexCount"], 6);
  EXPECT_EQ(j["parameters"]["body"], 500);
  const Json& frames = j["deformations"][0]["frames"];
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[0]["weight"], 0.5);
  EXPECT_EQ(frames[1]["payload"], 6);
  EXPECT_EQ(frames[1]["weight"], 0.5);
  EXPECT_EQ(j["payloads"], Json::parse("[0, 1, 2, 3, 4, 5, 6]"));
}

TEST_F(SelectCli, NormalisationWarnings) {
  Json j = select_json(select_package(), "--options " + quote("hat:x&outfit:b&part:off") +
                                             " --parameters " + quote("body:2000&legs:5"));
  EXPECT_EQ(j["settings"], "outfit:b&colour:red&part:off");
  EXPECT_EQ(j["parametersSettings"], "body:0");
  EXPECT_EQ(j["effective"]["part"], "off");
  EXPECT_EQ(j["components"][0]["operation"], "keep");
  EXPECT_EQ(j["draws"], Json::array());
  EXPECT_EQ(j["deformations"], Json::array());  // mesh 0 is not selected
  EXPECT_EQ(j["payloads"], Json::array());
  ASSERT_EQ(j["warnings"].size(), 3u);
  EXPECT_EQ(j["warnings"][0]["code"], "BEM_SETTINGS_UNKNOWN_GROUP");
  EXPECT_EQ(j["warnings"][0]["column"], 0);
  EXPECT_EQ(j["warnings"][1]["code"], "BEM_SETTINGS_INVALID_TICK");
  EXPECT_EQ(j["warnings"][1]["string"], "parameters");
  EXPECT_EQ(j["warnings"][2]["code"], "BEM_SETTINGS_UNKNOWN_PARAMETER");
  EXPECT_EQ(j["warnings"][2]["column"], 10);
}

TEST_F(SelectCli, UnavailableGroupKeepsSavedValue) {
  Json j = select_json(select_package(), "--options part:off");
  EXPECT_EQ(j["settings"], "outfit:a&colour:red&part:off");
  EXPECT_TRUE(j["effective"]["part"].is_null());
}

TEST_F(SelectCli, SyntaxErrorExits2WithColumn) {
  Json j = select_json(select_package(), "--options " + quote("outfit:a&&colour:red"), 2);
  EXPECT_EQ(j["error"]["code"], "BEM_SETTINGS_SYNTAX");
  EXPECT_EQ(j["error"]["column"], 9);
  j = select_json(select_package(), "--parameters " + quote("body:x"), 2);
  EXPECT_EQ(j["error"]["column"], 5);
  auto path = write("q.bem", select_package().binary());
  auto r =
      run_charkit("bem select " + quote(path) + " --options " + quote("outfit:a&outfit:b"), true);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("column 9"), std::string::npos) << r.out;
}

TEST_F(SelectCli, InvalidPackageExits1) {
  testkit::TestPackage p = select_package();
  p.payloads[3] = testkit::u16_bytes({0, 1, 3});  // index 3 ≥ vertex_count 3
  Json j = select_json(p, "", 1);
  EXPECT_EQ(j["valid"], false);
  EXPECT_FALSE(j["issues"].empty());
  auto r = run_charkit("bem select " + quote(dir_ / "missing.bem"));
  EXPECT_EQ(r.exit_code, 2);
}

TEST_F(SelectCli, ResourceAndPlatform) {
  testkit::TestPackage p = testkit::make_valid_package_v14();
  Json j = select_json(p, "--resource world --platform android-arm64");
  EXPECT_EQ(j["resource"], "world");
  EXPECT_EQ(j["platform"], "android-arm64");
  EXPECT_EQ(j["components"].size(), 2u);
  j = select_json(p, "--resource hud --platform windows-x64", 2);
  EXPECT_EQ(j["error"]["code"], "BEM_PLAN_RESOURCE");
  j = select_json(p, "--resource world --platform ios", 2);
  EXPECT_EQ(j["error"]["code"], "BEM_PLAN_PLATFORM");
}

TEST_F(SelectCli, TextOutput) {
  auto path = write("t.bem", select_package().binary());
  auto r = run_charkit("bem select " + quote(path) + " --options colour:blue");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("options:    outfit:a&colour:blue&part:on"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("draw 1: start 3, count 3"), std::string::npos) << r.out;
  auto help = run_charkit("bem select --help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("--parameters"), std::string::npos);
}

// The issues of an invalid package are printed one per line (they
// were once joined by a literal "\x0A"), by select and convert alike.
TEST_F(SelectCli, InvalidPackageIssuesOnePerLine) {
  testkit::TestPackage p = select_package();
  p.manifest["name"] = "";
  p.manifest["meshes"][0]["vertex_count"] = 0;
  auto path = write("bad.bem", p.binary());
  for (const std::string& cmd :
       {"bem select " + quote(path), "bem convert " + quote(path) + " " + quote(dir_ / "o.zip")}) {
    SCOPED_TRACE(cmd);
    auto r = run_charkit(cmd, true);
    EXPECT_EQ(r.exit_code, 1) << r.out;
    EXPECT_EQ(r.out.find("\\x0A"), std::string::npos) << r.out;
    std::size_t name_line = std::string::npos;
    std::size_t count_line = std::string::npos;
    std::istringstream lines(r.out);
    std::string line;
    for (std::size_t n = 0; std::getline(lines, line); ++n) {
      if (line.find("BEM_STRING_LENGTH") != std::string::npos && name_line == std::string::npos)
        name_line = n;
      if (line.find("BEM_FIELD_RANGE") != std::string::npos && count_line == std::string::npos)
        count_line = n;
    }
    ASSERT_NE(name_line, std::string::npos) << r.out;
    ASSERT_NE(count_line, std::string::npos) << r.out;
    EXPECT_NE(name_line, count_line) << r.out;
  }
  EXPECT_FALSE(std::filesystem::exists(dir_ / "o.zip"));
}

// `bem export` of a selection that replaces nothing says so and
// writes nothing unless --allow-empty; an output name that is neither .glb
// nor .gltf is refused before any work.
TEST_F(SelectCli, ExportOfAnEmptySelectionAndOutputNames) {
  auto path = write("e.bem", select_package().binary());
  const auto glb = dir_ / "kept.glb";
  auto r = run_charkit("bem export " + quote(path) + " --options outfit:b -o " + quote(glb), true);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("BEM_EXPORT_EMPTY"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(glb));
  r = run_charkit(
      "bem export " + quote(path) + " --options outfit:b --allow-empty -o " + quote(glb), true);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("BEM_EXPORT_EMPTY"), std::string::npos) << r.out;  // still a warning
  EXPECT_TRUE(std::filesystem::exists(glb));

  r = run_charkit("bem export " + quote(path) + " --json -o " + quote(dir_ / "out.obj"));
  EXPECT_EQ(r.exit_code, 2) << r.out;
  Json j = Json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  EXPECT_EQ(j["error"]["code"], "BEM_EXPORT_OUTPUT_NAME");
  EXPECT_FALSE(std::filesystem::exists(dir_ / "out.obj"));
  r = run_charkit("bem export " + quote(path) + " -o " + quote(dir_ / "UPPER.GLB"));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(std::filesystem::exists(dir_ / "UPPER.GLB"));
}

}  // namespace
}  // namespace charkit
