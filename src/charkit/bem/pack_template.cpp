// JSON templates for `bem pack` (docs/bem/pack.md, "JSON templates"): the
// facts a packer needs when there is no package to start from — the target
// and, per component to fill, its vertex layout and texture facts — turned
// into a placeholder package that the packer fills like any template
// (PackOptions::fresh then drops what the scene did not fill).
#include <set>

#include "charkit/bem/error_codes.h"
#include "charkit/bem/load.h"
#include "charkit/bem/pack.h"
#include "charkit/core/json.h"
#include "charkit/scene/image.h"
#include "charkit/scene/texture_decode.h"
#include "charkit/scene/texture_encode.h"

namespace charkit::bem {
namespace {

using core::Json;

core::Error template_error(std::string message, std::string pointer) {
  return core::error_at_pointer(codes::BEM_PACK_TEMPLATE, std::move(message), std::move(pointer));
}

/// A placeholder payload of `bytes` zero bytes (at least one: §2).
std::vector<std::uint8_t> zeros(std::size_t bytes) {
  return std::vector<std::uint8_t>(std::max<std::size_t>(bytes, 1), 0);
}

/// A layout's "textures": a placeholder texture per entry (4×4 grey in its
/// format), listed in textures_of_slot by material slot.
core::Status template_textures(const Json& texs, const std::string& lp, const Json& comp,
                               PackageContent& out,
                               std::map<std::uint32_t, Json>& textures_of_slot) {
  Json& m = out.manifest;
  if (!texs.is_array()) return template_error("\"textures\" is an array", lp + "/textures");
  for (std::size_t k = 0; k < texs.size(); ++k) {
    const std::string tp = lp + "/textures/" + std::to_string(k);
    const Json& tx = texs[k];
    if (!tx.is_object()) return template_error("a texture is an object", tp);
    for (const auto& [key, value] : tx.items())
      if (key != "material_slot" && key != "original_name" && key != "srgb" && key != "semantic" &&
          key != "format")
        return template_error("\"" + key +
                                  "\" is not a texture field (material_slot, original_name, srgb, "
                                  "semantic, format)",
                              tp + "/" + key);
    const auto slot =
        tx.contains("material_slot") ? core::json_uint32(tx["material_slot"]) : std::nullopt;
    if (!slot || *slot >= comp["materials"].size())
      return template_error("\"material_slot\" is an index into the component's materials",
                            tp + "/material_slot");
    if (!tx.contains("original_name") || !tx["original_name"].is_string() ||
        tx["original_name"].get<std::string>().empty())
      return template_error(
          "\"original_name\" is the name of the game texture this one replaces (§8)",
          tp + "/original_name");
    if (!tx.contains("srgb") || !tx["srgb"].is_boolean())
      return template_error(
          "\"srgb\" (true or false) says whether the texture is colour; it is never "
          "guessed",
          tp + "/srgb");
    const bool srgb = tx["srgb"].get<bool>();
    const bool normal = tx.contains("semantic") && tx["semantic"] == "normal";
    if (tx.contains("semantic") && !normal)
      return template_error("\"semantic\" is \"normal\" or left out (§8)", tp + "/semantic");
    std::uint32_t format = srgb     ? scene::texture_format::kBC7
                           : normal ? scene::texture_format::kBC5
                                    : scene::texture_format::kBC4;
    if (tx.contains("format")) {
      auto f = tx["format"].is_string()
                   ? scene::texture_format_from_name(tx["format"].get<std::string>())
                   : std::nullopt;
      if (!f)
        return template_error(
            "\"format\" is BC7, BC1, BC3, BC4, BC5, ASTC4x4, ASTC5x5, ASTC6x6, "
            "RGBA32 or R8",
            tp + "/format");
      format = *f;
    }
    scene::RgbaImage grey;
    grey.width = grey.height = 4;
    grey.pixels.assign(64, 128);
    auto payload = scene::encode_texture(format, grey, 1, srgb);
    if (!payload) return template_error(payload.error().message, tp + "/format");
    out.payloads.push_back(std::move(*payload));
    Json tj{{"width", 4},
            {"height", 4},
            {"mips", 1},
            {"format", format},
            {"srgb", srgb},
            {"original_name", tx["original_name"]},
            {"payload", out.payloads.size() - 1}};
    if (normal) {
      tj["semantic"] = "normal";
      if (format == scene::texture_format::kBC5) tj["normal_encoding"] = "xy-unorm";
    }
    m["textures"].push_back(std::move(tj));
    auto& list = textures_of_slot[*slot];
    if (list.is_null()) list = Json::array();
    list.push_back(m["textures"].size() - 1);
  }
  return core::Ok{};
}

}  // namespace

core::Result<PackageContent> template_from_json(core::Bytes json) {
  auto parsed = core::parse_json_strict(core::as_chars(json));
  if (!parsed) return std::move(parsed).error();
  const Json& t = *parsed;
  if (!t.is_object()) return template_error("a JSON template is an object", "");
  for (const auto& [key, value] : t.items())
    if (key != "target" && key != "layouts")
      return template_error("\"" + key + "\" is not a template field (target, layouts)", "/" + key);
  if (!t.contains("target") || !t["target"].is_object() || !t["target"].contains("components") ||
      !t["target"]["components"].is_array())
    return template_error("\"target\" is the package's §4 target object, with its components",
                          "/target");
  if (!t.contains("layouts") || !t["layouts"].is_array() || t["layouts"].empty())
    return template_error(
        "\"layouts\" lists the components to fill: their vertex layout and texture facts "
        "(the packer never guesses them)",
        "/layouts");
  const Json& components = t["target"]["components"];

  PackageContent out;
  Json& m = out.manifest;
  const Json& target = t["target"];
  std::string base = "pack";
  for (const char* key : {"character_id", "id"})
    if (target.contains(key) && target[key].is_string() && !target[key].get<std::string>().empty())
      base = target[key].get<std::string>();
  std::string id = "charkit.pack.";
  for (char c : base)
    id += (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ? c : '_';
  m["schema"] = 1;
  m["package_id"] = id.substr(0, 96);
  m["name"] = "Packed " + base;
  m["author"] = "charkit bem pack";
  m["version"] = "1.0.0";
  m["required_capabilities"] =
      Json::array({"native-materials", "palette-u8", "indices-u32", "composable-options"});
  m["target"] = target;
  m["meshes"] = Json::array();
  m["textures"] = Json::array();
  m["option_groups"] = Json::array();

  std::map<std::uint32_t, std::uint32_t> mesh_of_component;
  const Json& layouts = t["layouts"];
  for (std::size_t l = 0; l < layouts.size(); ++l) {
    const std::string lp = "/layouts/" + std::to_string(l);
    const Json& lay = layouts[l];
    if (!lay.is_object()) return template_error("a layout is an object", lp);
    for (const auto& [key, value] : lay.items())
      if (key != "component" && key != "attributes" && key != "strides" && key != "index_size" &&
          key != "textures")
        return template_error(
            "\"" + key +
                "\" is not a layout field (component, attributes, strides, index_size, "
                "textures)",
            lp + "/" + key);
    const auto c = lay.contains("component") ? core::json_uint32(lay["component"]) : std::nullopt;
    if (!c || *c >= components.size() || !components[*c].is_object())
      return template_error("\"component\" is the index of a target component", lp + "/component");
    if (mesh_of_component.count(*c))
      return template_error("the component has two layouts", lp + "/component");
    const Json& comp = components[*c];
    if (!lay.contains("attributes") || !lay["attributes"].is_array() || lay["attributes"].empty())
      return template_error(
          "\"attributes\" is the component's vertex layout: [semantic, format, dimension, "
          "stream, offset] per attribute (§7), as the game's mesh declares it",
          lp + "/attributes");
    if (!lay.contains("strides") || !lay["strides"].is_array() || lay["strides"].size() != 3)
      return template_error("\"strides\" is the three streams' strides (§7)", lp + "/strides");
    std::uint32_t index_size = 2;
    if (lay.contains("index_size")) {
      auto v = core::json_uint32(lay["index_size"]);
      if (!v || (*v != 2 && *v != 4))
        return template_error("\"index_size\" is 2 or 4", lp + "/index_size");
      index_size = *v;
    }
    if (!comp.contains("bone_names") || !comp["bone_names"].is_array() ||
        comp["bone_names"].empty() || !comp["bone_names"][0].is_string())
      return template_error("a component to fill needs its bone_names (the palette binds to them)",
                            "/target/components/" + std::to_string(*c) + "/bone_names");
    if (!comp.contains("materials") || !comp["materials"].is_array() || comp["materials"].empty())
      return template_error("a component to fill needs its materials (draws take their slots)",
                            "/target/components/" + std::to_string(*c) + "/materials");

    Json mesh{{"vertex_count", 3}, {"index_size", index_size}};
    mesh["streams"] = Json::array();
    for (std::size_t s = 0; s < 3; ++s) {
      auto stride = core::json_uint32(lay["strides"][s]);
      if (!stride || *stride > 64)
        return template_error("a stride is 0..64 bytes", lp + "/strides/" + std::to_string(s));
      Json sj{{"stride", *stride}};
      if (*stride > 0) {
        out.payloads.push_back(zeros(std::size_t{3} * *stride));
        sj["payload"] = out.payloads.size() - 1;
      }
      mesh["streams"].push_back(std::move(sj));
    }
    mesh["attributes"] = lay["attributes"];
    mesh["bones"] =
        Json::array({Json{{"component", *c}, {"index", 0}, {"name", comp["bone_names"][0]}}});

    // Texture facts: which material slot, name, colour space; format by
    // semantic unless given (sRGB colour BC7, normal maps BC5, masks BC4).
    std::map<std::uint32_t, Json> textures_of_slot;
    if (lay.contains("textures"))
      if (auto st = template_textures(lay["textures"], lp, comp, out, textures_of_slot); !st)
        return std::move(st).error();
    // One placeholder draw per material slot; pack fills them and drops the
    // ones no primitive fills.
    mesh["draws"] = Json::array();
    out.payloads.push_back(zeros(std::size_t{3} * index_size));
    const std::size_t indices = out.payloads.size() - 1;
    for (std::size_t s = 0; s < comp["materials"].size(); ++s) {
      auto it = textures_of_slot.find(static_cast<std::uint32_t>(s));
      mesh["draws"].push_back(
          Json{{"when", true},
               {"indices", indices},
               {"count", 3},
               {"material_component", *c},
               {"material_slot", s},
               {"material_name", comp["materials"][s]},
               {"textures", it == textures_of_slot.end() ? Json::array() : it->second}});
    }
    mesh_of_component[*c] = static_cast<std::uint32_t>(m["meshes"].size());
    m["meshes"].push_back(std::move(mesh));
  }
  m["component_rules"] = Json::array();
  for (std::size_t c = 0; c < components.size(); ++c) {
    auto it = mesh_of_component.find(static_cast<std::uint32_t>(c));
    Json cand = it == mesh_of_component.end()
                    ? Json{{"when", true}, {"operation", "keep"}}
                    : Json{{"when", true}, {"operation", "replace"}, {"mesh", it->second}};
    m["component_rules"].push_back(
        Json{{"target", c}, {"candidates", Json::array({std::move(cand)})}});
  }
  return out;
}

core::Result<PackTemplate> load_json_template(core::Bytes json) {
  auto content = template_from_json(json);
  if (!content) return std::move(content).error();
  // The placeholders' bytes are zeros: their contents are not checked (the
  // packer replaces every one it keeps), their structure is.
  WriteOptions wo;
  wo.validate.check_payloads = false;
  core::Report report;
  auto written = write_binary(*content, wo, &report);
  if (!written) {
    for (const auto& issue : report.issues())
      if (issue.severity == core::Severity::kError)
        return core::make_error(
            codes::BEM_PACK_TEMPLATE,
            "the JSON template does not make a valid package: " + issue.code + ": " + issue.message,
            issue.location);
    return core::make_error(
        codes::BEM_PACK_TEMPLATE,
        "the JSON template does not make a valid package: " + written.error().message);
  }
  ValidateOptions vo;
  vo.check_payloads = false;
  LoadedPackage loaded = load_package(written->bytes, vo);
  if (!loaded.ok())
    return core::make_error(codes::BEM_PACK_TEMPLATE,
                            "the JSON template does not make a valid package: " + loaded.error);
  auto back = read_package_content(written->bytes);
  if (!back) return std::move(back).error();
  return PackTemplate{std::move(*back), std::move(*loaded.model)};
}

}  // namespace charkit::bem
