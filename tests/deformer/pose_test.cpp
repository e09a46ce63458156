#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "charkit/deformer/detail/prng.h"
#include "charkit/deformer/pose.h"

using namespace charkit::deformer;

namespace {
constexpr double kPi = std::numbers::pi;
const double kS = std::sqrt(0.5);

InputSpec two_bone_spec() {
  InputSpec spec;
  BoneInput arm{"upperarm_l", {}};
  arm.axes[0] = {true, -30.0, 60.0};
  arm.axes[1] = {false, -10.0, 10.0};
  arm.axes[2] = {true, 0.0, 90.0};
  BoneInput leg{"thigh_r", {}};
  leg.axes[0] = {true, -90.0, 20.0};
  leg.axes[1] = {true, -5.0, 5.0};
  leg.axes[2] = {true, 10.0, 10.0};
  spec.bones = {arm, leg};
  spec.curves = {{"jaw_open", 0.0, 1.0}};
  return spec;
}
}  // namespace

TEST(Pose, EulerXyzAppliesXThenYThenZ) {
  const Quaternion qx = quaternion_from_euler_xyz_degrees(90.0, 0.0, 0.0);
  EXPECT_NEAR(qx.x, kS, 1e-15);
  EXPECT_NEAR(qx.w, kS, 1e-15);
  EXPECT_EQ(qx.y, 0.0);
  EXPECT_EQ(qx.z, 0.0);
  // X by 90 then Y by 90: qy * qx = (0.5, 0.5, -0.5, 0.5). Check: x stays x
  // under the X turn, then Y(90) takes x to -z; y goes to z, then to x.
  const Quaternion q = quaternion_from_euler_xyz_degrees(90.0, 90.0, 0.0);
  EXPECT_NEAR(q.x, 0.5, 1e-15);
  EXPECT_NEAR(q.y, 0.5, 1e-15);
  EXPECT_NEAR(q.z, -0.5, 1e-15);
  EXPECT_NEAR(q.w, 0.5, 1e-15);
  const auto m = engine_rotation_features(q);  // rows 0 and 1 of R
  // R e_x = (R00, R10, R20) = (0, 0, -1); R e_y = (R01, R11, R21) = (1, 0, 0).
  EXPECT_NEAR(m[0], 0.0, 1e-15);  // R00
  EXPECT_NEAR(m[3], 0.0, 1e-15);  // R10
  EXPECT_NEAR(m[1], 1.0, 1e-15);  // R01
  EXPECT_NEAR(m[4], 0.0, 1e-15);  // R11
}

TEST(Pose, AxisAngle) {
  for (double v : axis_angle(Quaternion{})) EXPECT_EQ(v, 0.0);
  auto a = axis_angle(quaternion_from_euler_xyz_degrees(90.0, 0.0, 0.0));
  EXPECT_NEAR(a[0], kPi / 2, 1e-15);
  EXPECT_EQ(a[1], 0.0);
  EXPECT_EQ(a[2], 0.0);
  // Tiny angle: 1e-9 rad about z; no loss of relative precision.
  const double t = 1e-9;
  a = axis_angle(Quaternion{0.0, 0.0, std::sin(t / 2), std::cos(t / 2)});
  EXPECT_NEAR(a[2], t, 1e-24);
  // Near pi about y, and exactly pi about x.
  const double big = kPi - 1e-7;
  a = axis_angle(Quaternion{0.0, std::sin(big / 2), 0.0, std::cos(big / 2)});
  EXPECT_NEAR(a[1], big, 1e-14);
  a = axis_angle(Quaternion{1.0, 0.0, 0.0, 0.0});
  EXPECT_NEAR(a[0], kPi, 1e-15);
  // q and -q are the same rotation: -q gives the short way round, not 2pi - angle.
  a = axis_angle(Quaternion{-std::sin(0.25), 0.0, 0.0, -std::cos(0.25)});
  EXPECT_NEAR(a[0], 0.5, 1e-15);
  // A non-unit quaternion is normalised first.
  a = axis_angle(Quaternion{0.0, 0.0, 2.0 * kS, 2.0 * kS});
  EXPECT_NEAR(a[2], kPi / 2, 1e-15);
}

TEST(Pose, EngineFeaturesAreTheFirstTwoRows) {
  const auto id = engine_rotation_features(Quaternion{});
  const std::array<double, 6> want_id = {1, 0, 0, 0, 1, 0};
  EXPECT_EQ(id, want_id);
  // Rz(90) = [[0,-1,0],[1,0,0],[0,0,1]]: rows 0 and 1 are (0,-1,0), (1,0,0).
  const auto rz = engine_rotation_features(Quaternion{0.0, 0.0, kS, kS});
  const std::array<double, 6> want = {0, -1, 0, 1, 0, 0};
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(rz[i], want[i], 1e-15) << i;
}

TEST(Pose, ValidateSpec) {
  InputSpec spec = two_bone_spec();
  EXPECT_TRUE(validate(spec).ok());
  spec.bones[1].name = "upperarm_l";
  auto st = validate(spec);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, "POSE_SPEC_NAME");
  EXPECT_EQ(st.error().location.pointer, "/bones/1/name");
  spec = two_bone_spec();
  spec.bones[0].axes[2].min_deg = 100.0;
  st = validate(spec);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, "POSE_SPEC_RANGE");
  EXPECT_EQ(st.error().location.pointer, "/bones/0/axes/2");
  spec = two_bone_spec();
  spec.curves[0].max = NAN;
  EXPECT_EQ(validate(spec).error().code, "POSE_SPEC_RANGE");
  // A bone and a curve may share a name (different kinds of input).
  spec = two_bone_spec();
  spec.curves[0].name = "thigh_r";
  EXPECT_TRUE(validate(spec).ok());
}

