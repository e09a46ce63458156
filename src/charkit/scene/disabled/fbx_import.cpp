// Stand-in for ../fbx_import.cpp in a build without Assimp
// (CHARKIT_WITH_ASSIMP=OFF; docs/building.md, "Optional dependencies"):
// FBX files are recognised by their header, not read.
#include "charkit/scene/detail/fbx_import.h"
#include "charkit/scene/error_codes.h"

namespace charkit::scene::detail {

namespace {
core::Error without_assimp() {
  return core::error_at_offset(
      codes::FBX_IMPORT_DISABLED,
      "this charkit was built without Assimp (CHARKIT_WITH_ASSIMP=OFF), which reads FBX models", 0);
}
}  // namespace

core::Result<std::vector<std::uint8_t>> import_fbx_counts(core::Bytes /*fbx*/) {
  return without_assimp();
}

core::Result<std::vector<std::uint8_t>> import_fbx_details(core::Bytes /*fbx*/) {
  return without_assimp();
}

}  // namespace charkit::scene::detail
