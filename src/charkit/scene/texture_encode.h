// Texture encoding for the game's GPU formats (Unity TextureFormat numbers,
// BEM §8), used by `bem pack`: BC7 (modes 1, 5 and 6, from the public BPTC
// format description; bc7_encode.cpp), BC1/BC3/BC4/BC5 (libsquish), ASTC
// 4x4/5x5/6x6 LDR (libastcenc), RGBA32 and R8 (copies), each with its mip
// chain.
#pragma once

#include <cstdint>
#include <vector>

#include "charkit/core/parallel.h"
#include "charkit/core/result.h"
#include "charkit/scene/bc7_encode.h"
#include "charkit/scene/image.h"

namespace charkit::scene {

/// BC7 blocks of `image` (rows top to bottom as given), 16 bytes per 4×4
/// block, blocks row-major; edge blocks repeat the last row / column. Runs
/// block rows on `executor` (nullptr: the process-wide pool); the bytes do
/// not depend on the executor.
std::vector<std::uint8_t> encode_bc7(const RgbaImage& image, const Bc7EncodeOptions& options = {},
                                     core::Executor* executor = nullptr);

/// Whether encode_texture can write `format`.
bool can_encode_texture(std::uint32_t format);

/// The mip chain of `image` (rows as given) in `format`: level 0 the image,
/// each next level half the size (at least 1) resampled from level 0
/// (sRGB-aware when `srgb`), `mips` levels, concatenated as BEM §8 stores
/// them. BC4 and R8 take the red channel, BC5 red and green. Errors:
/// SCENE_TEXTURE_UNSUPPORTED_FORMAT (formats we do not know),
/// SCENE_TEXTURE_DIMENSIONS (empty, or a BC format whose size is not a
/// multiple of 4), SCENE_TEXTURE_ENCODE (libastcenc failed).
core::Result<std::vector<std::uint8_t>> encode_texture(std::uint32_t format, const RgbaImage& image,
                                                       std::uint32_t mips, bool srgb,
                                                       core::Executor* executor = nullptr);

}  // namespace charkit::scene
