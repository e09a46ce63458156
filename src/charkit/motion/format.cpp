#include "charkit/motion/format.h"

#include "charkit/core/enum_names.h"
#include "charkit/motion/assimp_motion.h"
#include "charkit/motion/error_codes.h"
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

namespace {
constexpr core::EnumNames<MotionFileKind, 6> kKindNames{{{{MotionFileKind::kUnknown, "unknown"},
                                                          {MotionFileKind::kBvh, "bvh"},
                                                          {MotionFileKind::kKeypointJson, "json"},
                                                          {MotionFileKind::kGltf, "gltf"},
                                                          {MotionFileKind::kGlb, "glb"},
                                                          {MotionFileKind::kFbx, "fbx"}}}};
}  // namespace

std::string_view motion_file_kind_name(MotionFileKind kind) {
  return kKindNames.name(kind);
}

core::Error unknown_motion_file_error() {
  return core::Error{
      codes::MOTION_FORMAT, "not a BVH file (HIERARCHY), FBX, glTF, GLB nor keypoint JSON ({)", {}};
}

}  // namespace charkit::motion
