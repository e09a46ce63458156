// Keypoint JSON input (docs/contracts/keypoints.md §6): valid documents give
// NDJSON written by hand here; each kind of bad input gives its code and the
// exact JSON pointer; normalisation; computed angles equal those of the BVH
// path on the same points.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <sstream>
#include <string>

#include "charkit/core/json.h"
#include "charkit/motion/convert.h"
#include "charkit/motion/detail/ndjson.h"
#include "charkit/motion/format.h"
#include "charkit/motion/keypoint_json.h"

namespace charkit::motion {
namespace {

// A points array of 33 copies of one point text.
std::string points_of(const std::string& point) {
  std::string s = "[";
  for (std::size_t i = 0; i < kPointCount; ++i) s += (i ? "," : "") + point;
  return s + "]";
}

std::string nine(const std::string& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < kAngleCount; ++i) s += (i ? "," : "") + v;
  return s + "]";
}

std::string convert(const std::string& text, const KeypointJsonOptions& o = {}) {
  std::string out;
  auto r = convert_keypoint_json(text, o, [&](std::string_view c) {
    out.append(c);
    return true;
  });
  EXPECT_TRUE(r.ok()) << (r ? "" : r.error().to_string());
  return out;
}

// A valid two-frame document; tests break one part of it.
std::string valid_doc() {
  return R"({"format":"mediapipe33@0.1.0","fps":25,"frames":[)"
         R"({"timeMs":0,"points":)" +
         points_of("[0.25,0.5,0,1]") + R"(,"angles":)" + nine("0.5") + "}," + R"({"points":)" +
         points_of(R"({"x":0.75,"y":0.125,"z":-0.5,"visibility":0.25})") + R"(,"angles":)" +
         nine("-1") + "}]}";
}

TEST(KeypointJson, ValidDocumentGivesTheNdjsonWrittenByHand) {
  // Frame 0 as given; frame 1: objects, visibility as confidence, timeMs =
  // 1 × 1000 / 25 = 40.
  std::string expected =
      "{\"frame\":0,\"timeMs\":0.0,\"points\":" + points_of("[0.25,0.5,0.0,1.0]") +
      ",\"angles\":" + nine("0.5") + "}\n" +
      "{\"frame\":1,\"timeMs\":40.0,\"points\":" + points_of("[0.75,0.125,-0.5,0.25]") +
      ",\"angles\":" + nine("-1.0") + "}\n";
  EXPECT_EQ(convert(valid_doc()), expected);
  auto s = analyse_keypoint_json(valid_doc());
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->frames, 2u);
  EXPECT_EQ(s->fps, 25.0);
  EXPECT_TRUE(s->fps_in_file);
  EXPECT_EQ(s->computed_times, 1u);
  EXPECT_EQ(s->computed_angles, 0u);
  EXPECT_TRUE(s->warnings.empty());
}

TEST(KeypointJson, DefaultsAndOverrides) {
  // No fps: 30; frame 1 at 1000/30 ms. [x,y,z] without confidence: 1.0.
  const std::string doc = R"({"format":"mediapipe33@0.1.0","frames":[{"points":)" +
                          points_of("[0.5,0.5,0]") + R"(,"angles":)" + nine("1") +
                          R"(},{"frame":1,"points":)" + points_of("[0.5,0.5,0]") + R"(,"angles":)" +
                          nine("1") + "}]}";
  const std::string pts = points_of("[0.5,0.5,0.0,1.0]");
  EXPECT_EQ(convert(doc), "{\"frame\":0,\"timeMs\":0.0,\"points\":" + pts +
                              ",\"angles\":" + nine("1.0") +
                              "}\n{\"frame\":1,\"timeMs\":33.333333333333336,\"points\":" + pts +
                              ",\"angles\":" + nine("1.0") + "}\n");
  KeypointJsonOptions o;
  o.fps = 50;  // overrides: frame 1 at 20 ms
  EXPECT_NE(convert(doc, o).find("{\"frame\":1,\"timeMs\":20.0,"), std::string::npos);
  // An empty motion is an empty file.
  EXPECT_EQ(convert(R"({"format":"mediapipe33@0.1.0","frames":[]})"), "");
}

struct BadCase {
  const char* what;
  std::string text;
  const char* code;
  const char* pointer;
};

std::string with_frame0(const std::string& frame0_members) {
  return R"({"format":"mediapipe33@0.1.0","frames":[{)" + frame0_members + "}]}";
}

