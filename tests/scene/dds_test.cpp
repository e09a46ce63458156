// DDS reading (scene/dds.h) against files laid out by hand from Microsoft's
// DDS reference: "DDS ", DDS_HEADER (124 bytes: size, flags, height, width,
// pitch, depth, mip count, 11 reserved, DDS_PIXELFORMAT (32 bytes: size,
// flags, FourCC, bit count, R/G/B/A masks), caps, caps2, caps3, caps4,
// reserved), then DDS_HEADER_DXT10 (20 bytes: DXGI format, dimension, misc
// flag, array size, misc flags 2) when the FourCC is "DX10".
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "charkit/scene/dds.h"
#include "charkit/scene/texture_decode.h"

namespace charkit::scene {
namespace {

using ByteVec = std::vector<std::uint8_t>;

void put32(ByteVec& b, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) b.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}

struct PixelFormat {
  std::uint32_t flags = 0x4;  // DDPF_FOURCC
  std::string fourcc = "DXT1";
  std::uint32_t bits = 0, r = 0, g = 0, b = 0, a = 0;
};

/// "DDS " + DDS_HEADER written field by field.
ByteVec header(std::uint32_t w, std::uint32_t h, std::uint32_t mips, const PixelFormat& pf,
               std::uint32_t caps2 = 0) {
  ByteVec out = {'D', 'D', 'S', ' '};
  put32(out, 124);  // dwSize
  put32(out, 0x1 | 0x2 | 0x4 | 0x1000 |
                 (mips > 1 ? 0x20000 : 0));  // CAPS HEIGHT WIDTH PIXELFORMAT [MIPMAPCOUNT]
  put32(out, h);
  put32(out, w);
  put32(out, 0);  // pitch or linear size
  put32(out, 0);  // depth
  put32(out, mips);
  for (int i = 0; i < 11; ++i) put32(out, 0);
  put32(out, 32);  // DDS_PIXELFORMAT size
  put32(out, pf.flags);
  std::uint32_t cc = 0;
  for (std::size_t i = 0; i < 4 && i < pf.fourcc.size(); ++i)
    cc |= std::uint32_t(std::uint8_t(pf.fourcc[i])) << (8 * i);
  put32(out, (pf.flags & 0x4) ? cc : 0);
  put32(out, pf.bits);
  put32(out, pf.r);
  put32(out, pf.g);
  put32(out, pf.b);
  put32(out, pf.a);
  put32(out, 0x1000 | (mips > 1 ? 0x400008 : 0));  // caps
  put32(out, caps2);
  put32(out, 0);
  put32(out, 0);
  put32(out, 0);
  EXPECT_EQ(out.size(), 128u);
  return out;
}

ByteVec dx10(std::uint32_t w, std::uint32_t h, std::uint32_t mips, std::uint32_t dxgi,
             std::uint32_t array = 1) {
  ByteVec out = header(w, h, mips, PixelFormat{0x4, "DX10"});
  put32(out, dxgi);
  put32(out, 3);  // D3D10_RESOURCE_DIMENSION_TEXTURE2D
  put32(out, 0);
  put32(out, array);
  put32(out, 0);
  return out;
}

ByteVec with_data(ByteVec file, std::size_t bytes, std::uint8_t first = 1) {
  for (std::size_t i = 0; i < bytes; ++i) file.push_back(static_cast<std::uint8_t>(first + i));
  return file;
}

TEST(Dds, LegacyDxt1IsBc1WithoutColourSpace) {
  const ByteVec file = with_data(header(4, 4, 1, PixelFormat{}), 8);
  auto t = parse_dds(file);
  ASSERT_TRUE(t.ok()) << t.error().to_string();
  EXPECT_EQ(t->format, texture_format::kBC1);
  EXPECT_EQ(t->width, 4u);
  EXPECT_EQ(t->height, 4u);
  EXPECT_EQ(t->mips, 1u);
  EXPECT_FALSE(t->srgb.has_value());
  EXPECT_EQ(t->data, ByteVec(file.begin() + 128, file.end()));
}

TEST(Dds, Dx10Bc7SrgbWithMips) {
  // 8x8 BC7: 4 blocks (64 bytes), then 4x4: 1 block (16 bytes); 3 trailing
  // bytes past the chain are not part of the texture.
  const ByteVec file = with_data(dx10(8, 8, 2, 99), 64 + 16 + 3);
  auto t = parse_dds(file);
  ASSERT_TRUE(t.ok()) << t.error().to_string();
  EXPECT_EQ(t->format, texture_format::kBC7);
  EXPECT_EQ(t->mips, 2u);
  EXPECT_EQ(t->srgb, true);
  EXPECT_EQ(t->data, ByteVec(file.begin() + 148, file.begin() + 148 + 80));
  auto linear = parse_dds(with_data(dx10(4, 4, 0, 98), 16));  // mip count 0 = 1
  ASSERT_TRUE(linear.ok());
  EXPECT_EQ(linear->srgb, false);
  EXPECT_EQ(linear->mips, 1u);
}

TEST(Dds, BgraIsSwizzledToRgba32) {
  PixelFormat bgra{0x40 | 0x1, "", 32, 0xFF0000, 0xFF00, 0xFF, 0xFF000000};
  ByteVec file = header(2, 1, 1, bgra);
  for (int v : {10, 20, 30, 40, 50, 60, 70, 80}) file.push_back(std::uint8_t(v));  // B G R A
  auto t = parse_dds(file);
  ASSERT_TRUE(t.ok()) << t.error().to_string();
  EXPECT_EQ(t->format, texture_format::kRGBA32);
  EXPECT_TRUE(t->swizzled);
  EXPECT_EQ(t->data, (ByteVec{30, 20, 10, 40, 70, 60, 50, 80}));
  PixelFormat l8{0x20000, "", 8, 0xFF, 0, 0, 0};
  auto grey = parse_dds(with_data(header(3, 2, 1, l8), 6));
  ASSERT_TRUE(grey.ok()) << grey.error().to_string();
  EXPECT_EQ(grey->format, texture_format::kR8);
}

TEST(Dds, WhatIsNotOneStorableTextureIsRefused) {
  auto code = [](const ByteVec& f) {
    auto t = parse_dds(f);
    return t.ok() ? std::string("ok") : t.error().code + ": " + t.error().message;
  };
  EXPECT_EQ(code(with_data(header(4, 4, 1, PixelFormat{}), 8)), "ok");
  EXPECT_NE(code(ByteVec{'D', 'D', 'S', ' ', 124, 0}).find("ends early"), std::string::npos);
  EXPECT_NE(code(with_data(header(4, 4, 1, PixelFormat{}, 0x200 | 0xFC00), 48)).find("cube"),
            std::string::npos);
  EXPECT_NE(code(with_data(dx10(4, 4, 1, 95), 16)).find("DXGI format 95"), std::string::npos);
  EXPECT_NE(code(with_data(dx10(4, 4, 1, 71, 6), 48)).find("2-D"), std::string::npos);
  EXPECT_NE(code(with_data(header(8, 8, 1, PixelFormat{}), 31)).find("needs 32 bytes"),
            std::string::npos);
  EXPECT_NE(code(with_data(header(40000, 4, 1, PixelFormat{}), 8)).find("32768"),
            std::string::npos);
  EXPECT_NE(code(with_data(header(4, 4, 17, PixelFormat{}), 8)).find("16"), std::string::npos);
  PixelFormat dxt3{0x4, "DXT3"};
  EXPECT_NE(code(with_data(header(4, 4, 1, dxt3), 16)).find("FourCC"), std::string::npos);
  EXPECT_EQ(code(ByteVec{'P', 'N', 'G'}).rfind("SCENE_DDS", 0), 0u);
}

}  // namespace
}  // namespace charkit::scene
