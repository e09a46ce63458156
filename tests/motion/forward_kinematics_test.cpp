// Forward kinematics against rotations worked out by hand:
// Rz(90°) maps x→y, y→−x; Rx(90°) maps y→z, z→−y; Ry(90°) maps z→x, x→−z.
#include <span>
#include <string>

#include <gtest/gtest.h>

#include "bvh_test_util.h"
#include "charkit/motion/error_codes.h"
#include "charkit/motion/forward_kinematics.h"

namespace charkit::motion {
namespace {

using testing::bvh_lines;

struct Posed {
  BvhHeader header;
  std::vector<Vec3> world;
};

// World positions of frame 0 of text.
Posed pose(const std::string& text) {
  auto h = parse_bvh_header(text);
  EXPECT_TRUE(h.ok()) << (h.ok() ? "" : h.error().to_string());
  Posed p{std::move(*h), {}};
  std::vector<double> values(p.header.channel_count);
  FrameReader reader(p.header, text);
  auto got = reader.next(values);
  EXPECT_TRUE(got.ok() && *got);
  std::vector<Mat3> rot(p.header.joints.size());
  p.world.resize(p.header.joints.size());
  ForwardKinematicsJob job{p.header.joints, values, rot, p.world};
  EXPECT_TRUE(job.validate());
  EXPECT_TRUE(job.run());
  return p;
}

void expect_near(const Vec3& got, const Vec3& want) {
  for (int i = 0; i < 3; ++i)
    EXPECT_NEAR(got[static_cast<std::size_t>(i)], want[static_cast<std::size_t>(i)], 1e-12)
        << "axis " << i;
}

// A root with the given rotation channels and one End Site at `tip`.
std::string rotated_tip(const char* channels, const char* values, const char* tip) {
  return bvh_lines({"HIERARCHY", "ROOT R", "{", "OFFSET 0 0 0", channels, "End Site", "{", tip, "}",
                    "}", "MOTION", "Frames: 1", "Frame Time: 0.1", values});
}

TEST(ForwardKinematics, ChannelsApplyIntrinsicallyInListedOrder) {
  // Z then X: R = Rz·Rx. (0,1,0) → Rx → (0,0,1) → Rz → (0,0,1).
  expect_near(pose(rotated_tip("CHANNELS 2 Zrotation Xrotation", "90 90", "OFFSET 0 1 0")).world[1],
              {0, 0, 1});
  // X then Z: R = Rx·Rz. (0,1,0) → Rz → (−1,0,0) → Rx → (−1,0,0).
  expect_near(pose(rotated_tip("CHANNELS 2 Xrotation Zrotation", "90 90", "OFFSET 0 1 0")).world[1],
              {-1, 0, 0});
  // (1,0,0) under Rz·Rx: Rx keeps it, Rz → (0,1,0).
  expect_near(pose(rotated_tip("CHANNELS 2 Zrotation Xrotation", "90 90", "OFFSET 1 0 0")).world[1],
              {0, 1, 0});
  // Y then X then Z on (0,0,1): Rz keeps, Rx → (0,−1,0), Ry keeps → (0,−1,0).
  expect_near(
      pose(rotated_tip("CHANNELS 3 Yrotation Xrotation Zrotation", "90 90 90", "OFFSET 0 0 1"))
          .world[1],
      {0, -1, 0});
  // The same angles in ZXY order: Ry → (1,0,0), Rx keeps, Rz → (0,1,0).
  expect_near(
      pose(rotated_tip("CHANNELS 3 Zrotation Xrotation Yrotation", "90 90 90", "OFFSET 0 0 1"))
          .world[1],
      {0, 1, 0});
}

TEST(ForwardKinematics, ChildOffsetsTurnWithTheParentChain) {
  std::string text =
      bvh_lines({"HIERARCHY", "ROOT R", "{", "OFFSET 0 0 0", "CHANNELS 1 Zrotation", "JOINT B", "{",
                 "OFFSET 1 0 0", "CHANNELS 1 Zrotation", "End Site", "{", "OFFSET 1 0 0", "}", "}",
                 "}", "MOTION", "Frames: 1", "Frame Time: 0.1", "90 90"});
  Posed p = pose(text);
  expect_near(p.world[0], {0, 0, 0});
  expect_near(p.world[1], {0, 1, 0});   // Rz(90)·(1,0,0)
  expect_near(p.world[2], {-1, 1, 0});  // + Rz(180)·(1,0,0)
}

TEST(ForwardKinematics, RootPositionChannelsReplaceTheOffset) {
  std::string text = bvh_lines(
      {"HIERARCHY", "ROOT R", "{", "OFFSET 10 20 30",
       "CHANNELS 6 Xposition Yposition Zposition Zrotation Yrotation Xrotation", "End Site", "{",
       "OFFSET 0 1 0", "}", "}", "MOTION", "Frames: 1", "Frame Time: 0.1", "1 2 3 0 0 0"});
  Posed p = pose(text);
  expect_near(p.world[0], {1, 2, 3});
  expect_near(p.world[1], {1, 3, 3});
}

TEST(ForwardKinematics, PositionChannelsOnANonRootJointReplaceTheirOffsetComponents) {
  // B has OFFSET 5 5 5 and only Yposition: its local translation is (5, 7, 5),
  // turned by the root's Rz(90): (5,7,5) → (−7,5,5).
  std::string text = bvh_lines(
      {"HIERARCHY", "ROOT R", "{", "OFFSET 0 0 0", "CHANNELS 1 Zrotation", "JOINT B", "{",
       "OFFSET 5 5 5", "CHANNELS 3 Yposition Xrotation Zrotation", "End Site", "{", "OFFSET 0 0 0",
       "}", "}", "}", "MOTION", "Frames: 1", "Frame Time: 0.1", "90 7 0 0"});
  Posed p = pose(text);
  expect_near(p.world[1], {-7, 5, 5});
}

TEST(ForwardKinematics, BandaiStyleSixChannelsOnEveryJoint) {
  // joint_Root above Hips, 6 channels everywhere, position values equal to the
  // offsets (as those files store them): with zero rotations the world
  // positions are the plain sums of the offsets, not twice them.
  std::string text =
      bvh_lines({"HIERARCHY",
                 "ROOT joint_Root",
                 "{",
                 "OFFSET 0 0 0",
                 "CHANNELS 6 Xposition Yposition Zposition Zrotation Yrotation Xrotation",
                 "JOINT Hips",
                 "{",
                 "OFFSET 0 90 0",
                 "CHANNELS 6 Xposition Yposition Zposition Zrotation Yrotation Xrotation",
                 "JOINT UpperLeg_L",
                 "{",
                 "OFFSET 10 -5 0",
                 "CHANNELS 6 Xposition Yposition Zposition Zrotation Yrotation Xrotation",
                 "End Site",
                 "{",
                 "OFFSET 0 -40 0",
                 "}",
                 "}",
                 "}",
                 "}",
                 "MOTION",
                 "Frames: 1",
                 "Frame Time: 0.0333333",
                 "0 0 0 0 0 0 0 90 0 0 0 0 10 -5 0 0 0 0"});
  Posed p = pose(text);
  expect_near(p.world[1], {0, 90, 0});
  expect_near(p.world[2], {10, 85, 0});
  expect_near(p.world[3], {10, 45, 0});
}

TEST(ForwardKinematics, ValidateRefusesInconsistentSpans) {
  std::vector<BvhJoint> joints(2);
  joints[1].parent = 0;
  std::vector<double> frame;
  std::vector<Mat3> rot(2);
  std::vector<Vec3> pos(2);
  EXPECT_TRUE((ForwardKinematicsJob{joints, frame, rot, pos}.validate()));
  auto refused = [&](std::span<Vec3> positions, const std::string& says) {
    const core::Status st = ForwardKinematicsJob{joints, frame, rot, positions}.validate();
    ASSERT_FALSE(st);
    EXPECT_EQ(st.error().code, codes::MOTION_INTERNAL);
    EXPECT_NE(st.error().message.find(says), std::string::npos) << st.error().message;
  };
  std::vector<Vec3> short_pos(1);
  refused(short_pos, "one each per joint");
  joints[1].parent = 1;  // not before itself
  refused(pos, "joint 1 (): its parent does not come before it");
  joints[1].parent = 0;
  joints[1].channel_count = 3;  // channels beyond the (empty) frame
  refused(pos, "past the frame row");
}

}  // namespace
}  // namespace charkit::motion
