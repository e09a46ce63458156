// libFuzzer target: ops::apply_gltf_morphs, the glTF-to-kernel input path
// of `charkit deform morph`, on arbitrary glTF/GLB bytes: with the file's
// default weights and with target 0 at weight 1. It must answer with a GLB
// that GltfDocument reads back, or an error with a code; never crash, hang
// or allocate without bound (the document's load limits are small here).
#include <cstddef>
#include <cstdint>

#include "charkit/core/parallel.h"
#include "charkit/ops/gltf_morph.h"
#include "charkit/scene/gltf_document.h"

using namespace charkit;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  scene::GltfLoadOptions lo;
  lo.max_total_bytes = std::uint64_t{16} << 20;
  lo.max_zero_accessor_bytes = std::uint64_t{4} << 20;
  for (int pass = 0; pass < 2; ++pass) {
    auto doc = scene::GltfDocument::load(core::Bytes(data, size), lo);
    if (!doc) return 0;
    ops::GltfMorphOptions o;
    o.run.executor = &core::serial_executor();
    if (pass == 1) o.weights["0"] = 1.0F;
    auto r = ops::apply_gltf_morphs(*doc, o);
    if (!r) {
      if (r.error().code.empty()) __builtin_trap();
      continue;
    }
    auto back = scene::GltfDocument::load(r->glb, lo);
    if (!back) __builtin_trap();
  }
  return 0;
}
