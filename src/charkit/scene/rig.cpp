#include "charkit/scene/rig.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <string>
#include <utility>

#include <map>

#include "charkit/core/json.h"
#include "charkit/core/mapped_file.h"
#include "charkit/core/math.h"
#include "charkit/scene/error_codes.h"
#include "charkit/scene/gltf_document.h"

namespace charkit::scene {

using core::Location;
using core::make_error;

namespace {

// The glTF objects the rig reads, with the field names tinygltf gave them
// (tinygltf parsed them before scene::GltfDocument did); filled from the
// document's GltfAsset by to_model.
namespace tg {
struct Node {
  std::string name;
  int mesh = -1;
  int skin = -1;
  std::vector<int> children;
  std::vector<double> matrix, translation, rotation, scale;
};
struct Primitive {
  std::map<std::string, int> attributes;
  int indices = -1;
  int mode = -1;
  std::vector<std::map<std::string, int>> targets;
};
struct Mesh {
  std::string name;
  std::vector<Primitive> primitives;
  std::map<std::size_t, std::string> target_names;  ///< extras.targetNames entries that are strings
};
struct Skin {
  std::string name;
  std::vector<int> joints;
  int inverseBindMatrices = -1;
};
struct Model {
  std::vector<Node> nodes;
  std::vector<Mesh> meshes;
  std::vector<Skin> skins;
};
}  // namespace tg

constexpr int kModeTriangles = 4;

using Mat4d = core::Mat4d;

const Mat4d kIdentityD = core::identity4<double>();

Mat4d mul(const Mat4d& a, const Mat4d& b) {
  return core::mul(a, b);
}

Mat4d to_d(const Mat4& m) {
  return core::cast<double>(m);
}

Mat4 to_f(const Mat4d& m) {
  return core::cast<float>(m);
}

Mat4d trs_matrix(const Transform& t) {
  return core::compose(core::Trs<double>{core::cast<double>(t.translation),
                                         core::quat_from_xyzw<double>(t.rotation),
                                         core::cast<double>(t.scale)});
}

// TRS of a node matrix (core::decompose: mirrors negate the x scale; shear
// is not representable).
Transform decompose(const Mat4d& m) {
  const core::Trs<double> d = core::decompose(m);
  return {core::cast<float>(d.translation), core::xyzw<float>(d.rotation),
          core::cast<float>(d.scale)};
}

Transform node_transform(const tg::Node& n) {
  if (n.matrix.size() == 16) {
    Mat4d m{};
    for (std::size_t i = 0; i < 16; ++i) m[i] = n.matrix[i];
    return decompose(m);
  }
  Transform t;
  if (n.translation.size() == 3)
    for (std::size_t i = 0; i < 3; ++i) t.translation[i] = static_cast<float>(n.translation[i]);
  if (n.rotation.size() == 4)
    for (std::size_t i = 0; i < 4; ++i) t.rotation[i] = static_cast<float>(n.rotation[i]);
  if (n.scale.size() == 3)
    for (std::size_t i = 0; i < 3; ++i) t.scale[i] = static_cast<float>(n.scale[i]);
  return t;
}

Mat4d node_matrix(const tg::Node& n) {
  if (n.matrix.size() == 16) {
    Mat4d m{};
    for (std::size_t i = 0; i < 16; ++i) m[i] = n.matrix[i];
    return m;
  }
  return trs_matrix(node_transform(n));
}

// An accessor's elements as doubles (count × components), read by
// GltfDocument (byte ranges, stride, normalised integers, sparse), after the
// type and component type the rig expects are checked here.
core::Result<std::vector<double>> read_accessor(
    GltfDocument& doc, int index, const char* type,
    std::initializer_list<GltfComponent> component_types, const std::string& where) {
  if (index < 0 || static_cast<std::size_t>(index) >= doc.asset().accessors.size())
    return core::error_at_pointer(
        codes::RIG_ACCESSOR, "accessor index " + std::to_string(index) + " out of range", where);
  const auto ai = static_cast<std::size_t>(index);
  auto a = doc.accessor(ai);
  if (!a) return std::move(a).error();
  const std::string ap = core::json_pointer_join("/accessors", ai);
  if (a->type != type)
    return core::error_at_pointer(codes::RIG_ACCESSOR, "unexpected accessor type", ap + "/type");
  if (std::find(component_types.begin(), component_types.end(), a->component_type) ==
      component_types.end())
    return core::error_at_pointer(codes::RIG_ACCESSOR, "unexpected component type",
                                  ap + "/componentType");
  return doc.read_accessor_doubles(ai);
}

// --- The objects above from the document's typed elements (GltfAsset,
// which checked every index and member type when the document loaded).

std::map<std::string, int> attribute_map(const GltfAttributes& attrs) {
  std::map<std::string, int> out;
  for (const GltfAttribute& a : attrs.items) out[a.semantic] = static_cast<int>(a.accessor);
  return out;
}

int index_or_none(const std::optional<std::size_t>& i) {
  return i ? static_cast<int>(*i) : -1;
}

tg::Model to_model(const GltfAsset& a) {
  tg::Model m;
  for (const GltfNode& gn : a.nodes) {
    tg::Node n;
    n.name = gn.name;
    n.mesh = index_or_none(gn.mesh);
    n.skin = index_or_none(gn.skin);
    for (std::size_t c : gn.children) n.children.push_back(static_cast<int>(c));
    if (gn.matrix) {
      n.matrix.assign(gn.matrix->begin(), gn.matrix->end());
    } else {
      n.translation.assign(gn.translation.begin(), gn.translation.end());
      n.rotation.assign(gn.rotation.begin(), gn.rotation.end());
      n.scale.assign(gn.scale.begin(), gn.scale.end());
    }
    m.nodes.push_back(std::move(n));
  }
  for (const GltfMesh& gm : a.meshes) {
    tg::Mesh mesh;
    mesh.name = gm.name;
    for (const GltfPrimitive& gp : gm.primitives) {
      tg::Primitive prim;
      prim.attributes = attribute_map(gp.attributes);
      prim.indices = index_or_none(gp.indices);
      prim.mode = static_cast<int>(gp.mode);
      for (const GltfAttributes& t : gp.targets) prim.targets.push_back(attribute_map(t));
      mesh.primitives.push_back(std::move(prim));
    }
    // Target names: mesh.extras.targetNames (a common exporter convention).
    for (std::size_t t = 0; t < gm.target_names.size(); ++t)
      mesh.target_names[t] = gm.target_names[t];
    m.meshes.push_back(std::move(mesh));
  }
  for (const GltfSkin& gs : a.skins) {
    tg::Skin skin;
    skin.name = gs.name;
    skin.inverseBindMatrices = index_or_none(gs.inverse_bind_matrices);
    for (std::size_t j : gs.joints) skin.joints.push_back(static_cast<int>(j));
    m.skins.push_back(std::move(skin));
  }
  return m;
}

int attribute(const tg::Primitive& p, const char* name) {
  auto it = p.attributes.find(name);
  return it == p.attributes.end() ? -1 : it->second;
}

int target_attribute(const std::map<std::string, int>& t, const char* name) {
  auto it = t.find(name);
  return it == t.end() ? -1 : it->second;
}

/// Nodes with a mesh and a skin, both in range, in node order.
std::vector<SkinnedMeshNode> skinned_nodes(const tg::Model& m) {
  std::vector<SkinnedMeshNode> out;
  for (std::size_t i = 0; i < m.nodes.size(); ++i) {
    const auto& n = m.nodes[i];
    if (n.mesh < 0 || n.skin < 0 || static_cast<std::size_t>(n.mesh) >= m.meshes.size() ||
        static_cast<std::size_t>(n.skin) >= m.skins.size())
      continue;
    SkinnedMeshNode c;
    c.node = i;
    c.node_name = n.name;
    c.mesh_name = m.meshes[static_cast<std::size_t>(n.mesh)].name;
    out.push_back(std::move(c));
  }
  return out;
}

// The file checked by model intake and loaded in the same pass (GLB or
// glTF JSON; FBX and zipped glTF are refused).
core::Result<GltfDocument> rig_document(core::Bytes bytes, const IntakeOptions& intake) {
  auto model = inspect_and_load_model(bytes, intake);
  if (!model) return std::move(model).error();
  if (model->info.format == ModelFormat::kFbx)
    return make_error(codes::RIG_FORMAT, "FBX rigs are not supported; convert to glTF first");
  if (!model->document)
    return make_error(codes::RIG_CONTAINER, "zipped glTF is not supported for rigs; use GLB");
  return std::move(*model->document);
}

}  // namespace

std::string SkinnedMeshNode::label() const {
  if (!mesh_name.empty()) return mesh_name;
  if (!node_name.empty()) return node_name;
  return "node " + std::to_string(node);
}

core::Result<std::vector<SkinnedMeshNode>> list_skinned_meshes(core::Bytes bytes,
                                                               const IntakeOptions& intake) {
  auto doc = rig_document(bytes, intake);
  if (!doc) return std::move(doc).error();
  const GltfAsset& asset = doc->asset();
  const tg::Model model = to_model(asset);
  std::vector<SkinnedMeshNode> out = skinned_nodes(model);
  // Vertex counts from the accessors' declared counts (bounded by inspect_model).
  for (SkinnedMeshNode& c : out) {
    const GltfMesh& mesh = asset.meshes[*asset.nodes[c.node].mesh];
    for (const GltfPrimitive& prim : mesh.primitives)
      if (const auto a = prim.attributes.find("POSITION"))
        c.vertex_count += static_cast<std::size_t>(asset.accessors[*a].count);
  }
  return out;
}

std::optional<std::size_t> node_reference(std::string_view name) {
  if (name.size() < 2 || name.size() > 10 || name[0] != '#') return std::nullopt;
  std::size_t n = 0;
  for (char c : name.substr(1)) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + static_cast<std::size_t>(c - '0');
  }
  return n;
}

