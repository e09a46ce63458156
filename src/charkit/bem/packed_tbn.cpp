#include "charkit/bem/packed_tbn.h"

#include <algorithm>
#include <cmath>

namespace charkit::bem {
namespace {

using core::Vec3d;

double sign_not_zero(double v) {
  return v < 0.0 ? -1.0 : 1.0;
}

/// A signed 10-bit field as a value in [-1, 1] (−512 clamps to −1).
double field(std::uint32_t word, int shift) {
  int v = static_cast<int>((word >> shift) & 0x3FFu);
  if (v >= 512) v -= 1024;
  return std::max(-1.0, v / 511.0);
}

/// A value in [-1, 1] as a signed 10-bit field (round half to even).
std::uint32_t quantise(double v) {
  double q = std::nearbyint(v * 511.0);
  if (!(q == q)) q = 0.0;  // NaN
  q = std::clamp(q, -511.0, 511.0);
  return static_cast<std::uint32_t>(static_cast<int>(q)) & 0x3FFu;
}

/// R and B of the tangent plane of a unit normal.
void tangent_basis(const Vec3d& n, Vec3d& r, Vec3d& b) {
  r = {n[1] - n[2], n[2] - n[0], n[0] - n[1]};
  if (core::length(r) < 1e-6) {
    const Vec3d h = std::abs(n[0]) >= 0.9 ? Vec3d{1, 0, 0} : Vec3d{0, 1, 0};
    r = core::cross(n, h);
  }
  r = core::normalize(r);
  b = core::cross(r, n);
}

}  // namespace

UnpackedTbn unpack_tbn(std::uint32_t word) {
  double x = field(word, 0);
  double y = field(word, 10);
  const double z = 1.0 - std::abs(x) - std::abs(y);
  if (z < 0.0) {
    const double fx = (1.0 - std::abs(y)) * sign_not_zero(x);
    const double fy = (1.0 - std::abs(x)) * sign_not_zero(y);
    x = fx;
    y = fy;
  }
  const Vec3d n = core::normalize(Vec3d{x, y, z});
  Vec3d r;
  Vec3d b;
  tangent_basis(n, r, b);
  const double t = field(word, 20);
  const double u = 2.0 * std::abs(t) - 1.0;  // cos / (|cos| + |sin|)
  const double s = (t < 0.0 ? -1.0 : 1.0) * (1.0 - std::abs(u));
  const Vec3d tangent = core::normalize(core::add(core::scale(r, u), core::scale(b, s)));
  UnpackedTbn out;
  out.normal = core::cast<float>(n);
  out.tangent = {static_cast<float>(tangent[0]), static_cast<float>(tangent[1]),
                 static_cast<float>(tangent[2]), (word >> 31) != 0 ? 1.0F : -1.0F};
  out.packed_flag = ((word >> 30) & 1u) != 0;
  return out;
}

std::uint32_t pack_tbn(const core::Vec3f& normal_in, const core::Vec4f& tangent_in) {
  const Vec3d n = core::normalize(core::cast<double>(normal_in));
  const double l1 = std::abs(n[0]) + std::abs(n[1]) + std::abs(n[2]);
  double ox = l1 > 0.0 ? n[0] / l1 : 0.0;
  double oy = l1 > 0.0 ? n[1] / l1 : 0.0;
  if (n[2] < 0.0) {
    const double fx = (1.0 - std::abs(oy)) * sign_not_zero(ox);
    const double fy = (1.0 - std::abs(ox)) * sign_not_zero(oy);
    ox = fx;
    oy = fy;
  }
  const std::uint32_t nx = quantise(ox);
  const std::uint32_t ny = quantise(oy);
  // The decoder builds the tangent basis from the quantised normal: so does
  // the encoder (near n ≈ ±(1,1,1)/√3 the basis turns fast with n).
  const Vec3d decoded_n = core::cast<double>(unpack_tbn(nx | ny << 10).normal);
  Vec3d r;
  Vec3d b;
  tangent_basis(decoded_n, r, b);
  const Vec3d t{tangent_in[0], tangent_in[1], tangent_in[2]};
  const double c = std::clamp(core::dot(t, r), -1.0, 1.0);
  const double s = std::clamp(core::dot(t, b), -1.0, 1.0);
  const double denom = std::abs(c) + std::abs(s);
  const double u = denom > 1e-12 ? c / denom : 1.0;
  const double code = std::copysign(1.0 - (1.0 - u) / 2.0, s == 0.0 ? 1.0 : s);
  const std::uint32_t sign = tangent_in[3] >= 0.0F ? 1u : 0u;
  return nx | ny << 10 | quantise(code) << 20 | 1u << 30 | sign << 31;
}

}  // namespace charkit::bem
