#include "charkit/render/shading_gpu.h"

#include <algorithm>
#include <cstring>

#include "charkit/gpu/error_codes.h"

#if CHARKIT_WITH_VULKAN
#include "shading_harness.spv.h"
#include "texture_harness.spv.h"
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

core::Result<std::vector<Vec4>> run_texture_function(gpu::Context& context,
                                                     TextureFunction function,
                                                     std::span<const Vec4> a,
                                                     std::span<const Vec4> b,
                                                     const TextureFunctionParams& params,
                                                     std::optional<gpu::ImageId> image) {
#if !CHARKIT_WITH_VULKAN
  (void)context, (void)function, (void)a, (void)b, (void)params, (void)image;
  return core::make_error(gpu::codes::GPU_UNAVAILABLE.str(),
                          "this charkit was built without the Vulkan backend");
#else
  const std::size_t n = a.size();
  const gpu::Sampling nearest[] = {gpu::Sampling::kNearest};
  auto pipeline = context.create_pipeline(kTexture_harnessSpirv, 3, 100, nearest);
  if (!pipeline) return std::move(pipeline).error();
  std::vector<gpu::BufferId> owned;
  std::optional<gpu::ImageId> dummy;
  auto release = [&] {
    for (gpu::BufferId id : owned) context.free_buffer(id);
    if (dummy) context.free_image(*dummy);
  };
  auto make = [&](const void* data, std::size_t bytes) -> core::Result<gpu::BufferId> {
    auto buf = context.create_buffer(std::max<std::size_t>(n * 16, 16));
    if (!buf) return std::move(buf).error();
    owned.push_back(*buf);
    std::span<std::uint8_t> m = context.map(*buf);
    std::fill(m.begin(), m.end(), std::uint8_t{0});
    if (bytes > 0) std::memcpy(m.data(), data, std::min(bytes, m.size()));
    return *buf;
  };
  if (!image) {  // the functions without a texture still bind one
    auto img = context.create_image(1, 1, gpu::ImageFormat::kRgba8Unorm);
    if (!img) return std::move(img).error();
    dummy = *img;
    const std::uint8_t texel[4] = {0, 0, 0, 0};
    if (auto st = context.write_image(*dummy, texel); !st) {
      release();
      return std::move(st).error();
    }
  }
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
  d.textures = {image ? *image : *dummy};
  d.push.resize(100);
  if (function == TextureFunction::kCascadeLevel)
    std::memcpy(d.push.data(), params.spheres.data(), 64);
  else
    std::memcpy(d.push.data(), params.pcf.light_view_projection.data(), 64);
  std::memcpy(d.push.data() + 64, params.pcf.region.data(), 16);
  std::memcpy(d.push.data() + 80, &params.pcf.normal_offset, 4);
  std::memcpy(d.push.data() + 84, &params.pcf.rotation, 4);
  const auto f = static_cast<std::uint32_t>(function);
  const auto count = static_cast<std::uint32_t>(n);
  const std::uint32_t flags =
      (params.pcf.greater_equal ? 1U : 0U) | (std::min(params.slice_axis, 2U) << 8);
  std::memcpy(d.push.data() + 88, &f, 4);
  std::memcpy(d.push.data() + 92, &count, 4);
  std::memcpy(d.push.data() + 96, &flags, 4);
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
