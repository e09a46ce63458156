#include "charkit/scene/detail/fbx_import.h"

#include <string>
#include <utility>

#include "charkit/core/error_codes.h"
#include "charkit/core/isolated.h"
#include "charkit/scene/error_codes.h"

#if CHARKIT_WITH_ASSIMP
#include <assimp/scene.h>

#include <assimp/Importer.hpp>
#endif

namespace charkit::scene::detail {

#if CHARKIT_WITH_ASSIMP
namespace {
core::Error at_start(core::Error e) {
  e.location = core::Location::at_offset(0);
  return e;
}
}  // namespace
#endif

core::Result<std::vector<std::uint8_t>> import_fbx_isolated(core::Bytes fbx,
                                                            const FbxSummary& summarise) {
#if !CHARKIT_WITH_ASSIMP
  (void)fbx;
  (void)summarise;
  return core::error_at_offset(
      codes::FBX_IMPORT_DISABLED,
      "this charkit was built without Assimp (CHARKIT_WITH_ASSIMP=OFF), which "
      "reads FBX models",
      0);
#else
  auto answer = core::run_isolated(
      [&]() -> core::Result<std::vector<std::uint8_t>> {
        Assimp::Importer importer;
        const aiScene* s = importer.ReadFileFromMemory(fbx.data(), fbx.size(), 0, "fbx");
        if (!s)
          return core::make_error(codes::FBX_IMPORT, std::string("Assimp cannot read the FBX: ") +
                                                         importer.GetErrorString());
        return summarise(*s);
      },
      core::IsolationLimits{}, "the Assimp FBX import");
  if (answer) return answer;
  if (core::is_isolation_error(answer.error()))
    return core::error_at_offset(codes::FBX_IMPORT,
                                 "Assimp could not read the FBX: " + answer.error().message, 0);
  return at_start(std::move(answer).error());
#endif
}

}  // namespace charkit::scene::detail
