#include "charkit/render/shading_gpu.h"

#include <algorithm>
#include <cstring>

#include "shading_harness.spv.h"
#include "texture_harness.spv.h"

namespace charkit::render {

namespace {

/// One harness dispatch: inputs a and b (b padded or cut to a's count) as
/// vec4 buffers, an output buffer, `push`, `textures`; the outputs back.
core::Result<std::vector<Vec4>> run_harness(gpu::Context& context, gpu::PipelineId pipeline,
                                            gpu::Scratch& scratch, std::span<const Vec4> a,
                                            std::span<const Vec4> b, std::vector<std::uint8_t> push,
                                            std::vector<gpu::ImageId> textures) {
  const std::size_t n = a.size();
  const std::size_t size = std::max<std::size_t>(n * 16, 16);
  auto ba = scratch.buffer(a.data(), a.size_bytes(), size);
  if (!ba) return std::move(ba).error();
  auto bb = scratch.buffer(b.data(), std::min(b.size(), n) * 16, size);
  if (!bb) return std::move(bb).error();
  auto bo = scratch.buffer(nullptr, 0, size);
  if (!bo) return std::move(bo).error();
  gpu::Dispatch d;
  d.pipeline = pipeline;
  d.buffers = {*ba, *bb, *bo};
  d.textures = std::move(textures);
  d.push = std::move(push);
  d.groups = static_cast<std::uint32_t>((n + 63) / 64);
  if (auto st = context.run(std::span<const gpu::Dispatch>(&d, 1)); !st)
    return std::move(st).error();
  std::vector<Vec4> out(n);
  if (n > 0) std::memcpy(out.data(), context.map(*bo).data(), n * 16);
  return out;
}

}  // namespace

core::Result<std::vector<Vec4>> run_shading_function(gpu::Context& context,
                                                     ShadingFunction function,
                                                     std::span<const Vec4> a,
                                                     std::span<const Vec4> b, Vec2 params) {
  auto pipeline = context.create_pipeline(kShading_harnessSpirv, 3, 16);
  if (!pipeline) return std::move(pipeline).error();
  std::vector<std::uint8_t> push(16);
  const auto f = static_cast<std::uint32_t>(function);
  const auto count = static_cast<std::uint32_t>(a.size());
  std::memcpy(push.data(), &f, 4);
  std::memcpy(push.data() + 4, &count, 4);
  std::memcpy(push.data() + 8, params.data(), 8);
  gpu::Scratch scratch(context);
  return run_harness(context, *pipeline, scratch, a, b, std::move(push), {});
}

core::Result<std::vector<Vec4>> run_texture_function(gpu::Context& context,
                                                     TextureFunction function,
                                                     std::span<const Vec4> a,
                                                     std::span<const Vec4> b,
                                                     const TextureFunctionParams& params,
                                                     std::optional<gpu::ImageId> image) {
  const gpu::Sampling nearest[] = {gpu::Sampling::kNearest};
  auto pipeline = context.create_pipeline(kTexture_harnessSpirv, 3, 100, nearest);
  if (!pipeline) return std::move(pipeline).error();
  gpu::Scratch scratch(context);
  if (!image) {  // the functions without a texture still bind one
    auto img = scratch.image(1, 1, gpu::ImageFormat::kRgba8Unorm);
    if (!img) return std::move(img).error();
    const std::uint8_t texel[4] = {0, 0, 0, 0};
    if (auto st = context.write_image(*img, texel); !st) return std::move(st).error();
    image = *img;
  }
  std::vector<std::uint8_t> push(100);
  if (function == TextureFunction::kCascadeLevel)
    std::memcpy(push.data(), params.spheres.data(), 64);
  else
    std::memcpy(push.data(), params.pcf.light_view_projection.data(), 64);
  std::memcpy(push.data() + 64, params.pcf.region.data(), 16);
  std::memcpy(push.data() + 80, &params.pcf.normal_offset, 4);
  std::memcpy(push.data() + 84, &params.pcf.rotation, 4);
  const auto f = static_cast<std::uint32_t>(function);
  const auto count = static_cast<std::uint32_t>(a.size());
  const std::uint32_t flags =
      (params.pcf.greater_equal ? 1U : 0U) | (std::min(params.slice_axis, 2U) << 8);
  std::memcpy(push.data() + 88, &f, 4);
  std::memcpy(push.data() + 92, &count, 4);
  std::memcpy(push.data() + 96, &flags, 4);
  return run_harness(context, *pipeline, scratch, a, b, std::move(push), {*image});
}

}  // namespace charkit::render
