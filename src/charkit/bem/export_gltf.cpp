#include "charkit/bem/export_gltf.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <tuple>

#include "charkit/bem/detail/vertex_format.h"
#include "charkit/bem/error_codes.h"
#include "charkit/bem/packed_tbn.h"
#include "charkit/core/bytes.h"
#include "charkit/core/half.h"
#include "charkit/core/json.h"
#include "charkit/deform/sparse_morph.h"
#include "charkit/scene/gltf_writer.h"
#include "charkit/scene/image.h"

namespace charkit::bem {
namespace {

using core::make_error;

using namespace vertex_attr;  // kFormatBytes, the semantics (detail/vertex_format.h)

/// One component of Unity format `format` as a number: normalised formats
/// map to [0,1] / [-1,1] (SNorm clamped at -1), integer formats keep their value.
double read_component(const std::uint8_t* p, std::uint32_t format) {
  switch (format) {
    case 0:
      return std::bit_cast<float>(core::load_le<std::uint32_t>(p));
    case 1:
      return core::half_to_float(core::load_le<std::uint16_t>(p));
    case 2:
      return p[0] / 255.0;
    case 3:
      return std::max(static_cast<std::int8_t>(p[0]) / 127.0, -1.0);
    case 4:
      return core::load_le<std::uint16_t>(p) / 65535.0;
    case 5:
      return std::max(static_cast<std::int16_t>(core::load_le<std::uint16_t>(p)) / 32767.0, -1.0);
    case 6:
      return p[0];
    case 7:
      return static_cast<std::int8_t>(p[0]);
    case 8:
      return core::load_le<std::uint16_t>(p);
    case 9:
      return static_cast<std::int16_t>(core::load_le<std::uint16_t>(p));
    case 10:
      return core::load_le<std::uint32_t>(p);
    default:
      return static_cast<std::int32_t>(core::load_le<std::uint32_t>(p));
  }
}

/// A declared attribute over its stream bytes, checked to fit every vertex.
struct AttributeView {
  const std::uint8_t* base = nullptr;
  std::uint32_t stride = 0;
  std::uint32_t offset = 0;
  std::uint32_t format = 0;
  std::uint32_t dimension = 0;

  double get(std::uint32_t vertex, std::uint32_t component) const {
    if (component >= dimension) {
      return 0.0;
    }
    return read_component(
        base + std::size_t{vertex} * stride + offset + component * kFormatBytes[format], format);
  }
  float getf(std::uint32_t vertex, std::uint32_t component) const {
    return static_cast<float>(get(vertex, component));
  }
  /// The attribute's first 4 bytes as an unsigned word (the packed normal).
  std::uint32_t word(std::uint32_t vertex) const {
    return core::load_le<std::uint32_t>(base + std::size_t{vertex} * stride + offset);
  }
};

core::Result<AttributeView> view_of(const Mesh& mesh, const SelectedMesh& sel,
                                    std::uint32_t mesh_index, std::size_t attribute) {
  const VertexAttribute& a = mesh.attributes[attribute];
  const std::string where =
      core::json_pointer_join("/meshes", mesh_index) + "/attributes/" + std::to_string(attribute);
  if (a.format > 11 || a.dimension < 1 || a.dimension > 4 || a.stream >= mesh.streams.size() ||
      a.stream >= sel.streams.size() || !sel.streams[a.stream]) {
    return core::error_at_pointer(codes::BEM_EXPORT_ATTRIBUTE,
                                  "attribute format, dimension or stream not usable", where);
  }
  const std::uint32_t stride = mesh.streams[a.stream].stride;
  const std::uint64_t end =
      std::uint64_t{a.offset} + std::uint64_t{kFormatBytes[a.format]} * a.dimension;
  const std::uint64_t needed = std::uint64_t{mesh.vertex_count} * stride;
  if (end > stride || sel.streams[a.stream]->size() < needed) {
    return core::error_at_pointer(codes::BEM_EXPORT_ATTRIBUTE, "attribute does not fit its stream",
                                  where);
  }
  return AttributeView{sel.streams[a.stream]->bytes().data(), stride, a.offset, a.format,
                       a.dimension};
}

/// Shared state while building one export.
class SceneBuilder {
 public:
  SceneBuilder(const Model& model, const Plan& plan, const Selection& selection,
               const ExportOptions& options)
      : model_(model), plan_(plan), selection_(selection), options_(options) {
    for (const TextureBinding& b : plan.textures) {
      if (b.source == TextureBinding::Source::kDraw) {
        draw_bindings_[{b.mesh, b.draw}].push_back(&b);
      }
    }
  }

