// BC7 decoder against blocks built bit by bit from the BPTC layout
// (Khronos Data Format Specification, BPTC): mode bits, partition, rotation,
// index selection, endpoints channel-major, p-bits, primary then secondary
// indices, anchors one bit shorter. Expected pixels are worked out by hand in
// the comments: unquantise = replicate top bits to 8; interpolate =
// ((64 - w) * e0 + w * e1 + 32) >> 6 with the spec weight tables.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <random>

#include "block_writer.h"
#include "charkit/scene/detail/bc7.h"
#include "charkit/scene/detail/bc7_tables.h"

namespace charkit::scene {
namespace {

using testkit::BlockWriter;
using Pixels = std::array<std::uint8_t, 64>;

Pixels decode(const BlockWriter& w) {
  EXPECT_EQ(w.position(), 128) << "block must be exactly 128 bits";
  Pixels px{};
  decode_bc7_block(w.data(), px.data());
  return px;
}

std::array<int, 4> pixel(const Pixels& px, int i) {
  return {px[4 * i], px[4 * i + 1], px[4 * i + 2], px[4 * i + 3]};
}

TEST(Bc7Tables, Partition2MatchesBitmaskForm) {
  // The same table as 16-bit masks (bit i = subset of pixel i), as the
  // Khronos specification prints it.
  constexpr std::uint16_t kMasks[64] = {
      0xCCCC, 0x8888, 0xEEEE, 0xECC8, 0xC880, 0xFEEC, 0xFEC8, 0xEC80, 0xC800, 0xFFEC, 0xFE80,
      0xE800, 0xFFE8, 0xFF00, 0xFFF0, 0xF000, 0xF710, 0x008E, 0x7100, 0x08CE, 0x008C, 0x7310,
      0x3100, 0x8CCE, 0x088C, 0x3110, 0x6666, 0x366C, 0x17E8, 0x0FF0, 0x718E, 0x399C, 0xAAAA,
      0xF0F0, 0x5A5A, 0x33CC, 0x3C3C, 0x55AA, 0x9696, 0xA55A, 0x73CE, 0x13C8, 0x324C, 0x3BDC,
      0x6996, 0xC33C, 0x9966, 0x0660, 0x0272, 0x04E4, 0x4E40, 0x2720, 0xC936, 0x936C, 0x39C6,
      0x639C, 0x9336, 0x9CC6, 0x817E, 0xE718, 0xCCF0, 0x0FCC, 0x7744, 0xEE22};
  for (int p = 0; p < 64; ++p) {
    for (int i = 0; i < 16; ++i) {
      EXPECT_EQ(bc7_tables::kPartition2[p * 16 + i], (kMasks[p] >> i) & 1) << p << "/" << i;
    }
    EXPECT_EQ(bc7_tables::kPartition2[p * 16 + bc7_tables::kAnchor2[p]], 1) << p;
  }
}

TEST(Bc7Tables, Partition3MatchesPackedForm) {
  // 2 bits per pixel, pixel 0 in the lowest bits. Partition 58 is
  // 0,0,2,2 / 1,1,2,2 / 1,1,2,2 / 0,0,2,2 (the D3D11 and Khronos tables agree).
  constexpr std::uint32_t kPacked[64] = {
      0xAA685050, 0x6A5A5040, 0x5A5A4200, 0x5450A0A8, 0xA5A50000, 0xA0A05050, 0x5555A0A0,
      0x5A5A5050, 0xAA550000, 0xAA555500, 0xAAAA5500, 0x90909090, 0x94949494, 0xA4A4A4A4,
      0xA9A59450, 0x2A0A4250, 0xA5945040, 0x0A425054, 0xA5A5A500, 0x55A0A0A0, 0xA8A85454,
      0x6A6A4040, 0xA4A45000, 0x1A1A0500, 0x0050A4A4, 0xAAA59090, 0x14696914, 0x69691400,
      0xA08585A0, 0xAA821414, 0x50A4A450, 0x6A5A0200, 0xA9A58000, 0x5090A0A8, 0xA8A09050,
      0x24242424, 0x00AA5500, 0x24924924, 0x24499224, 0x50A50A50, 0x500AA550, 0xAAAA4444,
      0x66660000, 0xA5A0A5A0, 0x50A050A0, 0x69286928, 0x44AAAA44, 0x66666600, 0xAA444444,
      0x54A854A8, 0x95809580, 0x96969600, 0xA85454A8, 0x80959580, 0xAA141414, 0x96960000,
      0xAAAA1414, 0xA05050A0, 0xA0A5A5A0, 0x96000000, 0x40804080, 0xA9A8A9A8, 0xAAAAAA44,
      0x2A4A5254};
  for (int p = 0; p < 64; ++p) {
    for (int i = 0; i < 16; ++i) {
      EXPECT_EQ(bc7_tables::kPartition3[p * 16 + i], (kPacked[p] >> (2 * i)) & 3u) << p << "/" << i;
    }
    EXPECT_EQ(bc7_tables::kPartition3[p * 16 + bc7_tables::kAnchor3Second[p]], 1) << p;
    EXPECT_EQ(bc7_tables::kPartition3[p * 16 + bc7_tables::kAnchor3Third[p]], 2) << p;
  }
}

TEST(Bc7, Mode6SolidColour) {
  // Mode 6: 7-bit RGBA endpoints + one p-bit each, 4-bit indices (anchor 3).
  BlockWriter w;
  w.put(0x40, 7);              // mode 6
  w.put(64, 7).put(64, 7);     // R0 R1
  w.put(16, 7).put(16, 7);     // G0 G1
  w.put(127, 7).put(127, 7);   // B0 B1
  w.put(127, 7).put(127, 7);   // A0 A1
  w.put(1, 1).put(1, 1);       // p0 p1
  w.put(0, 3).put(0, 4 * 15);  // all indices 0
  const Pixels px = decode(w);
  // R = 64<<1|1 = 129, G = 16<<1|1 = 33, B = A = 127<<1|1 = 255; index 0 -> e0.
  for (int i = 0; i < 16; ++i) {
    EXPECT_EQ(pixel(px, i), (std::array<int, 4>{129, 33, 255, 255})) << i;
  }
}

TEST(Bc7, Mode6Ramp) {
  // e0 = 0 (p 0), e1 = 255 (127, p 1) in every channel; pixel i has index i.
  BlockWriter w;
  w.put(0x40, 7);
  for (int c = 0; c < 4; ++c) {
    w.put(0, 7).put(127, 7);
  }
  w.put(0, 1).put(1, 1);
  w.put(0, 3);  // pixel 0, anchor
  for (std::uint32_t i = 1; i < 16; ++i) {
    w.put(i, 4);
  }
  const Pixels px = decode(w);
  // 4-bit weights 0,4,9,...,64: value = (w * 255 + 32) >> 6.
  // i=1: (1020+32)>>6 = 16; i=8: (8670+32)>>6 = 135; i=15: (16320+32)>>6 = 255.
  EXPECT_EQ(pixel(px, 0), (std::array<int, 4>{0, 0, 0, 0}));
  EXPECT_EQ(pixel(px, 1), (std::array<int, 4>{16, 16, 16, 16}));
  EXPECT_EQ(pixel(px, 8), (std::array<int, 4>{135, 135, 135, 135}));
  EXPECT_EQ(pixel(px, 15), (std::array<int, 4>{255, 255, 255, 255}));
}

TEST(Bc7, Mode5WithRotation) {
  // Mode 5: rotation 2 bits, 7-bit colour, 8-bit alpha, no p-bits, 2-bit
  // colour and 2-bit alpha indices (anchor 1 bit each).
  BlockWriter w;
  w.put(0x20, 6);             // mode 5
  w.put(1, 2);                // rotation 1: swap A and R
  w.put(127, 7).put(127, 7);  // R -> 255
  w.put(0, 7).put(0, 7);      // G -> 0
  w.put(64, 7).put(64, 7);    // B: 64<<1 | 64>>6 = 129
  w.put(32, 8).put(32, 8);    // A = 32
  w.put(0, 1).put(0, 30);     // colour indices
  w.put(0, 1).put(0, 30);     // alpha indices
  const Pixels px = decode(w);
  // Before rotation (255, 0, 129, 32); after swapping A and R: (32, 0, 129, 255).
  for (int i = 0; i < 16; ++i) {
    EXPECT_EQ(pixel(px, i), (std::array<int, 4>{32, 0, 129, 255})) << i;
  }
}

TEST(Bc7, Mode4IndexSelectionSwapsIndexSets) {
  // Mode 4: rotation 2, selection 1, 5-bit colour, 6-bit alpha, 2-bit and 3-bit indices.
  // Colour e0 = 0, e1 = 31 (-> 255); alpha e0 = 0, e1 = 63 (-> 255).
  auto build = [](std::uint32_t selection) {
    BlockWriter w;
    w.put(0x10, 5);  // mode 4
    w.put(0, 2);     // no rotation
    w.put(selection, 1);
    for (int c = 0; c < 3; ++c) {
      w.put(0, 5).put(31, 5);
    }
    w.put(0, 6).put(63, 6);
    // 2-bit set: pixel 1 = 1, others 0. 3-bit set: pixel 1 = 1, others 0.
    w.put(0, 1).put(1, 2).put(0, 2 * 14);
    w.put(0, 2).put(1, 3).put(0, 3 * 14);
    return w;
  };
  // Selection 0: colour from the 2-bit set (w = 21): (21*255+32)>>6 = 84;
  // alpha from the 3-bit set (w = 9): (9*255+32)>>6 = 36.
  Pixels px = decode(build(0));
  EXPECT_EQ(pixel(px, 1), (std::array<int, 4>{84, 84, 84, 36}));
  EXPECT_EQ(pixel(px, 0), (std::array<int, 4>{0, 0, 0, 0}));
  // Selection 1: colour from the 3-bit set (36), alpha from the 2-bit set (84).
  px = decode(build(1));
  EXPECT_EQ(pixel(px, 1), (std::array<int, 4>{36, 36, 36, 84}));
}

TEST(Bc7, Mode1PartitionWithAnchor) {
  // Mode 1, partition 17: pixels 1, 2, 3, 7 in subset 1, anchor of subset 1 is
  // pixel 2 (so pixels 0 and 2 have 2-bit indices, the rest 3-bit).
  BlockWriter w;
  w.put(0x2, 2);  // mode 1
  w.put(17, 6);
  // Endpoints (6 bits): s0e0, s0e1, s1e0, s1e1 per channel.
  w.put(63, 6).put(63, 6).put(0, 6).put(0, 6);  // R
  w.put(0, 6).put(0, 6).put(0, 6).put(63, 6);   // G
  w.put(0, 6).put(0, 6).put(0, 6).put(0, 6);    // B
  w.put(0, 1);                                  // shared p-bit subset 0
  w.put(1, 1);                                  // shared p-bit subset 1
  // Indices: pixel 0 (2 bits) 0; 1: 7; 2 (anchor, 2 bits): 3; 3: 7; 4..6: 0; 7: 7; 8..15: 0.
  w.put(0, 2).put(7, 3).put(3, 2).put(7, 3).put(0, 9).put(7, 3).put(0, 24);
  const Pixels px = decode(w);
  // Subset 0: R = 63<<1|0 = 126 -> 7 bits to 8: 126<<1 | 126>>6 = 253; G = B = 0.
  EXPECT_EQ(pixel(px, 0), (std::array<int, 4>{253, 0, 0, 255}));
  EXPECT_EQ(pixel(px, 4), (std::array<int, 4>{253, 0, 0, 255}));
  // Subset 1: e0 = (0<<1|1) = 1 -> 1<<1 | 0 = 2 in every channel; e1 G = 127 -> 255, R = B = 2.
  // Index 7 (w 64) -> e1 = (2, 255, 2). Anchor pixel 2, index 3 (w 27):
  // R = B = (37*2 + 27*2 + 32)>>6 = 160>>6 = 2; G = (37*2 + 27*255 + 32)>>6 = 6991>>6 = 109.
  EXPECT_EQ(pixel(px, 1), (std::array<int, 4>{2, 255, 2, 255}));
  EXPECT_EQ(pixel(px, 2), (std::array<int, 4>{2, 109, 2, 255}));
  EXPECT_EQ(pixel(px, 3), (std::array<int, 4>{2, 255, 2, 255}));
  EXPECT_EQ(pixel(px, 7), (std::array<int, 4>{2, 255, 2, 255}));
}

TEST(Bc7, Mode0ThreeSubsets) {
  // Mode 0, partition 0: subsets 0,0,1,1 / 0,0,1,1 / 0,2,2,1 / 2,2,2,2; anchors
  // pixel 0, 3 (subset 1) and 15 (subset 2). 4-bit endpoints, p-bit per endpoint, 3-bit indices.
  BlockWriter w;
  w.put(1, 1);  // mode 0
  w.put(0, 4);  // partition 0
  // R: s0 = 15,15; s1 = 0,0; s2 = 0,0. G: s1 = 15,15. B: s2 = 15,15.
  w.put(15, 4).put(15, 4).put(0, 4).put(0, 4).put(0, 4).put(0, 4);
  w.put(0, 4).put(0, 4).put(15, 4).put(15, 4).put(0, 4).put(0, 4);
  w.put(0, 4).put(0, 4).put(0, 4).put(0, 4).put(15, 4).put(15, 4);
  w.put(1, 1).put(1, 1).put(1, 1).put(1, 1).put(1, 1).put(1, 1);  // p-bits
  // Indices all 0: 3 anchors with 2 bits, 13 pixels with 3 bits.
  w.put(0, 3 * 2 + 13 * 3);
  const Pixels px = decode(w);
  // 15<<1|1 = 31 (5 bits) -> 31<<3 | 31>>2 = 255; 0<<1|1 = 1 -> 1<<3 | 0 = 8.
  EXPECT_EQ(pixel(px, 0), (std::array<int, 4>{255, 8, 8, 255}));
  EXPECT_EQ(pixel(px, 2), (std::array<int, 4>{8, 255, 8, 255}));
  EXPECT_EQ(pixel(px, 9), (std::array<int, 4>{8, 8, 255, 255}));
  EXPECT_EQ(pixel(px, 15), (std::array<int, 4>{8, 8, 255, 255}));
}

TEST(Bc7, Mode7Alpha) {
  // Mode 7: 2 subsets, 5-bit RGBA, p-bit per endpoint, 2-bit indices. Partition 0
  // (columns 2, 3 are subset 1, anchor 15).
  BlockWriter w;
  w.put(0x80, 8);  // mode 7
  w.put(0, 6);
  for (int c = 0; c < 3; ++c) {
    w.put(16, 5).put(16, 5).put(0, 5).put(0, 5);
  }
  w.put(31, 5).put(31, 5).put(8, 5).put(8, 5);  // A
  w.put(0, 1).put(0, 1).put(0, 1).put(0, 1);
  w.put(0, 1 + 2 * 14 + 1);
  const Pixels px = decode(w);
  // Subset 0: 16<<1 = 32 (6 bits) -> 32<<2 | 32>>4 = 130; A = 62 -> 62<<2 | 62>>4 = 251.
  // Subset 1: 0; A = 16 -> 16<<2 | 16>>4 = 65.
  EXPECT_EQ(pixel(px, 0), (std::array<int, 4>{130, 130, 130, 251}));
  EXPECT_EQ(pixel(px, 3), (std::array<int, 4>{0, 0, 0, 65}));
}

TEST(Bc7, ReservedModeIsTransparentBlack) {
  std::array<std::uint8_t, 16> block{};
  block[5] = 0xFF;
  Pixels px{};
  px.fill(7);
  decode_bc7_block(block.data(), px.data());
  for (std::uint8_t v : px) {
    EXPECT_EQ(v, 0);
  }
}

TEST(Bc7, AnyBlockDecodesWithoutFault) {
  std::mt19937 rng(7);
  std::array<std::uint8_t, 16> block{};
  Pixels px{};
  for (int n = 0; n < 20000; ++n) {
    for (auto& b : block) {
      b = static_cast<std::uint8_t>(rng());
    }
    decode_bc7_block(block.data(), px.data());
  }
  SUCCEED();
}

}  // namespace
}  // namespace charkit::scene
