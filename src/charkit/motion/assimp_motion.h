// FBX animations through Assimp (libassimp 5.2), glTF and GLB animations
// through charkit's glTF layer, into the same MediaPipe-33 pipeline as BVH
// (docs/motion.md §FBX, glTF and GLB animations): the file is read with its
// node hierarchy kept, a skeleton is picked (the node tree above the bones
// of the skinned meshes, or the animated nodes when nothing is skinned), one
// animation is resampled at a fixed frame rate, and every frame gives world
// joint positions in the form the BVH path hands to map_joints / PoseJob /
// project.
//
// Untrusted input: the size is bounded before any reader sees it; Assimp
// runs in a child process whose crash, hang (timeout) or runaway allocation
// (address space limit) becomes an error; every exception is caught; no file
// is opened other than the input itself and files in the input's folder
// (glTF buffers, bounded too); and the frame and joint counts are bounded
// before any sampling.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "charkit/core/isolated.h"
#include "charkit/core/result.h"
#include "charkit/motion/bvh.h"
#include "charkit/motion/convert.h"
#include "charkit/motion/forward_kinematics.h"
#include "charkit/motion/mediapipe33.h"

namespace charkit::motion {

enum class AssimpFormat : std::uint8_t { kGlb, kGltf, kFbxBinary, kFbxAscii, kUnknown };

/// Detect from content: GLB magic `glTF`; `Kaydara FBX Binary`; an ASCII FBX
/// (after an optional BOM and whitespace, a `; FBX` comment or
/// `FBXHeaderExtension`); JSON whose top-level object has an `"asset"` member
/// (glTF). Anything else (BVH, keypoint JSON) → kUnknown.
AssimpFormat detect_assimp_format(std::string_view bytes);
/// "glb", "gltf", "fbx" (binary), "fbx-ascii", "unknown".
const char* assimp_format_name(AssimpFormat f);

struct AssimpLimits {
  std::uint64_t max_bytes = 512ull << 20;  ///< the input, and all files it refers to together
  /// A glTF's JSON text (its parsed form takes several times as much
  /// memory), as model intake bounds it.
  std::uint64_t max_json_bytes = 64ull << 20;
  std::uint32_t max_nodes = 65536;  ///< nodes in the scene
  std::uint32_t max_joints = 4096;  ///< skeleton joints
  std::uint64_t max_frames = 10'000'000;
  std::uint64_t max_work = 200'000'000;  ///< frames × nodes evaluated per pass
};

struct AssimpMotionOptions {
  /// "" = the first animation; a decimal number = its index; else its name.
  std::string animation;
  std::optional<double> fps;  ///< overrides the default rate (below)
  /// Rotate the source so that its up axis becomes +Y, from the file's
  /// metadata (FBX UpAxis/UpAxisSign; glTF is Y-up). False: leave the
  /// coordinates as imported (the caller's UpAxis then applies).
  bool auto_up = true;
  AssimpLimits limits;
  /// Run Assimp in a child process (core::run_isolated), so that a crash,
  /// hang or runaway allocation inside libassimp on a malformed file ends as
  /// MOTION_IMPORT_FAILED. False: in this process — only for trusted files.
  bool isolate = true;
  core::IsolationLimits isolation;  ///< time and memory of the child
  /// glTF and GLB are read by charkit's glTF layer (load_gltf_motion): in
  /// this process, samplers evaluated as glTF 2.0 defines them. True: by
  /// Assimp, as FBX is — the reference the glTF reading is compared with.
  bool gltf_with_assimp = false;
};

struct AssimpAnimationInfo {
  std::string name;
  double duration_ticks = 0;
  double ticks_per_second = 0;  ///< as imported (0 = not given)
  std::uint32_t channels = 0;
};

struct AssimpTracks;  // assimp_motion.cpp: node chain, rest transforms, key tracks

/// A loaded animation: the skeleton and resampling tracks, copied out of the
/// Assimp scene (no Assimp object outlives the loader). Sampling is cheap
/// and allocation-free, so conversion runs it twice (scale pass, write
/// pass) instead of holding every frame.
struct AssimpMotion {
  AssimpFormat format = AssimpFormat::kUnknown;
  /// Skeleton joints, parents first (parent < index, -1 for a root), in the
  /// BvhJoint form map_joints takes: name (Assimp's `$AssimpFbx$` helper
  /// nodes folded into their joint), parent, offset = rest local translation
  /// relative to the parent joint; no channels; end_site false.
  std::vector<BvhJoint> joints;
  std::size_t root_count = 0;
  bool skinned = false;  ///< skeleton from mesh bones (else from animated nodes)
  std::vector<AssimpAnimationInfo> animations;
  std::size_t animation = 0;  ///< the chosen one
  double duration_seconds = 0;
  double fps = kDefaultFps;
  std::string fps_source;             ///< "option", "ticks per second", "key spacing", "default"
  std::uint64_t frames = 0;           ///< round(duration × fps) + 1
  std::string up_axis;                ///< how the up axis was handled, in words
  std::uint32_t animated_joints = 0;  ///< joints moved by a channel (on them or a helper)
  std::vector<BvhWarning> warnings;
  std::shared_ptr<const AssimpTracks> tracks;  ///< internal

