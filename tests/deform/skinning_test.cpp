// Reference deformers: hand-computed LBS, DQS volume preservation and the
// antipodality fix, Delta Mush identities, inverse LBS.
#include "charkit/deform/skinning.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <numbers>
#include <span>
#include <vector>

namespace charkit::deform {
namespace {

using Mat = std::array<float, 16>;  // column-major

Mat identity() {
  return {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
}

Mat translation(float x, float y, float z) {
  Mat m = identity();
  m[12] = x;
  m[13] = y;
  m[14] = z;
  return m;
}

// Rotation by deg degrees about the x axis (column-major).
Mat rot_x(double deg) {
  const double a = deg * std::numbers::pi / 180.0;
  const auto c = static_cast<float>(std::cos(a)), s = static_cast<float>(std::sin(a));
  return {1, 0, 0, 0, 0, c, s, 0, 0, -s, c, 0, 0, 0, 0, 1};
}

// The jobs as the library's callers use them: validate, then run; the joint
// count is that of the matrices given.
core::Status skin_with(SkinMethod method, const SkinView& skin, std::span<const float> m,
                       std::span<float> out, const core::RunOptions& options = {}) {
  const SkinJob job{skin, m.size() / 16, m, out, method};
  if (auto st = job.validate(); !st) return st;
  return job.run(options);
}
core::Status linear_blend_skin(const SkinView& skin, std::span<const float> m,
                               std::span<float> out) {
  return skin_with(SkinMethod::kLinear, skin, m, out);
}
core::Status dual_quaternion_skin(const SkinView& skin, std::span<const float> m,
                                  std::span<float> out) {
  return skin_with(SkinMethod::kDualQuaternion, skin, m, out);
}
core::Status inverse_linear_blend_skin(const SkinView& skin, std::span<const float> m,
                                       std::span<const float> posed, std::span<float> out,
                                       const core::RunOptions& options = {}) {
  const InverseSkinJob job{skin, m.size() / 16, m, posed, out};
  if (auto st = job.validate(); !st) return st;
  return job.run(options);
}

Mat rot_z(double deg) {
  const double a = deg * std::numbers::pi / 180.0;
  const auto c = static_cast<float>(std::cos(a)), s = static_cast<float>(std::sin(a));
  return {c, s, 0, 0, -s, c, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
}

Mat mul(const Mat& a, const Mat& b) {
  Mat r{};
  for (int c = 0; c < 4; ++c)
    for (int row = 0; row < 4; ++row) {
      float s = 0;
      for (int k = 0; k < 4; ++k) s += a[k * 4 + row] * b[c * 4 + k];
      r[c * 4 + row] = s;
    }
  return r;
}

std::vector<float> flat(std::initializer_list<Mat> ms) {
  std::vector<float> out;
  for (const auto& m : ms) out.insert(out.end(), m.begin(), m.end());
  return out;
}

// A tube along x from 0 to 2: `rings` rings of `seg` vertices at radius 1,
// weights blending joint 0 into joint 1 along x.
struct Tube {
  std::vector<float> rest;
  std::vector<std::uint32_t> joints;
  std::vector<float> weights;
  std::vector<std::uint32_t> tris;
  SkinView view() const { return {rest, joints, weights}; }
};

Tube make_tube(int rings = 5, int seg = 8) {
  Tube t;
  for (int r = 0; r < rings; ++r) {
    const double x = 2.0 * r / (rings - 1);
    for (int s = 0; s < seg; ++s) {
      const double a = 2.0 * std::numbers::pi * s / seg;
      t.rest.insert(t.rest.end(), {static_cast<float>(x), static_cast<float>(std::cos(a)),
                                   static_cast<float>(std::sin(a))});
      t.joints.insert(t.joints.end(), {0, 1, 0, 0});
      const auto w1 = static_cast<float>(x / 2.0);
      t.weights.insert(t.weights.end(), {1.0F - w1, w1, 0.0F, 0.0F});
    }
  }
  for (int r = 0; r + 1 < rings; ++r)
    for (int s = 0; s < seg; ++s) {
      const auto a = static_cast<std::uint32_t>(r * seg + s);
      const auto b = static_cast<std::uint32_t>(r * seg + (s + 1) % seg);
      const auto c = a + static_cast<std::uint32_t>(seg), d = b + static_cast<std::uint32_t>(seg);
      t.tris.insert(t.tris.end(), {a, b, d, a, d, c});
    }
  return t;
}

TEST(RigSkinning, LbsTwoBonesHandComputed) {
  // Vertex (1,0,0), equal weights (given unnormalised as 1 and 1).
  // Joint 0 moves it to (1,0,1); joint 1 (90° about z) to (0,1,0).
  // Blend: 0.5 (1,0,1) + 0.5 (0,1,0) = (0.5, 0.5, 0.5).
  const std::vector<float> rest{1, 0, 0};
  const std::vector<std::uint32_t> joints{0, 1, 0, 0};
  const std::vector<float> weights{1, 1, 0, 0};
  const auto m = flat({translation(0, 0, 1), rot_z(90)});
  std::vector<float> out(3);
  ASSERT_TRUE(linear_blend_skin({rest, joints, weights}, m, out));
  EXPECT_NEAR(out[0], 0.5, 1e-6);
  EXPECT_NEAR(out[1], 0.5, 1e-6);
  EXPECT_NEAR(out[2], 0.5, 1e-6);
}

TEST(RigSkinning, DqsEqualsLbsForOneInfluence) {
  // Rigid and scaled/sheared matrices: one influence reproduces the matrix.
  Mat scaled = mul(translation(0.3F, -2, 5), mul(rot_x(37), rot_z(-71)));
  scaled[0] *= 2.0F;   // scale column 0
  scaled[5] *= 0.5F;   // and a bit of shear
  scaled[4] += 0.25F;  // shear
  for (const Mat& m : {mul(translation(1, 2, 3), rot_x(123)), scaled}) {
    const std::vector<float> rest{0.7F, -1.1F, 2.5F, -3, 0.2F, 1};
    const std::vector<std::uint32_t> joints{0, 0, 0, 0, 0, 0, 0, 0};
    const std::vector<float> weights{1, 0, 0, 0, 1, 0, 0, 0};
    std::vector<float> lbs(6), dqs(6);
    const auto ms = flat({m});
    ASSERT_TRUE(linear_blend_skin({rest, joints, weights}, ms, lbs));
    ASSERT_TRUE(dual_quaternion_skin({rest, joints, weights}, ms, dqs));
    for (int i = 0; i < 6; ++i) EXPECT_NEAR(dqs[i], lbs[i], 1e-5) << i;
  }
}

TEST(RigSkinning, DqsKeepsVolumeInCandyWrapperTwist) {
  // A point at radius 1 about the x axis, half on a still joint and half on
  // one twisted 160° about x. LBS averages (0,1,0) and (0,cos160,sin160):
  // radius |cos 80°| ≈ 0.174. DQS rotates by the half angle, 80°: radius 1.
  const std::vector<float> rest{1, 1, 0};
  const std::vector<std::uint32_t> joints{0, 1, 0, 0};
  const std::vector<float> weights{0.5F, 0.5F, 0, 0};
  const auto m = flat({identity(), rot_x(160)});
  std::vector<float> lbs(3), dqs(3);
  ASSERT_TRUE(linear_blend_skin({rest, joints, weights}, m, lbs));
  ASSERT_TRUE(dual_quaternion_skin({rest, joints, weights}, m, dqs));
  EXPECT_NEAR(std::hypot(lbs[1], lbs[2]), std::abs(std::cos(80.0 * std::numbers::pi / 180)), 1e-5);
  EXPECT_LT(std::hypot(lbs[1], lbs[2]), 0.2);
  EXPECT_NEAR(std::hypot(dqs[1], dqs[2]), 1.0, 1e-5);
  EXPECT_NEAR(dqs[0], 1.0, 1e-6);
  EXPECT_NEAR(std::atan2(dqs[2], dqs[1]) * 180 / std::numbers::pi, 80.0, 1e-3);
}

TEST(RigSkinning, DqsTakesShortPathAcrossAntipodes) {
  // Joints at +170° and -170° (= 190°) about x: the short way between them
  // passes 180°, so the half/half blend turns (0,1,0) into (0,-1,0). Blending
  // without the sign fix would pass 0° and leave it at (0,1,0).
  const std::vector<float> rest{0, 1, 0};
  const std::vector<std::uint32_t> joints{0, 1, 0, 0};
  const std::vector<float> weights{0.5F, 0.5F, 0, 0};
  const auto m = flat({rot_x(170), rot_x(-170)});
  std::vector<float> dqs(3);
  ASSERT_TRUE(dual_quaternion_skin({rest, joints, weights}, m, dqs));
  EXPECT_NEAR(dqs[1], -1.0, 1e-5);
  EXPECT_NEAR(dqs[2], 0.0, 1e-5);
}

TEST(RigSkinning, EveryDeformerReturnsRestAtRest) {
  const Tube t = make_tube();
  const auto m = flat({identity(), identity()});
  std::vector<float> lbs(t.rest.size()), dqs(t.rest.size()), dm(t.rest.size());
  ASSERT_TRUE(linear_blend_skin(t.view(), m, lbs));
  ASSERT_TRUE(dual_quaternion_skin(t.view(), m, dqs));
  auto mush = DeltaMush::create(t.view(), 2, t.tris, {.iterations = 10, .step = 0.5});
  ASSERT_TRUE(mush) << mush.error().to_string();
  ASSERT_TRUE(mush->deform(m, dm));
  for (std::size_t i = 0; i < t.rest.size(); ++i) {
    EXPECT_NEAR(lbs[i], t.rest[i], 1e-6);
    EXPECT_NEAR(dqs[i], t.rest[i], 1e-6);
    EXPECT_NEAR(dm[i], t.rest[i], 1e-5);
  }
}

TEST(RigSkinning, DeltaMushZeroIterationsEqualsLbs) {
  const Tube t = make_tube();
  const auto m = flat({translation(0, 0.5F, 0), mul(translation(0, 0, 1), rot_z(40))});
  std::vector<float> lbs(t.rest.size()), dm(t.rest.size());
  ASSERT_TRUE(linear_blend_skin(t.view(), m, lbs));
  auto mush = DeltaMush::create(t.view(), 2, t.tris, {.iterations = 0, .step = 0.5});
  ASSERT_TRUE(mush);
  ASSERT_TRUE(mush->deform(m, dm));
  for (std::size_t i = 0; i < t.rest.size(); ++i) EXPECT_NEAR(dm[i], lbs[i], 1e-6);
}

TEST(RigSkinning, DeltaMushFollowsRigidMotion) {
  // Both joints with the same rigid transform: LBS is rigid, the smoothed
  // mesh and its frames move rigidly, so Delta Mush must equal LBS (the
  // stored offsets turn with the frames) even with many smoothing passes.
  const Tube t = make_tube();
  const Mat r = mul(translation(1, -2, 0.5F), mul(rot_x(50), rot_z(-30)));
  const auto m = flat({r, r});
  std::vector<float> lbs(t.rest.size()), dm(t.rest.size());
  ASSERT_TRUE(linear_blend_skin(t.view(), m, lbs));
  auto mush = DeltaMush::create(t.view(), 2, t.tris, {.iterations = 20, .step = 0.7});
  ASSERT_TRUE(mush);
  ASSERT_TRUE(mush->deform(m, dm));
  for (std::size_t i = 0; i < t.rest.size(); ++i) EXPECT_NEAR(dm[i], lbs[i], 2e-5) << i;
}

TEST(RigSkinning, DeltaMushBendDiffersFromLbsButStaysClose) {
  const Tube t = make_tube(9, 12);
  const auto m =
      flat({identity(), mul(translation(1, 0, 0), mul(rot_z(60), translation(-1, 0, 0)))});
  std::vector<float> lbs(t.rest.size()), dm(t.rest.size());
  ASSERT_TRUE(linear_blend_skin(t.view(), m, lbs));
  auto mush = DeltaMush::create(t.view(), 2, t.tris, {.iterations = 10, .step = 0.5});
  ASSERT_TRUE(mush);
  ASSERT_TRUE(mush->deform(m, dm));
  double max_diff = 0;
  for (std::size_t i = 0; i < t.rest.size(); ++i)
    max_diff = std::max(max_diff, static_cast<double>(std::abs(dm[i] - lbs[i])));
  EXPECT_GT(max_diff, 1e-3);  // it does something
  EXPECT_LT(max_diff, 1.0);   // and nothing wild on a unit-radius tube
}

TEST(RigSkinning, InverseLbsRoundTrip) {
  const Tube t = make_tube();
  Mat scaled = mul(translation(0.2F, 0.1F, -1), rot_x(-35));
  scaled[10] *= 1.5F;
  const auto m = flat({mul(translation(0, 3, 0), rot_z(25)), scaled});
  std::vector<float> posed(t.rest.size()), back(t.rest.size());
  ASSERT_TRUE(linear_blend_skin(t.view(), m, posed));
  ASSERT_TRUE(inverse_linear_blend_skin(t.view(), m, posed, back));
  for (std::size_t i = 0; i < t.rest.size(); ++i) EXPECT_NEAR(back[i], t.rest[i], 1e-5);
}

TEST(RigSkinning, InverseLbsSingularIsAnError) {
  const std::vector<float> rest{1, 0, 0};
  const std::vector<std::uint32_t> joints{0, 0, 0, 0};
  const std::vector<float> weights{1, 0, 0, 0};
  Mat flat_z = identity();
  flat_z[10] = 0.0F;  // squashes z: no inverse
  std::vector<float> out(3);
  auto st = inverse_linear_blend_skin({rest, joints, weights}, flat({flat_z}), rest, out);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().code, "DEFORM_SINGULAR");
}

TEST(RigSkinning, ZeroWeightVertexStaysAndInvertsToItself) {
  const std::vector<float> rest{1, 2, 3};
  const std::vector<std::uint32_t> joints{0, 0, 0, 0};
  const std::vector<float> weights{0, 0, 0, 0};
  const auto m = flat({translation(5, 5, 5)});
  std::vector<float> lbs(3), dqs(3), back(3);
  ASSERT_TRUE(linear_blend_skin({rest, joints, weights}, m, lbs));
  ASSERT_TRUE(dual_quaternion_skin({rest, joints, weights}, m, dqs));
  EXPECT_EQ(lbs, rest);
  EXPECT_EQ(dqs, rest);
  const std::vector<float> posed{7, 8, 9};
  ASSERT_TRUE(inverse_linear_blend_skin({rest, joints, weights}, m, posed, back));
  EXPECT_EQ(back, posed);
}

TEST(RigSkinning, BadInputsAreErrors) {
  const std::vector<float> rest{1, 0, 0};
  const std::vector<std::uint32_t> joints{5, 0, 0, 0};
  const std::vector<float> weights{1, 0, 0, 0};
  std::vector<float> out(3);
  auto st = linear_blend_skin({rest, joints, weights}, flat({identity()}), out);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().code, "DEFORM_JOINT");
  const std::vector<float> neg{-1, 0, 0, 0};
  st = dual_quaternion_skin({rest, std::vector<std::uint32_t>{0, 0, 0, 0}, neg}, flat({identity()}),
                            out);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().code, "DEFORM_WEIGHT");
  const std::vector<std::uint32_t> tri{0, 0, 7};
  auto dm = DeltaMush::create({rest, std::vector<std::uint32_t>{0, 0, 0, 0}, weights}, 1, tri);
  ASSERT_FALSE(dm);
  EXPECT_EQ(dm.error().code, "DEFORM_INDEX");
  // A pose's matrices of another count than the validated job's are refused
  // by run() (the skin is not checked again).
  const std::vector<std::uint32_t> zero{0, 0, 0, 0};
  const auto two = flat({identity(), identity()});
  SkinJob job{{rest, zero, weights}, 2, two, out};
  ASSERT_TRUE(job.validate());
  job.matrices = std::span<const float>(two).first(16);
  st = job.run();
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().code, "DEFORM_SHAPE");
  EXPECT_NE(st.error().message.find("16 per joint"), std::string::npos) << st.error().message;
}

