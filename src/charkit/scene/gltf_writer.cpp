#include "charkit/scene/gltf_writer.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <span>
#include <string_view>

#include "charkit/core/json.h"
#include "charkit/scene/detail/gltf_appender.h"
#include "charkit/scene/error_codes.h"

namespace charkit::scene {
namespace {

using core::Json;
using core::make_error;

template <typename T>
bool count_ok(const std::vector<T>& values, std::size_t vertex_count) {
  return values.empty() || values.size() == vertex_count;
}

bool finite(const float* values, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    if (!std::isfinite(values[i])) {
      return false;
    }
  }
  return true;
}

template <std::size_t N>
bool all_finite_values(const std::vector<std::array<float, N>>& values) {
  for (const auto& v : values) {
    if (!finite(v.data(), N)) {
      return false;
    }
  }
  return true;
}

core::Status validate_mesh(const Scene& scene, const Mesh& mesh, const std::string& where) {
  const std::size_t vc = mesh.vertex_count();
  if (vc == 0) {
    return core::error_at_pointer(codes::SCENE_MESH_NO_VERTICES,
                                  "a mesh needs at least one position", where);
  }
  if (vc > std::numeric_limits<std::uint32_t>::max()) {
    return core::error_at_pointer(codes::SCENE_MESH_TOO_LARGE, "more than 2^32-1 vertices", where);
  }
  bool counts = count_ok(mesh.normals, vc) && count_ok(mesh.tangents, vc) &&
                count_ok(mesh.colors, vc) && count_ok(mesh.joints, vc) &&
                count_ok(mesh.weights, vc);
  for (const auto& set : mesh.texcoords) {
    counts = counts && set.size() == vc;
  }
  if (!counts) {
    return core::error_at_pointer(codes::SCENE_MESH_ATTRIBUTE_COUNT,
                                  "every present attribute needs one value per position", where);
  }
  if (mesh.joints.empty() != mesh.weights.empty()) {
    return core::error_at_pointer(codes::SCENE_MESH_SKIN_ATTRIBUTES,
                                  "joints and weights come together", where);
  }
  for (std::size_t c = 0; c < mesh.custom.size(); ++c) {
    const CustomAttribute& a = mesh.custom[c];
    const std::string cw = core::json_pointer_join(where + "/custom", c);
    // glTF 2.0 §3.7.2.1: application-specific attributes start with '_'.
    if (a.name.size() < 2 || a.name[0] != '_' || a.components < 1 || a.components > 4) {
      return core::error_at_pointer(
          codes::SCENE_MESH_CUSTOM_ATTRIBUTE,
          "a custom attribute needs a name starting with '_' and 1..4 components", cw);
    }
    if (a.values.size() != vc * a.components) {
      return core::error_at_pointer(codes::SCENE_MESH_ATTRIBUTE_COUNT,
                                    "every present attribute needs one value per position", cw);
    }
    if (!finite(a.values.data(), a.values.size())) {
      return core::error_at_pointer(codes::SCENE_MESH_NOT_FINITE,
                                    "a vertex attribute holds NaN or infinity", cw);
    }
  }
  for (std::size_t t = 0; t < mesh.targets.size(); ++t) {
    const MorphTarget& target = mesh.targets[t];
    const std::string tw = core::json_pointer_join(where + "/targets", t);
    if (target.positions.size() != vc)
      return core::error_at_pointer(codes::SCENE_MESH_ATTRIBUTE_COUNT,
                                    "a morph target needs one displacement per position", tw);
    if (!all_finite_values(target.positions) || !std::isfinite(target.weight))
      return core::error_at_pointer(codes::SCENE_MESH_NOT_FINITE,
                                    "a morph target holds NaN or infinity", tw);
  }
  // Non-finite floats cannot be written as JSON min/max and are invalid glTF data.
  bool all_finite = all_finite_values(mesh.positions) && all_finite_values(mesh.normals) &&
                    all_finite_values(mesh.tangents) && all_finite_values(mesh.colors) &&
                    all_finite_values(mesh.weights);
  for (const auto& set : mesh.texcoords) {
    all_finite = all_finite && all_finite_values(set);
  }
  if (!all_finite) {
    return core::error_at_pointer(codes::SCENE_MESH_NOT_FINITE,
                                  "a vertex attribute holds NaN or infinity", where);
  }
  if (!mesh.joints.empty()) {
    if (!scene.skeleton) {
      return core::error_at_pointer(codes::SCENE_MESH_NO_SKELETON,
                                    "a mesh with joints needs a scene skeleton", where);
    }
    const std::size_t jc = scene.skeleton->joint_count();
    for (const auto& j : mesh.joints) {
      for (std::uint16_t v : j) {
        if (v >= jc) {
          return core::error_at_pointer(codes::SCENE_MESH_JOINT_RANGE,
                                        "joint index " + std::to_string(v) + " >= joint count",
                                        where);
        }
      }
    }
  }
  if (mesh.primitives.empty()) {
    return core::error_at_pointer(codes::SCENE_MESH_NO_PRIMITIVES,
                                  "glTF needs at least one primitive per mesh", where);
  }
  for (std::size_t p = 0; p < mesh.primitives.size(); ++p) {
    const Primitive& prim = mesh.primitives[p];
    const std::string pw = core::json_pointer_join(where + "/primitives", p);
    if (prim.indices.empty() || prim.indices.size() % 3 != 0) {
      return core::error_at_pointer(codes::SCENE_MESH_INDEX_COUNT,
                                    "a triangle list needs a positive multiple of 3 indices", pw);
    }
    for (std::uint32_t i : prim.indices) {
      if (i >= vc) {
        return core::error_at_pointer(codes::SCENE_MESH_INDEX_RANGE,
                                      "index " + std::to_string(i) + " >= vertex count", pw);
      }
    }
    if (prim.material && *prim.material >= scene.materials.size()) {
      return core::error_at_pointer(codes::SCENE_MESH_MATERIAL, "material index out of range", pw);
    }
  }
  return core::Ok{};
}

core::Status validate_nodes(const Scene& scene) {
  const std::size_t n = scene.nodes.size();
  std::vector<std::int64_t> parent(n, -1);
  for (std::size_t i = 0; i < n; ++i) {
    const Node& node = scene.nodes[i];
    const std::string where = core::json_pointer_join("/nodes", i);
    if (node.mesh && *node.mesh >= scene.meshes.size()) {
      return core::error_at_pointer(codes::SCENE_NODE_MESH, "mesh index out of range", where);
    }
    for (std::uint32_t c : node.children) {
      if (c >= n || c == i) {
        return core::error_at_pointer(codes::SCENE_NODE_CHILD, "child index out of range or self",
                                      where);
      }
      if (parent[c] != -1) {
        return core::error_at_pointer(codes::SCENE_NODE_TWO_PARENTS,
                                      "node " + std::to_string(c) + " has two parents", where);
      }
      parent[c] = static_cast<std::int64_t>(i);
    }
  }
  // glTF node hierarchies are strict trees: walking up must end at a root.
  for (std::size_t i = 0; i < n; ++i) {
    std::int64_t at = parent[i];
    for (std::size_t steps = 0; at != -1; ++steps) {
      if (steps > n) {
        return core::error_at_pointer(codes::SCENE_NODE_CYCLE, "the node hierarchy has a cycle",
                                      core::json_pointer_join("/nodes", i));
      }
      at = parent[static_cast<std::size_t>(at)];
    }
  }
  for (std::size_t r = 0; r < scene.roots.size(); ++r) {
    const std::uint32_t root = scene.roots[r];
    if (root >= n || parent[root] != -1) {
      return core::error_at_pointer(codes::SCENE_NODE_ROOT,
                                    "a root must be an existing node without parent",
                                    core::json_pointer_join("/roots", r));
    }
    if (std::count(scene.roots.begin(), scene.roots.end(), root) != 1) {
      return core::error_at_pointer(codes::SCENE_NODE_ROOT, "a root is listed twice",
                                    core::json_pointer_join("/roots", r));
    }
  }
  return core::Ok{};
}

core::Status validate_skeleton(const Skeleton& s) {
  const std::size_t jc = s.joint_count();
  if (jc == 0 || s.parents.size() != jc) {
    return core::error_at_pointer(codes::SCENE_SKELETON_COUNT,
                                  "a skeleton needs joints, one parent each", "/skeleton");
  }
  if ((!s.local_transforms.empty() && s.local_transforms.size() != jc) ||
      (!s.inverse_bind_matrices.empty() && s.inverse_bind_matrices.size() != jc)) {
    return core::error_at_pointer(codes::SCENE_SKELETON_COUNT,
                                  "transforms and matrices: none or one per joint", "/skeleton");
  }
  for (std::size_t j = 0; j < jc; ++j) {
    const std::int32_t p = s.parents[j];
    if (p < -1 || p >= static_cast<std::int64_t>(j)) {
      return core::error_at_pointer(codes::SCENE_SKELETON_PARENT,
                                    "a parent must come before its child",
                                    core::json_pointer_join("/skeleton/parents", j));
    }
  }
  for (const Mat4& m : s.inverse_bind_matrices) {
    if (!finite(m.data(), m.size())) {
      return core::error_at_pointer(codes::SCENE_SKELETON_NOT_FINITE,
                                    "inverse bind matrix not finite", "/skeleton");
    }
  }
  return core::Ok{};
}

/// The binary buffer, its bufferViews and accessors, appended by the glTF
/// layer's one appender (detail/gltf_appender.h).
class BufferBuilder {
 public:
  BufferBuilder() : appender_(bytes_, views_, accessors_) {}
  BufferBuilder(const BufferBuilder&) = delete;
  BufferBuilder& operator=(const BufferBuilder&) = delete;

