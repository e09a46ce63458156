// glTF morph targets through the 40-byte kernel (docs/deform/morph40.md,
// "glTF morph targets"): `charkit deform morph`. Each triangle primitive's
// POSITION / NORMAL / TANGENT become a 40-byte vertex array, each target with
// a non-zero weight becomes sparse records (the vertices whose deltas are not
// all zero), deform::Morph40Job adds them, and the results replace the primitive's
// attributes in a new GLB. The targets stay, so animations and VRM
// expressions that use them still work relative to the new base; the applied
// weights in mesh.weights and node.weights become 0.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "charkit/core/job.h"
#include "charkit/core/result.h"
#include "charkit/gpu/context.h"
#include "charkit/scene/gltf_document.h"

namespace charkit::ops {

struct GltfMorphOptions {
  /// Target name → weight. A name is the mesh's extras.targetNames entry (or
  /// the first primitive's, the VRM 0.x place), or "target_<i>", or "<i>";
  /// it applies to every mesh that has it. Targets not named keep the
  /// mesh's default weight (mesh.weights, else 0).
  std::map<std::string, float> weights;
  /// Only the mesh with this name ("" = every mesh with morph targets).
  std::string mesh;
  /// How the CPU kernel may spend threads (core/job.h; by default the
  /// calling thread only).
  core::RunOptions run;
  /// Run the kernel on this GPU context instead (nullptr: the CPU).
  gpu::Context* gpu = nullptr;
};

struct GltfMorphMesh {
  std::string name;
  std::size_t primitives = 0;
  std::size_t vertices = 0;
  std::size_t records = 0;               ///< 40-byte records applied, over all targets
  std::map<std::string, float> applied;  ///< non-zero weights applied, by target name
};

struct GltfMorphResult {
  std::vector<std::uint8_t> glb;
  std::vector<GltfMorphMesh> meshes;
};

/// Errors: GltfDocument's (GLB_*, GLTF_*, JSON_*), DEFORM_GLTF (with a JSON
/// pointer: a primitive that is not triangles, attribute or target accessors
/// of the wrong type or count, several buffers), DEFORM_MORPH_TARGET (a name
/// in options.weights that no processed mesh has; the message lists the
/// names), DEFORM_MORPH40_* (the kernel's validation), SCENE_TOO_LARGE.
/// The document's JSON is edited in place (attributes re-pointed, weights).
core::Result<GltfMorphResult> apply_gltf_morphs(scene::GltfDocument& doc,
                                                const GltfMorphOptions& options);

}  // namespace charkit::ops
