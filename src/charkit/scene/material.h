// Materials, textures and images of a scene, as glTF models them: an image
// holds encoded PNG bytes, a texture refers to an image, a material to
// textures.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "charkit/scene/mesh.h"

namespace charkit::scene {

struct Image {
  std::string name;
  std::vector<std::uint8_t> png;  ///< a complete PNG file
};

struct Texture {
  std::string name;
  std::uint32_t image = 0;  ///< index into Scene::images
};

struct Material {
  std::string name;
  Vec4 base_color_factor{1.0F, 1.0F, 1.0F, 1.0F};
  float metallic_factor = 0.0F;
  float roughness_factor = 1.0F;
  std::optional<std::uint32_t> base_color_texture;  ///< index into Scene::textures
  std::optional<std::uint32_t> normal_texture;      ///< index into Scene::textures
  bool double_sided = false;
};

}  // namespace charkit::scene
