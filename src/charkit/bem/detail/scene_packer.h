// The creator packer's working state (bem::pack_scene, docs/bem/pack.md):
// one glTF scene packed into a template package. Its steps live in one file
// per concern:
//   pack.cpp           the order of the steps, pruning, payload bookkeeping,
//                      the spec file's fields;
//   pack_read_gltf.cpp glTF meshes matched to the template's, their
//                      vertices, joints and morph targets read;
//   pack_meshes.cpp    BEM vertex streams, draws, bone palettes and skins;
//   pack_textures.cpp  glTF images (PNG, JPEG, DDS) to template textures;
//   pack_sliders.cpp   shape keys to sliders (§10 frame payloads).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "charkit/bem/model.h"
#include "charkit/bem/pack.h"
#include "charkit/core/json.h"
#include "charkit/core/result.h"
#include "charkit/scene/gltf_document.h"

namespace charkit::bem::detail {

using core::Json;

/// The vertices of one glTF mesh, its primitives concatenated (primitives
/// that share one `attributes` object share their vertices, as `bem export`
/// writes them).
struct SceneMesh {
  std::uint32_t gltf_mesh = 0;
  std::optional<std::uint32_t> node;
  std::string node_name;
  std::size_t vertex_count = 0;
  std::vector<float> positions;         // 3 per vertex
  std::vector<float> normals;           // 3 per vertex, or empty
  std::vector<float> tangents;          // 4 per vertex, or empty
  std::vector<float> colors;            // 4 per vertex, or empty
  std::vector<std::vector<float>> uvs;  // TEXCOORD_n: 2 per vertex
  std::map<std::string, std::pair<std::uint32_t, std::vector<float>>> custom;  // _NAME
  std::vector<std::uint32_t> joints;  // 4 per vertex (index into joint_names), or empty
  std::vector<float> weights;         // 4 per vertex, or empty
  std::vector<std::string> joint_names;
  /// Morph targets: POSITION displacements (3 per vertex, zeros where a
  /// target has none), their names and the mesh's default weights.
  std::vector<std::vector<float>> targets;
  std::vector<std::string> target_names;
  std::vector<float> target_weights;
  struct Primitive {
    std::string material;
    std::vector<std::uint32_t> indices;  // into the concatenated vertices
    std::string pointer;                 // /meshes/i/primitives/p
  };
  std::vector<Primitive> primitives;
};

class ScenePacker {
 public:
  ScenePacker(const PackageContent& tmpl, const Model& model, scene::GltfDocument& doc,
              const PackOptions& options)
      : model_(model), doc_(doc), options_(options), template_manifest_(tmpl.manifest) {
    result_.content = tmpl;
    result_.content.manifest_text.clear();  // the manifest changes
  }

  core::Result<PackResult> run();

 private:
  void warn(core::ErrorCode code, std::string message, std::string pointer) {
    result_.warnings.push_back({std::move(code), std::move(message), std::move(pointer)});
  }

  const scene::GltfAsset& asset() const { return doc_.asset(); }

  /// The glTF images named after template textures (bem export names each
  /// image after its texture's original_name, or texture_N) replace them:
  /// kept when equal to the export's image of the texture, else encoded in
  /// the texture's format. Other images are not packed (warning).
  core::Status pack_textures();

  /// The bytes of an image stored in a buffer view (empty for a URI image).
  core::Result<std::vector<std::uint8_t>> image_bytes(const scene::GltfImage& im);

  /// Which channels carry data: R (grey formats), RG (two-channel normal
  /// maps: bem export rebuilds blue), else RGBA.
  static std::size_t data_channels(const Texture& tex, std::uint32_t format);

  /// Every name given a texture format is a texture of the template or a
  /// kind (edited_format): one that is neither would be ignored.
  core::Status check_texture_format_names() const;

  /// The format an edited texture is encoded in: --texture-format by name,
  /// else by kind (normal, color = sRGB, linear), else the template's.
  std::uint32_t edited_format(const Texture& tex) const;

