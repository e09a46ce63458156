// Internal to the §7 mesh pass: what the mesh-level checks hand to the draw
// checks (check_meshes.cpp -> check_draws.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "charkit/bem/detail/context.h"

namespace charkit::bem {

/// One mesh as far as its draws need it.
struct MeshDrawInput {
  std::size_t mesh_index = 0;
  std::string pointer;                        ///< "/meshes/i"
  std::optional<std::uint32_t> vertex_count;  ///< nullopt when broken
  std::optional<std::uint32_t> index_size;    ///< 2 or 4; nullopt when broken
  bool explicit_targets = false;              ///< 1.4 form: donors must share one resource
  std::string resource;                       ///< 1.4: resource of the first donor seen so far
  std::string resource_pointer;               ///< where that donor was named
};

/// §7 draws of one mesh: the 1.0 mesh-level index stream or the 1.1+
/// per-draw index payloads, materials, texture lists, conditions, 1.5
/// material overrides. Updates input.resource for the 1.4 donor rule.
void check_mesh_draws(Context& ctx, const Json& mesh, MeshDrawInput& input);

/// 1.4: a donor component (bone or material) of a mesh must live in the same
/// resource as every other donor of that mesh (reference note).
void check_donor_resource(Context& ctx, std::uint32_t component, const std::string& ptr,
                          MeshDrawInput& input);

}  // namespace charkit::bem
