#include "charkit/scene/detail/bc7.h"

#include <cstring>

#include "charkit/scene/detail/bc7_tables.h"

namespace charkit::scene {
namespace {

/// Per-mode layout (BPTC mode table): subsets NS, partition bits PB, rotation
/// bits RB, index selection bits ISB, colour bits CB, alpha bits AB, endpoint
/// p-bits EPB, shared p-bits SPB, index bits IB, second index bits IB2.
struct ModeInfo {
  int subsets, partition_bits, rotation_bits, selection_bits;
  int color_bits, alpha_bits, endpoint_pbits, shared_pbits, index_bits, index2_bits;
};

constexpr ModeInfo kModes[8] = {
    {3, 4, 0, 0, 4, 0, 1, 0, 3, 0}, {2, 6, 0, 0, 6, 0, 0, 1, 3, 0}, {3, 6, 0, 0, 5, 0, 0, 0, 2, 0},
    {2, 6, 0, 0, 7, 0, 1, 0, 2, 0}, {1, 0, 2, 1, 5, 6, 0, 0, 2, 3}, {1, 0, 2, 0, 7, 8, 0, 0, 2, 2},
    {1, 0, 0, 0, 7, 7, 1, 0, 4, 0}, {2, 6, 0, 0, 5, 5, 1, 0, 2, 0},
};

using bc7_tables::kWeights2;
using bc7_tables::kWeights3;
using bc7_tables::kWeights4;

/// Reads the 128-bit block LSB first (bit 0 = least significant bit of byte 0).
class BitReader {
 public:
  explicit BitReader(const std::uint8_t* block) : block_(block) {}
  std::uint32_t read(int count) {
    std::uint32_t v = 0;
    for (int i = 0; i < count; ++i, ++pos_) {
      const std::uint32_t bit = (block_[pos_ >> 3] >> (pos_ & 7)) & 1u;
      v |= bit << i;
    }
    return v;
  }

 private:
  const std::uint8_t* block_;
  int pos_ = 0;
};

/// Unquantise: replicate the top bits of an n-bit value to 8 bits.
std::uint8_t expand(std::uint32_t v, int bits) {
  v <<= (8 - bits);
  return static_cast<std::uint8_t>(v | (v >> bits));
}

std::uint8_t interpolate(std::uint8_t e0, std::uint8_t e1, std::uint32_t index, int bits) {
  const std::uint32_t w = bits == 2   ? kWeights2[index]
                          : bits == 3 ? kWeights3[index]
                                      : kWeights4[index];
  return static_cast<std::uint8_t>(((64 - w) * e0 + w * e1 + 32) >> 6);
}

}  // namespace

void decode_bc7_block(const std::uint8_t* block, std::uint8_t* out) {
  int mode = 0;
  while (mode < 8 && ((block[0] >> mode) & 1u) == 0) {
    ++mode;
  }
  if (mode == 8) {  // reserved: transparent black
    std::memset(out, 0, 64);
    return;
  }
  const ModeInfo& m = kModes[mode];
  BitReader bits(block);
  bits.read(mode + 1);
  const std::uint32_t partition = bits.read(m.partition_bits);
  const std::uint32_t rotation = bits.read(m.rotation_bits);
  const std::uint32_t selection = bits.read(m.selection_bits);

  // Endpoints: all R values (subset 0 e0, e1, subset 1 e0, e1, ...), then G, B, A.
  const int endpoints = m.subsets * 2;
  std::uint32_t raw[6][4] = {};
  for (int c = 0; c < 3; ++c) {
    for (int e = 0; e < endpoints; ++e) {
      raw[e][c] = bits.read(m.color_bits);
    }
  }
  for (int e = 0; e < endpoints; ++e) {
    raw[e][3] = m.alpha_bits != 0 ? bits.read(m.alpha_bits) : 0;
  }
  std::uint32_t pbit[6] = {};
  if (m.endpoint_pbits != 0) {
    for (int e = 0; e < endpoints; ++e) {
      pbit[e] = bits.read(1);
    }
  } else if (m.shared_pbits != 0) {
    for (int s = 0; s < m.subsets; ++s) {
      pbit[2 * s] = pbit[2 * s + 1] = bits.read(1);
    }
  }
  const bool has_pbits = m.endpoint_pbits != 0 || m.shared_pbits != 0;
  std::uint8_t ep[6][4] = {};
  for (int e = 0; e < endpoints; ++e) {
    for (int c = 0; c < 4; ++c) {
      const int n = c < 3 ? m.color_bits : m.alpha_bits;
      if (n == 0) {
        ep[e][c] = 255;  // modes without alpha are opaque
      } else if (has_pbits) {
        ep[e][c] = expand((raw[e][c] << 1) | pbit[e], n + 1);
      } else {
        ep[e][c] = expand(raw[e][c], n);
      }
    }
  }

  // Subset of each pixel and the anchor pixels, whose index has one bit less.
  std::uint8_t subset[16] = {};
  bool anchor[16] = {};
  anchor[0] = true;
  if (m.subsets == 2) {
    std::memcpy(subset, &bc7_tables::kPartition2[partition * 16], 16);
    anchor[bc7_tables::kAnchor2[partition]] = true;
  } else if (m.subsets == 3) {
    std::memcpy(subset, &bc7_tables::kPartition3[partition * 16], 16);
    anchor[bc7_tables::kAnchor3Second[partition]] = true;
    anchor[bc7_tables::kAnchor3Third[partition]] = true;
  }
  std::uint32_t index1[16] = {};
  std::uint32_t index2[16] = {};
  for (int i = 0; i < 16; ++i) {
    index1[i] = bits.read(anchor[i] ? m.index_bits - 1 : m.index_bits);
  }
  if (m.index2_bits != 0) {
    for (int i = 0; i < 16; ++i) {
      index2[i] = bits.read(i == 0 ? m.index2_bits - 1 : m.index2_bits);
    }
  }

  for (int i = 0; i < 16; ++i) {
    const std::uint8_t* e0 = ep[2 * subset[i]];
    const std::uint8_t* e1 = ep[2 * subset[i] + 1];
    std::uint8_t* px = out + 4 * i;
    if (m.index2_bits == 0) {
      for (int c = 0; c < 4; ++c) {
        px[c] = interpolate(e0[c], e1[c], index1[i], m.index_bits);
      }
    } else {
      // Modes 4 and 5: colour and alpha from separate index sets; mode 4's
      // selection bit swaps which set (2- or 3-bit) drives colour.
      const bool swap = selection != 0;
      const std::uint32_t ci = swap ? index2[i] : index1[i];
      const std::uint32_t ai = swap ? index1[i] : index2[i];
      const int cb = swap ? m.index2_bits : m.index_bits;
      const int ab = swap ? m.index_bits : m.index2_bits;
      for (int c = 0; c < 3; ++c) {
        px[c] = interpolate(e0[c], e1[c], ci, cb);
      }
      px[3] = interpolate(e0[3], e1[3], ai, ab);
    }
    if (rotation != 0) {  // 1: swap A with R, 2: with G, 3: with B
      const std::uint8_t t = px[3];
      px[3] = px[rotation - 1];
      px[rotation - 1] = t;
    }
  }
}

}  // namespace charkit::scene