  /// A DDS image is the texture's payload as it is (its format, size, mip
  /// chain and, from a DX10 header, colour space; BGRA swizzled to RGBA):
  /// what the creator's tool wrote reaches the game unchanged.
  core::Status pack_dds(std::uint32_t t, std::uint32_t i, const std::vector<std::uint8_t>& file,
                        const std::string& ptr);

  core::Status pack_texture(std::uint32_t t, std::uint32_t i, const std::vector<std::uint8_t>& png,
                            const std::string& ptr);

  /// Template mesh index -> (glTF mesh, node placing it).
  core::Result<std::map<std::uint32_t, std::pair<std::uint32_t, std::optional<std::uint32_t>>>>
  match_meshes();

  static bool has_transform(const scene::GltfNode& node);

  /// Reads the float values of an accessor with `components` per element
  /// and `count` elements.
  core::Result<std::vector<float>> read_floats(std::size_t accessor, std::size_t components,
                                               std::size_t count, const std::string& where);

  core::Result<SceneMesh> read_scene_mesh(std::uint32_t g, std::optional<std::uint32_t> node);

  /// Slider names from mesh.extras.targetNames (what Blender writes: the
  /// shape key names), default weights from mesh.weights.
  void read_target_names(SceneMesh& out, const scene::GltfMesh& mesh);

  core::Status append_vertices(SceneMesh& out, const scene::GltfAttributes& attrs,
                               const std::string& where);

  core::Status read_joint_names(SceneMesh& out, const std::string& mptr);

  core::Status pack_mesh(std::uint32_t m, std::pair<std::uint32_t, std::optional<std::uint32_t>> g);
  /// Template mesh m's vertex streams from the glTF mesh's attributes, in
  /// the template's layout (the skin's through write_skin).
  core::Status write_streams(std::uint32_t m, std::uint32_t gltf_mesh, const SceneMesh& sm,
                             const std::vector<std::uint32_t>& palette_of_joint,
                             std::vector<std::vector<std::uint8_t>>& streams);
  /// Template mesh m's draws from the glTF mesh's primitives, matched by
  /// material: replaced, added (1.1+) or kept; 1.0's one index stream rebuilt.
  core::Status pack_draws(std::uint32_t m, const SceneMesh& sm, std::uint32_t index_size, Json& mj,
                          PackedMesh& pm);

  /// A primitive's indices in the template's index size, winding reversed
  /// back to Unity's unless raw_axes.
  std::vector<std::uint8_t> index_bytes(const SceneMesh::Primitive& prim,
                                        std::uint32_t index_size) const;

  /// A new draw for a primitive whose material no draw of the template
  /// mesh has left: the draw of that material copied (its textures and
  /// overrides) when the mesh has one, else a draw of the donor
  /// component's material slot of that name (the component of the mesh's
  /// first draw; §7: the name must be the slot's), with no textures (the
  /// material keeps its own). Nullopt when no slot has the name.
  std::optional<Json> new_draw(std::uint32_t m, const Mesh& mesh,
                               const std::string& material) const;

  /// Where a new draw's material slot is searched, in order (§7: any
  /// component can donate a material; the nearest ones first): the
  /// components the mesh's draws take materials from, those the mesh
  /// replaces, then every other component.
  std::vector<std::uint32_t> donor_components(std::uint32_t m, const Mesh& mesh) const;

  /// Draw k of the template mesh as the template's manifest holds it,
  /// without its index fields.
  Json draw_json_of(const Mesh& mesh, std::size_t k) const;

  /// PackOptions::fresh: the placeholders the scene did not fill go.
  /// Unfilled draws and unpacked meshes are dropped (their components
  /// kept), textures no packed draw uses are dropped, and a texture a packed
  /// draw uses must have had an image.
  core::Status prune_placeholders();

  /// A §10 parameter id from a shape key name: characters other than
  /// letters, digits, '_', '.' and '-' become '_', a leading non-alphanumeric
  /// gets an 'k' before it, at most 96 bytes.
  static std::string slider_id(const std::string& name);