  core::Result<ExportResult> build() {
    result_.scene.name = "bem export";
    std::map<std::uint32_t, std::uint32_t> scene_mesh_of;  // BEM mesh -> scene mesh
    const std::size_t planned = std::min(plan_.meshes.size(), selection_.meshes.size());
    for (std::size_t i = 0; i < planned; ++i) {
      if (options_.progress) options_.progress(i, planned);
      const PlannedMesh& pm = plan_.meshes[i];
      if (pm.segments.empty()) {
        warn(codes::BEM_EXPORT_NO_DRAWS,
             "mesh " + std::to_string(pm.mesh) +
                 " has no selected draw; glTF needs one primitive, not exported",
             core::json_pointer_join("/meshes", pm.mesh));
        continue;
      }
      auto mesh = build_mesh(pm, selection_.meshes[i]);
      if (!mesh) {
        return std::move(mesh).error();
      }
      scene_mesh_of[pm.mesh] = static_cast<std::uint32_t>(result_.scene.meshes.size());
      result_.scene.meshes.push_back(std::move(*mesh));
    }
    if (options_.progress) options_.progress(planned, planned);
    for (const PlannedComponent& pc : plan_.components) {
      if (pc.op != Operation::kReplace) {
        continue;
      }
      auto it = scene_mesh_of.find(pc.mesh);
      if (it == scene_mesh_of.end()) {
        continue;
      }
      scene::Node node;
      node.name = model_.components[pc.target].mesh_name;
      node.mesh = it->second;
      result_.scene.nodes.push_back(std::move(node));
    }
    if (result_.scene.meshes.empty()) {
      warn(codes::BEM_EXPORT_EMPTY,
           "the selection replaces no mesh: the glTF has no geometry (kept and hidden components "
           "are the game's own meshes, not in the package)",
           "/meshes");
    }
    if (!joint_names_.empty()) {
      scene::Skeleton skeleton;
      skeleton.name = "palette";
      skeleton.joint_names = joint_names_;
      skeleton.parents.assign(joint_names_.size(), -1);  // flat: the package has no hierarchy
      result_.scene.skeleton = std::move(skeleton);
    }
    return std::move(result_);
  }

 private:
  void warn(core::ErrorCode code, std::string message, std::string pointer) {
    result_.warnings.push_back({std::move(code), std::move(message), std::move(pointer)});
  }

  /// §10 channels as morph targets (ExportOptions::morph_targets): one per
  /// non-neutral frame, its sparse records spread over the vertices (x
  /// mirrored like the positions), weighted as the plan evaluates the tick.
  core::Status add_morph_targets(const PlannedMesh& pm, const SelectedMesh& sel, std::uint32_t vc,
                                 float sx, scene::Mesh& out) {
    for (const PlannedChannel& ch : pm.channels) {
      const Deformation& def = model_.deformations[ch.deformation];
      const Parameter& param = model_.parameters[ch.parameter];
      for (const PlannedFrame& f : ch.frames) {
        if (f.neutral) continue;
        scene::MorphTarget t;
        t.name = slider_target_name(param, def, f.frame);
        t.weight = f.weight;
        t.positions.assign(vc, scene::Vec3{0.0F, 0.0F, 0.0F});
        auto it = sel.frame_payloads.find(f.payload);
        if (it == sel.frame_payloads.end())
          return core::error_at_pointer(codes::BEM_EXPORT_ATTRIBUTE, "a planned frame was not read",
                                        "/mesh_deformations/" + std::to_string(ch.deformation));
        auto d = deform::parse_sparse_deltas(it->second->bytes(), vc, f.count);
        if (!d) return std::move(d).error();
        for (std::size_t r = 0; r + 16 <= d->records.size(); r += 16) {
          std::uint32_t v = 0;
          float xyz[3];
          std::memcpy(&v, d->records.data() + r, 4);
          std::memcpy(xyz, d->records.data() + r + 4, 12);
          if (v < vc) t.positions[v] = {sx * xyz[0], xyz[1], xyz[2]};
        }
        out.targets.push_back(std::move(t));
      }
    }
    return core::Ok{};
  }

