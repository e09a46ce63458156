#include "charkit/ops/gltf_subdivide.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <numeric>
#include <string>
#include <unordered_map>
#include <utility>

#include "charkit/deform/error_codes.h"
#include "charkit/gpu/error_codes.h"
#include "charkit/scene/gltf_editor.h"

namespace charkit::ops {
namespace {

using scene::GltfAttributes;
using scene::GltfDocument;
using scene::read_float_attribute;

struct PositionHash {
  std::size_t operator()(const std::array<std::uint32_t, 3>& k) const {
    std::uint64_t h = 0x9E3779B97F4A7C15ULL;
    for (std::uint32_t x : k) h = (h ^ x) * 0xFF51AFD7ED558CCDULL;
    return static_cast<std::size_t>(h ^ (h >> 32));
  }
};

bool starts_with(const std::string& s, const char* prefix) {
  return s.rfind(prefix, 0) == 0;
}

core::Error gltf_error(const std::string& message, const std::string& pointer) {
  return core::error_at_pointer(deform::codes::DEFORM_GLTF, message, pointer);
}

/// A primitive's triangle indices (0, 1, 2 … when it has none).
core::Result<std::vector<std::uint32_t>> primitive_indices(GltfDocument& doc,
                                                           const scene::GltfPrimitive& prim,
                                                           std::size_t vertex_count,
                                                           const std::string& pp) {
  std::vector<std::uint32_t> idx;
  if (auto acc = prim.indices) {
    auto info = doc.accessor(*acc);
    if (!info) return std::move(info).error();
    if (info->components != 1) return gltf_error("indices are not SCALAR", pp + "/indices");
    auto r = doc.read_accessor_uints(*acc);
    if (!r) return std::move(r).error();
    idx = std::move(*r);
  } else {
    idx.resize(vertex_count);
    std::iota(idx.begin(), idx.end(), 0U);
  }
  if (idx.size() % 3 != 0)
    return gltf_error(std::to_string(idx.size()) + " indices are not whole triangles",
                      pp + (prim.indices ? "/indices" : "/attributes/POSITION"));
  return idx;
}

/// The subdivided vertex set: originals keep their index, the new vertex of
/// a split edge e is vertex_count + (its rank among split edges).
struct Compaction {
  std::vector<std::uint32_t> new_edges;  ///< edge ids with a referenced vertex, in order
  std::vector<std::uint32_t> map;        ///< old (V + E) index → new index
};

Compaction compact(std::size_t vertex_count, std::size_t edge_count,
                   const std::vector<std::uint32_t>& indices) {
  Compaction c;
  std::vector<std::uint8_t> used(edge_count, 0);
  for (std::uint32_t i : indices)
    if (i >= vertex_count) used[i - vertex_count] = 1;
  c.map.resize(vertex_count + edge_count, std::numeric_limits<std::uint32_t>::max());
  std::iota(c.map.begin(), c.map.begin() + static_cast<std::ptrdiff_t>(vertex_count), 0U);
  for (std::size_t e = 0; e < edge_count; ++e)
    if (used[e] != 0) {
      c.map[vertex_count + e] = static_cast<std::uint32_t>(vertex_count + c.new_edges.size());
      c.new_edges.push_back(static_cast<std::uint32_t>(e));
    }
  return c;
}

/// values (components per vertex) for the originals, then the midpoint of
/// each new edge's endpoints.
std::vector<float> midpoint_attribute(const std::vector<float>& values, std::size_t components,
                                      const deform::SubdivMeshView& view, const Compaction& c) {
  std::vector<float> out(values);
  out.reserve(values.size() + c.new_edges.size() * components);
  for (std::uint32_t e : c.new_edges) {
    const deform::SubdivEdge ed = view.edge(e);
    for (std::size_t k = 0; k < components; ++k)
      out.push_back(0.5F * (values[ed.a * components + k] + values[ed.b * components + k]));
  }
  return out;
}

/// Skin influences of the new vertices: both endpoints' influences at half
/// weight, merged by joint, the 4 × sets heaviest kept and rescaled to the
/// total.
void merge_skin(std::vector<std::vector<std::uint32_t>>& joints,
                std::vector<std::vector<float>>& weights, const deform::SubdivMeshView& view,
                const Compaction& c) {
  const std::size_t sets = joints.size();
  std::vector<std::pair<std::uint32_t, float>> inf;
  for (std::uint32_t e : c.new_edges) {
    const deform::SubdivEdge ed = view.edge(e);
    inf.clear();
    float total = 0.0F;
    for (std::uint32_t v : {ed.a, ed.b})
      for (std::size_t s = 0; s < sets; ++s)
        for (std::size_t k = 0; k < 4; ++k) {
          const float w = 0.5F * weights[s][4 * v + k];
          if (w <= 0.0F) continue;
          const std::uint32_t j = joints[s][4 * v + k];
          total += w;
          auto it =
              std::find_if(inf.begin(), inf.end(), [j](const auto& p) { return p.first == j; });
          if (it != inf.end())
            it->second += w;
          else
            inf.emplace_back(j, w);
        }
    std::sort(inf.begin(), inf.end(), [](const auto& x, const auto& y) {
      return x.second != y.second ? x.second > y.second : x.first < y.first;
    });
    if (inf.size() > 4 * sets) inf.resize(4 * sets);
    float kept = 0.0F;
    for (const auto& p : inf) kept += p.second;
    const float scale = kept > 0.0F ? total / kept : 0.0F;
    for (std::size_t s = 0; s < sets; ++s)
      for (std::size_t k = 0; k < 4; ++k) {
        const std::size_t slot = 4 * s + k;
        joints[s].push_back(slot < inf.size() ? inf[slot].first : 0U);
        weights[s].push_back(slot < inf.size() ? inf[slot].second * scale : 0.0F);
      }
  }
}

/// One group of primitives while it is subdivided: what each step of
/// Subdivider::group reads and leaves for the next.
struct Group {
  std::size_t mesh = 0;
  const std::vector<std::size_t>* prims = nullptr;
  const scene::GltfPrimitive* prim0 = nullptr;
  std::string p0;     ///< the first primitive's JSON pointer, for errors
  std::size_t n = 0;  ///< vertices
  std::vector<float> pos, normal, tangent;
  std::vector<std::uint32_t> indices;  ///< the group's triangles, primitive after primitive
  std::vector<std::size_t> tri_start;  ///< primitive g's triangles: [tri_start[g], tri_start[g+1])
  std::vector<std::uint32_t> weld;     ///< the vertex standing for each one's position
  deform::SubdivTopology top;
  std::vector<std::uint32_t> extras;   ///< the kernels' per-vertex words
  std::vector<std::uint8_t> vertices;  ///< the kernels' 40-byte input vertices
  deform::SubdivMeshView view;
  deform::SubdivOutput out;
  Compaction c;
};

class Subdivider {
 public:
  Subdivider(scene::GltfEditor& editor, const GltfSubdivideOptions& o)
      : editor_(editor), doc_(editor.document()), o_(o) {}

