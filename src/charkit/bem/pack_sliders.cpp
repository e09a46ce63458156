// bem::pack_scene: shape keys to §10 sliders (detail/scene_packer.h).
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

std::string ScenePacker::slider_id(const std::string& name) {
  auto alnum = [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
  };
  std::string id;
  for (char c : name) id += alnum(c) || c == '_' || c == '.' || c == '-' ? c : '_';
  if (id.empty() || !alnum(id[0])) id = "k" + id;
  if (id.size() > 96) id.resize(96);
  return id;
}

std::uint32_t ScenePacker::delta_payload(const std::vector<float>* d, std::size_t vertices) {
  const float sx = options_.raw_axes ? 1.0F : -1.0F;
  std::vector<std::uint8_t> records;
  std::uint32_t count = 0;
  for (std::size_t v = 0; d != nullptr && v < vertices; ++v) {
    const float* p = d->data() + 3 * v;
    if (p[0] == 0.0F && p[1] == 0.0F && p[2] == 0.0F) continue;
    std::uint8_t rec[16];
    core::store_le<std::uint32_t>(rec, static_cast<std::uint32_t>(v));
    const float xyz[3] = {sx * p[0], p[1], p[2]};
    for (int c = 0; c < 3; ++c)
      core::store_le<std::uint32_t>(rec + 4 + 4 * c, std::bit_cast<std::uint32_t>(xyz[c]));
    records.insert(records.end(), rec, rec + 16);
    ++count;
  }
  const std::string descriptor =
      "{\"count\":" + std::to_string(count) + ",\"encoding\":\"sparse-position-f32\"}";
  std::vector<std::uint8_t> payload(4);
  core::store_le<std::uint32_t>(payload.data(), static_cast<std::uint32_t>(descriptor.size()));
  payload.insert(payload.end(), descriptor.begin(), descriptor.end());
  payload.insert(payload.end(), records.begin(), records.end());
  const std::uint32_t id = add_payload(std::move(payload));
  count_of_payload_[id] = count;
  return id;
}

core::Status ScenePacker::collect_targets(std::uint32_t m, const SceneMesh& sm,
                                          const std::set<std::string>& skip) {
  const Mesh& mesh = model_.meshes[m];
  const std::string tptr = "/meshes/" + std::to_string(sm.gltf_mesh) + "/primitives/0/targets";
  const bool f32_position =
      std::any_of(mesh.attributes.begin(), mesh.attributes.end(), [](const VertexAttribute& a) {
        return a.semantic == kPosition && a.format == 0 && a.dimension == 3;
      });
  if (!f32_position)
    return core::error_at_pointer(
        codes::BEM_PACK_SLIDER,
        "template mesh " + std::to_string(m) +
            " does not store Float32 XYZ positions, which §10 sliders need; its morph "
            "targets cannot become sliders",
        tptr);
  if (model_.appearance_structure)
    return core::error_at_pointer(
        codes::BEM_PACK_SLIDER,
        "the template is a BEM 1.0 package, whose appearances cannot have sliders (§10 "
        "parameters need BEM 1.3 and its option groups); the shape keys cannot be packed",
        tptr);
  MeshTargets mt;
  mt.mesh = m;
  mt.packed = result_.meshes.size();
  mt.pointer = "/meshes/" + std::to_string(sm.gltf_mesh) + "/extras/targetNames";
  for (std::size_t k = 0; k < sm.targets.size(); ++k) {
    const std::string& name = sm.target_names[k];
    if (skip.count(name)) continue;
    if (name.size() > 256)
      return core::error_at_pointer(codes::BEM_PACK_SLIDER,
                                    "the shape key name is longer than 256 bytes",
                                    mt.pointer + "/" + std::to_string(k));
    if (std::find(mt.names.begin(), mt.names.end(), name) != mt.names.end())
      return core::error_at_pointer(codes::BEM_PACK_SLIDER,
                                    "two shape keys of the mesh are named \"" + name + "\"",
                                    mt.pointer + "/" + std::to_string(k));
    mt.names.push_back(name);
    mt.weights.push_back(sm.target_weights[k]);
    mt.payloads.push_back(delta_payload(&sm.targets[k], sm.vertex_count));
  }
  targets_.push_back(std::move(mt));
  return core::Ok{};
}