// Many vertices, split over threads: the same bits as the calling thread,
// and the inverse's first failing vertex is the lowest one, as unthreaded.
TEST(RigSkinning, ThreadedJobsEqualTheCallingThread) {
  const std::size_t n = 20000;
  std::vector<float> rest(n * 3), weights(n * 4);
  std::vector<std::uint32_t> joints(n * 4);
  for (std::size_t v = 0; v < n; ++v) {
    for (std::size_t k = 0; k < 3; ++k) rest[v * 3 + k] = static_cast<float>((v * 7 + k) % 13);
    joints[v * 4] = 0;
    joints[v * 4 + 1] = 1;
    weights[v * 4] = static_cast<float>(v % 5) / 4.0F;
    weights[v * 4 + 1] = 1.0F - weights[v * 4];
  }
  const SkinView skin{rest, joints, weights};
  const auto m = flat({rot_x(30), translation(1, 2, 3)});
  core::ThreadPool pool(3);
  for (SkinMethod method : {SkinMethod::kLinear, SkinMethod::kDualQuaternion}) {
    std::vector<float> one(n * 3), many(n * 3);
    ASSERT_TRUE(skin_with(method, skin, m, one));
    ASSERT_TRUE(skin_with(method, skin, m, many, {&pool}));
    EXPECT_EQ(one, many);
  }
  std::vector<float> posed(n * 3), back(n * 3);
  ASSERT_TRUE(linear_blend_skin(skin, m, posed));
  ASSERT_TRUE(inverse_linear_blend_skin(skin, m, posed, back, {&pool}));
  for (std::size_t i = 0; i < back.size(); ++i) ASSERT_NEAR(back[i], rest[i], 1e-3F) << i;
  // Vertices 5,000 and 15,000 (in different chunks) cannot be inverted: all
  // their weight is on a joint that squashes z. The error names 5,000
  // whichever chunk finishes first.
  Mat flat_z = identity();
  flat_z[10] = 0.0F;
  const auto with_squash = flat({rot_x(30), translation(1, 2, 3), flat_z});
  std::vector<std::uint32_t> joints2 = joints;
  std::vector<float> weights2 = weights;
  for (std::size_t v : {15000U, 5000U}) {
    joints2[v * 4] = 2;
    weights2[v * 4] = 1.0F;
    weights2[v * 4 + 1] = 0.0F;
  }
  const SkinView skin2{rest, joints2, weights2};
  for (const core::RunOptions& options : {core::RunOptions{}, core::RunOptions{&pool}}) {
    auto st = inverse_linear_blend_skin(skin2, with_squash, posed, back, options);
    ASSERT_FALSE(st);
    EXPECT_EQ(st.error().code, "DEFORM_SINGULAR");
    EXPECT_EQ(st.error().message.rfind("vertex 5000: ", 0), 0U) << st.error().message;
  }
}

}  // namespace
}  // namespace charkit::deform