std::optional<std::size_t> find_joint(const Rig& rig, std::string_view name) {
  const auto& names = rig.skeleton.joint_names;
  for (std::size_t j = 0; j < names.size(); ++j)
    if (names[j] == name) return j;
  if (const auto node = node_reference(name))
    for (std::size_t j = 0; j < rig.joint_nodes.size() && j < names.size(); ++j)
      if (rig.joint_nodes[j] == *node) return j;
  return std::nullopt;
}

double joint_influence(const Rig& rig, std::span<const std::string> joint_names) {
  const Skeleton& sk = rig.skeleton;
  std::vector<char> moved(sk.joint_count(), 0);
  for (const std::string& n : joint_names)
    if (const auto j = find_joint(rig, n); j && *j < moved.size()) moved[*j] = 1;
  // Parents come first: one pass marks every descendant.
  for (std::size_t j = 0; j < sk.joint_count(); ++j) {
    const std::int32_t p = j < sk.parents.size() ? sk.parents[j] : -1;
    if (p >= 0 && static_cast<std::size_t>(p) < j && moved[static_cast<std::size_t>(p)])
      moved[j] = 1;
  }
  double sum = 0.0;
  const std::size_t n = std::min(rig.joints.size(), rig.weights.size());
  for (std::size_t k = 0; k < n; ++k)
    if (rig.joints[k] < moved.size() && moved[rig.joints[k]]) sum += rig.weights[k];
  return sum;
}

