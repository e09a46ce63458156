#include "charkit/deformer/detail/prng.h"

#include <cmath>
#include <limits>

namespace charkit::deformer {

namespace {
std::uint64_t rotl(std::uint64_t x, int k) {
  return (x << k) | (x >> (64 - k));
}
}  // namespace

std::uint64_t SplitMix64::next() {
  state_ += 0x9E3779B97F4A7C15ULL;
  std::uint64_t z = state_;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

Rng::Rng(std::uint64_t seed) {
  SplitMix64 sm(seed);
  for (auto& w : s_) w = sm.next();
}

Rng Rng::from_state(const std::array<std::uint64_t, 4>& state) {
  Rng r;
  r.s_ = state;
  return r;
}

std::uint64_t Rng::next_u64() {
  const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Rng::uniform() {
  // Both conversions are exact: a 53-bit integer and a power of two.
  return static_cast<double>(next_u64() >> 11) * 0x1.0p-53;
}

float Rng::uniform_float() {
  return static_cast<float>(next_u64() >> 40) * 0x1.0p-24F;
}

double Rng::uniform(double lo, double hi) {
  const double span = hi - lo;
  const double scaled = span * uniform();  // separate statements: no FMA contraction
  return lo + scaled;
}

double Rng::normal() {
  for (;;) {
    const double u = 2.0 * uniform() - 1.0;
    const double v = 2.0 * uniform() - 1.0;
    const double uu = u * u;
    const double vv = v * v;
    const double s = uu + vv;
    if (s >= 1.0 || s == 0.0) continue;
    const double l = portable_log(s);
    const double q = -2.0 * l / s;
    return u * std::sqrt(q);  // sqrt is correctly rounded by IEEE 754
  }
}

double Rng::normal(double mean, double stddev) {
  const double z = stddev * normal();
  return mean + z;
}

double portable_log(double x) {
  if (std::isnan(x) || x <= 0.0) return std::numeric_limits<double>::quiet_NaN();
  if (std::isinf(x)) return x;
  int e = 0;
  double m = std::frexp(x, &e);      // exact: x = m * 2^e, m in [0.5, 1)
  if (m < 0.70710678118654752440) {  // bring m into [sqrt(1/2), sqrt(2))
    m *= 2.0;
    e -= 1;
  }
  // ln(m) = 2 atanh(t), t = (m - 1) / (m + 1), |t| < 0.1716: t^2 < 0.0295, so
  // 13 odd terms reach below 2^-60 relative.
  const double num = m - 1.0;
  const double den = m + 1.0;
  const double t = num / den;
  const double t2 = t * t;
  double sum = 0.0;
  for (int k = 25; k >= 1; k -= 2) {
    const double prod = sum * t2;
    sum = prod + 1.0 / static_cast<double>(k);
  }
  const double ln_m = 2.0 * t * sum;
  // ln 2 split so e * ln2_hi is exact for |e| < 2^11.
  constexpr double kLn2Hi = 6.93147180369123816490e-01;
  constexpr double kLn2Lo = 1.90821492927058770002e-10;
  const double de = static_cast<double>(e);
  const double lo = de * kLn2Lo;
  const double hi = de * kLn2Hi;
  const double small = ln_m + lo;
  return hi + small;
}

}  // namespace charkit::deformer