TEST(KeypointJson, EachBadInputNamesItsPointer) {
  const std::string p33 = points_of("[0.5,0.5,0,1]");
  std::string p_bad_at_7 = "[";
  for (std::size_t i = 0; i < kPointCount; ++i)
    p_bad_at_7 += std::string(i ? "," : "") + (i == 7 ? "[0.5,\"a\",0]" : "[0.5,0.5,0]");
  p_bad_at_7 += "]";
  std::string p_obj_12 = "[";
  for (std::size_t i = 0; i < kPointCount; ++i)
    p_obj_12 += std::string(i ? "," : "") + (i == 12 ? R"({"x":0.5})" : "[0.5,0.5,0]");
  p_obj_12 += "]";
  const BadCase cases[] = {
      {"not an object", "[1]", "KEYPOINTS_TYPE", ""},
      {"no format", R"({"frames":[]})", "KEYPOINTS_MEMBER", ""},
      {"wrong format", R"({"format":"mediapipe33@0.2.0","frames":[]})", "KEYPOINTS_FORMAT",
       "/format"},
      {"unknown top member", R"({"format":"mediapipe33@0.1.0","frames":[],"a/b":1})",
       "KEYPOINTS_MEMBER", "/a~1b"},
      {"fps string", R"({"format":"mediapipe33@0.1.0","fps":"30","frames":[]})", "KEYPOINTS_TYPE",
       "/fps"},
      {"fps zero", R"({"format":"mediapipe33@0.1.0","fps":0,"frames":[]})", "KEYPOINTS_RANGE",
       "/fps"},
      {"no frames", R"({"format":"mediapipe33@0.1.0"})", "KEYPOINTS_MEMBER", ""},
      {"frames object", R"({"format":"mediapipe33@0.1.0","frames":{}})", "KEYPOINTS_TYPE",
       "/frames"},
      {"frame not object", R"({"format":"mediapipe33@0.1.0","frames":[[]]})", "KEYPOINTS_TYPE",
       "/frames/0"},
      {"no points", with_frame0(R"("timeMs":0)"), "KEYPOINTS_MEMBER", "/frames/0"},
      {"unknown frame member", with_frame0(R"("points":)" + p33 + R"(,"time":0)"),
       "KEYPOINTS_MEMBER", "/frames/0/time"},
      {"1 point", with_frame0(R"("points":[)" + std::string("[0.5,0.5,0]") + "]"),
       "KEYPOINTS_COUNT", "/frames/0/points"},
      {"point of 2", with_frame0(R"("points":)" + points_of("[0.5,0.5]")), "KEYPOINTS_COUNT",
       "/frames/0/points/0"},
      {"point string", with_frame0(R"("points":)" + points_of("\"p\"")), "KEYPOINTS_TYPE",
       "/frames/0/points/0"},
      {"coordinate string", with_frame0(R"("points":)" + p_bad_at_7), "KEYPOINTS_TYPE",
       "/frames/0/points/7/1"},
      {"object without y", with_frame0(R"("points":)" + p_obj_12), "KEYPOINTS_MEMBER",
       "/frames/0/points/12"},
      {"pixel coordinates", with_frame0(R"("points":)" + points_of("[640,360,0]")),
       "KEYPOINTS_RANGE", "/frames/0/points/0/0"},
      {"both confidences",
       with_frame0(R"("points":)" + points_of(R"({"x":0,"y":0,"confidence":1,"visibility":1})")),
       "KEYPOINTS_MEMBER", "/frames/0/points/0/visibility"},
      {"unknown point member", with_frame0(R"("points":)" + points_of(R"({"x":0,"y":0,"w":1})")),
       "KEYPOINTS_MEMBER", "/frames/0/points/0/w"},
      {"8 angles", with_frame0(R"("points":)" + p33 + R"(,"angles":[1,1,1,1,1,1,1,1])"),
       "KEYPOINTS_COUNT", "/frames/0/angles"},
      {"angle above 1", with_frame0(R"("points":)" + p33 + R"(,"angles":[1,1,1,1,1,1,1,1.5,1])"),
       "KEYPOINTS_RANGE", "/frames/0/angles/7"},
      {"angle null", with_frame0(R"("points":)" + p33 + R"(,"angles":[null,1,1,1,1,1,1,1,1])"),
       "KEYPOINTS_TYPE", "/frames/0/angles/0"},
      {"negative time", with_frame0(R"("points":)" + p33 + R"(,"timeMs":-1)"), "KEYPOINTS_RANGE",
       "/frames/0/timeMs"},
      {"time string", with_frame0(R"("points":)" + p33 + R"(,"timeMs":"0")"), "KEYPOINTS_TYPE",
       "/frames/0/timeMs"},
      {"frame index wrong", with_frame0(R"("points":)" + p33 + R"(,"frame":1)"), "KEYPOINTS_FRAME",
       "/frames/0/frame"},
      {"time going back",
       R"({"format":"mediapipe33@0.1.0","frames":[{"timeMs":100,"points":)" + p33 +
           R"(},{"timeMs":50,"points":)" + p33 + "}]}",
       "KEYPOINTS_TIME", "/frames/1/timeMs"},
      {"computed time before given",  // frame 1 computed as 33.3 ms after 100 ms
       R"({"format":"mediapipe33@0.1.0","frames":[{"timeMs":100,"points":)" + p33 +
           R"(},{"points":)" + p33 + "}]}",
       "KEYPOINTS_TIME", "/frames/1"},
  };
  for (const BadCase& c : cases) {
    SCOPED_TRACE(c.what);
    auto r = analyse_keypoint_json(c.text);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, c.code) << r.error().to_string();
    EXPECT_EQ(r.error().location.pointer, c.pointer) << r.error().to_string();
    // Nothing is written for an invalid document.
    bool wrote = false;
    auto w = convert_keypoint_json(c.text, {}, [&](std::string_view) { return wrote = true; });
    EXPECT_FALSE(w.ok());
    EXPECT_FALSE(wrote);
  }
}