core::Result<RigChoice> load_rig_moved_most(core::Bytes bytes,
                                            std::span<const std::string> joint_names,
                                            const RigOptions& options) {
  auto list = list_skinned_meshes(bytes, options.intake);
  if (!list) return std::move(list).error();
  RigChoice out;
  out.candidates = std::move(*list);
  if (!options.mesh_name.empty() || options.node || out.candidates.size() < 2) {
    auto rig = load_rig(bytes, options);
    if (!rig) return std::move(rig).error();
    for (std::size_t i = 0; i < out.candidates.size(); ++i)
      if (out.candidates[i].node == rig->node_index) out.chosen = i;
    out.influence = joint_influence(*rig, joint_names);
    out.rig = std::move(*rig);
    return out;
  }
  std::optional<core::Error> first_error;
  bool have = false;
  for (std::size_t i = 0; i < out.candidates.size(); ++i) {
    RigOptions o = options;
    o.node = out.candidates[i].node;
    auto rig = load_rig(bytes, o);
    if (!rig) {
      if (!first_error) first_error = std::move(rig).error();
      continue;
    }
    const double influence = joint_influence(*rig, joint_names);
    if (!have || influence > out.influence) {
      have = true;
      out.influence = influence;
      out.chosen = i;
      out.rig = std::move(*rig);
    }
  }
  if (!have) return std::move(*first_error);
  return out;
}

