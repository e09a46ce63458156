// PNG encoding: signature and IHDR written by hand from the PNG spec, and the
// pixels read back with stb_image equal to what went in.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include <stb/stb_image.h>

#include "charkit/scene/image.h"

namespace charkit::scene {
namespace {

std::uint32_t be32(const std::vector<std::uint8_t>& b, std::size_t at) {
  return (std::uint32_t{b[at]} << 24) | (std::uint32_t{b[at + 1]} << 16) |
         (std::uint32_t{b[at + 2]} << 8) | b[at + 3];
}

TEST(Png, RgbaRoundTrip) {
  RgbaImage img;
  img.width = 3;
  img.height = 2;
  for (int i = 0; i < 24; ++i) {
    img.pixels.push_back(static_cast<std::uint8_t>(i * 10 + 1));
  }
  auto png = encode_png(img);
  ASSERT_TRUE(png.ok());
  const std::vector<std::uint8_t>& b = *png;
  const std::vector<std::uint8_t> signature = {0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A};
  ASSERT_GT(b.size(), 33u);
  EXPECT_EQ(std::vector<std::uint8_t>(b.begin(), b.begin() + 8), signature);
  EXPECT_EQ(be32(b, 12), 0x49484452u);  // "IHDR"
  EXPECT_EQ(be32(b, 16), 3u);           // width
  EXPECT_EQ(be32(b, 20), 2u);           // height
  EXPECT_EQ(b[24], 8);                  // bit depth
  EXPECT_EQ(b[25], 6);                  // colour type RGBA
  int w = 0;
  int h = 0;
  int channels = 0;
  stbi_uc* px = stbi_load_from_memory(b.data(), static_cast<int>(b.size()), &w, &h, &channels, 0);
  ASSERT_NE(px, nullptr);
  EXPECT_EQ(w, 3);
  EXPECT_EQ(h, 2);
  EXPECT_EQ(channels, 4);
  EXPECT_EQ(std::vector<std::uint8_t>(px, px + 24), img.pixels);
  stbi_image_free(px);
}

TEST(Png, GreyRoundTrip) {
  const std::vector<std::uint8_t> grey = {0, 50, 100, 150, 200, 250};
  auto png = encode_png_grey(2, 3, grey);
  ASSERT_TRUE(png.ok());
  EXPECT_EQ((*png)[25], 0);  // colour type grey
  int w = 0;
  int h = 0;
  int channels = 0;
  stbi_uc* px =
      stbi_load_from_memory(png->data(), static_cast<int>(png->size()), &w, &h, &channels, 0);
  ASSERT_NE(px, nullptr);
  EXPECT_EQ(channels, 1);
  EXPECT_EQ(std::vector<std::uint8_t>(px, px + 6), grey);
  stbi_image_free(px);
}

TEST(Png, SizeMismatchIsAnError) {
  RgbaImage img;
  img.width = 2;
  img.height = 2;
  img.pixels.resize(15);
  auto png = encode_png(img);
  ASSERT_FALSE(png.ok());
  EXPECT_EQ(png.error().code, "SCENE_PNG_SIZE");
  EXPECT_FALSE(encode_png_grey(0, 0, {}).ok());
}

TEST(Image, FlipRows) {
  RgbaImage img;
  img.width = 1;
  img.height = 3;
  img.pixels = {1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3};
  flip_rows(img);
  EXPECT_EQ(img.pixels, (std::vector<std::uint8_t>{3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1}));
}

}  // namespace
}  // namespace charkit::scene
