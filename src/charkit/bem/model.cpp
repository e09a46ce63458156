// build_model: the typed view of a manifest (model.h). Every field is read
// through one small reader that fails with the field's JSON pointer, so a
// manifest that skipped validation gives an error, never a crash.
#include "charkit/bem/model.h"

#include <algorithm>
#include <stdexcept>

#include "charkit/bem/container.h"
#include "charkit/bem/error_codes.h"
#include "charkit/core/json.h"

namespace charkit::bem {

using core::Json;
using core::json_pointer_join;

bool evaluate(const Condition& c, const EffectiveValues& values) {
  switch (c.op) {
    case Condition::Op::kTrue:
      return true;
    case Condition::Op::kFalse:
      return false;
    case Condition::Op::kEq:
      return c.group < values.size() && values[c.group] && *values[c.group] == c.choice;
    case Condition::Op::kAll:
      for (const auto& o : c.operands)
        if (!evaluate(o, values)) return false;
      return true;
    case Condition::Op::kAny:
      for (const auto& o : c.operands)
        if (evaluate(o, values)) return true;
      return false;
    case Condition::Op::kNot:
      return c.operands.size() == 1 && !evaluate(c.operands[0], values);
  }
  return false;
}

const char* operation_name(Operation op) {
  switch (op) {
    case Operation::kKeep:
      return "keep";
    case Operation::kHide:
      return "hide";
    case Operation::kReplace:
      return "replace";
  }
  return "?";
}

namespace {

template <typename T>
int find_by_id(const std::vector<T>& v, std::string_view id) {
  for (std::size_t i = 0; i < v.size(); ++i)
    if (v[i].id == id) return static_cast<int>(i);
  return -1;
}

}  // namespace

int Model::find_group(std::string_view id) const {
  return find_by_id(groups, id);
}
int Model::find_parameter(std::string_view id) const {
  return find_by_id(parameters, id);
}
int Model::find_slot(std::string_view id) const {
  return find_by_id(slots, id);
}

namespace {

/// Thrown inside this file only; build_model turns it into a core::Error.
struct ModelError {
  std::string pointer;
  std::string message;
};

[[noreturn]] void fail(const std::string& ptr, const std::string& message) {
  throw ModelError{ptr, message};
}

const Json& member(const Json& obj, const char* key, const std::string& ptr) {
  if (!obj.is_object()) fail(ptr, "expected an object");
  auto it = obj.find(key);
  if (it == obj.end()) fail(json_pointer_join(ptr, key), "missing field");
  return *it;
}

const Json* optional_member(const Json& obj, const char* key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

// Parsed manifests hold non-negative integers as unsigned; a manifest built
// in code (writer, tests) may hold them as signed: both are read.
std::uint32_t u32(const Json& j, const std::string& ptr) {
  if (j.is_number_integer() && !j.is_number_unsigned()) {
    auto v = j.get<Json::number_integer_t>();
    if (v < 0 || v > 0xFFFFFFFFll) fail(ptr, "expected a UInt32 integer");
    return static_cast<std::uint32_t>(v);
  }
  auto v = core::json_uint32(j);
  if (!v) fail(ptr, "expected a UInt32 integer");
  return *v;
}

std::uint32_t u32_field(const Json& obj, const char* key, const std::string& ptr) {
  return u32(member(obj, key, ptr), json_pointer_join(ptr, key));
}

std::string string_field(const Json& obj, const char* key, const std::string& ptr,
                         bool required = true) {
  const Json* j = required ? &member(obj, key, ptr) : optional_member(obj, key);
  if (!j) return {};
  if (!j->is_string()) fail(json_pointer_join(ptr, key), "expected a string");
  return j->get<std::string>();
}

const Json& array_field(const Json& obj, const char* key, const std::string& ptr) {
  const Json& j = member(obj, key, ptr);
  if (!j.is_array()) fail(json_pointer_join(ptr, key), "expected an array");
  return j;
}

std::vector<std::string> string_array(const Json& obj, const char* key, const std::string& ptr) {
  std::vector<std::string> out;
  const Json* j = optional_member(obj, key);
  if (!j) return out;
  if (!j->is_array()) fail(json_pointer_join(ptr, key), "expected an array");
  for (std::size_t i = 0; i < j->size(); ++i) {
    if (!(*j)[i].is_string())
      fail(json_pointer_join(json_pointer_join(ptr, key), i), "expected a string");
    out.push_back((*j)[i].get<std::string>());
  }
  return out;
}

class Builder {
 public:
  Builder(const Json& m, const Package& p, int minor) : m_(m), pkg_(p) { model_.minor = minor; }

  Model build() {
    if (!m_.is_object()) fail("", "manifest must be an object");
    read_payload_sizes();
    read_target();
    read_textures();
    model_.appearance_structure =
        (m_.contains("appearances") || m_.contains("default_appearance_id")) &&
        !m_.contains("option_groups");
    if (model_.appearance_structure) {
      read_appearances();
    } else {
      read_groups();
      read_slots();
      read_component_rules();
      if (const Json* sc = optional_member(m_, "selection_constraints")) {
        if (!sc->is_array()) fail("/selection_constraints", "expected an array");
        for (std::size_t i = 0; i < sc->size(); ++i)
          model_.constraints.push_back(
              condition((*sc)[i], json_pointer_join("/selection_constraints", i), -1, 1));
      }
    }
    read_meshes();
    read_parameters();
    read_deformations();
    return std::move(model_);
  }

 private:
  void read_payload_sizes() {
    for (const auto& p : pkg_.payloads())
      model_.payload_sizes.push_back(p.present ? p.decoded_size : 0);
  }

  std::uint32_t payload_id(const Json& obj, const char* key, const std::string& ptr) {
    std::uint32_t id = u32_field(obj, key, ptr);
    if (id >= model_.payload_sizes.size())
      fail(json_pointer_join(ptr, key), "payload " + std::to_string(id) + " does not exist");
    return id;
  }

  // §6 condition; group_limit >= 0 restricts eq to earlier groups.
  Condition condition(const Json& j, const std::string& ptr, int group_limit, int depth) {
    if (depth > 16) fail(ptr, "condition nested deeper than 16 levels");
    Condition c;
    if (j.is_boolean()) {
      c.op = j.get<bool>() ? Condition::Op::kTrue : Condition::Op::kFalse;
      return c;
    }
    if (!j.is_object() || j.size() != 1) fail(ptr, "malformed condition");
    const std::string& op = j.begin().key();
    const Json& arg = j.begin().value();
    std::string aptr = json_pointer_join(ptr, op);
    if (op == "eq") {
      if (!arg.is_array() || arg.size() != 2 || !arg[0].is_string() || !arg[1].is_string())
        fail(aptr, "eq takes [group, choice]");
      int g = model_.find_group(arg[0].get_ref<const std::string&>());
      if (g < 0 || (group_limit >= 0 && g >= group_limit))
        fail(json_pointer_join(aptr, 0), "unknown or later option group");
      const auto& choices = model_.groups[static_cast<std::size_t>(g)].choices;
      auto it = std::find(choices.begin(), choices.end(), arg[1].get_ref<const std::string&>());
      if (it == choices.end()) fail(json_pointer_join(aptr, 1), "unknown choice");
      return Condition::eq(static_cast<std::uint32_t>(g),
                           static_cast<std::uint32_t>(it - choices.begin()));
    }
    if (op == "not") {
      c.op = Condition::Op::kNot;
      c.operands.push_back(condition(arg, aptr, group_limit, depth + 1));
      return c;
    }
    if (op == "all" || op == "any") {
      if (!arg.is_array() || arg.empty() || arg.size() > 32) fail(aptr, "expected 1..32 operands");
      c.op = op == "all" ? Condition::Op::kAll : Condition::Op::kAny;
      for (std::size_t i = 0; i < arg.size(); ++i)
        c.operands.push_back(condition(arg[i], json_pointer_join(aptr, i), group_limit, depth + 1));
      return c;
    }
    fail(ptr, "unknown condition operator");
  }

  Condition optional_condition(const Json& obj, const char* key, const std::string& ptr) {
    const Json* w = optional_member(obj, key);
    return w ? condition(*w, json_pointer_join(ptr, key), -1, 1) : Condition::always();
  }

  void read_target() {
    const Json& t = member(m_, "target", "");
    const Json& comps = array_field(t, "components", "/target");
    for (std::size_t i = 0; i < comps.size(); ++i) {
      std::string ptr = json_pointer_join("/target/components", i);
      const Json& c = comps[i];
      Component comp;
      comp.mesh_name = string_field(c, "mesh_name", ptr);
      comp.original_index_count = u32_field(c, "original_index_count", ptr);
      comp.bone_names = string_array(c, "bone_names", ptr);
      comp.materials = string_array(c, "materials", ptr);
      comp.resource = string_field(c, "resource", ptr, false);
      comp.renderer_kind = string_field(c, "renderer_kind", ptr, false);
      model_.components.push_back(std::move(comp));
    }
    if (const Json* res = optional_member(t, "resources")) {
      if (!res->is_array()) fail("/target/resources", "expected an array");
      for (std::size_t i = 0; i < res->size(); ++i) {
        std::string ptr = json_pointer_join("/target/resources", i);
        const Json& r = (*res)[i];
        Resource out;
        out.id = string_field(r, "id", ptr);
        out.name = string_field(r, "name", ptr);
        out.asset_path = string_field(r, "asset_path", ptr);
        out.platforms = string_array(r, "platforms", ptr);
        out.lod = u32_field(r, "lod", ptr);
        model_.resources.push_back(std::move(out));
      }
    }
  }

  void read_textures() {
    const Json* list = optional_member(m_, "textures");
    if (!list) return;
    if (!list->is_array()) fail("/textures", "expected an array");
    for (std::size_t i = 0; i < list->size(); ++i) {
      std::string ptr = json_pointer_join("/textures", i);
      const Json& t = (*list)[i];
      Texture out;
      out.width = u32_field(t, "width", ptr);
      out.height = u32_field(t, "height", ptr);
      out.mips = u32_field(t, "mips", ptr);
      out.format = u32_field(t, "format", ptr);
      const Json& srgb = member(t, "srgb", ptr);
      if (!srgb.is_boolean()) fail(ptr + "/srgb", "expected a boolean");
      out.srgb = srgb.get<bool>();
      out.original_name = string_field(t, "original_name", ptr);
      out.payload = payload_id(t, "payload", ptr);
      out.semantic = string_field(t, "semantic", ptr, false);
      out.normal_encoding = string_field(t, "normal_encoding", ptr, false);
      model_.textures.push_back(std::move(out));
    }
  }

  void read_groups() {
    const Json* list = optional_member(m_, "option_groups");
    if (!list) return;
    if (!list->is_array()) fail("/option_groups", "expected an array");
    for (std::size_t i = 0; i < list->size(); ++i) {
      std::string ptr = json_pointer_join("/option_groups", i);
      const Json& g = (*list)[i];
      Group out;
      out.id = string_field(g, "id", ptr);
      out.name = string_field(g, "name", ptr, false);
      const Json& choices = array_field(g, "choices", ptr);
      if (choices.empty()) fail(ptr + "/choices", "a group needs at least one choice");
      for (std::size_t k = 0; k < choices.size(); ++k)
        out.choices.push_back(
            string_field(choices[k], "id", json_pointer_join(ptr + "/choices", k)));
      std::string def = string_field(g, "default", ptr);
      auto it = std::find(out.choices.begin(), out.choices.end(), def);
      if (it == out.choices.end()) fail(ptr + "/default", "default is not a choice");
      out.default_choice = static_cast<std::uint32_t>(it - out.choices.begin());
      if (model_.find_group(out.id) >= 0) fail(ptr + "/id", "duplicate group id");
      // available_when may only refer to earlier groups (§6): resolved
      // before this group is added, with the limit enforced.
      if (const Json* aw = optional_member(g, "available_when"))
        out.available_when = condition(*aw, ptr + "/available_when", static_cast<int>(i), 1);
      model_.groups.push_back(std::move(out));
    }
  }

  void read_appearances() {
    const Json& list = array_field(m_, "appearances", "");
    if (list.empty()) fail("/appearances", "at least one appearance is needed");
    Group g;
    g.id = "appearance";
    g.name = "appearance";
    for (std::size_t i = 0; i < list.size(); ++i)
      g.choices.push_back(string_field(list[i], "id", json_pointer_join("/appearances", i)));
    std::string def = string_field(m_, "default_appearance_id", "", false);
    if (!def.empty()) {
      auto it = std::find(g.choices.begin(), g.choices.end(), def);
      if (it == g.choices.end()) fail("/default_appearance_id", "not an appearance id");
      g.default_choice = static_cast<std::uint32_t>(it - g.choices.begin());
    }
    model_.appearance_preview_ids = g.choices;
    model_.groups.push_back(std::move(g));
    // Each appearance lists every component once (§5).
    for (std::size_t a = 0; a < list.size(); ++a) {
      std::string aptr = json_pointer_join("/appearances", a);
      const Json& comps = array_field(list[a], "components", aptr);
      for (std::size_t k = 0; k < comps.size(); ++k) {
        std::string ptr = json_pointer_join(aptr + "/components", k);
        std::uint32_t target = u32_field(comps[k], "target", ptr);
        if (target >= model_.components.size()) fail(ptr + "/target", "no such component");
        Candidate c = operation(comps[k], ptr);
        c.when = Condition::eq(0, static_cast<std::uint32_t>(a));
        model_.components[target].candidates.push_back(std::move(c));
      }
    }
  }

  Candidate operation(const Json& entry, const std::string& ptr) {
    Candidate c;
    c.pointer = ptr;
    std::string op = string_field(entry, "operation", ptr);
    if (op == "keep") {
      c.op = Operation::kKeep;
    } else if (op == "hide") {
      c.op = Operation::kHide;
    } else if (op == "replace") {
      c.op = Operation::kReplace;
      c.mesh = u32_field(entry, "mesh", ptr);
      if (const Json* meshes = optional_member(m_, "meshes");
          !meshes || !meshes->is_array() || c.mesh >= meshes->size())
        fail(ptr + "/mesh", "no such mesh");
    } else {
      fail(ptr + "/operation", "unknown operation");
    }
    return c;
  }

  TextureRef texture_ref(const Json& j, const std::string& ptr) {
    TextureRef r;
    if (j.is_object()) {
      std::string slot = string_field(j, "slot", ptr);
      int s = model_.find_slot(slot);
      if (s < 0) fail(ptr + "/slot", "unknown texture slot");
      r.is_slot = true;
      r.slot = static_cast<std::uint32_t>(s);
      return r;
    }
    r.texture = u32(j, ptr);
    if (r.texture >= model_.textures.size()) fail(ptr, "no such texture");
    return r;
  }

  std::vector<TextureRef> texture_list(const Json& obj, const std::string& ptr) {
    std::vector<TextureRef> out;
    const Json* list = optional_member(obj, "textures");
    if (!list) return out;
    if (!list->is_array()) fail(ptr + "/textures", "expected an array");
    for (std::size_t i = 0; i < list->size(); ++i)
      out.push_back(texture_ref((*list)[i], json_pointer_join(ptr + "/textures", i)));
    return out;
  }

  void read_slots() {
    const Json* list = optional_member(m_, "texture_slots");
    if (!list) return;
    if (!list->is_array()) fail("/texture_slots", "expected an array");
    for (std::size_t i = 0; i < list->size(); ++i) {
      std::string ptr = json_pointer_join("/texture_slots", i);
      TextureSlot s;
      s.id = string_field((*list)[i], "id", ptr);
      const Json& cands = array_field((*list)[i], "candidates", ptr);
      for (std::size_t k = 0; k < cands.size(); ++k) {
        std::string cptr = json_pointer_join(ptr + "/candidates", k);
        SlotCandidate c;
        c.when = condition(member(cands[k], "when", cptr), cptr + "/when", -1, 1);
        const Json& tex = member(cands[k], "texture", cptr);
        if (!tex.is_null()) {
          c.texture = u32(tex, cptr + "/texture");
          if (*c.texture >= model_.textures.size()) fail(cptr + "/texture", "no such texture");
        }
        s.candidates.push_back(std::move(c));
      }
      model_.slots.push_back(std::move(s));
    }
  }

  void read_component_rules() {
    const Json* rules = optional_member(m_, "component_rules");
    if (!rules) return;
    if (!rules->is_array()) fail("/component_rules", "expected an array");
    if (rules->size() != model_.components.size())
      fail("/component_rules", "one rule per target component is needed");
    for (std::size_t i = 0; i < rules->size(); ++i) {
      std::string ptr = json_pointer_join("/component_rules", i);
      const Json& cands = array_field((*rules)[i], "candidates", ptr);
      for (std::size_t k = 0; k < cands.size(); ++k) {
        std::string cptr = json_pointer_join(ptr + "/candidates", k);
        Candidate c = operation(cands[k], cptr);
        c.when = condition(member(cands[k], "when", cptr), cptr + "/when", -1, 1);
        if (const Json* mo = optional_member(cands[k], "material_overrides")) {
          if (!mo->is_array()) fail(cptr + "/material_overrides", "expected an array");
          for (std::size_t o = 0; o < mo->size(); ++o) {
            std::string optr = json_pointer_join(cptr + "/material_overrides", o);
            KeepOverride ko;
            ko.material_slot = u32_field((*mo)[o], "material_slot", optr);
            ko.material_name = string_field((*mo)[o], "material_name", optr);
            ko.textures = texture_list((*mo)[o], optr);
            c.overrides.push_back(std::move(ko));
          }
        }
        model_.components[i].candidates.push_back(std::move(c));
      }
    }
  }

  void read_meshes() {
    const Json* list = optional_member(m_, "meshes");
    if (!list) return;
    if (!list->is_array()) fail("/meshes", "expected an array");
    for (std::size_t i = 0; i < list->size(); ++i) {
      std::string ptr = json_pointer_join("/meshes", i);
      const Json& m = (*list)[i];
      Mesh out;
      out.vertex_count = u32_field(m, "vertex_count", ptr);
      out.index_size = u32_field(m, "index_size", ptr);
      if (out.index_size != 2 && out.index_size != 4) fail(ptr + "/index_size", "must be 2 or 4");
      out.renderer_kind = string_field(m, "renderer_kind", ptr, false);
      out.is_static = out.renderer_kind == "static";
      const Json& streams = array_field(m, "streams", ptr);
      for (std::size_t s = 0; s < streams.size(); ++s) {
        std::string sptr = json_pointer_join(ptr + "/streams", s);
        VertexStream vs;
        vs.stride = u32_field(streams[s], "stride", sptr);
        vs.payload = payload_id(streams[s], "payload", sptr);
        out.streams.push_back(vs);
      }
      const Json& attrs = array_field(m, "attributes", ptr);
      for (std::size_t a = 0; a < attrs.size(); ++a) {
        std::string aptr = json_pointer_join(ptr + "/attributes", a);
        if (!attrs[a].is_array() || attrs[a].size() != 5) fail(aptr, "expected 5 integers");
        VertexAttribute va;
        va.semantic = u32(attrs[a][0], aptr + "/0");
        va.format = u32(attrs[a][1], aptr + "/1");
        va.dimension = u32(attrs[a][2], aptr + "/2");
        va.stream = u32(attrs[a][3], aptr + "/3");
        va.offset = u32(attrs[a][4], aptr + "/4");
        if (va.stream >= out.streams.size()) fail(aptr + "/3", "no such stream");
        out.attributes.push_back(va);
      }
      if (const Json* bones = optional_member(m, "bones")) {
        if (!bones->is_array()) fail(ptr + "/bones", "expected an array");
        for (std::size_t b = 0; b < bones->size(); ++b) {
          std::string bptr = json_pointer_join(ptr + "/bones", b);
          PaletteBone pb;
          pb.component = u32_field((*bones)[b], "component", bptr);
          pb.index = u32_field((*bones)[b], "index", bptr);
          pb.name = string_field((*bones)[b], "name", bptr);
          out.bones.push_back(std::move(pb));
        }
      }
      read_draws(m, ptr, out);
      model_.meshes.push_back(std::move(out));
    }
  }

  void read_draws(const Json& m, const std::string& ptr, Mesh& out) {
    const Json& draws = array_field(m, "draws", ptr);
    std::uint32_t mesh_indices = 0;
    std::uint64_t index_count = 0;
    if (model_.appearance_structure) {
      mesh_indices = payload_id(m, "indices", ptr);
      index_count = u32_field(m, "index_count", ptr);
    }
    for (std::size_t d = 0; d < draws.size(); ++d) {
      std::string dptr = json_pointer_join(ptr + "/draws", d);
      const Json& j = draws[d];
      Draw draw;
      if (model_.appearance_structure) {
        draw.indices = mesh_indices;
        draw.start = u32_field(j, "start", dptr);
        draw.count = u32_field(j, "count", dptr);
        if (std::uint64_t{draw.start} + draw.count > index_count)
          fail(dptr, "draw lies outside the mesh's index stream");
      } else {
        draw.when = optional_condition(j, "when", dptr);
        draw.indices = payload_id(j, "indices", dptr);
        draw.count = u32_field(j, "count", dptr);
      }
      draw.material_component = u32_field(j, "material_component", dptr);
      draw.material_slot = u32_field(j, "material_slot", dptr);
      draw.material_name = string_field(j, "material_name", dptr);
      draw.textures = texture_list(j, dptr);
      if (const Json* mo = optional_member(j, "material_overrides")) draw.material_overrides = *mo;
      out.draws.push_back(std::move(draw));
    }
  }

  void read_parameters() {
    const Json* list = optional_member(m_, "parameters");
    if (!list) return;
    if (!list->is_array()) fail("/parameters", "expected an array");
    for (std::size_t i = 0; i < list->size(); ++i) {
      std::string ptr = json_pointer_join("/parameters", i);
      const Json& p = (*list)[i];
      Parameter out;
      out.id = string_field(p, "id", ptr);
      out.name = string_field(p, "name", ptr, false);
      out.min = u32_field(p, "min", ptr);
      out.max = u32_field(p, "max", ptr);
      out.neutral = u32_field(p, "neutral", ptr);
      out.default_value = u32_field(p, "default", ptr);
      out.step = u32_field(p, "step", ptr);
      if (out.min >= out.max || out.step == 0) fail(ptr, "needs min < max and step >= 1");
      if (const Json* aw = optional_member(p, "available_when"))
        out.available_when = condition(*aw, ptr + "/available_when", -1, 1);
      model_.parameters.push_back(std::move(out));
    }
  }

  void read_deformations() {
    const Json* list = optional_member(m_, "mesh_deformations");
    if (!list) return;
    if (!list->is_array()) fail("/mesh_deformations", "expected an array");
    for (std::size_t i = 0; i < list->size(); ++i) {
      std::string ptr = json_pointer_join("/mesh_deformations", i);
      const Json& d = (*list)[i];
      Deformation out;
      out.mesh = u32_field(d, "mesh", ptr);
      if (out.mesh >= model_.meshes.size()) fail(ptr + "/mesh", "no such mesh");
      int p = model_.find_parameter(string_field(d, "parameter", ptr));
      if (p < 0) fail(ptr + "/parameter", "unknown parameter");
      out.parameter = static_cast<std::uint32_t>(p);
      const Json& frames = array_field(d, "frames", ptr);
      for (std::size_t f = 0; f < frames.size(); ++f) {
        std::string fptr = json_pointer_join(ptr + "/frames", f);
        DeformationFrame fr;
        fr.value = u32_field(frames[f], "value", fptr);
        if (const Json* n = optional_member(frames[f], "neutral"); n && n->is_boolean())
          fr.neutral = n->get<bool>();
        if (!fr.neutral) {
          fr.payload = payload_id(frames[f], "payload", fptr);
          fr.count = u32_field(frames[f], "count", fptr);
        }
        if (!out.frames.empty() && fr.value <= out.frames.back().value)
          fail(fptr + "/value", "frame values must increase strictly");
        out.frames.push_back(fr);
      }
      if (out.frames.empty()) fail(ptr + "/frames", "a channel needs frames");
      model_.deformations.push_back(std::move(out));
    }
  }

  const Json& m_;
  const Package& pkg_;
  Model model_;
};

}  // namespace

core::Result<Model> build_model(const Json& manifest, const Package& package, int minor) {
  try {
    return Builder(manifest, package, minor).build();
  } catch (const ModelError& e) {
    return core::error_at_pointer(codes::BEM_MODEL, e.message, e.pointer);
  } catch (const std::exception& e) {  // allocation failure or a JSON library error
    return core::make_error(codes::BEM_MODEL, e.what());
  }
}

}  // namespace charkit::bem