core::Status ScenePacker::rebuild_template_channels(std::uint32_t m, const SceneMesh& sm,
                                                    std::set<std::string>& used) {
  if (std::none_of(model_.deformations.begin(), model_.deformations.end(),
                   [&](const Deformation& d) { return d.mesh == m; }))
    return core::Ok{};
  Json& channels = result_.content.manifest["mesh_deformations"];
  for (std::size_t di = 0; di < model_.deformations.size(); ++di) {
    const Deformation& def = model_.deformations[di];
    if (def.mesh != m) continue;
    const Parameter& param = model_.parameters.at(def.parameter);
    for (std::size_t fi = 0; fi < def.frames.size(); ++fi) {
      const DeformationFrame& f = def.frames[fi];
      if (f.neutral) continue;
      const std::string name = slider_target_name(param, def, fi);
      auto it = std::find(sm.target_names.begin(), sm.target_names.end(), name);
      if (it == sm.target_names.end())
        return core::error_at_pointer(
            codes::BEM_PACK_MORPHS,
            "template mesh " + std::to_string(m) + " has the slider \"" + param.id +
                "\"; the glTF mesh has no shape key \"" + name + "\" for its frame at tick " +
                std::to_string(f.value) +
                " (bem export writes one per frame; an export with --bake-sliders has "
                "none, and a renamed or deleted shape key cannot be matched)",
            "/meshes/" + std::to_string(sm.gltf_mesh));
      const auto k = static_cast<std::size_t>(it - sm.target_names.begin());
      const std::uint32_t payload = delta_payload(&sm.targets[k], sm.vertex_count);
      Json& fj = channels.at(di).at("frames").at(fi);
      fj["payload"] = payload;
      fj["count"] = count_of_payload_.at(payload);
      used.insert(name);
    }
  }
  return core::Ok{};
}

core::Status ScenePacker::put_parameter(Json param, const std::string& ptr) {
  Json& params = result_.content.manifest["parameters"];
  for (Json& p : params)
    if (p.is_object() && p.contains("id") && p["id"] == param["id"]) {
      p = std::move(param);
      return core::Ok{};
    }
  if (params.size() >= 64)
    return core::error_at_pointer(codes::BEM_PACK_LIMIT, "more than 64 parameters (BEM §11)", ptr);
  params.push_back(std::move(param));
  return core::Ok{};
}

core::Status ScenePacker::put_channel(std::uint32_t mesh, const std::string& id, Json frames,
                                      const std::string& ptr) {
  Json& channels = result_.content.manifest["mesh_deformations"];
  if (channels.size() >= 4096)
    return core::error_at_pointer(codes::BEM_PACK_LIMIT,
                                  "more than 4096 deformation channels (BEM §11)", ptr);
  channels.push_back(Json{{"mesh", mesh}, {"parameter", id}, {"frames", std::move(frames)}});
  return core::Ok{};
}

Json ScenePacker::delta_frame(std::int64_t value, std::uint32_t payload) {
  return Json{{"value", value},
              {"payload", payload},
              {"count", count_of_payload_.at(payload)},
              {"encoding", "sparse-position-f32"}};
}

