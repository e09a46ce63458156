// BC7 (BPTC UNORM) block decoding, written from the public format
// description (Khronos Data Format Specification, "BPTC Compressed Texture
// Image Formats"; D3D11 BC7 format). No Debian library decodes BC7.
#pragma once

#include <array>
#include <cstdint>

namespace charkit::scene {

/// Decode one 16-byte BC7 block to 16 RGBA8 pixels, row-major (pixel
/// x + 4*y at out[4*(x + 4*y)]). Every 16-byte input decodes: the reserved
/// mode (first byte 0) gives transparent black, as the format prescribes.
void decode_bc7_block(const std::uint8_t* block, std::uint8_t* out_rgba);

}  // namespace charkit::scene
