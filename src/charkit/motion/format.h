// What a motion file holds, judged from its content, never its name: the one
// sniffer that `charkit motion` and the server's motion job share, so an
// upload is judged exactly as the CLI judges the same file (docs/motion.md
// §Formats).
#pragma once

#include <cstdint>
#include <string_view>

#include "charkit/core/result.h"

namespace charkit::motion {

enum class MotionFileKind : std::uint8_t { kBvh, kKeypointJson, kGltf, kGlb, kFbx, kUnknown };

/// Assimp's formats first (GLB magic, the FBX binary or ASCII header, JSON
/// whose top-level object has "asset"), then BVH (`HIERARCHY`, any case,
/// after an optional BOM and whitespace) and keypoint JSON (`{`).
MotionFileKind detect_motion_file(std::string_view bytes);

/// "bvh", "json", "gltf", "glb", "fbx" (the server's format names), "unknown".
std::string_view motion_file_kind_name(MotionFileKind kind);

/// glTF, GLB and FBX: read by load_assimp_motion* (glTF and GLB by the glTF
/// layer, FBX by Assimp).
constexpr bool is_assimp_kind(MotionFileKind kind) {
  return kind == MotionFileKind::kGltf || kind == MotionFileKind::kGlb ||
         kind == MotionFileKind::kFbx;
}

/// MOTION_FORMAT, naming what is accepted: the error for kUnknown.
core::Error unknown_motion_file_error();

}  // namespace charkit::motion
