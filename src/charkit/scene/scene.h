// A scene: nodes referring to meshes, an optional skeleton that skinned
// meshes bind to, and the materials, textures and images they use.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "charkit/scene/material.h"
#include "charkit/scene/mesh.h"
#include "charkit/scene/skeleton.h"

namespace charkit::scene {

struct Node {
  std::string name;
  std::optional<std::uint32_t> mesh;    ///< index into Scene::meshes
  std::vector<std::uint32_t> children;  ///< indices into Scene::nodes
  Transform transform;
};

struct Scene {
  std::string name;
  std::vector<Node> nodes;
  /// Nodes of the scene root; empty means every node that is no one's child.
  std::vector<std::uint32_t> roots;
  std::vector<Mesh> meshes;
  std::vector<Material> materials;
  std::vector<Texture> textures;
  std::vector<Image> images;
  /// When present, every node whose mesh has joints is skinned to it.
  std::optional<Skeleton> skeleton;
};

}  // namespace charkit::scene
