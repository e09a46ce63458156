// bem::pack_scene: BEM vertex streams, draws, palettes and skins (detail/scene_packer.h).
#include "charkit/bem/detail/scene_packer.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <set>
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

namespace {

/// One component in Unity vertex format `format` (the inverse of the
/// export's read): normalised formats from [0,1] / [-1,1], rounded to
/// nearest and clamped; integer formats rounded and clamped to their range.
void write_component(std::uint8_t* p, std::uint32_t format, double v) {
  if (std::isnan(v)) v = 0;
  auto q = [&](double lo, double hi, double scale) {
    return std::nearbyint(std::clamp(v, lo, hi) * scale);
  };
  switch (format) {
    case 0:
      core::store_le<std::uint32_t>(p, std::bit_cast<std::uint32_t>(static_cast<float>(v)));
      break;
    case 1:
      core::store_le<std::uint16_t>(p, core::float_to_half(static_cast<float>(v)));
      break;
    case 2:
      p[0] = static_cast<std::uint8_t>(q(0, 1, 255));
      break;
    case 3:
      p[0] = static_cast<std::uint8_t>(static_cast<std::int8_t>(q(-1, 1, 127)));
      break;
    case 4:
      core::store_le<std::uint16_t>(p, static_cast<std::uint16_t>(q(0, 1, 65535)));
      break;
    case 5:
      core::store_le<std::uint16_t>(
          p, static_cast<std::uint16_t>(static_cast<std::int16_t>(q(-1, 1, 32767))));
      break;
    case 6:
      p[0] = static_cast<std::uint8_t>(q(0, 255, 1));
      break;
    case 7:
      p[0] = static_cast<std::uint8_t>(static_cast<std::int8_t>(q(-128, 127, 1)));
      break;
    case 8:
      core::store_le<std::uint16_t>(p, static_cast<std::uint16_t>(q(0, 65535, 1)));
      break;
    case 9:
      core::store_le<std::uint16_t>(
          p, static_cast<std::uint16_t>(static_cast<std::int16_t>(q(-32768, 32767, 1))));
      break;
    case 10:
      core::store_le<std::uint32_t>(p, static_cast<std::uint32_t>(q(0, 4294967295.0, 1)));
      break;
    default:
      core::store_le<std::uint32_t>(
          p,
          static_cast<std::uint32_t>(static_cast<std::int32_t>(q(-2147483648.0, 2147483647.0, 1))));
      break;
  }
}

}  // namespace

core::Status ScenePacker::pack_mesh(std::uint32_t m,
                                    std::pair<std::uint32_t, std::optional<std::uint32_t>> g) {
  const Mesh& mesh = model_.meshes[m];
  auto sm = read_scene_mesh(g.first, g.second);
  if (!sm) return std::move(sm).error();
  const std::size_t vc = sm->vertex_count;
  if (vc == 0)
    return core::error_at_pointer(codes::BEM_PACK_ATTRIBUTE, "the mesh has no vertices",
                                  "/meshes/" + std::to_string(g.first));

  PackedMesh pm;
  pm.mesh = m;
  pm.gltf_mesh = g.first;
  pm.node = sm->node_name;
  pm.vertices_before = mesh.vertex_count;
  pm.vertices = static_cast<std::uint32_t>(vc);

  Json& mj = result_.content.manifest["meshes"][m];
  // Palette: the template's bones, then joints it lacks from the donor component.
  std::vector<std::uint32_t> palette_of_joint;  // scene joint -> palette index
  const bool skinned =
      std::any_of(mesh.attributes.begin(), mesh.attributes.end(),
                  [](const VertexAttribute& a) { return a.semantic == kBlendIndices; });
  if (skinned) {
    if (sm->joints.empty())
      return core::error_at_pointer(codes::BEM_PACK_ATTRIBUTE,
                                    "template mesh " + std::to_string(m) +
                                        " is skinned; the glTF mesh needs JOINTS_0 and WEIGHTS_0",
                                    "/meshes/" + std::to_string(g.first));
    auto st = build_palette(m, *sm, mj, palette_of_joint, pm);
    if (!st) return st;
  }

  std::vector<std::vector<std::uint8_t>> streams;
  if (auto st = write_streams(m, g.first, *sm, palette_of_joint, streams); !st) return st;
  for (std::size_t s = 0; s < streams.size(); ++s) {
    if (mesh.streams[s].stride == 0) continue;
    mj["streams"][s]["payload"] = add_payload(std::move(streams[s]));
  }
  mj["vertex_count"] = static_cast<std::uint32_t>(vc);
  const std::uint32_t index_size = vc > 65536 ? 4 : mesh.index_size;
  mj["index_size"] = index_size;

  if (auto st = pack_draws(m, *sm, index_size, mj, pm); !st) return st;
  std::set<std::string> template_targets;
  if (auto st = rebuild_template_channels(m, *sm, template_targets); !st) return st;
  if (sm->targets.size() > template_targets.size()) {
    auto st = collect_targets(m, *sm, template_targets);
    if (!st) return st;
  }
  result_.meshes.push_back(std::move(pm));
  return core::Ok{};
}

