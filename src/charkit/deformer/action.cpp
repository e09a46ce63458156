#include "charkit/deformer/action.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <numbers>
#include <optional>
#include <utility>

#include "charkit/core/json.h"
#include "charkit/deform/skinning.h"
#include "charkit/deformer/detail/common.h"
#include "charkit/deformer/error_codes.h"
#include "charkit/motion/bvh.h"
#include "charkit/motion/error_codes.h"
#include "charkit/motion/forward_kinematics.h"
#include "charkit/scene/gltf_animation.h"
#include "charkit/scene/gltf_document.h"
#include "charkit/scene/intake.h"

namespace charkit::deformer {

using core::Json;
using core::Location;
using core::make_error;

namespace {

// ---------------------------------------------------------------------------
// Quaternions (core/math.h; slerp is core::slerp, glTF 2.0 Appendix C)

/// A glTF rotation as a unit quaternion.
Quaternion to_unit_q(const scene::Vec4& v) {
  return core::normalize(to_q(v));
}

// ---------------------------------------------------------------------------
// Frames to sample

core::Status check_options(const ActionOptions& o, bool uses_fps) {
  if (!std::isfinite(o.start_frame) || !std::isfinite(o.end_frame))
    return make_error(codes::ACTION_OPTION, "start and end frames must be finite numbers");
  if (uses_fps && !(std::isfinite(o.fps) && o.fps > 0.0))
    return make_error(codes::ACTION_OPTION, "fps must be a finite number above 0");
  return core::Ok{};
}

std::string frame_text(double f) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f", f);
  std::string s = buf;
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  if (s == "-0") s = "0";
  return s;
}

// The frames of o within [0, last_frame], ascending.
core::Result<std::vector<double>> frame_list(const ActionOptions& o, double last_frame) {
  const double start = o.start_frame;
  const double end = o.end_frame == -1.0 ? last_frame : o.end_frame;
  constexpr double kSlack = 1e-9;
  if (start < 0.0 || end < start || end > last_frame + kSlack)
    return make_error(codes::ACTION_RANGE, "frames " + frame_text(start) + " to " +
                                               frame_text(end) +
                                               " are not within the animation's frames 0 to " +
                                               frame_text(last_frame) + " (with start <= end)");
  std::vector<double> frames;
  if (o.frames == 0) {
    const double span = std::floor(end - start + kSlack);
    if (span + 1.0 > static_cast<double>(o.max_frames))
      return make_error(codes::ACTION_TOO_MANY,
                        "frames " + frame_text(start) + " to " + frame_text(end) + " are " +
                            frame_text(span + 1.0) + " frames, over the limit of " +
                            std::to_string(o.max_frames));
    const auto n = static_cast<std::size_t>(span) + 1;
    frames.reserve(n);
    for (std::size_t i = 0; i < n; ++i) frames.push_back(start + static_cast<double>(i));
  } else {
    if (o.frames > o.max_frames)
      return make_error(codes::ACTION_TOO_MANY, std::to_string(o.frames) +
                                                    " frames asked for, over the limit of " +
                                                    std::to_string(o.max_frames));
    frames.reserve(o.frames);
    if (o.frames == 1) {
      frames.push_back(start);
    } else {
      const double den = static_cast<double>(o.frames - 1);
      for (std::size_t i = 0; i + 1 < o.frames; ++i)
        frames.push_back(start + (end - start) * (static_cast<double>(i) / den));
      frames.push_back(end);
    }
  }
  return frames;
}

// Pose 0 = rest; the rest of the poses are filled by the caller.
ActionSamples start_samples(const InputSpec& spec, std::size_t frame_count) {
  ActionSamples out;
  out.poses.reserve(frame_count + 1);
  out.times.reserve(frame_count + 1);
  out.names.reserve(frame_count + 1);
  out.poses.push_back(rest_pose(spec));
  out.times.push_back(-1.0);
  out.names.emplace_back("rest");
  return out;
}

void add_pose(ActionSamples& out, const InputSpec& spec, std::vector<Quaternion> rotations,
              double frame, double seconds) {
  Pose p;
  p.euler_deg.reserve(3 * rotations.size());
  for (const Quaternion& q : rotations) {
    const auto e = euler_xyz_degrees(q);
    p.euler_deg.insert(p.euler_deg.end(), e.begin(), e.end());
  }
  p.rotations = std::move(rotations);
  p.curves.assign(spec.curves.size(), 0.0);
  out.poses.push_back(std::move(p));
  out.times.push_back(seconds);
  out.names.push_back("frame_" + frame_text(frame));
}

std::string join_names(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "\"" : ", \"") + n + "\"";
  return s;
}

