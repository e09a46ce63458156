// 8-bit images, their PNG encoding (stb_image_write, zlib inside), decoding
// (libpng, TurboJPEG) and downscaling (stb_image_resize).
#pragma once

#include <cstdint>
#include <vector>

#include "charkit/core/bytes.h"
#include "charkit/core/result.h"

namespace charkit::scene {

/// Width x height pixels, rows top to bottom as stored, RGBA8 per pixel.
struct RgbaImage {
  std::uint32_t width = 0;
  std::uint32_t height = 0;
  std::vector<std::uint8_t> pixels;  ///< width * height * 4 bytes

  std::size_t pixel_offset(std::uint32_t x, std::uint32_t y) const {
    return (std::size_t{y} * width + x) * 4;
  }
};

/// Reverse the row order in place (Unity stores the bottom row first).
void flip_rows(RgbaImage& image);

/// The image scaled down (never up) so that its longer side is at most
/// `max_side` (≥ 1), keeping the aspect ratio (each side at least 1 pixel);
/// a Mitchell filter, colour channels in linear light when `srgb`, alpha
/// linear. An image already small enough is returned as is.
RgbaImage resize_to_fit(const RgbaImage& image, std::uint32_t max_side, bool srgb);

/// The image scaled to exactly width x height (≥ 1 each; the same filter
/// and colour handling as resize_to_fit).
RgbaImage resize_to(const RgbaImage& image, std::uint32_t width, std::uint32_t height, bool srgb);

/// PNG of an RGBA8 image (colour type 6). Errors: SCENE_PNG_SIZE (empty,
/// pixel count mismatch or too large for stb), SCENE_PNG_ENCODE.
core::Result<std::vector<std::uint8_t>> encode_png(const RgbaImage& image);

/// A PNG (libpng) or JPEG (TurboJPEG) decoded to RGBA8, rows top to bottom.
/// Errors: SCENE_IMAGE_DECODE (not PNG/JPEG, corrupt, or a side past
/// `max_side`).
core::Result<RgbaImage> decode_image(core::Bytes bytes, std::uint32_t max_side = 16384);

/// A 16-bit PNG (colour type 6 with 4 channels, 0 with 1), width * height *
/// channels samples, each written big-endian as PNG wants. Errors as
/// encode_png.
core::Result<std::vector<std::uint8_t>> encode_png16(std::uint32_t width, std::uint32_t height,
                                                     std::uint32_t channels,
                                                     const std::vector<std::uint16_t>& samples);

/// PNG of a one-channel image (colour type 0, grey), width * height bytes.
core::Result<std::vector<std::uint8_t>> encode_png_grey(std::uint32_t width, std::uint32_t height,
                                                        const std::vector<std::uint8_t>& grey);

}  // namespace charkit::scene
