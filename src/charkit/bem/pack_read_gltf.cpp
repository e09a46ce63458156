// bem::pack_scene: glTF meshes matched to the template's and read (detail/scene_packer.h).
#include "charkit/bem/detail/scene_packer.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string_view>

#include "charkit/bem/detail/vertex_format.h"
#include "charkit/bem/error_codes.h"
#include "charkit/bem/export_gltf.h"
#include "charkit/bem/packed_tbn.h"
#include "charkit/core/bytes.h"
#include "charkit/core/half.h"
#include "charkit/core/json.h"
#include "charkit/scene/dds.h"
#include "charkit/scene/image.h"
#include "charkit/scene/texture_decode.h"
#include "charkit/scene/texture_encode.h"

namespace charkit::bem::detail {

using core::Location;
using core::make_error;
using namespace vertex_attr;  // kFormatBytes, the semantics (detail/vertex_format.h)

core::Result<std::map<std::uint32_t, std::pair<std::uint32_t, std::optional<std::uint32_t>>>>
ScenePacker::match_meshes() {
  std::map<std::string, std::set<std::uint32_t>> meshes_of_component;
  for (const Component& c : model_.components)
    for (const Candidate& cand : c.candidates)
      if (cand.op == Operation::kReplace) meshes_of_component[c.mesh_name].insert(cand.mesh);
  // The node that places each glTF mesh (the first one).
  std::map<std::uint32_t, std::uint32_t> node_of_mesh;
  std::set<std::uint32_t> moved_nodes;  // nodes with a transform
  const scene::GltfAsset& a = asset();
  for (std::size_t n = 0; n < a.nodes.size(); ++n) {
    const scene::GltfNode& node = a.nodes[n];
    if (!node.mesh) continue;
    node_of_mesh.try_emplace(static_cast<std::uint32_t>(*node.mesh), static_cast<std::uint32_t>(n));
    if (has_transform(node)) moved_nodes.insert(static_cast<std::uint32_t>(n));
  }
  std::map<std::uint32_t, std::pair<std::uint32_t, std::optional<std::uint32_t>>> out;
  for (std::size_t g = 0; g < a.meshes.size(); ++g) {
    const std::string& where = a.meshes[g].pointer;
    std::optional<std::uint32_t> node;
    if (auto it = node_of_mesh.find(static_cast<std::uint32_t>(g)); it != node_of_mesh.end())
      node = it->second;
    std::optional<std::uint32_t> target;
    if (const std::string& name = a.meshes[g].name; !name.empty()) {
      if (name.rfind("mesh_", 0) == 0 && name.size() > 5 && name.size() < 16 &&
          std::all_of(name.begin() + 5, name.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        const unsigned long long m = std::stoull(name.substr(5));
        if (m >= model_.meshes.size())
          return core::error_at_pointer(codes::BEM_PACK_MESH,
                                        "glTF mesh \"" + name + "\" names template mesh " +
                                            std::to_string(m) + ", but the template has " +
                                            std::to_string(model_.meshes.size()),
                                        where + "/name");
        target = static_cast<std::uint32_t>(m);
      }
    }
    if (!target && node) {
      const scene::GltfNode& nj = a.nodes[*node];
      // The component: the node's extras.bem_component, else its name
      // (a component's mesh_name, or BEM_C<n> for component n).
      std::optional<std::string> component;
      if (nj.extras)
        if (auto it = nj.extras->find("bem_component"); it != nj.extras->end() && it->is_string())
          component = it->get<std::string>();
      if (!component && !nj.name.empty()) component = nj.name;
      if (component) {
        std::string key = *component;
        // BEM_C<n>: component n, as the public BEM project's Blender exporter names objects.
        constexpr std::string_view kPrefix = "BEM_C";  // not-an-error-code: a node name
        if (key.size() > 5 && key.size() < 12 && key.starts_with(kPrefix) &&
            std::all_of(key.begin() + 5, key.end(), [](char c) { return c >= '0' && c <= '9'; })) {
          const unsigned long long n = std::stoull(key.substr(5));
          if (n < model_.components.size()) key = model_.components[n].mesh_name;
        }
        auto it = meshes_of_component.find(key);
        if (it != meshes_of_component.end()) {
          if (it->second.size() > 1)
            return core::error_at_pointer(
                codes::BEM_PACK_MESH,
                "node \"" + it->first + "\" names a component that " +
                    std::to_string(it->second.size()) +
                    " template meshes replace: name the glTF mesh mesh_N to say which",
                "/nodes/" + std::to_string(*node) + "/name");
          target = *it->second.begin();
        } else if (std::any_of(model_.components.begin(), model_.components.end(),
                               [&](const Component& c) { return c.mesh_name == key; })) {
          // A component the template keeps or hides: no mesh of the
          // template gives its vertex layout, which is never guessed.
          return core::error_at_pointer(
              codes::BEM_PACK_MESH,
              "node \"" + *component + "\" names component \"" + key +
                  "\", which no mesh of the template replaces, so its vertex layout "
                  "is unknown: pack it with a JSON template that gives the layout "
                  "(docs/bem/pack.md), or into a package that replaces it",
              "/nodes/" + std::to_string(*node));
        }
      }
    }
    if (!target) {
      warn(codes::BEM_PACK_MESH_UNUSED,
           "glTF mesh " + std::to_string(g) +
               " matches no template mesh (by its name mesh_N or its "
               "node's component name); not packed",
           where);
      continue;
    }
    if (out.contains(*target))
      return core::error_at_pointer(codes::BEM_PACK_MESH,
                                    "glTF meshes " + std::to_string(out[*target].first) + " and " +
                                        std::to_string(g) + " both replace template mesh " +
                                        std::to_string(*target),
                                    where);
    out[*target] = {static_cast<std::uint32_t>(g), node};
  }
  // Only the nodes of packed meshes: a transform elsewhere changes nothing.
  for (const auto& [m, placed] : out)
    if (placed.second && moved_nodes.contains(*placed.second))
      warn(codes::BEM_PACK_NODE_TRANSFORM,
           "node " + std::to_string(*placed.second) +
               " has a transform, which is not applied: the vertices are packed as the mesh "
               "stores them (apply the transform in Blender before exporting)",
           "/nodes/" + std::to_string(*placed.second));
  return out;
}

bool ScenePacker::has_transform(const scene::GltfNode& node) {
  const auto differs = [](std::span<const double> values, std::initializer_list<double> identity) {
    std::size_t k = 0;
    for (double v : identity)
      if (std::fabs(values[k++] - v) > 1e-6) return true;
    return false;
  };
  if (node.matrix) return differs(*node.matrix, {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1});
  return differs(node.translation, {0, 0, 0}) || differs(node.rotation, {0, 0, 0, 1}) ||
         differs(node.scale, {1, 1, 1});
}

core::Result<std::vector<float>> ScenePacker::read_floats(std::size_t accessor,
                                                          std::size_t components, std::size_t count,
                                                          const std::string& where) {
  const scene::GltfAccessor& info = asset().accessors[accessor];
  if (info.components != components || info.count != count)
    return core::error_at_pointer(
        codes::BEM_PACK_ATTRIBUTE,
        "expected " + std::to_string(count) + " elements of " + std::to_string(components) +
            " components, the accessor has " + std::to_string(info.count) + " of " +
            std::to_string(info.components),
        where);
  auto values = doc_.read_accessor_floats(accessor);
  if (!values) return std::move(values).error();
  for (float v : *values)
    if (!std::isfinite(v))
      return core::error_at_pointer(codes::BEM_PACK_ATTRIBUTE, "a value is not finite", where);
  return values;
}

core::Result<SceneMesh> ScenePacker::read_scene_mesh(std::uint32_t g,
                                                     std::optional<std::uint32_t> node) {
  SceneMesh out;
  out.gltf_mesh = g;
  out.node = node;
  const scene::GltfMesh& mj = asset().meshes[g];
  const std::string& mptr = mj.pointer;
  if (node) out.node_name = asset().nodes[*node].name;
  struct Group {
    const scene::GltfAttributes* attributes;
    const std::vector<scene::GltfAttributes>* targets;
    std::size_t first = 0;
    std::size_t count = 0;
  };
  std::vector<Group> groups;         // vertices by attributes object
  std::set<std::string> names_seen;  // attribute names of the first group
  // Every primitive has the same number of targets (checked by the glTF layer).
  out.targets.assign(mj.target_count(), {});
  for (const scene::GltfPrimitive& pj : mj.primitives) {
    const std::string& pptr = pj.pointer;
    if (pj.mode != 4)
      return core::error_at_pointer(codes::BEM_PACK_PRIMITIVE,
                                    "only triangle primitives (mode 4) can be packed",
                                    pptr + "/mode");
    const std::vector<scene::GltfAttributes>& targets = pj.targets;
    const scene::GltfAttributes& attrs = pj.attributes;
    std::size_t first = 0;
    std::size_t group_vertices = 0;
    auto found = std::find_if(groups.begin(), groups.end(), [&](const Group& gr) {
      return *gr.attributes == attrs && *gr.targets == targets;
    });
    if (found != groups.end()) {
      first = found->first;
      group_vertices = found->count;
    } else {
      std::set<std::string> names;
      for (const scene::GltfAttribute& at : attrs.items) names.insert(at.semantic);
      if (groups.empty()) {
        names_seen = names;
      } else if (names != names_seen) {
        return core::error_at_pointer(
            codes::BEM_PACK_ATTRIBUTE,
            "the primitive has other attributes than the mesh's first primitive; every "
            "primitive of a mesh needs the same ones",
            pptr + "/attributes");
      }
      first = out.vertex_count;
      auto st = append_vertices(out, attrs, pptr + "/attributes");
      if (!st) return std::move(st).error();
      group_vertices = out.vertex_count - first;
      for (std::size_t k = 0; k < targets.size(); ++k) {
        const std::string tptr = pptr + "/targets/" + std::to_string(k);
        std::vector<float>& dst = out.targets[k];
        if (const auto pos = targets[k].find("POSITION")) {
          auto v = read_floats(*pos, 3, group_vertices, tptr + "/POSITION");
          if (!v) return std::move(v).error();
          dst.insert(dst.end(), v->begin(), v->end());
        } else {
          dst.resize(dst.size() + 3 * group_vertices, 0.0F);
        }
      }
      groups.push_back({&attrs, &targets, first, group_vertices});
    }
    SceneMesh::Primitive prim;
    prim.pointer = pptr;
    if (pj.material) prim.material = asset().materials[*pj.material].name;
    if (pj.indices) {
      auto idx = doc_.read_accessor_uints(*pj.indices);
      if (!idx) return std::move(idx).error();
      prim.indices = std::move(*idx);
    } else {
      prim.indices.resize(group_vertices);
      for (std::size_t i = 0; i < group_vertices; ++i)
        prim.indices[i] = static_cast<std::uint32_t>(i);
    }
    if (prim.indices.empty() || prim.indices.size() % 3 != 0)
      return core::error_at_pointer(codes::BEM_PACK_PRIMITIVE,
                                    "the primitive has " + std::to_string(prim.indices.size()) +
                                        " indices; triangles need a positive multiple of 3",
                                    pptr + "/indices");
    for (std::uint32_t& i : prim.indices) {
      if (i >= group_vertices)
        return core::error_at_pointer(codes::BEM_PACK_PRIMITIVE,
                                      "index " + std::to_string(i) +
                                          " is not below the vertex count " +
                                          std::to_string(group_vertices),
                                      pptr + "/indices");
      i += static_cast<std::uint32_t>(first);
    }
    out.primitives.push_back(std::move(prim));
  }
  if (!out.joints.empty()) {
    auto st = read_joint_names(out, mptr);
    if (!st) return std::move(st).error();
  }
  read_target_names(out, mj);
  return out;
}

void ScenePacker::read_target_names(SceneMesh& out, const scene::GltfMesh& mesh) {
  const std::size_t n = out.targets.size();
  if (n == 0) return;
  const std::vector<std::string>& names = mesh.target_names;
  const bool named =
      names.size() == n &&
      std::none_of(names.begin(), names.end(), [](const std::string& t) { return t.empty(); });
  for (std::size_t k = 0; k < n; ++k)
    out.target_names.push_back(named ? names[k] : "target_" + std::to_string(k));
  if (!named)
    warn(codes::BEM_PACK_MORPH_NAMES,
         "the mesh's morph targets have no names (mesh.extras.targetNames, one string each): "
         "the sliders are named target_0 ... target_" +
             std::to_string(n - 1),
         mesh.pointer);
  out.target_weights.assign(n, 0.0F);
  if (mesh.weights.size() == n)
    for (std::size_t k = 0; k < n; ++k)
      out.target_weights[k] = std::clamp(static_cast<float>(mesh.weights[k]), 0.0F, 1.0F);
}

core::Status ScenePacker::append_vertices(SceneMesh& out, const scene::GltfAttributes& attrs,
                                          const std::string& where) {
  const scene::GltfAsset& a = asset();
  const auto position = attrs.find("POSITION");
  if (!position)
    return core::error_at_pointer(codes::BEM_PACK_ATTRIBUTE, "the primitive has no POSITION",
                                  where);
  const std::size_t n = a.accessors[*position].count;
  if (out.vertex_count + n > options_.max_vertices || out.vertex_count + n > (1u << 20))
    return core::error_at_pointer(
        codes::BEM_PACK_LIMIT,
        "the mesh has more than " +
            std::to_string(std::min<std::uint64_t>(options_.max_vertices, 1u << 20)) +
            " vertices (BEM §11 allows 1,048,576 per mesh)",
        where + "/POSITION");
  auto append = [&](const std::string& name, std::size_t comps, std::vector<float>& dst,
                    bool required) -> core::Status {
    const auto accessor = attrs.find(name);
    if (!accessor) {
      if (required)
        return core::error_at_pointer(codes::BEM_PACK_ATTRIBUTE, "missing " + name, where);
      return core::Ok{};
    }
    auto v = read_floats(*accessor, comps, n, where + "/" + name);
    if (!v) return std::move(v).error();
    dst.insert(dst.end(), v->begin(), v->end());
    return core::Ok{};
  };
  if (auto st = append("POSITION", 3, out.positions, true); !st) return st;
  if (auto st = append("NORMAL", 3, out.normals, false); !st) return st;
  if (auto st = append("TANGENT", 4, out.tangents, false); !st) return st;
  if (const auto color = attrs.find("COLOR_0")) {
    const std::size_t comps = a.accessors[*color].components == 3 ? 3 : 4;
    auto v = read_floats(*color, comps, n, where + "/COLOR_0");
    if (!v) return std::move(v).error();
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t c = 0; c < 4; ++c)
        out.colors.push_back(c < comps ? (*v)[i * comps + c] : 1.0F);
  }
  for (std::size_t t = 0; t < 8; ++t) {
    const std::string name = "TEXCOORD_" + std::to_string(t);
    if (!attrs.find(name)) break;
    if (out.uvs.size() <= t) out.uvs.resize(t + 1);
    if (auto st = append(name, 2, out.uvs[t], true); !st) return st;
  }
  for (const scene::GltfAttribute& attr : attrs.items) {
    if (attr.semantic.empty() || attr.semantic[0] != '_') continue;
    const std::string ap = where + "/" + attr.semantic;
    const std::size_t comps = a.accessors[attr.accessor].components;
    if (comps < 1 || comps > 4)
      return core::error_at_pointer(codes::BEM_PACK_ATTRIBUTE,
                                    "a custom attribute needs 1 to 4 components", ap);
    auto v = read_floats(attr.accessor, comps, n, ap);
    if (!v) return std::move(v).error();
    auto& slot = out.custom[attr.semantic];
    if (!slot.second.empty() && slot.first != comps)
      return core::error_at_pointer(codes::BEM_PACK_ATTRIBUTE,
                                    "the components differ between primitives", ap);
    slot.first = static_cast<std::uint32_t>(comps);
    slot.second.insert(slot.second.end(), v->begin(), v->end());
  }
  const auto joints = attrs.find("JOINTS_0");
  if (joints.has_value() != attrs.find("WEIGHTS_0").has_value())
    return core::error_at_pointer(codes::BEM_PACK_ATTRIBUTE, "JOINTS_0 and WEIGHTS_0 go together",
                                  where);
  if (joints) {
    const scene::GltfAccessor& info = a.accessors[*joints];
    if (info.components != 4 || info.count != n)
      return core::error_at_pointer(codes::BEM_PACK_ATTRIBUTE, "JOINTS_0 needs one VEC4 per vertex",
                                    where + "/JOINTS_0");
    auto j = doc_.read_accessor_uints(*joints);
    if (!j) return std::move(j).error();
    out.joints.insert(out.joints.end(), j->begin(), j->end());
    if (auto st = append("WEIGHTS_0", 4, out.weights, true); !st) return st;
  }
  out.vertex_count += n;
  // Every group must give the same optional attributes (checked by names
  // in read_scene_mesh); the sizes then line up.
  return core::Ok{};
}

core::Status ScenePacker::read_joint_names(SceneMesh& out, const std::string& mptr) {
  const scene::GltfAsset& a = asset();
  if (!out.node || !a.nodes[*out.node].skin)
    return core::error_at_pointer(codes::BEM_PACK_JOINT,
                                  "the mesh has JOINTS_0 but its node has no skin", mptr);
  const scene::GltfSkin& skin = a.skins[*a.nodes[*out.node].skin];
  for (std::size_t n : skin.joints) {
    if (a.nodes[n].name.empty())
      return core::error_at_pointer(codes::BEM_PACK_JOINT,
                                    "a joint node needs a name (the game bone it stands for)",
                                    a.nodes[n].pointer);
    out.joint_names.push_back(a.nodes[n].name);
  }
  for (std::uint32_t j : out.joints)
    if (j >= out.joint_names.size())
      return core::error_at_pointer(codes::BEM_PACK_JOINT,
                                    "JOINTS_0 uses joint " + std::to_string(j) +
                                        " of a skin with " + std::to_string(out.joint_names.size()),
                                    mptr);
  return core::Ok{};
}

}  // namespace charkit::bem::detail
