// The joint-mapping check of every skeleton conversion (convert.h
// check_joint_mapping; docs/motion.md §Joint mapping): no mapped point is an
// error listing the joints found, fewer than half is a warning naming the
// missing points. BVH written by hand; a glTF built by hand for the Assimp path.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "bvh_test_util.h"
#include "charkit/core/names.h"
#include "charkit/motion/assimp_motion.h"
#include "charkit/motion/convert.h"

namespace charkit::motion {
namespace {

using testing::bvh_lines;

// A chain ROOT → JOINT … of the given names (no End Site), 3 position channels
// on the root and 3 rotations on the others, two frames of zeros.
std::string chain_bvh(const std::vector<std::string>& names) {
  std::string t = "HIERARCHY\n";
  for (std::size_t i = 0; i < names.size(); ++i) {
    t += (i ? "JOINT " : "ROOT ") + names[i] + "\n{\nOFFSET 0 1 0\n";
    t += i ? "CHANNELS 3 Zrotation Xrotation Yrotation\n"
           : "CHANNELS 3 Xposition Yposition Zposition\n";
  }
  for (std::size_t i = 0; i < names.size(); ++i) t += "}\n";
  t += "MOTION\nFrames: 2\nFrame Time: 0.04\n";
  for (int f = 0; f < 2; ++f) {
    for (std::size_t c = 0; c < names.size() * 3; ++c) t += c ? " 0" : "0";
    t += "\n";
  }
  return t;
}

struct Sink {
  std::string out;
  OutputSink fn() {
    return [this](std::string_view s) {
      out += s;
      return true;
    };
  }
};

TEST(JointMappingCheck, NoMappedJointIsAnErrorListingTheJoints) {
  const std::string text = chain_bvh({"Root", "Spine_a", "Neck_b", "Skull_c"});
  Sink sink;
  auto r = convert_bvh(text, {}, sink.fn());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "MOTION_NO_MAPPED_JOINTS");
  EXPECT_EQ(r.error().message,
            "none of the skeleton's 4 joints matches a joint name the table has for the 15 "
            "MediaPipe points it maps, so every point would be missing; the skeleton's joints: "
            "'Root', 'Spine_a', 'Neck_b', 'Skull_c'; name them with a joint map (--joint-map, "
            "docs/motion.md §Joint mapping)");
  EXPECT_TRUE(sink.out.empty());  // refused before any line
  // inspect (analyse) still describes the file, with the warning instead.
  auto a = analyse_bvh(text, {});
  ASSERT_TRUE(a.ok()) << a.error().to_string();
  ASSERT_EQ(a->warnings.size(), 1u);
  EXPECT_EQ(a->warnings[0].code, "MOTION_FEW_MAPPED_JOINTS");
  EXPECT_EQ(a->warnings[0].message.rfind("only 0 of the 15 MediaPipe points", 0), 0u)
      << a->warnings[0].message;
}

TEST(JointMappingCheck, ManyJointsAreListedFirstTwentyAndACount) {
  std::vector<std::string> names;
  for (int i = 0; i < 25; ++i) names.push_back("bone" + std::to_string(i));
  auto r = convert_bvh(chain_bvh(names), {}, Sink{}.fn());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "MOTION_NO_MAPPED_JOINTS");
  EXPECT_NE(r.error().message.find("'bone18', 'bone19' and 5 more (25 in all); name them"),
            std::string::npos)
      << r.error().message;
  EXPECT_EQ(r.error().message.find("'bone20'"), std::string::npos);
}

TEST(JointMappingCheck, EndSitesAreNotListed) {
  const std::string text =
      bvh_lines({"HIERARCHY", "ROOT Root", "{", "OFFSET 0 0 0",
                 "CHANNELS 3 Xposition Yposition Zposition", "End Site", "{", "OFFSET 0 1 0", "}",
                 "}", "MOTION", "Frames: 1", "Frame Time: 0.04", "0 0 0"});
  auto r = convert_bvh(text, {}, Sink{}.fn());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("none of the skeleton's 1 joints"), std::string::npos);
  EXPECT_NE(r.error().message.find("joints: 'Root';"), std::string::npos) << r.error().message;
}

TEST(JointMappingCheck, FewerThanHalfConvertsWithAWarningNamingTheMissingPoints) {
  // 7 of the 15 points: LeftArm/RightArm (shoulders), the forearms, the hands
  // and the head. 7 × 2 < 15.
  const std::string text = chain_bvh({"Hips", "Head", "LeftArm", "LeftForeArm", "LeftHand",
                                      "RightArm", "RightForeArm", "RightHand"});
  Sink sink;
  auto r = convert_bvh(text, {}, sink.fn());
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_EQ(r->frames, 2u);
  EXPECT_FALSE(sink.out.empty());
  ASSERT_EQ(r->warnings.size(), 1u);
  EXPECT_EQ(r->warnings[0].code, "MOTION_FEW_MAPPED_JOINTS");
  EXPECT_EQ(r->warnings[0].message,
            "only 7 of the 15 MediaPipe points the table maps were found in the skeleton; "
            "missing (confidence 0): 'left_hip', 'right_hip', 'left_knee', 'right_knee', "
            "'left_ankle', 'right_ankle', 'left_foot_index', 'right_foot_index'; a joint map "
            "(--joint-map) can name their joints");
}

