// GltfAsset: a glTF 2.0 document read once into typed elements (docs/scene.md
// "The glTF layer"). GltfDocument::load builds it right after parsing the
// JSON, so every consumer walks nodes, meshes, primitives, accessors, skins,
// animations, materials, textures and images as C++ values, with every index
// checked against the array it points into, and never indexes the JSON by
// key. Each element keeps its JSON pointer ("/meshes/0/primitives/1") for
// the errors its consumers report. Byte ranges are checked when data is read
// (GltfDocument::read_accessor_*), because buffers load lazily.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "charkit/core/json_fwd.h"
#include "charkit/core/result.h"

namespace charkit::scene {

/// An element's `extras` object as written (glTF 2.0 §3.12: application data
/// the specification does not define), or null when it has none or it is
/// not an object. Include charkit/core/json.h to read it.
using GltfExtras = std::shared_ptr<const nlohmann::ordered_json>;

/// glTF componentType values (glTF 2.0 §3.6.2.2).
enum class GltfComponent : std::uint32_t {
  kByte = 5120,
  kUnsignedByte = 5121,
  kShort = 5122,
  kUnsignedShort = 5123,
  kUnsignedInt = 5125,
  kFloat = 5126,
};

/// Bytes per component: 1, 2 or 4.
std::size_t gltf_component_size(GltfComponent c);

/// An accessor's declaration (checked for consistency, not yet read).
struct GltfAccessorInfo {
  std::string type;            ///< "SCALAR", "VEC2" … "MAT4"
  std::size_t components = 0;  ///< 1, 2, 3, 4, 4 (MAT2), 9 (MAT3), 16 (MAT4)
  GltfComponent component_type = GltfComponent::kFloat;
  bool normalized = false;
  std::uint64_t count = 0;
  bool sparse = false;
  std::optional<std::size_t> buffer_view;
  std::uint64_t byte_offset = 0;
  std::vector<double> min;  ///< as written (empty when absent)
  std::vector<double> max;
  std::string name;
  std::string pointer;  ///< "/accessors/<i>"
};
using GltfAccessor = GltfAccessorInfo;

struct GltfBufferView {
  std::size_t buffer = 0;
  std::uint64_t byte_offset = 0;
  std::uint64_t byte_length = 0;
  std::uint64_t byte_stride = 0;  ///< 0 = not given (tightly packed)
  std::optional<std::uint32_t> target;
  std::string pointer;
};

struct GltfBuffer {
  std::uint64_t byte_length = 0;
  std::optional<std::string> uri;  ///< absent: the GLB's BIN chunk
  std::string pointer;
};

/// One vertex or morph-target attribute: its semantic and its accessor.
struct GltfAttribute {
  std::string semantic;  ///< "POSITION", "NORMAL", "TEXCOORD_0", "JOINTS_0" …
  std::size_t accessor = 0;
  friend bool operator==(const GltfAttribute&, const GltfAttribute&) = default;
};

/// Attributes in file order.
struct GltfAttributes {
  std::vector<GltfAttribute> items;
  /// The accessor of `semantic`, if the attribute is there.
  std::optional<std::size_t> find(std::string_view semantic) const;
  bool empty() const { return items.empty(); }
  friend bool operator==(const GltfAttributes&, const GltfAttributes&) = default;
};

struct GltfPrimitive {
  GltfAttributes attributes;
  std::optional<std::size_t> indices;
  std::optional<std::size_t> material;
  std::uint32_t mode = 4;                 ///< 4 = TRIANGLES (the default)
  std::vector<GltfAttributes> targets;    ///< morph targets
  std::vector<std::string> target_names;  ///< extras.targetNames here (VRM 0.x writes them here)
  std::string pointer;                    ///< "/meshes/<m>/primitives/<p>"
};

struct GltfMesh {
  std::string name;
  std::vector<GltfPrimitive> primitives;  ///< at least one
  std::vector<double> weights;            ///< default morph weights (empty when absent)
  std::vector<std::string> target_names;  ///< extras.targetNames (empty when absent)
  GltfExtras extras;
  std::string pointer;
  /// The number of morph targets (every primitive has the same, checked).
  std::size_t target_count() const {
    return primitives.empty() ? 0 : primitives.front().targets.size();
  }
  /// Target i's name: extras.targetNames of the mesh, else of its first
  /// primitive, else "target_<i>".
  std::string target_name(std::size_t i) const;
};

struct GltfNode {
  std::string name;
  std::vector<std::size_t> children;
  std::optional<std::size_t> mesh;
  std::optional<std::size_t> skin;
  std::optional<std::size_t> camera;
  /// Either a matrix (column-major) or TRS; the defaults are the identity.
  std::optional<std::array<double, 16>> matrix;
  std::array<double, 3> translation{0, 0, 0};
  std::array<double, 4> rotation{0, 0, 0, 1};  ///< x, y, z, w
  std::array<double, 3> scale{1, 1, 1};
  std::vector<double> weights;        ///< morph weights of its mesh (empty when absent)
  std::optional<std::size_t> parent;  ///< the node whose children list holds this one
  GltfExtras extras;
  std::string pointer;
};

struct GltfSkin {
  std::string name;
  std::vector<std::size_t> joints;  ///< at least one
  std::optional<std::size_t> inverse_bind_matrices;
  std::optional<std::size_t> skeleton;
  std::string pointer;
};

enum class GltfInterpolation { kLinear, kStep, kCubicSpline };
/// The animated property; kOther for paths an extension defines.
enum class GltfPath { kTranslation, kRotation, kScale, kWeights, kOther };

struct GltfAnimationSampler {
  std::size_t input = 0;   ///< keyframe times
  std::size_t output = 0;  ///< keyframe values
  GltfInterpolation interpolation = GltfInterpolation::kLinear;
  std::string pointer;
};

struct GltfChannel {
  std::size_t sampler = 0;          ///< into the animation's samplers
  std::optional<std::size_t> node;  ///< absent: an extension names the target
  GltfPath path = GltfPath::kOther;
  std::string path_name;  ///< as written ("translation" …)
  std::string pointer;
};

struct GltfAnimation {
  std::string name;
  std::vector<GltfChannel> channels;
  std::vector<GltfAnimationSampler> samplers;
  std::string pointer;
};

struct GltfScene {
  std::string name;
  std::vector<std::size_t> nodes;
  std::string pointer;
};

struct GltfImage {
  std::string name;
  std::optional<std::string> uri;
  std::optional<std::size_t> buffer_view;  ///< then mime_type is set
  std::string mime_type;
  GltfExtras extras;
  std::string pointer;
};

struct GltfTexture {
  std::string name;
  std::optional<std::size_t> source;  ///< an image
  std::optional<std::size_t> sampler;
  std::string pointer;
};

/// A material's reference to a texture (glTF 2.0 textureInfo).
struct GltfTextureRef {
  std::size_t texture = 0;
  std::uint32_t tex_coord = 0;
  double scale = 1.0;  ///< normalTexture.scale, occlusionTexture.strength
};

enum class GltfAlphaMode { kOpaque, kMask, kBlend };

enum class MToonOutlineWidthMode { kNone, kWorldCoordinates, kScreenCoordinates };

/// A material's `VRMC_materials_mtoon` extension (VRM 1.0 MToon), with the
/// schema's defaults for what is absent. Textures are glTF textureInfo
/// references (shadingShiftTexture's `scale` in GltfTextureRef::scale).
struct GltfMToon {
  std::string spec_version;
  bool transparent_with_z_write = false;
  std::int32_t render_queue_offset = 0;  ///< −9 … 9
  std::array<double, 3> shade_color{1, 1, 1};
  std::optional<GltfTextureRef> shade_multiply_texture;
  double shading_shift = 0.0;
  std::optional<GltfTextureRef> shading_shift_texture;
  double shading_toony = 0.9;
  double gi_equalization = 0.9;
  std::array<double, 3> matcap{0, 0, 0};
  std::optional<GltfTextureRef> matcap_texture;
  std::array<double, 3> rim_color{0, 0, 0};  ///< parametricRimColorFactor
  std::optional<GltfTextureRef> rim_multiply_texture;
  double rim_lighting_mix = 1.0;
  double rim_fresnel_power = 5.0;  ///< parametricRimFresnelPowerFactor
  double rim_lift = 0.0;           ///< parametricRimLiftFactor
  MToonOutlineWidthMode outline_width_mode = MToonOutlineWidthMode::kNone;
  double outline_width = 0.0;
  std::optional<GltfTextureRef> outline_width_multiply_texture;
  std::array<double, 3> outline_color{0, 0, 0};
  double outline_lighting_mix = 1.0;
  std::optional<GltfTextureRef> uv_animation_mask_texture;
  double uv_animation_scroll_x = 0.0;  ///< per second
  double uv_animation_scroll_y = 0.0;
  double uv_animation_rotation = 0.0;
};

struct GltfMaterial {
  std::string name;
  std::array<double, 4> base_color_factor{1, 1, 1, 1};
  std::optional<GltfTextureRef> base_color_texture;
  double metallic_factor = 1.0;
  double roughness_factor = 1.0;
  std::optional<GltfTextureRef> metallic_roughness_texture;
  std::optional<GltfTextureRef> normal_texture;
  std::optional<GltfTextureRef> occlusion_texture;
  std::optional<GltfTextureRef> emissive_texture;
  std::array<double, 3> emissive_factor{0, 0, 0};
  GltfAlphaMode alpha_mode = GltfAlphaMode::kOpaque;
  double alpha_cutoff = 0.5;
  bool double_sided = false;
  std::vector<std::string> extensions;  ///< names of the extensions it uses
  bool unlit = false;                   ///< KHR_materials_unlit: the base colour, unlit
  std::optional<GltfMToon> mtoon;       ///< VRMC_materials_mtoon (VRM 1.0)
  GltfExtras extras;
  std::string pointer;
};

/// A VRM humanoid bone: its VRM name ("hips", "leftUpperArm" …) and node.
struct VrmHumanBone {
  std::string bone;
  std::size_t node = 0;
};

/// A VRM 0.x `materialProperties` entry: how the VRM exporter meant the
/// glTF material of the same name to be drawn.
struct VrmMaterialProperties {
  std::string name;         ///< the glTF material's name
  std::string shader;       ///< "VRM/MToon", "VRM/UnlitTransparent" …
  std::string render_type;  ///< tagMap.RenderType: "Opaque", "Cutout", "Transparent" …
  std::optional<double> render_queue;
  /// The MToon shader's Unity properties as written (`_ShadeColor`,
  /// `_ShadeToony`, `_ShadeTexture` …); entries of another type are left out.
  std::map<std::string, double> float_properties;
  std::map<std::string, std::array<double, 4>> vector_properties;
  std::map<std::string, std::size_t> texture_properties;  ///< into the textures (checked)
  std::map<std::string, bool> keywords;                   ///< keywordMap
  /// Drawn in the transparent pass: RenderType "Transparent" or a render
  /// queue of 3000 or more (Unity's transparent queue).
  bool transparent() const {
    return render_type == "Transparent" || (render_queue && *render_queue >= 3000.0);
  }
};

/// How an active VRM 1.0 expression treats the blink, look-at or mouth
/// expressions: leaves them (none), zeroes them (block) or scales them by
/// 1 − its weight (blend).
enum class VrmOverride { kNone, kBlock, kBlend };

/// One morph target an expression drives, at `weight` (0–1) when the
/// expression is at 1.
struct VrmMorphBind {
  std::size_t mesh = 0;
  std::size_t target = 0;  ///< below the mesh's target count (checked)
  double weight = 1.0;
};

/// A VRM expression: a VRM 1.0 `expressions.preset` / `custom` entry, or a
/// VRM 0.x blend shape group. 0.x preset names are given their VRM 1.0
/// names (a → aa, i → ih, u → ou, e → ee, o → oh, joy → happy, sorrow →
/// sad, fun → relaxed, lookup → lookUp, …, blink_l → blinkLeft, blink_r →
/// blinkRight); a 0.x group of preset "unknown" keeps its own name.
struct VrmExpression {
  std::string name;
  bool preset = false;
  bool is_binary = false;                           ///< a weight above 0.5 counts as 1, else 0
  VrmOverride override_blink = VrmOverride::kNone;  ///< VRM 1.0 only
  VrmOverride override_look_at = VrmOverride::kNone;
  VrmOverride override_mouth = VrmOverride::kNone;
  std::vector<VrmMorphBind> binds;  ///< 0.x weights (0–100) scaled to 0–1
  std::string pointer;
};

/// The VRM extension (VRM 0.x `extensions.VRM`, VRM 1.0
/// `extensions.VRMC_vrm`; with both, 1.0 is read and `both` is set).
struct GltfVrm {
  std::string version;  ///< "0.x" or "1.0"
  bool both = false;
  std::string spec_version;               ///< specVersion as written
  std::string exporter_version;           ///< 0.x exporterVersion
  std::string title;                      ///< 0.x meta.title, 1.0 meta.name
  std::string author;                     ///< 0.x meta.author, 1.0 meta.authors joined by ", "
  std::string model_version;              ///< meta.version
  std::vector<VrmHumanBone> human_bones;  ///< in file order
  std::vector<VrmMaterialProperties> materials;  ///< 0.x materialProperties
  std::vector<VrmExpression> expressions;        ///< in file order (1.0: presets, then custom)
  std::string pointer;                           ///< "/extensions/VRM" or "/extensions/VRMC_vrm"
};

struct GltfAsset {
  std::string version;    ///< asset.version
  std::string generator;  ///< asset.generator ("" when absent)
  std::vector<GltfBuffer> buffers;
  std::vector<GltfBufferView> buffer_views;
  std::vector<GltfAccessor> accessors;
  std::vector<GltfMesh> meshes;
  std::vector<GltfNode> nodes;
  std::vector<GltfSkin> skins;
  std::vector<GltfAnimation> animations;
  std::vector<GltfScene> scenes;
  std::optional<std::size_t> scene;  ///< the default scene
  std::vector<GltfMaterial> materials;
  std::vector<GltfTexture> textures;
  std::vector<GltfImage> images;
  std::size_t samplers = 0;  ///< texture samplers (counted, not modelled)
  std::size_t cameras = 0;
  std::vector<std::string> extensions_used;
  std::vector<std::string> extensions_required;
  std::optional<GltfVrm> vrm;  ///< a VRM model's extension data

