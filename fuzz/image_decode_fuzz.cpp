// libFuzzer target: the image decoders bem pack and render use on untrusted
// images — scene::decode_image (PNG through libpng, JPEG through TurboJPEG)
// with a small side limit so one input costs little, and scene::parse_dds
// for DDS files. A decoded image must hold exactly width × height × 4 bytes;
// a DDS texture exactly its mip chain's bytes.
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "charkit/scene/dds.h"
#include "charkit/scene/image.h"
#include "charkit/scene/texture_decode.h"

using namespace charkit;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > (1u << 20)) return 0;
  const core::Bytes bytes(data, size);
  if (scene::is_dds(bytes)) {
    auto dds = scene::parse_dds(bytes);
    if (!dds) {
      (void)dds.error().to_string();
      return 0;
    }
    std::uint64_t chain = 0;
    for (std::uint32_t i = 0; i < dds->mips; ++i)
      chain += *scene::top_mip_bytes(dds->format, std::max<std::uint32_t>(1, dds->width >> i),
                                     std::max<std::uint32_t>(1, dds->height >> i));
    if (dds->data.size() != chain) __builtin_trap();
    return 0;
  }
  auto img = scene::decode_image(bytes, 1024);
  if (!img) {
    (void)img.error().to_string();
    return 0;
  }
  if (img->pixels.size() != std::size_t{img->width} * img->height * 4) __builtin_trap();
  return 0;
}
