// libFuzzer target: render::load_render_model, the model input path of
// `charkit render` (node hierarchy, skins at the rest pose, primitives,
// materials, embedded base colour images), on arbitrary glTF/GLB bytes with
// small limits. It answers a model whose every index is in range and every
// position finite, or an error with a code.
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "charkit/render/model.h"
#include "charkit/scene/gltf_document.h"

using namespace charkit;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  scene::GltfLoadOptions lo;
  lo.max_total_bytes = std::uint64_t{16} << 20;
  lo.max_zero_accessor_bytes = std::uint64_t{4} << 20;
  auto doc = scene::GltfDocument::load(core::Bytes(data, size), lo);
  if (!doc) return 0;
  render::ModelLoadOptions o;
  o.max_texture_side = 512;
  o.max_vertices = 1u << 16;
  auto m = render::load_render_model(*doc, o);
  if (!m) {
    if (m.error().code.empty()) __builtin_trap();
    return 0;
  }
  for (const render::RenderPrimitive& p : m->primitives) {
    for (std::uint32_t i : p.indices)
      if (i >= p.vertices.size()) __builtin_trap();
    if (p.base_texture && *p.base_texture >= m->images.size()) __builtin_trap();
    for (const render::RenderVertex& v : p.vertices)
      if (!std::isfinite(v.position[0]) || !std::isfinite(v.position[1]) ||
          !std::isfinite(v.position[2]))
        __builtin_trap();
  }
  return 0;
}