  /// The morph targets of one packed mesh, as §10 frame payloads.
  struct MeshTargets {
    std::uint32_t mesh = 0;  ///< template mesh
    std::size_t packed = 0;  ///< index into result_.meshes
    std::string pointer;     ///< /meshes/g/extras/targetNames
    std::vector<std::string> names;
    std::vector<float> weights;
    std::vector<std::uint32_t> payloads;  ///< sparse-position-f32 payload ids
  };

  /// A sparse-position-f32 frame payload (§10): descriptor, then one record
  /// per vertex the displacement moves.
  std::uint32_t delta_payload(const std::vector<float>* d, std::size_t vertices);

  /// §10 needs Float32 XYZ positions and a 1.3+ structure; the targets'
  /// displacements become frame payloads, turned into sliders once every
  /// mesh is packed (build_sliders).
  core::Status collect_targets(std::uint32_t m, const SceneMesh& sm,
                               const std::set<std::string>& skip);

  /// The template's own §10 channels on mesh m, their frames rebuilt from
  /// the scene's morph targets as bem export writes them (one per
  /// non-neutral frame: `id`, or `id@tick`), so the sliders follow the
  /// edited vertices. The parameters and frame ticks stay the template's.
  /// BEM_PACK_MORPHS when a frame has no target (an export with
  /// --bake-sliders, or the shape key was deleted or renamed).
  core::Status rebuild_template_channels(std::uint32_t m, const SceneMesh& sm,
                                         std::set<std::string>& used);

  core::Status apply_spec();

  /// A §10 parameter object, replacing the template's parameter of that id
  /// or appended (BEM_PACK_LIMIT past 64).
  core::Status put_parameter(Json param, const std::string& ptr);

  /// One mesh_deformations channel (BEM_PACK_LIMIT past 4096).
  core::Status put_channel(std::uint32_t mesh, const std::string& id, Json frames,
                           const std::string& ptr);

  Json delta_frame(std::int64_t value, std::uint32_t payload);

  /// §10 sliders from the packed meshes' shape keys. The spec's parameters
  /// come first: each takes one shape key (its `shape_key`, else the one
  /// named like its id) or several (`frames`), with the spec's range,
  /// neutral, step, default and condition; every mesh with one of those
  /// shape keys gets a channel (a frame of a shape key the mesh lacks moves
  /// nothing). Every other shape key name becomes a parameter of its own:
  /// ticks 0..1000, neutral 0, default from the mesh's weight, shared by
  /// every mesh with a shape key of that name and by a template parameter of
  /// that id and range.
  core::Status build_sliders();

  /// The payloads the packed meshes replaced are referenced no more: drop
  /// them here (renumbering the rest in order) rather than have the writer
  /// warn about them.
  void drop_replaced_payloads();

  std::uint32_t add_payload(std::vector<std::uint8_t> bytes);

  /// The mesh's palette: the template's bones in order, then every joint the
  /// scene's weights use that the template lacks, taken from the bone list
  /// of the component that donates the template's bones (BEM_PACK_JOINT when
  /// it has no such bone or the palette passes 256).
  core::Status build_palette(std::uint32_t m, const SceneMesh& sm, Json& mj,
                             std::vector<std::uint32_t>& palette_of_joint, PackedMesh& pm);

  /// §7 skin layouts of stream 2: 4 bytes (UInt8×4 indices, the first one
  /// rigid), 12 bytes (UNorm16×4 weights summing to exactly 65535, UInt8×4
  /// indices), 32 bytes (Float32×4 weights summing to 1, UInt32×4 indices).
  core::Status write_skin(const SceneMesh& sm, const Mesh& mesh,
                          const std::vector<std::uint32_t>& palette_of_joint,
                          std::vector<std::vector<std::uint8_t>>& streams);

  const Model& model_;

  scene::GltfDocument& doc_;

  const PackOptions& options_;

  const Json& template_manifest_;

  PackResult result_;

  std::vector<MeshTargets> targets_;

  std::map<std::uint32_t, std::set<std::size_t>> dropped_draws_;

  std::map<std::uint32_t, std::uint32_t> count_of_payload_;
};

}  // namespace charkit::bem::detail
