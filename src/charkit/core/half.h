// IEEE 754 binary16 ("half float") conversions, the one copy in the library:
// BEM's Float16 vertex format (bem export and pack) and the packed extras of
// the subdivision kernels (docs/deform/subdivision.md) use them.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace charkit::core {

/// Float to binary16, round to nearest even (overflow → ±inf, NaN kept as a
/// quiet NaN).
inline std::uint16_t float_to_half(float f) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  const auto sign = static_cast<std::uint16_t>((x >> 16) & 0x8000);
  const std::uint32_t abs = x & 0x7FFFFFFF;
  if (abs >= 0x7F800000)  // inf or NaN
    return static_cast<std::uint16_t>(sign | 0x7C00 | (abs > 0x7F800000 ? 0x200 : 0));
  if (abs >= 0x477FF000) return static_cast<std::uint16_t>(sign | 0x7C00);  // rounds past 65504
  if (abs < 0x38800000) {  // below 2^-14: subnormal half (or zero)
    const float scaled = std::bit_cast<float>(abs) * 16777216.0F;  // in units of 2^-24
    return static_cast<std::uint16_t>(sign | static_cast<std::uint16_t>(std::nearbyint(scaled)));
  }
  // Normal: rebias the exponent, round the 13 dropped mantissa bits to even.
  std::uint32_t h = ((abs >> 13) - (112U << 10));
  const std::uint32_t rest = abs & 0x1FFF;
  if (rest > 0x1000 || (rest == 0x1000 && (h & 1) != 0)) ++h;
  return static_cast<std::uint16_t>(sign | h);
}

/// binary16 to float (exact: every half is a float).
inline float half_to_float(std::uint16_t h) {
  const int exponent = (h >> 10) & 0x1F;
  const int mantissa = h & 0x3FF;
  float v = 0.0F;
  if (exponent == 0) {
    v = std::ldexp(static_cast<float>(mantissa), -24);  // subnormal
  } else if (exponent == 31) {
    v = mantissa != 0 ? std::numeric_limits<float>::quiet_NaN()
                      : std::numeric_limits<float>::infinity();
  } else {
    v = std::ldexp(static_cast<float>(mantissa | 0x400), exponent - 25);
  }
  return (h & 0x8000) != 0 ? -v : v;
}

}  // namespace charkit::core
