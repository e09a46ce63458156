// Mip chains in the game's texture formats (texture_encode.h).
#include <algorithm>
#include <string>

#include <astcenc.h>
#include <squish.h>

#include "charkit/scene/error_codes.h"
#include "charkit/scene/texture_decode.h"
#include "charkit/scene/texture_encode.h"

namespace charkit::scene {

namespace {

bool block_format(std::uint32_t f) {
  return f == texture_format::kBC1 || f == texture_format::kBC3 || f == texture_format::kBC4 ||
         f == texture_format::kBC5 || f == texture_format::kBC7;
}

/// One level in `format` (the image's size is a multiple of 4 for block
/// formats, or a small mip rounded up by repeating its edge).
std::vector<std::uint8_t> encode_level(std::uint32_t format, const RgbaImage& level,
                                       core::Executor* executor) {
  const std::size_t n = std::size_t{level.width} * level.height;
  std::vector<std::uint8_t> out;
  switch (format) {
    case texture_format::kRGBA32:
      return level.pixels;
    case texture_format::kR8:
      out.resize(n);
      for (std::size_t i = 0; i < n; ++i) out[i] = level.pixels[4 * i];
      return out;
    case texture_format::kBC7:
      return encode_bc7(level, {}, executor);
    default:
      break;
  }
  // libsquish: BC1 (kDxt1), BC3 (kDxt5), BC4 (red), BC5 (red, green); a
  // level smaller than a block is padded by repeating its last row/column.
  const std::uint32_t bw = (level.width + 3) / 4 * 4, bh = (level.height + 3) / 4 * 4;
  RgbaImage padded;
  padded.width = bw;
  padded.height = bh;
  padded.pixels.resize(std::size_t{bw} * bh * 4);
  for (std::uint32_t y = 0; y < bh; ++y)
    for (std::uint32_t x = 0; x < bw; ++x)
      std::copy_n(&level.pixels[level.pixel_offset(std::min(x, level.width - 1),
                                                   std::min(y, level.height - 1))],
                  4, &padded.pixels[padded.pixel_offset(x, y)]);
  const int flags = format == texture_format::kBC1   ? squish::kDxt1
                    : format == texture_format::kBC3 ? squish::kDxt5
                    : format == texture_format::kBC4 ? squish::kBc4
                                                     : squish::kBc5;
  out.resize(static_cast<std::size_t>(
      squish::GetStorageRequirements(static_cast<int>(bw), static_cast<int>(bh), flags)));
  squish::CompressImage(padded.pixels.data(), static_cast<int>(bw), static_cast<int>(bh),
                        out.data(), flags | squish::kColourIterativeClusterFit);
  return out;
}

std::uint32_t astc_dim(std::uint32_t f) {
  return f == texture_format::kASTC4x4   ? 4
         : f == texture_format::kASTC5x5 ? 5
         : f == texture_format::kASTC6x6 ? 6
                                         : 0;
}

/// The levels in ASTC (libastcenc, LDR, sRGB profile when srgb, medium
/// effort), one context for the chain.
core::Result<std::vector<std::uint8_t>> encode_astc(std::uint32_t format,
                                                    const std::vector<RgbaImage>& levels,
                                                    bool srgb) {
  const std::uint32_t dim = astc_dim(format);
  astcenc_config config{};
  astcenc_error status = astcenc_config_init(srgb ? ASTCENC_PRF_LDR_SRGB : ASTCENC_PRF_LDR, dim,
                                             dim, 1, ASTCENC_PRE_MEDIUM, 0, &config);
  astcenc_context* context = nullptr;
  if (status == ASTCENC_SUCCESS) status = astcenc_context_alloc(&config, 1, &context);
  std::vector<std::uint8_t> chain;
  for (std::size_t l = 0; status == ASTCENC_SUCCESS && l < levels.size(); ++l) {
    RgbaImage level = levels[l];  // astcenc takes a mutable image
    void* slices[1] = {level.pixels.data()};
    astcenc_image in{level.width, level.height, 1, ASTCENC_TYPE_U8, slices};
    const astcenc_swizzle swizzle{ASTCENC_SWZ_R, ASTCENC_SWZ_G, ASTCENC_SWZ_B, ASTCENC_SWZ_A};
    std::vector<std::uint8_t> blocks(std::size_t{(level.width + dim - 1) / dim} *
                                     ((level.height + dim - 1) / dim) * 16);
    status = astcenc_compress_image(context, &in, &swizzle, blocks.data(), blocks.size(), 0);
    if (status == ASTCENC_SUCCESS) status = astcenc_compress_reset(context);
    chain.insert(chain.end(), blocks.begin(), blocks.end());
  }
  if (context != nullptr) astcenc_context_free(context);
  if (status != ASTCENC_SUCCESS)
    return core::make_error(codes::SCENE_TEXTURE_ENCODE,
                            std::string("libastcenc: ") + astcenc_get_error_string(status));
  return chain;
}

}  // namespace

bool can_encode_texture(std::uint32_t format) {
  return format == texture_format::kRGBA32 || format == texture_format::kR8 ||
         block_format(format) || astc_dim(format) != 0;
}

core::Result<std::vector<std::uint8_t>> encode_texture(std::uint32_t format, const RgbaImage& image,
                                                       std::uint32_t mips, bool srgb,
                                                       core::Executor* executor) {
  if (!can_encode_texture(format))
    return core::make_error(
        codes::SCENE_TEXTURE_UNSUPPORTED_FORMAT,
        std::string("charkit has no encoder for ") + texture_format_name(format) +
            " (it writes RGBA32, R8, BC1, BC3, BC4, BC5, BC7 and ASTC 4x4/5x5/6x6)");
  if (image.width == 0 || image.height == 0 ||
      image.pixels.size() != std::size_t{image.width} * image.height * 4)
    return core::make_error(codes::SCENE_TEXTURE_DIMENSIONS, "the image is empty");
  if (block_format(format) && (image.width % 4 != 0 || image.height % 4 != 0))
    return core::make_error(codes::SCENE_TEXTURE_DIMENSIONS,
                            std::string(texture_format_name(format)) +
                                " needs a size that is a "
                                "multiple of 4 (§8); this image is " +
                                std::to_string(image.width) + "x" + std::to_string(image.height));
  std::vector<RgbaImage> levels;
  std::uint32_t w = image.width, h = image.height;
  for (std::uint32_t level = 0; level < std::max<std::uint32_t>(mips, 1); ++level) {
    levels.push_back(level == 0 ? image : resize_to(image, w, h, srgb));
    w = std::max<std::uint32_t>(1, w / 2);
    h = std::max<std::uint32_t>(1, h / 2);
  }
  if (astc_dim(format) != 0) return encode_astc(format, levels, srgb);
  std::vector<std::uint8_t> chain;
  for (const RgbaImage& l : levels) {
    const std::vector<std::uint8_t> bytes = encode_level(format, l, executor);
    chain.insert(chain.end(), bytes.begin(), bytes.end());
  }
  return chain;
}

}  // namespace charkit::scene
