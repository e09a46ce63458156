// Texture decoders against blocks built by hand from the format descriptions
// (BC1/BC3/BC4/BC5: DirectX block compression; ASTC void-extent blocks:
// ASTC specification §C.2.23). Expected pixels are derived in the comments.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "block_writer.h"
#include "charkit/scene/texture_decode.h"

namespace charkit::scene {
namespace {

namespace tf = texture_format;
using Bytes = std::vector<std::uint8_t>;
using Px = std::array<int, 4>;

Px at(const RgbaImage& image, std::uint32_t x, std::uint32_t y) {
  const std::size_t o = image.pixel_offset(x, y);
  return {image.pixels[o], image.pixels[o + 1], image.pixels[o + 2], image.pixels[o + 3]};
}

void expect_near(const Px& got, const Px& want, int tolerance, const char* what) {
  for (int c = 0; c < 4; ++c) {
    EXPECT_LE(std::abs(got[static_cast<std::size_t>(c)] - want[static_cast<std::size_t>(c)]),
              tolerance)
        << what << " channel " << c << ": " << got[static_cast<std::size_t>(c)] << " vs "
        << want[static_cast<std::size_t>(c)];
  }
}

RgbaImage decode_ok(std::uint32_t format, std::uint32_t w, std::uint32_t h, const Bytes& data) {
  auto r = decode_top_mip(format, w, h, false, data);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().to_string());
  return r.ok() ? std::move(r).value() : RgbaImage{};
}

TEST(TextureDecode, TopMipBytes) {
  EXPECT_EQ(top_mip_bytes(tf::kRGBA32, 3, 5), 60u);
  EXPECT_EQ(top_mip_bytes(tf::kR8, 3, 3), 9u);
  EXPECT_EQ(top_mip_bytes(tf::kBC1, 8, 8), 32u);  // 4 blocks of 8
  EXPECT_EQ(top_mip_bytes(tf::kBC3, 8, 8), 64u);  // 4 blocks of 16
  EXPECT_EQ(top_mip_bytes(tf::kBC4, 4, 8), 16u);
  EXPECT_EQ(top_mip_bytes(tf::kBC5, 4, 8), 32u);
  EXPECT_EQ(top_mip_bytes(tf::kBC7, 8, 4), 32u);
  EXPECT_EQ(top_mip_bytes(tf::kASTC6x6, 13, 7), 96u);  // 3 x 2 blocks of 16
  EXPECT_EQ(top_mip_bytes(tf::kASTC5x5, 5, 5), 16u);
  EXPECT_FALSE(top_mip_bytes(3, 4, 4).has_value());  // RGB24: not a BEM format
}

TEST(TextureDecode, Rgba32IsCopiedAndLaterMipsIgnored) {
  Bytes data = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12,
                13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24};
  data.insert(data.end(), {99, 99, 99, 99});  // 1x1 mip after the 3x2 top mip... (ignored)
  const RgbaImage img = decode_ok(tf::kRGBA32, 3, 2, data);
  ASSERT_EQ(img.pixels.size(), 24u);
  EXPECT_EQ(at(img, 0, 0), (Px{1, 2, 3, 4}));
  EXPECT_EQ(at(img, 2, 1), (Px{21, 22, 23, 24}));
}

TEST(TextureDecode, R8IsGrey) {
  const RgbaImage img = decode_ok(tf::kR8, 2, 1, {7, 200});
  EXPECT_EQ(at(img, 0, 0), (Px{7, 7, 7, 255}));
  EXPECT_EQ(at(img, 1, 0), (Px{200, 200, 200, 255}));
}

