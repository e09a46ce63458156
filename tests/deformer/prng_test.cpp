// The PRNG against published reference outputs. Both tables come from the
// `reference` tests of the rand_xoshiro crate (github.com/rust-random/rngs,
// rand_xoshiro/src/splitmix64.rs and xoshiro256starstar.rs), which state that
// they were produced with Vigna's C reference code (prng.di.unimi.it:
// splitmix64.c and xoshiro256starstar.c).
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>

#include "charkit/deformer/detail/prng.h"

using namespace charkit::deformer;

namespace {
constexpr std::uint64_t kSplitMixSeed = 1477776061723855037ULL;
constexpr std::array<std::uint64_t, 5> kSplitMixRef = {
    1985237415132408290ULL, 2979275885539914483ULL, 13511426838097143398ULL, 8488337342461049707ULL,
    15141737807933549159ULL};
// xoshiro256** 1.0 from the state {1, 2, 3, 4}.
constexpr std::array<std::uint64_t, 10> kXoshiroRef = {11520ULL,
                                                       0ULL,
                                                       1509978240ULL,
                                                       1215971899390074240ULL,
                                                       1216172134540287360ULL,
                                                       607988272756665600ULL,
                                                       16172922978634559625ULL,
                                                       8476171486693032832ULL,
                                                       10595114339597558777ULL,
                                                       2904607092377533576ULL};
}  // namespace

TEST(Prng, SplitMix64MatchesReference) {
  SplitMix64 sm(kSplitMixSeed);
  for (std::uint64_t want : kSplitMixRef) EXPECT_EQ(sm.next(), want);
}

TEST(Prng, Xoshiro256StarStarMatchesReference) {
  Rng r = Rng::from_state({1, 2, 3, 4});
  for (std::uint64_t want : kXoshiroRef) EXPECT_EQ(r.next_u64(), want);
}

TEST(Prng, SeedingTakesFourSplitMixOutputs) {
  Rng r(kSplitMixSeed);
  const std::array<std::uint64_t, 4> want = {kSplitMixRef[0], kSplitMixRef[1], kSplitMixRef[2],
                                             kSplitMixRef[3]};
  EXPECT_EQ(r.state(), want);
}

TEST(Prng, UniformUsesTheTopBitsOfTheReferenceOutputs) {
  Rng r = Rng::from_state({1, 2, 3, 4});
  // 11520 >> 11 = 5, 0 >> 11 = 0, 1509978240 >> 11 = 737294 (remainder dropped).
  EXPECT_EQ(r.uniform(), 5.0 * 0x1.0p-53);
  EXPECT_EQ(r.uniform(), 0.0);
  EXPECT_EQ(r.uniform(), 737294.0 * 0x1.0p-53);
  for (std::size_t i = 3; i < kXoshiroRef.size(); ++i)
    EXPECT_EQ(r.uniform(), static_cast<double>(kXoshiroRef[i] >> 11) * 0x1.0p-53);
  Rng f = Rng::from_state({1, 2, 3, 4});
  for (std::uint64_t ref : kXoshiroRef)
    EXPECT_EQ(f.uniform_float(), static_cast<float>(ref >> 40) * 0x1.0p-24F);
}

TEST(Prng, UniformRange) {
  Rng r(7);
  EXPECT_EQ(r.uniform(3.25, 3.25), 3.25);
  double lo = 1.0, hi = 0.0;
  for (int i = 0; i < 10000; ++i) {
    const double u = r.uniform(-30.0, 45.0);
    ASSERT_GE(u, -30.0);
    ASSERT_LT(u, 45.0);
    lo = std::min(lo, u);
    hi = std::max(hi, u);
  }
  EXPECT_LT(lo, -29.0);  // 10,000 draws reach both ends of the range
  EXPECT_GT(hi, 44.0);
}

TEST(Prng, SameSeedSameStreamDifferentSeedDifferentStream) {
  Rng a(42), b(42), c(43);
  bool differs = false;
  for (int i = 0; i < 16; ++i) {
    const std::uint64_t x = a.next_u64();
    EXPECT_EQ(x, b.next_u64());
    differs = differs || x != c.next_u64();
  }
  EXPECT_TRUE(differs);
}

TEST(Prng, PortableLogAgreesWithLibm) {
  EXPECT_EQ(portable_log(1.0), 0.0);
  EXPECT_TRUE(std::isnan(portable_log(0.0)));
  EXPECT_TRUE(std::isnan(portable_log(-1.0)));
  EXPECT_TRUE(std::isinf(portable_log(INFINITY)));
  const double xs[] = {1e-300,    1e-10, 0.001, 0.25, 0.5,  0.7071, 0.7072, 0.9999999,
                       1.0000001, 1.5,   2.0,   3.0,  10.0, 1e10,   1e300,  4.9e-324};
  for (double x : xs) {
    const double want = std::log(x);
    EXPECT_NEAR(portable_log(x), want, 4e-16 * std::fabs(want) + 1e-300) << x;
  }
  Rng r(1);
  for (int i = 0; i < 1000; ++i) {
    const double x = r.uniform() + 1e-3;
    EXPECT_NEAR(portable_log(x), std::log(x), 1e-15) << x;
  }
}

TEST(Prng, NormalFollowsThePolarRecipe) {
  Rng a(2024), b(2024);
  for (int k = 0; k < 100; ++k) {
    double want = 0.0;
    for (;;) {  // Marsaglia's polar method on the same uniforms
      const double u = 2.0 * b.uniform() - 1.0;
      const double v = 2.0 * b.uniform() - 1.0;
      const double s = u * u + v * v;
      if (s >= 1.0 || s == 0.0) continue;
      want = u * std::sqrt(-2.0 * std::log(s) / s);
      break;
    }
    EXPECT_NEAR(a.normal(), want, 1e-13 * std::max(1.0, std::fabs(want)));
  }
  EXPECT_EQ(a.state(), b.state());  // same number of uniforms consumed
}

TEST(Prng, NormalMoments) {
  Rng r(99);
  const int n = 200000;
  double sum = 0.0, sq = 0.0;
  for (int i = 0; i < n; ++i) {
    const double z = r.normal(2.0, 3.0);
    sum += z;
    sq += z * z;
  }
  const double mean = sum / n;
  const double var = sq / n - mean * mean;
  // Standard errors: 3 / sqrt(n) = 0.0067 for the mean, ~0.028 for the variance.
  EXPECT_NEAR(mean, 2.0, 0.03);
  EXPECT_NEAR(var, 9.0, 0.15);
}
