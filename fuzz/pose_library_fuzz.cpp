// libFuzzer target: the pose-library JSON reader (deformer/bake.cpp) against a
// fixed spec (bones "hip", "knee", curve "smile"). Whatever it accepts must
// write and read back to the same poses.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "charkit/deformer/bake.h"

using namespace charkit;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > (1u << 18)) return 0;
  deformer::InputSpec spec;
  spec.bones.push_back({"hip", {}});
  spec.bones.push_back({"knee", {}});
  spec.curves.push_back({"smile", 0.0, 1.0});
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto lib = deformer::read_pose_library(text, spec);
  if (!lib) {
    (void)lib.error().to_string();
    return 0;
  }
  const std::string again = deformer::write_pose_library(spec, "mesh", *lib, {});
  auto back = deformer::read_pose_library(again, spec);
  if (!back || back->size() != lib->size()) __builtin_trap();
  for (std::size_t i = 0; i < lib->size(); ++i) {
    if ((*back)[i].name != (*lib)[i].name) __builtin_trap();
    for (std::size_t b = 0; b < 2; ++b) {
      const auto& p = (*lib)[i].pose.rotations[b];
      const auto& q = (*back)[i].pose.rotations[b];
      if (std::abs(p.x - q.x) > 1e-9 || std::abs(p.y - q.y) > 1e-9 || std::abs(p.z - q.z) > 1e-9 ||
          std::abs(p.w - q.w) > 1e-9)
        __builtin_trap();
    }
  }
  return 0;
}
