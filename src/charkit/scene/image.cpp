#include "charkit/scene/image.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>

// The one translation unit with stb_image_write's implementation.
#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STBI_WRITE_NO_STDIO
#include <stb/stb_image_write.h>
// Decoding: libpng's simplified API and TurboJPEG (libjpeg-turbo), both
// well fuzzed; stb_image is not used for untrusted input.
#include <png.h>
#include <turbojpeg.h>
// …and of stb_image_resize's.
#define STB_IMAGE_RESIZE_IMPLEMENTATION
#include <stb/stb_image_resize.h>

#include "charkit/scene/error_codes.h"

namespace charkit::scene {
namespace {

void append_bytes(void* context, void* data, int size) {
  auto* out = static_cast<std::vector<std::uint8_t>*>(context);
  const auto* bytes = static_cast<const std::uint8_t*>(data);
  out->insert(out->end(), bytes, bytes + size);
}

core::Result<std::vector<std::uint8_t>> encode(std::uint32_t width, std::uint32_t height,
                                               int channels, const std::vector<std::uint8_t>& px) {
  const std::uint64_t expected =
      std::uint64_t{width} * height * static_cast<std::uint64_t>(channels);
  // stb takes int sizes and the row stride as int.
  const std::uint64_t int_max = static_cast<std::uint64_t>(std::numeric_limits<int>::max());
  if (width == 0 || height == 0 || px.size() != expected || expected > int_max) {
    return core::make_error(codes::SCENE_PNG_SIZE,
                            "image size does not match its pixels or is too large");
  }
  std::vector<std::uint8_t> out;
  const int ok =
      stbi_write_png_to_func(append_bytes, &out, static_cast<int>(width), static_cast<int>(height),
                             channels, px.data(), static_cast<int>(width) * channels);
  if (ok == 0 || out.empty()) {
    return core::make_error(codes::SCENE_PNG_ENCODE, "stb_image_write could not encode the PNG");
  }
  return out;
}

/// PNG's CRC-32 (ISO 3309) of a chunk's type and data.
std::uint32_t crc32(const std::uint8_t* data, std::size_t n, std::uint32_t crc = 0xFFFFFFFFU) {
  static const std::array<std::uint32_t, 256> table = [] {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t i = 0; i < 256; ++i) {
      std::uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1U) != 0 ? 0xEDB88320U ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  for (std::size_t i = 0; i < n; ++i) crc = table[(crc ^ data[i]) & 0xFFU] ^ (crc >> 8);
  return crc;
}

void put_be32(std::vector<std::uint8_t>& out, std::uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) out.push_back(static_cast<std::uint8_t>(v >> s));
}

void put_chunk(std::vector<std::uint8_t>& out, const char* type,
               const std::vector<std::uint8_t>& data) {
  put_be32(out, static_cast<std::uint32_t>(data.size()));
  const std::size_t start = out.size();
  out.insert(out.end(), type, type + 4);
  out.insert(out.end(), data.begin(), data.end());
  put_be32(out, crc32(out.data() + start, out.size() - start) ^ 0xFFFFFFFFU);
}

}  // namespace

void flip_rows(RgbaImage& image) {
  const std::size_t row = std::size_t{image.width} * 4;
  for (std::uint32_t y = 0; y < image.height / 2; ++y) {
    auto top = image.pixels.begin() + static_cast<std::ptrdiff_t>(y * row);
    auto bottom = image.pixels.begin() + static_cast<std::ptrdiff_t>((image.height - 1 - y) * row);
    std::swap_ranges(top, top + static_cast<std::ptrdiff_t>(row), bottom);
  }
}

RgbaImage resize_to_fit(const RgbaImage& image, std::uint32_t max_side, bool srgb) {
  max_side = std::max<std::uint32_t>(max_side, 1);
  const std::uint32_t longer = std::max(image.width, image.height);
  if (longer <= max_side || image.width == 0 || image.height == 0 ||
      image.pixels.size() != std::size_t{image.width} * image.height * 4)
    return image;
  const double scale = static_cast<double>(max_side) / longer;
  auto side = [&](std::uint32_t v) {
    return std::max<std::uint32_t>(1, static_cast<std::uint32_t>(v * scale + 0.5));
  };
  return resize_to(image, side(image.width), side(image.height), srgb);
}