  /// The nodes that instance mesh m, in index order.
  std::vector<std::size_t> nodes_of_mesh(std::size_t m) const;
};

/// Reads the typed elements of a glTF JSON root. Errors (at the JSON
/// pointer of the member): GLTF_TYPE (a member of the wrong JSON type),
/// GLTF_VALUE (a required member missing, or a value the specification does
/// not allow: an empty primitives list, primitives with different morph
/// target counts, a node both with a matrix and TRS, an unknown
/// interpolation…), GLTF_INDEX (an index past its array), GLTF_ACCESSOR and
/// GLTF_BUFFER_VIEW (an accessor's or a bufferView's declaration),
/// VRM_TYPE (a VRM extension of the wrong shape).
core::Result<GltfAsset> read_gltf_asset(const nlohmann::ordered_json& root);

/// A glTF JSON text parsed strictly (core::parse_json_strict with `limits`),
/// its errors' byte offsets moved by `text_offset` (where the text starts in
/// its file: a GLB's JSON chunk); GLTF_NOT_OBJECT for a root that is not an
/// object. Then read_gltf_asset reads its elements.
core::Result<nlohmann::ordered_json> parse_gltf_json(std::string_view text,
                                                     std::uint64_t text_offset,
                                                     const core::JsonLimits& limits = {});

}  // namespace charkit::scene
