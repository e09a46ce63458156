// The GLSL shading functions (shaders/shading.glsl) run in a compute harness
// on the GPU backend, one function over N inputs, so the tests can hold them
// to the C++ references of shading.h (docs/render/shading.md).
#pragma once

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

}  // namespace charkit::render
