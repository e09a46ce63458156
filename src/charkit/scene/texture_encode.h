// Texture encoding for GPU formats. BC7 today (modes 1, 5 and 6, from the
// public BPTC format description; bc7_encode.cpp), used by `bem pack`.
#pragma once

#include <cstdint>
#include <vector>

#include "charkit/core/parallel.h"
#include "charkit/scene/detail/bc7_encode.h"
#include "charkit/scene/image.h"

namespace charkit::scene {

/// BC7 blocks of `image` (rows top to bottom as given), 16 bytes per 4×4
/// block, blocks row-major; edge blocks repeat the last row / column. Runs
/// block rows on `executor` (nullptr: the process-wide pool); the bytes do
/// not depend on the executor.
std::vector<std::uint8_t> encode_bc7(const RgbaImage& image, const Bc7EncodeOptions& options = {},
                                     core::Executor* executor = nullptr);

}  // namespace charkit::scene
