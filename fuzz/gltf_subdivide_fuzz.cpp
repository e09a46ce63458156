// libFuzzer target: ops::subdivide_gltf, the glTF-to-kernel input path of
// `charkit deform subdivide`, on arbitrary glTF/GLB bytes: full strength
// with smoothing, and with the distance control and a strength attribute
// named _S. It must answer with a GLB that GltfDocument reads back, or an
// error with a code; never crash, hang or allocate without bound.
#include <cstddef>
#include <cstdint>

#include "charkit/ops/gltf_subdivide.h"
#include "charkit/scene/gltf_document.h"

using namespace charkit;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  scene::GltfLoadOptions lo;
  lo.max_total_bytes = std::uint64_t{16} << 20;
  lo.max_zero_accessor_bytes = std::uint64_t{4} << 20;
  for (int pass = 0; pass < 2; ++pass) {
    auto doc = scene::GltfDocument::load(core::Bytes(data, size), lo);
    if (!doc) return 0;
    ops::GltfSubdivideOptions o;
    if (pass == 1) {
      o.params.distance_control = true;
      o.params.reference = {0.0F, 1.0F, 3.0F};
      o.strength_attribute = "_S";
    }
    auto r = ops::subdivide_gltf(*doc, o);
    if (!r) {
      if (r.error().code.empty()) __builtin_trap();
      continue;
    }
    auto back = scene::GltfDocument::load(r->glb, lo);
    if (!back) __builtin_trap();
  }
  return 0;
}
