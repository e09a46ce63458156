// libFuzzer target: the PC2 point-cache reader, then (when it parses) the
// writer and a re-read that must give the same cache. Inputs are capped at
// 1 MiB and the float limit is small, so declared sizes never allocate much.
#include <cstddef>
#include <cstdint>

#include "charkit/deformer/pc2.h"

using namespace charkit::deformer;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > (1u << 20)) return 0;
  Pc2Limits limits;
  limits.max_floats = 1u << 18;
  auto c = read_pc2(charkit::core::Bytes(data, size), limits);
  if (!c) {
    (void)c.error().to_string();
    return 0;
  }
  auto bytes = write_pc2(*c);
  if (!bytes) __builtin_trap();  // whatever we read we can write
  auto again = read_pc2(*bytes, limits);
  if (!again || again->positions != c->positions || again->point_count != c->point_count ||
      again->sample_count != c->sample_count)
    __builtin_trap();
  return 0;
}
