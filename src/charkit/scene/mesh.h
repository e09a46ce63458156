// Scene meshes: vertex attributes as plain arrays, one index list per
// primitive. The general shape every exporter and renderer in charkit fills
// (BEM export today; motion, deformer and render tools later). Attributes a
// mesh does not have stay empty; the ones it has hold one entry per vertex.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "charkit/core/math.h"

namespace charkit::scene {

// The maths types are core/math.h's (float).
using Vec2 = core::Vec2f;
using Vec3 = core::Vec3f;
using Vec4 = core::Vec4f;
/// Column-major 4x4 matrix, as glTF stores it.
using Mat4 = core::Mat4f;

inline constexpr Mat4 kIdentity4 = core::identity4<float>();

/// One triangle list drawn with one material.
struct Primitive {
  std::vector<std::uint32_t> indices;     ///< triangles; every index < vertex count
  std::optional<std::uint32_t> material;  ///< index into Scene::materials
};

/// A vertex attribute glTF has no semantic for, written as an
/// application-specific attribute: `name` starts with '_' (glTF 2.0
/// §3.7.2.1), `components` (1..4) floats per vertex in `values`.
struct CustomAttribute {
  std::string name;
  std::uint32_t components = 4;
  std::vector<float> values;  ///< vertex count × components
};

/// A morph target (a Blender shape key): a POSITION displacement per vertex,
/// shown at `weight` (glTF mesh.weights) by viewers; the name goes to
/// mesh.extras.targetNames, where Blender's importer and exporter keep it.
struct MorphTarget {
  std::string name;
  std::vector<Vec3> positions;  ///< vertex count displacements
  float weight = 0.0F;
};

struct Mesh {
  std::string name;
  std::vector<Vec3> positions;  ///< required, defines the vertex count
  std::vector<Vec3> normals;
  std::vector<Vec4> tangents;                        ///< xyz + handedness sign in w
  std::vector<std::vector<Vec2>> texcoords;          ///< set n -> TEXCOORD_n
  std::vector<Vec4> colors;                          ///< linear RGBA, 0..1
  std::vector<std::array<std::uint16_t, 4>> joints;  ///< indices into the skin's joints
  std::vector<Vec4> weights;
  std::vector<CustomAttribute> custom;  ///< written as `_NAME` attributes
  std::vector<MorphTarget> targets;     ///< every primitive gets them all
  std::vector<Primitive> primitives;

  std::size_t vertex_count() const { return positions.size(); }
};

}  // namespace charkit::scene