// ---------------------------------------------------------------------------
// glTF: container, buffers, accessors (glTF 2.0 §3.6, §4.4)

// The file as a checked glTF document (scene::GltfDocument: GLB or glTF
// JSON, GLB BIN chunk and base64 data: URIs; no external files).
using GltfFile = scene::GltfDocument;

core::Result<GltfFile> open_gltf(core::Bytes bytes) {
  scene::IntakeOptions io;
  io.use_assimp = false;
  auto model = scene::inspect_and_load_model(bytes, io);  // checked and loaded in one pass
  if (!model) return std::move(model).error();
  if (model->info.format == scene::ModelFormat::kFbx)
    return make_error(codes::ACTION_FORMAT,
                      "FBX animations are not read here (glTF / GLB / VRM only)");
  if (!model->document)
    return make_error(codes::ACTION_CONTAINER, "zipped glTF is not supported here");
  return std::move(*model->document);
}

// ---------------------------------------------------------------------------
// glTF animation samplers (§3.11), evaluated by the glTF layer's GltfTrack

core::Result<std::size_t> find_animation(const scene::GltfAsset& asset, const std::string& want) {
  if (asset.animations.empty())
    return core::error_at_pointer(codes::ACTION_ANIMATION, "the file has no animations",
                                  "/animations");
  if (want.empty()) return std::size_t{0};
  std::vector<std::string> names;
  for (std::size_t i = 0; i < asset.animations.size(); ++i) {
    const std::string& name = asset.animations[i].name;
    if (name == want) return i;
    names.push_back(name.empty() ? "#" + std::to_string(i) : name);
  }
  if (want.size() <= 9 &&
      std::all_of(want.begin(), want.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    const std::size_t i = std::stoul(want);
    if (i < asset.animations.size()) return i;
  }
  return core::error_at_pointer(
      codes::ACTION_ANIMATION,
      "no animation is named or numbered \"" + want + "\"; there are " + join_names(names),
      "/animations");
}

}  // namespace

std::array<double, 3> euler_xyz_degrees(const Quaternion& q) {
  constexpr double kDeg = 180.0 / std::numbers::pi;
  const core::Vec3d e = core::euler_xyz_from_quat(q);
  return {e[0] * kDeg, e[1] * kDeg, e[2] * kDeg};
}