TEST(KeypointJson, SyntaxAndLimitErrors) {
  auto r = analyse_keypoint_json(R"({"format":"mediapipe33@0.1.0","frames":[,]})");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "JSON_SYNTAX");
  r = analyse_keypoint_json(R"({"format":"mediapipe33@0.1.0","format":"x","frames":[]})");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "JSON_DUPLICATE_KEY");
  KeypointJsonOptions o;
  o.limits.max_bytes = 10;
  r = analyse_keypoint_json(R"({"format":"mediapipe33@0.1.0","frames":[]})", o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "KEYPOINTS_LIMIT");
  o = {};
  o.limits.max_frames = 1;
  const std::string p = points_of("[0.5,0.5,0]");
  r = analyse_keypoint_json(
      R"({"format":"mediapipe33@0.1.0","frames":[{"points":)" + p + R"(},{"points":)" + p + "}]}",
      o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "KEYPOINTS_LIMIT");
  EXPECT_EQ(r.error().location.pointer, "/frames");
  r = analyse_keypoint_json(R"({"format":"mediapipe33@0.1.0","frames":[[[[[[[[[[1]]]]]]]]]]})");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "JSON_TOO_DEEP");
}

TEST(KeypointJson, ValuesAreClampedIntoTheirRanges) {
  // x, y → [0, 1]; z → [−1, 1]; confidence → [0, 1] (keypoints.md §6.3).
  std::string pts = "[[-0.5,1.5,-2,1.25],[1.25,-0.25,3,-0.5]";
  for (std::size_t i = 2; i < kPointCount; ++i) pts += ",[0.5,0.5,0.5,0.5]";
  pts += "]";
  const std::string doc = with_frame0(R"("points":)" + pts + R"(,"angles":)" + nine("0"));
  std::string expect_pts = "[[0.0,1.0,-1.0,1.0],[1.0,0.0,1.0,0.0]";
  for (std::size_t i = 2; i < kPointCount; ++i) expect_pts += ",[0.5,0.5,0.5,0.5]";
  expect_pts += "]";
  EXPECT_EQ(convert(doc), "{\"frame\":0,\"timeMs\":0.0,\"points\":" + expect_pts +
                              ",\"angles\":" + nine("0.0") + "}\n");
  auto s = analyse_keypoint_json(doc);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->clamped_values, 8u);
  ASSERT_EQ(s->warnings.size(), 1u);
  EXPECT_EQ(s->warnings[0].code, "KEYPOINTS_CLAMPED");
  EXPECT_NE(s->warnings[0].message.find("/frames/0/points/0/0"), std::string::npos);
}