core::Status ScenePacker::write_streams(std::uint32_t m, std::uint32_t gltf_mesh,
                                        const SceneMesh& sm,
                                        const std::vector<std::uint32_t>& palette_of_joint,
                                        std::vector<std::vector<std::uint8_t>>& streams) {
  const Mesh& mesh = model_.meshes[m];
  const std::size_t vc = sm.vertex_count;
  streams.assign(mesh.streams.size(), {});
  for (std::size_t s = 0; s < mesh.streams.size(); ++s)
    streams[s].assign(vc * mesh.streams[s].stride, 0);
  std::uint32_t uv_set = 0;
  const float sx = options_.raw_axes ? 1.0F : -1.0F;
  for (std::size_t ai = 0; ai < mesh.attributes.size(); ++ai) {
    const VertexAttribute& a = mesh.attributes[ai];
    const std::string aptr =
        core::json_pointer_join("/meshes", m) + "/attributes/" + std::to_string(ai);
    if (a.stream >= streams.size() || a.format > 11 || a.dimension < 1 || a.dimension > 4)
      return core::error_at_pointer(codes::BEM_PACK_TEMPLATE, "attribute not usable", aptr);
    const std::uint32_t stride = mesh.streams[a.stream].stride;
    std::uint8_t* base = streams[a.stream].data() + a.offset;
    auto need = [&](const std::vector<float>& v, const char* what) -> core::Status {
      if (v.empty())
        return core::error_at_pointer(codes::BEM_PACK_ATTRIBUTE,
                                      std::string("the template's layout stores ") + what +
                                          " (attribute " + std::to_string(ai) + " of mesh " +
                                          std::to_string(m) + "); the glTF mesh has none",
                                      "/meshes/" + std::to_string(gltf_mesh));
      return core::Ok{};
    };
    auto emit = [&](auto&& value_of) {
      for (std::size_t v = 0; v < vc; ++v)
        for (std::uint32_t c = 0; c < a.dimension; ++c)
          write_component(base + v * stride + c * kFormatBytes[a.format], a.format, value_of(v, c));
    };
    switch (a.semantic) {
      case kPosition:
        emit([&](std::size_t v, std::uint32_t c) -> double {
          return c < 3 ? (c == 0 ? sx : 1.0F) * sm.positions[3 * v + c] : 1.0;
        });
        break;
      case kNormal:
        if (auto st = need(sm.normals, "normals"); !st) return st;
        if (is_packed_tbn_attribute(a.semantic, a.format, a.dimension)) {
          if (auto st = need(sm.tangents, "tangents (in the packed normal/tangent word)"); !st)
            return st;
          for (std::size_t v = 0; v < vc; ++v) {
            const core::Vec3f n{sx * sm.normals[3 * v], sm.normals[3 * v + 1],
                                sm.normals[3 * v + 2]};
            const core::Vec4f t{sx * sm.tangents[4 * v], sm.tangents[4 * v + 1],
                                sm.tangents[4 * v + 2], sx * sm.tangents[4 * v + 3]};
            core::store_le<std::uint32_t>(base + v * stride, pack_tbn(n, t));
          }
        } else {
          emit([&](std::size_t v, std::uint32_t c) -> double {
            return c < 3 ? (c == 0 ? sx : 1.0F) * sm.normals[3 * v + c] : 0.0;
          });
        }
        break;
      case kTangent:
        if (auto st = need(sm.tangents, "tangents"); !st) return st;
        emit([&](std::size_t v, std::uint32_t c) -> double {
          return (c == 0 || c == 3 ? sx : 1.0F) * sm.tangents[4 * v + c];
        });
        break;
      case kColor:
        if (auto st = need(sm.colors, "vertex colours (COLOR_0)"); !st) return st;
        emit([&](std::size_t v, std::uint32_t c) -> double { return sm.colors[4 * v + c]; });
        break;
      case kBlendWeight:
        break;  // written with the indices
      case kBlendIndices: {
        auto st = write_skin(sm, mesh, palette_of_joint, streams);
        if (!st) return st;
        break;
      }
      default: {
        if (a.semantic < kTexCoord0 || a.semantic > kTexCoord7) break;
        if (a.dimension > 2) {
          const std::string name = "_TEXCOORD" + std::to_string(a.semantic - kTexCoord0);
          auto it = sm.custom.find(name);
          if (it == sm.custom.end())
            return core::error_at_pointer(
                codes::BEM_PACK_ATTRIBUTE,
                "the template's layout stores " + std::to_string(a.dimension) +
                    "-component texture coordinates " + std::to_string(a.semantic - kTexCoord0) +
                    " (bem export writes them as " + name + "); the glTF mesh has none",
                "/meshes/" + std::to_string(gltf_mesh));
          const std::uint32_t comps = it->second.first;
          const std::vector<float>& vals = it->second.second;
          emit([&](std::size_t v, std::uint32_t c) -> double {
            return c < comps ? vals[v * comps + c] : 0.0;
          });
          break;
        }
        const std::uint32_t set = uv_set++;
        if (set >= sm.uvs.size() || sm.uvs[set].empty())
          return core::error_at_pointer(codes::BEM_PACK_ATTRIBUTE,
                                        "the template's layout stores texture coordinates " +
                                            std::to_string(a.semantic - kTexCoord0) +
                                            " (TEXCOORD_" + std::to_string(set) +
                                            " in glTF); the glTF mesh has none",
                                        "/meshes/" + std::to_string(gltf_mesh));
        const std::vector<float>& uv = sm.uvs[set];
        emit([&](std::size_t v, std::uint32_t c) -> double {
          if (c == 0) return uv[2 * v];
          if (c == 1) return options_.raw_axes ? uv[2 * v + 1] : 1.0F - uv[2 * v + 1];
          return 0.0;
        });
      }
    }
  }
  return core::Ok{};
}

