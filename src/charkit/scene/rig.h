// A skinned mesh and its skeleton from glTF / GLB / VRM, the input of the
// pose-driven deformer (docs/deformer/rig.md §1). The file is checked by model
// intake (bounded lengths and indices) and loaded as a GltfDocument in the
// same pass (inspect_and_load_model); the document reads every accessor the
// rig uses with its byte ranges checked.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "charkit/core/bytes.h"
#include "charkit/core/result.h"
#include "charkit/scene/intake.h"
#include "charkit/scene/skeleton.h"

namespace charkit::scene {

struct RigMorphTarget {
  std::string name;                    ///< mesh.extras.targetNames[i], or "target_<i>"
  std::vector<float> position_deltas;  ///< 3 per vertex
};

/// One skinned mesh: all triangle primitives of the chosen glTF mesh,
/// concatenated in primitive order (indices offset accordingly).
struct Rig {
  std::string mesh_name;  ///< glTF mesh name ("" if none)
  std::size_t mesh_index = 0;
  std::size_t node_index = 0;  ///< the node that instantiates the mesh with the skin
  std::size_t skin_index = 0;
  std::vector<float> positions;          ///< 3 per vertex, bind space
  std::vector<float> normals;            ///< 3 per vertex, or empty (a primitive had none)
  std::vector<std::uint32_t> triangles;  ///< 3 vertex indices per triangle
  std::vector<std::uint32_t> joints;     ///< 4 per vertex: indices into skeleton joints
  std::vector<float> weights;            ///< 4 per vertex, normalised to sum 1 (or all 0)
  std::vector<RigMorphTarget> morph_targets;
  /// First vertex of each glTF primitive (in primitive order) in the merged
  /// arrays above: primitive p holds vertices [offsets[p], offsets[p + 1])
  /// (the last one up to vertex_count()).
  std::vector<std::size_t> primitive_vertex_offsets;
  /// Joints in parents-first order (the skin's order where it already is),
  /// with local rest TRS and inverse bind matrices (identity when the skin
  /// has none). joints[] above index this order.
  Skeleton skeleton;
  std::vector<std::size_t> joint_nodes;  ///< glTF node of each joint
  /// Per joint, the product of the non-joint nodes between its parent joint
  /// (or the scene root) and the joint: world = parent_world × offset × local.
  /// Identity in most files.
  std::vector<Mat4> joint_parent_offsets;
  Mat4 mesh_world = kIdentity4;  ///< the mesh node's world transform (glTF skinning ignores it)

  std::size_t vertex_count() const { return positions.size() / 3; }
};

struct RigOptions {
  /// Pick the first node whose mesh has this name (or whose node name is
  /// this); "" = the first node (in index order) with both a mesh and a skin.
  std::string mesh_name;
  /// Pick exactly this node (one of list_skinned_meshes()); wins over mesh_name.
  std::optional<std::size_t> node;
  IntakeOptions intake;
  std::size_t max_vertices = std::size_t{1} << 22;
  std::size_t max_joints = 4096;
  std::size_t max_morph_targets = 1024;
  std::size_t max_morph_floats = std::size_t{1} << 28;  ///< targets × vertices × 3
};

/// Errors: inspect_model's; RIG_FORMAT (FBX), RIG_CONTAINER (zip: not
/// supported here), GltfDocument's errors (GLB_*, GLTF_*, BASE64_*);
/// then with a JSON pointer: RIG_NO_SKINNED_MESH, RIG_PRIMITIVE (not triangles, or missing POSITION
/// / JOINTS_0 / WEIGHTS_0), RIG_ACCESSOR (index, type, component type, counts), RIG_INDEX (vertex
/// index out of range), RIG_JOINT_INDEX (a weighted joint index past the skin's joints), RIG_WEIGHT
/// (negative / non-finite weight), RIG_JOINT (bad or repeated joint node), RIG_NODE_TREE (node with
/// two parents or a cycle), RIG_MORPH (target counts differ between primitives), RIG_LIMIT
/// (vertices, joints or targets above the options' limits).
core::Result<Rig> load_rig(core::Bytes bytes, const RigOptions& options = {});
/// Map the file and load it. Adds IO_* errors.
core::Result<Rig> load_rig_file(const std::string& path, const RigOptions& options = {});

/// A node that instantiates a mesh with a skin: what load_rig can load.
struct SkinnedMeshNode {
  std::size_t node = 0;
  std::string node_name;
  std::string mesh_name;
  std::size_t vertex_count = 0;  ///< POSITION counts of the mesh's primitives, summed
  /// How messages name it: the mesh name, else the node name, else "node <i>".
  std::string label() const;
};

/// The skinned-mesh nodes of a glTF/GLB/VRM, in node order (load_rig's
/// first checks and errors; none found is not an error here).
core::Result<std::vector<SkinnedMeshNode>> list_skinned_meshes(core::Bytes bytes,
                                                               const IntakeOptions& intake = {});

/// The joint a user names: the joint of that name, else, for "#N", the joint
/// that is glTF node N (how `model inspect` shows a node without a name).
std::optional<std::size_t> find_joint(const Rig& rig, std::string_view name);

/// "#N" (N: decimal digits, a node index) as N; nullopt for any other text.
std::optional<std::size_t> node_reference(std::string_view name);

/// How much of the mesh the named joints move: the skin weight, summed over
/// all vertices, on those joints and every joint below them (rotating a
/// joint moves its descendants). In vertices: 0 = untouched, vertex_count()
/// = every vertex fully. Names the skeleton lacks are ignored.
double joint_influence(const Rig& rig, std::span<const std::string> joint_names);

/// load_rig's choice when no mesh is named: of the skinned meshes, the one
/// the named joints move most (joint_influence; ties go to the first).
struct RigChoice {
  Rig rig;
  double influence = 0.0;                   ///< joint_influence of the chosen rig
  std::vector<SkinnedMeshNode> candidates;  ///< every skinned mesh of the file
  std::size_t chosen = 0;                   ///< index into candidates
};
/// With options.mesh_name or options.node set, loads that one (and scores
/// it). Otherwise loads every candidate: one that fails to load is passed
/// over, and when all fail the first one's error is returned.
core::Result<RigChoice> load_rig_moved_most(core::Bytes bytes,
                                            std::span<const std::string> joint_names,
                                            const RigOptions& options = {});

/// Column-major 4x4 of a TRS transform.
Mat4 transform_matrix(const Transform& t);

/// World matrices of every joint for the given local transforms (one per
/// joint, parents-first as in rig.skeleton). Errors: RIG_POSE (size).
core::Result<std::vector<Mat4>> joint_world_matrices(const Rig& rig,
                                                     std::span<const Transform> locals);

/// Skinning matrices (world × inverse bind), 16 floats per joint, column-major,
/// for the given local transforms. Errors: RIG_POSE.
core::Result<std::vector<float>> skinning_matrices(const Rig& rig,
                                                   std::span<const Transform> locals);

}  // namespace charkit::scene
