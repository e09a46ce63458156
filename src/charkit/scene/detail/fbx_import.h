// FBX through Assimp in a child process: the one place that runs
// libassimp on a model file (intake and `model inspect` both call it).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "charkit/core/bytes.h"
#include "charkit/core/result.h"

struct aiScene;

namespace charkit::scene::detail {

/// What the child makes of the imported scene: a compact answer (bytes) that
/// the parent decodes. It runs in the child, so it may use the scene freely
/// but must not touch the parent's state.
using FbxSummary = std::function<core::Result<std::vector<std::uint8_t>>(const aiScene&)>;

/// Imports `fbx` with Assimp in a child process (core::run_isolated, default
/// limits: libassimp 5.2 is not hardened against malformed files, so its
/// crash, hang or runaway allocation must end as an error, not end the
/// caller) and returns summarise(scene). Errors, all located at offset 0:
/// FBX_IMPORT (Assimp refused the file, or the child crashed, stalled or ran
/// out of time or memory), FBX_IMPORT_DISABLED (built with
/// CHARKIT_WITH_ASSIMP=OFF), or what summarise returned.
core::Result<std::vector<std::uint8_t>> import_fbx_isolated(core::Bytes fbx,
                                                            const FbxSummary& summarise);

}  // namespace charkit::scene::detail
