// The game's packed normal/tangent word (docs/bem/export.md §"Packed normal
// and tangent"): the 16/12/12 vertex layout declares its normal as one
// Float32 slot, `[1, 0, 1, 0, 12]`, whose 32 bits are not a float but
//
//   bits  0..9   octahedral normal x, signed 10-bit (two's complement) / 511
//   bits 10..19  octahedral normal y, signed 10-bit / 511
//   bits 20..29  tangent code t in [-1, 1], signed 10-bit / 511
//   bit  30      1: the word is packed (the flag the game's tools set)
//   bit  31      bitangent sign: 1 → +1, 0 → −1
//
// The tangent code is a "diamond" angle in the plane of the normal: with the
// reference direction R = normalize(n.y − n.z, n.z − n.x, n.x − n.y) (R ⟂ n;
// when |R| < 1e-6, n ≈ ±(1,1,1)/√3, R = normalize(n × h) with h = (1,0,0) if
// |n.x| ≥ 0.9 else (0,1,0)) and B = R × n, a tangent T has cos = T·R,
// sin = T·B, u = cos / (|cos| + |sin|), and t = ±(1 + u)/2 with the sign of
// sin (+ when sin = 0). Values are quantised with round-half-to-even and
// clamped to ±511, as the public creator tools do.
#pragma once

#include <cstdint>

#include "charkit/core/math.h"

namespace charkit::bem {

struct UnpackedTbn {
  core::Vec3f normal{0, 0, 1};      ///< unit length
  core::Vec4f tangent{1, 0, 0, 1};  ///< unit xyz ⟂ normal; w = bitangent sign (±1)
  bool packed_flag = true;          ///< bit 30 was set
};

/// Decode one word (bits as read little-endian from the vertex stream).
UnpackedTbn unpack_tbn(std::uint32_t word);

/// Encode a normal (any length > 0), a tangent (its part ⟂ normal is what
/// counts) and a bitangent sign (w ≥ 0 → +1) into one word with bit 30 set.
/// The tangent is coded against the basis of the *quantised* normal, the one
/// the decoder rebuilds (the public tools use the exact normal, which loses
/// up to 4° of tangent near n ≈ ±(1,1,1)/√3; this keeps it under 0.3°).
std::uint32_t pack_tbn(const core::Vec3f& normal, const core::Vec4f& tangent);

/// True for an attribute declaration that holds the packed word: semantic
/// Normal (1) with one Float32 (0) or UInt32 (10) component.
constexpr bool is_packed_tbn_attribute(std::uint32_t semantic, std::uint32_t format,
                                       std::uint32_t dimension) {
  return semantic == 1 && dimension == 1 && (format == 0 || format == 10);
}

}  // namespace charkit::bem
