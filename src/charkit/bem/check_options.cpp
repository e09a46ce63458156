// §6 option groups, component rules (with keep material overrides) and
// selection constraints; §9 texture slots. The 1.0 appearances are in
// check_appearances.cpp, the condition syntax in check_condition.cpp.
#include <set>

#include "charkit/bem/detail/condition_eval.h"
#include "charkit/bem/detail/options_internal.h"
#include "charkit/bem/error_codes.h"
#include "charkit/core/json.h"

namespace charkit::bem {

using core::json_pointer_join;

std::optional<std::size_t> manifest_array_size(const Json& manifest, const char* key) {
  auto it = manifest.find(key);
  if (it == manifest.end() || !it->is_array()) return std::nullopt;
  return it->size();
}

std::optional<std::uint32_t> check_operation(Context& ctx, const Json& entry,
                                             const std::string& ptr,
                                             std::optional<std::size_t> mesh_count,
                                             const char* section) {
  auto op = ctx.get_string(entry, "operation", ptr, true, 64, section);
  if (!op) return std::nullopt;
  if (*op == "replace") {
    auto mesh = ctx.get_u32(entry, "mesh", ptr, true, 0, 0xFFFFFFFFu, section);
    if (mesh && mesh_count && *mesh >= *mesh_count) {
      ctx.error(codes::BEM_MESH_INDEX, section, ptr + "/mesh",
                "mesh " + std::to_string(*mesh) + " does not exist (the package has " +
                    std::to_string(*mesh_count) + " meshes)");
      return std::nullopt;
    }
    return mesh;
  }
  if (*op != "keep" && *op != "hide") {
    ctx.error(codes::BEM_OPERATION, section, ptr + "/operation",
              "operation is \"" + op->substr(0, 64) + "\"; allowed are keep, hide and replace");
    return std::nullopt;
  }
  // Q9: "mesh" is a known field whose only meaning is a replacement; on
  // keep/hide it would silently do nothing, so it is rejected.
  if (entry.contains("mesh"))
    ctx.error(codes::BEM_OPERATION_MESH, section, ptr + "/mesh",
              "\"mesh\" is only allowed with operation replace, not " + *op);
  return std::nullopt;
}

namespace {

constexpr std::size_t kMaxGroups = 64;
constexpr std::size_t kMaxChoices = 64;     // §11: 1.2+
constexpr std::size_t kMaxChoicesV11 = 16;  // §11: 1.1
constexpr std::size_t kUnbounded = static_cast<std::size_t>(-1);

struct GroupInfo {
  const Json* json = nullptr;
  std::string ptr;
  std::optional<std::string> def;
  bool ok = false;  ///< id, default and choices are well-formed
};

// Pass 1: ids, names, choices, defaults. Fills ctx.groups (in order; a broken
// group keeps its place with an empty id so available_when limits stay right).
std::vector<GroupInfo> collect_groups(Context& ctx) {
  std::vector<GroupInfo> out;
  const Json* groups = ctx.get_array(ctx.manifest, "option_groups", "", false, 0, kUnbounded, "§6");
  if (!groups) return out;
  if (groups->size() > kMaxGroups) {
    ctx.error(
        codes::BEM_ARRAY_SIZE, "§11", "/option_groups",
        "there are " + std::to_string(groups->size()) + " option groups; at most 64 are allowed");
    return out;
  }
  // §6: 1.1/1.2 need at least one group; an empty list is a 1.3 slider-only package.
  if (groups->empty()) ctx.need_minor(3, "an empty option_groups list", "/option_groups", "§6");
  std::set<std::string> ids;
  for (std::size_t i = 0; i < groups->size(); ++i) {
    const Json& g = (*groups)[i];
    GroupInfo info;
    info.json = &g;
    info.ptr = json_pointer_join("/option_groups", i);
    std::pair<std::string, std::vector<std::string>> entry;
    if (!ctx.expect_object(g, info.ptr, "§6")) {
      ctx.groups.push_back(std::move(entry));
      out.push_back(std::move(info));
      continue;
    }
    auto id = ctx.get_stable_id(g, "id", info.ptr, true, "§6");
    if (id && !ids.insert(*id).second) {
      ctx.error(codes::BEM_DUPLICATE_ID, "§6", info.ptr + "/id",
                "option group id \"" + *id + "\" is used twice");
      id.reset();
    }
    ctx.get_string(g, "name", info.ptr, true, 256, "§6");
    info.def = ctx.get_stable_id(g, "default", info.ptr, true, "§6");
    bool choices_ok = false;
    if (const Json* ch = ctx.get_array(g, "choices", info.ptr, true, 1, kUnbounded, "§6")) {
      std::string cptr = info.ptr + "/choices";
      if (ch->size() > kMaxChoices) {
        ctx.error(codes::BEM_ARRAY_SIZE, "§11", cptr,
                  "group has " + std::to_string(ch->size()) + " choices; at most 64 are allowed");
      } else {
        if (ch->size() > kMaxChoicesV11)
          ctx.need_minor(2, std::to_string(ch->size()) + " choices in one group (more than 16)",
                         cptr, "§11");
        choices_ok = true;
        std::set<std::string> cids;
        for (const auto& [c, eptr, k] : elements(*ch, cptr)) {
          if (!ctx.expect_object(c, eptr, "§6")) {
            choices_ok = false;
            continue;
          }
          auto cid = ctx.get_stable_id(c, "id", eptr, true, "§6");
          ctx.get_string(c, "name", eptr, true, 256, "§6");
          if (!cid) {
            choices_ok = false;
            continue;
          }
          if (!cids.insert(*cid).second) {
            ctx.error(codes::BEM_DUPLICATE_ID, "§6", eptr + "/id",
                      "choice id \"" + *cid + "\" is used twice in this group");
            continue;
          }
          entry.second.push_back(*cid);
        }
      }
    }
    if (info.def && choices_ok &&
        std::find(entry.second.begin(), entry.second.end(), *info.def) == entry.second.end()) {
      ctx.error(codes::BEM_GROUP_DEFAULT, "§6", info.ptr + "/default",
                "default \"" + *info.def + "\" is not one of the group's choices");
      info.def.reset();
    }
    info.ok = id.has_value() && info.def.has_value() && choices_ok;
    if (id) entry.first = *id;
    ctx.groups.push_back(std::move(entry));
    out.push_back(std::move(info));
  }
  return out;
}

/// Pass 2: available_when may only refer to earlier groups. Returns true when
/// every condition is well-formed.
bool check_available_when(Context& ctx, const std::vector<GroupInfo>& groups) {
  bool ok = true;
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const GroupInfo& g = groups[i];
    if (!g.json || !g.json->is_object()) continue;
    if (auto it = g.json->find("available_when"); it != g.json->end())
      ok = check_condition(ctx, *it, g.ptr + "/available_when", static_cast<int>(i), "§6") && ok;
  }
  return ok;
}

/// The texture's original_name: from the texture pass, or the manifest when
/// that pass could not record it.
std::optional<std::string> texture_original(const Context& ctx, std::uint32_t index) {
  if (index < ctx.textures.size() && ctx.textures[index].valid)
    return ctx.textures[index].original_name;
  const Json& m = ctx.manifest;
  auto it = m.find("textures");
  if (it == m.end() || !it->is_array() || index >= it->size()) return std::nullopt;
  const Json& t = (*it)[index];
  if (!t.is_object()) return std::nullopt;
  auto on = t.find("original_name");
  if (on == t.end() || !on->is_string()) return std::nullopt;
  return on->get<std::string>();
}

// §9 texture slots (capability texture-slots).
void check_texture_slots(Context& ctx) {
  const Json* slots = ctx.field(ctx.manifest, "texture_slots", "", false, "§9");
  if (!slots) return;
  const std::string sp = "/texture_slots";
  if (!slots->is_array()) {
    ctx.error(
        codes::BEM_FIELD_TYPE, "§9", sp,
        std::string("\"texture_slots\" must be an array, found ") + core::json_type_name(*slots));
    return;
  }
  if (slots->empty())
    ctx.need_minor(2, "\"texture_slots\"", sp, "§9");
  else
    ctx.use_capability("texture-slots", sp);
  std::optional<std::size_t> tex_count = manifest_array_size(ctx.manifest, "textures");
  for (const auto& [s, ptr, i] : elements(*slots, sp)) {
    if (!ctx.expect_object(s, ptr, "§9")) continue;
    auto id = ctx.get_stable_id(s, "id", ptr, true, "§9");
    if (id && ctx.texture_slot_ids.count(*id)) {
      ctx.error(codes::BEM_DUPLICATE_ID, "§9", ptr + "/id",
                "texture slot id \"" + *id + "\" is used twice");
      id.reset();
    }
    std::optional<std::string> original;
    std::size_t original_at = 0;
    if (const Json* cands = ctx.get_array(s, "candidates", ptr, true, 1, kUnbounded, "§9")) {
      ctx.total_candidates += cands->size();
      for (const auto& [c, cptr, k] : elements(*cands, ptr + "/candidates")) {
        if (!ctx.expect_object(c, cptr, "§9")) continue;
        // Q10: "when" is required (no implicit true).
        if (const Json* w = ctx.field(c, "when", cptr, true, "§9"))
          check_condition(ctx, *w, cptr + "/when", -1, "§9");
        const Json* tex = ctx.field(c, "texture", cptr, true, "§9");
        if (!tex || tex->is_null()) continue;  // null: keep the original texture
        auto index = core::json_uint32(*tex);
        if (!index) {
          ctx.error(codes::BEM_FIELD_TYPE, "§9", cptr + "/texture",
                    std::string("\"texture\" is a texture index or null, found ") +
                        core::json_type_name(*tex));
          continue;
        }
        if (tex_count && *index >= *tex_count) {
          ctx.error(codes::BEM_TEXTURE_INDEX, "§9", cptr + "/texture",
                    "texture " + std::to_string(*index) + " does not exist (the package has " +
                        std::to_string(*tex_count) + " textures)");
          continue;
        }
        auto name = texture_original(ctx, *index);
        if (!name) continue;
        if (!original) {
          original = name;
          original_at = k;
        } else if (*original != *name) {
          ctx.error(codes::BEM_TEXTURE_SLOT_ORIGINAL, "§9", cptr + "/texture",
                    "texture " + std::to_string(*index) + " replaces \"" + *name +
                        "\" but candidate " + std::to_string(original_at) +
                        " of this slot replaces \"" + *original +
                        "\"; all textures of a slot replace the same original texture");
        }
      }
    }
    if (id) {
      ctx.texture_slot_ids.insert(*id);
      ctx.texture_slot_original[*id] = original.value_or("");
    }
  }
}

// §6: keep material_overrides (capability keep-material-textures).
void check_keep_overrides(Context& ctx, const Json& list, const std::string& ptr,
                          const ComponentFacts* comp) {
  std::set<std::uint32_t> slots;
  for (const auto& [e, eptr, i] : elements(list, ptr)) {
    if (!ctx.expect_object(e, eptr, "§6")) continue;
    auto slot = ctx.get_u32(e, "material_slot", eptr, true, 0, 0xFFFFFFFFu, "§6");
    auto name = ctx.get_string(e, "material_name", eptr, true, 256, "§6");
    if (slot && comp && *slot >= comp->materials.size()) {
      ctx.error(codes::BEM_MATERIAL_SLOT, "§6", eptr + "/material_slot",
                "material_slot " + std::to_string(*slot) + " is outside the component's " +
                    std::to_string(comp->materials.size()) + " native materials");
      slot.reset();
    }
    if (slot && name && comp && !comp->materials[*slot].empty() && *name != comp->materials[*slot])
      ctx.error(codes::BEM_MATERIAL_NAME, "§6", eptr + "/material_name",
                "material_name \"" + name->substr(0, 120) + "\" does not match native slot " +
                    std::to_string(*slot) + " (\"" + comp->materials[*slot] + "\")");
    if (slot && !slots.insert(*slot).second)
      ctx.error(codes::BEM_MATERIAL_SLOT_DUPLICATE, "§6", eptr + "/material_slot",
                "material_slot " + std::to_string(*slot) + " is overridden twice in this list");
    if (const Json* tex = ctx.get_array(e, "textures", eptr, true, 1, kUnbounded, "§6"))
      check_texture_list(ctx, *tex, eptr + "/textures");
  }
}

void check_candidate(Context& ctx, const Json& c, const std::string& ptr, std::size_t component,
                     std::optional<std::size_t> mesh_count) {
  // Q10: "when" is required (no implicit true).
  if (const Json* w = ctx.field(c, "when", ptr, true, "§6"))
    check_condition(ctx, *w, ptr + "/when", -1, "§6");
  auto mesh = check_operation(ctx, c, ptr, mesh_count, "§6");
  if (mesh) ctx.replacements.emplace_back(static_cast<std::uint32_t>(component), *mesh);
  const Json* mo = ctx.field(c, "material_overrides", ptr, false, "§6");
  if (!mo) return;
  std::string mptr = ptr + "/material_overrides";
  auto op = c.find("operation");
  if (op == c.end() || !op->is_string() || op->get_ref<const std::string&>() != "keep") {
    ctx.error(codes::BEM_MATERIAL_OVERRIDES_OPERATION, "§6", mptr,
              "material_overrides is only allowed on keep candidates (not hide or replace)");
    return;
  }
  ctx.use_capability("keep-material-textures", mptr);
  const Json* list = ctx.get_array(c, "material_overrides", ptr, false, 1, 256, "§6");
  if (!list) return;
  const ComponentFacts* comp =
      component < ctx.components.size() ? &ctx.components[component] : nullptr;
  check_keep_overrides(ctx, *list, mptr, comp);
}

// §6 component_rules: one per component, in target order 0..N-1.
void check_component_rules(Context& ctx) {
  const Json* rules =
      ctx.get_array(ctx.manifest, "component_rules", "", false, 0, kUnbounded, "§6");
  if (!rules) return;
  const std::size_t n = ctx.components.size();
  if (n > 0 && rules->size() != n)
    ctx.error(codes::BEM_COMPONENT_RULES_COUNT, "§6", "/component_rules",
              "there are " + std::to_string(rules->size()) + " component rules for " +
                  std::to_string(n) + " target components; each component needs exactly one");
  std::optional<std::size_t> mesh_count = manifest_array_size(ctx.manifest, "meshes");
  for (const auto& [r, ptr, i] : elements(*rules, "/component_rules")) {
    if (!ctx.expect_object(r, ptr, "§6")) continue;
    if (auto t = ctx.get_u32(r, "target", ptr, true, 0, 0xFFFFFFFFu, "§6"); t && *t != i)
      ctx.error(codes::BEM_COMPONENT_RULE_TARGET, "§6", ptr + "/target",
                "rule " + std::to_string(i) + " targets component " + std::to_string(*t) +
                    "; rules cover the components in order 0..N-1");
    const Json* cands = ctx.get_array(r, "candidates", ptr, true, 1, kUnbounded, "§6");
    if (!cands) continue;
    ctx.total_candidates += cands->size();
    for (const auto& [c, cptr, k] : elements(*cands, ptr + "/candidates")) {
      if (ctx.expect_object(c, cptr, "§6")) check_candidate(ctx, c, cptr, i, mesh_count);
    }
  }
}

/// §6: the default selection must satisfy every selection constraint.
void check_default_selection(Context& ctx, const std::vector<GroupInfo>& groups,
                             const Json& constraints) {
  Selection sel;
  for (const auto& g : groups) {
    bool available = true;
    if (auto it = g.json->find("available_when"); it != g.json->end())
      available = eval_condition(*it, sel, ctx);
    sel.push_back(available ? g.def : std::nullopt);
  }
  for (std::size_t i = 0; i < constraints.size(); ++i)
    if (!eval_condition(constraints[i], sel, ctx))
      ctx.error(codes::BEM_DEFAULT_SELECTION_INVALID, "§6",
                json_pointer_join("/selection_constraints", i),
                "the default selection (every group at its default) violates this selection "
                "constraint; the default combination must be legal");
}

}  // namespace

void check_options(Context& ctx) {
  if (ctx.structure_v10) {
    check_appearances(ctx);
    return;
  }
  std::vector<GroupInfo> groups = collect_groups(ctx);
  bool conditions_ok = check_available_when(ctx, groups);
  // Slots first: keep overrides may reference them.
  check_texture_slots(ctx);
  check_component_rules(ctx);
  const Json* sc =
      ctx.get_array(ctx.manifest, "selection_constraints", "", false, 0, kUnbounded, "§6");
  if (!sc) return;
  for (std::size_t i = 0; i < sc->size(); ++i)
    conditions_ok =
        check_condition(ctx, (*sc)[i], json_pointer_join("/selection_constraints", i), -1, "§6") &&
        conditions_ok;
  bool groups_ok = true;
  for (const auto& g : groups) groups_ok = groups_ok && g.ok;
  if (conditions_ok && groups_ok) check_default_selection(ctx, groups, *sc);
}

}  // namespace charkit::bem
