// Poses from animations (docs/deformer/datasets.md §6–7): sample a glTF
// animation or a BVH motion at chosen frames into rest-relative poses of an
// input spec, with the glTF mesh's morph-target weights where the animation
// drives them, and turn morph-target animation into training targets.
//
// glTF animations are read through the glTF layer (scene::GltfAsset for the
// channels and samplers, scene::GltfTrack to evaluate them); errors carry
// JSON pointers.
#pragma once

#include <array>
#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "charkit/core/bytes.h"
#include "charkit/core/result.h"
#include "charkit/deformer/pose.h"
#include "charkit/deformer/targets.h"
#include "charkit/scene/rig.h"

namespace charkit::deformer {

/// Which part of an animation to sample.
struct ActionOptions {
  /// glTF: the animation's name, or its index written as decimal text when no
  /// animation has that name; "" = the first animation. Ignored for BVH.
  std::string animation;
  /// First frame. glTF: time = frame / fps; BVH: the file's own frame index.
  double start_frame = 0;
  /// Last frame, inclusive; -1 = the animation's last frame.
  double end_frame = -1;
  /// Samples evenly spaced in [start, end], both ends included; 0 = every
  /// frame start, start + 1, … up to end.
  std::size_t frames = 0;
  /// Frames per second of a glTF animation (glTF keys are in seconds).
  double fps = 30;
  /// Refuse more sampled frames than this (ACTION_TOO_MANY).
  std::size_t max_frames = 100000;
  /// BVH only: per input bone (rig joint name), BVH joint names tried in
  /// order before the bone's own name (parse_bvh_joint_map).
  std::map<std::string, std::vector<std::string>> bvh_joints;
};

/// A BVH joint map for sample_bvh_action (`deformer sample --joint-map`),
/// shaped like `motion convert --joint-map`: a JSON object whose keys are rig joint names, or VRM
/// humanoid bone names ("leftUpperLeg"; `humanoid` maps them to the rig's
/// joint names, as the VRM's humanoid table does), and whose values are
/// arrays of BVH joint names tried in order (a single string is one name).
/// Errors: JSON_* (byte offset), JOINT_MAP (JSON pointer: a value that is
/// no name list, more than 64 names, a name of 0 or over 256 bytes, a key
/// given twice through its humanoid name).
core::Result<std::map<std::string, std::vector<std::string>>> parse_bvh_joint_map(
    std::string_view json_text, const std::map<std::string, std::string>& humanoid = {});

/// Sampled poses of one animation; pose 0 is always the rest pose.
struct ActionSamples {
  std::vector<Pose> poses;         ///< rest pose, then one per sampled frame
  std::vector<double> times;       ///< seconds per pose (rest: -1)
  std::vector<std::string> names;  ///< "rest", "frame_12", "frame_12.5", …
  /// poses.size() x rig.morph_targets.size(), row-major, when the glTF
  /// animation drives the rig mesh node's "weights" (rest row: all 0); else empty.
  std::vector<float> morph_weights;
};

/// XYZ Euler angles in degrees of a rotation, the inverse of
/// quaternion_from_euler_xyz_degrees (q = qz * qy * qx): x and z in
/// [-180, 180], y in [-90, 90]. At gimbal lock (y = ±90°) z is 0 and x takes
/// the whole remaining turn. q need not be normalised (not zero).
std::array<double, 3> euler_xyz_degrees(const Quaternion& q);

/// Sample a glTF 2.0 animation (GLB or glTF JSON with data: buffers — the
/// rig's own file) for the input bones of spec: per bone the rotation channel
/// of its joint's node, interpolated as glTF 2.0 §3.11 says (STEP, LINEAR
/// with slerp for rotations, CUBICSPLINE Hermite), held at the first/last key
/// outside the keys. Pose rotation = rest_local⁻¹ × animated_local (rest_local
/// from rig.skeleton, so the rest pose gives identity and rest_local × pose
/// is the animated rotation, as pose_locals() composes it); a bone without a
/// rotation channel stays at rest. euler_deg is filled, curves are 0.
/// Translation and scale channels are ignored (the pose has rotations only).
/// The rig mesh node's "weights" channel fills morph_weights.
/// Errors: validate(spec)'s; inspect_model's; ACTION_FORMAT (FBX),
/// ACTION_CONTAINER (zip); ACTION_OPTION (fps, start/end not finite);
/// ACTION_BONE (a spec bone is not a rig joint); with a JSON pointer:
/// ACTION_ANIMATION (no such animation / no animations), ACTION_CHANNEL,
/// GLTF_ANIMATION (scene::read_gltf_track: key times not finite or
/// decreasing, output count, accessor type or component type), the glTF
/// document's accessor and buffer errors, ACTION_WEIGHTS (weights per
/// key ≠ the rig's morph targets); ACTION_RANGE (start/end outside
/// [0, last frame] or start > end), ACTION_TOO_MANY (frames > max_frames).
core::Result<ActionSamples> sample_gltf_action(core::Bytes gltf, const scene::Rig& rig,
                                               const InputSpec& spec, const ActionOptions& o);

/// Sample a BVH motion: spec bones are matched to BVH joints by name (the
/// names of o.bvh_joints[bone] first, then the bone's own); pose
/// rotation = the joint's local rotation in the frame (its rotation channels
/// in listed order, motion/forward_kinematics.h) relative to the BVH rest
/// (all channels 0, which is the identity). A fractional frame slerps between
/// its two neighbouring frames. times = frame × Frame Time; morph_weights empty.
/// Errors: validate(spec)'s; parse_bvh_header's and FrameReader's BVH_*;
/// ACTION_BONE (names every spec bone the BVH lacks); ACTION_OPTION;
/// ACTION_RANGE (also: the motion has no frames); ACTION_TOO_MANY.
core::Result<ActionSamples> sample_bvh_action(std::string_view bvh_text, const InputSpec& spec,
                                              const ActionOptions& o);

/// Training targets from morph-target animation. glTF applies morph targets
/// before skinning, so the frame's target mesh is skinned(rest + Σ wᵢ morphᵢ)
/// and its bind-space delta (inverse-skinned target − rest) is exactly
/// Σ wᵢ morphᵢ — computed so, without an inverse solve. Features are the
/// poses' in the given layout (engine layout: rest_local rotations of the
/// rig's joints). The LBS baseline is the distance between skinned rest and
/// the skinned target. Sample names are samples.names.
/// Errors: validate(spec)'s, TARGETS_EMPTY (no poses), TARGETS_BONE,
/// TARGETS_POSE, TARGETS_SAMPLE_COUNT (times/names/weights sizes do not match
/// the poses), ACTION_NO_WEIGHTS (no morph weights in samples, or a rig
/// without morph targets), DEFORM_*, DATASET_*.
core::Result<BuiltTargets> build_targets_from_morph_animation(
    const scene::Rig& rig, const InputSpec& spec, const ActionSamples& samples,
    FeatureLayout layout = FeatureLayout::kAxisAngle);

}  // namespace charkit::deformer