  /// World positions of every joint at frame f (time f / fps seconds), in
  /// the file's units, up axis handled as `up_axis` says. out: joints.size().
  void sample(std::uint64_t frame, std::span<Vec3> out) const;
  /// Same at a time in seconds (each track clamped to its first/last key).
  void sample_at(double seconds, std::span<Vec3> out) const;
};

/// Load from memory. The format is detected from the bytes (detect_assimp_format);
/// glTF and GLB go to load_gltf_motion unless options.gltf_with_assimp, FBX
/// to Assimp. A glTF's external buffers cannot be resolved from memory
/// (data: URIs work).
/// Errors: MOTION_LIMIT (too large), MOTION_FORMAT (not FBX/glTF/GLB),
/// MOTION_IMPORT_FAILED (Assimp's message), MOTION_NO_ANIMATION,
/// MOTION_ANIMATION_NOT_FOUND, MOTION_NO_SKELETON.
core::Result<AssimpMotion> load_assimp_motion(std::span<const std::uint8_t> bytes,
                                              const AssimpMotionOptions& options = {});
/// Load a file (buffers and textures beside a .gltf are read from its
/// folder, and count against max_bytes). Errors as above, plus IO_OPEN.
core::Result<AssimpMotion> load_assimp_motion_file(const std::string& path,
                                                   const AssimpMotionOptions& options = {});

/// A glTF or GLB animation read by charkit's glTF layer, without Assimp
/// and without a child process (the glTF layer is bounded and fuzzed): the
/// skeleton is chosen as for Assimp's import (the joints of the skins of
/// the default scene's meshes, else its animated nodes, with the nodes
/// between them and the mesh-free nodes below them); unnamed nodes are
/// named "#N"; the channels' samplers are read by scene::read_gltf_track
/// and evaluated by scene::GltfTrack (STEP, LINEAR, CUBICSPLINE), key times
/// in seconds; the rate is options.fps, else the key spacing, else 30.
/// base_dir: the folder external buffers resolve in ("" = none may be
/// read). Errors: MOTION_LIMIT, MOTION_FORMAT, MOTION_FPS,
/// MOTION_IMPORT_FAILED (the glTF layer's located error in the message),
/// MOTION_NO_ANIMATION, MOTION_ANIMATION_NOT_FOUND, MOTION_NO_SKELETON.
core::Result<AssimpMotion> load_gltf_motion(std::span<const std::uint8_t> bytes,
                                            const std::string& base_dir,
                                            const AssimpMotionOptions& options = {});

/// The pipeline of convert_bvh on an imported animation: pass 1 finds the
/// projection scale, pass 2 writes the NDJSON lines. options.up applies on
/// top of the motion's own up handling (use kY unless auto_up was off);
/// options.fps, limits and hints are ignored (the fps is the motion's);
/// options.budget is checked before the first frame is sampled (frames ×
/// joints, frames × the estimated line size) and options.cancel every
/// kCancelPollFrames frames. The summary's header holds the skeleton joints
/// (no channels, frame_time 1/fps). Errors: MOTION_NO_MAPPED_JOINTS (the
/// table finds none of its points in the skeleton), MOTION_NOT_FINITE,
/// MOTION_BUDGET_*, MOTION_CANCELLED, IO_WRITE.
core::Result<ConvertSummary> convert_assimp_motion(const AssimpMotion& motion,
                                                   const ConvertOptions& options,
                                                   const OutputSink& sink);
/// Pass 1 only (for `motion inspect`); no mapped point is a warning here.
core::Result<ConvertSummary> analyse_assimp_motion(const AssimpMotion& motion,
                                                   const ConvertOptions& options);

}  // namespace charkit::motion
