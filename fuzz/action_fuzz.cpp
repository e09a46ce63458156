// libFuzzer target: action sampling from a glTF animation (our own
// animation/accessor parser in deformer/action.cpp) on GLB / glTF JSON input.
// When the rig loads, every joint is an input bone and the animation is
// sampled (at most 32 frames); animated morph weights become targets.
// Sampled rotations must be unit quaternions and the rest pose comes first.
// The same bytes also go through the BVH joint-map parser
// (parse_bvh_joint_map): every accepted map has 1 to 64 names per bone,
// each of 1 to 256 bytes.
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "charkit/deformer/action.h"
#include "charkit/scene/rig.h"

using namespace charkit;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > (1u << 20)) return 0;
  const core::Bytes bytes(data, size);
  if (auto map = deformer::parse_bvh_joint_map(core::as_chars(bytes), {{"hips", "J_Bip_C_Hips"}})) {
    for (const auto& [bone, names] : *map) {
      if (bone.empty() || bone.size() > 256 || names.empty() || names.size() > 64) __builtin_trap();
      for (const std::string& n : names)
        if (n.empty() || n.size() > 256) __builtin_trap();
    }
  } else {
    (void)map.error().to_string();
  }
  scene::RigOptions o;
  o.intake.use_assimp = false;
  o.intake.max_json_bytes = std::size_t{1} << 20;
  o.intake.max_count = 1u << 14;
  o.max_vertices = 1u << 12;
  o.max_joints = 64;
  o.max_morph_targets = 8;
  auto rig = scene::load_rig(bytes, o);
  if (!rig) return 0;
  deformer::InputSpec spec;
  for (const std::string& n : rig->skeleton.joint_names) {
    if (n.empty()) continue;
    bool dup = false;
    for (const auto& b : spec.bones) dup = dup || b.name == n;
    if (!dup) spec.bones.push_back({n, {}});
  }
  deformer::ActionOptions ao;
  ao.frames = size % 2 == 0 ? 0 : 7;
  ao.max_frames = 32;
  auto s = deformer::sample_gltf_action(bytes, *rig, spec, ao);
  if (!s) {
    (void)s.error().to_string();
    return 0;
  }
  if (s->poses.empty() || s->names.size() != s->poses.size()) __builtin_trap();
  for (const deformer::Quaternion& q : s->poses[0].rotations)
    if (q.x != 0 || q.y != 0 || q.z != 0 || q.w != 1) __builtin_trap();  // rest first
  for (const deformer::Pose& p : s->poses)
    for (const deformer::Quaternion& q : p.rotations) {
      const double n = q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w;
      if (!(std::fabs(n - 1.0) < 1e-3)) __builtin_trap();
    }
  if (!s->morph_weights.empty()) {
    auto t = deformer::build_targets_from_morph_animation(*rig, spec, *s);
    if (t) (void)t->dataset.sample_count;
  }
  return 0;
}