core::Status ScenePacker::pack_draws(std::uint32_t m, const SceneMesh& sm, std::uint32_t index_size,
                                     Json& mj, PackedMesh& pm) {
  const Mesh& mesh = model_.meshes[m];
  const std::size_t vc = sm.vertex_count;
  // Draws. 1.1+: each draw its own index payload. 1.0: one index stream
  // per mesh, the draws' ranges in draw order (§7), rebuilt below.
  const bool one_stream = model_.appearance_structure;
  std::vector<std::vector<std::uint8_t>> stream_parts(mesh.draws.size());
  std::vector<bool> assigned(mesh.draws.size(), false);
  for (const SceneMesh::Primitive& prim : sm.primitives) {
    std::optional<std::size_t> d;
    for (std::size_t k = 0; k < mesh.draws.size() && !d; ++k)
      if (!assigned[k] && mesh.draws[k].material_name == prim.material) d = k;
    if (!d && !one_stream) {
      // A new draw: one of the donor component's material slots (§7).
      auto added = new_draw(m, mesh, prim.material);
      if (added) {
        Json& draws = mj["draws"];
        draws.push_back(std::move(*added));
        Json& dj = draws.back();
        dj["indices"] = add_payload(index_bytes(prim, index_size));
        dj["count"] = static_cast<std::uint32_t>(prim.indices.size());
        ++pm.draws_replaced;
        ++pm.draws_added;
        continue;
      }
    }
    if (!d) {
      // The valid names: the draws' materials, and (1.1+: new draws)
      // every component's material slots.
      std::set<std::string> names;
      for (const Draw& dr : mesh.draws) names.insert("\"" + dr.material_name + "\"");
      if (!one_stream)
        for (const Component& c : model_.components)
          for (const std::string& mat : c.materials) names.insert("\"" + mat + "\"");
      std::string list;
      for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
      return core::error_at_pointer(
          codes::BEM_PACK_MATERIAL,
          "the primitive's material \"" + prim.material + "\" is not the material of " +
              (one_stream ? "a draw of template mesh " + std::to_string(m) +
                                " left to fill (BEM 1.0: no new draws)"
                          : std::string("a draw or a component's material slot")) +
              "; the materials it can have: " + list,
          prim.pointer + "/material");
    }
    assigned[*d] = true;
    std::vector<std::uint8_t> bytes = index_bytes(prim, index_size);
    Json& dj = mj["draws"][*d];
    if (one_stream)
      stream_parts[*d] = std::move(bytes);
    else
      dj["indices"] = add_payload(std::move(bytes));
    dj["count"] = static_cast<std::uint32_t>(prim.indices.size());
    ++pm.draws_replaced;
  }
  for (std::size_t k = 0; k < mesh.draws.size(); ++k) {
    if (assigned[k]) continue;
    if (options_.fresh) {  // a placeholder draw: dropped (prune_placeholders)
      dropped_draws_[m].insert(k);
      continue;
    }
    const std::string dptr = core::json_pointer_join("/meshes", m) + "/draws/" + std::to_string(k);
    if (vc != mesh.vertex_count || index_size != mesh.index_size)
      return core::error_at_pointer(
          codes::BEM_PACK_DRAW_MISSING,
          "draw " + std::to_string(k) + " (material \"" + mesh.draws[k].material_name +
              "\") has no primitive in the glTF mesh, and the vertex count changed (" +
              std::to_string(mesh.vertex_count) + " -> " + std::to_string(vc) +
              "), so its indices cannot be kept: export a selection that shows every draw "
              "of the mesh, or add a primitive with that material",
          dptr);
    warn(codes::BEM_PACK_DRAW_KEPT,
         "draw " + std::to_string(k) + " (material \"" + mesh.draws[k].material_name +
             "\") has no primitive in the glTF mesh; its indices are kept, which assumes the "
             "vertex order did not change",
         dptr);
    if (one_stream) {  // the draw's range of the template's index stream
      const Draw& dr = mesh.draws[k];
      const std::vector<std::uint8_t>& old_stream = result_.content.payloads.at(dr.indices);
      const std::size_t from = std::size_t{dr.start} * mesh.index_size;
      const std::size_t bytes = std::size_t{dr.count} * mesh.index_size;
      if (from + bytes > old_stream.size())
        return core::error_at_pointer(codes::BEM_PACK_TEMPLATE,
                                      "the draw's range is outside the mesh's index stream", dptr);
      stream_parts[k].assign(old_stream.begin() + static_cast<std::ptrdiff_t>(from),
                             old_stream.begin() + static_cast<std::ptrdiff_t>(from + bytes));
    }
    ++pm.draws_kept;
  }
  if (one_stream) {
    std::vector<std::uint8_t> all;
    std::uint32_t start = 0;
    for (std::size_t k = 0; k < mesh.draws.size(); ++k) {
      const auto count = static_cast<std::uint32_t>(stream_parts[k].size() / index_size);
      mj["draws"][k]["start"] = start;
      mj["draws"][k]["count"] = count;
      start += count;
      all.insert(all.end(), stream_parts[k].begin(), stream_parts[k].end());
    }
    mj["indices"] = add_payload(std::move(all));
    mj["index_count"] = start;
  }
  return core::Ok{};
}

