// libFuzzer target: scene::GltfDocument on GLB / glTF JSON input: load, then
// every buffer and every accessor through each typed reader. The size cap is
// small so one input costs little; no external file may be opened (no base
// folder is given).
#include <cstddef>
#include <cstdint>

#include "charkit/scene/error_codes.h"
#include "charkit/scene/gltf_document.h"

using namespace charkit;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > (1u << 20)) return 0;
  scene::GltfLoadOptions o;
  o.max_total_bytes = std::uint64_t{16} << 20;
  auto doc = scene::GltfDocument::load(core::Bytes(data, size), o);
  if (!doc) {
    (void)doc.error().to_string();
    return 0;
  }
  for (std::size_t b = 0; b < doc->asset().buffers.size(); ++b) {
    auto bytes = doc->buffer(b);
    if (!bytes && bytes.error().code == scene::codes::GLTF_URI_EXTERNAL) continue;
    if (!bytes) (void)bytes.error().to_string();
  }
  for (std::size_t i = 0; i < doc->asset().accessors.size() && i < 4096; ++i) {
    auto info = doc->accessor(i);
    auto f = doc->read_accessor_floats(i);
    if (f && (!info || f->size() != info->count * info->components)) __builtin_trap();
    auto d = doc->read_accessor_doubles(i);
    if (f.ok() != d.ok()) __builtin_trap();  // one check for every output type
    (void)doc->read_accessor_uints(i);
  }
  return 0;
}