  /// The primitives `prims` of mesh m, which share their attributes and targets.
  core::Status group(std::size_t m, const std::vector<std::size_t>& prims,
                     GltfSubdivideMesh& summary);

  std::vector<std::string> notes_;  ///< GltfSubdivideResult::notes

 private:
  /// Positions, normals, tangents, the triangles and their edge table.
  core::Status read_geometry(Group& g);
  /// Each vertex's strength and geometry scale, and the kernels' input.
  core::Status kernel_input(Group& g);
  /// The kernels (on the GPU when asked, else or past its limits on the
  /// CPU), then the compaction of the new vertices that are used.
  core::Status run_kernels(Group& g);
  /// The new vertex attributes: the kernels' position, normal, tangent,
  /// the skin sets merged, every other attribute at its edge's midpoint.
  core::Result<GltfAttributes> new_attributes(const Group& g);
  /// The morph targets, each new vertex's delta the midpoint of its edge's.
  core::Result<std::vector<GltfAttributes>> new_targets(const Group& g);

  scene::GltfEditor& editor_;
  GltfDocument& doc_;
  const GltfSubdivideOptions& o_;
};

core::Status Subdivider::read_geometry(Group& g) {
  const scene::GltfMesh& mesh = doc_.asset().meshes[g.mesh];
  const GltfAttributes& attrs = g.prim0->attributes;
  const std::string& p0 = g.p0;
  const auto pos_acc = attrs.find("POSITION");
  if (!pos_acc) return gltf_error("primitive without POSITION", p0 + "/attributes");
  auto pos = read_float_attribute(doc_, *pos_acc, 3, 0, deform::codes::DEFORM_GLTF,
                                  p0 + "/attributes/POSITION");
  if (!pos) return std::move(pos).error();
  g.pos = std::move(*pos);
  const std::size_t n = g.n = g.pos.size() / 3;
  if (n >= 0x7FFFFFFFU) return gltf_error("too many vertices", p0 + "/attributes/POSITION");
  auto read = [&](const char* name, std::size_t comps) -> core::Result<std::vector<float>> {
    if (auto a = attrs.find(name))
      return read_float_attribute(doc_, *a, comps, n, deform::codes::DEFORM_GLTF,
                                  p0 + "/attributes/" + name);
    return std::vector<float>{};
  };
  auto normal = read("NORMAL", 3);
  if (!normal) return std::move(normal).error();
  g.normal = std::move(*normal);
  auto tangent = read("TANGENT", 4);
  if (!tangent) return std::move(tangent).error();
  g.tangent = std::move(*tangent);

  g.tri_start = {0};
  for (std::size_t p : *g.prims) {
    auto idx = primitive_indices(doc_, mesh.primitives[p], n, mesh.primitives[p].pointer);
    if (!idx) return std::move(idx).error();
    g.indices.insert(g.indices.end(), idx->begin(), idx->end());
    g.tri_start.push_back(g.indices.size() / 3);
  }
  // Vertices at one position (UV and normal seams) are welded for adjacency.
  g.weld.resize(n);
  {
    std::unordered_map<std::array<std::uint32_t, 3>, std::uint32_t, PositionHash> first;
    first.reserve(n);
    for (std::size_t v = 0; v < n; ++v) {
      std::array<std::uint32_t, 3> key;
      std::memcpy(key.data(), g.pos.data() + 3 * v, 12);
      g.weld[v] = first.emplace(key, static_cast<std::uint32_t>(v)).first->second;
    }
  }
  auto top = deform::build_subdiv_topology(g.indices, static_cast<std::uint32_t>(n), 0, g.weld);
  if (!top) {
    core::Error e = std::move(top).error();
    e.message += " (in the triangles of " + p0 + " and the primitives sharing its attributes)";
    e.location = core::Location::at_pointer(p0);
    return e;
  }
  g.top = std::move(*top);
  return core::Ok{};
}

core::Status Subdivider::kernel_input(Group& g) {
  const GltfAttributes& attrs = g.prim0->attributes;
  const std::size_t n = g.n;
  std::vector<std::uint32_t> strength6(
      n, static_cast<std::uint32_t>(std::lround(std::clamp(o_.strength, 0.0F, 1.0F) * 63)));
  if (!o_.strength_attribute.empty()) {
    const std::string sp = g.p0 + "/attributes/" + o_.strength_attribute;
    const auto a = attrs.find(o_.strength_attribute);
    if (!a)
      return gltf_error(
          "the primitive has no attribute " + o_.strength_attribute + " (--strength-attribute)",
          g.p0 + "/attributes");
    auto info = doc_.accessor(*a);
    if (!info) return std::move(info).error();
    if (info->components > 4 || info->count != n)
      return gltf_error("the strength attribute is " + info->type + " × " +
                            std::to_string(info->count) + "; one to four values per vertex needed",
                        sp);
    auto values = doc_.read_accessor_floats(*a);
    if (!values) return std::move(values).error();
    for (std::size_t v = 0; v < n; ++v) {
      const float s = (*values)[v * info->components];
      if (!std::isfinite(s))
        return gltf_error("vertex " + std::to_string(v) + "'s strength is not finite", sp);
      strength6[v] = static_cast<std::uint32_t>(std::lround(std::clamp(s, 0.0F, 1.0F) * 63));
    }
  }
  deform::SubdivMeshView& view = g.view;
  view.vertex_count = static_cast<std::uint32_t>(n);
  view.index_bits = g.top.index_bits;
  view.edge_count = g.top.edge_count;
  view.edges = g.top.edges;
  std::vector<float> scale(n, o_.geometry_scale.value_or(0.0F));
  if (!o_.geometry_scale) {
    std::vector<std::uint32_t> count(n, 0);
    for (std::uint32_t e = 0; e < g.top.edge_count; ++e) {
      const deform::SubdivEdge ed = view.edge(e);
      float d2 = 0.0F;
      for (std::size_t k = 0; k < 3; ++k) {
        const float d = g.pos[3 * ed.a + k] - g.pos[3 * ed.b + k];
        d2 += d * d;
      }
      const float len = std::sqrt(d2);
      for (std::uint32_t v : {g.weld[ed.a], g.weld[ed.b]}) {
        scale[v] += len;
        ++count[v];
      }
    }
    // Per position, so the copies of a vertex along a seam agree.
    for (std::size_t v = 0; v < n; ++v)
      if (count[v] != 0) scale[v] /= static_cast<float>(count[v]);
    for (std::size_t v = 0; v < n; ++v) scale[v] = scale[g.weld[v]];
  }
  g.extras.resize(n);
  g.vertices.resize(n * deform::kSubdivInVertexBytes);
  for (std::size_t v = 0; v < n; ++v) {
    g.extras[v] =
        deform::pack_subdiv_extras(std::isfinite(scale[v]) ? scale[v] : 0.0F, strength6[v]);
    float x[10] = {g.pos[3 * v], g.pos[3 * v + 1], g.pos[3 * v + 2], 0, 0, 0, 0, 0, 0, 1};
    if (!g.normal.empty())
      for (int c = 0; c < 3; ++c) x[3 + c] = g.normal[3 * v + static_cast<std::size_t>(c)];
    if (!g.tangent.empty())
      for (int c = 0; c < 4; ++c) x[6 + c] = g.tangent[4 * v + static_cast<std::size_t>(c)];
    std::memcpy(g.vertices.data() + v * deform::kSubdivInVertexBytes, x, sizeof x);
  }
  view.vertices = g.vertices;
  view.extras = g.extras;
  return core::Ok{};
}

core::Status Subdivider::run_kernels(Group& g) {
  const std::size_t n = g.n;
  // Triangle order keeps each input triangle's output together (compact()
  // and the primitive's index ranges rely on it).
  const deform::SubdivisionJob job{o_.params, g.view, g.indices, g.top.triangle_edges, {}, {}};
  core::Result<deform::SubdivOutput> out = deform::SubdivOutput{};
  if (o_.gpu != nullptr) {
    out->vertices.resize((n + g.top.edge_count) * deform::kSubdivOutVertexBytes);
    out->edge_strength.resize(g.top.edge_count);
    out->indices.resize(g.indices.size() * 4);
    deform::SubdivisionJob on_gpu = job;
    on_gpu.out = {out->vertices, out->edge_strength, out->indices, &out->draw};
    auto st = on_gpu.run_gpu(*o_.gpu);
    if (!st && st.error().code == gpu::codes::GPU_LIMIT) {
      // An array read at any index past one binding: this mesh on the CPU.
      notes_.push_back(g.p0 + ": " + st.error().message + "; subdivided on the cpu instead");
      out = deform::run_subdivision(job, o_.run);
    } else if (!st) {
      out = std::move(st).error();
    } else {
      out->indices.resize(out->draw.index_count);
    }
  } else {
    out = deform::run_subdivision(job, o_.run);
  }
  if (!out) {
    core::Error e = std::move(out).error();
    if (e.location.empty()) e.location = core::Location::at_pointer(g.p0);
    return e;
  }
  g.out = std::move(*out);
  g.c = compact(n, g.top.edge_count, g.out.indices);
  return core::Ok{};
}

core::Result<GltfAttributes> Subdivider::new_attributes(const Group& g) {
  const GltfAttributes& attrs = g.prim0->attributes;
  const std::string& p0 = g.p0;
  const std::size_t n = g.n;
  const Compaction& c = g.c;
  const std::size_t n_out = n + c.new_edges.size();
  // The kernel's vertices, the kept ones.
  auto kernel_attr = [&](std::size_t which, std::size_t comps) {
    std::vector<float> v(n_out * comps);
    for (std::size_t i = 0; i < n_out; ++i) {
      const std::size_t src = i < n ? i : n + c.new_edges[i - n];
      float x[4];
      std::memcpy(x, g.out.vertices.data() + src * deform::kSubdivOutVertexBytes + which * 16, 16);
      for (std::size_t k = 0; k < comps; ++k) v[i * comps + k] = x[k];
    }
    return v;
  };
  GltfAttributes new_attrs;
  new_attrs.items.push_back({"POSITION", editor_.append_floats(kernel_attr(0, 3), 3, true)});
  if (!g.normal.empty())
    new_attrs.items.push_back({"NORMAL", editor_.append_floats(kernel_attr(1, 3), 3, false)});
  if (!g.tangent.empty())
    new_attrs.items.push_back({"TANGENT", editor_.append_floats(kernel_attr(2, 4), 4, false)});

  // Skin sets and the other attributes.
  std::vector<std::vector<std::uint32_t>> joints;
  std::vector<std::vector<float>> weights;
  for (std::size_t s = 0;; ++s) {
    const std::string jn = "JOINTS_" + std::to_string(s);
    const std::string wn = "WEIGHTS_" + std::to_string(s);
    const auto ja = attrs.find(jn);
    const auto wa = attrs.find(wn);
    if (!ja && !wa) break;
    if (!ja || !wa) return gltf_error(jn + " and " + wn + " come in pairs", p0 + "/attributes");
    auto jinfo = doc_.accessor(*ja);
    if (!jinfo) return std::move(jinfo).error();
    if (jinfo->components != 4 || jinfo->count != n)
      return gltf_error(jn + " is not VEC4 × " + std::to_string(n), p0 + "/attributes/" + jn);
    auto jv = doc_.read_accessor_uints(*ja);
    if (!jv) return std::move(jv).error();
    auto wv =
        read_float_attribute(doc_, *wa, 4, n, deform::codes::DEFORM_GLTF, p0 + "/attributes/" + wn);
    if (!wv) return std::move(wv).error();
    joints.push_back(std::move(*jv));
    weights.push_back(std::move(*wv));
  }
  if (!joints.empty()) {
    merge_skin(joints, weights, g.view, c);
    for (std::size_t s = 0; s < joints.size(); ++s) {
      for (std::uint32_t j : joints[s])
        if (j > 0xFFFFU)
          return gltf_error("a joint index above 65535",
                            p0 + "/attributes/JOINTS_" + std::to_string(s));
      // JOINTS_n must be UNSIGNED_BYTE or UNSIGNED_SHORT (glTF 2.0 §3.7.2.1):
      // written as shorts even when every value is below 255.
      new_attrs.items.push_back({"JOINTS_" + std::to_string(s),
                                 editor_.append_uints(joints[s], 4, scene::GltfViewUse::kVertices,
                                                      scene::GltfComponent::kUnsignedShort)});
      new_attrs.items.push_back(
          {"WEIGHTS_" + std::to_string(s), editor_.append_floats(weights[s], 4, false)});
    }
  }
  for (const auto& [name, accessor] : attrs.items) {
    if (name == "POSITION" || name == "NORMAL" || name == "TANGENT" ||
        starts_with(name, "JOINTS_") || starts_with(name, "WEIGHTS_"))
      continue;
    const std::string ap = p0 + "/attributes/" + name;
    auto info = doc_.accessor(accessor);
    if (!info) return std::move(info).error();
    if (info->components < 1 || info->components > 4 || info->count != n)
      return gltf_error(name + " is " + info->type + " × " + std::to_string(info->count) +
                            "; SCALAR to VEC4 × " + std::to_string(n) + " can be interpolated",
                        ap);
    auto v = doc_.read_accessor_floats(accessor);
    if (!v) return std::move(v).error();
    new_attrs.items.push_back(
        {name, editor_.append_floats(midpoint_attribute(*v, info->components, g.view, c),
                                     info->components, false)});
  }

  return new_attrs;
}

core::Result<std::vector<GltfAttributes>> Subdivider::new_targets(const Group& g) {
  const std::size_t n = g.n;
  std::vector<GltfAttributes> targets;
  for (std::size_t t = 0; t < g.prim0->targets.size(); ++t) {
    const std::string tp = g.p0 + "/targets/" + std::to_string(t);
    GltfAttributes nt;
    for (const auto& [name, accessor] : g.prim0->targets[t].items) {
      auto info = doc_.accessor(accessor);
      if (!info) return std::move(info).error();
      const std::size_t comps = info->components;
      if (comps < 1 || comps > 4 || info->count != n)
        return gltf_error(
            "target attribute " + name + " is " + info->type + " × " + std::to_string(info->count),
            tp + "/" + name);
      auto v = doc_.read_accessor_floats(accessor);
      if (!v) return std::move(v).error();
      nt.items.push_back({name, editor_.append_floats(midpoint_attribute(*v, comps, g.view, g.c),
                                                      comps, name == "POSITION")});
    }
    targets.push_back(std::move(nt));
  }
  return targets;
}

core::Status Subdivider::group(std::size_t m, const std::vector<std::size_t>& prims,
                               GltfSubdivideMesh& summary) {
  Group g;
  g.mesh = m;
  g.prims = &prims;
  g.prim0 = &doc_.asset().meshes[m].primitives[prims[0]];
  g.p0 = g.prim0->pointer;
  if (auto st = read_geometry(g); !st) return st;
  if (auto st = kernel_input(g); !st) return st;
  if (auto st = run_kernels(g); !st) return st;
  auto new_attrs = new_attributes(g);
  if (!new_attrs) return std::move(new_attrs).error();
  auto new_targets_ = new_targets(g);
  if (!new_targets_) return std::move(new_targets_).error();

  // Index lists: triangle order keeps each input triangle's output
  // triangles together, so primitive p's output is its triangles' range.
  std::size_t written = 0;
  std::size_t split = 0;
  for (float s : g.out.edge_strength) split += s > o_.params.split_threshold ? 1 : 0;
  // Kernel 3's own split rule (only its inputs are read here).
  const deform::SubdivIndexJob k3{g.view, g.indices, g.top.triangle_edges, g.out.edge_strength,
                                  o_.params.split_threshold};
  for (std::size_t p = 0; p < prims.size(); ++p) {
    std::size_t count = 0;
    for (std::size_t t = g.tri_start[p]; t < g.tri_start[p + 1]; ++t)
      count += 3 * (1 + std::size_t{deform::subdiv_split_count(k3, static_cast<std::uint32_t>(t))});
    std::vector<std::uint32_t> idx(
        g.out.indices.begin() + static_cast<std::ptrdiff_t>(written),
        g.out.indices.begin() + static_cast<std::ptrdiff_t>(written + count));
    written += count;
    for (std::uint32_t& i : idx) i = g.c.map[i];
    editor_.set_indices(m, prims[p], editor_.append_uints(idx, 1, scene::GltfViewUse::kIndices));
    editor_.set_attributes(m, prims[p], *new_attrs);
    if (!new_targets_->empty()) editor_.set_targets(m, prims[p], *new_targets_);
    summary.triangles_out += count / 3;
  }
  summary.primitives += prims.size();
  summary.vertices_in += g.n;
  summary.vertices_out += g.n + g.c.new_edges.size();
  summary.triangles_in += g.indices.size() / 3;
  summary.edges += g.top.edge_count;
  summary.edges_split += split;
  return core::Ok{};
}

}  // namespace

core::Result<GltfSubdivideResult> subdivide_gltf(GltfDocument& doc,
                                                 const GltfSubdivideOptions& options) {
  auto edit = scene::GltfEditor::begin(doc, deform::codes::DEFORM_GLTF);
  if (!edit) return std::move(edit).error();
  GltfSubdivideResult result;
  Subdivider sub(*edit, options);
  std::vector<std::string> names;
  for (std::size_t m = 0; m < doc.asset().meshes.size(); ++m) {
    const scene::GltfMesh& mesh = doc.asset().meshes[m];
    GltfSubdivideMesh summary;
    summary.name = mesh.name;
    names.push_back(summary.name);
    if (!options.mesh.empty() && summary.name != options.mesh) continue;
    // Primitives grouped by their attributes and targets (same vertices).
    std::map<std::string, std::vector<std::size_t>> groups;
    std::vector<std::string> order;
    for (std::size_t p = 0; p < mesh.primitives.size(); ++p) {
      const scene::GltfPrimitive& prim = mesh.primitives[p];
      if (prim.mode != 4)
        return gltf_error("only triangle primitives (mode 4) can be subdivided",
                          prim.pointer + "/mode");
      std::string key;
      const auto add = [&key](const GltfAttributes& attrs) {
        for (const auto& [semantic, accessor] : attrs.items)
          key += semantic + "=" + std::to_string(accessor) + ";";
        key += "|";
      };
      add(prim.attributes);
      for (const GltfAttributes& t : prim.targets) add(t);
      if (groups.find(key) == groups.end()) order.push_back(key);
      groups[key].push_back(p);
    }
    for (const std::string& key : order)
      if (auto st = sub.group(m, groups[key], summary); !st) return std::move(st).error();
    result.meshes.push_back(std::move(summary));
  }
  if (!options.mesh.empty() && result.meshes.empty()) {
    std::string list;
    for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
    return gltf_error("no mesh named \"" + options.mesh +
                          "\"; the meshes are: " + (list.empty() ? "(none named)" : list),
                      "/meshes");
  }
  auto glb = edit->finish_glb();
  if (!glb) return std::move(glb).error();
  result.glb = std::move(*glb);
  result.notes = std::move(sub.notes_);
  return result;
}

}  // namespace charkit::ops
