// §7 vertex attribute facts shared by the mesh checks, the exporter and the
// packer: the element size of each Unity VertexAttributeFormat and the
// attribute semantics they switch on.
#pragma once

#include <cstdint>

namespace charkit::bem::vertex_attr {

/// Element bytes of VertexAttributeFormat 0..11 (Float32, Float16, UNorm8,
/// SNorm8, UNorm16, SNorm16, UInt8, SInt8, UInt16, SInt16, UInt32, SInt32).
inline constexpr std::uint32_t kFormatBytes[12] = {4, 2, 1, 1, 2, 2, 1, 1, 2, 2, 4, 4};

/// VertexAttribute semantics (§7).
enum Semantic : std::uint32_t {
  kPosition = 0,
  kNormal = 1,
  kTangent = 2,
  kColor = 3,
  kTexCoord0 = 4,
  kTexCoord7 = 11,
  kBlendWeight = 12,
  kBlendIndices = 13,
};

}  // namespace charkit::bem::vertex_attr
