#include "charkit/scene/texture_decode.h"

#include <astcenc.h>
#include <squish.h>

#include <array>
#include <cstring>
#include <string>

#include "charkit/scene/detail/bc7.h"
#include "charkit/scene/error_codes.h"

namespace charkit::scene {
namespace {

namespace tf = texture_format;
using core::make_error;

bool is_bc(std::uint32_t format) {
  return format == tf::kBC1 || format == tf::kBC3 || format == tf::kBC4 || format == tf::kBC5 ||
         format == tf::kBC7;
}

std::uint32_t bc_block_bytes(std::uint32_t format) {
  return (format == tf::kBC1 || format == tf::kBC4) ? 8 : 16;
}

std::uint32_t astc_block_dim(std::uint32_t format) {
  return format == tf::kASTC4x4 ? 4 : format == tf::kASTC5x5 ? 5 : 6;
}

bool is_astc(std::uint32_t format) {
  return format == tf::kASTC4x4 || format == tf::kASTC5x5 || format == tf::kASTC6x6;
}

std::uint64_t div_up(std::uint64_t a, std::uint64_t b) {
  return (a + b - 1) / b;
}

/// Writes a decoded 4x4 block into the image (BC sizes are multiples of 4).
void put_block(RgbaImage& image, std::uint32_t bx, std::uint32_t by, const std::uint8_t* rgba16) {
  for (std::uint32_t y = 0; y < 4; ++y) {
    std::memcpy(&image.pixels[image.pixel_offset(bx * 4, by * 4 + y)], rgba16 + y * 16, 16);
  }
}

/// One BC4 channel block (the BC3 alpha block layout) decoded through
/// libsquish: a BC3 block with that alpha block and a zero colour block.
void decode_bc4_channel(const std::uint8_t* block8, std::uint8_t* values16) {
  std::uint8_t bc3[16] = {};
  std::memcpy(bc3, block8, 8);
  std::uint8_t rgba[64];
  squish::Decompress(rgba, bc3, squish::kDxt5);
  for (int i = 0; i < 16; ++i) {
    values16[i] = rgba[4 * i + 3];
  }
}

void decode_bc(std::uint32_t format, const std::uint8_t* data, RgbaImage& image) {
  const std::uint32_t bw = image.width / 4;
  const std::uint32_t bh = image.height / 4;
  const std::uint32_t block_bytes = bc_block_bytes(format);
  std::uint8_t px[64];
  for (std::uint32_t by = 0; by < bh; ++by) {
    for (std::uint32_t bx = 0; bx < bw; ++bx) {
      const std::uint8_t* block = data + (std::size_t{by} * bw + bx) * block_bytes;
      switch (format) {
        case tf::kBC1:
          squish::Decompress(px, block, squish::kDxt1);
          break;
        case tf::kBC3:
          squish::Decompress(px, block, squish::kDxt5);
          break;
        case tf::kBC7:
          decode_bc7_block(block, px);
          break;
        case tf::kBC4: {
          std::uint8_t r[16];
          decode_bc4_channel(block, r);
          for (int i = 0; i < 16; ++i) {
            px[4 * i] = px[4 * i + 1] = px[4 * i + 2] = r[i];
            px[4 * i + 3] = 255;
          }
          break;
        }
        default: {  // BC5: red block then green block
          std::uint8_t r[16];
          std::uint8_t g[16];
          decode_bc4_channel(block, r);
          decode_bc4_channel(block + 8, g);
          for (int i = 0; i < 16; ++i) {
            px[4 * i] = r[i];
            px[4 * i + 1] = g[i];
            px[4 * i + 2] = 0;
            px[4 * i + 3] = 255;
          }
          break;
        }
      }
      put_block(image, bx, by, px);
    }
  }
}

core::Status decode_astc(std::uint32_t format, bool srgb, std::span<const std::uint8_t> data,
                         RgbaImage& image) {
  const std::uint32_t dim = astc_block_dim(format);
  astcenc_config config{};
  astcenc_error status = astcenc_config_init(srgb ? ASTCENC_PRF_LDR_SRGB : ASTCENC_PRF_LDR, dim,
                                             dim, 1, 0.0F, ASTCENC_FLG_DECOMPRESS_ONLY, &config);
  if (status != ASTCENC_SUCCESS) {
    return make_error(codes::SCENE_TEXTURE_DECODE,
                      std::string("astcenc_config_init: ") + astcenc_get_error_string(status));
  }
  astcenc_context* context = nullptr;
  status = astcenc_context_alloc(&config, 1, &context);
  if (status != ASTCENC_SUCCESS) {
    return make_error(codes::SCENE_TEXTURE_DECODE,
                      std::string("astcenc_context_alloc: ") + astcenc_get_error_string(status));
  }
  void* slices[1] = {image.pixels.data()};
  astcenc_image out{image.width, image.height, 1, ASTCENC_TYPE_U8, slices};
  const astcenc_swizzle swizzle{ASTCENC_SWZ_R, ASTCENC_SWZ_G, ASTCENC_SWZ_B, ASTCENC_SWZ_A};
  status = astcenc_decompress_image(context, data.data(), data.size(), &out, &swizzle, 0);
  astcenc_context_free(context);
  if (status != ASTCENC_SUCCESS) {
    return make_error(codes::SCENE_TEXTURE_DECODE,
                      std::string("astcenc_decompress_image: ") + astcenc_get_error_string(status));
  }
  return core::Ok{};
}

}  // namespace

std::optional<std::uint32_t> texture_format_from_name(std::string_view name) {
  std::string key;
  for (char c : name)
    if (c != ' ' && c != '_' && c != '-')
      key += static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  for (std::uint32_t f : {tf::kRGBA32, tf::kBC1, tf::kBC3, tf::kBC7, tf::kBC4, tf::kBC5,
                          tf::kASTC4x4, tf::kASTC5x5, tf::kASTC6x6, tf::kR8}) {
    std::string known;
    for (const char* c = texture_format_name(f); *c; ++c)
      if (*c != ' ') known += *c == 'x' ? 'X' : *c;
    if (key == known || key == std::to_string(f)) return f;
  }
  return std::nullopt;
}

const char* texture_format_name(std::uint32_t format) {
  switch (format) {
    case tf::kRGBA32:
      return "RGBA32";
    case tf::kBC1:
      return "BC1";
    case tf::kBC3:
      return "BC3";
    case tf::kBC7:
      return "BC7";
    case tf::kBC4:
      return "BC4";
    case tf::kBC5:
      return "BC5";
    case tf::kASTC4x4:
      return "ASTC 4x4";
    case tf::kASTC5x5:
      return "ASTC 5x5";
    case tf::kASTC6x6:
      return "ASTC 6x6";
    case tf::kR8:
      return "R8";
    default:
      return "unsupported format";
  }
}

std::optional<std::uint64_t> top_mip_bytes(std::uint32_t format, std::uint32_t width,
                                           std::uint32_t height) {
  const std::uint64_t w = width;
  const std::uint64_t h = height;
  if (format == tf::kRGBA32) {
    return w * h * 4;
  }
  if (format == tf::kR8) {
    return w * h;
  }
  if (is_bc(format)) {
    return div_up(w, 4) * div_up(h, 4) * bc_block_bytes(format);
  }
  if (is_astc(format)) {
    const std::uint32_t dim = astc_block_dim(format);
    return div_up(w, dim) * div_up(h, dim) * 16;
  }
  return std::nullopt;
}

core::Result<RgbaImage> decode_top_mip(std::uint32_t format, std::uint32_t width,
                                       std::uint32_t height, bool srgb,
                                       std::span<const std::uint8_t> data,
                                       const DecodeLimits& limits) {
  const auto needed = top_mip_bytes(format, width, height);
  if (!needed) {
    return make_error(codes::SCENE_TEXTURE_UNSUPPORTED_FORMAT,
                      "texture format " + std::to_string(format) + " cannot be decoded");
  }
  if (width == 0 || height == 0 || (is_bc(format) && (width % 4 != 0 || height % 4 != 0))) {
    return make_error(codes::SCENE_TEXTURE_DIMENSIONS,
                      std::to_string(width) + "x" + std::to_string(height) + " is not a valid " +
                          texture_format_name(format) + " size");
  }
  if (std::uint64_t{width} * height > limits.max_pixels) {
    return make_error(codes::SCENE_TEXTURE_TOO_LARGE, "texture larger than the decode limit");
  }
  if (data.size() < *needed) {
    return make_error(codes::SCENE_TEXTURE_DATA_SHORT, "top mip needs " + std::to_string(*needed) +
                                                           " bytes, payload has " +
                                                           std::to_string(data.size()));
  }
  RgbaImage image;
  image.width = width;
  image.height = height;
  image.pixels.resize(std::size_t{width} * height * 4);
  if (format == tf::kRGBA32) {
    std::memcpy(image.pixels.data(), data.data(), image.pixels.size());
  } else if (format == tf::kR8) {
    for (std::size_t i = 0; i < std::size_t{width} * height; ++i) {
      image.pixels[4 * i] = image.pixels[4 * i + 1] = image.pixels[4 * i + 2] = data[i];
      image.pixels[4 * i + 3] = 255;
    }
  } else if (is_bc(format)) {
    decode_bc(format, data.data(), image);
  } else if (auto st = decode_astc(format, srgb, data.first(*needed), image); !st) {
    return std::move(st).error();
  }
  return image;
}

}  // namespace charkit::scene