// Image-space points of a pose whose angles are known by hand (y down):
// left arm bent 90° at the elbow, shoulders straight above the hips.
std::array<Keypoint, kPointCount> hand_pose() {
  std::array<Keypoint, kPointCount> p{};
  for (auto& k : p) k = Keypoint{0.5, 0.5, 0, 1};
  p[11] = {0.6, 0.3, 0, 1};  // left shoulder
  p[12] = {0.4, 0.3, 0, 1};  // right shoulder
  p[13] = {0.6, 0.5, 0, 1};  // left elbow: below the shoulder
  p[15] = {0.8, 0.5, 0, 1};  // left wrist: out to the side → 90° at the elbow
  p[14] = {0.4, 0.5, 0, 1};  // right elbow
  p[16] = {0.4, 0.7, 0, 1};  // right wrist: straight arm → cos at elbow = −1
  p[23] = {0.6, 0.7, 0, 1};  // left hip, below the shoulder
  p[24] = {0.4, 0.7, 0, 1};
  p[25] = {0.6, 0.8, 0, 1};  // knees, ankles straight down
  p[26] = {0.4, 0.8, 0, 1};
  p[27] = {0.6, 0.9, 0, 1};
  p[28] = {0.4, 0.9, 0, 1};
  return p;
}

TEST(KeypointJson, ComputedAnglesFollowSkeletonTopologySection5) {
  std::array<double, kAngleCount> a{};
  angles_from_image_points(hand_pose(), a);
  EXPECT_NEAR(a[0], 1.0, 1e-12);   // shoulder_L: elbow and hip both straight below
  EXPECT_NEAR(a[2], 0.0, 1e-12);   // elbow_L: 90°
  EXPECT_NEAR(a[3], -1.0, 1e-12);  // elbow_R: straight
  EXPECT_NEAR(a[4], -1.0, 1e-12);  // hip_L: shoulder above, knee below
  EXPECT_NEAR(a[6], -1.0, 1e-12);  // knee_L: straight
  EXPECT_NEAR(a[8], 1.0,
              1e-12);  // spine: shoulders straight above the hips (image y down = world up)
}

TEST(KeypointJson, MissingAnglesEqualTheBvhPath) {
  // A small BVH through the BVH path; its projected points are fed back as
  // keypoint JSON without angles; the computed angles must equal the BVH
  // line's angles (the projection is a scale and a rotation, which keep
  // cosines).
  std::string bvh =
      "HIERARCHY\nROOT Hips\n{\nOFFSET 0 0 0\nCHANNELS 6 Xposition Yposition Zposition Zrotation "
      "Xrotation Yrotation\n"
      "JOINT LeftUpLeg\n{\nOFFSET 10 0 0\nCHANNELS 3 Zrotation Xrotation Yrotation\n"
      "JOINT LeftLeg\n{\nOFFSET 0 -40 0\nCHANNELS 3 Zrotation Xrotation Yrotation\n"
      "JOINT LeftFoot\n{\nOFFSET 0 -40 5\nCHANNELS 3 Zrotation Xrotation Yrotation\nEnd "
      "Site\n{\nOFFSET 0 0 10\n}\n}\n}\n}\n"
      "JOINT RightUpLeg\n{\nOFFSET -10 0 0\nCHANNELS 3 Zrotation Xrotation Yrotation\n"
      "JOINT RightLeg\n{\nOFFSET 0 -40 0\nCHANNELS 3 Zrotation Xrotation Yrotation\nEnd "
      "Site\n{\nOFFSET 0 -40 0\n}\n}\n}\n"
      "JOINT Spine\n{\nOFFSET 0 20 0\nCHANNELS 3 Zrotation Xrotation Yrotation\n"
      "JOINT LeftArm\n{\nOFFSET 15 30 0\nCHANNELS 3 Zrotation Xrotation Yrotation\n"
      "JOINT LeftForeArm\n{\nOFFSET 25 0 0\nCHANNELS 3 Zrotation Xrotation Yrotation\n"
      "JOINT LeftHand\n{\nOFFSET 25 0 0\nCHANNELS 3 Zrotation Xrotation Yrotation\nEnd "
      "Site\n{\nOFFSET 5 0 0\n}\n}\n}\n}\n"
      "JOINT RightArm\n{\nOFFSET -15 30 0\nCHANNELS 3 Zrotation Xrotation Yrotation\n"
      "JOINT RightForeArm\n{\nOFFSET -25 0 0\nCHANNELS 3 Zrotation Xrotation Yrotation\nEnd "
      "Site\n{\nOFFSET -25 0 0\n}\n}\n}\n"
      "JOINT Head\n{\nOFFSET 0 40 0\nCHANNELS 3 Zrotation Xrotation Yrotation\nEnd Site\n{\nOFFSET "
      "0 10 0\n}\n}\n}\n}\n"
      "MOTION\nFrames: 3\nFrame Time: 0.0333333\n";
  // 42 channels; frame 0 the rest pose (only a root height), then two bent
  // poses with values that differ per channel.
  for (int f = 0; f < 3; ++f) {
    for (int c = 0; c < 42; ++c) {
      const double v = c == 1 ? 90.0 : (f == 0 ? 0.0 : std::fmod(c * 37.0 * f, 120.0) - 60.0);
      bvh += (c ? " " : "") + std::to_string(v);
    }
    bvh += "\n";
  }
  std::string ndjson;
  auto r = convert_bvh(bvh, ConvertOptions{}, [&](std::string_view c) {
    ndjson.append(c);
    return true;
  });
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  ASSERT_EQ(r->frames, 3u);
  std::istringstream lines(ndjson);
  std::string line;
  std::string doc = R"({"format":"mediapipe33@0.1.0","frames":[)";
  std::vector<core::Json> bvh_angles;
  for (int f = 0; std::getline(lines, line); ++f) {
    auto j = core::parse_json_strict(line);
    ASSERT_TRUE(j.ok());
    bvh_angles.push_back((*j)["angles"]);
    doc += (f ? "," : "") + std::string(R"({"points":)") + (*j)["points"].dump() + "}";
  }
  doc += "]}";
  std::string out = convert(doc);
  std::istringstream out_lines(out);
  std::size_t f = 0;
  for (; std::getline(out_lines, line); ++f) {
    auto j = core::parse_json_strict(line);
    ASSERT_TRUE(j.ok());
    ASSERT_LT(f, bvh_angles.size());
    for (std::size_t k = 0; k < kAngleCount; ++k)
      EXPECT_NEAR((*j)["angles"][k].get<double>(), bvh_angles[f][k].get<double>(), 1e-9)
          << "frame " << f << " angle " << k;
  }
  EXPECT_EQ(f, 3u);
}

