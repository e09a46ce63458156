// The one maths layer of charkit (docs/core.md §Maths): small fixed-size
// vectors, quaternions and 3×3 / 4×4 matrices for skeletons, skinning and
// motion. Header-only, no allocation, no third-party types.
//
// Conventions, the same everywhere (those of glTF 2.0):
// - Vectors and matrices are std::array so they are plain data that meshes,
//   buffers and file writers can hold and copy byte for byte.
// - Matrices are column-major: element (row r, column c) of a Mat3 is
//   m[c * 3 + r], of a Mat4 m[c * 4 + r]; the translation of a Mat4 is
//   m[12], m[13], m[14]. Matrices multiply column vectors: p' = M p, and
//   mul(a, b) applies b first, then a.
// - Quaternions are Hamilton quaternions stored x, y, z, w (glTF order); a
//   unit quaternion rotates a vector as q v q*; multiply(a, b) applies b
//   first, then a (the same order as matrices).
// - Angles are radians unless a name says degrees.
//
// Where an input can be degenerate (a zero or non-finite quaternion, a
// singular matrix) the function says what it returns instead of failing.
#pragma once

#include <array>
#include <cmath>
#include <cstddef>

namespace charkit::core {

template <typename T>
using Vec2 = std::array<T, 2>;
template <typename T>
using Vec3 = std::array<T, 3>;
template <typename T>
using Vec4 = std::array<T, 4>;
/// Column-major 3×3 matrix: m[c * 3 + r].
template <typename T>
using Mat3 = std::array<T, 9>;
/// Column-major 4×4 matrix: m[c * 4 + r].
template <typename T>
using Mat4 = std::array<T, 16>;

using Vec2f = Vec2<float>;
using Vec3f = Vec3<float>;
using Vec4f = Vec4<float>;
using Mat3f = Mat3<float>;
using Mat4f = Mat4<float>;
using Vec2d = Vec2<double>;
using Vec3d = Vec3<double>;
using Vec4d = Vec4<double>;
using Mat3d = Mat3<double>;
using Mat4d = Mat4<double>;

/// Hamilton quaternion, stored x, y, z, w; identity by default.
template <typename T>
struct Quat {
  T x = 0;
  T y = 0;
  T z = 0;
  T w = 1;

