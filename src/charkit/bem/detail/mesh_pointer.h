// The JSON pointer of a manifest mesh, shared by the passes that report on
// meshes (plan, selection, pack, glTF export).
#pragma once

#include <cstdint>
#include <string>

namespace charkit::bem {

/// "/meshes/m": where mesh m sits in the manifest.
inline std::string mesh_ptr(std::uint32_t m) {
  return "/meshes/" + std::to_string(m);
}

}  // namespace charkit::bem