core::Result<ActionSamples> sample_gltf_action(core::Bytes gltf, const scene::Rig& rig,
                                               const InputSpec& spec, const ActionOptions& o) {
  if (auto st = validate(spec); !st) return std::move(st).error();
  if (auto st = check_options(o, true); !st) return std::move(st).error();
  // Input bones → joint nodes and rest rotations.
  std::vector<std::size_t> nodes;
  std::vector<Quaternion> rest;
  std::vector<std::string> missing;
  for (const BoneInput& b : spec.bones) {
    const auto found = scene::find_joint(rig, b.name);
    const std::size_t j = found.value_or(0);
    if (!found || j >= rig.joint_nodes.size() || j >= rig.skeleton.local_transforms.size()) {
      missing.push_back(b.name);
      continue;
    }
    nodes.push_back(rig.joint_nodes[j]);
    rest.push_back(to_unit_q(rig.skeleton.local_transforms[j].rotation));
  }
  if (!missing.empty())
    return make_error(codes::ACTION_BONE,
                      "input bones not in the rig's skeleton: " + join_names(missing));

  auto file = open_gltf(gltf);
  if (!file) return std::move(file).error();
  GltfFile& f = *file;
  const scene::GltfAsset& asset = f.asset();
  auto anim_index = find_animation(asset, o.animation);
  if (!anim_index) return std::move(anim_index).error();
  const scene::GltfAnimation& anim = asset.animations[*anim_index];
  if (anim.samplers.empty() || anim.channels.empty())
    return core::error_at_pointer(codes::ACTION_CHANNEL, "an animation needs channels and samplers",
                                  anim.pointer);

  // Channels: the rotation sampler of each input bone, the weights sampler
  // of the rig's mesh node. A target may be used once per animation (§3.11).
  std::vector<std::optional<std::size_t>> bone_sampler(spec.bones.size());
  std::optional<std::size_t> weights_sampler;
  for (const scene::GltfChannel& ch : anim.channels) {
    if (!ch.node) continue;  // e.g. KHR_animation_pointer
    const std::size_t node = *ch.node;
    auto claim = [&](std::optional<std::size_t>& slot) -> core::Status {
      if (slot)
        return core::error_at_pointer(
            codes::ACTION_CHANNEL,
            "node " + std::to_string(node) + " has two " + ch.path_name + " channels", ch.pointer);
      slot = ch.sampler;
      return core::Ok{};
    };
    if (ch.path == scene::GltfPath::kRotation) {
      for (std::size_t b = 0; b < nodes.size(); ++b)
        if (nodes[b] == node)
          if (auto st = claim(bone_sampler[b]); !st) return std::move(st).error();
    } else if (ch.path == scene::GltfPath::kWeights && node == rig.node_index &&
               !rig.morph_targets.empty()) {
      if (auto st = claim(weights_sampler); !st) return std::move(st).error();
    }
  }

  // The animation runs to its latest key over every sampler.
  double duration = 0.0;
  for (const scene::GltfAnimationSampler& sampler : anim.samplers) {
    auto t = scene::read_gltf_key_times(f, sampler);
    if (!t) return std::move(t).error();
    duration = std::max(duration, static_cast<double>(t->back()));
  }
  const double last_frame = std::floor(duration * o.fps + 1e-9);
  auto frames = frame_list(o, last_frame);
  if (!frames) return std::move(frames).error();

  std::vector<std::optional<scene::GltfTrack>> tracks(spec.bones.size());
  for (std::size_t b = 0; b < spec.bones.size(); ++b) {
    if (!bone_sampler[b]) continue;
    auto t = scene::read_gltf_track(f, anim.samplers[*bone_sampler[b]], scene::GltfPath::kRotation);
    if (!t) return std::move(t).error();
    tracks[b] = std::move(*t);
  }
  std::optional<scene::GltfTrack> weights;
  const std::size_t morphs = rig.morph_targets.size();
  if (weights_sampler) {
    const scene::GltfAnimationSampler& sampler = anim.samplers[*weights_sampler];
    auto t = scene::read_gltf_track(f, sampler, scene::GltfPath::kWeights);
    if (!t) return std::move(t).error();
    if (t->width != morphs)
      return core::error_at_pointer(codes::ACTION_WEIGHTS,
                                    std::to_string(t->width) +
                                        " weights per key, the rig's mesh has " +
                                        std::to_string(morphs) + " morph targets",
                                    core::json_pointer_join("/accessors", sampler.output));
    weights = std::move(*t);
  }

  ActionSamples out = start_samples(spec, frames->size());
  if (weights) out.morph_weights.assign((frames->size() + 1) * morphs, 0.0F);
  std::vector<double> value(std::max<std::size_t>(4, morphs));
  for (std::size_t i = 0; i < frames->size(); ++i) {
    const double frame = (*frames)[i];
    const double seconds = frame / o.fps;
    std::vector<Quaternion> rotations(spec.bones.size());
    for (std::size_t b = 0; b < spec.bones.size(); ++b) {
      if (!tracks[b]) continue;  // not animated: stays at rest
      tracks[b]->evaluate(seconds, value);
      rotations[b] =
          core::normalize(multiply(conjugate(rest[b]), {value[0], value[1], value[2], value[3]}));
    }
    add_pose(out, spec, std::move(rotations), frame, seconds);
    if (weights) {
      weights->evaluate(seconds, value);
      for (std::size_t m = 0; m < morphs; ++m)
        out.morph_weights[(i + 1) * morphs + m] = static_cast<float>(value[m]);
    }
  }
  return out;
}