  friend constexpr bool operator==(const Quat&, const Quat&) = default;
};
using Quatf = Quat<float>;
using Quatd = Quat<double>;

/// Translation, rotation, scale: the matrix T · R · S (glTF node TRS).
template <typename T>
struct Trs {
  Vec3<T> translation{0, 0, 0};
  Quat<T> rotation{};
  Vec3<T> scale{1, 1, 1};
};

// ---------------------------------------------------------------------------
// Element access and conversions

/// Element (row r, column c) of a column-major matrix.
template <typename T>
constexpr T& at(Mat3<T>& m, std::size_t r, std::size_t c) {
  return m[c * 3 + r];
}
template <typename T>
constexpr T at(const Mat3<T>& m, std::size_t r, std::size_t c) {
  return m[c * 3 + r];
}
template <typename T>
constexpr T& at(Mat4<T>& m, std::size_t r, std::size_t c) {
  return m[c * 4 + r];
}
template <typename T>
constexpr T at(const Mat4<T>& m, std::size_t r, std::size_t c) {
  return m[c * 4 + r];
}

/// Element-wise conversion between scalar types (float <-> double).
template <typename U, typename T, std::size_t N>
constexpr std::array<U, N> cast(const std::array<T, N>& a) {
  std::array<U, N> r{};
  for (std::size_t i = 0; i < N; ++i) r[i] = static_cast<U>(a[i]);
  return r;
}
template <typename U, typename T>
constexpr Quat<U> cast(const Quat<T>& q) {
  return {static_cast<U>(q.x), static_cast<U>(q.y), static_cast<U>(q.z), static_cast<U>(q.w)};
}

/// A quaternion from a glTF rotation array (x, y, z, w), and back.
template <typename U, typename T>
constexpr Quat<U> quat_from_xyzw(const Vec4<T>& v) {
  return {static_cast<U>(v[0]), static_cast<U>(v[1]), static_cast<U>(v[2]), static_cast<U>(v[3])};
}
template <typename U, typename T>
constexpr Vec4<U> xyzw(const Quat<T>& q) {
  return {static_cast<U>(q.x), static_cast<U>(q.y), static_cast<U>(q.z), static_cast<U>(q.w)};
}

// ---------------------------------------------------------------------------
// Vectors

template <typename T>
constexpr Vec3<T> add(const Vec3<T>& a, const Vec3<T>& b) {
  return {a[0] + b[0], a[1] + b[1], a[2] + b[2]};
}
template <typename T>
constexpr Vec3<T> sub(const Vec3<T>& a, const Vec3<T>& b) {
  return {a[0] - b[0], a[1] - b[1], a[2] - b[2]};
}
template <typename T>
constexpr Vec3<T> scale(const Vec3<T>& a, T s) {
  return {a[0] * s, a[1] * s, a[2] * s};
}
template <typename T>
constexpr T dot(const Vec3<T>& a, const Vec3<T>& b) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}
template <typename T>
constexpr Vec3<T> cross(const Vec3<T>& a, const Vec3<T>& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
template <typename T>
T length(const Vec3<T>& a) {
  return std::sqrt(dot(a, a));
}
/// a / |a|; a itself when its length is 0 or not finite.
template <typename T>
Vec3<T> normalize(const Vec3<T>& a) {
  const T n = length(a);
  if (!(n > 0) || !std::isfinite(n)) return a;
  return {a[0] / n, a[1] / n, a[2] / n};
}
/// a + (b − a) t.
template <typename T>
constexpr Vec3<T> lerp(const Vec3<T>& a, const Vec3<T>& b, T t) {
  return {a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t, a[2] + (b[2] - a[2]) * t};
}

// ---------------------------------------------------------------------------
// Quaternions

/// a · b: apply b first, then a.
template <typename T>
constexpr Quat<T> multiply(const Quat<T>& a, const Quat<T>& b) {
  return {
      a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y, a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
      a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w, a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z};
}
template <typename T>
constexpr Quat<T> operator*(const Quat<T>& a, const Quat<T>& b) {
  return multiply(a, b);
}
template <typename T>
constexpr T dot(const Quat<T>& a, const Quat<T>& b) {
  return a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w;
}
/// The inverse rotation of a unit quaternion.
template <typename T>
constexpr Quat<T> conjugate(const Quat<T>& q) {
  return {-q.x, -q.y, -q.z, q.w};
}
/// q / |q|; the identity when |q| is 0 or not finite.
template <typename T>
Quat<T> normalize(const Quat<T>& q) {
  const T n = std::sqrt(dot(q, q));
  if (!(n > 0) || !std::isfinite(n)) return {};
  return {q.x / n, q.y / n, q.z / n, q.w / n};
}
/// q v q* for a unit quaternion q (v + 2w (u × v) + 2 u × (u × v), u = xyz).
template <typename T>
constexpr Vec3<T> rotate(const Quat<T>& q, const Vec3<T>& v) {
  const Vec3<T> u{q.x, q.y, q.z};
  const Vec3<T> t = scale(cross(u, v), T{2});
  return add(add(v, scale(t, q.w)), cross(u, t));
}

/// Rotation by angle radians about a unit axis.
template <typename T>
Quat<T> quat_from_axis_angle(const Vec3<T>& axis, T angle) {
  const T s = std::sin(angle / 2);
  return {axis[0] * s, axis[1] * s, axis[2] * s, std::cos(angle / 2)};
}

/// Rotation by angle radians about coordinate axis 0 (x), 1 (y) or 2 (z).
template <typename T>
Quat<T> quat_about_axis(int axis, T angle) {
  const T s = std::sin(angle / 2), c = std::cos(angle / 2);
  switch (axis) {
    case 0:
      return {s, 0, 0, c};
    case 1:
      return {0, s, 0, c};
    default:
      return {0, 0, s, c};
  }
}

/// The rotation vector (unit axis × angle in radians, angle in [0, π]) of q.
/// Exactly zero for the identity and for a zero or non-finite q; accurate for
/// tiny angles (atan2, no acos) and near π (q and −q are the same rotation;
/// w < 0 is flipped first).
template <typename T>
Vec3<T> rotation_vector(const Quat<T>& q_in) {
  const T n = std::sqrt(dot(q_in, q_in));
  if (!(n > 0) || !std::isfinite(n)) return {0, 0, 0};
  Quat<T> q{q_in.x / n, q_in.y / n, q_in.z / n, q_in.w / n};
  if (q.w < 0) q = {-q.x, -q.y, -q.z, -q.w};
  const T s = std::sqrt(q.x * q.x + q.y * q.y + q.z * q.z);  // sin(angle / 2)
  if (s == 0) return {0, 0, 0};
  const T k = 2 * std::atan2(s, q.w) / s;
  return {q.x * k, q.y * k, q.z * k};
}

/// The unit quaternion of a rotation vector (axis × angle, radians).
template <typename T>
Quat<T> quat_from_rotation_vector(const Vec3<T>& v) {
  const T angle = length(v);
  if (!(angle > 0) || !std::isfinite(angle)) return {};
  const T s = std::sin(angle / 2) / angle;
  return {v[0] * s, v[1] * s, v[2] * s, std::cos(angle / 2)};
}

/// Spherical linear interpolation (glTF 2.0 Appendix C) along the shorter
/// arc: b is negated when a · b < 0. a and b are normalised first. The angle
/// is 2·atan2(|a − b|, |a + b|) rather than acos(a · b), which loses half its
/// digits near 1; below 1e-9 rad (nearly parallel) the blend is linear and
/// renormalised (nlerp). t = 0 gives a, t = 1 gives ±b (the sign nearer a).
template <typename T>
Quat<T> slerp(const Quat<T>& a_in, const Quat<T>& b_in, T t) {
  const Quat<T> a = normalize(a_in);
  Quat<T> b = normalize(b_in);
  if (dot(a, b) < 0) b = {-b.x, -b.y, -b.z, -b.w};
  const Quat<T> d{a.x - b.x, a.y - b.y, a.z - b.z, a.w - b.w};
  const Quat<T> s{a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w};
  const T angle = 2 * std::atan2(std::sqrt(dot(d, d)), std::sqrt(dot(s, s)));
  T ka = 1 - t;
  T kb = t;
  if (angle > T(1e-9)) {
    const T sn = std::sin(angle);
    ka = std::sin((1 - t) * angle) / sn;
    kb = std::sin(t * angle) / sn;
  }
  return normalize(
      Quat<T>{ka * a.x + kb * b.x, ka * a.y + kb * b.y, ka * a.z + kb * b.z, ka * a.w + kb * b.w});
}

/// Normalised linear blend along the shorter arc (cheaper than slerp, not
/// constant speed).
template <typename T>
Quat<T> nlerp(const Quat<T>& a, const Quat<T>& b_in, T t) {
  const Quat<T> b = dot(a, b_in) < 0 ? Quat<T>{-b_in.x, -b_in.y, -b_in.z, -b_in.w} : b_in;
  return normalize(Quat<T>{a.x + (b.x - a.x) * t, a.y + (b.y - a.y) * t, a.z + (b.z - a.z) * t,
                           a.w + (b.w - a.w) * t});
}

// ---------------------------------------------------------------------------
// Matrices

template <typename T>
constexpr Mat3<T> identity3() {
  return {1, 0, 0, 0, 1, 0, 0, 0, 1};
}
template <typename T>
constexpr Mat4<T> identity4() {
  return {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
}

/// a · b (b applied first).
template <typename T>
constexpr Mat3<T> mul(const Mat3<T>& a, const Mat3<T>& b) {
  Mat3<T> r{};
  for (std::size_t c = 0; c < 3; ++c)
    for (std::size_t row = 0; row < 3; ++row)
      r[c * 3 + row] = a[row] * b[c * 3] + a[3 + row] * b[c * 3 + 1] + a[6 + row] * b[c * 3 + 2];
  return r;
}
template <typename T>
constexpr Mat4<T> mul(const Mat4<T>& a, const Mat4<T>& b) {
  Mat4<T> r{};
  for (std::size_t c = 0; c < 4; ++c)
    for (std::size_t row = 0; row < 4; ++row) {
      T s = 0;
      for (std::size_t k = 0; k < 4; ++k) s += a[k * 4 + row] * b[c * 4 + k];
      r[c * 4 + row] = s;
    }
  return r;
}
/// m v.
template <typename T>
constexpr Vec3<T> mul(const Mat3<T>& m, const Vec3<T>& v) {
  return {m[0] * v[0] + m[3] * v[1] + m[6] * v[2], m[1] * v[0] + m[4] * v[1] + m[7] * v[2],
          m[2] * v[0] + m[5] * v[1] + m[8] * v[2]};
}
template <typename T>
constexpr Mat3<T> transpose(const Mat3<T>& m) {
  return {m[0], m[3], m[6], m[1], m[4], m[7], m[2], m[5], m[8]};
}
template <typename T>
constexpr T determinant(const Mat3<T>& m) {
  return at(m, 0, 0) * (at(m, 1, 1) * at(m, 2, 2) - at(m, 1, 2) * at(m, 2, 1)) -
         at(m, 0, 1) * (at(m, 1, 0) * at(m, 2, 2) - at(m, 1, 2) * at(m, 2, 0)) +
         at(m, 0, 2) * (at(m, 1, 0) * at(m, 2, 1) - at(m, 1, 1) * at(m, 2, 0));
}
/// The inverse by cofactors; all zeros when m is singular (determinant 0).
template <typename T>
constexpr Mat3<T> inverse(const Mat3<T>& m) {
  const T det = determinant(m);
  if (det == 0) return Mat3<T>{};
  Mat3<T> r{};
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t j = 0; j < 3; ++j) {
      // r(i, j) = cofactor(j, i) / det
      const std::size_t r0 = (j + 1) % 3, r1 = (j + 2) % 3, c0 = (i + 1) % 3, c1 = (i + 2) % 3;
      at(r, i, j) = (at(m, r0, c0) * at(m, r1, c1) - at(m, r0, c1) * at(m, r1, c0)) / det;
    }
  return r;
}

/// Point p transformed by m (w = 1; no perspective divide: m is affine).
template <typename T>
constexpr Vec3<T> transform_point(const Mat4<T>& m, const Vec3<T>& p) {
  return {m[0] * p[0] + m[4] * p[1] + m[8] * p[2] + m[12],
          m[1] * p[0] + m[5] * p[1] + m[9] * p[2] + m[13],
          m[2] * p[0] + m[6] * p[1] + m[10] * p[2] + m[14]};
}
/// Direction v transformed by m (w = 0: the translation does not apply).
template <typename T>
constexpr Vec3<T> transform_vector(const Mat4<T>& m, const Vec3<T>& v) {
  return {m[0] * v[0] + m[4] * v[1] + m[8] * v[2], m[1] * v[0] + m[5] * v[1] + m[9] * v[2],
          m[2] * v[0] + m[6] * v[1] + m[10] * v[2]};
}
/// The upper-left 3×3 block of m.
template <typename T>
constexpr Mat3<T> linear_part(const Mat4<T>& m) {
  return {m[0], m[1], m[2], m[4], m[5], m[6], m[8], m[9], m[10]};
}
/// The affine matrix [l t; 0 1].
template <typename T>
constexpr Mat4<T> affine(const Mat3<T>& l, const Vec3<T>& t) {
  return {l[0], l[1], l[2], 0, l[3], l[4], l[5], 0, l[6], l[7], l[8], 0, t[0], t[1], t[2], 1};
}
template <typename T>
constexpr Vec3<T> translation_of(const Mat4<T>& m) {
  return {m[12], m[13], m[14]};
}

/// The general inverse by cofactors (any invertible 4×4, affine or not);
/// all zeros when m is singular (determinant 0).
template <typename T>
constexpr Mat4<T> inverse(const Mat4<T>& m) {
  // 2×2 sub-determinants of the first two and the last two rows.
  auto e = [&](std::size_t r, std::size_t c) { return at(m, r, c); };
  const T s0 = e(0, 0) * e(1, 1) - e(1, 0) * e(0, 1);
  const T s1 = e(0, 0) * e(1, 2) - e(1, 0) * e(0, 2);
  const T s2 = e(0, 0) * e(1, 3) - e(1, 0) * e(0, 3);
  const T s3 = e(0, 1) * e(1, 2) - e(1, 1) * e(0, 2);
  const T s4 = e(0, 1) * e(1, 3) - e(1, 1) * e(0, 3);
  const T s5 = e(0, 2) * e(1, 3) - e(1, 2) * e(0, 3);
  const T c5 = e(2, 2) * e(3, 3) - e(3, 2) * e(2, 3);
  const T c4 = e(2, 1) * e(3, 3) - e(3, 1) * e(2, 3);
  const T c3 = e(2, 1) * e(3, 2) - e(3, 1) * e(2, 2);
  const T c2 = e(2, 0) * e(3, 3) - e(3, 0) * e(2, 3);
  const T c1 = e(2, 0) * e(3, 2) - e(3, 0) * e(2, 2);
  const T c0 = e(2, 0) * e(3, 1) - e(3, 0) * e(2, 1);
  const T det = s0 * c5 - s1 * c4 + s2 * c3 + s3 * c2 - s4 * c1 + s5 * c0;
  if (det == 0) return Mat4<T>{};
  const T k = T{1} / det;
  Mat4<T> r{};
  at(r, 0, 0) = (e(1, 1) * c5 - e(1, 2) * c4 + e(1, 3) * c3) * k;
  at(r, 0, 1) = (-e(0, 1) * c5 + e(0, 2) * c4 - e(0, 3) * c3) * k;
  at(r, 0, 2) = (e(3, 1) * s5 - e(3, 2) * s4 + e(3, 3) * s3) * k;
  at(r, 0, 3) = (-e(2, 1) * s5 + e(2, 2) * s4 - e(2, 3) * s3) * k;
  at(r, 1, 0) = (-e(1, 0) * c5 + e(1, 2) * c2 - e(1, 3) * c1) * k;
  at(r, 1, 1) = (e(0, 0) * c5 - e(0, 2) * c2 + e(0, 3) * c1) * k;
  at(r, 1, 2) = (-e(3, 0) * s5 + e(3, 2) * s2 - e(3, 3) * s1) * k;
  at(r, 1, 3) = (e(2, 0) * s5 - e(2, 2) * s2 + e(2, 3) * s1) * k;
  at(r, 2, 0) = (e(1, 0) * c4 - e(1, 1) * c2 + e(1, 3) * c0) * k;
  at(r, 2, 1) = (-e(0, 0) * c4 + e(0, 1) * c2 - e(0, 3) * c0) * k;
  at(r, 2, 2) = (e(3, 0) * s4 - e(3, 1) * s2 + e(3, 3) * s0) * k;
  at(r, 2, 3) = (-e(2, 0) * s4 + e(2, 1) * s2 - e(2, 3) * s0) * k;
  at(r, 3, 0) = (-e(1, 0) * c3 + e(1, 1) * c1 - e(1, 2) * c0) * k;
  at(r, 3, 1) = (e(0, 0) * c3 - e(0, 1) * c1 + e(0, 2) * c0) * k;
  at(r, 3, 2) = (-e(3, 0) * s3 + e(3, 1) * s1 - e(3, 2) * s0) * k;
  at(r, 3, 3) = (e(2, 0) * s3 - e(2, 1) * s1 + e(2, 2) * s0) * k;
  return r;
}

// ---------------------------------------------------------------------------
// Rotations between forms

/// Right-handed rotation by angle radians about coordinate axis 0 (x),
/// 1 (y) or 2 (z).
template <typename T>
Mat3<T> mat3_about_axis(int axis, T angle) {
  const T c = std::cos(angle), s = std::sin(angle);
  switch (axis) {
    case 0:
      return {1, 0, 0, 0, c, s, 0, -s, c};
    case 1:
      return {c, 0, -s, 0, 1, 0, s, 0, c};
    default:
      return {c, s, 0, -s, c, 0, 0, 0, 1};
  }
}

/// The rotation matrix of a unit quaternion q (not normalised here: callers
/// normalise what they read from files; compose() does).
template <typename T>
constexpr Mat3<T> mat3_from_quat(const Quat<T>& q) {
  const T xx = q.x * q.x, yy = q.y * q.y, zz = q.z * q.z;
  const T xy = q.x * q.y, xz = q.x * q.z, yz = q.y * q.z;
  const T wx = q.w * q.x, wy = q.w * q.y, wz = q.w * q.z;
  return {1 - 2 * (yy + zz), 2 * (xy + wz),     2 * (xz - wy),  // column 0
          2 * (xy - wz),     1 - 2 * (xx + zz), 2 * (yz + wx),  // column 1
          2 * (xz + wy),     2 * (yz - wx),     1 - 2 * (xx + yy)};
}

/// The unit quaternion of a rotation matrix whose columns are orthonormal up
/// to rounding (Shepperd's method: branch on the largest of w, x, y, z, read
/// from the diagonal, for accuracy); the sign is unspecified (q and −q are the
/// same rotation). Identity when the result is not finite.
template <typename T>
Quat<T> quat_from_mat3(const Mat3<T>& m) {
  const T m00 = at(m, 0, 0), m01 = at(m, 0, 1), m02 = at(m, 0, 2);
  const T m10 = at(m, 1, 0), m11 = at(m, 1, 1), m12 = at(m, 1, 2);
  const T m20 = at(m, 2, 0), m21 = at(m, 2, 1), m22 = at(m, 2, 2);
  const T trace = m00 + m11 + m22;
  Quat<T> q;
  if (trace > 0) {
    const T s = 2 * std::sqrt(trace + 1);
    q = {(m21 - m12) / s, (m02 - m20) / s, (m10 - m01) / s, s / 4};
  } else if (m00 > m11 && m00 > m22) {
    const T s = 2 * std::sqrt(1 + m00 - m11 - m22);
    q = {s / 4, (m01 + m10) / s, (m02 + m20) / s, (m21 - m12) / s};
  } else if (m11 > m22) {
    const T s = 2 * std::sqrt(1 + m11 - m00 - m22);
    q = {(m01 + m10) / s, s / 4, (m12 + m21) / s, (m02 - m20) / s};
  } else {
    const T s = 2 * std::sqrt(1 + m22 - m00 - m11);
    q = {(m02 + m20) / s, (m12 + m21) / s, s / 4, (m10 - m01) / s};
  }
  return normalize(q);
}

/// Intrinsic Euler rotation R = R(axes[0], angles[0]) · R(axes[1],
/// angles[1]) · R(axes[2], angles[2]) (the BVH CHANNELS order: the first
/// listed axis is outermost). axes are 0 (x), 1 (y), 2 (z).
template <typename T>
Mat3<T> mat3_from_euler(const std::array<int, 3>& axes, const Vec3<T>& angles) {
  return mul(mul(mat3_about_axis(axes[0], angles[0]), mat3_about_axis(axes[1], angles[1])),
             mat3_about_axis(axes[2], angles[2]));
}

/// Euler XYZ as Blender and glTF tools mean it: X applied first, then Y,
/// then Z, i.e. q = qz · qy · qx (angles in radians).
template <typename T>
Quat<T> quat_from_euler_xyz(const Vec3<T>& angles) {
  return multiply(quat_about_axis(2, angles[2]),
                  multiply(quat_about_axis(1, angles[1]), quat_about_axis(0, angles[0])));
}

/// The inverse of quat_from_euler_xyz (radians): x and z in [−π, π], y in
/// [−π/2, π/2]. At gimbal lock (y = ±π/2) z is 0 and x takes the whole
/// remaining turn. q need not be normalised (not zero).
template <typename T>
Vec3<T> euler_xyz_from_quat(const Quat<T>& q_in) {
  const Quat<T> q = normalize(q_in);
  const T x = q.x, y = q.y, z = q.z, w = q.w;
  // Entries of R = Rz(c) Ry(b) Rx(a): R20 = −sin b, R21 = cos b sin a,
  // R22 = cos b cos a, R10 = cos b sin c, R00 = cos b cos c.
  const T r00 = 1 - 2 * (y * y + z * z);
  const T r10 = 2 * (x * y + w * z);
  const T r20 = 2 * (x * z - w * y);
  const T r21 = 2 * (y * z + w * x);
  const T r22 = 1 - 2 * (x * x + y * y);
  const T r11 = 1 - 2 * (x * x + z * z);
  const T r12 = 2 * (y * z - w * x);
  const T cos_b = std::hypot(r00, r10);
  const T b = std::atan2(-r20, cos_b);
  T a = 0, c = 0;
  if (cos_b > T(1e-12)) {
    a = std::atan2(r21, r22);
    c = std::atan2(r10, r00);
  } else {
    // Gimbal lock: only a ∓ c is defined; c = 0, so with sin b = ±1
    // R11 = cos a and R12 = −sin a.
    a = std::atan2(-r12, r11);
  }
  return {a, b, c};
}

// ---------------------------------------------------------------------------
// TRS

/// T · R · S as a matrix (the rotation is normalised first; a zero rotation
/// counts as the identity).
template <typename T>
Mat4<T> compose(const Trs<T>& trs) {
  const Mat3<T> r = mat3_from_quat(normalize(trs.rotation));
  Mat4<T> m = identity4<T>();
  for (std::size_t c = 0; c < 3; ++c)
    for (std::size_t row = 0; row < 3; ++row) m[c * 4 + row] = r[c * 3 + row] * trs.scale[c];
  for (std::size_t row = 0; row < 3; ++row) m[12 + row] = trs.translation[row];
  return m;
}

/// The TRS of an affine matrix: translation = the last column; scale = the
/// lengths of the first three columns; rotation = the quaternion of the
/// columns divided by their lengths. A negative determinant (a mirror)
/// cannot be a rotation: the x scale is negated and the first column flipped,
/// so compose(decompose(m)) == m still holds. Shear is not representable:
/// with shear the rotation is that of the nearest-by-Shepperd matrix of the
/// normalised (non-orthogonal) columns and compose(decompose(m)) != m. A zero
/// column gives scale 0 and the matching identity column.
template <typename T>
Trs<T> decompose(const Mat4<T>& m) {
  Trs<T> t;
  Mat3<T> cols{};
  for (std::size_t c = 0; c < 3; ++c) {
    const T s =
        std::sqrt(m[c * 4] * m[c * 4] + m[c * 4 + 1] * m[c * 4 + 1] + m[c * 4 + 2] * m[c * 4 + 2]);
    t.scale[c] = s;
    for (std::size_t r = 0; r < 3; ++r)
      cols[c * 3 + r] = s > 0 ? m[c * 4 + r] / s : static_cast<T>(r == c ? 1 : 0);
  }
  if (determinant(cols) < 0) {
    t.scale[0] = -t.scale[0];
    for (std::size_t r = 0; r < 3; ++r) cols[r] = -cols[r];
  }
  t.rotation = quat_from_mat3(cols);
  t.translation = {m[12], m[13], m[14]};
  return t;
}

}  // namespace charkit::core
