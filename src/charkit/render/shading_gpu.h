// The GLSL shading functions (shaders/shading.glsl) run in a compute harness
// on the GPU backend, one function over N inputs, so the tests can hold them
// to the C++ references of shading.h (docs/render/shading.md).
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "charkit/core/result.h"
#include "charkit/gpu/context.h"
#include "charkit/render/shading.h"

namespace charkit::render {

enum class ShadingFunction : std::uint32_t {
  kLutShape = 0,      ///< a.xyz colour; params.x exposure → xyz
  kEncodeMotion = 1,  ///< a now, b before; params (scale, zero) → xy
  kDecodeMotion = 2,  ///< a.xy; params (scale, zero) → xy
  kShadowColour = 3,  ///< a.xyz; params (value, saturation scale) → xyz
  kVisibility = 4,    ///< a = (pass, occlusion, strength, enabled ≠ 0) → x
};

/// One output vec4 per input. Errors: the GPU backend's (GPU_UNAVAILABLE,
/// GPU_LIMIT, GPU_VULKAN).
core::Result<std::vector<Vec4>> run_shading_function(gpu::Context& context,
                                                     ShadingFunction function,
                                                     std::span<const Vec4> a,
                                                     std::span<const Vec4> b, Vec2 params);

/// The shading functions that read a texture (shaders/texture_harness.comp).
enum class TextureFunction : std::uint32_t {
  kPcf9 = 0,             ///< a.xyz position, b.xyz normal; image: a D32F map → x
  kLutSample = 1,        ///< a.xyz shaped colour; image: the 1024 × 32 RGBA16F strip → xyz
  kCascadeLevel = 2,     ///< a.xyz position → x (0..4)
  kCascadeRotation = 3,  ///< a.xy pixel → x (radians)
};
struct TextureFunctionParams {
  PcfParams pcf;                 ///< kPcf9
  std::uint32_t slice_axis = 2;  ///< kLutSample
  CascadeSpheres spheres{};      ///< kCascadeLevel
};

/// One output vec4 per input; `image` is what kPcf9 and kLutSample read (a
/// written image of the context), unused by the others. Errors: the GPU
/// backend's.
core::Result<std::vector<Vec4>> run_texture_function(gpu::Context& context,
                                                     TextureFunction function,
                                                     std::span<const Vec4> a,
                                                     std::span<const Vec4> b,
                                                     const TextureFunctionParams& params,
                                                     std::optional<gpu::ImageId> image);

}  // namespace charkit::render
