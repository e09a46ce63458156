// Stand-in for ../context_vulkan.cpp in a build without the Vulkan backend
// (volk or glslc missing at configure time, or CHARKIT_WITH_VULKAN=OFF;
// docs/building.md, "Optional dependencies"): every entry point reports
// GPU_UNAVAILABLE.
#include "charkit/gpu/context.h"
#include "charkit/gpu/error_codes.h"

namespace charkit::gpu {

core::Error unavailable() {
  return core::make_error(codes::GPU_UNAVAILABLE,
                          "this charkit was built without the Vulkan backend (volk and glslc were "
                          "not found at configure time, or CHARKIT_WITH_VULKAN=OFF)");
}

bool built_with_vulkan() {
  return false;
}
core::Result<std::vector<DeviceInfo>> list_devices() {
  return unavailable();
}

struct Context::Impl {
  DeviceInfo info;
};
Context::Context() : impl_(std::make_unique<Impl>()) {}
Context::~Context() = default;
core::Result<std::unique_ptr<Context>> Context::create(const ContextOptions&) {
  return unavailable();
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
  return unavailable();
}
std::span<std::uint8_t> Context::map(BufferId) {
  return {};
}
void Context::free_buffer(BufferId) {}
core::Result<PipelineId> Context::create_pipeline(std::span<const std::uint32_t>, std::uint32_t,
                                                  std::uint32_t, std::span<const Sampling>) {
  return unavailable();
}
core::Status Context::run(std::span<const Dispatch>) {
  return unavailable();
}
}  // namespace charkit::gpu
