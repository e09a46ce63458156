// Rendering a model through the character passes (docs/render/render.md):
// the light's shadow geometry, body, face main shading, the shadow
// classification, the eye and the transparent parts, each with its table
// state (render/passes.h), on the GPU backend (lavapipe without a GPU). The
// attachments come back to the host for the tone-mapped image, the
// attachment dumps and the frame's statistics.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "charkit/core/math.h"
#include "charkit/core/result.h"
#include "charkit/gpu/context.h"
#include "charkit/render/model.h"
#include "charkit/render/shading.h"
#include "charkit/scene/image.h"

namespace charkit::render {

struct Camera {
  core::Vec3f eye{0, 0, 3};
  core::Vec3f target{0, 0, 0};
  core::Vec3f up{0, 1, 0};
  float fov_y_degrees = 30.0F;
  float near_plane = 0.01F;  ///< reversed-Z with an infinite far plane
};

/// The default camera: the model's bounding box centred, seen from the side
/// it faces (RenderModel::facing_z), turned by `yaw_degrees` about the
/// vertical axis through the centre, far enough for the whole box.
Camera framing_camera(const RenderModel& model, float aspect, float yaw_degrees = 0.0F,
                      float fov_y_degrees = 30.0F);

/// The camera's view-projection: reversed-Z perspective with an infinite far
/// plane, clip y up (column-major; what the shaders and motion vectors use).
core::Mat4f camera_view_projection(const Camera& camera, float aspect);

/// The light's view-projection of the shadow pass: orthographic along
/// −direction over the model's bounding sphere, reversed-Z (1 nearest the
/// light), clip y up.
core::Mat4f light_view_projection(const RenderModel& model, const core::Vec3f& direction);

/// The largest image a frame renders, in pixels (4096 × 4096): a frame keeps
/// about 60 bytes per pixel of attachments and read-back (colour, depth and
/// stencil, the material maps, the resolved image), so this is about 1 GiB.
/// Larger images are refused rather than left to exhaust memory.
inline constexpr std::uint64_t kMaxFramePixels = std::uint64_t{4096} * 4096;

struct FrameOptions {
  std::uint32_t width = 1024;
  std::uint32_t height = 1024;
  Camera camera;
  /// The camera one frame earlier (motion vectors); unset: motion off (the
  /// second material map's RG hold the constant zero).
  std::optional<Camera> previous_camera;
  /// Motion vectors on with the vertices' previous positions
  /// (RenderVertex::previous, a model posed at two frames) and
  /// previous_camera or, unset, the same camera.
  bool motion = false;
  core::Vec3f light_direction{0.4F, 0.7F, 0.6F};  ///< towards the light, world space
  core::Vec3f light_colour{1.0F, 1.0F, 1.0F};
  core::Vec3f ambient{0.25F, 0.25F, 0.28F};
  float exposure = 1.0F;
  ShadowColourParams shadow_colour;
  float shadow_strength = 1.0F;
  bool shadows = true;
  /// MToon's inverted-hull outlines of the body and face parts (materials
  /// with an outline width mode and a width above 0), as three-vrm draws
  /// them by default.
  bool outlines = true;
  /// The frame's time in seconds: MToon's UV animation (scroll and rotation
  /// speeds are per second). `charkit render` gives frame N / --fps.
  double time = 0.0;
  std::uint32_t shadow_map_size = 2048;
  /// The character LUT (1024 × 32 strip, slice axis blue) for the eye's
  /// branch; empty: the branch is off.
  std::vector<Vec4> lut;
};

/// What each pass did, counted from the read-back attachments.
struct FrameStats {
  std::uint64_t pixels = 0;               ///< width × height
  std::uint64_t character_pixels = 0;     ///< stencil bit 7 (body and face)
  std::uint64_t face_pixels = 0;          ///< stencil 0x84 after the classification
  std::uint64_t eye_pixels = 0;           ///< HDR colour changed by the eye pass
  std::uint64_t transparent_pixels = 0;   ///< HDR colour changed by the transparent pass
  std::uint64_t shadow_map_pixels = 0;    ///< light depth written
  std::uint32_t draws[4] = {0, 0, 0, 0};  ///< body, face, eye, transparent primitives
  std::uint32_t outline_draws = 0;        ///< primitives drawn again by the outline pass
};

/// The attachments, read back. Colour maps are RGBA8 (hdr: RGBA16F halves),
/// rows top to bottom.
struct Frame {
  std::uint32_t width = 0, height = 0, shadow_size = 0;
  std::vector<std::uint16_t> hdr;  ///< half floats, 4 per pixel
  std::vector<std::uint8_t> material1, material2, normal;
  std::vector<float> depth;
  std::vector<std::uint8_t> stencil;
  std::vector<float> shadow;
  FrameStats stats;
};

/// Errors: the GPU backend's (GPU_UNAVAILABLE without a graphics device,
/// GPU_LIMIT for a size past the device's), RENDER_OPTION.
core::Result<Frame> render_frame(gpu::Context& context, const RenderModel& model,
                                 const FrameOptions& options);

/// The HDR colour tone-mapped for display: exposure, the ACES filmic curve
/// (Narkowicz's fit), sRGB encoding; alpha = HDR alpha (0 where nothing was
/// drawn).
scene::RgbaImage tone_map(const Frame& frame, float exposure = 1.0F);

}  // namespace charkit::render
