// DDS files (Microsoft DirectDraw Surface) as game textures: the header read
// and checked, the pixel data taken as it is, so a texture a creator keeps
// as DDS reaches a package byte for byte (bem pack, docs/bem/pack.md).
// Formats (Unity TextureFormat numbers, texture_decode.h):
//  - DX10 header: BC1, BC3, BC4, BC5, BC7 (UNORM; BC1/BC3/BC7 also
//    UNORM_SRGB), R8G8B8A8 (UNORM / UNORM_SRGB) as RGBA32, B8G8R8A8 (UNORM /
//    UNORM_SRGB) as RGBA32 with B and R swapped, R8_UNORM as R8; sRGB is the
//    DXGI format's.
//  - Legacy header: FourCC DXT1, DXT5, ATI1 / BC4U, ATI2 / BC5U; 32-bit
//    RGBA or BGRA masks (RGBA32); 8-bit luminance or red (R8); no sRGB
//    information (srgb empty).
// One 2-D texture with its mip chain: cube maps, volumes and arrays are
// refused. Sizes are checked before anything is copied.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "charkit/core/bytes.h"
#include "charkit/core/result.h"

namespace charkit::scene {

struct DdsTexture {
  std::uint32_t format = 0;  ///< Unity TextureFormat
  std::uint32_t width = 0, height = 0;
  std::uint32_t mips = 1;
  std::optional<bool> srgb;        ///< from a DX10 header; empty for a legacy one
  std::vector<std::uint8_t> data;  ///< the mip chain, largest first (BGRA swizzled to RGBA)
  bool swizzled = false;           ///< B and R were swapped (a BGRA file)
};

/// True when the bytes start with the DDS magic "DDS ".
bool is_dds(core::Bytes file);

/// Read a DDS file. Errors (SCENE_DDS, the byte offset in the message): a
/// header that is short or inconsistent, a format listed above not, a cube
/// map / volume / array, sizes outside 1..32768 or more than 16 mips, data
/// shorter than the mip chain.
core::Result<DdsTexture> parse_dds(core::Bytes file);

}  // namespace charkit::scene
