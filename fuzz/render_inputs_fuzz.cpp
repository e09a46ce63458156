// libFuzzer target: the small text inputs of `charkit render`: the .cube LUT
// reader (render::parse_cube_lut) and the parts mapping
// (render::parse_parts) on the same bytes. Each answers a full strip / a
// mapping, or an error with a code.
#include <cstddef>
#include <cstdint>

#include "charkit/render/lut.h"
#include "charkit/render/model.h"

using namespace charkit;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const core::Bytes bytes(data, size);
  auto lut = render::parse_cube_lut(bytes);
  if (lut ? lut->size() != 1024 * 32 : lut.error().code.empty()) __builtin_trap();
  auto parts = render::parse_parts(bytes);
  if (!parts && parts.error().code.empty()) __builtin_trap();
  return 0;
}
