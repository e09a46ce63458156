#include "charkit/scene/image.h"

#include <algorithm>
#include <limits>

// The one translation unit with stb_image_write's implementation.
#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STBI_WRITE_NO_STDIO
#include <stb/stb_image_write.h>
// …and of stb_image_resize's.
#define STB_IMAGE_RESIZE_IMPLEMENTATION
#include <stb/stb_image_resize.h>

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
    return core::make_error("SCENE_PNG_SIZE",
                            "image size does not match its pixels or is too large");
  }
  std::vector<std::uint8_t> out;
  const int ok =
      stbi_write_png_to_func(append_bytes, &out, static_cast<int>(width), static_cast<int>(height),
                             channels, px.data(), static_cast<int>(width) * channels);
  if (ok == 0 || out.empty()) {
    return core::make_error("SCENE_PNG_ENCODE", "stb_image_write could not encode the PNG");
  }
  return out;
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
  RgbaImage out;
  out.width = side(image.width);
  out.height = side(image.height);
  out.pixels.resize(std::size_t{out.width} * out.height * 4);
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

}  // namespace charkit::scene
