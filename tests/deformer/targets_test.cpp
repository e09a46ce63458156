// Training targets: hand-computed bind-space deltas from a point cache, DQS
// on single-influence skins (zero correction), errors, and end to end on
// RiggedSimple.glb with Delta Mush.
#include "charkit/deformer/targets.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "charkit/deformer/pc2.h"

namespace charkit::deformer {
namespace {

// A rig by hand: joint "a" at the origin, child "b" at (1,0,0); inverse
// binds undo those rest positions. Vertices along x, each fully on a (x < 1)
// or b (x >= 1); one triangle strip so Delta Mush has neighbours.
scene::Rig hand_rig() {
  scene::Rig r;
  r.mesh_name = "hand";
  r.positions = {0, 0, 0, 0.5F, 0.5F, 0, 1, 0, 0, 1.5F, 0.5F, 0, 2, 0, 0};
  r.triangles = {0, 2, 1, 1, 2, 3, 2, 4, 3};
  for (float x : {0.F, 0.5F, 1.F, 1.5F, 2.F}) {
    r.joints.insert(r.joints.end(), {x < 1 ? 0u : 1u, 0, 0, 0});
    r.weights.insert(r.weights.end(), {1, 0, 0, 0});
  }
  r.skeleton.joint_names = {"a", "b"};
  r.skeleton.parents = {-1, 0};
  scene::Transform ta, tb;
  tb.translation = {1, 0, 0};
  r.skeleton.local_transforms = {ta, tb};
  scene::Mat4 ib = scene::kIdentity4;
  ib[12] = -1;
  r.skeleton.inverse_bind_matrices = {scene::kIdentity4, ib};
  r.joint_nodes = {0, 1};
  r.joint_parent_offsets = {scene::kIdentity4, scene::kIdentity4};
  return r;
}

InputSpec spec_for(const std::string& bone) {
  InputSpec s;
  s.bones.push_back({bone, {}});
  return s;
}

Pose pose_z(double deg) {
  Pose p;
  p.rotations = {quaternion_from_euler_xyz_degrees(0, 0, deg)};
  p.euler_deg = {0, 0, deg};
  return p;
}

TEST(RigTargets, CacheDeltaIsInverseSkinnedTargetMinusRest) {
  // Pose: b turned 90° about z. Vertex 4 (rest (2,0,0), on b) is skinned to
  // (1,1,0). The cache puts it where b's rotation would carry rest +
  // (0.1, 0, 0): (1, 1.1, 0). Inverse skinning gives (2.1, 0, 0): delta
  // (0.1, 0, 0). Every other vertex: cache = LBS, delta 0.
  const auto rig = hand_rig();
  const auto spec = spec_for("b");
  const std::vector<Pose> poses{rest_pose(spec), pose_z(90)};
  PointCache cache;
  cache.point_count = 5;
  cache.sample_count = 2;
  cache.positions = {0, 0, 0, 0.5F, 0.5F, 0, 1, 0, 0, 1.5F, 0.5F, 0, 2, 0,    0,  // rest
                     0, 0, 0, 0.5F, 0.5F, 0, 1, 0, 0, 0.5F, 0.5F, 0, 1, 1.1F, 0};
  // Through the PC2 bytes, as a cache file would arrive.
  auto bytes = write_pc2(cache);
  ASSERT_TRUE(bytes);
  auto read = read_pc2(*bytes);
  ASSERT_TRUE(read);
  auto t = build_targets_from_cache(rig, spec, poses, *read);
  ASSERT_TRUE(t) << t.error().to_string();
  const Dataset& d = t->dataset;
  ASSERT_EQ(d.sample_count, 2u);
  ASSERT_EQ(d.vertex_count, 5u);
  for (std::size_t i = 0; i < 15; ++i) EXPECT_NEAR(d.deltas[i], 0.0F, 1e-6F);  // rest
  const float* s1 = &d.deltas[15];
  for (std::size_t i = 0; i < 12; ++i) EXPECT_NEAR(s1[i], 0.0F, 1e-6F) << i;
  EXPECT_NEAR(s1[12], 0.1F, 1e-6F);
  EXPECT_NEAR(s1[13], 0.0F, 1e-6F);
  EXPECT_NEAR(s1[14], 0.0F, 1e-6F);
  // LBS is off by 0.1 at one vertex of ten.
  EXPECT_NEAR(t->lbs.max_error, 0.1, 1e-6);
  EXPECT_NEAR(t->lbs.mean_error, 0.1 / 10, 1e-7);
  // Features: axis-angle of 90° about z.
  EXPECT_NEAR(d.features[3 + 2], std::numbers::pi / 2, 1e-6);
}

TEST(RigTargets, DqsOfSingleInfluenceSkinNeedsNoCorrection) {
  const auto rig = hand_rig();
  const auto spec = spec_for("b");
  const std::vector<Pose> poses{rest_pose(spec), pose_z(30), pose_z(-70)};
  TargetOptions dqs;
  dqs.source = TargetSource::kDualQuaternion;
  auto t = build_targets(rig, spec, poses, dqs);
  ASSERT_TRUE(t) << t.error().to_string();
  for (float x : t->dataset.deltas) EXPECT_NEAR(x, 0.0F, 1e-5F);
  EXPECT_LT(t->lbs.max_error, 1e-5);
}

TEST(RigTargets, ErrorsNameTheProblem) {
  const auto rig = hand_rig();
  const std::vector<Pose> poses{rest_pose(spec_for("b"))};
  auto bad_bone = build_targets(rig, spec_for("nope"), poses);
  ASSERT_FALSE(bad_bone);
  EXPECT_EQ(bad_bone.error().code, "TARGETS_BONE");
  PointCache cache;
  cache.point_count = 6;  // the rig has 5 vertices
  cache.sample_count = 1;
  cache.positions.assign(18, 0.0F);
  auto mismatch = build_targets_from_cache(rig, spec_for("b"), poses, cache);
  ASSERT_FALSE(mismatch);
  EXPECT_EQ(mismatch.error().code, "TARGETS_VERTEX_COUNT");
}

TEST(RigTargets, EndToEndDeltaMushOnRiggedSimple) {
  auto rig = scene::load_rig_file(std::string(CHARKIT_TEST_DATA) + "/models/RiggedSimple.glb");
  ASSERT_TRUE(rig) << rig.error().to_string();
  InputSpec spec = spec_for("joint_3");  // the upper bone (node 3, unnamed)
  spec.bones[0].axes[1].enabled = false;
  SampleOptions so;
  so.random_poses = 50;
  so.seed = 5;
  auto poses = sample_poses(spec, so);
  ASSERT_TRUE(poses);
  TargetOptions opt;
  opt.source = TargetSource::kDeltaMush;
  opt.delta_mush.iterations = 10;
  opt.delta_mush.step = 0.5;
  auto t = build_targets(*rig, spec, *poses, opt);
  ASSERT_TRUE(t) << t.error().to_string();
  const Dataset& d = t->dataset;
  EXPECT_TRUE(validate(d));
  EXPECT_EQ(d.sample_count, 51u);
  EXPECT_EQ(d.vertex_count, rig->vertex_count());
  float extent = 1.0F;
  for (float x : rig->positions) extent = std::max(extent, std::abs(x));
  // Sample 0 is the rest pose: zero features and (to float rounding) zero delta.
  for (std::size_t f = 0; f < d.feature_count(); ++f) EXPECT_EQ(d.features[f], 0.0F);
  for (std::size_t i = 0; i < 3 * d.vertex_count; ++i)
    EXPECT_NEAR(d.deltas[i], 0.0F, 1e-4F * extent) << i;
  // Bent poses: Delta Mush differs from LBS somewhere, and not wildly.
  EXPECT_GT(t->lbs.max_error, 1e-3 * extent);
  EXPECT_GT(t->lbs.max_error, t->lbs.mean_error);
  EXPECT_LT(t->lbs.max_error, extent);
  // The engine layout gives the same deltas with 6 features per bone.
  opt.layout = FeatureLayout::kEngine;
  auto te = build_targets(*rig, spec, *poses, opt);
  ASSERT_TRUE(te);
  EXPECT_EQ(te->dataset.features.size(), 51u * 6u);
  EXPECT_EQ(te->dataset.deltas, d.deltas);
}

}  // namespace
}  // namespace charkit::deformer
