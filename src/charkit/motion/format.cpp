#include "charkit/motion/format.h"

#include "charkit/motion/assimp_motion.h"
#include "charkit/motion/keypoint_json.h"

namespace charkit::motion {

MotionFileKind detect_motion_file(std::string_view bytes) {
  switch (detect_assimp_format(bytes)) {
    case AssimpFormat::kGlb:
      return MotionFileKind::kGlb;
    case AssimpFormat::kGltf:
      return MotionFileKind::kGltf;
    case AssimpFormat::kFbxBinary:
    case AssimpFormat::kFbxAscii:
      return MotionFileKind::kFbx;
    case AssimpFormat::kUnknown:
      break;
  }
  switch (detect_motion_format(bytes)) {
    case MotionFormat::kBvh:
      return MotionFileKind::kBvh;
    case MotionFormat::kKeypointJson:
      return MotionFileKind::kKeypointJson;
    case MotionFormat::kUnknown:
      break;
  }
  return MotionFileKind::kUnknown;
}

std::string_view motion_file_kind_name(MotionFileKind kind) {
  switch (kind) {
    case MotionFileKind::kBvh:
      return "bvh";
    case MotionFileKind::kKeypointJson:
      return "json";
    case MotionFileKind::kGltf:
      return "gltf";
    case MotionFileKind::kGlb:
      return "glb";
    case MotionFileKind::kFbx:
      return "fbx";
    case MotionFileKind::kUnknown:
      break;
  }
  return "unknown";
}

core::Error unknown_motion_file_error() {
  return core::Error{
      "MOTION_FORMAT", "not a BVH file (HIERARCHY), FBX, glTF, GLB nor keypoint JSON ({)", {}};
}

}  // namespace charkit::motion
