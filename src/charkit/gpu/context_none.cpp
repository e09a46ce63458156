// gpu::Context in a build without the Vulkan backend (volk or glslc missing
// at configure time): every entry point reports GPU_UNAVAILABLE.
#include "charkit/gpu/context.h"
#include "charkit/gpu/error_codes.h"

namespace charkit::gpu {

namespace {
core::Error not_built() {
  return core::make_error(codes::GPU_UNAVAILABLE,
                          "this charkit was built without the Vulkan backend (volk and glslc were "
                          "not found at configure time)");
}
}  // namespace

bool built_with_vulkan() {
  return false;
}
core::Result<std::vector<DeviceInfo>> list_devices() {
  return not_built();
}

struct Context::Impl {
  DeviceInfo info;
};
Context::Context() : impl_(std::make_unique<Impl>()) {}
Context::~Context() = default;
core::Result<std::unique_ptr<Context>> Context::create(const ContextOptions&) {
  return not_built();
}
const DeviceInfo& Context::device() const {
  return impl_->info;
}
std::uint64_t Context::max_buffer_bytes() const {
  return 0;
}
std::vector<std::string> Context::validation_messages() const {
  return {};
}
core::Result<BufferId> Context::create_buffer(std::uint64_t) {
  return not_built();
}
std::span<std::uint8_t> Context::map(BufferId) {
  return {};
}
void Context::free_buffer(BufferId) {}
core::Result<PipelineId> Context::create_pipeline(std::span<const std::uint32_t>, std::uint32_t,
                                                  std::uint32_t, std::span<const Sampling>) {
  return not_built();
}
core::Status Context::run(std::span<const Dispatch>) {
  return not_built();
}
core::Result<ImageId> Context::create_image(std::uint32_t, std::uint32_t, ImageFormat) {
  return not_built();
}
void Context::free_image(ImageId) {}
core::Status Context::write_image(ImageId, std::span<const std::uint8_t>) {
  return not_built();
}
core::Result<std::vector<std::uint8_t>> Context::read_image(ImageId, ImageAspect) {
  return not_built();
}
core::Result<PipelineId> Context::create_graphics_pipeline(const GraphicsPipelineDesc&) {
  return not_built();
}
core::Status Context::render(std::span<const RenderPass>) {
  return not_built();
}

}  // namespace charkit::gpu