std::vector<std::uint8_t> ScenePacker::index_bytes(const SceneMesh::Primitive& prim,
                                                   std::uint32_t index_size) const {
  std::vector<std::uint8_t> bytes(prim.indices.size() * index_size);
  for (std::size_t i = 0; i < prim.indices.size(); ++i) {
    std::size_t src = i;
    if (!options_.raw_axes && i % 3 != 0) src = i - i % 3 + (i % 3 == 1 ? 2 : 1);  // winding
    const std::uint32_t v = prim.indices[src];
    if (index_size == 2)
      core::store_le<std::uint16_t>(bytes.data() + 2 * i, static_cast<std::uint16_t>(v));
    else
      core::store_le<std::uint32_t>(bytes.data() + 4 * i, v);
  }
  return bytes;
}

std::optional<Json> ScenePacker::new_draw(std::uint32_t m, const Mesh& mesh,
                                          const std::string& material) const {
  for (std::size_t k = 0; k < mesh.draws.size(); ++k)
    if (mesh.draws[k].material_name == material) return draw_json_of(mesh, k);
  for (const std::uint32_t c : donor_components(m, mesh)) {
    const auto& materials = model_.components[c].materials;
    auto it = std::find(materials.begin(), materials.end(), material);
    if (it == materials.end()) continue;
    return Json{{"when", true},
                {"material_component", c},
                {"material_slot", static_cast<std::uint32_t>(it - materials.begin())},
                {"material_name", material},
                {"textures", Json::array()}};
  }
  return std::nullopt;
}