core::Status ScenePacker::build_sliders() {
  const std::vector<PackSpecParameter> none;
  const std::vector<PackSpecParameter>& specified =
      options_.spec != nullptr ? options_.spec->parameters : none;
  if (targets_.empty() && specified.empty()) return core::Ok{};
  Json& manifest = result_.content.manifest;
  if (!manifest.contains("parameters")) manifest["parameters"] = Json::array();
  if (!manifest.contains("mesh_deformations")) manifest["mesh_deformations"] = Json::array();
  // Shape key names in the order met, with the first mesh's weight.
  std::vector<std::string> names;
  std::map<std::string, float> weight_of;
  std::map<std::string, std::string> pointer_of;
  for (const MeshTargets& mt : targets_)
    for (std::size_t k = 0; k < mt.names.size(); ++k)
      if (weight_of.emplace(mt.names[k], mt.weights[k]).second) {
        names.push_back(mt.names[k]);
        pointer_of[mt.names[k]] = mt.pointer + "/" + std::to_string(k);
      }
  auto known = [&] {
    std::string s;
    for (const std::string& n : names) s += (s.empty() ? "\"" : ", \"") + n + "\"";
    return s.empty() ? std::string("none") : s;
  };
  std::set<std::string> consumed;
  for (const PackSpecParameter& sp : specified) {
    std::vector<PackSpecFrame> frames = sp.frames;
    const std::int64_t min = sp.min.value_or(0), max = sp.max.value_or(1000);
    const std::int64_t step = sp.step.value_or(1);
    const std::int64_t neutral = sp.neutral.value_or(min);
    std::int64_t fallback_default = neutral;
    if (frames.empty()) {  // one shape key
      std::string key = sp.shape_key.value_or("");
      if (key.empty())
        for (const std::string& n : names)
          if (n == sp.id || (key.empty() && slider_id(n) == sp.id)) key = n;
      if (key.empty())
        return core::error_at_pointer(codes::BEM_PACK_SPEC,
                                      "no packed mesh has a shape key for parameter \"" + sp.id +
                                          "\" (give its \"shape_key\"; the shape keys: " + known() +
                                          ")",
                                      sp.pointer);
      if (neutral != min && neutral != max)
        return core::error_at_pointer(
            codes::BEM_PACK_SPEC,
            "a neutral tick inside the range needs \"frames\": which shape key lies on "
            "each side",
            sp.pointer + "/neutral");
      const std::int64_t at_key = neutral == min ? max : min;
      frames = {PackSpecFrame{std::min(neutral, at_key), neutral <= at_key, ""},
                PackSpecFrame{std::max(neutral, at_key), neutral > at_key, ""}};
      (frames[0].neutral ? frames[1] : frames[0]).shape_key = key;
      if (weight_of.count(key)) {
        const double w = weight_of[key];
        const auto ticks = std::llround(w * double(at_key - neutral) / double(step));
        fallback_default = std::clamp<std::int64_t>(neutral + ticks * step, min, max);
      }
    }
    if (max <= min)
      return core::error_at_pointer(codes::BEM_PACK_SPEC, "\"min\" is below \"max\" (BEM §10)",
                                    sp.pointer);
    std::vector<std::string> keys;
    for (std::size_t i = 0; i < frames.size(); ++i) {
      if (frames[i].neutral) continue;
      const std::string& key = frames[i].shape_key;
      const std::string kptr = sp.frames.empty()
                                   ? sp.pointer + "/shape_key"
                                   : sp.pointer + "/frames/" + std::to_string(i) + "/shape_key";
      if (!weight_of.count(key))
        return core::error_at_pointer(
            codes::BEM_PACK_SPEC,
            "no packed mesh has a shape key \"" + key + "\" (the shape keys: " + known() + ")",
            kptr);
      if (!consumed.insert(key).second)
        return core::error_at_pointer(
            codes::BEM_PACK_SPEC,
            "shape key \"" + key + "\" is used by two parameters or two frames", kptr);
      keys.push_back(key);
    }
    Json param{
        {"id", sp.id},        {"name", sp.name.value_or(sp.frames.empty() ? keys.front() : sp.id)},
        {"min", min},         {"max", max},
        {"neutral", neutral}, {"default", sp.default_value.value_or(fallback_default)},
        {"step", step}};
    if (sp.available_when) param["available_when"] = *sp.available_when;
    if (auto st = put_parameter(std::move(param), sp.pointer); !st) return st;
    for (const MeshTargets& mt : targets_) {
      const bool has_any = std::any_of(keys.begin(), keys.end(), [&](const std::string& k) {
        return std::find(mt.names.begin(), mt.names.end(), k) != mt.names.end();
      });
      if (!has_any) continue;
      Json fj = Json::array();
      for (const PackSpecFrame& f : frames) {
        if (f.neutral) {
          fj.push_back(Json{{"value", f.value}, {"neutral", true}});
          continue;
        }
        auto it = std::find(mt.names.begin(), mt.names.end(), f.shape_key);
        const std::uint32_t payload =
            it == mt.names.end() ? delta_payload(nullptr, 0)
                                 : mt.payloads[static_cast<std::size_t>(it - mt.names.begin())];
        fj.push_back(delta_frame(f.value, payload));
      }
      if (auto st = put_channel(mt.mesh, sp.id, std::move(fj), sp.pointer); !st) return st;
      ++result_.meshes[mt.packed].sliders;
    }
  }
  Json& params = manifest["parameters"];
  for (const MeshTargets& mt : targets_)
    for (std::size_t k = 0; k < mt.names.size(); ++k) {
      const std::string& name = mt.names[k];
      if (consumed.count(name)) continue;
      const std::string tptr = mt.pointer + "/" + std::to_string(k);
      const std::string id = slider_id(name);
      auto p = std::find_if(params.begin(), params.end(), [&](const Json& x) {
        return x.is_object() && x.contains("id") && x["id"] == id;
      });
      if (p != params.end()) {
        if ((*p)["min"] != 0 || (*p)["max"] != 1000 || (*p)["neutral"] != 0)
          return core::error_at_pointer(
              codes::BEM_PACK_SLIDER,
              "shape key \"" + name + "\" would share the parameter \"" + id +
                  "\", whose range is not 0..1000 with neutral 0; rename the shape key "
                  "or describe its parameter in the spec",
              tptr);
      } else {
        auto st = put_parameter(Json{{"id", id},
                                     {"name", name},
                                     {"min", 0},
                                     {"max", 1000},
                                     {"neutral", 0},
                                     {"default", std::lround(weight_of[name] * 1000.0F)},
                                     {"step", 1}},
                                tptr);
        if (!st) return st;
      }
      auto st = put_channel(
          mt.mesh, id,
          Json::array({Json{{"value", 0}, {"neutral", true}}, delta_frame(1000, mt.payloads[k])}),
          tptr);
      if (!st) return st;
      ++result_.meshes[mt.packed].sliders;
    }
  return core::Ok{};
}

}  // namespace charkit::bem::detail