TEST(Pose, SamplingRestFirstThenUniformDrawsInOrder) {
  const InputSpec spec = two_bone_spec();
  SampleOptions o;
  o.random_poses = 50;
  o.seed = 1234;
  auto poses = sample_poses(spec, o);
  ASSERT_TRUE(poses.ok()) << poses.error().to_string();
  ASSERT_EQ(poses->size(), 51U);
  // Sample 0: rest, features exactly zero.
  std::vector<float> f(spec.feature_count());
  ASSERT_TRUE(pose_features(spec, (*poses)[0], f).ok());
  for (float v : f) EXPECT_EQ(v, 0.0F);
  // The documented draw order, replayed on our own Rng.
  Rng r(1234);
  for (std::size_t i = 1; i < poses->size(); ++i) {
    const Pose& p = (*poses)[i];
    const double ax = r.uniform(-30.0, 60.0);  // bone 0: x, (y disabled), z
    const double az = r.uniform(0.0, 90.0);
    const double bx = r.uniform(-90.0, 20.0);  // bone 1: x, y, z
    const double by = r.uniform(-5.0, 5.0);
    const double bz = r.uniform(10.0, 10.0);
    const double c = r.uniform(0.0, 1.0);
    const std::vector<double> want = {ax, 0.0, az, bx, by, bz};
    ASSERT_EQ(p.euler_deg, want) << i;
    EXPECT_EQ(p.euler_deg[5], 10.0);
    ASSERT_EQ(p.curves.size(), 1U);
    EXPECT_EQ(p.curves[0], c);
    const Quaternion q = quaternion_from_euler_xyz_degrees(ax, 0.0, az);
    EXPECT_EQ(p.rotations[0].x, q.x);
    EXPECT_EQ(p.rotations[0].w, q.w);
  }
  // Reproducible; another seed differs.
  auto again = sample_poses(spec, o);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)[7].euler_deg, (*poses)[7].euler_deg);
  o.seed = 1235;
  auto other = sample_poses(spec, o);
  ASSERT_TRUE(other.ok());
  EXPECT_NE((*other)[7].euler_deg, (*poses)[7].euler_deg);
}

TEST(Pose, SamplingRefusesTooMany) {
  SampleOptions o;
  o.random_poses = 1000;
  o.max_values = 1000;
  auto r = sample_poses(two_bone_spec(), o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "POSE_SAMPLE_TOO_MANY");
}

TEST(Pose, FeatureMatrixLayouts) {
  const InputSpec spec = two_bone_spec();
  Pose p = rest_pose(spec);
  p.rotations[1] = quaternion_from_euler_xyz_degrees(0.0, 0.0, 90.0);
  p.curves[0] = 0.75;
  const std::vector<Pose> poses = {rest_pose(spec), p};
  auto aa = feature_matrix(spec, poses, FeatureLayout::kAxisAngle);
  ASSERT_TRUE(aa.ok());
  ASSERT_EQ(aa->size(), 2U * 7U);
  for (std::size_t i = 0; i < 7; ++i) EXPECT_EQ((*aa)[i], 0.0F);
  const std::vector<float> want = {0, 0, 0, 0, 0, static_cast<float>(kPi / 2), 0.75F};
  for (std::size_t i = 0; i < 7; ++i) EXPECT_NEAR((*aa)[7 + i], want[i], 1e-7) << i;

  auto en = feature_matrix(spec, poses, FeatureLayout::kEngine);
  ASSERT_TRUE(en.ok());
  ASSERT_EQ(en->size(), 2U * 13U);
  const std::vector<float> rest_row = {1, 0, 0, 0, 1, 0, 1, 0, 0, 0, 1, 0, 0};
  for (std::size_t i = 0; i < 13; ++i) EXPECT_EQ((*en)[i], rest_row[i]) << i;
  const std::vector<float> row = {1, 0, 0, 0, 1, 0, 0, -1, 0, 1, 0, 0, 0.75F};
  for (std::size_t i = 0; i < 13; ++i) EXPECT_NEAR((*en)[13 + i], row[i], 1e-7) << i;

  // With rest rotations: local = rest * pose. Rest Rz(90) and pose Rz(-90) cancel.
  const std::vector<Quaternion> rest = {Quaternion{0.0, 0.0, kS, kS}, Quaternion{}};
  Pose q = rest_pose(spec);
  q.rotations[0] = Quaternion{0.0, 0.0, -kS, kS};
  auto er = feature_matrix(spec, std::vector<Pose>{q}, FeatureLayout::kEngine, rest);
  ASSERT_TRUE(er.ok());
  for (std::size_t i = 0; i < 13; ++i) EXPECT_NEAR((*er)[i], rest_row[i], 1e-7) << i;
}

TEST(Pose, FeatureShapeErrors) {
  const InputSpec spec = two_bone_spec();
  Pose p = rest_pose(spec);
  std::vector<float> out(6);
  EXPECT_EQ(pose_features(spec, p, out).error().code, "FEATURE_SHAPE");
  p.curves.clear();
  out.resize(spec.feature_count());
  EXPECT_EQ(pose_features(spec, p, out).error().code, "FEATURE_SHAPE");
  auto m = feature_matrix(spec, std::vector<Pose>{rest_pose(spec), p}, FeatureLayout::kAxisAngle);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.error().message.find("pose 1"), std::string::npos);
}