std::vector<std::uint32_t> ScenePacker::donor_components(std::uint32_t m, const Mesh& mesh) const {
  std::vector<std::uint32_t> order;
  auto add = [&](std::uint32_t c) {
    if (c < model_.components.size() && std::find(order.begin(), order.end(), c) == order.end())
      order.push_back(c);
  };
  for (const Draw& d : mesh.draws) add(d.material_component);
  for (std::uint32_t c = 0; c < model_.components.size(); ++c)
    for (const Candidate& cand : model_.components[c].candidates)
      if (cand.op == Operation::kReplace && cand.mesh == m) add(c);
  for (std::uint32_t c = 0; c < model_.components.size(); ++c) add(c);
  return order;
}

Json ScenePacker::draw_json_of(const Mesh& mesh, std::size_t k) const {
  const auto m = static_cast<std::size_t>(&mesh - model_.meshes.data());
  Json d = template_manifest_.at("meshes").at(m).at("draws").at(k);
  for (const char* key : {"indices", "count", "start"}) d.erase(key);
  return d;
}

core::Status ScenePacker::build_palette(std::uint32_t m, const SceneMesh& sm, Json& mj,
                                        std::vector<std::uint32_t>& palette_of_joint,
                                        PackedMesh& pm) {
  const Mesh& mesh = model_.meshes[m];
  std::vector<PaletteBone> palette = mesh.bones;
  std::optional<std::uint32_t> donor;
  if (!palette.empty()) donor = palette.front().component;
  std::vector<bool> used(sm.joint_names.size(), false);
  for (std::size_t i = 0; i < sm.joints.size(); ++i)
    if (sm.weights[i] > 0) used[sm.joints[i]] = true;
  palette_of_joint.assign(sm.joint_names.size(), 0);
  for (std::size_t j = 0; j < sm.joint_names.size(); ++j) {
    const std::string& name = sm.joint_names[j];
    auto it = std::find_if(palette.begin(), palette.end(),
                           [&](const PaletteBone& b) { return b.name == name; });
    if (it != palette.end()) {
      palette_of_joint[j] = static_cast<std::uint32_t>(it - palette.begin());
      continue;
    }
    if (!used[j]) continue;  // never weighted: no palette entry needed
    std::optional<std::uint32_t> index;
    if (donor && *donor < model_.components.size()) {
      const auto& names = model_.components[*donor].bone_names;
      auto f = std::find(names.begin(), names.end(), name);
      if (f != names.end()) index = static_cast<std::uint32_t>(f - names.begin());
    }
    if (!index)
      return core::error_at_pointer(codes::BEM_PACK_JOINT,
                                    "joint \"" + name + "\" is not a bone of " +
                                        (donor ? "component " + std::to_string(*donor) + " (\"" +
                                                     model_.components[*donor].mesh_name + "\")"
                                               : std::string("the template mesh's palette")) +
                                        ", so the game has no bone to bind it to",
                                    core::json_pointer_join("/meshes", m) + "/bones");
    palette.push_back({*donor, *index, name});
    palette_of_joint[j] = static_cast<std::uint32_t>(palette.size() - 1);
    ++pm.bones_added;
  }
  if (palette.size() > 256)
    return core::error_at_pointer(codes::BEM_PACK_JOINT,
                                  "template mesh " + std::to_string(m) + " would need " +
                                      std::to_string(palette.size()) +
                                      " palette bones; BEM §7 allows 256 per mesh (split the mesh)",
                                  core::json_pointer_join("/meshes", m) + "/bones");
  Json bones = Json::array();
  for (const PaletteBone& b : palette)
    bones.push_back(Json{{"component", b.component}, {"index", b.index}, {"name", b.name}});
  mj["bones"] = std::move(bones);
  pm.bones = static_cast<std::uint32_t>(palette.size());
  return core::Ok{};
}

