// Internal to the option passes (check_options.cpp, check_appearances.cpp).
#pragma once

#include <optional>
#include <string>

#include "charkit/bem/detail/context.h"

namespace charkit::bem {

/// Size of a top-level array (meshes, textures) or nullopt when it is not an
/// array (its own pass reports that; references are then not checked).
std::optional<std::size_t> manifest_array_size(const Json& manifest, const char* key);

/// §5/§6 "operation" of an appearance entry or component-rule candidate:
/// keep / hide / replace with "mesh" < mesh_count. Q9: "mesh" on keep/hide is
/// an error. Returns the mesh of a valid replace.
std::optional<std::uint32_t> check_operation(Context& ctx, const Json& entry,
                                             const std::string& ptr,
                                             std::optional<std::size_t> mesh_count,
                                             const char* section);

/// §5: default_appearance_id and appearances (1.0 structure).
void check_appearances(Context& ctx);

}  // namespace charkit::bem