Mat4 transform_matrix(const Transform& t) {
  return to_f(trs_matrix(t));
}

namespace {

/// The rig's node: the requested one, else the first with a mesh and a skin
/// (and the requested name).
core::Result<std::size_t> find_rig_node(const tg::Model& m, const RigOptions& options) {
  const std::vector<SkinnedMeshNode> candidates = skinned_nodes(m);
  for (const SkinnedMeshNode& c : candidates) {
    if (options.node
            ? c.node != *options.node
            : !options.mesh_name.empty() && c.node_name != options.mesh_name &&
                  c.mesh_name != options.mesh_name && node_reference(options.mesh_name) != c.node)
      continue;
    return c.node;
  }
  if (candidates.empty())
    return core::error_at_pointer(codes::RIG_NO_SKINNED_MESH, "no node has both a mesh and a skin",
                                  "/nodes");
  std::string names;
  for (const SkinnedMeshNode& c : candidates)
    names += (names.empty() ? "\"" : ", \"") + c.label() + "\"";
  const std::string wanted = options.node ? "node " + std::to_string(*options.node)
                                          : "mesh named \"" + options.mesh_name + "\"";
  return core::error_at_pointer(codes::RIG_NO_SKINNED_MESH,
                                "no skinned " + wanted + "; the skinned meshes are " + names,
                                "/nodes");
}

/// Each node's parent (-1 for a root), checked to be a tree: one parent
/// each, no cycles.
core::Result<std::vector<std::int64_t>> node_parents(const tg::Model& m) {
  std::vector<std::int64_t> parent(m.nodes.size(), -1);
  for (std::size_t i = 0; i < m.nodes.size(); ++i)
    for (std::size_t c = 0; c < m.nodes[i].children.size(); ++c) {
      const int ch = m.nodes[i].children[c];
      const std::string cp =
          core::json_pointer_join("/nodes", i) + "/children/" + std::to_string(c);
      if (ch < 0 || static_cast<std::size_t>(ch) >= m.nodes.size())
        return core::error_at_pointer(codes::RIG_NODE_TREE, "child index out of range", cp);
      if (parent[static_cast<std::size_t>(ch)] != -1)
        return core::error_at_pointer(codes::RIG_NODE_TREE, "node has two parents", cp);
      parent[static_cast<std::size_t>(ch)] = static_cast<std::int64_t>(i);
    }
  for (std::size_t i = 0; i < m.nodes.size(); ++i) {
    std::size_t steps = 0;
    for (std::int64_t p = parent[i]; p != -1; p = parent[static_cast<std::size_t>(p)])
      if (++steps > m.nodes.size())
        return core::error_at_pointer(codes::RIG_NODE_TREE, "node hierarchy has a cycle",
                                      core::json_pointer_join("/nodes", i));
  }
  return parent;
}

/// The skin's joints as rig.skeleton, parents first: each joint's nearest
/// joint ancestor, the offset of the non-joint nodes in between, its inverse
/// bind matrix. Returns each skin joint's index in the skeleton.
core::Result<std::vector<std::uint32_t>> read_skeleton(GltfDocument& doc, const tg::Model& m,
                                                       const std::vector<std::int64_t>& parent,
                                                       const RigOptions& options, Rig& rig) {
  const tg::Skin& skin = m.skins[rig.skin_index];
  const std::string sp = core::json_pointer_join("/skins", rig.skin_index);
  const std::size_t jc = skin.joints.size();
  if (jc == 0)
    return core::error_at_pointer(codes::RIG_JOINT, "skin has no joints", sp + "/joints");
  if (jc > options.max_joints)
    return core::error_at_pointer(codes::RIG_LIMIT, std::to_string(jc) + " joints exceed the limit",
                                  sp + "/joints");
  std::vector<std::int64_t> joint_of_node(m.nodes.size(), -1);
  for (std::size_t j = 0; j < jc; ++j) {
    const int n = skin.joints[j];
    const std::string jp = sp + "/joints/" + std::to_string(j);
    if (n < 0 || static_cast<std::size_t>(n) >= m.nodes.size())
      return core::error_at_pointer(codes::RIG_JOINT, "joint node out of range", jp);
    if (joint_of_node[static_cast<std::size_t>(n)] != -1)
      return core::error_at_pointer(codes::RIG_JOINT, "joint node listed twice", jp);
    joint_of_node[static_cast<std::size_t>(n)] = static_cast<std::int64_t>(j);
  }
  // Per skin joint: nearest joint ancestor and the offset of the non-joint
  // nodes in between; depth in the joint tree for the parents-first order.
  std::vector<std::int64_t> jparent(jc, -1);
  std::vector<Mat4d> offset(jc, kIdentityD);
  std::vector<std::size_t> depth(jc, 0);
  for (std::size_t j = 0; j < jc; ++j) {
    const auto n = static_cast<std::size_t>(skin.joints[j]);
    for (std::int64_t p = parent[n]; p != -1; p = parent[static_cast<std::size_t>(p)]) {
      const auto pn = static_cast<std::size_t>(p);
      if (joint_of_node[pn] != -1) {
        jparent[j] = joint_of_node[pn];
        break;
      }
      offset[j] = mul(node_matrix(m.nodes[pn]), offset[j]);
    }
  }
  for (std::size_t j = 0; j < jc; ++j)
    for (std::int64_t p = jparent[j]; p != -1; p = jparent[static_cast<std::size_t>(p)]) ++depth[j];
  std::vector<std::size_t> order(jc);
  for (std::size_t j = 0; j < jc; ++j) order[j] = j;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return depth[a] < depth[b]; });
  std::vector<std::uint32_t> new_index(jc);
  for (std::size_t k = 0; k < jc; ++k) new_index[order[k]] = static_cast<std::uint32_t>(k);

  std::vector<double> ibm;
  if (skin.inverseBindMatrices >= 0) {
    auto r = read_accessor(doc, skin.inverseBindMatrices, "MAT4", {GltfComponent::kFloat},
                           sp + "/inverseBindMatrices");
    if (!r) return std::move(r).error();
    if (r->size() < jc * 16)
      return core::error_at_pointer(codes::RIG_ACCESSOR, "fewer inverse bind matrices than joints",
                                    sp + "/inverseBindMatrices");
    ibm = std::move(*r);
  }
  Skeleton& sk = rig.skeleton;
  sk.name = skin.name;
  for (std::size_t k = 0; k < jc; ++k) {
    const std::size_t j = order[k];
    const auto n = static_cast<std::size_t>(skin.joints[j]);
    sk.joint_names.push_back(m.nodes[n].name.empty() ? "joint_" + std::to_string(n)
                                                     : m.nodes[n].name);
    sk.parents.push_back(jparent[j] == -1 ? -1
                                          : static_cast<std::int32_t>(
                                                new_index[static_cast<std::size_t>(jparent[j])]));
    sk.local_transforms.push_back(node_transform(m.nodes[n]));
    Mat4 ib = kIdentity4;
    if (!ibm.empty())
      for (std::size_t i = 0; i < 16; ++i) ib[i] = static_cast<float>(ibm[j * 16 + i]);
    sk.inverse_bind_matrices.push_back(ib);
    rig.joint_nodes.push_back(n);
    rig.joint_parent_offsets.push_back(to_f(offset[j]));
  }
  return new_index;
}

