// BC7 (BPTC UNORM) block encoding, written from the public format
// description (Khronos Data Format Specification, "BPTC Compressed Texture
// Image Formats"): modes 1 (two subsets, 64 partitions, opaque), 5 (separate
// colour and alpha, channel rotation) and 6 (one subset, RGBA with p-bits).
// No Debian package has a BC7 encoder. Every block it writes is read back by
// decode_bc7_block (bc7.h) to choose between modes, so what it reports as the
// error is what a GPU will show.
#pragma once

#include <cstdint>

namespace charkit::scene {

struct Bc7EncodeOptions {
  /// Modes tried (bit m = mode m; modes other than 1, 5 and 6 are ignored).
  std::uint32_t modes = (1u << 1) | (1u << 5) | (1u << 6);
  /// Mode 1: how many of the 64 partitions (ranked by a quick estimate) are
  /// encoded in full.
  int partitions_tried = 4;
  /// Least-squares endpoint refinements per fit.
  int refinements = 2;
};

/// Encode 16 RGBA8 pixels (row-major, pixel x + 4*y at in[4*(x + 4*y)]) into
/// one 16-byte block. Returns the block's squared error summed over the four
/// channels of the 16 pixels (as decode_bc7_block decodes it).
std::uint64_t encode_bc7_block(const std::uint8_t* in_rgba, std::uint8_t* out_block,
                               const Bc7EncodeOptions& options = {});

}  // namespace charkit::scene
