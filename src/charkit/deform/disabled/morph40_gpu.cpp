// Stand-in for ../morph40_gpu.cpp in a build without the Vulkan backend
// (docs/building.md, "Optional dependencies"): GPU_UNAVAILABLE.
#include "charkit/deform/morph40.h"

namespace charkit::deform {

core::Status Morph40Job::run_gpu(gpu::Context& /*context*/) const {
  return gpu::unavailable();
}

}  // namespace charkit::deform
