// libFuzzer target: rig import (intake checks, tinygltf, our accessor and
// skeleton checks) on GLB / glTF JSON input; when a rig loads, its rest
// skinning matrices and LBS / DQS / Delta Mush run on it (every index the
// loader produced must be in range for the deformers). Limits are small so
// one input costs little.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "charkit/deform/skinning.h"
#include "charkit/scene/rig.h"

using namespace charkit;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > (1u << 20)) return 0;
  scene::RigOptions o;
  o.intake.use_assimp = false;
  o.intake.max_json_bytes = std::size_t{1} << 20;
  o.intake.max_count = 1u << 14;
  o.max_vertices = 1u << 14;
  o.max_joints = 256;
  o.max_morph_targets = 16;
  auto rig = scene::load_rig(core::Bytes(data, size), o);
  if (!rig) {
    (void)rig.error().to_string();
    return 0;
  }
  auto mats = scene::skinning_matrices(*rig, rig->skeleton.local_transforms);
  if (!mats) __builtin_trap();  // a loaded rig always has a consistent skeleton
  const deform::SkinView skin{rig->positions, rig->joints, rig->weights};
  std::vector<float> out(rig->positions.size());
  deform::SkinJob job{skin, rig->skeleton.joint_count(), *mats, out};
  // A loaded rig's skin and matrices always fit each other.
  if (!job.validate() || !job.run()) __builtin_trap();
  job.method = deform::SkinMethod::kDualQuaternion;
  if (!job.run({&core::serial_executor()})) __builtin_trap();
  auto dm = deform::DeltaMush::create(skin, rig->skeleton.joint_count(), rig->triangles,
                                      {.iterations = 2, .step = 0.5});
  if (!dm) __builtin_trap();  // triangle indices were checked by the loader
  (void)dm->deform(*mats, out);
  return 0;
}