TEST(JointMappingCheck, HalfOrMoreIsQuiet) {
  // 8 of 15: the 7 above and the left hip.
  const std::string text = chain_bvh({"Hips", "Head", "LeftArm", "LeftForeArm", "LeftHand",
                                      "RightArm", "RightForeArm", "RightHand", "LeftUpLeg"});
  auto r = convert_bvh(text, {}, Sink{}.fn());
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_TRUE(r->warnings.empty());
  const MappingCoverage c = mapping_coverage(r->mapping, default_joint_table());
  EXPECT_EQ(c.wanted, 15u);
  EXPECT_EQ(c.found, 8u);
  EXPECT_EQ(c.missing.size(), 7u);
}

TEST(JointMappingCheck, AJointMapRescuesAnUnmappedSkeleton) {
  const std::string text = chain_bvh({"Root", "Spine_a", "Neck_b", "Skull_c"});
  ConvertOptions o;
  auto t = apply_joint_map(default_joint_table(), R"({"nose": ["Skull_c"]})");
  ASSERT_TRUE(t.ok());
  o.table = *t;
  auto r = convert_bvh(text, o, Sink{}.fn());
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  ASSERT_EQ(r->warnings.size(), 1u);
  EXPECT_EQ(r->warnings[0].code, "MOTION_FEW_MAPPED_JOINTS");
  EXPECT_EQ(r->warnings[0].message.rfind("only 1 of the 15 MediaPipe points", 0), 0u);
}

TEST(JointMappingCheck, AnUnknownPointInAJointMapListsThePointNames) {
  auto t = apply_joint_map(default_joint_table(), R"({"left_hand": ["Hand_L"]})");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().code, "JOINT_MAP");
  EXPECT_EQ(t.error().message,
            "/left_hand: not a MediaPipe point name nor an index 0-32; the names: 'nose', "
            "'left_eye_inner', 'left_eye', 'left_eye_outer', 'right_eye_inner', 'right_eye', "
            "'right_eye_outer', 'left_ear', 'right_ear', 'mouth_left', 'mouth_right', "
            "'left_shoulder', 'right_shoulder', 'left_elbow', 'right_elbow', 'left_wrist', "
            "'right_wrist', 'left_pinky', 'right_pinky', 'left_index' and 13 more (33 in all)");
}

// A minimal glTF (JSON, buffer as a data URI) by hand: two unnamed nodes in a
// chain and one rotation animation on the child; Assimp names them nodes[i].
std::string unnamed_gltf() {
  // Buffer: times [0, 1] (8 bytes), rotations 2 × vec4 identity (32 bytes).
  // Base64 of: 00000000 0000803f | 0 0 0 0000803f | 0 0 0 0000803f
  return R"({"asset":{"version":"2.0"},"scene":0,"scenes":[{"nodes":[0]}],
"nodes":[{"children":[1]},{"translation":[0,1,0]}],
"buffers":[{"byteLength":40,"uri":"data:application/octet-stream;base64,AAAAAAAAgD8AAAAAAAAAAAAAAAAAAIA/AAAAAAAAAAAAAAAAAACAPw=="}],
"bufferViews":[{"buffer":0,"byteOffset":0,"byteLength":8},{"buffer":0,"byteOffset":8,"byteLength":32}],
"accessors":[{"bufferView":0,"componentType":5126,"count":2,"type":"SCALAR","min":[0],"max":[1]},
{"bufferView":1,"componentType":5126,"count":2,"type":"VEC4"}],
"animations":[{"channels":[{"sampler":0,"target":{"node":1,"path":"rotation"}}],
"samplers":[{"input":0,"output":1}]}]})";
}

TEST(JointMappingCheck, UnnamedGltfJointsAreRefusedWithTheirNames) {
  const std::string text = unnamed_gltf();
  AssimpMotionOptions ao;
  ao.isolate = false;  // a trusted, hand-made file
  auto m = load_assimp_motion(
      std::span(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()), ao);
  ASSERT_TRUE(m.ok()) << m.error().to_string();
  ASSERT_FALSE(m->joints.empty());
  Sink sink;
  auto r = convert_assimp_motion(*m, {}, sink.fn());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "MOTION_NO_MAPPED_JOINTS");
  std::vector<std::string> names;
  for (const auto& j : m->joints) names.push_back(j.name);
  EXPECT_NE(r.error().message.find("the skeleton's joints: " + core::format_name_list(names)),
            std::string::npos)
      << r.error().message;
  EXPECT_TRUE(sink.out.empty());
  auto a = analyse_assimp_motion(*m, {});
  ASSERT_TRUE(a.ok());
  ASSERT_FALSE(a->warnings.empty());
  EXPECT_EQ(a->warnings.back().code, "MOTION_FEW_MAPPED_JOINTS");
}

}  // namespace
}  // namespace charkit::motion
