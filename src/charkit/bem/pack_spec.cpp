#include "charkit/bem/pack_spec.h"

#include <set>

#include "charkit/bem/error_codes.h"
#include "charkit/core/json.h"

namespace charkit::bem {
namespace {

using core::Json;

core::Error spec_error(std::string message, std::string pointer) {
  return core::error_at_pointer(codes::BEM_PACK_SPEC, std::move(message), std::move(pointer));
}

/// Manifest fields the spec sets as given, with the JSON type each must have.
struct PassedField {
  const char* key;
  Json::value_t type;  // object, array or string
};
constexpr PassedField kPassed[] = {
    {"package_id", Json::value_t::string},
    {"name", Json::value_t::string},
    {"author", Json::value_t::string},
    {"version", Json::value_t::string},
    {"option_groups", Json::value_t::array},
    {"component_rules", Json::value_t::array},
    {"selection_constraints", Json::value_t::array},
    {"texture_slots", Json::value_t::array},
    {"root_offset", Json::value_t::object},
    {"drivers", Json::value_t::array},
};

std::string known_fields() {
  std::string s;
  for (const PassedField& f : kPassed) s += std::string(s.empty() ? "" : ", ") + f.key;
  return s + ", parameters, material_overrides";
}

/// A tick field: an integer in 0..1000 (§10).
core::Result<std::optional<std::int64_t>> tick(const Json& obj, const char* key,
                                               const std::string& ptr) {
  auto it = obj.find(key);
  if (it == obj.end()) return std::optional<std::int64_t>{};
  if (!it->is_number_integer() || it->get<std::int64_t>() < 0 || it->get<std::int64_t>() > 1000)
    return spec_error(std::string("\"") + key + "\" is a tick: an integer 0..1000 (BEM §10)",
                      core::json_pointer_join(ptr, key));
  return std::optional<std::int64_t>{it->get<std::int64_t>()};
}

core::Result<std::optional<std::string>> text(const Json& obj, const char* key,
                                              const std::string& ptr) {
  auto it = obj.find(key);
  if (it == obj.end()) return std::optional<std::string>{};
  if (!it->is_string() || it->get<std::string>().empty())
    return spec_error(std::string("\"") + key + "\" is a non-empty string",
                      core::json_pointer_join(ptr, key));
  return std::optional<std::string>{it->get<std::string>()};
}

core::Result<PackSpecParameter> parameter(const Json& p, const std::string& ptr) {
  if (!p.is_object()) return spec_error("a parameter is an object", ptr);
  static const std::set<std::string> keys = {"id",     "name",          "shape_key", "min",
                                             "max",    "step",          "neutral",   "default",
                                             "frames", "available_when"};
  for (const auto& [k, v] : p.items())
    if (!keys.count(k))
      return spec_error(
          "\"" + k +
              "\" is not a parameter field (id, name, shape_key, min, max, step, neutral, "
              "default, frames, available_when)",
          core::json_pointer_join(ptr, k));
  PackSpecParameter out;
  out.pointer = ptr;
  auto id = text(p, "id", ptr);
  if (!id) return std::move(id).error();
  if (!*id) return spec_error("a parameter needs an \"id\"", ptr);
  out.id = **id;
  auto name = text(p, "name", ptr);
  if (!name) return std::move(name).error();
  out.name = *name;
  auto key = text(p, "shape_key", ptr);
  if (!key) return std::move(key).error();
  out.shape_key = *key;
  for (auto [field, slot] : {std::pair{"min", &out.min},
                             {"max", &out.max},
                             {"step", &out.step},
                             {"neutral", &out.neutral},
                             {"default", &out.default_value}}) {
    auto v = tick(p, field, ptr);
    if (!v) return std::move(v).error();
    *slot = *v;
  }
  if (out.step && *out.step < 1)
    return spec_error("\"step\" is at least 1 (BEM §10)", ptr + "/step");
  if (auto it = p.find("available_when"); it != p.end()) out.available_when = *it;
  if (auto it = p.find("frames"); it != p.end()) {
    if (out.shape_key)
      return spec_error("give either \"shape_key\" or \"frames\", not both", ptr + "/shape_key");
    if (!it->is_array() || it->size() < 2 || it->size() > 64)
      return spec_error("\"frames\" is an array of 2..64 frames (BEM §10)", ptr + "/frames");
    int neutrals = 0;
    for (std::size_t i = 0; i < it->size(); ++i) {
      const Json& f = (*it)[i];
      const std::string fptr = ptr + "/frames/" + std::to_string(i);
      if (!f.is_object()) return spec_error("a frame is an object", fptr);
      for (const auto& [k, v] : f.items())
        if (k != "value" && k != "neutral" && k != "shape_key")
          return spec_error("\"" + k + "\" is not a frame field (value, neutral, shape_key)",
                            core::json_pointer_join(fptr, k));
      auto value = tick(f, "value", fptr);
      if (!value) return std::move(value).error();
      if (!*value) return spec_error("a frame needs a \"value\" (a tick)", fptr);
      PackSpecFrame frame;
      frame.value = **value;
      if (auto n = f.find("neutral"); n != f.end()) {
        if (!n->is_boolean() || !n->get<bool>())
          return spec_error("\"neutral\" is true or left out", fptr + "/neutral");
        frame.neutral = true;
        ++neutrals;
      }
      auto sk = text(f, "shape_key", fptr);
      if (!sk) return std::move(sk).error();
      if (frame.neutral == static_cast<bool>(*sk))
        return spec_error("a frame is either the neutral frame or a shape key's", fptr);
      if (*sk) frame.shape_key = **sk;
      if (!out.frames.empty() && frame.value <= out.frames.back().value)
        return spec_error("frame values are strictly increasing (BEM §10)", fptr + "/value");
      out.frames.push_back(std::move(frame));
    }
    if (neutrals != 1)
      return spec_error("exactly one frame is the neutral one (BEM §10)", ptr + "/frames");
    // The frames fix the range and the neutral tick; fields that say
    // otherwise are contradictions, not overrides.
    const std::int64_t lo = out.frames.front().value, hi = out.frames.back().value;
    std::int64_t nv = 0;
    for (const PackSpecFrame& f : out.frames)
      if (f.neutral) nv = f.value;
    if (out.min && *out.min != lo)
      return spec_error("\"min\" is not the first frame's value", ptr + "/min");
    if (out.max && *out.max != hi)
      return spec_error("\"max\" is not the last frame's value", ptr + "/max");
    if (out.neutral && *out.neutral != nv)
      return spec_error("\"neutral\" is not the neutral frame's value", ptr + "/neutral");
    out.min = lo;
    out.max = hi;
    out.neutral = nv;
  }
  return out;
}

}  // namespace

core::Result<PackSpec> parse_pack_spec(const Json& spec) {
  if (!spec.is_object()) return spec_error("the spec is a JSON object", "");
  PackSpec out;
  for (const auto& [key, value] : spec.items()) {
    const std::string ptr = core::json_pointer_join("", key);
    bool passed = false;
    for (const PassedField& f : kPassed)
      if (key == f.key) {
        if (value.type() != f.type)
          return spec_error("\"" + key + "\" is " +
                                (f.type == Json::value_t::string  ? "a string"
                                 : f.type == Json::value_t::array ? "an array"
                                                                  : "an object") +
                                ", as in the manifest (BEM §3-§13)",
                            ptr);
        out.fields[key] = value;
        passed = true;
      }
    if (passed) continue;
    if (key == "parameters") {
      if (!value.is_array()) return spec_error("\"parameters\" is an array", ptr);
      std::set<std::string> ids;
      for (std::size_t i = 0; i < value.size(); ++i) {
        auto p = parameter(value[i], ptr + "/" + std::to_string(i));
        if (!p) return std::move(p).error();
        if (!ids.insert(p->id).second)
          return spec_error("parameter \"" + p->id + "\" is given twice",
                            ptr + "/" + std::to_string(i));
        out.parameters.push_back(std::move(*p));
      }
      continue;
    }
    if (key == "material_overrides") {
      if (!value.is_array()) return spec_error("\"material_overrides\" is an array", ptr);
      for (std::size_t i = 0; i < value.size(); ++i) {
        const Json& o = value[i];
        const std::string optr = ptr + "/" + std::to_string(i);
        if (!o.is_object()) return spec_error("a material override is an object", optr);
        PackSpecDrawOverride d;
        d.pointer = optr;
        for (const char* k : {"mesh", "draw"}) {
          auto it = o.find(k);
          auto v = it == o.end() ? std::nullopt : core::json_uint32(*it);
          if (!v)
            return spec_error(std::string("a material override names its \"") + k +
                                  "\" (an index into the package's meshes / the mesh's draws)",
                              core::json_pointer_join(optr, k));
          (k[0] == 'm' ? d.mesh : d.draw) = *v;
        }
        d.overrides = o;
        d.overrides.erase("mesh");
        d.overrides.erase("draw");
        out.material_overrides.push_back(std::move(d));
      }
      continue;
    }
    return spec_error("\"" + key + "\" is not a spec field (" + known_fields() + ")", ptr);
  }
  return out;
}

core::Result<PackSpec> parse_pack_spec(core::Bytes json) {
  auto doc = core::parse_json_strict(core::as_chars(json));
  if (!doc) return std::move(doc).error();
  return parse_pack_spec(*doc);
}

}  // namespace charkit::bem
