// Stand-in for ../subdivision_gpu.cpp in a build without the Vulkan backend
// (docs/building.md, "Optional dependencies"): GPU_UNAVAILABLE.
#include "charkit/deform/subdivision.h"

namespace charkit::deform {

core::Status SubdivisionJob::run_gpu(gpu::Context& /*context*/) const {
  return gpu::unavailable();
}

}  // namespace charkit::deform