TEST(TextureDecode, Bc1FourColourAndThreeColourModes) {
  // c0 = 0xF800 (pure red in 5:6:5), c1 = 0x001F (pure blue); c0 > c1: four
  // colours c0, c1, 2/3 c0 + 1/3 c1, 1/3 c0 + 2/3 c1. Row 0 indices 0,1,2,3:
  // byte 0b11'10'01'00 = 0xE4 (pixel 0 in the low bits).
  const Bytes four = {0x00, 0xF8, 0x1F, 0x00, 0xE4, 0x00, 0x00, 0x00};
  RgbaImage img = decode_ok(tf::kBC1, 4, 4, four);
  EXPECT_EQ(at(img, 0, 0), (Px{255, 0, 0, 255}));
  EXPECT_EQ(at(img, 1, 0), (Px{0, 0, 255, 255}));
  expect_near(at(img, 2, 0), Px{170, 0, 85, 255}, 1, "2/3 red");
  expect_near(at(img, 3, 0), Px{85, 0, 170, 255}, 1, "1/3 red");
  EXPECT_EQ(at(img, 3, 3), (Px{255, 0, 0, 255}));
  // Swapped endpoints (c0 <= c1): index 2 is the midpoint, index 3 transparent black.
  const Bytes three = {0x1F, 0x00, 0x00, 0xF8, 0xE4, 0x00, 0x00, 0x00};
  img = decode_ok(tf::kBC1, 4, 4, three);
  EXPECT_EQ(at(img, 0, 0), (Px{0, 0, 255, 255}));
  expect_near(at(img, 2, 0), Px{128, 0, 128, 255}, 1, "midpoint");
  EXPECT_EQ(at(img, 3, 0), (Px{0, 0, 0, 0}));
}

TEST(TextureDecode, Bc1BlocksAreRowMajor) {
  // 8x4: block 0 red, block 1 green (0x07E0), all indices 0.
  const Bytes data = {0x00, 0xF8, 0x00, 0xF8, 0, 0, 0, 0, 0xE0, 0x07, 0xE0, 0x07, 0, 0, 0, 0};
  const RgbaImage img = decode_ok(tf::kBC1, 8, 4, data);
  EXPECT_EQ(at(img, 3, 3), (Px{255, 0, 0, 255}));
  EXPECT_EQ(at(img, 4, 0), (Px{0, 255, 0, 255}));
  EXPECT_EQ(at(img, 7, 3), (Px{0, 255, 0, 255}));
}

// Alpha block: a0, a1, then 16 3-bit indices, pixel 0 in the low bits.
// Indices 0, 1, 2 for pixels 0..2: 0b010'001'000 = 0x88 in byte 2.
Bytes alpha_block(std::uint8_t a0, std::uint8_t a1, std::uint8_t idx_lo = 0x88,
                  std::uint8_t idx_hi = 0) {
  return {a0, a1, idx_lo, idx_hi, 0, 0, 0, 0};
}

TEST(TextureDecode, Bc3AlphaBlock) {
  // a0 = 255 > a1 = 0: index 2 = (6*255 + 1*0)/7 = 218.57.
  Bytes data = alpha_block(255, 0);
  const Bytes white = {0xFF, 0xFF, 0x00, 0x00, 0, 0, 0, 0};  // colour c0 = white, indices 0
  data.insert(data.end(), white.begin(), white.end());
  const RgbaImage img = decode_ok(tf::kBC3, 4, 4, data);
  EXPECT_EQ(at(img, 0, 0), (Px{255, 255, 255, 255}));
  EXPECT_EQ(at(img, 1, 0), (Px{255, 255, 255, 0}));
  expect_near(at(img, 2, 0), Px{255, 255, 255, 219}, 1, "alpha 6/7");
}

TEST(TextureDecode, Bc4SixValueModeHasZeroAndOne) {
  // a0 = 10 <= a1 = 20: six interpolated values, index 6 = 0, index 7 = 255.
  // Pixels 0..3: indices 0, 1, 6, 7 = 0b111'110'001'000 = 0xF88 -> bytes 0x88, 0x0F.
  const RgbaImage img = decode_ok(tf::kBC4, 4, 4, alpha_block(10, 20, 0x88, 0x0F));
  EXPECT_EQ(at(img, 0, 0), (Px{10, 10, 10, 255}));
  EXPECT_EQ(at(img, 1, 0), (Px{20, 20, 20, 255}));
  EXPECT_EQ(at(img, 2, 0), (Px{0, 0, 0, 255}));
  EXPECT_EQ(at(img, 3, 0), (Px{255, 255, 255, 255}));
}

TEST(TextureDecode, Bc5RedAndGreen) {
  Bytes data = alpha_block(255, 0, 0, 0);          // red: all index 0 -> 255
  const Bytes green = alpha_block(100, 50, 0, 0);  // green: all index 0 -> 100
  data.insert(data.end(), green.begin(), green.end());
  const RgbaImage img = decode_ok(tf::kBC5, 4, 4, data);
  EXPECT_EQ(at(img, 0, 0), (Px{255, 100, 0, 255}));
  EXPECT_EQ(at(img, 3, 3), (Px{255, 100, 0, 255}));
}