  std::uint32_t add_view(const void* data, std::size_t size, GltfViewUse use) {
    return static_cast<std::uint32_t>(appender_.view(data, size, use));
  }
  void pad() { appender_.pad(); }
  detail::GltfAppender& append() { return appender_; }
  std::vector<std::uint8_t>& bytes() { return bytes_; }
  Json& views() { return views_; }
  Json& accessors() { return accessors_; }

 private:
  std::vector<std::uint8_t> bytes_;
  Json views_ = Json::array();
  Json accessors_ = Json::array();
  detail::GltfAppender appender_;
};

class DocumentBuilder {
 public:
  explicit DocumentBuilder(BufferBuilder& buffer) : buffer_(buffer) {}

  template <typename T>
  std::uint32_t add_float_accessor(const std::vector<T>& values, const char* type,
                                   bool with_bounds = false) {
    (void)type;  // VEC2 … VEC4 follow from T
    constexpr std::size_t kComponents = std::tuple_size_v<T>;
    const std::span<const float> flat(values.empty() ? nullptr : values.front().data(),
                                      values.size() * kComponents);
    return static_cast<std::uint32_t>(
        buffer_.append().floats(flat, kComponents, with_bounds, GltfViewUse::kVertices));
  }

  std::uint32_t add_joints(const std::vector<std::array<std::uint16_t, 4>>& joints) {
    std::vector<std::uint32_t> wide;
    wide.reserve(4 * joints.size());
    for (const auto& j : joints) wide.insert(wide.end(), j.begin(), j.end());
    return static_cast<std::uint32_t>(
        buffer_.append().uints(wide, 4, GltfViewUse::kVertices, GltfComponent::kUnsignedShort));
  }

