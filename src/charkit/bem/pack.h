// BEM packing from a glTF scene (docs/bem/pack.md): the geometry of a glTF
// scene, typically a `bem export` edited in Blender, written back into the
// layout of an existing package (the template) — its meshes' vertex streams,
// bone palettes and per-draw index payloads — and everything else of the
// template kept. The result goes through the writer (lowest version,
// deduplication, validation) like any other package.
//
// Which template mesh a glTF mesh replaces: the glTF mesh named `mesh_N`
// (the name `bem export` gives BEM mesh N), else the node's
// extras.bem_component or name when it is the `mesh_name` of a component
// that one template mesh replaces. Each
// primitive replaces the next draw of that mesh whose material_name equals
// the primitive's material name. The conversions are those of the export
// (ExportOptions::unity_to_gltf), undone unless raw_axes.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "charkit/bem/model.h"
#include "charkit/bem/pack_spec.h"
#include "charkit/bem/writer.h"
#include "charkit/core/result.h"
#include "charkit/scene/gltf_document.h"

namespace charkit::bem {

struct PackOptions {
  /// Keep the scene's axes, UVs, winding and tangent handedness as stored
  /// (the counterpart of `bem export --raw-axes`).
  bool raw_axes = false;
  /// Refuse scenes whose meshes have more vertices in all than this.
  std::uint64_t max_vertices = std::uint64_t{1} << 22;
  /// The spec file (bem pack --spec): package fields, options, rules,
  /// slider parameters, material overrides. Null: the template's, and one
  /// 0..1000 slider per shape key name. Not owned.
  const PackSpec* spec = nullptr;
  /// Formats for edited textures instead of the template texture's (bem
  /// pack --texture-format): by the texture's original_name, else by kind:
  /// "normal" (semantic normal), "color" (sRGB), "linear" (the rest).
  /// Values are Unity TextureFormat numbers (scene/texture_decode.h).
  std::map<std::string, std::uint32_t> texture_formats;
  /// The template came from a JSON template (load_json_template): its
  /// meshes, draws and textures are placeholders. Draws no primitive fills,
  /// meshes no glTF mesh replaces (their components are then kept) and
  /// textures no packed draw uses are dropped; a texture a packed draw uses
  /// needs an image (BEM_PACK_TEXTURE).
  bool fresh = false;
};

/// Something packed differently than one might assume (a draw kept from
/// the template, a node transform not applied, textures kept). Not an error.
struct PackWarning {
  std::string code;
  std::string message;
  std::string
      pointer;  ///< glTF JSON pointer ("/nodes/3") or manifest pointer ("/meshes/0/draws/1")
};

/// One template mesh replaced by a glTF mesh.
struct PackedMesh {
  std::uint32_t mesh = 0;       ///< index into the template's meshes
  std::uint32_t gltf_mesh = 0;  ///< index into the glTF's meshes
  std::string node;             ///< name of the node that placed it ("" when none)
  std::uint32_t vertices_before = 0;
  std::uint32_t vertices = 0;
  std::uint32_t draws_replaced = 0;
  std::uint32_t draws_kept = 0;   ///< draws without a primitive, indices kept (same vertex count)
  std::uint32_t draws_added = 0;  ///< new draws (a material slot the mesh had no draw left for)
  std::uint32_t bones = 0;        ///< palette size after packing (0: static)
  std::uint32_t bones_added = 0;  ///< palette bones the template did not have
  std::uint32_t sliders = 0;      ///< morph targets packed as §10 channels
};

/// A template texture given by a glTF image (named like the texture, as
/// bem export names them).
struct PackedTexture {
  std::uint32_t texture = 0;  ///< index into the template's textures
  std::uint32_t image = 0;    ///< index into the glTF's images
  std::string name;
  std::uint32_t format = 0;  ///< the template's (Unity TextureFormat)
  std::uint32_t width = 0, height = 0, mips = 1;
  /// False: the image is the template texture as bem export writes it, so
  /// the template's payload is kept byte for byte.
  bool encoded = false;
  double psnr_db = 0;  ///< level 0 decoded against the image (encoded only; inf = exact)
  bool dds = false;    ///< a DDS image: its data passed through unchanged
};

struct PackResult {
  PackageContent content;  ///< the template with the packed meshes; not yet validated
  std::vector<PackedMesh> meshes;
  std::vector<PackedTexture> textures;
  std::vector<PackWarning> warnings;
};

/// Pack the meshes of `scene` into `template_content` (whose typed model is
/// `model`; the template must have passed validation). Errors (the glTF
/// pointer, or the manifest pointer of the template part concerned):
/// BEM_PACK_TEMPLATE (a template part pack cannot use), BEM_PACK_NO_MESH (no glTF mesh
/// matches a template mesh), BEM_PACK_MESH (a glTF mesh name that matches
/// no template mesh or more than one, two glTF meshes for one template
/// mesh), BEM_PACK_PRIMITIVE (not triangles, bad indices),
/// BEM_PACK_ATTRIBUTE (an attribute the layout needs is missing, or of the
/// wrong shape), BEM_PACK_MATERIAL (a primitive whose material names no
/// draw; the message lists the names), BEM_PACK_DRAW_MISSING (a draw with no
/// primitive while the vertex count changed), BEM_PACK_JOINT (a joint not
/// among the component's bones, more than 256 palette bones),
/// BEM_PACK_MORPHS (a frame of a template mesh's own slider without the
/// morph target bem export writes for it: `id` or `id@tick`),
/// BEM_PACK_TEXTURE (an image for a template texture that does not decode or
/// cannot be encoded in the texture's format: ASTC, a block format whose
/// size is not a multiple of 4),
/// BEM_PACK_SLIDER (a morph target that cannot become a slider),
/// BEM_PACK_LIMIT, and the glTF reader's errors.
///
/// Morph targets become §10 sliders: one parameter per target name
/// (mesh.extras.targetNames; ticks 0..1000, neutral 0, default from
/// mesh.weights; shared by every mesh with a target of that name, and with a
/// template parameter of that id when it has the same range) and one
/// sparse-position-f32 channel per packed mesh and target.
///
/// Images named after a template texture (its original_name, or texture_N)
/// replace it: an image equal to what bem export writes for the texture
/// keeps the template's payload; any other is encoded in the texture's
/// format and srgb flag (BC7 by our encoder, BC1/BC3/BC4/BC5 by libsquish,
/// RGBA32, R8) with as many mips as the template had (fewer when the new
/// size allows fewer), rows flipped back to Unity's order unless raw_axes.
core::Result<PackResult> pack_scene(const PackageContent& template_content, const Model& model,
                                    scene::GltfDocument& scene, const PackOptions& options = {});

/// A JSON template (docs/bem/pack.md, "JSON templates"): `target` (the §4
/// target object) and `layouts` (per component to fill: `component`,
/// `attributes`, `strides`, optional `index_size`, `textures` with
/// `material_slot`, `original_name`, `srgb`, optional `semantic` and
/// `format`). Made into a placeholder package (one mesh per layout, one draw
/// per material slot, 4x4 grey textures, no options, each filled component
/// replaced) that pack fills with PackOptions::fresh. Errors:
/// BEM_PACK_TEMPLATE at the template's JSON pointer (a fact missing: never
/// guessed), or with the validator's first issue; the JSON parser's.
struct PackTemplate {
  PackageContent content;
  Model model;
};
core::Result<PackTemplate> load_json_template(core::Bytes json);
/// The placeholder package alone (not validated).
core::Result<PackageContent> template_from_json(core::Bytes json);

/// The public BEM creator project (project.json: a manifest and its payload
/// files, read by read_project_file in folder.h) made ready for the writer:
/// the spec's package fields, options, rules and material overrides applied
/// (spec parameters are refused: BEM_PACK_SPEC; a project's sliders are in
/// its manifest), and every §1 capability the content uses declared, as the
/// public tool's pack step does. Not yet validated: the writer does that.
core::Result<PackResult> pack_project(PackageContent project, const PackOptions& options = {});

/// What packing did, as `bem pack --json` and the C API's pack calls report
/// it: {"meshes": [...], "textures": [...], "warnings": [...]}, one entry
/// per PackedMesh, PackedTexture and PackWarning (docs/bem/pack.md
/// describes the fields).
core::Json pack_report_json(const PackResult& packed);

}  // namespace charkit::bem