core::Status ScenePacker::write_skin(const SceneMesh& sm, const Mesh& mesh,
                                     const std::vector<std::uint32_t>& palette_of_joint,
                                     std::vector<std::vector<std::uint8_t>>& streams) {
  const VertexAttribute* wa = nullptr;
  const VertexAttribute* ia = nullptr;
  for (const VertexAttribute& a : mesh.attributes) {
    if (a.semantic == kBlendWeight) wa = &a;
    if (a.semantic == kBlendIndices) ia = &a;
  }
  const std::uint32_t stride = mesh.streams[ia->stream].stride;
  std::uint8_t* data = streams[ia->stream].data();
  for (std::size_t v = 0; v < sm.vertex_count; ++v) {
    std::array<double, 4> w{};
    std::array<std::uint32_t, 4> j{};
    double sum = 0;
    for (std::size_t k = 0; k < 4; ++k) {
      w[k] = std::max(0.0F, sm.weights[4 * v + k]);
      j[k] = w[k] > 0 ? palette_of_joint[sm.joints[4 * v + k]] : 0;
      sum += w[k];
    }
    if (!(sum > 0))
      return core::error_at_pointer(codes::BEM_PACK_ATTRIBUTE,
                                    "vertex " + std::to_string(v) + " has no positive skin weight",
                                    "/meshes/" + std::to_string(sm.gltf_mesh));
    for (double& x : w) x /= sum;
    std::uint8_t* p = data + v * stride;
    if (wa == nullptr) {  // 4-byte layout: the heaviest influence, rigid
      const std::size_t k =
          static_cast<std::size_t>(std::max_element(w.begin(), w.end()) - w.begin());
      p[ia->offset] = static_cast<std::uint8_t>(j[k]);
      continue;
    }
    if (wa->format == 4) {  // UNorm16: exactly 65535, the rounding rest on the heaviest
      std::array<std::int64_t, 4> q{};
      std::int64_t total = 0;
      for (std::size_t k = 0; k < 4; ++k) total += q[k] = std::llround(w[k] * 65535.0);
      const std::size_t heavy =
          static_cast<std::size_t>(std::max_element(w.begin(), w.end()) - w.begin());
      q[heavy] += 65535 - total;
      for (std::size_t k = 0; k < 4; ++k) {
        core::store_le<std::uint16_t>(p + wa->offset + 2 * k, static_cast<std::uint16_t>(q[k]));
        p[ia->offset + k] = static_cast<std::uint8_t>(j[k]);
      }
    } else {
      for (std::size_t k = 0; k < 4; ++k) {
        write_component(p + wa->offset + k * kFormatBytes[wa->format], wa->format, w[k]);
        write_component(p + ia->offset + k * kFormatBytes[ia->format], ia->format, j[k]);
      }
    }
  }
  return core::Ok{};
}

}  // namespace charkit::bem::detail
