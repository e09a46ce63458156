#include "charkit/bem/pack.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string_view>

#include "charkit/bem/detail/scene_packer.h"
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

/// The spec's package fields, options and rules replace the manifest's;
/// its material overrides go on the draws they name.
core::Status apply_spec_fields(const PackSpec& spec, Json& manifest) {
  for (const auto& [key, value] : spec.fields.items()) manifest[key] = value;
  for (const PackSpecDrawOverride& o : spec.material_overrides) {
    Json& meshes = manifest["meshes"];
    if (!meshes.is_array() || o.mesh >= meshes.size() || !meshes[o.mesh].is_object() ||
        !meshes[o.mesh].contains("draws") || !meshes[o.mesh]["draws"].is_array() ||
        o.draw >= meshes[o.mesh]["draws"].size() || !meshes[o.mesh]["draws"][o.draw].is_object())
      return core::error_at_pointer(codes::BEM_PACK_SPEC,
                                    "the package has no draw " + std::to_string(o.draw) +
                                        " in mesh " + std::to_string(o.mesh),
                                    o.pointer);
    meshes[o.mesh]["draws"][o.draw]["material_overrides"] = o.overrides;
  }
  return core::Ok{};
}

}  // namespace

core::Result<PackResult> ScenePacker::run() {
  if (auto st = check_texture_format_names(); !st) return std::move(st).error();
  auto matched = match_meshes();
  if (!matched) return std::move(matched).error();
  if (matched->empty()) {
    // The components a glTF node may name: those a template mesh replaces.
    std::string names;
    for (const Component& c : model_.components)
      if (std::any_of(c.candidates.begin(), c.candidates.end(),
                      [](const Candidate& cand) { return cand.op == Operation::kReplace; }))
        names += (names.empty() ? "" : ", ") + c.mesh_name;
    if (names.empty()) names = "the template replaces none";
    return core::error_at_pointer(
        codes::BEM_PACK_NO_MESH,
        "no glTF mesh matches a mesh of the template: name the glTF mesh mesh_N (N: the "
        "template's mesh index, as bem export does) or its node after a replaced "
        "component (" +
            names + ")",
        "/meshes");
  }
  for (const auto& [m, g] : *matched) {
    auto st = pack_mesh(m, g);
    if (!st) return std::move(st).error();
  }
  if (auto st = pack_textures(); !st) return std::move(st).error();
  if (auto st = build_sliders(); !st) return std::move(st).error();
  if (auto st = prune_placeholders(); !st) return std::move(st).error();
  if (auto st = apply_spec(); !st) return std::move(st).error();
  drop_replaced_payloads();
  if (auto st = declare_used_capabilities(result_.content); !st) return std::move(st).error();
  return std::move(result_);
}

core::Status ScenePacker::prune_placeholders() {
  if (!options_.fresh) return core::Ok{};
  Json& man = result_.content.manifest;
  for (const auto& [m, ks] : dropped_draws_)
    for (auto k = ks.rbegin(); k != ks.rend(); ++k)
      man["meshes"][m]["draws"].erase(static_cast<std::size_t>(*k));
  std::set<std::uint32_t> packed;
  for (const PackedMesh& pm : result_.meshes) packed.insert(pm.mesh);
  std::map<std::uint32_t, std::uint32_t> new_mesh;
  Json meshes = Json::array();
  for (std::uint32_t i = 0; i < man["meshes"].size(); ++i)
    if (packed.count(i)) {
      new_mesh[i] = static_cast<std::uint32_t>(meshes.size());
      meshes.push_back(man["meshes"][i]);
    }
  std::set<std::uint32_t> given;
  for (const PackedTexture& t : result_.textures) given.insert(t.texture);
  std::map<std::uint32_t, std::uint32_t> new_texture;
  for (Json& mesh : meshes)
    for (Json& d : mesh["draws"])
      for (Json& t : d["textures"]) {
        const auto idx = core::json_uint32(t);
        if (!idx) continue;
        if (!given.count(*idx))
          return core::error_at_pointer(
              codes::BEM_PACK_TEXTURE,
              "texture " + std::to_string(*idx) + " (\"" + model_.textures[*idx].original_name +
                  "\") of material \"" + d["material_name"].get<std::string>() +
                  "\" has no image in the scene: name the material's image \"" +
                  model_.textures[*idx].original_name + "\"",
              "/images");
        new_texture.emplace(*idx, 0);
      }
  Json textures = Json::array();
  for (auto& [old, now] : new_texture) {
    now = static_cast<std::uint32_t>(textures.size());
    textures.push_back(man["textures"][old]);
  }
  for (Json& mesh : meshes)
    for (Json& d : mesh["draws"])
      for (Json& t : d["textures"])
        if (auto idx = core::json_uint32(t)) t = new_texture.at(*idx);
  for (Json& rule : man["component_rules"])
    for (Json& cand : rule["candidates"])
      if (cand.contains("mesh")) {
        auto it = new_mesh.find(cand["mesh"].get<std::uint32_t>());
        if (it == new_mesh.end())
          cand = Json{{"when", true}, {"operation", "keep"}};
        else
          cand["mesh"] = it->second;
      }
  if (man.contains("mesh_deformations"))
    for (Json& ch : man["mesh_deformations"])
      ch["mesh"] = new_mesh.at(ch["mesh"].get<std::uint32_t>());
  man["meshes"] = std::move(meshes);
  man["textures"] = std::move(textures);
  return core::Ok{};
}