/// A primitive's POSITION, JOINTS_0 and WEIGHTS_0 appended to the rig:
/// weights normalised, joints renumbered to the skeleton's order. Returns
/// the vertex count.
core::Result<std::size_t> read_skinned_vertices(GltfDocument& doc, const tg::Primitive& p,
                                                const std::string& pp,
                                                std::span<const std::uint32_t> new_index,
                                                const RigOptions& options, Rig& rig) {
  const int pa = attribute(p, "POSITION"), ja = attribute(p, "JOINTS_0"),
            wa = attribute(p, "WEIGHTS_0");
  if (pa < 0)
    return core::error_at_pointer(codes::RIG_PRIMITIVE, "no POSITION", pp + "/attributes");
  if (ja < 0 || wa < 0)
    return core::error_at_pointer(codes::RIG_PRIMITIVE, "no JOINTS_0 / WEIGHTS_0: not skinned",
                                  pp + "/attributes");
  auto pos = read_accessor(doc, pa, "VEC3", {GltfComponent::kFloat}, pp + "/attributes/POSITION");
  if (!pos) return std::move(pos).error();
  const std::size_t base = rig.vertex_count();
  const std::size_t n = pos->size() / 3;
  if (base + n > options.max_vertices)
    return core::error_at_pointer(codes::RIG_LIMIT,
                                  "more than " + std::to_string(options.max_vertices) + " vertices",
                                  pp + "/attributes/POSITION");
  auto jnt =
      read_accessor(doc, ja, "VEC4", {GltfComponent::kUnsignedByte, GltfComponent::kUnsignedShort},
                    pp + "/attributes/JOINTS_0");
  if (!jnt) return std::move(jnt).error();
  auto wgt = read_accessor(
      doc, wa, "VEC4",
      {GltfComponent::kFloat, GltfComponent::kUnsignedByte, GltfComponent::kUnsignedShort},
      pp + "/attributes/WEIGHTS_0");
  if (!wgt) return std::move(wgt).error();
  if (jnt->size() != n * 4 || wgt->size() != n * 4)
    return core::error_at_pointer(codes::RIG_ACCESSOR,
                                  "JOINTS_0 / WEIGHTS_0 count differs from POSITION",
                                  pp + "/attributes");
  const std::size_t jc = new_index.size();
  for (double x : *pos) rig.positions.push_back(static_cast<float>(x));
  for (std::size_t v = 0; v < n; ++v) {
    double sum = 0;
    for (std::size_t k = 0; k < 4; ++k) {
      const double w = (*wgt)[v * 4 + k];
      if (!std::isfinite(w) || w < 0)
        return core::error_at_pointer(
            codes::RIG_WEIGHT, "vertex " + std::to_string(v) + ": bad weight",
            core::json_pointer_join("/accessors", static_cast<std::size_t>(wa)));
      sum += w;
    }
    for (std::size_t k = 0; k < 4; ++k) {
      const double w = sum > 0 ? (*wgt)[v * 4 + k] / sum : 0.0;
      const auto j = static_cast<std::size_t>((*jnt)[v * 4 + k]);
      if (w > 0 && j >= jc)
        return core::error_at_pointer(
            codes::RIG_JOINT_INDEX,
            "vertex " + std::to_string(v) + " uses joint " + std::to_string(j) + " of " +
                std::to_string(jc),
            core::json_pointer_join("/accessors", static_cast<std::size_t>(ja)));
      // A zero-weight slot may name any joint; point it at a valid one.
      rig.joints.push_back(w > 0 ? new_index[j] : 0);
      rig.weights.push_back(static_cast<float>(w));
    }
  }
  return n;
}

