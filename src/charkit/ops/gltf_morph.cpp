#include "charkit/ops/gltf_morph.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <string>

#include "charkit/core/json.h"
#include "charkit/core/math.h"
#include "charkit/deform/error_codes.h"
#include "charkit/deform/morph40.h"
#include "charkit/scene/gltf_document.h"
#include "charkit/scene/gltf_edit.h"

namespace charkit::ops {
namespace {

using core::Json;
using scene::append_float_accessor;
using scene::finish_glb;
using scene::gltf_index_member;
using scene::GltfDocument;

core::Result<std::vector<float>> read_attribute(GltfDocument& doc, std::size_t accessor,
                                                std::size_t components, std::size_t count,
                                                const std::string& ptr) {
  return read_float_attribute(doc, accessor, components, count, deform::codes::DEFORM_GLTF, ptr);
}

/// The target names of a mesh: mesh.extras.targetNames, else the first
/// primitive's (VRM 0.x), else none; missing entries are "target_<i>".
std::vector<std::string> target_names(const Json& mesh, std::size_t count) {
  const Json* names = nullptr;
  auto from = [&](const Json& holder) {
    if (names == nullptr && holder.is_object() && holder.contains("extras") &&
        holder["extras"].is_object() && holder["extras"].contains("targetNames") &&
        holder["extras"]["targetNames"].is_array())
      names = &holder["extras"]["targetNames"];
  };
  from(mesh);
  if (mesh.contains("primitives") && mesh["primitives"].is_array() && !mesh["primitives"].empty())
    from(mesh["primitives"][0]);
  std::vector<std::string> out(count);
  for (std::size_t i = 0; i < count; ++i)
    out[i] = names != nullptr && i < names->size() && (*names)[i].is_string()
                 ? (*names)[i].get<std::string>()
                 : "target_" + std::to_string(i);
  return out;
}

}  // namespace

core::Result<GltfMorphResult> apply_gltf_morphs(GltfDocument& doc,
                                                const GltfMorphOptions& options) {
  Json& root = doc.json();
  auto edit = begin_edit(doc, deform::codes::DEFORM_GLTF);
  if (!edit) return std::move(edit).error();
  std::vector<std::uint8_t> bin = std::move(*edit);
  for (const auto& [name, w] : options.weights)
    if (!std::isfinite(w))
      return core::make_error(deform::codes::DEFORM_MORPH40_WEIGHT,
                              "weight of \"" + name + "\" is not finite");
  GltfMorphResult result;
  std::set<std::string> used_names;
  std::set<std::string> known_names;
  const std::size_t mesh_count = doc.count("meshes");
  for (std::size_t m = 0; m < mesh_count; ++m) {
    Json& mesh = root["meshes"][m];
    const std::string mp = "/meshes/" + std::to_string(m);
    if (!mesh.is_object() || !mesh.contains("primitives") || !mesh["primitives"].is_array())
      return core::error_at_pointer(deform::codes::DEFORM_GLTF, "mesh without a primitives array",
                                    mp);
    // Members read by type (nlohmann's value() throws on a member of another type).
    const std::string mesh_name = mesh.contains("name") && mesh["name"].is_string()
                                      ? mesh["name"].get<std::string>()
                                      : std::string();
    if (!options.mesh.empty() && mesh_name != options.mesh) continue;
    Json& prims = mesh["primitives"];
    std::size_t targets = 0;
    for (std::size_t p = 0; p < prims.size(); ++p) {
      const Json& prim = prims[p];
      const std::size_t n =
          prim.is_object() && prim.contains("targets") && prim["targets"].is_array()
              ? prim["targets"].size()
              : 0;
      if (p == 0) targets = n;
      if (n != targets)
        return core::error_at_pointer(deform::codes::DEFORM_GLTF,
                                      "primitives have different morph target counts",
                                      mp + "/primitives/" + std::to_string(p) + "/targets");
    }
    if (targets == 0) continue;
    const std::vector<std::string> names = target_names(mesh, targets);
    std::vector<float> weights(targets, 0.0F);
    if (mesh.contains("weights") && mesh["weights"].is_array() && mesh["weights"].size() == targets)
      for (std::size_t i = 0; i < targets; ++i)
        if (mesh["weights"][i].is_number()) weights[i] = mesh["weights"][i].get<float>();
    for (std::size_t i = 0; i < targets; ++i) {
      for (const std::string& key : {names[i], "target_" + std::to_string(i), std::to_string(i)}) {
        known_names.insert(key);
        if (auto it = options.weights.find(key); it != options.weights.end()) {
          weights[i] = it->second;
          used_names.insert(key);
        }
      }
    }
    GltfMorphMesh summary;
    summary.name = mesh_name;
    summary.primitives = prims.size();
    for (std::size_t i = 0; i < targets; ++i)
      if (weights[i] != 0.0F) summary.applied[names[i]] = weights[i];
    if (summary.applied.empty()) {
      result.meshes.push_back(std::move(summary));
      continue;
    }
    for (std::size_t p = 0; p < prims.size(); ++p) {
      Json& prim = prims[p];
      const std::string pp = mp + "/primitives/" + std::to_string(p);
      if (!prim.is_object())
        return core::error_at_pointer(deform::codes::DEFORM_GLTF, "primitive is not an object", pp);
      if (prim.contains("mode") && gltf_index_member(prim, "mode") != std::size_t{4})
        return core::error_at_pointer(deform::codes::DEFORM_GLTF,
                                      "only triangle primitives (mode 4) are supported",
                                      pp + "/mode");
      static const Json kNoAttributes = Json::object();
      const Json& attrs = prim.contains("attributes") ? prim["attributes"] : kNoAttributes;
      const auto pos_acc = gltf_index_member(attrs, "POSITION");
      if (!pos_acc)
        return core::error_at_pointer(deform::codes::DEFORM_GLTF, "primitive without POSITION",
                                      pp + "/attributes");
      auto pos = read_attribute(doc, *pos_acc, 3, 0, pp + "/attributes/POSITION");
      if (!pos) return std::move(pos).error();
      const std::size_t n = pos->size() / 3;
      if (n > std::numeric_limits<std::uint32_t>::max())
        return core::error_at_pointer(deform::codes::DEFORM_GLTF, "too many vertices",
                                      pp + "/attributes/POSITION");
      std::vector<float> normal;
      std::vector<float> tangent;
      if (auto a = gltf_index_member(attrs, "NORMAL")) {
        auto r = read_attribute(doc, *a, 3, n, pp + "/attributes/NORMAL");
        if (!r) return std::move(r).error();
        normal = std::move(*r);
      }
      if (auto a = gltf_index_member(attrs, "TANGENT")) {
        auto r = read_attribute(doc, *a, 4, n, pp + "/attributes/TANGENT");
        if (!r) return std::move(r).error();
        tangent = std::move(*r);
      }
      // The 40-byte vertex array: position, normal, tangent xyz, tangent w.
      std::vector<std::uint8_t> vertices(n * deform::kMorph40VertexBytes);
      for (std::size_t v = 0; v < n; ++v) {
        float x[10] = {};
        for (int c = 0; c < 3; ++c) x[c] = (*pos)[3 * v + c];
        if (!normal.empty())
          for (int c = 0; c < 3; ++c) x[3 + c] = normal[3 * v + c];
        if (!tangent.empty())
          for (int c = 0; c < 4; ++c) x[6 + c] = tangent[4 * v + c];
        std::memcpy(vertices.data() + v * deform::kMorph40VertexBytes, x, sizeof x);
      }
      std::vector<std::vector<std::uint8_t>> records(targets);
      std::vector<deform::Morph40Target> jobs;
      for (std::size_t i = 0; i < targets; ++i) {
        if (weights[i] == 0.0F) continue;
        const Json& target = prim["targets"][i];
        const std::string tp = pp + "/targets/" + std::to_string(i);
        std::vector<float> d[3];
        const char* keys[3] = {"POSITION", "NORMAL", "TANGENT"};
        for (int k = 0; k < 3; ++k)
          if (auto a = gltf_index_member(target, keys[k])) {
            auto r = read_attribute(doc, *a, 3, n, tp + "/" + keys[k]);
            if (!r) return std::move(r).error();
            d[k] = std::move(*r);
          }
        for (std::size_t v = 0; v < n; ++v) {
          float rec[9] = {};
          bool any = false;
          for (int k = 0; k < 3; ++k)
            if (!d[k].empty())
              for (int c = 0; c < 3; ++c) {
                rec[3 * k + c] = d[k][3 * v + c];
                any = any || rec[3 * k + c] != 0.0F;
              }
          if (!any) continue;
          const auto vi = static_cast<std::uint32_t>(v);
          std::uint8_t bytes[deform::kMorph40RecordBytes];
          std::memcpy(bytes, &vi, 4);
          std::memcpy(bytes + 4, rec, sizeof rec);
          records[i].insert(records[i].end(), bytes, bytes + deform::kMorph40RecordBytes);
        }
        summary.records += records[i].size() / deform::kMorph40RecordBytes;
        jobs.push_back({records[i], weights[i]});
      }
      deform::Morph40Job job{static_cast<std::uint32_t>(n), jobs, vertices};
      if (auto st = job.validate(); !st) {
        core::Error e = std::move(st).error();
        e.location = core::Location::at_pointer(pp + "/targets");
        return e;
      }
      if (auto st = options.gpu != nullptr ? job.run_gpu(*options.gpu)
                                           : job.run_threaded(options.executor);
          !st)
        return std::move(st).error();
      // The results as new accessors.
      std::vector<float> out_pos(3 * n);
      std::vector<float> out_normal(normal.empty() ? 0 : 3 * n);
      std::vector<float> out_tangent(tangent.empty() ? 0 : 4 * n);
      for (std::size_t v = 0; v < n; ++v) {
        float x[10];
        std::memcpy(x, vertices.data() + v * deform::kMorph40VertexBytes, sizeof x);
        for (int c = 0; c < 3; ++c) out_pos[3 * v + c] = x[c];
        // The kernel does not normalise (nor does the one in the
        // character-rendering frame analysis); glTF wants unit normals and
        // tangents, so the output does.
        const core::Vec3f n3 = core::normalize(core::Vec3f{x[3], x[4], x[5]});
        const core::Vec3f t3 = core::normalize(core::Vec3f{x[6], x[7], x[8]});
        if (!normal.empty())
          for (int c = 0; c < 3; ++c) out_normal[3 * v + c] = n3[static_cast<std::size_t>(c)];
        if (!tangent.empty()) {
          for (int c = 0; c < 3; ++c) out_tangent[4 * v + c] = t3[static_cast<std::size_t>(c)];
          out_tangent[4 * v + 3] = x[9];
        }
      }
      for (float f : out_pos)
        if (!std::isfinite(f))
          return core::error_at_pointer(deform::codes::DEFORM_GLTF,
                                        "a morphed position is not finite",
                                        pp + "/attributes/POSITION");
      prim["attributes"]["POSITION"] = append_float_accessor(root, bin, out_pos, 3, "VEC3", true);
      if (!normal.empty())
        prim["attributes"]["NORMAL"] =
            append_float_accessor(root, bin, out_normal, 3, "VEC3", false);
      if (!tangent.empty())
        prim["attributes"]["TANGENT"] =
            append_float_accessor(root, bin, out_tangent, 4, "VEC4", false);
      summary.vertices += n;
    }
    // The applied weights are in the base now: 0 where the file stores them.
    auto zero_applied = [&](Json& holder) {
      if (!holder.contains("weights") || !holder["weights"].is_array() ||
          holder["weights"].size() != targets)
        return;
      for (std::size_t i = 0; i < targets; ++i)
        if (weights[i] != 0.0F) holder["weights"][i] = 0.0;
    };
    zero_applied(mesh);
    for (std::size_t node = 0; node < doc.count("nodes"); ++node)
      if (gltf_index_member(root["nodes"][node], "mesh") == m) zero_applied(root["nodes"][node]);
    result.meshes.push_back(std::move(summary));
  }
  for (const auto& [name, w] : options.weights) {
    if (used_names.count(name) != 0) continue;
    std::string list;
    for (const std::string& k : known_names)
      if (k.rfind("target_", 0) != 0 && !(k[0] >= '0' && k[0] <= '9'))
        list += (list.empty() ? "" : ", ") + k;
    return core::make_error(deform::codes::DEFORM_MORPH_TARGET,
                            "no " + std::string(options.mesh.empty() ? "" : "such ") +
                                "morph target \"" + name + "\"" +
                                (options.mesh.empty() ? "" : " in mesh \"" + options.mesh + "\"") +
                                "; the targets are: " + (list.empty() ? "(none named)" : list) +
                                " (or target_<i> / <i>)");
  }
  auto glb = finish_glb(root, std::move(bin));
  if (!glb) return std::move(glb).error();
  result.glb = std::move(*glb);
  return result;
}

}  // namespace charkit::ops
