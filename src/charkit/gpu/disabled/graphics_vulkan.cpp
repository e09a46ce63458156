// Stand-in for ../graphics_vulkan.cpp in a build without the Vulkan
// backend (docs/building.md, "Optional dependencies"): GPU_UNAVAILABLE.
#include "charkit/gpu/context.h"

namespace charkit::gpu {

core::Result<ImageId> Context::create_image(std::uint32_t, std::uint32_t, ImageFormat) {
  return unavailable();
}
void Context::free_image(ImageId) {}
core::Status Context::write_image(ImageId, std::span<const std::uint8_t>) {
  return unavailable();
}
core::Result<std::vector<std::uint8_t>> Context::read_image(ImageId, ImageAspect) {
  return unavailable();
}
core::Result<PipelineId> Context::create_graphics_pipeline(const GraphicsPipelineDesc&) {
  return unavailable();
}
core::Status Context::render(std::span<const RenderPass>) {
  return unavailable();
}

}  // namespace charkit::gpu