/// A primitive's triangles (its indices, else every three vertices),
/// offset by `base`, appended to the rig.
core::Status read_triangles(GltfDocument& doc, const tg::Primitive& p, const std::string& pp,
                            std::size_t base, std::size_t n, Rig& rig) {
  if (p.indices < 0) {
    for (std::size_t i = 0; i + 2 < n; i += 3)
      for (std::size_t k = 0; k < 3; ++k)
        rig.triangles.push_back(static_cast<std::uint32_t>(base + i + k));
    return core::Ok{};
  }
  auto idx = read_accessor(
      doc, p.indices, "SCALAR",
      {GltfComponent::kUnsignedByte, GltfComponent::kUnsignedShort, GltfComponent::kUnsignedInt},
      pp + "/indices");
  if (!idx) return std::move(idx).error();
  if (idx->size() % 3 != 0)
    return core::error_at_pointer(codes::RIG_INDEX, "index count not a multiple of 3",
                                  pp + "/indices");
  for (std::size_t i = 0; i < idx->size(); ++i) {
    const double x = (*idx)[i];
    if (x >= static_cast<double>(n))
      return core::error_at_pointer(
          codes::RIG_INDEX, "index " + std::to_string(i) + " past the vertex count",
          core::json_pointer_join("/accessors", static_cast<std::size_t>(p.indices)));
    rig.triangles.push_back(static_cast<std::uint32_t>(base + static_cast<std::size_t>(x)));
  }
  return core::Ok{};
}

