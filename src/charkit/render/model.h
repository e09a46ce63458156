// A glTF / GLB / VRM model prepared for the character passes
// (docs/render/render.md): its triangle primitives in world space at the
// rest pose (skinned ones through their joints' rest matrices), each sorted
// into a part — face, eye, transparent or body — by a mapping file, the VRM
// material data or the material's name, with its base colour factor and
// decoded base colour texture.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "charkit/core/bytes.h"
#include "charkit/core/math.h"
#include "charkit/core/result.h"
#include "charkit/scene/gltf_document.h"
#include "charkit/scene/image.h"

namespace charkit::render {

enum class PartKind : std::uint8_t { kBody, kFace, kEye, kTransparent };
const char* part_kind_name(PartKind kind);

/// The vertex the passes draw: 44 bytes.
struct RenderVertex {
  float position[3];
  float normal[3];
  float uv[2];
  float previous[3];  ///< the position one frame earlier (motion vectors); = position at rest
};
static_assert(sizeof(RenderVertex) == 44);

/// MToon's lighting of a primitive (docs/render/shading.md): the lit colour
/// is the base colour, the shade colour takes over where
/// shading = linearstep(shade_from, shade_to, N·L) (times the shadow) falls
/// to 0. VRMC_materials_mtoon 1.0 gives shade_from = −1 + toony − shift and
/// shade_to = 1 − toony − shift; VRM 0.x MToon shade_from = _ShadeShift and
/// shade_to = lerp(1, _ShadeShift, _ShadeToony). Emission and the rim light
/// are added on top.
struct MToonShading {
  core::Vec3f shade_colour{1, 1, 1};           ///< linear RGB
  std::optional<std::uint32_t> shade_texture;  ///< the shade multiply texture (RenderModel::images)
  float shade_from = -1.0F;
  float shade_to = 1.0F;
  core::Vec3f emissive{0, 0, 0};                  ///< linear RGB
  std::optional<std::uint32_t> emissive_texture;  ///< multiplies `emissive` (sRGB)
  /// Rim light: rim_colour × clamp(1 − N·V + rim_lift, 0, 1)^rim_fresnel_power
  /// × the rim texture, × mix(1, the light received, rim_lighting_mix).
  core::Vec3f rim_colour{0, 0, 0};  ///< linear RGB
  float rim_fresnel_power = 5.0F;
  float rim_lift = 0.0F;
  float rim_lighting_mix = 1.0F;
  std::optional<std::uint32_t> rim_texture;  ///< rimMultiplyTexture / _RimTexture (sRGB)
  /// Matcap: matcap_colour × this texture (sRGB) at the view-space normal,
  /// added to the rim light (matcapTexture / VRM 0.x _SphereAdd).
  std::optional<std::uint32_t> matcap_texture;
  core::Vec3f matcap_colour{1, 1, 1};  ///< linear RGB
  /// shadingShiftTexture: its red channel × shift_scale is added to N·L.
  std::optional<std::uint32_t> shift_texture;
  float shift_scale = 1.0F;
  /// The inverted-hull outline (docs/render/shading.md, "Outline"): each
  /// vertex pushed along its normal by outline_width (world units, or in
  /// screen mode that fraction of half the image height) × the green channel
  /// of outline_width_texture at the vertex, front faces culled, coloured
  /// outline_colour × mix(1, the surface's MToon colour, outline_lighting_mix).
  /// VRM 0.x: _OutlineWidthMode, _OutlineWidth / 100, _OutlineColor (sRGB),
  /// _OutlineLightingMix where _OutlineColorMode is 1 (else 0).
  enum class OutlineMode : std::uint8_t { kNone, kWorld, kScreen };
  OutlineMode outline_mode = OutlineMode::kNone;
  float outline_width = 0.0F;
  core::Vec3f outline_colour{0, 0, 0};  ///< linear RGB
  float outline_lighting_mix = 1.0F;
  std::optional<std::uint32_t> outline_width_texture;  ///< green channel (linear)
  /// Drawn only with a mode and a width above 0 (as three-vrm decides).
  bool has_outline() const { return outline_mode != OutlineMode::kNone && outline_width > 0.0F; }
  /// UV animation, per second of the frame's time: the texture coordinates
  /// turned by uv_rotation × t radians about (0.5, 0.5), then scrolled by
  /// (uv_scroll_x, uv_scroll_y) × t, both × the blue channel of
  /// uv_mask_texture. VRM 0.x: _UvAnimScrollX, −_UvAnimScrollY (Unity's v
  /// points up), _UvAnimRotation, _UvAnimMaskTexture.
  float uv_scroll_x = 0.0F;
  float uv_scroll_y = 0.0F;
  float uv_rotation = 0.0F;
  std::optional<std::uint32_t> uv_mask_texture;
  bool uv_animated() const {
    return uv_scroll_x != 0.0F || uv_scroll_y != 0.0F || uv_rotation != 0.0F;
  }
  std::string source;  ///< "VRMC_materials_mtoon" or "VRM 0.x MToon"
};

struct RenderPrimitive {
  std::string pointer;  ///< "/meshes/0/primitives/1"
  std::string mesh_name;
  std::string material_name;
  PartKind kind = PartKind::kBody;
  std::string kind_reason;  ///< why: "parts file", "VRM MToon", "material name", "alphaMode BLEND",
                            ///< "default"
  std::vector<RenderVertex> vertices;  ///< world space, rest pose
  std::vector<std::uint32_t> indices;  ///< triangle list
  core::Vec4f base_colour{1, 1, 1, 1};
  std::optional<std::uint32_t> base_texture;  ///< into RenderModel::images
  bool alpha_mask = false;
  float alpha_cutoff = 0.5F;
  /// MToon lighting; unset: the glTF material's own model
  /// (docs/render/shading.md, "glTF materials").
  std::optional<MToonShading> mtoon;
  /// KHR_materials_unlit (or a VRM 0.x `VRM/Unlit*` shader): the base
  /// colour is the final colour, no light.
  bool unlit = false;
  /// glTF metallic-roughness factors (glTF 2.0's defaults where a material
  /// gives none), for a primitive neither MToon nor unlit.
  float metallic = 1.0F;
  float roughness = 1.0F;
  /// metallicRoughnessTexture (linear: green × roughness, blue × metallic).
  std::optional<std::uint32_t> metallic_roughness_texture;  /// false: back faces are not drawn
                                                            /// (glTF `doubleSided: false`, the
  /// default; VRM 0.x MToon's `_CullMode` 2). The passes keep their state
  /// (no culling); the fragment program drops the back faces.
  bool double_sided = true;
};

struct RenderModel {
  std::vector<RenderPrimitive> primitives;
  std::vector<scene::RgbaImage> images;    ///< decoded glTF images (empty where unused)
  core::Vec3f min{0, 0, 0}, max{0, 0, 0};  ///< world bounds of every vertex
  /// The direction the model faces: +Z for glTF, −Z for VRM 0.x (Unity's
  /// export); the default camera looks at that side.
  float facing_z = 1.0F;
  /// The VRM expressions the model defines, in file order (empty for glTF).
  std::vector<std::string> expressions;
  std::vector<std::string> warnings;
};

/// Part names (face, eye, transparent, body) of material or mesh names.
struct PartsMapping {
  std::map<std::string, PartKind> by_name;
};
/// {"face": ["FaceMat", …], "eye": […], "transparent": […], "body": […]}.
/// Errors: RENDER_PARTS (with the pointer), JSON_*.
core::Result<PartsMapping> parse_parts(core::Bytes json);

struct ModelLoadOptions {
  std::optional<PartsMapping> parts;
  /// Base colour textures larger than this are refused (SCENE_IMAGE_DECODE).
  std::uint32_t max_texture_side = 8192;
  /// Cap on the vertices of all primitives together (RENDER_MODEL past it).
  std::uint64_t max_vertices = std::uint64_t{1} << 24;
  /// Local matrices that replace those of these nodes (a pose: joints
  /// rotated by a motion); the rest of the hierarchy as the file says.
  std::map<std::size_t, core::Mat4f> node_locals;
  /// VRM expression weights (0–1) by name. Morph targets an expression
  /// drives take the expressions' weights (0 when none is set: the VRM
  /// rest state); the others keep the file's default weights.
  std::map<std::string, double> expressions;
};

/// `now`'s vertices with `before`'s positions as their previous positions:
/// the same model loaded at two poses (RENDER_MODEL when the primitives or
/// their vertex counts differ).
core::Status set_previous_positions(RenderModel& now, const RenderModel& before);

/// Morph targets are applied (glTF 2.0 §3.7.2.2) at the node's weights, else
/// the mesh's; targets bound to VRM expressions at the expressions' weights,
/// with VRM's isBinary and blink / look-at / mouth override rules.
/// Errors: RENDER_MODEL (nothing drawable, a bad primitive, at its pointer),
/// RENDER_EXPRESSION (an expression the model lacks, a weight outside 0–1),
/// the glTF reader's (GLTF_*), SCENE_IMAGE_DECODE.
core::Result<RenderModel> load_render_model(scene::GltfDocument& doc,
                                            const ModelLoadOptions& options = {});

}  // namespace charkit::render
