// Stand-in for ../shading_gpu.cpp in a build without the Vulkan backend
// (docs/building.md, "Optional dependencies"): GPU_UNAVAILABLE.
#include "charkit/render/shading_gpu.h"

namespace charkit::render {

core::Result<std::vector<Vec4>> run_shading_function(gpu::Context& /*context*/,
                                                     ShadingFunction /*function*/,
                                                     std::span<const Vec4> /*a*/,
                                                     std::span<const Vec4> /*b*/, Vec2 /*params*/) {
  return gpu::unavailable();
}

core::Result<std::vector<Vec4>> run_texture_function(gpu::Context& /*context*/,
                                                     TextureFunction /*function*/,
                                                     std::span<const Vec4> /*a*/,
                                                     std::span<const Vec4> /*b*/,
                                                     const TextureFunctionParams& /*params*/,
                                                     std::optional<gpu::ImageId> /*image*/) {
  return gpu::unavailable();
}

}  // namespace charkit::render