/// A primitive's morph targets' POSITION deltas appended to the rig's
/// targets (zeros for a target without POSITION).
core::Status read_morph_deltas(GltfDocument& doc, const tg::Primitive& p, const std::string& pp,
                               std::size_t n, Rig& rig) {
  for (std::size_t t = 0; t < rig.morph_targets.size(); ++t) {
    auto& d = rig.morph_targets[t].position_deltas;
    const int ta = target_attribute(p.targets[t], "POSITION");
    if (ta < 0) {
      d.insert(d.end(), n * 3, 0.0F);
      continue;
    }
    auto td = read_accessor(doc, ta, "VEC3", {GltfComponent::kFloat},
                            pp + "/targets/" + std::to_string(t) + "/POSITION");
    if (!td) return std::move(td).error();
    if (td->size() != n * 3)
      return core::error_at_pointer(codes::RIG_MORPH, "target count differs from POSITION",
                                    pp + "/targets/" + std::to_string(t));
    for (double x : *td) d.push_back(static_cast<float>(x));
  }
  return core::Ok{};
}

}  // namespace

core::Result<Rig> load_rig(core::Bytes bytes, const RigOptions& options) {
  if (bytes.size() > 0xffffffffu) return make_error(codes::RIG_LIMIT, "file above 4 GiB");
  auto doc = rig_document(bytes, options.intake);
  if (!doc) return std::move(doc).error();
  const tg::Model m = to_model(doc->asset());
  auto node = find_rig_node(m, options);
  if (!node) return std::move(node).error();
  Rig rig;
  rig.node_index = *node;
  rig.mesh_index = static_cast<std::size_t>(m.nodes[*node].mesh);
  rig.skin_index = static_cast<std::size_t>(m.nodes[*node].skin);
  const tg::Mesh& mesh = m.meshes[rig.mesh_index];
  rig.mesh_name = mesh.name;
  const std::string mp = core::json_pointer_join("/meshes", rig.mesh_index);

  auto parent = node_parents(m);
  if (!parent) return std::move(parent).error();
  Mat4d world = node_matrix(m.nodes[*node]);
  for (std::int64_t p = (*parent)[*node]; p != -1; p = (*parent)[static_cast<std::size_t>(p)])
    world = mul(node_matrix(m.nodes[static_cast<std::size_t>(p)]), world);
  rig.mesh_world = to_f(world);

  auto new_index = read_skeleton(*doc, m, *parent, options, rig);
  if (!new_index) return std::move(new_index).error();

  // Geometry: every primitive of the mesh, concatenated.
  if (mesh.primitives.empty())
    return core::error_at_pointer(codes::RIG_PRIMITIVE, "mesh has no primitives", mp);
  const std::size_t target_count = mesh.primitives[0].targets.size();
  if (target_count > options.max_morph_targets)
    return core::error_at_pointer(codes::RIG_LIMIT, "too many morph targets",
                                  mp + "/primitives/0/targets");
  rig.morph_targets.resize(target_count);
  bool all_normals = true;
  for (const auto& p : mesh.primitives) all_normals = all_normals && attribute(p, "NORMAL") >= 0;
  for (std::size_t pi = 0; pi < mesh.primitives.size(); ++pi) {
    const tg::Primitive& p = mesh.primitives[pi];
    const std::string pp = mp + "/primitives/" + std::to_string(pi);
    if (p.mode != kModeTriangles && p.mode != -1)
      return core::error_at_pointer(codes::RIG_PRIMITIVE, "only triangle primitives are supported",
                                    pp + "/mode");
    const std::size_t base = rig.vertex_count();
    rig.primitive_vertex_offsets.push_back(base);
    auto n = read_skinned_vertices(*doc, p, pp, *new_index, options, rig);
    if (!n) return std::move(n).error();
    if (all_normals) {
      auto nrm = read_accessor(*doc, attribute(p, "NORMAL"), "VEC3", {GltfComponent::kFloat},
                               pp + "/attributes/NORMAL");
      if (!nrm) return std::move(nrm).error();
      if (nrm->size() != *n * 3)
        return core::error_at_pointer(codes::RIG_ACCESSOR, "NORMAL count differs from POSITION",
                                      pp + "/attributes");
      for (double x : *nrm) rig.normals.push_back(static_cast<float>(x));
    }
    if (auto st = read_triangles(*doc, p, pp, base, *n, rig); !st) return std::move(st).error();
    if (target_count * (base + *n) * 3 > options.max_morph_floats)
      return core::error_at_pointer(codes::RIG_LIMIT, "morph targets × vertices above the limit",
                                    pp + "/targets");
    if (p.targets.size() != target_count)
      return core::error_at_pointer(
          codes::RIG_MORPH, "primitives have different morph target counts", pp + "/targets");
    if (auto st = read_morph_deltas(*doc, p, pp, *n, rig); !st) return std::move(st).error();
  }
  // Target names: mesh.extras.targetNames (a common exporter convention).
  for (std::size_t t = 0; t < target_count; ++t) {
    auto it = mesh.target_names.find(t);
    rig.morph_targets[t].name =
        it != mesh.target_names.end() ? it->second : "target_" + std::to_string(t);
  }
  return rig;
}

