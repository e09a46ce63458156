// The packed normal/tangent word (bem/packed_tbn.h) against words worked out
// by hand from the bit layout, and encode → decode over many directions.
#include "charkit/bem/packed_tbn.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

namespace charkit::bem {
namespace {

using core::Vec3f;
using core::Vec4f;

constexpr std::uint32_t kFlag = 1u << 30;
constexpr std::uint32_t kPlus = 1u << 31;

void expect_near3(const Vec3f& a, const Vec3f& b, float tol) {
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(a[i], b[i], tol) << "component " << i;
}

// n = +z: octahedral (0, 0). R = (−1, 1, 0)/√2, B = R × n = (1, 1, 0)/√2.
// T = +x: cos = −1/√2, sin = 1/√2, u = −0.5, t = (1 + u)/2 = 0.25 → 127.75 → 128.
TEST(PackedTbn, HandWordNormalPlusZTangentPlusX) {
  const std::uint32_t word = 0u | 0u << 10 | 128u << 20 | kFlag | kPlus;
  EXPECT_EQ(word, 0xC8000000u);
  EXPECT_EQ(pack_tbn({0, 0, 1}, {1, 0, 0, 1}), word);
  const UnpackedTbn d = unpack_tbn(word);
  expect_near3(d.normal, {0, 0, 1}, 1e-6F);
  // t = 128/511: u = 2t − 1 = −0.49902, sin = 0.50098: T ≈ (1, 0.00196, 0) normalised.
  expect_near3({d.tangent[0], d.tangent[1], d.tangent[2]}, {1.0F, 0.00196F, 0.0F}, 1e-4F);
  EXPECT_EQ(d.tangent[3], 1.0F);
  EXPECT_TRUE(d.packed_flag);
}

// n = −z: L1 projection (0, 0, −1), folded to (1·sign(0)=+1, +1) → (511, 511).
// T = +x: R = (1, −1, 0)/√2, B = R × n = (1, 1, 0)/√2; cos = sin = 1/√2,
// u = 0.5, t = +0.75 → 383.25 → 383. Bitangent sign −1: bit 31 clear.
TEST(PackedTbn, HandWordNormalMinusZ) {
  const std::uint32_t word = 511u | 511u << 10 | 383u << 20 | kFlag;
  EXPECT_EQ(pack_tbn({0, 0, -1}, {1, 0, 0, -1}), word);
  const UnpackedTbn d = unpack_tbn(word);
  expect_near3(d.normal, {0, 0, -1}, 1e-6F);
  expect_near3({d.tangent[0], d.tangent[1], d.tangent[2]}, {1, 0, 0}, 3e-3F);
  EXPECT_EQ(d.tangent[3], -1.0F);
}

// n = −x: octahedral (−1, 0) → x field −511 = 0x201 (two's complement in 10
// bits). R = (0, 1, −1)/√2, B = R × n = (0, 1, 1)/√2. T = +y: cos = sin =
// 1/√2, u = 0.5, t = 0.75 → 383. T = −y: cos = sin = −1/√2, u = −0.5,
// t = −0.25 → −127.75 → −128 = 0x380.
TEST(PackedTbn, HandWordNegativeFields) {
  const std::uint32_t word = 0x201u | 0u << 10 | 383u << 20 | kFlag | kPlus;
  EXPECT_EQ(pack_tbn({-1, 0, 0}, {0, 1, 0, 1}), word);
  const std::uint32_t down = 0x201u | 0x380u << 20 | kFlag | kPlus;
  EXPECT_EQ(pack_tbn({-1, 0, 0}, {0, -1, 0, 1}), down);
  expect_near3(
      {unpack_tbn(down).tangent[0], unpack_tbn(down).tangent[1], unpack_tbn(down).tangent[2]},
      {0, -1, 0}, 3e-3F);
  const UnpackedTbn d = unpack_tbn(word);
  expect_near3(d.normal, {-1, 0, 0}, 1e-6F);
  expect_near3({d.tangent[0], d.tangent[1], d.tangent[2]}, {0, 1, 0}, 3e-3F);
}

// The field value −512 (not produced by encoders) reads as −1, and a word
// without bit 30 says so.
TEST(PackedTbn, EdgeFieldsAndFlag) {
  const UnpackedTbn d = unpack_tbn(0x200u);  // x = −512, y = 0, t = 0, no flag, sign −
  expect_near3(d.normal, {-1, 0, 0}, 1e-6F);
  EXPECT_FALSE(d.packed_flag);
  EXPECT_EQ(d.tangent[3], -1.0F);
  // The degenerate reference: n along (1,1,1)/√3 makes R = 0; the fallback
  // basis still gives a tangent ⟂ n.
  const float k = 1.0F / std::sqrt(3.0F);
  const UnpackedTbn e = unpack_tbn(pack_tbn({k, k, k}, {k, -k, 0, 1}));
  const float dot =
      e.normal[0] * e.tangent[0] + e.normal[1] * e.tangent[1] + e.normal[2] * e.tangent[2];
  EXPECT_NEAR(dot, 0.0F, 1e-5F);
}

// Every direction survives encode → decode within the 10-bit precision:
// normals within 0.3°, tangents (projected ⟂ n first) within 0.3°, signs exact.
TEST(PackedTbn, RoundTripOverRandomFrames) {
  std::mt19937 gen(20261202);
  std::normal_distribution<double> gauss;
  auto next = [&] { return gauss(gen); };
  double worst_n = 0;
  double worst_t = 0;
  for (int i = 0; i < 20000; ++i) {
    core::Vec3d n{next(), next(), next()};
    n = core::normalize(n);
    core::Vec3d a{next(), next(), next()};
    core::Vec3d t = core::normalize(core::sub(a, core::scale(n, core::dot(a, n))));
    const float w = (i % 2) != 0 ? 1.0F : -1.0F;
    const UnpackedTbn d = unpack_tbn(pack_tbn(
        core::cast<float>(n),
        {static_cast<float>(t[0]), static_cast<float>(t[1]), static_cast<float>(t[2]), w}));
    const auto angle = [](const core::Vec3d& x, const core::Vec3d& y) {
      return std::acos(std::clamp(core::dot(x, y), -1.0, 1.0)) * 180.0 / M_PI;
    };
    worst_n = std::max(worst_n, angle(n, core::cast<double>(d.normal)));
    worst_t = std::max(worst_t, angle(t, core::Vec3d{d.tangent[0], d.tangent[1], d.tangent[2]}));
    ASSERT_EQ(d.tangent[3], w);
    ASSERT_TRUE(d.packed_flag);
  }
  EXPECT_LT(worst_n, 0.3) << worst_n;
  EXPECT_LT(worst_t, 0.3) << worst_t;
}

TEST(PackedTbn, AttributeDeclaration) {
  EXPECT_TRUE(is_packed_tbn_attribute(1, 0, 1));   // [1, 0, 1, s, o]: the 16/12/12 layout
  EXPECT_TRUE(is_packed_tbn_attribute(1, 10, 1));  // UInt32×1 says the same
  EXPECT_FALSE(is_packed_tbn_attribute(1, 0, 3));  // Float32×3 is a plain normal
  EXPECT_FALSE(is_packed_tbn_attribute(2, 0, 1));
}

}  // namespace
}  // namespace charkit::bem
