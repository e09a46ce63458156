// `charkit motion convert|inspect` on FBX / glTF / GLB input (docs/motion.md
// §FBX, glTF and GLB animations): detection by content, --animation, --fps,
// --json, and the errors with their exit codes.
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "charkit/core/json.h"
#include "cli_support.h"

namespace charkit::clitest {
namespace {

std::string model(const char* name) {
  return std::string(CHARKIT_TEST_DATA) + "/models/" + name;
}

std::vector<std::uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<std::string> file_lines(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

using MotionAssimpCli = ScratchDir;

TEST_F(MotionAssimpCli, ConvertsGlbToNdjson) {
  const auto out = dir_ / "cesium.ndjson";
  // CesiumMan's joints have no names (charkit calls them #i): none maps,
  // so the conversion is refused with the joint names (docs/motion.md §Joint mapping) …
  auto refused =
      run_charkit("motion convert " + quote(model("CesiumMan.glb")) + " -o " + quote(out), true);
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.out.find(": error MOTION_NO_MAPPED_JOINTS: none of the skeleton's 19 joints"),
            std::string::npos)
      << refused.out;
  EXPECT_EQ(refused.out.find(" more ("), std::string::npos);  // 19: all listed
  EXPECT_FALSE(std::filesystem::exists(out));
  // … and a joint map naming one of them (taken from inspect) converts it.
  auto insp = run_charkit("motion inspect " + quote(model("CesiumMan.glb")) + " --json");
  ASSERT_EQ(insp.exit_code, 0) << insp.out;
  auto ij = core::parse_json_strict(insp.out);
  ASSERT_TRUE(ij.ok()) << insp.out;
  const std::string joint = (*ij)["joints"][0]["name"].get<std::string>();
  EXPECT_NE(refused.out.find("'" + joint + "'"), std::string::npos) << refused.out;
  const std::string map = R"({"nose": [")" + joint + R"("]})";
  const auto map_file = write("map.json", std::vector<std::uint8_t>(map.begin(), map.end()));
  auto r = run_charkit("motion convert " + quote(model("CesiumMan.glb")) + " -o " + quote(out) +
                       " --json --joint-map " + quote(map_file));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto j = core::parse_json_strict(r.out);
  ASSERT_TRUE(j.ok()) << r.out;
  EXPECT_EQ((*j)["format"], "glb");
  EXPECT_EQ((*j)["frames"], 49);
  EXPECT_EQ((*j)["fps"], 24.0);
  EXPECT_EQ((*j)["fpsSource"], "key spacing");
  EXPECT_EQ((*j)["skeletonFrom"], "skin");
  EXPECT_EQ((*j)["points"].size(), 33u);
  const auto lines = file_lines(out);
  ASSERT_EQ(lines.size(), 49u);
  for (const auto& l : lines) {
    auto f = core::parse_json_strict(l);
    ASSERT_TRUE(f.ok()) << l;
    EXPECT_EQ((*f)["points"].size(), 33u);
    EXPECT_EQ((*f)["angles"].size(), 9u);
  }
  auto f48 = core::parse_json_strict(lines[48]);
  ASSERT_TRUE(f48.ok());
  EXPECT_EQ((*f48)["frame"], 48);
  EXPECT_EQ((*f48)["timeMs"], 2000.0);
}

TEST_F(MotionAssimpCli, DetectsByContentNotName) {
  const auto in = write("walk.bvh", read_bytes(model("RiggedSimple.glb")));
  const auto out = dir_ / "o.ndjson";
  // Its two joints are unnamed (#2, #3): a joint map names one.
  const std::string map = R"({"left_shoulder": ["#2"]})";
  const auto map_file = write("map.json", std::vector<std::uint8_t>(map.begin(), map.end()));
  auto r = run_charkit("motion convert " + quote(in) + " -o " + quote(out) +
                           " --fps 10 --joint-map " + quote(map_file),
                       true);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("glb animation 0"), std::string::npos) << r.out;
  // 2.0833 s at 10 fps: round(20.833) + 1 = 22 frames.
  EXPECT_EQ(file_lines(out).size(), 22u);
}

TEST_F(MotionAssimpCli, InspectShowsAnimationsAndSkeleton) {
  auto r = run_charkit("motion inspect " + quote(model("CesiumMan.glb")));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("glb, 1 animation(s), skeleton of 19 joints"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("* animation 0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("frames: 49 (2 s), 24 fps (key spacing)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("up axis: Y-up (glTF)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("MediaPipe points:"), std::string::npos) << r.out;

  r = run_charkit("motion inspect " + quote(model("RiggedSimple.glb")) + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto j = core::parse_json_strict(r.out);
  ASSERT_TRUE(j.ok()) << r.out;
  EXPECT_EQ((*j)["valid"], true);
  EXPECT_EQ((*j)["format"], "glb");
  EXPECT_EQ((*j)["joints"].size(), 2u);
  EXPECT_EQ((*j)["animations"].size(), 1u);
  EXPECT_EQ((*j)["frames"], 63);
  EXPECT_EQ((*j)["fpsSource"], "default");
}

TEST_F(MotionAssimpCli, UnknownAnimationFails) {
  const auto out = dir_ / "o.ndjson";
  auto r = run_charkit(
      "motion convert " + quote(model("CesiumMan.glb")) + " -o " + quote(out) + " --animation 3",
      true);
  EXPECT_EQ(r.exit_code, 1);
  // Its one animation has no name: ''.
  EXPECT_NE(r.out.find("error MOTION_ANIMATION_NOT_FOUND: no animation 3 (the file has 1, by index "
                       "from 0: '')"),
            std::string::npos)
      << r.out;
  EXPECT_FALSE(std::filesystem::exists(out));
  r = run_charkit("motion inspect " + quote(model("CesiumMan.glb")) + " --animation Run --json");
  EXPECT_EQ(r.exit_code, 1);
  auto j = core::parse_json_strict(r.out);
  ASSERT_TRUE(j.ok()) << r.out;
  EXPECT_EQ((*j)["valid"], false);
  EXPECT_EQ((*j)["error"]["code"], "MOTION_ANIMATION_NOT_FOUND");
}

TEST_F(MotionAssimpCli, CorruptTextAndUnanimatedFilesFailClearly) {
  const auto out = dir_ / "o.ndjson";
  auto glb = read_bytes(model("RiggedSimple.glb"));
  glb.resize(600);
  const auto cut = write("cut.glb", glb);
  auto r = run_charkit("motion convert " + quote(cut) + " -o " + quote(out), true);
  EXPECT_EQ(r.exit_code, 1);
  // FILE: [LOCATION: ]error CODE: message (docs/cli.md).
  EXPECT_NE(r.out.find("cut.glb: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("error MOTION_IMPORT_FAILED: not a valid GLB container: "),
            std::string::npos)
      << r.out;
  auto junk = read_bytes(model("RiggedSimple.glb"));
  for (std::size_t i = 20; i < 120; ++i) junk[i] = '#';
  const auto bad = write("junk.glb", junk);
  r = run_charkit("motion convert " + quote(bad) + " -o " + quote(out), true);
  EXPECT_EQ(r.exit_code, 1);
  // Refused by our glTF checks before Assimp sees it, with the byte offset.
  EXPECT_NE(r.out.find("junk.glb: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("error MOTION_IMPORT_FAILED: not a valid glb file: JSON_SYNTAX"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("byte 20"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(out));

  const std::string text = "not a model at all\n";
  const auto txt = write("notes.fbx", std::vector<std::uint8_t>(text.begin(), text.end()));
  r = run_charkit("motion convert " + quote(txt) + " -o " + quote(out), true);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("error MOTION_FORMAT"), std::string::npos) << r.out;

  const std::string fake = "; FBX 7.4.0 project file\nnonsense {{{\n";
  const auto fbx = write("fake.fbx", std::vector<std::uint8_t>(fake.begin(), fake.end()));
  r = run_charkit("motion inspect " + quote(fbx), true);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("error MOTION_IMPORT_FAILED: Assimp cannot read this fbx-ascii file"),
            std::string::npos)
      << r.out;

  r = run_charkit("motion convert " + quote(model("sphere.vrm")) + " -o " + quote(out), true);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("error MOTION_NO_ANIMATION"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST_F(MotionAssimpCli, HelpMentionsTheFormats) {
  auto r = run_charkit("motion convert --help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("--animation"), std::string::npos);
  EXPECT_NE(r.out.find("FBX"), std::string::npos);
}

}  // namespace
}  // namespace charkit::clitest
