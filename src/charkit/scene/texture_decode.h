// Decoding of game texture formats (Unity TextureFormat numbers, BEM §8) to
// RGBA8: the top mip level only, rows in stored order.
//  - RGBA32 (4): copied; R8 (63): grey (r, r, r, 255)
//  - BC1 (10), BC3 (12): libsquish
//  - BC4 (26): grey (r, r, r, 255); BC5 (27): (r, g, 0, 255) — the alpha-block
//    decoder of libsquish's BC3 path per channel
//  - BC7 (25): our own decoder (bc7.h)
//  - ASTC 4x4 / 5x5 / 6x6 (48/49/50): libastcenc, LDR (sRGB profile when srgb)
// Anything else fails with SCENE_TEXTURE_UNSUPPORTED_FORMAT.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "charkit/core/result.h"
#include "charkit/scene/image.h"

namespace charkit::scene {

namespace texture_format {
inline constexpr std::uint32_t kRGBA32 = 4;
inline constexpr std::uint32_t kBC1 = 10;
inline constexpr std::uint32_t kBC3 = 12;
inline constexpr std::uint32_t kBC7 = 25;
inline constexpr std::uint32_t kBC4 = 26;
inline constexpr std::uint32_t kBC5 = 27;
inline constexpr std::uint32_t kASTC4x4 = 48;
inline constexpr std::uint32_t kASTC5x5 = 49;
inline constexpr std::uint32_t kASTC6x6 = 50;
inline constexpr std::uint32_t kR8 = 63;
}  // namespace texture_format

/// "RGBA32", "BC1", … or "format N" for numbers we do not know.
const char* texture_format_name(std::uint32_t format);
/// The format of a name as texture_format_name writes it, case and the
/// space in "ASTC 4x4" ignored ("bc7", "ASTC6x6", "astc_6x6"), or a Unity
/// TextureFormat number of a format listed above; nullopt for anything else.
std::optional<std::uint32_t> texture_format_from_name(std::string_view name);

/// Bytes of the top mip of a width x height texture, or nullopt when the
/// format is not one we decode.
std::optional<std::uint64_t> top_mip_bytes(std::uint32_t format, std::uint32_t width,
                                           std::uint32_t height);

struct DecodeLimits {
  /// Largest width * height decoded (4 bytes each in the output).
  std::uint64_t max_pixels = std::uint64_t{16384} * 16384;
};

/// Decode the top mip of `data` (which may hold further mips after it).
/// Errors: SCENE_TEXTURE_UNSUPPORTED_FORMAT, SCENE_TEXTURE_DIMENSIONS (zero
/// size, or a BC format whose size is not a multiple of 4, §8),
/// SCENE_TEXTURE_TOO_LARGE, SCENE_TEXTURE_DATA_SHORT, SCENE_TEXTURE_DECODE.
core::Result<RgbaImage> decode_top_mip(std::uint32_t format, std::uint32_t width,
                                       std::uint32_t height, bool srgb,
                                       std::span<const std::uint8_t> data,
                                       const DecodeLimits& limits = {});

}  // namespace charkit::scene