  core::Result<scene::Mesh> build_mesh(const PlannedMesh& pm, const SelectedMesh& sel) {
    const Mesh& mesh = model_.meshes[pm.mesh];
    const std::uint32_t vc = mesh.vertex_count;
    const bool convert = options_.unity_to_gltf;
    const float sx = convert ? -1.0F : 1.0F;  // mirror X: Unity left-handed -> glTF right-handed
    scene::Mesh out;
    out.name = "mesh_" + std::to_string(pm.mesh);

    std::map<std::uint32_t, AttributeView> attrs;  // by semantic
    for (std::size_t a = 0; a < mesh.attributes.size(); ++a) {
      auto view = view_of(mesh, sel, pm.mesh, a);
      if (!view) {
        return std::move(view).error();
      }
      attrs[mesh.attributes[a].semantic] = *view;
    }

    out.positions.resize(vc);
    const bool targets = options_.morph_targets && !pm.channels.empty();
    if (targets) {
      auto st = add_morph_targets(pm, sel, vc, sx, out);
      if (!st) return std::move(st).error();
    }
    if (!targets && sel.positions.size() == std::size_t{vc} * 3) {  // §10: morphed positions
      for (std::uint32_t v = 0; v < vc; ++v) {
        out.positions[v] = {sx * sel.positions[3 * v], sel.positions[3 * v + 1],
                            sel.positions[3 * v + 2]};
      }
    } else if (auto it = attrs.find(kPosition); it != attrs.end()) {
      for (std::uint32_t v = 0; v < vc; ++v) {
        out.positions[v] = {sx * it->second.getf(v, 0), it->second.getf(v, 1),
                            it->second.getf(v, 2)};
      }
    } else {
      return core::error_at_pointer(codes::BEM_EXPORT_ATTRIBUTE, "mesh has no position attribute",
                                    core::json_pointer_join("/meshes", pm.mesh) + "/attributes");
    }
    if (auto it = attrs.find(kNormal); it != attrs.end()) {
      const AttributeView& n = it->second;
      out.normals.resize(vc);
      if (is_packed_tbn_attribute(kNormal, n.format, n.dimension)) {
        // One 32-bit word holds normal, tangent and bitangent sign (packed_tbn.h).
        const bool own_tangent = attrs.count(kTangent) != 0;
        if (!own_tangent) out.tangents.resize(vc);
        std::uint32_t unflagged = 0;
        for (std::uint32_t v = 0; v < vc; ++v) {
          const UnpackedTbn tbn = unpack_tbn(n.word(v));
          unflagged += tbn.packed_flag ? 0 : 1;
          out.normals[v] = {sx * tbn.normal[0], tbn.normal[1], tbn.normal[2]};
          if (!own_tangent)  // a mirror flips the bitangent's handedness too
            out.tangents[v] = {sx * tbn.tangent[0], tbn.tangent[1], tbn.tangent[2],
                               sx * tbn.tangent[3]};
        }
        if (unflagged != 0)
          warn(codes::BEM_EXPORT_PACKED_NORMAL,
               std::to_string(unflagged) + " of " + std::to_string(vc) +
                   " vertices have a one-component normal without the packed flag (bit 30); "
                   "decoded as packed words anyway",
               core::json_pointer_join("/meshes", pm.mesh) + "/attributes");
      } else {
        for (std::uint32_t v = 0; v < vc; ++v) {
          out.normals[v] = {sx * n.getf(v, 0), n.getf(v, 1), n.getf(v, 2)};
        }
      }
    }
    if (auto it = attrs.find(kTangent); it != attrs.end()) {
      out.tangents.resize(vc);
      const AttributeView& t = it->second;
      for (std::uint32_t v = 0; v < vc; ++v) {
        const float w = t.dimension >= 4 ? t.getf(v, 3) : 1.0F;
        // Mirroring flips the bitangent's handedness, hence w negated too.
        out.tangents[v] = {sx * t.getf(v, 0), t.getf(v, 1), t.getf(v, 2), sx * w};
      }
    }
    if (auto it = attrs.find(kColor); it != attrs.end()) {
      out.colors.resize(vc);
      const AttributeView& c = it->second;
      for (std::uint32_t v = 0; v < vc; ++v) {
        out.colors[v] = {c.getf(v, 0), c.getf(v, 1), c.getf(v, 2),
                         c.dimension >= 4 ? c.getf(v, 3) : 1.0F};
      }
    }
    for (std::uint32_t s = kTexCoord0; s <= kTexCoord7; ++s) {
      auto it = attrs.find(s);
      if (it == attrs.end()) {
        continue;  // sets are renumbered consecutively (TEXCOORD_n has no gaps)
      }
      if (it->second.dimension > 2) {
        // Not a UV pair (e.g. the 16/12/12 layout's SNorm8×4 outline data):
        // glTF has no semantic for it, so it is kept whole, as stored.
        scene::CustomAttribute extra;
        extra.name = "_TEXCOORD" + std::to_string(s - kTexCoord0);
        extra.components = it->second.dimension;
        extra.values.resize(std::size_t{vc} * extra.components);
        for (std::uint32_t v = 0; v < vc; ++v)
          for (std::uint32_t c = 0; c < extra.components; ++c)
            extra.values[std::size_t{v} * extra.components + c] = it->second.getf(v, c);
        out.custom.push_back(std::move(extra));
        continue;
      }
      std::vector<scene::Vec2> uv(vc);
      for (std::uint32_t v = 0; v < vc; ++v) {
        const float u = it->second.getf(v, 0);
        const float w = it->second.getf(v, 1);
        uv[v] = {u, convert ? 1.0F - w : w};
      }
      out.texcoords.push_back(std::move(uv));
    }
    if (auto it = attrs.find(kBlendIndices); it != attrs.end()) {
      auto st = read_skin(pm.mesh, mesh, it->second, attrs, out);
      if (!st) {
        return std::move(st).error();
      }
    }

    for (const IndexSegment& seg : pm.segments) {
      scene::Primitive prim;
      if (std::uint64_t{seg.start} + seg.count > sel.indices.size()) {
        return core::error_at_pointer(
            codes::BEM_EXPORT_INDEX, "segment outside the index stream",
            core::json_pointer_join("/meshes", pm.mesh) + "/draws/" + std::to_string(seg.draw));
      }
      prim.indices.assign(sel.indices.begin() + seg.start,
                          sel.indices.begin() + seg.start + seg.count);
      if (convert) {  // a mirror reverses the winding
        for (std::size_t t = 0; t + 2 < prim.indices.size(); t += 3) {
          std::swap(prim.indices[t + 1], prim.indices[t + 2]);
        }
      }
      prim.material = material_for(pm.mesh, seg.draw);
      out.primitives.push_back(std::move(prim));
    }
    unit_normals(pm.mesh, out);
    return out;
  }

