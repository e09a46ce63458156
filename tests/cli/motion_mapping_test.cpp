// `charkit motion convert` on skeletons the joint table does not fit
// (docs/motion.md §Joint mapping): none mapped → exit 1 with the joints
// listed on stderr and no output; fewer than half → exit 0 with a warning on
// stderr (`FILE: severity CODE: message`).
#include <filesystem>
#include <string>
#include <vector>

#include "charkit/core/json.h"
#include "cli_support.h"

namespace charkit::clitest {
namespace {

std::vector<std::uint8_t> chain_bvh(const std::vector<std::string>& names) {
  std::string t = "HIERARCHY\n";
  for (std::size_t i = 0; i < names.size(); ++i)
    t += (i ? "JOINT " : "ROOT ") + names[i] + "\n{\nOFFSET 0 1 0\nCHANNELS 3 " +
         (i ? "Zrotation Xrotation Yrotation\n" : "Xposition Yposition Zposition\n");
  for (std::size_t i = 0; i < names.size(); ++i) t += "}\n";
  t += "MOTION\nFrames: 2\nFrame Time: 0.04\n";
  for (int f = 0; f < 2; ++f) {
    for (std::size_t c = 0; c < names.size() * 3; ++c) t += c ? " 0" : "0";
    t += "\n";
  }
  return {t.begin(), t.end()};
}

using MotionMappingCli = ScratchDir;

TEST_F(MotionMappingCli, NoMappedJointFailsWithTheJointsListed) {
  const auto in = write("odd.bvh", chain_bvh({"Root", "Spine_a", "Skull_c"}));
  const auto out = dir_ / "o.ndjson";
  const std::string args = "motion convert " + quote(in) + " -o " + quote(out);
  auto quiet = run_charkit(args);  // stdout only
  EXPECT_EQ(quiet.exit_code, 1);
  EXPECT_EQ(quiet.out, "");
  auto r = run_charkit(args, true);  // with stderr
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, in.string() +
                       ": error MOTION_NO_MAPPED_JOINTS: none of the skeleton's 3 joints matches a "
                       "joint name the table has for the 15 MediaPipe points it maps, so every "
                       "point would be missing; the skeleton's joints: 'Root', 'Spine_a', "
                       "'Skull_c'; name them with a joint map (--joint-map, docs/motion.md §Joint "
                       "mapping)\n");
  EXPECT_FALSE(std::filesystem::exists(out));

  // A joint map naming one of them converts (with the warning).
  const std::string map = R"({"nose": ["Skull_c"]})";
  const auto map_file = write("map.json", std::vector<std::uint8_t>(map.begin(), map.end()));
  auto fixed = run_charkit(args + " --joint-map " + quote(map_file), true);
  EXPECT_EQ(fixed.exit_code, 0) << fixed.out;
  EXPECT_NE(fixed.out.find(in.string() + ": warning MOTION_FEW_MAPPED_JOINTS: only 1 of the 15"),
            std::string::npos)
      << fixed.out;
  EXPECT_TRUE(std::filesystem::exists(out));
}

TEST_F(MotionMappingCli, FewerThanHalfWarnsOnStderrAndConverts) {
  const auto in = write("arms.bvh", chain_bvh({"Hips", "Head", "LeftArm", "LeftForeArm", "LeftHand",
                                               "RightArm", "RightForeArm", "RightHand"}));
  const auto out = dir_ / "o.ndjson";
  const std::string args = "motion convert " + quote(in) + " -o " + quote(out);
  auto quiet = run_charkit(args);
  EXPECT_EQ(quiet.exit_code, 0);
  EXPECT_EQ(quiet.out, "");  // the warning is not on stdout
  auto r = run_charkit(args, true);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find(in.string() +
                       ": warning MOTION_FEW_MAPPED_JOINTS: only 7 of the 15 MediaPipe points the "
                       "table maps were found in the skeleton; missing (confidence 0): 'left_hip', "
                       "'right_hip', 'left_knee', 'right_knee', 'left_ankle', 'right_ankle', "
                       "'left_foot_index', 'right_foot_index'; a joint map (--joint-map) can name "
                       "their joints\n"),
            std::string::npos)
      << r.out;
  EXPECT_TRUE(std::filesystem::exists(out));
  // --json carries it in `warnings` too.
  auto j = run_charkit(args + " --json");
  ASSERT_EQ(j.exit_code, 0);
  auto doc = core::parse_json_strict(j.out);
  ASSERT_TRUE(doc.ok()) << j.out;
  ASSERT_EQ((*doc)["warnings"].size(), 1u);
  EXPECT_EQ((*doc)["warnings"][0]["code"], "MOTION_FEW_MAPPED_JOINTS");
}

TEST_F(MotionMappingCli, InspectStillDescribesAnUnmappedSkeleton) {
  const auto in = write("odd.bvh", chain_bvh({"Root", "Spine_a", "Skull_c"}));
  auto r = run_charkit("motion inspect " + quote(in) + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto doc = core::parse_json_strict(r.out);
  ASSERT_TRUE(doc.ok()) << r.out;
  EXPECT_EQ((*doc)["joints"].size(), 3u);
  ASSERT_EQ((*doc)["warnings"].size(), 1u);
  EXPECT_EQ((*doc)["warnings"][0]["code"], "MOTION_FEW_MAPPED_JOINTS");
}

}  // namespace
}  // namespace charkit::clitest
