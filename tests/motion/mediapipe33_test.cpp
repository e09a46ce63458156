// Joint-name normaliser, default table, joint maps, and the pose job.
#include <gtest/gtest.h>

#include <cmath>

#include "bvh_test_util.h"
#include "charkit/motion/mediapipe33.h"

namespace charkit::motion {
namespace {

TEST(MediaPipe33, PointNamesAndIndices) {
  EXPECT_EQ(point_name(0), "nose");
  EXPECT_EQ(point_name(15), "left_wrist");
  EXPECT_EQ(point_name(32), "right_foot_index");
  EXPECT_EQ(point_index("left_heel"), 29u);
  EXPECT_EQ(point_index("7"), 7u);
  EXPECT_FALSE(point_index("33").has_value());
  EXPECT_FALSE(point_index("07").has_value());
  EXPECT_FALSE(point_index("Left_Wrist").has_value());
  EXPECT_EQ(angle_name(0), "shoulder_L");
  EXPECT_EQ(angle_name(8), "spine");
}

TEST(JointNames, NormaliserFoldsTheCommonRigs) {
  const std::pair<const char*, const char*> cases[] = {
      // Mixamo and namespaces
      {"mixamorig:LeftUpLeg", "leftupleg"},
      {"mixamorig1:LeftUpLeg", "leftupleg"},
      {"Character|mixamorig:Hips", "hips"},
      {"mixamorig_LeftHand", "lefthand"},
      // 3ds Max Biped
      {"Bip01 L Thigh", "leftupleg"},
      {"Bip001_R_Calf", "rightleg"},
      {"Bip01 L UpperArm", "leftarm"},
      {"Bip01 R Forearm", "rightforearm"},
      {"Bip01 R Toe0", "righttoebase"},
      {"Bip01 Head", "head"},
      {"Bip01", "bip01"},
      // MotionBuilder / HumanIK
      {"Character1_LeftHand", "lefthand"},
      // Poser
      {"lThigh", "leftupleg"},
      {"rShldr", "rightarm"},
      {"lForeArm", "leftforearm"},
      {"rShin", "rightleg"},
      // CMU (cgspeed BVH and ASF names)
      {"LHipJoint", "lefthipjoint"},
      {"LeftUpLeg", "leftupleg"},
      {"lhumerus", "leftarm"},
      {"rfemur", "rightupleg"},
      {"lowerback", "lowerback"},
      {"LowerBack", "lowerback"},
      // Bandai-Namco style and engine rigs
      {"joint_Root", "root"},
      {"UpperArm_L", "leftarm"},
      {"LowerLeg_R", "rightleg"},
      {"Toes_L", "lefttoebase"},
      {"thigh_r", "rightupleg"},
      {"ball_l", "lefttoebase"},
      // candidates of the default table (the model and motion format contract)
      {"LShoulder", "leftshoulder"},
      {"Head_Nub", "headnub"},
      {"Neck1", "neck1"},
      {"RightToe", "righttoe"},
      {"Root", "root"},
  };
  for (const auto& [in, want] : cases) EXPECT_EQ(normalise_joint_name(in), want) << in;
}

TEST(JointTable, DefaultIsTheSeedTable) {
  JointTable t = default_joint_table();
  EXPECT_EQ(t.candidates[0], (std::vector<std::string>{"Head", "Neck1", "Head_Nub"}));
  EXPECT_EQ(t.candidates[12], (std::vector<std::string>{"RightShoulder", "RightArm", "RShoulder"}));
  EXPECT_EQ(t.candidates[31], (std::vector<std::string>{"LeftToeBase", "LeftToe", "LToe"}));
  std::size_t mapped_rows = 0;
  for (std::size_t i = 0; i < kPointCount; ++i) {
    if (!t.candidates[i].empty()) ++mapped_rows;
    EXPECT_EQ(t.candidates[i].empty(), is_estimated_point(i)) << i;
  }
  EXPECT_EQ(mapped_rows, 15u);
}

std::vector<BvhJoint> skeleton(std::initializer_list<std::pair<const char*, int>> names) {
  std::vector<BvhJoint> js;
  for (auto [n, parent] : names) {
    BvhJoint j;
    j.name = n;
    j.parent = parent;
    js.push_back(j);
  }
  return js;
}

TEST(JointMapping, CandidatesInOrderExactBeforeNormalised) {
  // Both LeftShoulder and LeftArm exist: the first candidate wins.
  auto js = skeleton({{"Hips", -1}, {"LeftArm", 0}, {"LeftShoulder", 0}, {"lefthand", 0}});
  JointMapping m = map_joints(js, default_joint_table());
  EXPECT_EQ(m.points[11].joint, 2);
  EXPECT_EQ(m.points[15].joint, 3);  // case-insensitive
  EXPECT_EQ(m.points[15].source, PointSource::kMapped);
  EXPECT_EQ(m.points[13].source, PointSource::kMissing);
  EXPECT_EQ(m.points[1].source, PointSource::kEstimated);
  EXPECT_EQ(m.pelvis_joint, 0);  // hips not both mapped: the Hips joint
}

TEST(JointMapping, BipedPoserAndBandaiNamesMapThroughTheNormaliser) {
  auto biped = skeleton({{"Bip01", -1},
                         {"Bip01 Pelvis", 0},
                         {"Bip01 L Thigh", 1},
                         {"Bip01 L Calf", 2},
                         {"Bip01 L Foot", 3},
                         {"Bip01 L Toe0", 4},
                         {"Bip01 R Thigh", 1},
                         {"Bip01 L UpperArm", 1},
                         {"Bip01 L Forearm", 7},
                         {"Bip01 L Hand", 8},
                         {"Bip01 Head", 1}});
  JointMapping m = map_joints(biped, default_joint_table());
  EXPECT_EQ(m.points[23].joint, 2);
  EXPECT_EQ(m.points[25].joint, 3);
  EXPECT_EQ(m.points[27].joint, 4);
  EXPECT_EQ(m.points[31].joint, 5);
  EXPECT_EQ(m.points[24].joint, 6);
  EXPECT_EQ(m.points[11].joint, 7);
  EXPECT_EQ(m.points[13].joint, 8);
  EXPECT_EQ(m.points[15].joint, 9);
  EXPECT_EQ(m.points[0].joint, 10);
  EXPECT_EQ(m.pelvis_joint, -1);  // both hips mapped: their midpoint

  auto poser = skeleton(
      {{"hip", -1}, {"lThigh", 0}, {"lShin", 1}, {"lFoot", 2}, {"rShldr", 0}, {"rForeArm", 4}});
  JointMapping mp = map_joints(poser, default_joint_table());
  EXPECT_EQ(mp.points[23].joint, 1);
  EXPECT_EQ(mp.points[25].joint, 2);
  EXPECT_EQ(mp.points[27].joint, 3);
  EXPECT_EQ(mp.points[12].joint, 4);
  EXPECT_EQ(mp.points[14].joint, 5);
  EXPECT_EQ(mp.pelvis_joint, 0);

  auto bandai = skeleton({{"joint_Root", -1},
                          {"Hips", 0},
                          {"UpperLeg_L", 1},
                          {"LowerLeg_L", 2},
                          {"Foot_L", 3},
                          {"Toes_L", 4},
                          {"Shoulder_L", 1},
                          {"UpperArm_L", 6},
                          {"LowerArm_L", 7},
                          {"Hand_L", 8}});
  JointMapping mb = map_joints(bandai, default_joint_table());
  EXPECT_EQ(mb.points[23].joint, 2);
  EXPECT_EQ(mb.points[25].joint, 3);
  EXPECT_EQ(mb.points[27].joint, 4);
  EXPECT_EQ(mb.points[31].joint, 5);
  EXPECT_EQ(mb.points[11].joint, 6);  // "Shoulder_L" is the table's first candidate, LeftShoulder
  EXPECT_EQ(mb.points[13].joint, 8);
  EXPECT_EQ(mb.points[15].joint, 9);
  EXPECT_EQ(mb.pelvis_joint, 1);  // Hips, not joint_Root
}

TEST(JointMapping, EndSitesAreNeverMatched) {
  auto js = skeleton({{"Hips", -1}, {"Head", 0}});
  js[1].end_site = true;
  EXPECT_EQ(map_joints(js, default_joint_table()).points[0].source, PointSource::kMissing);
}

TEST(JointMap, UserNamesComeFirst) {
  auto t = apply_joint_map(default_joint_table(),
                           R"({"left_shoulder": ["L_UpperArm"], "1": ["EyeL", "Eye_L"]})");
  ASSERT_TRUE(t.ok()) << t.error().to_string();
  EXPECT_EQ(t->candidates[11].front(), "L_UpperArm");
  EXPECT_EQ(t->candidates[11].size(), 4u);
  EXPECT_EQ(t->candidates[1], (std::vector<std::string>{"EyeL", "Eye_L"}));
  auto js = skeleton({{"Hips", -1}, {"LeftShoulder", 0}, {"L_UpperArm", 1}, {"Eye_L", 0}});
  JointMapping m = map_joints(js, *t);
  EXPECT_EQ(m.points[11].joint, 2);
  EXPECT_EQ(m.points[1].joint, 3);
  EXPECT_EQ(m.points[1].source, PointSource::kMapped);
}

TEST(JointMap, ErrorsCarryAJsonPointer) {
  const std::pair<const char*, const char*> cases[] = {
      {R"([])", ""},
      {R"({"left_wrist": "Hand"})", "/left_wrist"},
      {R"({"nose": ["Head", 1]})", "/nose/1"},
      {R"({"nose": [""]})", "/nose/0"},
      {R"({"a/b": []})", "/a~1b"},
      {R"({"33": []})", "/33"},
      {R"({"nose": ["a"], "0": ["b"]})", "/0"},
  };
  for (const auto& [json, ptr] : cases) {
    auto t = apply_joint_map(default_joint_table(), json);
    ASSERT_FALSE(t.ok()) << json;
    EXPECT_EQ(t.error().code, "JOINT_MAP") << json;
    EXPECT_EQ(t.error().location.pointer, ptr) << json;
  }
  auto syntax = apply_joint_map(default_joint_table(), "{\"nose\": [");
  ASSERT_FALSE(syntax.ok());
  EXPECT_EQ(syntax.error().code, "JSON_SYNTAX");
}

// ---- pose job ------------------------------------------------------------------

struct PoseFixture {
  std::vector<BvhJoint> joints;
  JointMapping mapping;
  std::vector<Vec3> world;
  std::array<Keypoint, kPointCount> points{};
  std::array<double, kAngleCount> angles{};