  std::uint32_t add_indices(const std::vector<std::uint32_t>& indices) {
    return static_cast<std::uint32_t>(
        buffer_.append().uints(indices, 1, GltfViewUse::kIndices, std::nullopt));
  }

  std::uint32_t add_matrices(const std::vector<Mat4>& matrices) {
    const std::span<const float> flat(matrices.empty() ? nullptr : matrices.front().data(),
                                      matrices.size() * 16);
    return static_cast<std::uint32_t>(
        buffer_.append().floats(flat, 16, false, GltfViewUse::kOther));
  }

  /// `values.size() / components` vertices of `components` floats each.
  std::uint32_t add_float_values(const std::vector<float>& values, std::uint32_t components) {
    return static_cast<std::uint32_t>(
        buffer_.append().floats(values, components, false, GltfViewUse::kVertices));
  }

  Json& accessors() { return buffer_.accessors(); }

 private:
  BufferBuilder& buffer_;
};

Json mesh_json(const Mesh& mesh, DocumentBuilder& doc) {
  Json attributes = Json::object();
  attributes["POSITION"] = doc.add_float_accessor(mesh.positions, "VEC3", true);
  if (!mesh.normals.empty()) {
    attributes["NORMAL"] = doc.add_float_accessor(mesh.normals, "VEC3");
  }
  if (!mesh.tangents.empty()) {
    attributes["TANGENT"] = doc.add_float_accessor(mesh.tangents, "VEC4");
  }
  for (std::size_t t = 0; t < mesh.texcoords.size(); ++t) {
    attributes["TEXCOORD_" + std::to_string(t)] = doc.add_float_accessor(mesh.texcoords[t], "VEC2");
  }
  if (!mesh.colors.empty()) {
    attributes["COLOR_0"] = doc.add_float_accessor(mesh.colors, "VEC4");
  }
  if (!mesh.joints.empty()) {
    attributes["JOINTS_0"] = doc.add_joints(mesh.joints);
    attributes["WEIGHTS_0"] = doc.add_float_accessor(mesh.weights, "VEC4");
  }
  for (const CustomAttribute& a : mesh.custom) {
    attributes[a.name] = doc.add_float_values(a.values, a.components);
  }
  // Morph targets: POSITION displacements with min/max (glTF 2.0 §3.7.2.2
  // requires them), shared by every primitive of the mesh.
  Json targets = Json::array();
  Json names = Json::array();
  Json weights = Json::array();
  for (const MorphTarget& t : mesh.targets) {
    targets.push_back(Json{{"POSITION", doc.add_float_accessor(t.positions, "VEC3", true)}});
    names.push_back(t.name);
    weights.push_back(t.weight);
  }
  Json out = Json::object();
  if (!mesh.name.empty()) {
    out["name"] = mesh.name;
  }
  if (!mesh.targets.empty()) {
    out["weights"] = std::move(weights);
    out["extras"] = Json{{"targetNames", std::move(names)}};
  }
  out["primitives"] = Json::array();
  for (const Primitive& prim : mesh.primitives) {
    Json p = Json::object();
    p["attributes"] = attributes;
    p["indices"] = doc.add_indices(prim.indices);
    if (prim.material) {
      p["material"] = *prim.material;
    }
    p["mode"] = 4;  // TRIANGLES
    if (!targets.empty()) p["targets"] = targets;
    out["primitives"].push_back(std::move(p));
  }
  return out;
}

void put_transform(Json& node, const Transform& t) {
  if (t.translation != Vec3{0.0F, 0.0F, 0.0F}) {
    node["translation"] = Json::array({t.translation[0], t.translation[1], t.translation[2]});
  }
  if (t.rotation != Vec4{0.0F, 0.0F, 0.0F, 1.0F}) {
    node["rotation"] = Json::array({t.rotation[0], t.rotation[1], t.rotation[2], t.rotation[3]});
  }
  if (t.scale != Vec3{1.0F, 1.0F, 1.0F}) {
    node["scale"] = Json::array({t.scale[0], t.scale[1], t.scale[2]});
  }
}

Json texture_info(std::uint32_t texture) {
  Json info = Json::object();
  info["index"] = texture;
  return info;
}

Json material_json(const Material& m) {
  Json out = Json::object();
  if (!m.name.empty()) {
    out["name"] = m.name;
  }
  Json pbr = Json::object();
  const Vec4& f = m.base_color_factor;
  if (f != Vec4{1.0F, 1.0F, 1.0F, 1.0F}) {
    pbr["baseColorFactor"] = Json::array({f[0], f[1], f[2], f[3]});
  }
  if (m.base_color_texture) {
    pbr["baseColorTexture"] = texture_info(*m.base_color_texture);
  }
  pbr["metallicFactor"] = m.metallic_factor;
  pbr["roughnessFactor"] = m.roughness_factor;
  out["pbrMetallicRoughness"] = std::move(pbr);
  if (m.normal_texture) {
    out["normalTexture"] = texture_info(*m.normal_texture);
  }
  if (m.double_sided) {
    out["doubleSided"] = true;
  }
  return out;
}

/// The document and the buffer; `bin_uri` empty for GLB.
core::Result<Json> build_document(const Scene& scene, const GltfOptions& options,
                                  const std::string& bin_uri, BufferBuilder& buffer) {
  if (auto st = validate_scene(scene); !st) {
    return std::move(st).error();
  }
  DocumentBuilder doc(buffer);
  Json root = Json::object();
  root["asset"] = Json::object({{"generator", options.generator}, {"version", "2.0"}});
  root["scene"] = 0;

  // Scene nodes first, then one node per skeleton joint.
  const std::size_t first_joint = scene.nodes.size();
  Json nodes = Json::array();
  const bool has_skin = scene.skeleton.has_value();
  for (const Node& node : scene.nodes) {
    Json n = Json::object();
    if (!node.name.empty()) {
      n["name"] = node.name;
    }
    if (node.mesh) {
      n["mesh"] = *node.mesh;
      if (has_skin && !scene.meshes[*node.mesh].joints.empty()) {
        n["skin"] = 0;
      }
    }
    if (!node.children.empty()) {
      n["children"] = node.children;
    }
    put_transform(n, node.transform);
    nodes.push_back(std::move(n));
  }
  std::vector<std::uint32_t> roots = scene.roots;
  if (roots.empty()) {
    std::vector<bool> is_child(scene.nodes.size(), false);
    for (const Node& node : scene.nodes) {
      for (std::uint32_t c : node.children) {
        is_child[c] = true;
      }
    }
    for (std::size_t i = 0; i < scene.nodes.size(); ++i) {
      if (!is_child[i]) {
        roots.push_back(static_cast<std::uint32_t>(i));
      }
    }
  }
  std::vector<std::uint32_t> root_joints;
  std::optional<std::uint32_t> skeleton_root;
  if (has_skin) {
    const Skeleton& s = *scene.skeleton;
    for (std::size_t j = 0; j < s.joint_count(); ++j) {
      Json n = Json::object();
      n["name"] = s.joint_names[j];
      std::vector<std::size_t> children;
      for (std::size_t c = j + 1; c < s.joint_count(); ++c) {
        if (s.parents[c] == static_cast<std::int32_t>(j)) {
          children.push_back(first_joint + c);
        }
      }
      if (!children.empty()) {
        n["children"] = children;
      }
      if (!s.local_transforms.empty()) {
        put_transform(n, s.local_transforms[j]);
      }
      nodes.push_back(std::move(n));
      if (s.parents[j] == -1) {
        root_joints.push_back(static_cast<std::uint32_t>(first_joint + j));
      }
    }
    if (root_joints.size() > 1) {
      // glTF wants the joints of a skin under one common root (skin.skeleton
      // is "the closest common root"); a flat skeleton gets a parent node.
      skeleton_root = static_cast<std::uint32_t>(nodes.size());
      Json n = Json::object();
      n["name"] = s.name.empty() ? "skeleton" : s.name;
      n["children"] = root_joints;
      nodes.push_back(std::move(n));
      roots.push_back(*skeleton_root);
    } else {
      roots.insert(roots.end(), root_joints.begin(), root_joints.end());
      skeleton_root = root_joints.front();
    }
  }
  Json scene_json = Json::object();
  if (!scene.name.empty()) {
    scene_json["name"] = scene.name;
  }
  scene_json["nodes"] = roots;
  root["scenes"] = Json::array({scene_json});
  if (!nodes.empty()) {
    root["nodes"] = std::move(nodes);
  }

  Json meshes = Json::array();
  for (const Mesh& mesh : scene.meshes) {
    meshes.push_back(mesh_json(mesh, doc));
  }
  if (!meshes.empty()) {
    root["meshes"] = std::move(meshes);
  }
  if (!scene.materials.empty()) {
    Json materials = Json::array();
    for (const Material& m : scene.materials) {
      materials.push_back(material_json(m));
    }
    root["materials"] = std::move(materials);
  }
  if (!scene.textures.empty()) {
    Json textures = Json::array();
    for (const Texture& t : scene.textures) {
      Json tj = Json::object();
      if (!t.name.empty()) {
        tj["name"] = t.name;
      }
      tj["sampler"] = 0;
      tj["source"] = t.image;
      textures.push_back(std::move(tj));
    }
    root["textures"] = std::move(textures);
    // LINEAR / LINEAR_MIPMAP_LINEAR / REPEAT: the usual sampling of game textures.
    root["samplers"] = Json::array({Json::object(
        {{"magFilter", 9729}, {"minFilter", 9987}, {"wrapS", 10497}, {"wrapT", 10497}})});
  }
  if (!scene.images.empty()) {
    Json images = Json::array();
    for (const Image& image : scene.images) {
      Json ij = Json::object();
      if (!image.name.empty()) {
        ij["name"] = image.name;
      }
      ij["bufferView"] = buffer.add_view(image.png.data(), image.png.size(), GltfViewUse::kOther);
      ij["mimeType"] = "image/png";
      images.push_back(std::move(ij));
    }
    root["images"] = std::move(images);
  }
  if (has_skin) {
    const Skeleton& s = *scene.skeleton;
    Json skin = Json::object();
    if (!s.name.empty()) {
      skin["name"] = s.name;
    }
    // Absent inverseBindMatrices would mean identity (glTF 2.0 skin.schema),
    // but some loaders (tinygltf 2.7) reject that, so identity is written out.
    skin["inverseBindMatrices"] = doc.add_matrices(
        s.inverse_bind_matrices.empty() ? std::vector<Mat4>(s.joint_count(), kIdentity4)
                                        : s.inverse_bind_matrices);
    Json joints = Json::array();
    for (std::size_t j = 0; j < s.joint_count(); ++j) {
      joints.push_back(first_joint + j);
    }
    skin["joints"] = std::move(joints);
    if (skeleton_root) {
      skin["skeleton"] = *skeleton_root;
    }
    root["skins"] = Json::array({std::move(skin)});
  }
  if (!doc.accessors().empty()) {
    root["accessors"] = std::move(doc.accessors());
  }
  buffer.pad();
  if (!buffer.bytes().empty()) {
    root["bufferViews"] = std::move(buffer.views());
    Json b = Json::object();
    b["byteLength"] = buffer.bytes().size();
    if (!bin_uri.empty()) {
      b["uri"] = bin_uri;
    }
    root["buffers"] = Json::array({std::move(b)});
  }
  return root;
}

}  // namespace