  /// glTF wants unit NORMAL and TANGENT.xyz: a package's may be longer or
  /// shorter (float normals as authored, packed words that decode short).
  /// Non-unit vectors are normalised; a zero normal is recomputed from the
  /// faces that use the vertex (area-weighted), a zero tangent made
  /// perpendicular to the normal; a warning says how many.
  void unit_normals(std::uint32_t mesh_index, scene::Mesh& out) {
    constexpr float kTolerance = 1e-5F;  // well inside the Khronos validator's
    auto length = [](float x, float y, float z) { return std::sqrt(x * x + y * y + z * z); };
    std::uint32_t rescaled = 0, zero = 0;
    std::vector<std::uint32_t> recompute;
    for (std::uint32_t v = 0; v < out.normals.size(); ++v) {
      auto& n = out.normals[v];
      const float len = length(n[0], n[1], n[2]);
      if (!(len > 1e-12F) || !std::isfinite(len)) {
        recompute.push_back(v);
      } else if (std::abs(len - 1.0F) > kTolerance) {
        for (float& c : n) c /= len;
        ++rescaled;
      }
    }
    if (!recompute.empty()) {
      std::vector<std::array<double, 3>> sum(out.normals.size(), {0.0, 0.0, 0.0});
      for (const scene::Primitive& prim : out.primitives) {
        for (std::size_t t = 0; t + 2 < prim.indices.size(); t += 3) {
          const std::uint32_t i[3] = {prim.indices[t], prim.indices[t + 1], prim.indices[t + 2]};
          if (i[0] >= out.positions.size() || i[1] >= out.positions.size() ||
              i[2] >= out.positions.size())
            continue;
          const auto& a = out.positions[i[0]];
          const auto& b = out.positions[i[1]];
          const auto& c = out.positions[i[2]];
          const double e1[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
          const double e2[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
          const double f[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2],
                               e1[0] * e2[1] - e1[1] * e2[0]};
          for (std::uint32_t k : i)
            for (int d = 0; d < 3; ++d) sum[k][static_cast<std::size_t>(d)] += f[d];
        }
      }
      for (std::uint32_t v : recompute) {
        const auto& f = sum[v];
        const double len = std::sqrt(f[0] * f[0] + f[1] * f[1] + f[2] * f[2]);
        out.normals[v] =
            len > 0.0 ? scene::Vec3{static_cast<float>(f[0] / len), static_cast<float>(f[1] / len),
                                    static_cast<float>(f[2] / len)}
                      : scene::Vec3{0.0F, 0.0F, 1.0F};  // a vertex of no face
        ++zero;
      }
    }
    std::uint32_t tangents = 0;
    for (std::uint32_t v = 0; v < out.tangents.size(); ++v) {
      auto& t = out.tangents[v];
      const float len = length(t[0], t[1], t[2]);
      if (len > 1e-12F && std::isfinite(len)) {
        if (std::abs(len - 1.0F) <= kTolerance) continue;
        for (int d = 0; d < 3; ++d) t[static_cast<std::size_t>(d)] /= len;
      } else {
        // Any unit vector perpendicular to the normal: the axis least along it, made orthogonal.
        const scene::Vec3 n = v < out.normals.size() ? out.normals[v] : scene::Vec3{0, 0, 1};
        const scene::Vec3 axis =
            std::abs(n[0]) < 0.9F ? scene::Vec3{1, 0, 0} : scene::Vec3{0, 1, 0};
        const float d = axis[0] * n[0] + axis[1] * n[1] + axis[2] * n[2];
        scene::Vec3 p{axis[0] - d * n[0], axis[1] - d * n[1], axis[2] - d * n[2]};
        const float pl = length(p[0], p[1], p[2]);
        t = {p[0] / pl, p[1] / pl, p[2] / pl, t[3] < 0.0F ? -1.0F : 1.0F};
      }
      ++tangents;
    }
    if (rescaled + zero + tangents == 0) return;
    std::string what;
    auto add = [&what](std::uint32_t n, const char* text) {
      if (n == 0) return;
      what += (what.empty() ? "" : "; ") + std::to_string(n) + text;
    };
    add(rescaled, " normals were not unit length and were normalised");
    add(zero, " normals were zero and were recomputed from the faces");
    add(tangents, " tangents were not unit length and were normalised");
    warn(codes::BEM_EXPORT_NORMALS, what + " (glTF needs unit normals and tangents)",
         core::json_pointer_join("/meshes", mesh_index) + "/attributes");
  }

  core::Status read_skin(std::uint32_t mesh_index, const Mesh& mesh, const AttributeView& indices,
                         const std::map<std::uint32_t, AttributeView>& attrs, scene::Mesh& out) {
    if (mesh.bones.empty() || joint_names_.size() + mesh.bones.size() > 0xFFFF) {
      return core::error_at_pointer(codes::BEM_EXPORT_JOINT,
                                    "skinned mesh without palette bones, or too many bones",
                                    core::json_pointer_join("/meshes", mesh_index) + "/bones");
    }
    const auto weights_it = attrs.find(kBlendWeight);
    const AttributeView* weights = weights_it == attrs.end() ? nullptr : &weights_it->second;
    // Palette index -> skeleton joint (bones shared by name across meshes).
    std::vector<std::uint16_t> joint_of(mesh.bones.size());
    for (std::size_t b = 0; b < mesh.bones.size(); ++b) {
      joint_of[b] = joint_for(mesh.bones[b].name);
    }
    const std::uint32_t vc = mesh.vertex_count;
    out.joints.resize(vc);
    out.weights.resize(vc);
    for (std::uint32_t v = 0; v < vc; ++v) {
      std::array<std::uint16_t, 4> j{};
      scene::Vec4 w{};
      // §7: the 4-byte layout is rigid: first index, weight 1.
      const std::uint32_t influences = weights != nullptr ? 4 : 1;
      float sum = 0.0F;
      for (std::uint32_t k = 0; k < influences; ++k) {
        const float wk = weights != nullptr ? std::max(weights->getf(v, k), 0.0F) : 1.0F;
        if (wk <= 0.0F || !std::isfinite(wk)) {
          continue;
        }
        const double raw = indices.get(v, k);
        if (!(raw >= 0.0) || raw >= static_cast<double>(mesh.bones.size())) {
          return core::error_at_pointer(codes::BEM_EXPORT_JOINT,
                                        "vertex " + std::to_string(v) + " uses bone " +
                                            std::to_string(static_cast<long long>(raw)) +
                                            " outside the palette of " +
                                            std::to_string(mesh.bones.size()),
                                        core::json_pointer_join("/meshes", mesh_index) + "/bones");
        }
        j[k] = joint_of[static_cast<std::size_t>(raw)];
        w[k] = wk;
        sum += wk;
      }
      if (sum > 0.0F) {  // §7 allows 1 ± 0.01; glTF wants the sum at 1
        for (float& x : w) {
          x /= sum;
        }
      } else {
        w = {1.0F, 0.0F, 0.0F, 0.0F};
        j = {joint_of.empty() ? std::uint16_t{0} : joint_of[0], 0, 0, 0};
      }
      out.joints[v] = j;
      out.weights[v] = w;
    }
    return core::Ok{};
  }

  std::uint16_t joint_for(const std::string& name) {
    auto [it, inserted] =
        joint_index_.try_emplace(name, static_cast<std::uint16_t>(joint_names_.size()));
    if (inserted) {
      joint_names_.push_back(name);
    }
    return it->second;
  }

  std::optional<std::uint32_t> material_for(std::uint32_t mesh, std::uint32_t draw) {
    const Draw& d = model_.meshes[mesh].draws[draw];
    std::optional<std::uint32_t> base;
    std::optional<std::uint32_t> normal;
    const std::string where =
        core::json_pointer_join("/meshes", mesh) + "/draws/" + std::to_string(draw) + "/textures";
    auto found = draw_bindings_.find({mesh, draw});
    if (found != draw_bindings_.end()) {
      for (const TextureBinding* b : found->second) {
        if (!b->texture) {
          continue;  // a slot keeping the original texture: nothing in the package
        }
        const Texture& tex = model_.textures[*b->texture];
        const bool is_normal = tex.semantic == "normal";
        std::optional<std::uint32_t>& target = is_normal ? normal : base;
        if (target) {
          warn(codes::BEM_EXPORT_TEXTURE_EXTRA,
               "texture " + std::to_string(*b->texture) + " (" + tex.original_name +
                   ") not attached: the glTF material has one " +
                   (is_normal ? "normal" : "base colour") + " texture",
               where);
          continue;
        }
        target = texture_for(*b->texture);
      }
    }
    const auto key = std::make_tuple(d.material_name, base, normal);
    if (auto it = materials_.find(key); it != materials_.end()) {
      return it->second;
    }
    scene::Material m;
    m.name = d.material_name;
    m.base_color_texture = base;
    m.normal_texture = normal;
    const auto index = static_cast<std::uint32_t>(result_.scene.materials.size());
    result_.scene.materials.push_back(std::move(m));
    materials_.emplace(key, index);
    return index;
  }

  /// The scene texture of a model texture, decoded and encoded once; nullopt
  /// (with a warning) when it cannot be decoded.
  std::optional<std::uint32_t> texture_for(std::uint32_t t) {
    if (auto it = textures_.find(t); it != textures_.end()) {
      return it->second;
    }
    std::optional<std::uint32_t> out = make_texture(t);
    textures_.emplace(t, out);
    return out;
  }

  std::optional<std::uint32_t> make_texture(std::uint32_t t) {
    const Texture& tex = model_.textures[t];
    const std::string where = "/textures/" + std::to_string(t);
    const SharedPayload* data = nullptr;
    for (const SelectedTexture& st : selection_.textures) {
      if (st.texture == t && st.data) {
        data = &st.data;
      }
    }
    if (data == nullptr) {
      warn(codes::BEM_EXPORT_TEXTURE_MISSING, "texture " + std::to_string(t) + " was not read",
           where);
      return std::nullopt;
    }
    auto image = scene::decode_top_mip(tex.format, tex.width, tex.height, tex.srgb,
                                       (*data)->bytes(), options_.texture_limits);
    if (!image) {
      warn(codes::BEM_EXPORT_TEXTURE_DECODE,
           "texture " + std::to_string(t) + " (" + tex.original_name + ", " +
               scene::texture_format_name(tex.format) + ") not exported: " + image.error().code +
               ": " + image.error().message,
           where);
      return std::nullopt;
    }
    if (tex.semantic == "normal" &&
        (tex.normal_encoding == "xy-unorm" || tex.format == scene::texture_format::kBC5)) {
      reconstruct_normal_z(*image);
    }
    if (options_.unity_to_gltf) {
      scene::flip_rows(*image);  // Unity stores the bottom row first; PNG the top row
    }
    const bool grey =
        tex.format == scene::texture_format::kR8 || tex.format == scene::texture_format::kBC4;
    core::Result<std::vector<std::uint8_t>> png =
        grey ? encode_grey(*image) : scene::encode_png(*image);
    if (!png) {
      warn(codes::BEM_EXPORT_TEXTURE_DECODE,
           "texture " + std::to_string(t) + " not exported: " + png.error().message, where);
      return std::nullopt;
    }
    const std::string name =
        tex.original_name.empty() ? "texture_" + std::to_string(t) : tex.original_name;
    scene::Scene& s = result_.scene;
    s.images.push_back({name, std::move(*png)});
    s.textures.push_back({name, static_cast<std::uint32_t>(s.images.size() - 1)});
    return static_cast<std::uint32_t>(s.textures.size() - 1);
  }

  static core::Result<std::vector<std::uint8_t>> encode_grey(const scene::RgbaImage& image) {
    std::vector<std::uint8_t> grey(std::size_t{image.width} * image.height);
    for (std::size_t i = 0; i < grey.size(); ++i) {
      grey[i] = image.pixels[4 * i];
    }
    return scene::encode_png_grey(image.width, image.height, grey);
  }

  /// Two-channel normal maps store x, y (unorm); z = sqrt(1 - x² - y²) goes to blue.
  static void reconstruct_normal_z(scene::RgbaImage& image) {
    for (std::size_t i = 0; i + 3 < image.pixels.size(); i += 4) {
      const double x = image.pixels[i] / 255.0 * 2.0 - 1.0;
      const double y = image.pixels[i + 1] / 255.0 * 2.0 - 1.0;
      const double z = std::sqrt(std::max(0.0, 1.0 - x * x - y * y));
      image.pixels[i + 2] = static_cast<std::uint8_t>(std::lround((z * 0.5 + 0.5) * 255.0));
      image.pixels[i + 3] = 255;
    }
  }

  const Model& model_;
  const Plan& plan_;
  const Selection& selection_;
  const ExportOptions& options_;
  ExportResult result_;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<const TextureBinding*>>
      draw_bindings_;
  std::map<std::tuple<std::string, std::optional<std::uint32_t>, std::optional<std::uint32_t>>,
           std::uint32_t>
      materials_;
  std::map<std::uint32_t, std::optional<std::uint32_t>> textures_;
  std::map<std::string, std::uint16_t> joint_index_;
  std::vector<std::string> joint_names_;
};

}  // namespace

core::Result<ExportResult> build_export_scene(const Model& model, const Plan& plan,
                                              const Selection& selection,
                                              const ExportOptions& options) {
  return SceneBuilder(model, plan, selection, options).build();
}

std::string slider_target_name(const Parameter& param, const Deformation& channel,
                               std::size_t frame) {
  std::size_t non_neutral = 0;
  std::optional<std::uint32_t> neutral_value;
  for (const DeformationFrame& f : channel.frames) {
    if (f.neutral)
      neutral_value = f.value;
    else
      ++non_neutral;
  }
  const std::uint32_t value = channel.frames.at(frame).value;
  const bool plain = non_neutral == 1 && value == param.max && neutral_value == param.min;
  return plain ? param.id : param.id + "@" + std::to_string(value);
}

std::vector<std::vector<float>> morph_target_weights(const Model& model, const Plan& plan,
                                                     const std::vector<std::uint32_t>& ticks) {
  std::vector<std::vector<float>> out;
  for (const PlannedMesh& pm : plan.meshes) {
    if (pm.segments.empty()) continue;  // not exported (BEM_EXPORT_NO_DRAWS)
    std::vector<float>& weights = out.emplace_back();
    for (const PlannedChannel& ch : pm.channels) {
      const Deformation& def = model.deformations[ch.deformation];
      const std::uint32_t tick =
          ch.available && ch.parameter < ticks.size() ? ticks[ch.parameter] : ch.tick;
      const auto at = channel_frame_weights(def, tick);
      for (std::size_t f = 0; f < def.frames.size(); ++f) {
        if (def.frames[f].neutral) continue;
        float w = 0.0f;
        for (const auto& [frame, fw] : at)
          if (frame == f) w = fw;
        weights.push_back(w);
      }
    }
  }
  return out;
}

core::Result<GlbExport> export_glb(const Model& model, const Package& package,
                                   const Settings& settings, const ExportOptions& options) {
  PlanOptions plan_options = options.plan;
  plan_options.all_frames = options.morph_targets;
  auto plan = make_plan(model, settings, plan_options);
  if (!plan) {
    return std::move(plan).error();
  }
  PackagePayloadSource source(package);
  auto selection = read_selection(model, *plan, source);
  if (!selection) {
    return std::move(selection).error();
  }
  auto built = build_export_scene(model, *plan, *selection, options);
  if (!built) {
    return std::move(built).error();
  }
  scene::GltfOptions gltf;
  gltf.generator = options.generator;
  auto glb = scene::write_glb(built->scene, gltf);
  if (!glb) {
    return std::move(glb).error();
  }
  return GlbExport{std::move(*glb), std::move(*built), std::move(*plan)};
}

}  // namespace charkit::bem
