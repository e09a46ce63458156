// Test helper: packs bit fields LSB first into a 16-byte texture block
// (BC7 and ASTC number block bits from the least significant bit of byte 0).
#pragma once

#include <array>
#include <cstdint>

namespace charkit::testkit {

/// Packs fields LSB first into a 16-byte block.
class BlockWriter {
 public:
  BlockWriter& put(std::uint32_t value, int bits) {
    for (int i = 0; i < bits; ++i, ++pos_) {
      if (i < 32 && ((value >> i) & 1u) != 0) {  // wider fields are zero-extended
        block_[static_cast<std::size_t>(pos_ >> 3)] |= static_cast<std::uint8_t>(1u << (pos_ & 7));
      }
    }
    return *this;
  }
  int position() const { return pos_; }
  const std::uint8_t* data() const { return block_.data(); }
  const std::array<std::uint8_t, 16>& bytes() const { return block_; }

 private:
  std::array<std::uint8_t, 16> block_{};
  int pos_ = 0;
};

}  // namespace charkit::testkit
