// core/math.h against Eigen (an independent implementation of the same
// conventions: column-major matrices, Hamilton quaternions) on seeded random
// inputs, plus the edge cases the conventions promise.
#include "charkit/core/math.h"

#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <Eigen/Geometry>
#include <cmath>
#include <numbers>
#include <random>

namespace charkit::core {
namespace {

constexpr double kTol = 1e-12;

struct Random {
  std::mt19937_64 gen{12345};
  double uniform(double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(gen);
  }
  Vec3d vec(double r = 10.0) { return {uniform(-r, r), uniform(-r, r), uniform(-r, r)}; }
  Quatd quat() {  // uniform-ish unit quaternion, any sign of w
    Quatd q{uniform(-1, 1), uniform(-1, 1), uniform(-1, 1), uniform(-1, 1)};
    return normalize(q);
  }
  Vec3d positive_scale() { return {uniform(0.1, 3), uniform(0.1, 3), uniform(0.1, 3)}; }
  Mat4d mat4() {
    Mat4d m{};
    for (double& x : m) x = uniform(-2, 2);
    return m;
  }
};

Eigen::Quaterniond eig(const Quatd& q) {
  return Eigen::Quaterniond(q.w, q.x, q.y, q.z);
}
Eigen::Vector3d eig(const Vec3d& v) {
  return {v[0], v[1], v[2]};
}
Eigen::Matrix4d eig(const Mat4d& m) {
  return Eigen::Map<const Eigen::Matrix4d>(m.data());  // Eigen's default is column-major too
}

void expect_near(const Quatd& a, const Eigen::Quaterniond& b, double tol = kTol) {
  EXPECT_NEAR(a.x, b.x(), tol);
  EXPECT_NEAR(a.y, b.y(), tol);
  EXPECT_NEAR(a.z, b.z(), tol);
  EXPECT_NEAR(a.w, b.w(), tol);
}
// Same rotation: q or −q.
void expect_same_rotation(const Quatd& a, const Quatd& b, double tol = kTol) {
  const double sign = dot(a, b) < 0 ? -1.0 : 1.0;
  EXPECT_NEAR(a.x, sign * b.x, tol);
  EXPECT_NEAR(a.y, sign * b.y, tol);
  EXPECT_NEAR(a.z, sign * b.z, tol);
  EXPECT_NEAR(a.w, sign * b.w, tol);
}
void expect_near(const Vec3d& a, const Eigen::Vector3d& b, double tol = kTol) {
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(a[static_cast<std::size_t>(i)], b[i], tol) << i;
}
template <int N, typename M>
void expect_near_mat(const M& a, const Eigen::Matrix<double, N, N>& b, double tol = kTol) {
  for (int c = 0; c < N; ++c)
    for (int r = 0; r < N; ++r)
      EXPECT_NEAR(a[static_cast<std::size_t>(c * N + r)], b(r, c), tol) << r << "," << c;
}

TEST(Math, StorageIsColumnMajorWithTranslationInTheLastColumn) {
  Trs<double> t;
  t.translation = {1, 2, 3};
  const Mat4d m = compose(t);
  EXPECT_EQ(m[12], 1);
  EXPECT_EQ(m[13], 2);
  EXPECT_EQ(m[14], 3);
  EXPECT_EQ(at(m, 0, 3), 1);
  // 90° about z maps x to y: column 0 of R is (0, 1, 0).
  const Mat3d r = mat3_from_quat(quat_about_axis(2, std::numbers::pi / 2));
  EXPECT_NEAR(r[0], 0, kTol);
  EXPECT_NEAR(r[1], 1, kTol);
  EXPECT_NEAR(at(r, 1, 0), 1, kTol);
  EXPECT_NEAR(at(r, 0, 1), -1, kTol);
}

TEST(Math, QuaternionProductRotationAndMatrixMatchEigen) {
  Random rnd;
  for (int i = 0; i < 200; ++i) {
    const Quatd a = rnd.quat(), b = rnd.quat();
    const Vec3d v = rnd.vec();
    expect_near(multiply(a, b), eig(a) * eig(b));
    expect_near(a * b, eig(a) * eig(b));
    expect_near(rotate(a, v), eig(a) * eig(v), 1e-11);
    expect_near_mat<3>(mat3_from_quat(a), eig(a).toRotationMatrix());
    expect_near(conjugate(a), eig(a).conjugate());
    // Eigen's matrix → quaternion is Shepperd's method too; compare rotations.
    const Quatd back = quat_from_mat3(mat3_from_quat(a));
    expect_same_rotation(back, a);
    // a · b applies b first.
    expect_near(rotate(multiply(a, b), v), eig(a) * (eig(b) * eig(v)), 1e-11);
  }
}

TEST(Math, QuaternionFromAndToAxisAngleMatchEigen) {
  Random rnd;
  for (int i = 0; i < 200; ++i) {
    const Vec3d axis = normalize(rnd.vec());
    const double angle = rnd.uniform(0, std::numbers::pi);
    const Quatd q = quat_from_axis_angle(axis, angle);
    expect_near(q, Eigen::Quaterniond(Eigen::AngleAxisd(angle, eig(axis))));
    const Vec3d rv = rotation_vector(q);
    expect_near(rv, eig(axis) * angle, 1e-11);
    expect_near(quat_from_rotation_vector(rv),
                Eigen::Quaterniond(Eigen::AngleAxisd(angle, eig(axis))), 1e-11);
    // −q is the same rotation: the rotation vector is the same.
    expect_near(rotation_vector(Quatd{-q.x, -q.y, -q.z, -q.w}), eig(axis) * angle, 1e-11);
  }
  EXPECT_EQ(rotation_vector(Quatd{}), (Vec3d{0, 0, 0}));
  EXPECT_EQ(rotation_vector(Quatd{0, 0, 0, 0}), (Vec3d{0, 0, 0}));
  // Tiny angles keep their digits (no acos).
  const Vec3d tiny = rotation_vector(quat_about_axis(0, 1e-10));
  EXPECT_NEAR(tiny[0], 1e-10, 1e-22);
}

TEST(Math, SlerpMatchesEigenAndTakesTheShorterArc) {
  Random rnd;
  for (int i = 0; i < 200; ++i) {
    const Quatd a = rnd.quat(), b = rnd.quat();
    const double t = rnd.uniform(0, 1);
    // Eigen's slerp also takes the shorter arc; compare as rotations.
    const Eigen::Quaterniond e = eig(a).slerp(t, eig(b));
    expect_same_rotation(slerp(a, b, t), Quatd{e.x(), e.y(), e.z(), e.w()}, 1e-9);
    // Constant speed: the angle from a is t times the whole angle.
    const double whole = 2 * std::acos(std::min(1.0, std::abs(dot(a, b))));
    const double part = 2 * std::acos(std::min(1.0, std::abs(dot(a, slerp(a, b, t)))));
    EXPECT_NEAR(part, t * whole, 1e-6);
  }
}

TEST(Math, SlerpEndsAntipodesAndNearlyParallel) {
  const Quatd a = normalize(Quatd{0.1, 0.2, 0.3, 0.9});
  const Quatd b = normalize(Quatd{-0.4, 0.5, 0.1, 0.7});
  expect_near(slerp(a, b, 0.0), eig(a), 1e-15);
  expect_near(slerp(a, b, 1.0), eig(b), 1e-15);
  // −b is the same rotation as b: the path is the short one, and t = 1
  // ends at b (not −b) since the sign follows a.
  const Quatd nb{-b.x, -b.y, -b.z, -b.w};
  expect_near(slerp(a, nb, 1.0), eig(b), 1e-15);
  expect_same_rotation(slerp(a, nb, 0.3), slerp(a, b, 0.3), 1e-15);
  // a and −a: the same rotation, the blend stays there (no division by sin 0).
  const Quatd na{-a.x, -a.y, -a.z, -a.w};
  expect_same_rotation(slerp(a, na, 0.5), a, 1e-15);
  // Nearly parallel: finite, unit, between the two.
  const Quatd c = normalize(Quatd{a.x + 1e-13, a.y, a.z, a.w});
  const Quatd m = slerp(a, c, 0.5);
  EXPECT_NEAR(dot(m, m), 1.0, 1e-15);
  EXPECT_NEAR(m.x, (a.x + c.x) / 2, 1e-15);
  // Not normalised inputs are normalised first.
  expect_near(slerp(Quatd{0, 0, 0, 2}, Quatd{0, 0, 0, 5}, 0.5), Eigen::Quaterniond::Identity());
  // nlerp agrees at the ends and in direction.
  expect_near(nlerp(a, nb, 1.0), eig(b), 1e-15);
}

TEST(Math, Mat4ProductInverseAndTransformsMatchEigen) {
  Random rnd;
  for (int i = 0; i < 100; ++i) {
    const Mat4d a = rnd.mat4(), b = rnd.mat4();
    expect_near_mat<4>(mul(a, b), eig(a) * eig(b));
    const Eigen::Matrix4d ea = eig(a);
    if (std::abs(ea.determinant()) > 1e-3) expect_near_mat<4>(inverse(a), ea.inverse(), 1e-8);
    const Vec3d p = rnd.vec();
    const Eigen::Vector4d hp = ea * Eigen::Vector4d(p[0], p[1], p[2], 1.0);
    const Eigen::Vector4d hv = ea * Eigen::Vector4d(p[0], p[1], p[2], 0.0);
    // transform_point ignores the bottom row (affine use): compare xyz.
    expect_near(transform_point(a, p), hp.head<3>(), 1e-12);
    expect_near(transform_vector(a, p), hv.head<3>(), 1e-12);
    const Mat3d l = linear_part(a);
    expect_near_mat<3>(l, ea.topLeftCorner<3, 3>());
    expect_near_mat<3>(mul(l, linear_part(b)),
                       Eigen::Matrix3d(ea.topLeftCorner<3, 3>() * eig(b).topLeftCorner<3, 3>()));
    expect_near(mul(l, p), ea.topLeftCorner<3, 3>() * eig(p), 1e-12);
    EXPECT_NEAR(determinant(l), Eigen::Matrix3d(ea.topLeftCorner<3, 3>()).determinant(), 1e-11);
    if (std::abs(determinant(l)) > 1e-3)
      expect_near_mat<3>(inverse(l), Eigen::Matrix3d(ea.topLeftCorner<3, 3>()).inverse(), 1e-8);
    expect_near_mat<3>(transpose(l), Eigen::Matrix3d(ea.topLeftCorner<3, 3>().transpose()));
  }
  EXPECT_EQ(inverse(Mat4d{}), Mat4d{});
  EXPECT_EQ(inverse(Mat3d{}), Mat3d{});
  EXPECT_EQ(mul(identity4<double>(), identity4<double>()), identity4<double>());
}

TEST(Math, ComposeMatchesEigenAndDecomposeRoundTrips) {
  Random rnd;
  for (int i = 0; i < 200; ++i) {
    Trs<double> t{rnd.vec(), rnd.quat(), rnd.positive_scale()};
    const Mat4d m = compose(t);
    Eigen::Affine3d e =
        Eigen::Translation3d(eig(t.translation)) * eig(t.rotation) * Eigen::Scaling(eig(t.scale));
    expect_near_mat<4>(m, e.matrix(), 1e-12);
    const Trs<double> d = decompose(m);
    expect_near(d.translation, eig(t.translation));
    expect_near(d.scale, eig(t.scale), 1e-12);
    expect_same_rotation(d.rotation, t.rotation, 1e-12);
    expect_near_mat<4>(compose(d), e.matrix(), 1e-12);
    // The inverse of a TRS matrix.
    expect_near_mat<4>(inverse(m), Eigen::Matrix4d(e.matrix().inverse()), 1e-9);
  }
}

TEST(Math, DecomposeOfAMirrorNegatesXScaleAndStillRoundTrips) {
  Trs<double> t{{1, 2, 3}, normalize(Quatd{0.2, -0.1, 0.4, 0.8}), {2, 3, 4}};
  Mat4d m = compose(t);
  for (std::size_t r = 0; r < 3; ++r) m[4 + r] = -m[4 + r];  // mirror the y column
  const Trs<double> d = decompose(m);
  EXPECT_LT(d.scale[0], 0);
  EXPECT_NEAR(d.scale[1], 3, 1e-12);
  EXPECT_NEAR(d.scale[2], 4, 1e-12);
  expect_near_mat<4>(compose(d), eig(m), 1e-12);
  // A zero column: scale 0, the rotation stays a rotation.
  Mat4d flat = compose(t);
  for (std::size_t r = 0; r < 3; ++r) flat[8 + r] = 0;
  const Trs<double> f = decompose(flat);
  EXPECT_EQ(f.scale[2], 0);
  EXPECT_NEAR(dot(f.rotation, f.rotation), 1.0, 1e-12);
}

TEST(Math, EulerHelpers) {
  Random rnd;
  for (int i = 0; i < 100; ++i) {
    const Vec3d a{rnd.uniform(-3, 3), rnd.uniform(-1.5, 1.5), rnd.uniform(-3, 3)};
    const Quatd q = quat_from_euler_xyz(a);
    const Eigen::Quaterniond e = Eigen::AngleAxisd(a[2], Eigen::Vector3d::UnitZ()) *
                                 Eigen::AngleAxisd(a[1], Eigen::Vector3d::UnitY()) *
                                 Eigen::AngleAxisd(a[0], Eigen::Vector3d::UnitX());
    expect_near(q, e);
    expect_near(euler_xyz_from_quat(q), eig(a), 1e-9);
    // BVH order "Zrotation Xrotation Yrotation": R = Rz · Rx · Ry.
    const Mat3d r = mat3_from_euler<double>({2, 0, 1}, {a[0], a[1], a[2]});
    const Eigen::Matrix3d er = (Eigen::AngleAxisd(a[0], Eigen::Vector3d::UnitZ()) *
                                Eigen::AngleAxisd(a[1], Eigen::Vector3d::UnitX()) *
                                Eigen::AngleAxisd(a[2], Eigen::Vector3d::UnitY()))
                                   .toRotationMatrix();
    expect_near_mat<3>(r, er);
  }
  // Gimbal lock: y = 90°, z is reported 0 and x carries the rest.
  const Vec3d lock =
      euler_xyz_from_quat(quat_from_euler_xyz(Vec3d{0.3, std::numbers::pi / 2, 0.0}));
  EXPECT_NEAR(lock[1], std::numbers::pi / 2, 1e-7);
  EXPECT_EQ(lock[2], 0.0);
  EXPECT_NEAR(lock[0], 0.3, 1e-7);
}

TEST(Math, VectorsAndCasts) {
  const Vec3d a{1, 2, 3}, b{-4, 5, 0.5};
  EXPECT_EQ(add(a, b), (Vec3d{-3, 7, 3.5}));
  EXPECT_EQ(sub(a, b), (Vec3d{5, -3, 2.5}));
  EXPECT_EQ(scale(a, 2.0), (Vec3d{2, 4, 6}));
  EXPECT_EQ(dot(a, b), 1 * -4 + 2 * 5 + 3 * 0.5);
  expect_near(cross(a, b), eig(a).cross(eig(b)));
  EXPECT_NEAR(length(normalize(b)), 1.0, 1e-15);
  EXPECT_EQ(normalize(Vec3d{0, 0, 0}), (Vec3d{0, 0, 0}));
  EXPECT_EQ(lerp(a, b, 0.5), (Vec3d{-1.5, 3.5, 1.75}));
  EXPECT_EQ(cast<float>(a), (Vec3f{1, 2, 3}));
  EXPECT_EQ(normalize(Quatd{0, 0, 0, 0}), Quatd{});
  EXPECT_EQ(normalize(Quatd{NAN, 0, 0, 1}), Quatd{});
  EXPECT_EQ((quat_from_xyzw<double>(Vec4f{1, 2, 3, 4})), (Quatd{1, 2, 3, 4}));
  EXPECT_EQ((xyzw<float>(Quatd{1, 2, 3, 4})), (Vec4f{1, 2, 3, 4}));
  static_assert(mul(identity3<double>(), Vec3d{1, 2, 3}) == Vec3d{1, 2, 3});
  static_assert(transform_point(identity4<float>(), Vec3f{1, 2, 3}) == Vec3f{1, 2, 3});
}

}  // namespace
}  // namespace charkit::core
