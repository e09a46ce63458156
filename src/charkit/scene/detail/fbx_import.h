// FBX through Assimp in a child process: the one place that runs
// libassimp on a model file (intake and `model inspect` both call it).
// fbx_import.cpp needs Assimp; disabled/fbx_import.cpp stands in without it.
#pragma once

#include <cstdint>
#include <vector>

#include "charkit/core/bytes.h"
#include "charkit/core/result.h"

namespace charkit::scene::detail {

/// Imports `fbx` with Assimp in a child process (core::run_isolated, default
/// limits: libassimp 5.2 is not hardened against malformed files, so its
/// crash, hang or runaway allocation must end as an error, not end the
/// caller) and returns the child's compact answer for intake: the counts
/// (u64 vertices, triangles, morph targets, skins, bones, nodes) and the
/// generator's name, written with core::ByteWriter. Errors, all located at
/// offset 0: FBX_IMPORT (Assimp refused the file, or the child crashed,
/// stalled or ran out of time or memory), FBX_IMPORT_DISABLED (a build
/// without Assimp: disabled/fbx_import.cpp).
core::Result<std::vector<std::uint8_t>> import_fbx_counts(core::Bytes fbx);

/// The same import, answering the details `model inspect` shows (nodes,
/// meshes, skins, materials, textures, animations) as JSON text.
core::Result<std::vector<std::uint8_t>> import_fbx_details(core::Bytes fbx);

}  // namespace charkit::scene::detail
