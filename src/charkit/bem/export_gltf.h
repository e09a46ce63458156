// glTF 2.0 export of one selection of a BEM package (docs/bem/export.md):
// the replacement meshes the selection uses, with the declared vertex
// attributes converted to glTF's, positions after morph evaluation (§10),
// the palette bones as a flat skeleton, one primitive per selected draw,
// materials named after material_name and the bound textures decoded (top
// mip) to PNG. Kept and hidden components have no geometry in the package
// and are not exported.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "charkit/bem/model.h"
#include "charkit/bem/plan.h"
#include "charkit/bem/selection.h"
#include "charkit/bem/settings.h"
#include "charkit/core/progress.h"
#include "charkit/core/result.h"
#include "charkit/scene/scene.h"
#include "charkit/scene/texture_decode.h"

namespace charkit::bem {

struct ExportOptions {
  PlanOptions plan;  ///< 1.4 resource / platform ("" = whole package)
  /// Convert Unity's left-handed, bottom-row-first conventions to glTF's:
  /// x negated in positions, normals and tangents, tangent w negated,
  /// triangle winding reversed, v' = 1 - v, image rows flipped. Off: data as stored.
  bool unity_to_gltf = true;
  scene::DecodeLimits texture_limits;
  std::string generator = "charkit";
  /// §10 sliders as glTF morph targets (Blender shape keys) instead of
  /// baked into the positions: the positions are the mesh's own, and each
  /// non-neutral frame of each active channel is a target named after the
  /// parameter id (`id` when the channel's only such frame is at the
  /// parameter's max with the neutral frame at its min, else `id@tick`),
  /// weighted so that viewers show the selected ticks. bem pack reads them
  /// back into the template's channels. export_glb then plans every frame.
  bool morph_targets = false;
  /// Called with the meshes built so far and the number planned (their
  /// vertices converted and their textures decoded and encoded as PNG), on
  /// the calling thread; the last call has done == total. May be empty.
  core::ProgressFn progress;
};

/// Something exported differently than asked (a texture that could not be
/// decoded, a texture without a material slot, ...). Not an error.
struct ExportWarning {
  std::string code;  ///< BEM_EXPORT_TEXTURE_DECODE, BEM_EXPORT_TEXTURE_EXTRA, ...
  std::string message;
  std::string pointer;  ///< manifest JSON pointer of what it concerns ("" = none)
};

struct ExportResult {
  scene::Scene scene;
  std::vector<ExportWarning> warnings;
};

/// Build the scene of a planned and read selection. Errors:
/// BEM_EXPORT_ATTRIBUTE (an attribute that does not fit its stream or has an
/// unknown format), BEM_EXPORT_JOINT (a bone index outside the palette).
core::Result<ExportResult> build_export_scene(const Model& model, const Plan& plan,
                                              const Selection& selection,
                                              const ExportOptions& options = {});

/// The morph-target name bem export gives frame `frame` (not neutral) of a
/// §10 channel over `param`, and bem pack looks for: the parameter id when
/// it is the channel's one non-neutral frame, at the parameter's max with
/// the neutral frame at its min (a plain 0..max slider); else `id@tick`.
std::string slider_target_name(const Parameter& param, const Deformation& channel,
                               std::size_t frame);

/// The weights of the morph targets build_export_scene writes with
/// ExportOptions::morph_targets, at other parameter ticks: one list per
/// scene mesh (the export's order: the plan's meshes that have a selected
/// draw), one weight per target in the export's order (each active channel's
/// non-neutral frames). `ticks`: per parameter (manifest order); a channel
/// whose parameter is unavailable keeps the plan's (neutral) tick. The plan
/// is the export's (PlanOptions::all_frames).
std::vector<std::vector<float>> morph_target_weights(const Model& model, const Plan& plan,
                                                     const std::vector<std::uint32_t>& ticks);

struct GlbExport {
  std::vector<std::uint8_t> glb;
  ExportResult result;
  Plan plan;
};

/// Plan, read (only the payloads the selection uses), build and write GLB.
/// Errors: make_plan's, read_selection's, build_export_scene's and the
/// scene writer's (SCENE_*).
core::Result<GlbExport> export_glb(const Model& model, const Package& package,
                                   const Settings& settings, const ExportOptions& options = {});

}  // namespace charkit::bem
