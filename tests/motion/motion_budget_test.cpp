// Budgets and cancellation of the conversions (docs/motion.md §Budgets):
// checked before the work wherever the frame count is known, and nothing is
// written once a budget says no.
#include <gtest/gtest.h>

#include <atomic>
#include <string>

#include "bvh_test_util.h"
#include "charkit/motion/convert.h"
#include "charkit/motion/keypoint_json.h"

namespace charkit::motion {
namespace {

using testing::bvh_lines;

/// A two-joint BVH (ROOT + End Site) with n frames of 6 channels.
std::string bvh_with_frames(int n) {
  // One joint the default table maps (left_wrist), so that it converts.
  std::string text = bvh_lines({"HIERARCHY", "ROOT LeftHand", "{", "  OFFSET 0 0 0",
                                "  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation "
                                "Yrotation",
                                "  End Site", "  {", "    OFFSET 0 1 0", "  }", "}", "MOTION"});
  text += "Frames: " + std::to_string(n) + "\nFrame Time: 0.0333333\n";
  for (int i = 0; i < n; ++i) text += std::to_string(i) + " 0 0 0 0 0\n";
  return text;
}

struct Written {
  std::string out;
  int chunks = 0;
  OutputSink sink() {
    return [this](std::string_view s) {
      out += s;
      ++chunks;
      return true;
    };
  }
};

TEST(MotionBudget, BvhJointFramesStopTheFirstPass) {
  const std::string text = bvh_with_frames(1000);  // 1000 frames × 2 joints
  ConvertOptions o;
  Written free_run;
  ASSERT_TRUE(convert_bvh(text, o, free_run.sink()));
  o.budget.max_joint_frames = 2000;  // exactly enough
  Written exact;
  ASSERT_TRUE(convert_bvh(text, o, exact.sink()));
  EXPECT_EQ(exact.out, free_run.out);
  o.budget.max_joint_frames = 1999;
  Written none;
  auto r = convert_bvh(text, o, none.sink());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "MOTION_BUDGET_JOINT_FRAMES");
  EXPECT_EQ(none.chunks, 0);  // refused before the writing pass
  auto a = analyse_bvh(text, o);
  ASSERT_FALSE(a);
  EXPECT_EQ(a.error().code, "MOTION_BUDGET_JOINT_FRAMES");
}

TEST(MotionBudget, BvhOutputBytesAreCheckedBeforeWriting) {
  const std::string text = bvh_with_frames(1000);
  ConvertOptions o;
  o.budget.max_output_bytes = 1000 * kEstimatedFrameLineBytes - 1;
  Written none;
  auto r = convert_bvh(text, o, none.sink());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "MOTION_BUDGET_OUTPUT_BYTES");
  EXPECT_EQ(none.chunks, 0);
  // At the estimate it passes, and the real (smaller) output is written.
  o.budget.max_output_bytes = 1000 * kEstimatedFrameLineBytes;
  Written all;
  ASSERT_TRUE(convert_bvh(text, o, all.sink()));
  EXPECT_LE(all.out.size(), o.budget.max_output_bytes);
  // The real size is enforced while writing too.
  EXPECT_TRUE(check_output_budget(o.budget, o.budget.max_output_bytes));
  EXPECT_FALSE(check_output_budget(o.budget, o.budget.max_output_bytes + 1));
}

TEST(MotionBudget, BvhCancelStopsTheConversion) {
  std::atomic<bool> cancel{true};
  ConvertOptions o;
  o.cancel = &cancel;
  Written none;
  auto r = convert_bvh(bvh_with_frames(10), o, none.sink());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "MOTION_CANCELLED");
  EXPECT_EQ(none.chunks, 0);
  cancel = false;
  EXPECT_TRUE(convert_bvh(bvh_with_frames(10), o, none.sink()));
}

std::string keypoint_doc(int frames) {
  std::string point = "[0.5,0.5,0,1]";
  std::string points = "[";
  for (int i = 0; i < 33; ++i) points += (i ? "," : "") + point;
  points += "]";
  std::string doc = R"({"format":"mediapipe33@0.1.0","fps":30,"frames":[)";
  for (int f = 0; f < frames; ++f)
    doc += (f ? "," : "") + std::string(R"({"points":)") + points + "}";
  return doc + "]}";
}

TEST(MotionBudget, KeypointJsonFramesAreCheckedBeforeWriting) {
  const std::string doc = keypoint_doc(3);
  KeypointJsonOptions o;
  o.budget.max_joint_frames = 3 * 33;
  Written ok;
  EXPECT_TRUE(convert_keypoint_json(doc, o, ok.sink()));
  o.budget.max_joint_frames = 3 * 33 - 1;
  Written none;
  auto r = convert_keypoint_json(doc, o, none.sink());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "MOTION_BUDGET_JOINT_FRAMES");
  EXPECT_EQ(none.chunks, 0);
  o.budget = {};
  std::atomic<bool> cancel{true};
  o.cancel = &cancel;
  auto c = convert_keypoint_json(doc, o, none.sink());
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().code, "MOTION_CANCELLED");
  EXPECT_EQ(none.chunks, 0);
}

}  // namespace
}  // namespace charkit::motion
