#include "charkit/scene/rig.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <string>
#include <utility>

#include <fstream>  // tinygltf uses it even with TINYGLTF_NO_FS
#include <sstream>

#include <nlohmann/json.hpp>

#include "charkit/core/mapped_file.h"
#include "charkit/core/math.h"

// tinygltf is header-only; its implementation lives in this file alone. The
// test programs compile their own copy (tests/scene/tinygltf_include.h), so
// ours is renamed to keep the two apart at link time: every tinygltf symbol
// (all are in namespace tinygltf or in anonymous namespaces) becomes
// charkit_rig_tinygltf::… here. No images are decoded and no files are read:
// the rig needs neither, and untrusted input must not reach the filesystem.
#define tinygltf charkit_rig_tinygltf
#define TINYGLTF_IMPLEMENTATION
#define TINYGLTF_NO_STB_IMAGE
#define TINYGLTF_NO_STB_IMAGE_WRITE
#define TINYGLTF_NO_EXTERNAL_IMAGE
#define TINYGLTF_NO_FS
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wconversion"
#pragma GCC diagnostic ignored "-Wshadow"
#pragma GCC diagnostic ignored "-Wsign-conversion"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wpedantic"
#endif
#include <tiny_gltf.h>
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
#undef tinygltf

namespace charkit::scene {

using core::Location;
using core::make_error;
namespace tg = ::charkit_rig_tinygltf;

namespace {

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

std::string ptr(std::string_view kind, std::size_t i) {
  return "/" + std::string(kind) + "/" + std::to_string(i);
}

core::Error err(std::string code, std::string msg, std::string pointer) {
  return make_error(std::move(code), std::move(msg), Location::at_pointer(std::move(pointer)));
}

// An accessor's elements as doubles (count × components), normalised integers
// scaled to [0, 1]; every byte range checked against the view and buffer.
core::Result<std::vector<double>> read_accessor(const tg::Model& m, int index, int type,
                                                std::initializer_list<int> component_types,
                                                const std::string& where) {
  if (index < 0 || static_cast<std::size_t>(index) >= m.accessors.size())
    return err("RIG_ACCESSOR", "accessor index " + std::to_string(index) + " out of range", where);
  const auto ai = static_cast<std::size_t>(index);
  const tg::Accessor& a = m.accessors[ai];
  const std::string ap = ptr("accessors", ai);
  if (a.type != type) return err("RIG_ACCESSOR", "unexpected accessor type", ap + "/type");
  if (std::find(component_types.begin(), component_types.end(), a.componentType) ==
      component_types.end())
    return err("RIG_ACCESSOR", "unexpected component type", ap + "/componentType");
  if (a.sparse.isSparse) return err("RIG_ACCESSOR", "sparse accessors are not supported", ap);
  const int nc = tg::GetNumComponentsInType(static_cast<std::uint32_t>(a.type));
  const int cs = tg::GetComponentSizeInBytes(static_cast<std::uint32_t>(a.componentType));
  if (nc <= 0 || cs <= 0) return err("RIG_ACCESSOR", "unknown accessor type", ap);
  const std::size_t ncomp = static_cast<std::size_t>(nc), csize = static_cast<std::size_t>(cs);
  if (a.bufferView < 0) {  // all zeros by the glTF rules; no data bounds the count
    if (a.count > (std::size_t{1} << 22))
      return err("RIG_ACCESSOR", "accessor without data has too large a count", ap + "/count");
    return std::vector<double>(a.count * ncomp, 0.0);
  }
  if (static_cast<std::size_t>(a.bufferView) >= m.bufferViews.size())
    return err("RIG_ACCESSOR", "buffer view out of range", ap + "/bufferView");
  const tg::BufferView& v = m.bufferViews[static_cast<std::size_t>(a.bufferView)];
  const std::string vp = ptr("bufferViews", static_cast<std::size_t>(a.bufferView));
  if (v.buffer < 0 || static_cast<std::size_t>(v.buffer) >= m.buffers.size())
    return err("RIG_ACCESSOR", "buffer out of range", vp + "/buffer");
  const auto& data = m.buffers[static_cast<std::size_t>(v.buffer)].data;
  if (v.byteOffset > data.size() || v.byteLength > data.size() - v.byteOffset)
    return err("RIG_ACCESSOR", "buffer view outside its buffer", vp);
  const std::size_t elem = ncomp * csize;
  const std::size_t stride = v.byteStride != 0 ? v.byteStride : elem;
  if (stride < elem) return err("RIG_ACCESSOR", "byte stride below element size", vp);
  if (a.count > 0) {
    if (a.byteOffset > v.byteLength || (a.count - 1) > (v.byteLength - a.byteOffset) / stride ||
        (a.count - 1) * stride + elem > v.byteLength - a.byteOffset)
      return err("RIG_ACCESSOR", "accessor reads past its buffer view", ap + "/byteOffset");
  }
  // Allocated only now: the range check above bounds count by the buffer size.
  std::vector<double> out(a.count * ncomp, 0.0);
  const std::uint8_t* base = data.data() + v.byteOffset + a.byteOffset;
  for (std::size_t i = 0; i < a.count; ++i)
    for (std::size_t c = 0; c < ncomp; ++c) {
      const std::uint8_t* p = base + i * stride + c * csize;
      double x = 0;
      switch (a.componentType) {
        case TINYGLTF_COMPONENT_TYPE_FLOAT:
          x = core::load_f32_le(p);
          break;
        case TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE:
          x = *p;
          if (a.normalized) x /= 255.0;
          break;
        case TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT:
          x = core::load_le<std::uint16_t>(p);
          if (a.normalized) x /= 65535.0;
          break;
        case TINYGLTF_COMPONENT_TYPE_UNSIGNED_INT:
          x = core::load_le<std::uint32_t>(p);
          break;
        default:
          return err("RIG_ACCESSOR", "unsupported component type", ap + "/componentType");
      }
      out[i * ncomp + c] = x;
    }
  return out;
}

int attribute(const tg::Primitive& p, const char* name) {
  auto it = p.attributes.find(name);
  return it == p.attributes.end() ? -1 : it->second;
}

int target_attribute(const std::map<std::string, int>& t, const char* name) {
  auto it = t.find(name);
  return it == t.end() ? -1 : it->second;
}

}  // namespace

Mat4 transform_matrix(const Transform& t) {
  return to_f(trs_matrix(t));
}

core::Result<Rig> load_rig(core::Bytes bytes, const RigOptions& options) {
  auto info = inspect_model(bytes, options.intake);
  if (!info) return std::move(info).error();
  if (info->format == ModelFormat::kFbx)
    return make_error("RIG_FORMAT", "FBX rigs are not supported; convert to glTF first");
  if (info->container == ModelContainer::kZip)
    return make_error("RIG_CONTAINER", "zipped glTF is not supported for rigs; use GLB");
  if (bytes.size() > 0xffffffffu) return make_error("RIG_LIMIT", "file above 4 GiB");

  tg::Model m;
  tg::TinyGLTF loader;
  loader.SetImageLoader(
      [](tg::Image*, const int, std::string*, std::string*, int, int, const unsigned char*, int,
         void*) { return true; },  // images are not needed for a rig
      nullptr);
  std::string terr, twarn;
  const bool ok = info->container == ModelContainer::kGlb
                      ? loader.LoadBinaryFromMemory(&m, &terr, &twarn, bytes.data(),
                                                    static_cast<unsigned int>(bytes.size()), "")
                      : loader.LoadASCIIFromString(&m, &terr, &twarn,
                                                   reinterpret_cast<const char*>(bytes.data()),
                                                   static_cast<unsigned int>(bytes.size()), "");
  if (!ok) return make_error("RIG_PARSE", "glTF parser: " + terr);

  // The node: first with a mesh and a skin (and the requested name).
  std::size_t node = m.nodes.size();
  for (std::size_t i = 0; i < m.nodes.size(); ++i) {
    const auto& n = m.nodes[i];
    if (n.mesh < 0 || n.skin < 0 || static_cast<std::size_t>(n.mesh) >= m.meshes.size() ||
        static_cast<std::size_t>(n.skin) >= m.skins.size())
      continue;
    if (!options.mesh_name.empty() && n.name != options.mesh_name &&
        m.meshes[static_cast<std::size_t>(n.mesh)].name != options.mesh_name)
      continue;
    node = i;
    break;
  }
  if (node == m.nodes.size())
    return err("RIG_NO_SKINNED_MESH",
               options.mesh_name.empty() ? "no node has both a mesh and a skin"
                                         : "no skinned mesh named \"" + options.mesh_name + "\"",
               "/nodes");
  Rig rig;
  rig.node_index = node;
  rig.mesh_index = static_cast<std::size_t>(m.nodes[node].mesh);
  rig.skin_index = static_cast<std::size_t>(m.nodes[node].skin);
  const tg::Mesh& mesh = m.meshes[rig.mesh_index];
  const tg::Skin& skin = m.skins[rig.skin_index];
  rig.mesh_name = mesh.name;
  const std::string mp = ptr("meshes", rig.mesh_index);
  const std::string sp = ptr("skins", rig.skin_index);

  // --- Node tree: one parent each, no cycles.
  std::vector<std::int64_t> parent(m.nodes.size(), -1);
  for (std::size_t i = 0; i < m.nodes.size(); ++i)
    for (std::size_t c = 0; c < m.nodes[i].children.size(); ++c) {
      const int ch = m.nodes[i].children[c];
      const std::string cp = ptr("nodes", i) + "/children/" + std::to_string(c);
      if (ch < 0 || static_cast<std::size_t>(ch) >= m.nodes.size())
        return err("RIG_NODE_TREE", "child index out of range", cp);
      if (parent[static_cast<std::size_t>(ch)] != -1)
        return err("RIG_NODE_TREE", "node has two parents", cp);
      parent[static_cast<std::size_t>(ch)] = static_cast<std::int64_t>(i);
    }
  for (std::size_t i = 0; i < m.nodes.size(); ++i) {
    std::size_t steps = 0;
    for (std::int64_t p = parent[i]; p != -1; p = parent[static_cast<std::size_t>(p)])
      if (++steps > m.nodes.size())
        return err("RIG_NODE_TREE", "node hierarchy has a cycle", ptr("nodes", i));
  }
  const auto world_of = [&](std::size_t n) {
    Mat4d w = node_matrix(m.nodes[n]);
    for (std::int64_t p = parent[n]; p != -1; p = parent[static_cast<std::size_t>(p)])
      w = mul(node_matrix(m.nodes[static_cast<std::size_t>(p)]), w);
    return w;
  };
  rig.mesh_world = to_f(world_of(node));

  // --- Skeleton: skin joints, parents-first.
  const std::size_t jc = skin.joints.size();
  if (jc == 0) return err("RIG_JOINT", "skin has no joints", sp + "/joints");
  if (jc > options.max_joints)
    return err("RIG_LIMIT", std::to_string(jc) + " joints exceed the limit", sp + "/joints");
  std::vector<std::int64_t> joint_of_node(m.nodes.size(), -1);
  for (std::size_t j = 0; j < jc; ++j) {
    const int n = skin.joints[j];
    const std::string jp = sp + "/joints/" + std::to_string(j);
    if (n < 0 || static_cast<std::size_t>(n) >= m.nodes.size())
      return err("RIG_JOINT", "joint node out of range", jp);
    if (joint_of_node[static_cast<std::size_t>(n)] != -1)
      return err("RIG_JOINT", "joint node listed twice", jp);
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
    auto r = read_accessor(m, skin.inverseBindMatrices, TINYGLTF_TYPE_MAT4,
                           {TINYGLTF_COMPONENT_TYPE_FLOAT}, sp + "/inverseBindMatrices");
    if (!r) return std::move(r).error();
    if (r->size() < jc * 16)
      return err("RIG_ACCESSOR", "fewer inverse bind matrices than joints",
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

  // --- Geometry: every primitive of the mesh, concatenated.
  if (mesh.primitives.empty()) return err("RIG_PRIMITIVE", "mesh has no primitives", mp);
  const std::size_t target_count = mesh.primitives[0].targets.size();
  if (target_count > options.max_morph_targets)
    return err("RIG_LIMIT", "too many morph targets", mp + "/primitives/0/targets");
  rig.morph_targets.resize(target_count);
  bool all_normals = true;
  for (const auto& p : mesh.primitives) all_normals = all_normals && attribute(p, "NORMAL") >= 0;
  for (std::size_t pi = 0; pi < mesh.primitives.size(); ++pi) {
    const tg::Primitive& p = mesh.primitives[pi];
    const std::string pp = mp + "/primitives/" + std::to_string(pi);
    if (p.mode != TINYGLTF_MODE_TRIANGLES && p.mode != -1)
      return err("RIG_PRIMITIVE", "only triangle primitives are supported", pp + "/mode");
    const int pa = attribute(p, "POSITION"), ja = attribute(p, "JOINTS_0"),
              wa = attribute(p, "WEIGHTS_0");
    if (pa < 0) return err("RIG_PRIMITIVE", "no POSITION", pp + "/attributes");
    if (ja < 0 || wa < 0)
      return err("RIG_PRIMITIVE", "no JOINTS_0 / WEIGHTS_0: not skinned", pp + "/attributes");
    auto pos = read_accessor(m, pa, TINYGLTF_TYPE_VEC3, {TINYGLTF_COMPONENT_TYPE_FLOAT},
                             pp + "/attributes/POSITION");
    if (!pos) return std::move(pos).error();
    const std::size_t base = rig.vertex_count();
    const std::size_t n = pos->size() / 3;
    rig.primitive_vertex_offsets.push_back(base);
    if (base + n > options.max_vertices)
      return err("RIG_LIMIT", "more than " + std::to_string(options.max_vertices) + " vertices",
                 pp + "/attributes/POSITION");
    auto jnt = read_accessor(
        m, ja, TINYGLTF_TYPE_VEC4,
        {TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE, TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT},
        pp + "/attributes/JOINTS_0");
    if (!jnt) return std::move(jnt).error();
    auto wgt = read_accessor(m, wa, TINYGLTF_TYPE_VEC4,
                             {TINYGLTF_COMPONENT_TYPE_FLOAT, TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE,
                              TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT},
                             pp + "/attributes/WEIGHTS_0");
    if (!wgt) return std::move(wgt).error();
    if (jnt->size() != n * 4 || wgt->size() != n * 4)
      return err("RIG_ACCESSOR", "JOINTS_0 / WEIGHTS_0 count differs from POSITION",
                 pp + "/attributes");
    for (double x : *pos) rig.positions.push_back(static_cast<float>(x));
    for (std::size_t v = 0; v < n; ++v) {
      double sum = 0;
      for (std::size_t k = 0; k < 4; ++k) {
        const double w = (*wgt)[v * 4 + k];
        if (!std::isfinite(w) || w < 0)
          return err("RIG_WEIGHT", "vertex " + std::to_string(v) + ": bad weight",
                     ptr("accessors", static_cast<std::size_t>(wa)));
        sum += w;
      }
      for (std::size_t k = 0; k < 4; ++k) {
        const double w = sum > 0 ? (*wgt)[v * 4 + k] / sum : 0.0;
        const auto j = static_cast<std::size_t>((*jnt)[v * 4 + k]);
        if (w > 0 && j >= jc)
          return err("RIG_JOINT_INDEX",
                     "vertex " + std::to_string(v) + " uses joint " + std::to_string(j) + " of " +
                         std::to_string(jc),
                     ptr("accessors", static_cast<std::size_t>(ja)));
        // A zero-weight slot may name any joint; point it at a valid one.
        rig.joints.push_back(w > 0 ? new_index[j] : 0);
        rig.weights.push_back(static_cast<float>(w));
      }
    }
    if (all_normals) {
      auto nrm = read_accessor(m, attribute(p, "NORMAL"), TINYGLTF_TYPE_VEC3,
                               {TINYGLTF_COMPONENT_TYPE_FLOAT}, pp + "/attributes/NORMAL");
      if (!nrm) return std::move(nrm).error();
      if (nrm->size() != n * 3)
        return err("RIG_ACCESSOR", "NORMAL count differs from POSITION", pp + "/attributes");
      for (double x : *nrm) rig.normals.push_back(static_cast<float>(x));
    }
    if (p.indices >= 0) {
      auto idx = read_accessor(
          m, p.indices, TINYGLTF_TYPE_SCALAR,
          {TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE, TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT,
           TINYGLTF_COMPONENT_TYPE_UNSIGNED_INT},
          pp + "/indices");
      if (!idx) return std::move(idx).error();
      if (idx->size() % 3 != 0)
        return err("RIG_INDEX", "index count not a multiple of 3", pp + "/indices");
      for (std::size_t i = 0; i < idx->size(); ++i) {
        const double x = (*idx)[i];
        if (x >= static_cast<double>(n))
          return err("RIG_INDEX", "index " + std::to_string(i) + " past the vertex count",
                     ptr("accessors", static_cast<std::size_t>(p.indices)));
        rig.triangles.push_back(static_cast<std::uint32_t>(base + static_cast<std::size_t>(x)));
      }
    } else {
      for (std::size_t i = 0; i + 2 < n; i += 3)
        for (std::size_t k = 0; k < 3; ++k)
          rig.triangles.push_back(static_cast<std::uint32_t>(base + i + k));
    }
    if (target_count * (base + n) * 3 > options.max_morph_floats)
      return err("RIG_LIMIT", "morph targets × vertices above the limit", pp + "/targets");
    if (p.targets.size() != target_count)
      return err("RIG_MORPH", "primitives have different morph target counts", pp + "/targets");
    for (std::size_t t = 0; t < target_count; ++t) {
      auto& d = rig.morph_targets[t].position_deltas;
      const int ta = target_attribute(p.targets[t], "POSITION");
      if (ta < 0) {
        d.insert(d.end(), n * 3, 0.0F);
        continue;
      }
      auto td = read_accessor(m, ta, TINYGLTF_TYPE_VEC3, {TINYGLTF_COMPONENT_TYPE_FLOAT},
                              pp + "/targets/" + std::to_string(t) + "/POSITION");
      if (!td) return std::move(td).error();
      if (td->size() != n * 3)
        return err("RIG_MORPH", "target count differs from POSITION",
                   pp + "/targets/" + std::to_string(t));
      for (double x : *td) d.push_back(static_cast<float>(x));
    }
  }
  // Target names: mesh.extras.targetNames (a common exporter convention).
  // (tinygltf's Value::Get asserts on a non-object, so ask first.)
  const bool has_names = mesh.extras.IsObject() && mesh.extras.Has("targetNames");
  const tg::Value no_names;
  const tg::Value& names = has_names ? mesh.extras.Get("targetNames") : no_names;
  for (std::size_t t = 0; t < target_count; ++t) {
    std::string name = "target_" + std::to_string(t);
    if (names.IsArray() && t < names.ArrayLen() && names.Get(static_cast<int>(t)).IsString())
      name = names.Get(static_cast<int>(t)).Get<std::string>();
    rig.morph_targets[t].name = std::move(name);
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
    return make_error("RIG_POSE", "need one local transform per joint (" +
                                      std::to_string(sk.joint_count()) + ")");
  if (!sk.inverse_bind_matrices.empty() && sk.inverse_bind_matrices.size() != sk.joint_count())
    return make_error("RIG_POSE", "inverse bind matrices do not match the joints");
  std::vector<Mat4d> world(sk.joint_count());
  for (std::size_t j = 0; j < sk.joint_count(); ++j) {
    const Mat4d local = mul(to_d(rig.joint_parent_offsets[j]), trs_matrix(locals[j]));
    const std::int32_t p = sk.parents[j];
    if (p >= 0 && static_cast<std::size_t>(p) >= j)
      return make_error("RIG_POSE", "skeleton is not in parents-first order");
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