core::Status validate_scene(const Scene& scene) {
  if (scene.skeleton) {
    if (auto st = validate_skeleton(*scene.skeleton); !st) {
      return st;
    }
  }
  for (std::size_t m = 0; m < scene.meshes.size(); ++m) {
    if (auto st = validate_mesh(scene, scene.meshes[m], core::json_pointer_join("/meshes", m));
        !st) {
      return st;
    }
  }
  if (auto st = validate_nodes(scene); !st) {
    return st;
  }
  for (std::size_t m = 0; m < scene.materials.size(); ++m) {
    const Material& mat = scene.materials[m];
    if ((mat.base_color_texture && *mat.base_color_texture >= scene.textures.size()) ||
        (mat.normal_texture && *mat.normal_texture >= scene.textures.size())) {
      return core::error_at_pointer(codes::SCENE_MATERIAL_TEXTURE, "texture index out of range",
                                    core::json_pointer_join("/materials", m));
    }
  }
  for (std::size_t t = 0; t < scene.textures.size(); ++t) {
    if (scene.textures[t].image >= scene.images.size()) {
      return core::error_at_pointer(codes::SCENE_TEXTURE_IMAGE, "image index out of range",
                                    core::json_pointer_join("/textures", t));
    }
  }
  for (std::size_t i = 0; i < scene.images.size(); ++i) {
    if (scene.images[i].png.empty()) {
      return core::error_at_pointer(codes::SCENE_IMAGE_EMPTY, "an image needs PNG bytes",
                                    core::json_pointer_join("/images", i));
    }
  }
  return core::Ok{};
}

