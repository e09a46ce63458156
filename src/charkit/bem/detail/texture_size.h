// §8 texture formats and the byte size of a full mip chain. Shared by the
// texture pass (payload sizes) and anything that budgets texture memory.
#pragma once

#include <algorithm>
#include <cstdint>

namespace charkit::bem {

/// Unity TextureFormat values BEM accepts (§8). BC6H and everything else are rejected.
enum class TextureFormat : std::uint32_t {
  kRGBA32 = 4,
  kBC1 = 10,
  kBC3 = 12,
  kBC7 = 25,
  kBC4 = 26,
  kBC5 = 27,
  kASTC4x4 = 48,
  kASTC5x5 = 49,
  kASTC6x6 = 50,
  kR8 = 63,
};

/// How one format stores pixels: blocks of block_w × block_h pixels taking
/// block_bytes each (uncompressed formats are 1×1 blocks).
struct TextureLayout {
  std::uint32_t block_w = 1;
  std::uint32_t block_h = 1;
  std::uint32_t block_bytes = 0;  ///< 0: not a BEM format
  bool bc = false;                ///< BC formats need width/height multiples of 4 (§8)
};

inline TextureLayout texture_layout(std::uint32_t format) {
  switch (format) {
    case 4:
      return {1, 1, 4, false};  // RGBA32
    case 63:
      return {1, 1, 1, false};  // R8
    case 10:
      return {4, 4, 8, true};  // BC1
    case 26:
      return {4, 4, 8, true};  // BC4
    case 12:
      return {4, 4, 16, true};  // BC3
    case 25:
      return {4, 4, 16, true};  // BC7
    case 27:
      return {4, 4, 16, true};  // BC5
    case 48:
      return {4, 4, 16, false};  // ASTC 4×4
    case 49:
      return {5, 5, 16, false};  // ASTC 5×5
    case 50:
      return {6, 6, 16, false};  // ASTC 6×6
    default:
      return {};
  }
}

inline bool is_texture_format(std::uint32_t format) {
  return texture_layout(format).block_bytes != 0;
}

/// Number of levels of the full chain down to 1×1: floor(log2(max(w, h))) + 1.
inline std::uint32_t full_mip_count(std::uint32_t width, std::uint32_t height) {
  std::uint32_t m = std::max(width, height), n = 1;
  while (m > 1) {
    m >>= 1;
    ++n;
  }
  return n;
}

/// Bytes of `mips` levels, largest first; each level halves (floor, at least 1)
/// and is rounded up to whole blocks, no row padding (§8, docs/bem/mesh.md Q13).
/// 0 for an unknown format.
inline std::uint64_t texture_chain_bytes(std::uint32_t format, std::uint32_t width,
                                         std::uint32_t height, std::uint32_t mips) {
  TextureLayout l = texture_layout(format);
  if (l.block_bytes == 0) return 0;
  std::uint64_t total = 0;
  std::uint64_t w = width, h = height;
  for (std::uint32_t level = 0; level < mips; ++level) {
    std::uint64_t bw = (w + l.block_w - 1) / l.block_w;
    std::uint64_t bh = (h + l.block_h - 1) / l.block_h;
    total += bw * bh * l.block_bytes;
    w = std::max<std::uint64_t>(1, w / 2);
    h = std::max<std::uint64_t>(1, h / 2);
  }
  return total;
}

}  // namespace charkit::bem
