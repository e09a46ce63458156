#include "charkit/ops/gltf_morph.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <string>

#include "charkit/core/math.h"
#include "charkit/deform/error_codes.h"
#include "charkit/deform/morph40.h"
#include "charkit/scene/gltf_document.h"
#include "charkit/scene/gltf_editor.h"

namespace charkit::ops {
namespace {

using scene::GltfAttributes;
using scene::GltfDocument;

core::Result<std::vector<float>> read_attribute(GltfDocument& doc, std::size_t accessor,
                                                std::size_t components, std::size_t count,
                                                const std::string& ptr) {
  return scene::read_float_attribute(doc, accessor, components, count, deform::codes::DEFORM_GLTF,
                                     ptr);
}

/// Primitive p of mesh m morphed by `weights` (one per target, 0 for those
/// left out) through the morph40 job; its new POSITION, NORMAL and TANGENT
/// accessors appended.
core::Status morph_primitive(GltfDocument& doc, scene::GltfEditor& editor, std::size_t m,
                             std::size_t p, const std::vector<float>& weights,
                             const GltfMorphOptions& options, GltfMorphMesh& summary) {
  const scene::GltfPrimitive& prim = doc.asset().meshes[m].primitives[p];
  const std::size_t targets = weights.size();
  const std::string& pp = prim.pointer;
  if (prim.mode != 4)
    return core::error_at_pointer(deform::codes::DEFORM_GLTF,
                                  "only triangle primitives (mode 4) are supported", pp + "/mode");
  const GltfAttributes& attrs = prim.attributes;
  const auto pos_acc = attrs.find("POSITION");
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
  if (auto a = attrs.find("NORMAL")) {
    auto r = read_attribute(doc, *a, 3, n, pp + "/attributes/NORMAL");
    if (!r) return std::move(r).error();
    normal = std::move(*r);
  }
  if (auto a = attrs.find("TANGENT")) {
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
    const GltfAttributes& target = prim.targets[i];
    const std::string tp = pp + "/targets/" + std::to_string(i);
    std::vector<float> d[3];
    const char* keys[3] = {"POSITION", "NORMAL", "TANGENT"};
    for (int k = 0; k < 3; ++k)
      if (auto a = target.find(keys[k])) {
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
  if (auto st = options.gpu != nullptr ? job.run_gpu(*options.gpu) : job.run(options.run); !st)
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
      return core::error_at_pointer(deform::codes::DEFORM_GLTF, "a morphed position is not finite",
                                    pp + "/attributes/POSITION");
  editor.set_attribute(m, p, "POSITION", editor.append_floats(out_pos, 3, true));
  if (!normal.empty())
    editor.set_attribute(m, p, "NORMAL", editor.append_floats(out_normal, 3, false));
  if (!tangent.empty())
    editor.set_attribute(m, p, "TANGENT", editor.append_floats(out_tangent, 4, false));
  summary.vertices += n;
  return core::Ok{};
}

}  // namespace

core::Result<GltfMorphResult> apply_gltf_morphs(GltfDocument& doc,
                                                const GltfMorphOptions& options) {
  auto edit = scene::GltfEditor::begin(doc, deform::codes::DEFORM_GLTF);
  if (!edit) return std::move(edit).error();
  scene::GltfEditor& editor = *edit;
  const scene::GltfAsset& asset = doc.asset();
  for (const auto& [name, w] : options.weights)
    if (!std::isfinite(w))
      return core::make_error(deform::codes::DEFORM_MORPH40_WEIGHT,
                              "weight of \"" + name + "\" is not finite");
  GltfMorphResult result;
  std::set<std::string> used_names;
  std::set<std::string> known_names;
  for (std::size_t m = 0; m < asset.meshes.size(); ++m) {
    const scene::GltfMesh& mesh = asset.meshes[m];
    if (!options.mesh.empty() && mesh.name != options.mesh) continue;
    const std::size_t targets = mesh.target_count();
    if (targets == 0) continue;
    std::vector<std::string> names(targets);
    for (std::size_t i = 0; i < targets; ++i) names[i] = mesh.target_name(i);
    std::vector<float> weights(targets, 0.0F);
    if (mesh.weights.size() == targets)
      for (std::size_t i = 0; i < targets; ++i) weights[i] = static_cast<float>(mesh.weights[i]);
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
    summary.name = mesh.name;
    summary.primitives = mesh.primitives.size();
    for (std::size_t i = 0; i < targets; ++i)
      if (weights[i] != 0.0F) summary.applied[names[i]] = weights[i];
    if (summary.applied.empty()) {
      result.meshes.push_back(std::move(summary));
      continue;
    }
    for (std::size_t p = 0; p < mesh.primitives.size(); ++p)
      if (auto st = morph_primitive(doc, editor, m, p, weights, options, summary); !st)
        return std::move(st).error();
    // The applied weights are in the base now: 0 where the file stores them.
    const auto zero_applied = [&](std::vector<double> stored) {
      for (std::size_t i = 0; i < targets; ++i)
        if (weights[i] != 0.0F) stored[i] = 0.0;
      return stored;
    };
    if (mesh.weights.size() == targets) editor.set_mesh_weights(m, zero_applied(mesh.weights));
    for (std::size_t node : asset.nodes_of_mesh(m))
      if (asset.nodes[node].weights.size() == targets)
        editor.set_node_weights(node, zero_applied(asset.nodes[node].weights));
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
  auto glb = editor.finish_glb();
  if (!glb) return std::move(glb).error();
  result.glb = std::move(*glb);
  return result;
}

}  // namespace charkit::ops
