// libFuzzer target: glTF JSON and GLB motions (FBX inputs are skipped): the
// glTF layer's reading (load_gltf_motion, through load_assimp_motion's
// dispatch), skeleton selection, the channels' samplers, resampling and the
// MediaPipe-33 conversion into a discarding sink, all in this process, so
// coverage guides the mutations. Small limits bound the work of one input.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "charkit/motion/assimp_motion.h"

using namespace charkit::motion;

// libassimp 5.2 (the Debian build, not instrumented) leaks on some of its
// own error paths (e.g. a 64-byte new[] in the glTF importer when an accessor
// is rejected); those leaks are Assimp's, not ours, so LeakSanitizer ignores
// allocations made from inside libassimp.
extern "C" const char* __lsan_default_suppressions() {
  return "leak:libassimp.so\n";
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const AssimpFormat format = detect_assimp_format(text);
  if (format != AssimpFormat::kGlb && format != AssimpFormat::kGltf) return 0;
  AssimpMotionOptions o;
  o.limits.max_bytes = 1 << 20;
  o.limits.max_nodes = 1024;
  o.limits.max_joints = 256;
  o.limits.max_frames = 2000;
  o.limits.max_work = 200'000;
  o.isolation.timeout = std::chrono::seconds(20);
  auto m = load_assimp_motion(std::span<const std::uint8_t>(data, size), o);
  if (!m) {
    (void)m.error().to_string();
    return 0;
  }
  for (std::size_t j = 0; j < m->joints.size(); ++j)
    if (m->joints[j].parent >= static_cast<int>(j)) __builtin_trap();  // parents come first
  if (m->frames == 0 || m->frames > o.limits.max_frames) __builtin_trap();
  auto r = convert_assimp_motion(*m, ConvertOptions{}, [](std::string_view) { return true; });
  if (r)
    for (std::size_t i = 0; i < kPointCount; ++i)
      if (r->mapping.points[i].joint >= static_cast<int>(m->joints.size())) __builtin_trap();
  return 0;
}
