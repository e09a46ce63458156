#include "charkit/render/shading_gpu.h"

#include <algorithm>
#include <cstring>

#include "charkit/gpu/error_codes.h"

#if CHARKIT_WITH_VULKAN
#include "shading_harness.spv.h"
#endif

namespace charkit::render {

core::Result<std::vector<Vec4>> run_shading_function(gpu::Context& context,
                                                     ShadingFunction function,
                                                     std::span<const Vec4> a,
                                                     std::span<const Vec4> b, Vec2 params) {
#if !CHARKIT_WITH_VULKAN
  (void)context, (void)function, (void)a, (void)b, (void)params;
  return core::make_error(gpu::codes::GPU_UNAVAILABLE.str(),
                          "this charkit was built without the Vulkan backend");
#else
  const std::size_t n = a.size();
  auto pipeline = context.create_pipeline(kShading_harnessSpirv, 3, 16);
  if (!pipeline) return std::move(pipeline).error();
  std::vector<gpu::BufferId> owned;
  auto make = [&](const void* data, std::size_t bytes) -> core::Result<gpu::BufferId> {
    auto buf = context.create_buffer(std::max<std::size_t>(n * 16, 16));
    if (!buf) return std::move(buf).error();
    owned.push_back(*buf);
    std::span<std::uint8_t> m = context.map(*buf);
    std::fill(m.begin(), m.end(), std::uint8_t{0});
    if (bytes > 0) std::memcpy(m.data(), data, std::min(bytes, m.size()));
    return *buf;
  };
  auto release = [&] {
    for (gpu::BufferId id : owned) context.free_buffer(id);
  };
  auto ba = make(a.data(), a.size_bytes());
  auto bb = ba ? make(b.data(), std::min(b.size(), n) * 16) : ba;
  auto bo = bb ? make(nullptr, 0) : bb;
  if (!bo) {
    release();
    return std::move(bo).error();
  }
  gpu::Dispatch d;
  d.pipeline = *pipeline;
  d.buffers = {*ba, *bb, *bo};
  d.push.resize(16);
  const auto f = static_cast<std::uint32_t>(function);
  const auto count = static_cast<std::uint32_t>(n);
  std::memcpy(d.push.data(), &f, 4);
  std::memcpy(d.push.data() + 4, &count, 4);
  std::memcpy(d.push.data() + 8, params.data(), 8);
  d.groups = static_cast<std::uint32_t>((n + 63) / 64);
  if (auto st = context.run(std::span<const gpu::Dispatch>(&d, 1)); !st) {
    release();
    return std::move(st).error();
  }
  std::vector<Vec4> out(n);
  if (n > 0) std::memcpy(out.data(), context.map(*bo).data(), n * 16);
  release();
  return out;
#endif
}

}  // namespace charkit::render
