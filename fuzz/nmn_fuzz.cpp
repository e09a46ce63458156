// libFuzzer target: the `.nmn` reader, then (when it parses) the writer and a
// read of what was written (must succeed and be equal), and the runner on a
// fixed input. Work per input is bounded: inputs are capped at 1 MiB, so every
// layer width (checked against the file's own arrays) stays small.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "charkit/deformer/nmn.h"

using namespace charkit::deformer;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > (1u << 20)) return 0;
  auto n = read_nmn(std::span<const std::uint8_t>(data, size));
  if (!n) {
    (void)n.error().to_string();
    return 0;
  }
  auto bytes = write_nmn(*n);
  if (!bytes) __builtin_trap();  // whatever we read we can write
  auto again = read_nmn(*bytes);
  if (!again || !(*again == *n)) {
    // NaN weights compare unequal; only a failed re-read is a bug.
    if (!again) __builtin_trap();
  }
  // Local networks with groups: every group takes item 0 (any valid index).
  std::vector<std::uint32_t> items;
  if (n->group) items.assign(std::size_t{n->num_groups} * n->num_items_per_group, 0);
  if (n->group && n->num_bones + std::uint64_t{n->num_curves} == 0) return 0;
  auto r = NmnRunner::create(*n, items);
  if (!r) return 0;
  std::vector<float> in(r->input_count());
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i % 7) * 0.25f - 0.75f;
  std::vector<float> out(r->output_count());
  r->run(in, out);
  return 0;
}