TEST(TextureDecode, Bc7BlocksPlaced) {
  // Block 0: mode 6 solid (129, 33, 255, 255) as in bc7_test; block 1: reserved mode (0).
  testkit::BlockWriter w;
  w.put(0x40, 7).put(64, 7).put(64, 7).put(16, 7).put(16, 7);
  w.put(127, 7).put(127, 7).put(127, 7).put(127, 7).put(1, 1).put(1, 1).put(0, 63);
  Bytes data(w.bytes().begin(), w.bytes().end());
  data.resize(32, 0);
  const RgbaImage img = decode_ok(tf::kBC7, 8, 4, data);
  EXPECT_EQ(at(img, 2, 3), (Px{129, 33, 255, 255}));
  EXPECT_EQ(at(img, 5, 1), (Px{0, 0, 0, 0}));
}

/// ASTC void-extent (constant colour) block: block mode 0x1FC in bits 0..8,
/// bit 9 = 0 (LDR), bits 10..11 = 1, extents all ones, then R, G, B, A as UNORM16.
Bytes astc_constant(std::uint16_t r, std::uint16_t g, std::uint16_t b, std::uint16_t a) {
  Bytes block = {0xFC, 0xFD, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
  for (std::uint16_t v : {r, g, b, a}) {
    block.push_back(static_cast<std::uint8_t>(v & 0xFF));
    block.push_back(static_cast<std::uint8_t>(v >> 8));
  }
  return block;
}

TEST(TextureDecode, AstcConstantBlocks) {
  // 0x3333 / 65535 = 0.2 -> 51.
  RgbaImage img = decode_ok(tf::kASTC4x4, 4, 4, astc_constant(0xFFFF, 0, 0x3333, 0xFFFF));
  EXPECT_EQ(at(img, 0, 0), (Px{255, 0, 51, 255}));
  EXPECT_EQ(at(img, 3, 3), (Px{255, 0, 51, 255}));
  // 6x6 texels in 5x5 blocks: 2 x 2 blocks; texel (5, 5) lies in block 3.
  Bytes data;
  for (std::uint16_t v : {std::uint16_t{0x0000}, std::uint16_t{0x3333}, std::uint16_t{0x6666},
                          std::uint16_t{0xFFFF}}) {
    const Bytes b = astc_constant(v, v, v, 0xFFFF);
    data.insert(data.end(), b.begin(), b.end());
  }
  img = decode_ok(tf::kASTC5x5, 6, 6, data);
  EXPECT_EQ(at(img, 0, 0), (Px{0, 0, 0, 255}));
  EXPECT_EQ(at(img, 5, 0), (Px{51, 51, 51, 255}));
  EXPECT_EQ(at(img, 0, 5), (Px{102, 102, 102, 255}));
  EXPECT_EQ(at(img, 5, 5), (Px{255, 255, 255, 255}));
  // 6x6 blocks, one block for a 6x6 texture.
  img = decode_ok(tf::kASTC6x6, 6, 6, astc_constant(0x6666, 0, 0, 0xFFFF));
  EXPECT_EQ(at(img, 5, 5), (Px{102, 0, 0, 255}));
}

TEST(TextureDecode, Errors) {
  const Bytes some(64, 0);
  auto r = decode_top_mip(3, 4, 4, false, some);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "SCENE_TEXTURE_UNSUPPORTED_FORMAT");
  r = decode_top_mip(tf::kBC1, 6, 4, false, some);  // §8: BC sizes are multiples of 4
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "SCENE_TEXTURE_DIMENSIONS");
  r = decode_top_mip(tf::kRGBA32, 0, 4, false, some);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "SCENE_TEXTURE_DIMENSIONS");
  r = decode_top_mip(tf::kRGBA32, 4, 5, false, some);  // needs 80 bytes
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "SCENE_TEXTURE_DATA_SHORT");
  r = decode_top_mip(tf::kBC7, 4096, 4096, false, some, DecodeLimits{1024 * 1024});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "SCENE_TEXTURE_TOO_LARGE");
}

}  // namespace
}  // namespace charkit::scene