core::Result<std::map<std::string, std::vector<std::string>>> parse_bvh_joint_map(
    std::string_view json_text, const std::map<std::string, std::string>& humanoid) {
  auto parsed = core::parse_json_strict(json_text);
  if (!parsed) return std::move(parsed).error();
  const Json& j = *parsed;
  auto fail = [](const std::string& ptr, const std::string& msg) {
    return core::error_at_pointer(motion::codes::JOINT_MAP, ptr + ": " + msg, ptr);
  };
  if (!j.is_object())
    return core::error_at_pointer(
        motion::codes::JOINT_MAP,
        "the joint map must be a JSON object, found " + std::string(core::json_type_name(j)), "");
  constexpr std::size_t kMaxNames = 64;
  std::map<std::string, std::vector<std::string>> out;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string ptr = core::json_pointer_join("", it.key());
    std::string bone = it.key();
    if (auto h = humanoid.find(bone); h != humanoid.end()) bone = h->second;
    if (bone.empty() || bone.size() > 256) return fail(ptr, "bone name must be 1 to 256 bytes");
    if (out.contains(bone))
      return fail(ptr, "bone \"" + bone + "\" given twice (its own and its humanoid name)");
    std::vector<std::string> names;
    const Json& v = it.value();
    if (v.is_string()) {
      names.push_back(v.get<std::string>());
    } else if (v.is_array()) {
      if (v.empty()) return fail(ptr, "an empty list: give 1 to 64 joint names");
      if (v.size() > kMaxNames) return fail(ptr, "more than 64 joint names");
      std::size_t k = 0;
      for (const Json& n : v) {
        const std::string eptr = core::json_pointer_join(ptr, k++);
        if (!n.is_string()) return fail(eptr, "expected a joint name string");
        names.push_back(n.get<std::string>());
      }
    } else {
      return fail(ptr, "expected a joint name or an array of joint names");
    }
    for (std::size_t k = 0; k < names.size(); ++k)
      if (names[k].empty() || names[k].size() > 256)
        return fail(v.is_array() ? core::json_pointer_join(ptr, k) : ptr,
                    "joint name must be 1 to 256 bytes");
    out.emplace(std::move(bone), std::move(names));
  }
  return out;
}

