// Internal to charkit_motion: the resampling tracks behind an AssimpMotion
// and the rules both readers share (FBX through Assimp in
// assimp_motion.cpp, glTF and GLB through the glTF layer in
// gltf_motion.cpp), defined in motion_tracks.cpp: the input check, the
// animation choice, the skeleton and its evaluation chain, the time base.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "charkit/core/math.h"
#include "charkit/core/result.h"
#include "charkit/motion/assimp_motion.h"
#include "charkit/scene/gltf_animation.h"

namespace charkit::motion {

namespace detail {

struct Affine {  // x' = m·x + t
  Mat3 m = core::identity3<double>();
  Vec3 t{};
};

inline Affine compose(const Affine& a, const Affine& b) {
  return {core::mul(a.m, b.m), core::add(core::mul(a.m, b.t), a.t)};
}

// Rotation · diag(scale), translation t.
inline Affine trs(const Vec3& t, const core::Quatd& q, const Vec3& s) {
  const core::Mat4d m = core::compose(core::Trs<double>{t, q, s});
  return {core::linear_part(m), t};
}

}  // namespace detail

struct AssimpTracks {
  template <typename V>
  struct Key {
    double t;  // ticks
    V v;
  };
  struct Track {
    // Assimp's keys, blended linearly (spherically for rotations).
    std::vector<Key<Vec3>> position, scaling;
    std::vector<Key<core::Quatd>> rotation;
    // A glTF channel's sampler per path, evaluated as glTF 2.0 defines
    // (STEP, LINEAR, CUBICSPLINE); used instead of the keys when set.
    std::optional<scene::GltfTrack> gltf_translation, gltf_rotation, gltf_scale;
  };
  struct Node {
    int parent = -1;  // index in nodes, parents first
    detail::Affine rest;
    Vec3 rest_t{}, rest_s{1, 1, 1};
    core::Quatd rest_r{};
    int track = -1;
  };
  std::vector<Node> nodes;
  std::vector<Track> tracks;
  std::vector<std::uint32_t> joint_node;  // joint → node
  Mat3 up = core::identity3<double>();    // applied to world positions
  double ticks_per_second = 30;
};

namespace detail {

/// The animation `want` names: "" = the first, a decimal number = its index,
/// else its name. MOTION_ANIMATION_NOT_FOUND lists the file's animations.
core::Result<std::size_t> choose_animation(const std::vector<std::string>& names,
                                           const std::string& want);

/// The input checks both readers make first: the size (MOTION_LIMIT), the
/// format from the content (MOTION_FORMAT when it is none of glTF, GLB and
/// FBX), and a GLB's container (scene::split_glb; MOTION_IMPORT_FAILED).
core::Result<AssimpFormat> checked_format(std::span<const std::uint8_t> bytes,
                                          const AssimpLimits& limits);

/// A node forest in depth-first pre-order: parent[i] < i (−1 for a root),
/// end[i] one past the last node of i's subtree.
struct PreorderForest {
  std::vector<int> parent;
  std::vector<std::size_t> end;
  std::vector<char> has_mesh;
};

/// The skeleton both readers take from a forest and its target nodes: the
/// targets' lowest common ancestor, and the included nodes of its subtree —
/// the targets, the nodes between them and the ancestor, and the mesh-free
/// nodes below targets (end effectors such as HeadTop_End) — and the
/// evaluation chain: the ancestor's ancestors, root first, then the
/// included nodes. At least one target. With `virtual_root`, node 0 is a
/// root added above the file's roots: never included, never in the chain.
struct SkeletonNodes {
  std::size_t lca = 0;
  std::vector<char> include;
  std::vector<std::size_t> chain;
};
SkeletonNodes pick_skeleton(const PreorderForest& forest, const std::vector<char>& target,
                            bool virtual_root = false);

/// What the chosen animation's keys tell about its rate and length.
struct KeyStats {
  double max_key = 0;       ///< the latest key, in ticks
  std::size_t densest = 0;  ///< keys of the track with the most
  double densest_span = 0;  ///< that track's first-to-last span, in ticks
  void note(std::size_t keys, double first, double last) {
    if (keys == 0) return;
    if (last > max_key) max_key = last;
    if (keys > densest) {
      densest = keys;
      densest_span = last - first;
    }
  }
};

/// Sets out.fps (option, else the ticks per second when `fps_from_ticks`,
/// else the key spacing when it gives 10–240 fps, else 30), its source,
/// out.duration_seconds (duration_ticks / tr.ticks_per_second) and
/// out.frames; MOTION_LIMIT past the frame and work limits.
core::Status set_time_base(AssimpMotion& out, const AssimpTracks& tr, bool fps_from_ticks,
                           double duration_ticks, const KeyStats& keys,
                           const AssimpMotionOptions& o);

/// An FBX, glTF or GLB motion read with Assimp in a child process; `dir`:
/// where a glTF's external buffers may be read (empty: none).
/// assimp_import.cpp; in a build without Assimp its stand-in
/// (disabled/assimp_import.cpp) reports MOTION_ASSIMP_DISABLED.
core::Result<AssimpMotion> import_with_assimp(std::span<const std::uint8_t> bytes,
                                              const std::filesystem::path& dir,
                                              const AssimpMotionOptions& options);

}  // namespace detail
}  // namespace charkit::motion
