// glTF meshes through the subdivision kernels (docs/deform/subdivision.md,
// "glTF meshes"): `charkit deform subdivide`. The triangle primitives of a
// mesh that share one set of vertex attributes are subdivided together (so
// edges between materials are smoothed like any other); each gets new
// attribute accessors and index lists in a new GLB, everything else of the
// document kept.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "charkit/core/job.h"
#include "charkit/core/result.h"
#include "charkit/deform/subdivision.h"
#include "charkit/gpu/context.h"
#include "charkit/scene/gltf_document.h"

namespace charkit::ops {

struct GltfSubdivideOptions {
  deform::SubdivParams params;
  /// Every vertex's 6-bit strength is round(strength × 63) (strength in
  /// [0, 1]); ignored when strength_attribute is given.
  float strength = 1.0F;
  /// A vertex attribute (e.g. "_SUBDIV_STRENGTH", or "COLOR_0" whose first
  /// channel is read) giving each vertex's strength in [0, 1]; a primitive
  /// without it is refused.
  std::string strength_attribute;
  /// Every vertex's geometry scale; unset: the mean length of the vertex's
  /// edges (so the projected size is an edge's on-screen size).
  std::optional<float> geometry_scale;
  /// Only the mesh with this name ("" = every mesh).
  std::string mesh;
  /// How the CPU kernels may spend threads (core/job.h; by default the
  /// calling thread only).
  core::RunOptions run;
  /// Kernels 1 and 2 on this GPU context instead; kernel 3 then runs on the
  /// CPU on the GPU's strengths (its triangle order keeps each primitive's
  /// triangles together, which the GPU's group order does not).
  gpu::Context* gpu = nullptr;
};

struct GltfSubdivideMesh {
  std::string name;
  std::size_t primitives = 0;
  std::size_t vertices_in = 0;
  std::size_t vertices_out = 0;
  std::size_t triangles_in = 0;
  std::size_t triangles_out = 0;
  std::size_t edges = 0;
  std::size_t edges_split = 0;
};

struct GltfSubdivideResult {
  std::vector<std::uint8_t> glb;
  std::vector<GltfSubdivideMesh> meshes;
  /// What the run wants a user to know: a mesh past the GPU's limits
  /// (GPU_LIMIT) subdivided on the CPU instead, with its pointer.
  std::vector<std::string> notes;
};

/// Errors: GltfDocument's (GLB_*, GLTF_*, JSON_*), DEFORM_GLTF (with a JSON
/// pointer: no mesh of that name, a primitive that is not triangles, an
/// attribute of the wrong type or count, the strength attribute missing,
/// several buffers), the kernels' DEFORM_SUBDIV_*, SCENE_TOO_LARGE. The
/// document's JSON is edited in place.
core::Result<GltfSubdivideResult> subdivide_gltf(scene::GltfDocument& doc,
                                                 const GltfSubdivideOptions& options);

}  // namespace charkit::ops