core::Result<std::vector<std::uint8_t>> assemble_glb(std::string json,
                                                     std::vector<std::uint8_t> bin) {
  while (json.size() % 4 != 0) {
    json.push_back(' ');  // GLB §4.4.3.1: JSON chunk padded with spaces
  }
  while (bin.size() % 4 != 0) {
    bin.push_back(0);  // §4.4.3.2: BIN chunk padded with zeros
  }
  const std::uint64_t total =
      12 + 8 + std::uint64_t{json.size()} + (bin.empty() ? 0 : 8 + std::uint64_t{bin.size()});
  if (total > std::numeric_limits<std::uint32_t>::max()) {
    return make_error(codes::SCENE_TOO_LARGE, "the GLB file would exceed 4 GiB");
  }
  std::vector<std::uint8_t> out;
  out.reserve(static_cast<std::size_t>(total));
  core::append_le<std::uint32_t>(out, gltf::kGlbMagic);
  core::append_le<std::uint32_t>(out, 2);
  core::append_le<std::uint32_t>(out, static_cast<std::uint32_t>(total));
  core::append_le<std::uint32_t>(out, static_cast<std::uint32_t>(json.size()));
  core::append_le<std::uint32_t>(out, gltf::kChunkJson);
  out.insert(out.end(), json.begin(), json.end());
  if (!bin.empty()) {
    core::append_le<std::uint32_t>(out, static_cast<std::uint32_t>(bin.size()));
    core::append_le<std::uint32_t>(out, gltf::kChunkBin);
    out.insert(out.end(), bin.begin(), bin.end());
  }
  return out;
}

core::Result<std::vector<std::uint8_t>> write_glb(const Scene& scene, const GltfOptions& options) {
  BufferBuilder buffer;
  auto doc = build_document(scene, options, "", buffer);
  if (!doc) {
    return std::move(doc).error();
  }
  return assemble_glb(doc->dump(), std::move(buffer.bytes()));
}

core::Result<GltfFiles> write_gltf(const Scene& scene, const std::string& bin_uri,
                                   const GltfOptions& options) {
  BufferBuilder buffer;
  auto doc = build_document(scene, options, bin_uri.empty() ? "buffer.bin" : bin_uri, buffer);
  if (!doc) {
    return std::move(doc).error();
  }
  GltfFiles files;
  files.json = doc->dump(2);
  files.bin = std::move(buffer.bytes());
  return files;
}

}  // namespace charkit::scene
