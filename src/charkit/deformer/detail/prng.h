// The project's own pseudo-random numbers: xoshiro256** 1.0 (Blackman and
// Vigna, "Scrambled linear pseudorandom number generators", 2018/2021) seeded
// with SplitMix64 (Steele, Lea and Flood 2014, as in Vigna's splitmix64.c).
//
// Why our own: std:: distributions are implementation-defined, so the same
// seed gives different poses with libstdc++, libc++ and MSVC. Everything here
// uses only integer operations, exact IEEE conversions and one logarithm of
// our own (no libm), so a seed gives the same numbers on every machine and
// standard library. docs/deformer/datasets.md states the exact recipes.
#pragma once

#include <array>
#include <cstdint>

namespace charkit::deformer {

/// SplitMix64: state += 0x9E3779B97F4A7C15, then the variant-13 mix of the state.
class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next();

 private:
  std::uint64_t state_;
};

/// xoshiro256** 1.0 with the conversions used for sampling. Cheap to copy;
/// no global state.
class Rng {
 public:
  /// The four state words are the first four outputs of SplitMix64(seed)
  /// (Vigna's recommended seeding; never all zero).
  explicit Rng(std::uint64_t seed);
  /// Exactly this state (for reference vectors); must not be all zero.
  static Rng from_state(const std::array<std::uint64_t, 4>& state);

  std::uint64_t next_u64();
  /// [0, 1): the top 53 bits times 2^-53.
  double uniform();
  /// [0, 1): the top 24 bits times 2^-24.
  float uniform_float();
  /// lo + (hi - lo) * uniform(); equals lo when lo == hi.
  double uniform(double lo, double hi);
  /// Standard normal by Marsaglia's polar method: u, v = 2 * uniform() - 1
  /// until 0 < s = u^2 + v^2 < 1, then u * sqrt(-2 ln(s) / s) (v's twin is
  /// discarded, so the generator carries no hidden cache).
  double normal();
  /// mean + stddev * normal().
  double normal(double mean, double stddev);

  const std::array<std::uint64_t, 4>& state() const { return s_; }

 private:
  Rng() = default;
  std::array<std::uint64_t, 4> s_{};
};

/// Natural logarithm from + - * / only (frexp + an atanh series), so it is the
/// same on every platform, unlike std::log. Accurate to a few ulp for finite
/// x > 0; returns NaN for x <= 0 or NaN, +inf for +inf.
double portable_log(double x);

}  // namespace charkit::deformer