core::Result<ActionSamples> sample_bvh_action(std::string_view bvh_text, const InputSpec& spec,
                                              const ActionOptions& o) {
  if (auto st = validate(spec); !st) return std::move(st).error();
  if (auto st = check_options(o, false); !st) return std::move(st).error();
  auto header = motion::parse_bvh_header(bvh_text);
  if (!header) return std::move(header).error();
  std::vector<std::size_t> joints;
  std::vector<std::string> missing;
  for (const BoneInput& b : spec.bones) {
    std::vector<std::string> tried;
    if (auto m = o.bvh_joints.find(b.name); m != o.bvh_joints.end()) tried = m->second;
    tried.push_back(b.name);
    auto it = header->joints.end();
    for (const std::string& name : tried) {
      it = std::find_if(header->joints.begin(), header->joints.end(),
                        [&](const motion::BvhJoint& j) { return !j.end_site && j.name == name; });
      if (it != header->joints.end()) break;
    }
    if (it == header->joints.end())
      missing.push_back(tried.size() == 1 ? b.name : b.name + " (tried " + join_names(tried) + ")");
    else
      joints.push_back(static_cast<std::size_t>(it - header->joints.begin()));
  }
  if (!missing.empty()) {
    constexpr std::size_t kListed = 64;  // a mocap skeleton may have hundreds
    std::vector<std::string> have;
    std::size_t more = 0;
    for (const motion::BvhJoint& j : header->joints)
      if (j.end_site)
        continue;
      else if (have.size() < kListed)
        have.push_back(j.name);
      else
        ++more;
    return make_error(codes::ACTION_BONE,
                      "input bones not in the BVH: " + join_names(missing) +
                          "; its joints: " + join_names(have) +
                          (more ? " and " + std::to_string(more) + " more" : std::string()) +
                          " (map names with --joint-map)");
  }

  // Pass 1 counts the frames (the reader holds one row at a time).
  std::vector<double> row(header->channel_count);
  std::uint64_t frame_count = 0;
  {
    motion::FrameReader reader(*header, bvh_text);
    for (;;) {
      auto more = reader.next(row);
      if (!more) return std::move(more).error();
      if (!*more) break;
      ++frame_count;
    }
  }
  if (frame_count == 0) return make_error(codes::ACTION_RANGE, "the BVH motion has no frames");
  auto frames = frame_list(o, static_cast<double>(frame_count - 1));
  if (!frames) return std::move(frames).error();

  // Pass 2: frames ascend, so each sample is met at the first row at or
  // after it; a fractional frame blends that row with the one before.
  ActionSamples out = start_samples(spec, frames->size());
  std::vector<Quaternion> previous(joints.size()), current(joints.size());
  motion::FrameReader reader(*header, bvh_text);
  std::size_t next = 0;
  for (std::uint64_t k = 0; next < frames->size(); ++k) {
    auto more = reader.next(row);
    if (!more) return std::move(more).error();
    if (!*more) break;
    for (std::size_t b = 0; b < joints.size(); ++b)
      current[b] = core::quat_from_mat3(motion::local_rotation(header->joints[joints[b]], row));
    const auto kd = static_cast<double>(k);
    for (; next < frames->size() && (*frames)[next] <= kd; ++next) {
      const double frame = (*frames)[next];
      std::vector<Quaternion> rotations = current;
      if (frame < kd) {  // k ≥ 1 here: frames ≥ 0 and those ≤ k − 1 are done
        const double s = frame - (kd - 1.0);
        for (std::size_t b = 0; b < joints.size(); ++b)
          rotations[b] = slerp(previous[b], current[b], s);
      }
      add_pose(out, spec, std::move(rotations), frame, frame * header->frame_time);
    }
    std::swap(previous, current);
  }
  return out;
}

