// Baking a pose model into relative shape keys (docs/deformer/bake.md): each pose
// of a pose library becomes one glTF morph target (POSITION deltas = the
// model's bind-space offsets for that pose) added to the rig's mesh, and the
// library itself is written as JSON (pose name -> bone rotations, curves).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "charkit/core/bytes.h"
#include "charkit/core/result.h"
#include "charkit/deformer/pose.h"
#include "charkit/deformer/pose_model.h"
#include "charkit/scene/rig.h"

namespace charkit::deformer {

/// Features of one pose for a model, in the model's layout: axis-angle via
/// pose_features; engine via engine_pose_features with the rig's rest local
/// rotations of the spec's bones (matched by joint name). out must hold
/// model.feature_count() floats. Errors: FEATURE_SHAPE, TARGETS_BONE.
core::Status pose_model_features(const PoseModel& model, const scene::Rig& rig, const Pose& pose,
                                 std::span<float> out);

/// One named pose of a pose library.
struct PoseLibraryEntry {
  std::string name;
  Pose pose;
};

/// The pose library as JSON (docs/deformer/bake.md §2):
/// {"format": "charkit.pose_library", "version": 1, "mesh", "bones": [names],
///  "curves": [names], "poses": [{"name", "shape_key", "rotations": {bone:
///  {"quaternion": [x, y, z, w], "euler_xyz_deg": [x, y, z]}}, "curves":
///  {name: value}}]}. shape_key_names[i] is written as pose i's "shape_key"
/// when i < shape_key_names.size() (omitted otherwise). Every pose must match
/// spec (one rotation per bone, one value per curve); the Euler angles are
/// pose.euler_deg when it holds 3 per bone, else derived from the quaternion.
std::string write_pose_library(const InputSpec& spec, std::string_view mesh,
                               std::span<const PoseLibraryEntry> poses,
                               std::span<const std::string> shape_key_names);

/// Read a pose library against spec: bones and curves are matched by name
/// (ones the file leaves out of a pose are at rest / 0). Errors, with a JSON
/// pointer: JSON_* (syntax), POSE_LIBRARY_FORMAT (not a pose library, newer
/// version), POSE_LIBRARY_JSON (a member of the wrong type or size),
/// POSE_LIBRARY_BONE / POSE_LIBRARY_CURVE (a name the spec lacks),
/// POSE_LIBRARY_NAME (empty or duplicate pose name), POSE_LIBRARY_VALUE
/// (non-finite number, zero quaternion).
core::Result<std::vector<PoseLibraryEntry>> read_pose_library(std::string_view json,
                                                              const InputSpec& spec);

struct BakeOptions {
  std::string prefix;    ///< shape key name = prefix + pose name
  float epsilon = 0.0F;  ///< offset components with |d| <= epsilon are written as 0
  bool glb = true;       ///< GLB output; false: glTF JSON with a data: URI buffer
};

struct BakeResult {
  /// GLB bytes, or the .gltf JSON text (buffers embedded as data: URIs) when !glb.
  std::vector<std::uint8_t> gltf;
  std::string pose_library_json;
  std::vector<std::string> shape_keys;  ///< the new morph targets' names, in pose order
};

/// Bake: for each pose, the model's bind-space offsets
/// (PoseModelEvaluator::offsets on pose_model_features) become one relative
/// morph target (POSITION deltas) appended to every primitive of the rig's
/// mesh (the merged vertices split back per primitive), named in
/// mesh.extras.targetNames. Everything else in the source file is kept
/// (existing targets, materials, textures, nodes, animations, extensions);
/// mesh and node default weights are extended with 0, and "weights"
/// animations of nodes using the mesh get a 0 track for every new target.
/// source_gltf is the file the rig was loaded from (GLB, or glTF JSON with
/// data: URI buffers). Errors: inspect_model's, JSON_*, validate(model)'s,
/// FEATURE_SHAPE, TARGETS_BONE (an input bone the rig's skeleton lacks), and BAKE_EMPTY (no poses),
/// BAKE_OPTIONS (epsilon negative or not finite), BAKE_POSE_NAME (empty or duplicate pose name),
/// BAKE_NAME_CLASH (a shape key name already used by the mesh), BAKE_VERTEX_COUNT (model and rig
/// vertex counts differ), BAKE_RIG_MISMATCH (the file's mesh is not the rig's), BAKE_GLTF (a member
/// the bake must edit is malformed; JSON pointer), BAKE_BUFFER (buffer 0 is an
/// external file), BAKE_TOO_LARGE (over the 4 GiB glTF limit).
core::Result<BakeResult> bake_shape_keys(core::Bytes source_gltf, const scene::Rig& rig,
                                         const PoseModel& model,
                                         std::span<const PoseLibraryEntry> poses,
                                         const BakeOptions& o);

}  // namespace charkit::deformer
