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

// Thumbnails (resize_to_fit): the longer side to the bound, aspect kept,
// never upscaled; flat colours stay flat (in linear light for sRGB).
TEST(Resize, FitsTheLongerSideAndKeepsFlatColours) {
  RgbaImage img;
  img.width = 256;
  img.height = 64;
  for (std::uint32_t i = 0; i < img.width * img.height; ++i) {
    const std::uint8_t px[4] = {200, 100, 30, 255};
    img.pixels.insert(img.pixels.end(), px, px + 4);
  }
  for (bool srgb : {false, true}) {
    RgbaImage t = resize_to_fit(img, 64, srgb);
    ASSERT_EQ(t.width, 64u);
    ASSERT_EQ(t.height, 16u);
    ASSERT_EQ(t.pixels.size(), 64u * 16u * 4u);
    for (std::size_t i = 0; i < t.pixels.size(); i += 4) {
      EXPECT_NEAR(t.pixels[i], 200, 1) << srgb;
      EXPECT_NEAR(t.pixels[i + 1], 100, 1) << srgb;
      EXPECT_NEAR(t.pixels[i + 2], 30, 1) << srgb;
      EXPECT_EQ(t.pixels[i + 3], 255);
    }
  }
  RgbaImage tall =
      resize_to_fit(RgbaImage{2, 300, std::vector<std::uint8_t>(2 * 300 * 4, 7)}, 100, false);
  EXPECT_EQ(tall.width, 1u);  // at least one pixel
  EXPECT_EQ(tall.height, 100u);
  RgbaImage small = resize_to_fit(RgbaImage{4, 4, std::vector<std::uint8_t>(64, 9)}, 128, true);
  EXPECT_EQ(small.width, 4u);
  EXPECT_EQ(small.pixels, std::vector<std::uint8_t>(64, 9));
}

// A black-and-white checkerboard halved in sRGB averages in linear light
// (about 188, not 128); without sRGB it averages the stored values.
TEST(Resize, SrgbAveragesInLinearLight) {
  RgbaImage img;
  img.width = 64;
  img.height = 64;
  for (std::uint32_t y = 0; y < 64; ++y)
    for (std::uint32_t x = 0; x < 64; ++x) {
      const std::uint8_t v = ((x + y) % 2) ? 255 : 0;
      const std::uint8_t px[4] = {v, v, v, 255};
      img.pixels.insert(img.pixels.end(), px, px + 4);
    }
  RgbaImage lin = resize_to_fit(img, 8, false);
  RgbaImage srgb = resize_to_fit(img, 8, true);
  const std::size_t mid = lin.pixel_offset(4, 4);
  EXPECT_NEAR(lin.pixels[mid], 128, 3);
  EXPECT_NEAR(srgb.pixels[mid], 188, 3);
}

// 16-bit PNGs: IHDR by hand (bit depth 16, colour types 6 and 0), samples
// read back by stb_image's 16-bit loader.
TEST(Png, SixteenBitRoundTrip) {
  std::vector<std::uint16_t> rgba;
  for (int i = 0; i < 3 * 2 * 4; ++i) rgba.push_back(static_cast<std::uint16_t>(i * 2741 + 7));
  auto png = encode_png16(3, 2, 4, rgba);
  ASSERT_TRUE(png.ok());
  const std::vector<std::uint8_t>& b = *png;
  EXPECT_EQ(be32(b, 12), 0x49484452u);  // "IHDR"
  EXPECT_EQ(be32(b, 16), 3u);
  EXPECT_EQ(be32(b, 20), 2u);
  EXPECT_EQ(b[24], 16);  // bit depth
  EXPECT_EQ(b[25], 6);   // RGBA
  int w = 0, h = 0, channels = 0;
  stbi_us* px =
      stbi_load_16_from_memory(b.data(), static_cast<int>(b.size()), &w, &h, &channels, 4);
  ASSERT_NE(px, nullptr);
  EXPECT_EQ(w, 3);
  EXPECT_EQ(h, 2);
  EXPECT_EQ(std::vector<std::uint16_t>(px, px + rgba.size()), rgba);
  stbi_image_free(px);

  const std::vector<std::uint16_t> grey = {0, 1, 256, 65535};
  auto g = encode_png16(2, 2, 1, grey);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ((*g)[25], 0);  // grey
  px = stbi_load_16_from_memory(g->data(), static_cast<int>(g->size()), &w, &h, &channels, 1);
  ASSERT_NE(px, nullptr);
  EXPECT_EQ(std::vector<std::uint16_t>(px, px + 4), grey);
  stbi_image_free(px);
  EXPECT_FALSE(encode_png16(2, 2, 3, std::vector<std::uint16_t>(12)));  // 3 channels: refused
}

// Decoding: our PNG back, and refusals with SCENE_IMAGE_DECODE.
TEST(Png, DecodeImage) {
  RgbaImage img;
  img.width = 4;
  img.height = 3;
  for (int i = 0; i < 48; ++i) img.pixels.push_back(static_cast<std::uint8_t>(i * 5));
  auto png = encode_png(img);
  ASSERT_TRUE(png.ok());
  auto back = decode_image(*png);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->width, 4u);
  EXPECT_EQ(back->pixels, img.pixels);
  auto small = decode_image(*png, 3);  // wider than the limit
  ASSERT_FALSE(small);
  EXPECT_EQ(small.error().code, "SCENE_IMAGE_DECODE");
  const std::vector<std::uint8_t> junk = {'G', 'I', 'F', '8', '9', 'a', 0, 0};
  auto bad = decode_image(junk);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, "SCENE_IMAGE_DECODE");
  std::vector<std::uint8_t> cut(png->begin(), png->begin() + 40);  // truncated
  EXPECT_FALSE(decode_image(cut));
  // A 16-bit PNG keeps its values (scaled to 8 bits, no gamma change).
  const std::vector<std::uint16_t> wide = {127 * 257, 40 * 257, 200 * 257, 65535,
                                           0,         65535,    1000,      65535};
  auto png16 = encode_png16(2, 1, 4, wide);
  ASSERT_TRUE(png16.ok());
  auto back16 = decode_image(*png16);
  ASSERT_TRUE(back16.ok()) << back16.error().message;
  EXPECT_EQ(back16->pixels, (std::vector<std::uint8_t>{127, 40, 200, 255, 0, 255, 4, 255}));
}

}  // namespace
}  // namespace charkit::scene
