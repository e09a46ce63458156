// libFuzzer target: the .npy reader, the .npz reader (libzip, STORED and
// DEFLATED), the dataset decoder and the export-nmn morphs archive reader. Whatever read_npy
// accepts must survive write_npy -> read_npy unchanged. Limits are small so one input stays cheap.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "charkit/deformer/dataset.h"
#include "charkit/deformer/nmn_export.h"
#include "charkit/deformer/npy.h"

using namespace charkit::deformer;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  NpyLimits limits;
  limits.max_data_bytes = 1 << 20;
  limits.max_header_bytes = 1 << 12;
  limits.max_members = 64;
  const charkit::core::Bytes bytes(data, size);

  auto a = read_npy(bytes, limits);
  if (a) {
    auto again = write_npy(*a);
    if (!again) __builtin_trap();  // an accepted array is always writable
    auto b = read_npy(*again, limits);
    if (!b || b->dtype != a->dtype || b->shape != a->shape || b->data != a->data) __builtin_trap();
    (void)a->to_f64();
  } else {
    (void)a.error().to_string();
  }

  auto z = read_npz(bytes, limits);
  if (z) {
    for (const NpzMember& m : *z) (void)m.array.to_f32();
  } else {
    (void)z.error().to_string();
  }

  // The morphs archive, for a mesh of 1-8 vertices (the size picks it).
  auto morphs = read_nmn_morphs(bytes, 1 + size % 8);
  if (morphs) {
    for (const auto& t : *morphs)
      if (t.position_deltas.size() != 3 * (1 + size % 8) || t.name.empty()) __builtin_trap();
  } else {
    (void)morphs.error().to_string();
  }

  // Dataset: the input split at the first NUL into sidecar JSON and npz bytes.
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::size_t cut = text.find('\0');
  if (cut != std::string_view::npos) {
    auto d = decode_dataset(bytes.subspan(cut + 1), text.substr(0, cut), limits);
    if (d && !validate(*d)) __builtin_trap();
  }
  return 0;
}
