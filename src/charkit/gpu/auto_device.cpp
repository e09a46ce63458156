// `--device auto`'s rule (context.h): built with and without Vulkan.
#include <string>

#include "charkit/gpu/context.h"

namespace charkit::gpu {

std::string auto_device_refusal(std::uint64_t vertices, const DeviceInfo* device) {
  if (vertices < kAutoGpuMinVertices)
    return std::to_string(vertices) + " vertices, under the " +
           std::to_string(kAutoGpuMinVertices) + " the GPU is worth";
  if (device != nullptr && device->type == "cpu")
    return device->name + " is a software device: the CPU kernels are faster";
  return {};
}

}  // namespace charkit::gpu