core::Status ScenePacker::apply_spec() {
  if (options_.spec == nullptr) return core::Ok{};
  return apply_spec_fields(*options_.spec, result_.content.manifest);
}

void ScenePacker::drop_replaced_payloads() {
  PackageContent& c = result_.content;
  std::vector<bool> used(c.payloads.size(), false);
  for (const PayloadRef& r : find_payload_refs(c.manifest))
    if (r.id < used.size()) used[r.id] = true;
  std::vector<std::uint32_t> new_id(c.payloads.size(), 0);
  std::vector<std::vector<std::uint8_t>> kept;
  for (std::size_t i = 0; i < c.payloads.size(); ++i) {
    if (!used[i]) continue;
    new_id[i] = static_cast<std::uint32_t>(kept.size());
    kept.push_back(std::move(c.payloads[i]));
  }
  for_each_payload_ref(c.manifest, [&](Json& v, const std::string&, std::uint32_t id) {
    if (id < new_id.size()) v = static_cast<Json::number_unsigned_t>(new_id[id]);
  });
  c.payloads = std::move(kept);
}

std::uint32_t ScenePacker::add_payload(std::vector<std::uint8_t> bytes) {
  result_.content.payloads.push_back(std::move(bytes));
  return static_cast<std::uint32_t>(result_.content.payloads.size() - 1);
}

}  // namespace charkit::bem::detail

namespace charkit::bem {

core::Result<PackResult> pack_scene(const PackageContent& template_content, const Model& model,
                                    scene::GltfDocument& scene, const PackOptions& options) {
  return detail::ScenePacker(template_content, model, scene, options).run();
}

core::Result<PackResult> pack_project(PackageContent project, const PackOptions& options) {
  PackResult out;
  out.content = std::move(project);
  out.content.manifest_text.clear();
  if (options.spec != nullptr) {
    if (!options.spec->parameters.empty())
      return core::error_at_pointer(codes::BEM_PACK_SPEC,
                                    "a project has no shape keys to make sliders of: its "
                                    "parameters and mesh_deformations are in its manifest",
                                    options.spec->parameters.front().pointer);
    if (auto st = detail::apply_spec_fields(*options.spec, out.content.manifest); !st)
      return std::move(st).error();
  }
  if (auto st = declare_used_capabilities(out.content); !st) return std::move(st).error();
  return out;
}

core::Json pack_report_json(const PackResult& packed) {
  using core::Json;
  Json meshes = Json::array();
  for (const PackedMesh& m : packed.meshes)
    meshes.push_back(Json{{"mesh", m.mesh},
                          {"gltfMesh", m.gltf_mesh},
                          {"node", m.node},
                          {"verticesBefore", m.vertices_before},
                          {"vertices", m.vertices},
                          {"drawsReplaced", m.draws_replaced},
                          {"drawsKept", m.draws_kept},
                          {"drawsAdded", m.draws_added},
                          {"bones", m.bones},
                          {"bonesAdded", m.bones_added},
                          {"sliders", m.sliders}});
  Json textures = Json::array();
  for (const PackedTexture& t : packed.textures) {
    Json tj{{"texture", t.texture}, {"image", t.image},
            {"name", t.name},       {"format", scene::texture_format_name(t.format)},
            {"width", t.width},     {"height", t.height},
            {"mips", t.mips},       {"encoded", t.encoded}};
    // PSNR: null when kept, "inf" would not be JSON: an exact encode is 99.
    if (t.encoded) tj["psnrDb"] = std::isfinite(t.psnr_db) ? t.psnr_db : 99.0;
    if (t.dds) tj["dds"] = true;
    textures.push_back(std::move(tj));
  }
  Json warnings = Json::array();
  for (const PackWarning& w : packed.warnings)
    warnings.push_back(Json{{"code", w.code}, {"message", w.message}, {"pointer", w.pointer}});
  return Json{{"meshes", std::move(meshes)},
              {"textures", std::move(textures)},
              {"warnings", std::move(warnings)}};
}

}  // namespace charkit::bem