TEST(MotionFormat, DetectedFromContent) {
  EXPECT_EQ(detect_motion_format("HIERARCHY\nROOT a"), MotionFormat::kBvh);
  EXPECT_EQ(detect_motion_format("\xEF\xBB\xBF \r\n\thierarchy"), MotionFormat::kBvh);
  EXPECT_EQ(detect_motion_format("  {\"format\":1}"), MotionFormat::kKeypointJson);
  EXPECT_EQ(detect_motion_format("[1]"), MotionFormat::kUnknown);
  EXPECT_EQ(detect_motion_format("HIERARCH"), MotionFormat::kUnknown);
  EXPECT_EQ(detect_motion_format(""), MotionFormat::kUnknown);
}

// The one sniffer the CLI and the server share: Assimp's formats first, then
// BVH and keypoint JSON; the name plays no part.
TEST(MotionFormat, TheFileKindIsJudgedByContent) {
  EXPECT_EQ(detect_motion_file("HIERARCHY\nROOT a"), MotionFileKind::kBvh);
  EXPECT_EQ(detect_motion_file(" {\"frames\":[]}"), MotionFileKind::kKeypointJson);
  EXPECT_EQ(detect_motion_file("{\"asset\":{\"version\":\"2.0\"}}"), MotionFileKind::kGltf);
  EXPECT_EQ(detect_motion_file(std::string_view("glTF\x02\0\0\0\x0c\0\0\0", 12)),
            MotionFileKind::kGlb);
  EXPECT_EQ(detect_motion_file("Kaydara FBX Binary  \0\x1a\0"), MotionFileKind::kFbx);
  EXPECT_EQ(detect_motion_file("; FBX 7.4.0 project file\n"), MotionFileKind::kFbx);
  EXPECT_EQ(detect_motion_file("hello"), MotionFileKind::kUnknown);
  EXPECT_EQ(motion_file_kind_name(MotionFileKind::kKeypointJson), "json");
  EXPECT_EQ(motion_file_kind_name(MotionFileKind::kUnknown), "unknown");
  EXPECT_TRUE(is_assimp_kind(MotionFileKind::kGlb));
  EXPECT_FALSE(is_assimp_kind(MotionFileKind::kBvh));
  EXPECT_EQ(unknown_motion_file_error().code, "MOTION_FORMAT");
}

}  // namespace
}  // namespace charkit::motion
