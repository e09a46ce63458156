// What is inside a character model, beyond inspect_model's counts: the node
// tree, meshes with their primitives, vertex / triangle counts, morph target
// names and bounding boxes, skins with joint names, materials, textures,
// animations (duration, channels) and the VRM humanoid bone → node map
// (docs/model.md "Details"). glTF / GLB / VRM are read with GltfDocument;
// FBX through Assimp in a child process, as inspect_model does.
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "charkit/core/bytes.h"
#include "charkit/core/result.h"
#include "charkit/scene/intake.h"

namespace charkit::scene {

/// The details as one JSON object (the schema is in docs/model.md):
/// {"nodes", "meshes", "skins", "materials", "textures", "animations",
/// "humanoid"}. `model` is inspect_and_load_model's answer for the same bytes
/// (the file has passed its checks); a glTF is read from its document, which
/// is not parsed again. Errors: MODEL_DETAILS_ZIP (a glTF in a zip),
/// GltfDocument's accessor and buffer errors, and FBX_IMPORT.
core::Result<nlohmann::ordered_json> model_details(core::Bytes bytes, InspectedModel& model,
                                                   const IntakeOptions& options = {});

/// The details as indented text, one section per kind (for a terminal).
std::string model_details_text(const nlohmann::ordered_json& details);

}  // namespace charkit::scene