  void run(UpAxis up = UpAxis::kY) {
    PoseJob job{&mapping, world, up, points, angles};
    ASSERT_TRUE(job.validate());
    ASSERT_TRUE(job.run());
  }
};

// A T-pose-like figure in Y-up world units; hip centre at (0, 100, 0).
PoseFixture figure() {
  PoseFixture f;
  f.joints = skeleton({{"Hips", -1},
                       {"LeftUpLeg", 0},
                       {"RightUpLeg", 0},
                       {"LeftLeg", 1},
                       {"RightLeg", 2},
                       {"LeftFoot", 3},
                       {"RightFoot", 4},
                       {"LeftArm", 0},
                       {"RightArm", 0},
                       {"LeftForeArm", 7},
                       {"RightForeArm", 8},
                       {"LeftHand", 9},
                       {"RightHand", 10},
                       {"Head", 0},
                       {"LeftToeBase", 5}});
  f.world = {{0, 100, 0},   {10, 100, 0}, {-10, 100, 0},  {10, 50, 0},   {-10, 50, 0},
             {10, 10, 0},   {-10, 10, 0}, {20, 150, 0},   {-20, 150, 0}, {45, 150, 0},
             {-20, 125, 0}, {70, 150, 0}, {-20, 125, 25}, {0, 170, 0},   {10, 0, 15}};
  f.mapping = map_joints(f.joints, default_joint_table());
  return f;
}

TEST(PoseJob, MappedPointsArePelvisCentred) {
  PoseFixture f = figure();
  EXPECT_EQ(f.mapping.pelvis_joint, -1);  // midpoint of LeftUpLeg and RightUpLeg
  f.run();
  EXPECT_DOUBLE_EQ(f.points[23].x, 10);
  EXPECT_DOUBLE_EQ(f.points[23].y, 0);
  EXPECT_DOUBLE_EQ(f.points[15].x, 70);
  EXPECT_DOUBLE_EQ(f.points[15].y, 50);
  EXPECT_DOUBLE_EQ(f.points[0].y, 70);
  EXPECT_DOUBLE_EQ(f.points[31].z, 15);
  EXPECT_EQ(f.points[15].confidence, 1.0);
}

TEST(PoseJob, MissingPointTakesTheNearestAvailableParentWithConfidenceZero) {
  PoseFixture f = figure();
  // right_foot_index (32) has no RightToeBase: its parent right_ankle (28).
  f.run();
  EXPECT_EQ(f.points[32].confidence, 0.0);
  EXPECT_DOUBLE_EQ(f.points[32].x, -10);
  EXPECT_DOUBLE_EQ(f.points[32].y, -90);
  // Without the head, the nose falls back to the shoulder centre.
  f.mapping.points[0] = PointMapping{PointSource::kMissing, -1};
  f.run();
  EXPECT_EQ(f.points[0].confidence, 0.0);
  EXPECT_DOUBLE_EQ(f.points[0].x, 0);
  EXPECT_DOUBLE_EQ(f.points[0].y, 50);
}

TEST(PoseJob, EstimatedPointsFollowTheRules) {
  PoseFixture f = figure();
  f.run();
  for (std::size_t i : {1u, 5u, 10u, 17u, 22u, 29u, 30u})
    EXPECT_EQ(f.points[i].confidence, 0.5) << i;
  // Shoulder width 40 (left_shoulder x 20, right x −20), nose at (0,70,0),
  // shoulder centre (0,50,0): up = +y, left = +x.
  // left_eye = nose + 0.10·40·up + 0.10·40·left = (4, 74, 0).
  EXPECT_NEAR(f.points[2].x, 4, 1e-12);
  EXPECT_NEAR(f.points[2].y, 74, 1e-12);
  // right_ear = nose + 0.05·40·up − 0.20·40·left = (−8, 72, 0).
  EXPECT_NEAR(f.points[8].x, -8, 1e-12);
  EXPECT_NEAR(f.points[8].y, 72, 1e-12);
  // left_index = wrist + 0.40·(wrist − elbow) = (70,50,0) + 0.4·(25,0,0) = (80, 50, 0).
  EXPECT_NEAR(f.points[19].x, 80, 1e-12);
  // left_heel: ankle (10,−90,0), foot index (10,−100,15): (10, −100, −5.25).
  EXPECT_NEAR(f.points[29].x, 10, 1e-12);
  EXPECT_NEAR(f.points[29].y, -100, 1e-12);
  EXPECT_NEAR(f.points[29].z, -5.25, 1e-12);
}

TEST(PoseJob, AngleCosinesFollowSection5) {
  PoseFixture f = figure();
  f.run();
  // shoulder_L at (20,50): to elbow (+x), to left hip (10,0) → (−10,−50).
  EXPECT_NEAR(f.angles[0], (25.0 * -10.0) / (25.0 * std::sqrt(10.0 * 10.0 + 50.0 * 50.0)), 1e-12);
  EXPECT_NEAR(f.angles[2], -1.0, 1e-12);  // left elbow straight
  EXPECT_NEAR(f.angles[3], 0.0, 1e-12);   // right elbow: to shoulder +y, to wrist +z
  EXPECT_NEAR(f.angles[6], -1.0, 1e-12);  // left knee straight
  EXPECT_NEAR(f.angles[8], 1.0, 1e-12);   // upright trunk
  for (double a : f.angles) {
    EXPECT_GE(a, -1.0);
    EXPECT_LE(a, 1.0);
  }
}

TEST(PoseJob, DegenerateVectorGivesZero) {
  EXPECT_EQ(angle_cosine({0, 0, 0}, {1, 0, 0}), 0.0);
  EXPECT_EQ(angle_cosine({1, 0, 0}, {1e-12, 0, 0}), 0.0);
  EXPECT_NEAR(angle_cosine({1, 0, 0}, {0, 2, 0}), 0.0, 1e-15);
  EXPECT_NEAR(angle_cosine({1, 1, 0}, {2, 2, 0}), 1.0, 1e-15);
  EXPECT_EQ(angle_cosine({1, 0, 0}, {-3, 0, 0}), -1.0);
  PoseFixture f = figure();
  f.mapping.points[13] =
      PointMapping{PointSource::kMissing, -1};  // left elbow collapses onto the shoulder
  f.run();
  EXPECT_EQ(f.angles[0], 0.0);
  EXPECT_EQ(f.angles[2], 0.0);
}

TEST(PoseJob, ZUpRotatesMinus90AboutX) {
  PoseFixture f = figure();
  // The same figure in Z-up: (x, y, z)_yup = (x, z, −y)_zup → world_zup = (x, −z, y).
  for (auto& w : f.world) w = {w[0], -w[2], w[1]};
  f.run(UpAxis::kZ);
  EXPECT_NEAR(f.points[15].x, 70, 1e-12);
  EXPECT_NEAR(f.points[15].y, 50, 1e-12);
  EXPECT_NEAR(f.points[31].z, 15, 1e-12);
}

TEST(Projection, SeedFormulaAndGuards) {
  EXPECT_DOUBLE_EQ(projection_scale(70), 0.005);
  EXPECT_EQ(projection_scale(0), 1.0);
  Keypoint k = project(Keypoint{70, -35, 14, 1.0}, 0.005);
  EXPECT_DOUBLE_EQ(k.x, 0.85);
  EXPECT_DOUBLE_EQ(k.y, 0.675);
  EXPECT_DOUBLE_EQ(k.z, -0.07);
  EXPECT_EQ(k.confidence, 1.0);
  Keypoint zero = project(Keypoint{0, 0, 0, 0.5}, projection_scale(0));
  EXPECT_EQ(zero.x, 0.5);
  EXPECT_EQ(zero.y, 0.5);
  EXPECT_EQ(zero.z, 0.0);
}

}  // namespace
}  // namespace charkit::motion
