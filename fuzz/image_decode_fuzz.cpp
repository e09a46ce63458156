// libFuzzer target: scene::decode_image (stb_image, PNG and JPEG only) on any
// bytes, with a small side limit so one input costs little; a decoded image
// must hold exactly width × height × 4 bytes.
#include <cstddef>
#include <cstdint>

#include "charkit/scene/image.h"

using namespace charkit;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > (1u << 20)) return 0;
  auto img = scene::decode_image(core::Bytes(data, size), 1024);
  if (!img) {
    (void)img.error().to_string();
    return 0;
  }
  if (img->pixels.size() != std::size_t{img->width} * img->height * 4) __builtin_trap();
  return 0;
}
