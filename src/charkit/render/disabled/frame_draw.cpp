// Stand-in for ../frame_draw.cpp in a build without the Vulkan backend
// (docs/building.md, "Optional dependencies"): GPU_UNAVAILABLE.
#include "charkit/render/frame.h"

namespace charkit::render {

core::Result<Frame> render_frame(gpu::Context& /*context*/, const RenderModel& /*model*/,
                                 const FrameOptions& /*options*/) {
  return gpu::unavailable();
}

}  // namespace charkit::render
