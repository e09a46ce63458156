// libFuzzer target: model intake (docs/model.md) on GLB, glTF JSON and zip
// input: detection, the GLB chunk walk, the glTF / VRM JSON survey, the zip
// URI resolution, and inspect_and_load_model checked against inspect_model.
// FBX stops after its header (Assimp is not fuzzed here: it is slow and not
// our code). Limits are small so one input costs little.
#include <cstddef>
#include <cstdint>

#include "charkit/scene/intake.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  charkit::scene::IntakeOptions o;
  o.use_assimp = false;
  o.name = "fuzz.vrm";  // exercises the name warnings too
  o.max_json_bytes = std::size_t{1} << 20;
  o.max_zip_entries = 64;
  o.max_zip_total_bytes = std::uint64_t{16} << 20;
  o.max_count = 1u << 14;
  const charkit::core::Bytes bytes(data, size);
  auto r = charkit::scene::inspect_model(bytes, o);
  // The one-pass entry point answers the same, or fails with the same code,
  // and keeps a document exactly for GLB and glTF JSON.
  auto loaded = charkit::scene::inspect_and_load_model(bytes, o);
  if (r.ok() != loaded.ok()) __builtin_trap();
  if (!r && r.error().code != loaded.error().code) __builtin_trap();
  if (r &&
      (loaded->info.nodes != r->nodes || loaded->info.vertices != r->vertices ||
       loaded->info.warnings.size() != r->warnings.size() ||
       loaded->document.has_value() != (r->container == charkit::scene::ModelContainer::kGlb ||
                                        r->container == charkit::scene::ModelContainer::kGltfJson)))
    __builtin_trap();
  if (r) {
    const auto& m = *r;
    // A VRM report always names its version; missing bones come from the required list.
    if (m.vrm && m.vrm->version != "0.x" && m.vrm->version != "1.0") __builtin_trap();
    if (m.vrm && m.vrm->missing_bones.size() >
                     charkit::scene::required_humanoid_bones(m.vrm->version).size())
      __builtin_trap();
    if (m.skinned != (m.skins > 0) && m.format != charkit::scene::ModelFormat::kFbx)
      __builtin_trap();
  } else {
    (void)r.error().to_string();
  }
  return 0;
}