core::Result<Rig> load_rig_file(const std::string& path, const RigOptions& options) {
  auto file = core::MappedFile::open(path);
  if (!file) return std::move(file).error();
  RigOptions o = options;
  if (o.intake.name.empty()) o.intake.name = path;
  return load_rig(file->bytes(), o);
}

namespace {

// World matrices in double (chained without float rounding in between).
core::Result<std::vector<Mat4d>> world_d(const Rig& rig, std::span<const Transform> locals) {
  const auto& sk = rig.skeleton;
  if (locals.size() != sk.joint_count() || rig.joint_parent_offsets.size() != sk.joint_count() ||
      sk.parents.size() != sk.joint_count())
    return make_error(codes::RIG_POSE, "need one local transform per joint (" +
                                           std::to_string(sk.joint_count()) + ")");
  if (!sk.inverse_bind_matrices.empty() && sk.inverse_bind_matrices.size() != sk.joint_count())
    return make_error(codes::RIG_POSE, "inverse bind matrices do not match the joints");
  std::vector<Mat4d> world(sk.joint_count());
  for (std::size_t j = 0; j < sk.joint_count(); ++j) {
    const Mat4d local = mul(to_d(rig.joint_parent_offsets[j]), trs_matrix(locals[j]));
    const std::int32_t p = sk.parents[j];
    if (p >= 0 && static_cast<std::size_t>(p) >= j)
      return make_error(codes::RIG_POSE, "skeleton is not in parents-first order");
    world[j] = p < 0 ? local : mul(world[static_cast<std::size_t>(p)], local);
  }
  return world;
}

}  // namespace

core::Result<std::vector<Mat4>> joint_world_matrices(const Rig& rig,
                                                     std::span<const Transform> locals) {
  auto world = world_d(rig, locals);
  if (!world) return std::move(world).error();
  std::vector<Mat4> out;
  out.reserve(world->size());
  for (const Mat4d& w : *world) out.push_back(to_f(w));
  return out;
}

core::Result<std::vector<float>> skinning_matrices(const Rig& rig,
                                                   std::span<const Transform> locals) {
  auto world = world_d(rig, locals);
  if (!world) return std::move(world).error();
  const auto& sk = rig.skeleton;
  std::vector<float> out;
  out.reserve(world->size() * 16);
  for (std::size_t j = 0; j < world->size(); ++j) {
    const Mat4d ib =
        sk.inverse_bind_matrices.empty() ? kIdentityD : to_d(sk.inverse_bind_matrices[j]);
    const Mat4d s = mul((*world)[j], ib);
    for (double x : s) out.push_back(static_cast<float>(x));
  }
  return out;
}

}  // namespace charkit::scene