RgbaImage resize_to(const RgbaImage& image, std::uint32_t width, std::uint32_t height, bool srgb) {
  RgbaImage out;
  out.width = std::max<std::uint32_t>(width, 1);
  out.height = std::max<std::uint32_t>(height, 1);
  if (image.width == out.width && image.height == out.height) return image;
  out.pixels.resize(std::size_t{out.width} * out.height * 4);
  if (image.width == 0 || image.height == 0 ||
      image.pixels.size() != std::size_t{image.width} * image.height * 4)
    return out;
  const int w = static_cast<int>(image.width), h = static_cast<int>(image.height);
  const int ow = static_cast<int>(out.width), oh = static_cast<int>(out.height);
  if (srgb) {
    stbir_resize_uint8_srgb(image.pixels.data(), w, h, 0, out.pixels.data(), ow, oh, 0, 4, 3, 0);
  } else {
    stbir_resize_uint8(image.pixels.data(), w, h, 0, out.pixels.data(), ow, oh, 0, 4);
  }
  return out;
}

core::Result<std::vector<std::uint8_t>> encode_png(const RgbaImage& image) {
  return encode(image.width, image.height, 4, image.pixels);
}

core::Result<std::vector<std::uint8_t>> encode_png_grey(std::uint32_t width, std::uint32_t height,
                                                        const std::vector<std::uint8_t>& grey) {
  return encode(width, height, 1, grey);
}

core::Result<RgbaImage> decode_image(core::Bytes bytes, std::uint32_t max_side) {
  auto fail = [](std::string why) {
    return core::make_error(codes::SCENE_IMAGE_DECODE, std::move(why));
  };
  auto check_size = [&](std::uint64_t w, std::uint64_t h) -> core::Status {
    if (w == 0 || h == 0 || w > max_side || h > max_side)
      return fail("an image of " + std::to_string(w) + "x" + std::to_string(h) + " is past " +
                  std::to_string(max_side) + " a side");
    return core::Ok{};
  };
  RgbaImage img;
  if (bytes.size() >= 8 && png_sig_cmp(bytes.data(), 0, 8) == 0) {
    png_image png{};
    png.version = PNG_IMAGE_VERSION;
    if (png_image_begin_read_from_memory(&png, bytes.data(), bytes.size()) == 0)
      return fail(std::string("the PNG does not decode (") + png.message + ")");
    if (auto st = check_size(png.width, png.height); !st) {
      png_image_free(&png);
      return std::move(st).error();
    }
    img.width = png.width;
    img.height = png.height;
    img.pixels.resize(std::size_t{img.width} * img.height * 4);
    // libpng takes 16-bit samples as linear and would gamma-encode them into
    // 8-bit sRGB: read them as they are (its linear format, premultiplied by
    // alpha) and only scale them to 8 bits.
    const bool sixteen = (png.format & PNG_FORMAT_FLAG_LINEAR) != 0;
    png.format = sixteen ? PNG_FORMAT_LINEAR_RGB_ALPHA : PNG_FORMAT_RGBA;
    std::vector<std::uint16_t> wide(sixteen ? img.pixels.size() : 0);
    void* target = sixteen ? static_cast<void*>(wide.data()) : img.pixels.data();
    if (png_image_finish_read(&png, nullptr, target, 0, nullptr) == 0) {
      const std::string why = png.message;
      png_image_free(&png);
      return fail("the PNG does not decode (" + why + ")");
    }
    for (std::size_t i = 0; sixteen && i < wide.size(); i += 4) {
      const double a = wide[i + 3];
      for (std::size_t c = 0; c < 3; ++c) {
        const double v = a > 0 ? std::min(65535.0, wide[i + c] * 65535.0 / a) : 0.0;
        img.pixels[i + c] = static_cast<std::uint8_t>(std::lround(v / 257.0));
      }
      img.pixels[i + 3] = static_cast<std::uint8_t>(std::lround(a / 257.0));
    }
    return img;
  }
  if (bytes.size() >= 3 && bytes[0] == 0xFF && bytes[1] == 0xD8 && bytes[2] == 0xFF) {
    tjhandle tj = tjInitDecompress();
    if (tj == nullptr) return fail("TurboJPEG could not start");
    int w = 0, h = 0, subsampling = 0, colourspace = 0;
    const auto size = static_cast<unsigned long>(bytes.size());
    if (tjDecompressHeader3(tj, bytes.data(), size, &w, &h, &subsampling, &colourspace) != 0) {
      const std::string why = tjGetErrorStr2(tj);
      tjDestroy(tj);
      return fail("the JPEG does not decode (" + why + ")");
    }
    if (auto st = check_size(static_cast<std::uint64_t>(std::max(w, 0)),
                             static_cast<std::uint64_t>(std::max(h, 0)));
        !st) {
      tjDestroy(tj);
      return std::move(st).error();
    }
    img.width = static_cast<std::uint32_t>(w);
    img.height = static_cast<std::uint32_t>(h);
    img.pixels.resize(std::size_t{img.width} * img.height * 4);
    // Warnings (a truncated stream decoded as far as it goes) keep the image;
    // errors refuse it.
    if (tjDecompress2(tj, bytes.data(), size, img.pixels.data(), w, 0, h, TJPF_RGBA, 0) != 0 &&
        tjGetErrorCode(tj) == TJERR_FATAL) {
      const std::string why = tjGetErrorStr2(tj);
      tjDestroy(tj);
      return fail("the JPEG does not decode (" + why + ")");
    }
    tjDestroy(tj);
    return img;
  }
  return fail("not a PNG or JPEG image");
}