core::Result<BuiltTargets> build_targets_from_morph_animation(const scene::Rig& rig,
                                                              const InputSpec& spec,
                                                              const ActionSamples& samples,
                                                              FeatureLayout layout) {
  if (auto st = validate(spec); !st) return std::move(st).error();
  const std::size_t n = samples.poses.size();
  if (n == 0) return make_error(codes::TARGETS_EMPTY, "no poses");
  const std::size_t morphs = rig.morph_targets.size();
  if (morphs == 0)
    return make_error(codes::ACTION_NO_WEIGHTS, "the rig's mesh has no morph targets");
  if (samples.morph_weights.empty())
    return make_error(codes::ACTION_NO_WEIGHTS,
                      "the samples carry no morph-target weights (the animation has no "
                      "\"weights\" channel on the rig's mesh node)");
  if (samples.morph_weights.size() != n * morphs)
    return make_error(codes::TARGETS_SAMPLE_COUNT,
                      std::to_string(samples.morph_weights.size()) + " morph weights for " +
                          std::to_string(n) + " poses x " + std::to_string(morphs) + " targets");
  if ((!samples.names.empty() && samples.names.size() != n) ||
      (!samples.times.empty() && samples.times.size() != n))
    return make_error(codes::TARGETS_SAMPLE_COUNT, "sample names or times do not match the poses");
  const std::size_t n3 = rig.positions.size();
  for (const auto& m : rig.morph_targets)
    if (m.position_deltas.size() != n3)
      return make_error(codes::TARGETS_VERTEX_COUNT,
                        "morph target \"" + m.name + "\" does not have one delta per vertex");
  const deform::SkinView rest_skin{rig.positions, rig.joints, rig.weights};
  const std::size_t joint_count = rig.skeleton.joint_count();
  if (auto st = rest_skin.validate(joint_count); !st) return std::move(st).error();
  std::vector<Quaternion> rest_local;
  for (const BoneInput& b : spec.bones) {
    const auto found = scene::find_joint(rig, b.name);
    const std::size_t j = found.value_or(0);
    if (!found || j >= rig.skeleton.local_transforms.size())
      return make_error(codes::TARGETS_BONE,
                        "input bone \"" + b.name + "\" is not a joint of the rig's skeleton");
    rest_local.push_back(to_unit_q(rig.skeleton.local_transforms[j].rotation));
  }

  DatasetBuilder builder(spec, layout, rig.mesh_name);
  std::vector<float> delta(n3), morphed(n3), lbs_rest(n3), lbs_target(n3);
  std::vector<float> features(layout == FeatureLayout::kEngine ? spec.engine_feature_count()
                                                               : spec.feature_count());
  std::vector<double> acc(n3);
  LbsBaselineAccumulator base;
  // The skin was validated above; the target skin differs in positions only.
  deform::SkinJob rest_lbs{rest_skin, joint_count, {}, lbs_rest};
  deform::SkinJob target_lbs{{morphed, rig.joints, rig.weights}, joint_count, {}, lbs_target};
  for (std::size_t i = 0; i < n; ++i) {
    // glTF 2.0 §3.7 (Morph Targets, Skins): morphs are applied before skinning, so the
    // bind-space correction of this frame is Σ wᵢ morphᵢ itself.
    std::fill(acc.begin(), acc.end(), 0.0);
    for (std::size_t m = 0; m < morphs; ++m) {
      const double w = static_cast<double>(samples.morph_weights[i * morphs + m]);
      if (w == 0.0) continue;
      const auto& d = rig.morph_targets[m].position_deltas;
      for (std::size_t k = 0; k < n3; ++k) acc[k] += w * static_cast<double>(d[k]);
    }
    for (std::size_t k = 0; k < n3; ++k) {
      delta[k] = static_cast<float>(acc[k]);
      morphed[k] = static_cast<float>(static_cast<double>(rig.positions[k]) + acc[k]);
    }
    auto locals = pose_locals(rig, spec, samples.poses[i]);
    if (!locals) return std::move(locals).error();
    auto mats = scene::skinning_matrices(rig, *locals);
    if (!mats) return std::move(mats).error();
    rest_lbs.matrices = *mats;
    target_lbs.matrices = *mats;
    if (auto st = rest_lbs.run(); !st) return std::move(st).error();
    if (auto st = target_lbs.run(); !st) return std::move(st).error();
    base.add(lbs_rest, lbs_target);
    auto fs = layout == FeatureLayout::kEngine
                  ? engine_pose_features(spec, samples.poses[i], rest_local, features)
                  : pose_features(spec, samples.poses[i], features);
    if (!fs) return std::move(fs).error();
    std::string name = samples.names.empty() ? "pose_" + std::to_string(i) : samples.names[i];
    if (auto st = builder.add_sample(features, delta, std::move(name)); !st)
      return std::move(st).error();
  }
  return BuiltTargets{std::move(builder).take(), base.baseline()};
}

}  // namespace charkit::deformer
