// Stand-in for ../assimp_import.cpp in a build without Assimp
// (CHARKIT_WITH_ASSIMP=OFF; docs/building.md, "Optional dependencies"):
// FBX is recognised, not read; glTF and GLB motions are read by the glTF
// layer unless Assimp is asked for.
#include "charkit/motion/detail/motion_tracks.h"
#include "charkit/motion/error_codes.h"

namespace charkit::motion {

core::Result<AssimpMotion> detail::import_with_assimp(std::span<const std::uint8_t> /*bytes*/,
                                                      const std::filesystem::path& /*dir*/,
                                                      const AssimpMotionOptions& /*options*/) {
  return core::make_error(
      codes::MOTION_ASSIMP_DISABLED,
      "this charkit was built without Assimp (CHARKIT_WITH_ASSIMP=OFF), which "
      "reads FBX motions; glTF, GLB, BVH and keypoint JSON are read without it");
}

}  // namespace charkit::motion