core::Result<std::vector<std::uint8_t>> encode_png16(std::uint32_t width, std::uint32_t height,
                                                     std::uint32_t channels,
                                                     const std::vector<std::uint16_t>& samples) {
  const std::uint64_t row = std::uint64_t{width} * channels * 2 + 1;
  const std::uint64_t int_max = static_cast<std::uint64_t>(std::numeric_limits<int>::max());
  if (width == 0 || height == 0 || (channels != 1 && channels != 4) ||
      samples.size() != std::uint64_t{width} * height * channels || row * height > int_max)
    return core::make_error(codes::SCENE_PNG_SIZE,
                            "image size does not match its samples or is too large");
  // Filter type 0 on every row, samples big-endian.
  std::vector<std::uint8_t> raw;
  raw.reserve(row * height);
  for (std::uint32_t y = 0; y < height; ++y) {
    raw.push_back(0);
    for (std::size_t i = 0; i < std::size_t{width} * channels; ++i) {
      const std::uint16_t v = samples[std::size_t{y} * width * channels + i];
      raw.push_back(static_cast<std::uint8_t>(v >> 8));
      raw.push_back(static_cast<std::uint8_t>(v & 0xFFU));
    }
  }
  int zlen = 0;
  unsigned char* z = stbi_zlib_compress(raw.data(), static_cast<int>(raw.size()), &zlen, 6);
  if (z == nullptr || zlen <= 0)
    return core::make_error(codes::SCENE_PNG_ENCODE, "stb_image_write could not compress the PNG");
  std::vector<std::uint8_t> out = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  std::vector<std::uint8_t> ihdr;
  put_be32(ihdr, width);
  put_be32(ihdr, height);
  ihdr.insert(ihdr.end(), {16, static_cast<std::uint8_t>(channels == 4 ? 6 : 0), 0, 0, 0});
  put_chunk(out, "IHDR", ihdr);
  put_chunk(out, "IDAT", std::vector<std::uint8_t>(z, z + zlen));
  STBIW_FREE(z);
  put_chunk(out, "IEND", {});
  return out;
}

}  // namespace charkit::scene
