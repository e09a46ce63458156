// §4 target: the legacy form (character_id / world_resource / ui_resource)
// and the 1.4 explicit resource form (reference note "1.4: explicit resource
// targets"); the component table both forms share; §9 bone-name aliases.
#include <algorithm>
#include <initializer_list>
#include <map>
#include <set>
#include <string_view>
#include <vector>

#include "charkit/bem/detail/context.h"
#include "charkit/bem/error_codes.h"
#include "charkit/core/json.h"

namespace charkit::bem {

namespace {

constexpr std::size_t kMaxName = 256;   // §3: names and identity strings
constexpr std::size_t kMaxPath = 1024;  // 1.4: asset_path, renderer_path
constexpr std::size_t kMaxComponents = 64;
constexpr std::size_t kMaxResources = 32;

using core::json_pointer_join;

// A purely syntactic 1.4 naming rule: an error, or a warning when the user
// disabled model validation (docs/bem/manifest.md lists which ones).
void naming_issue(Context& ctx, core::ErrorCode code, const char* section, const std::string& ptr,
                  const std::string& message) {
  if (ctx.skip_validation())
    ctx.warning(code, section, ptr, message + " (accepted: model validation is disabled)");
  else
    ctx.error(code, section, ptr, message);
}

/// A required non-empty string of at most max bytes.
std::optional<std::string> get_nonempty(Context& ctx, const Json& obj, const char* key,
                                        const std::string& ptr, std::size_t max,
                                        const char* section) {
  auto s = ctx.get_string(obj, key, ptr, true, max, section);
  if (s && s->empty()) {
    ctx.error(codes::BEM_STRING_LENGTH, section, json_pointer_join(ptr, key),
              std::string("\"") + key + "\" must not be empty");
    return std::nullopt;
  }
  return s;
}

/// An array of 1..256-byte strings (bone_names, materials). Broken entries
/// become "" so indices stay aligned. nullopt when the array itself is broken.
std::optional<std::vector<std::string>> get_name_list(Context& ctx, const Json& obj,
                                                      const char* key, const std::string& ptr,
                                                      std::size_t max_entries) {
  const Json* arr = ctx.get_array(obj, key, ptr, true, 0, max_entries, "§4");
  if (!arr) return std::nullopt;
  std::vector<std::string> out;
  out.reserve(arr->size());
  std::string aptr = json_pointer_join(ptr, key);
  for (const auto& [e, eptr, i] : elements(*arr, aptr)) {
    if (!ctx.expect_string(e, eptr, "§4", std::string("entries of \"") + key + "\" are strings")) {
      out.emplace_back();
      continue;
    }
    const auto& s = e.get_ref<const std::string&>();
    if (s.empty() || s.size() > kMaxName) {
      ctx.error(codes::BEM_STRING_LENGTH, "§3", eptr,
                std::string("entries of \"") + key + "\" must be 1..256 bytes, found " +
                    std::to_string(s.size()));
      out.emplace_back();
      continue;
    }
    out.push_back(s);
  }
  return out;
}

/// Fields both target forms share (§4): id == position (Q8), mesh_name,
/// original_index_count, bone_names, materials.
ComponentFacts check_component_common(Context& ctx, const Json& c, const std::string& ptr,
                                      std::size_t index) {
  ComponentFacts facts;
  if (auto id = ctx.get_u32(c, "id", ptr, true, 0, 0xFFFFFFFFu, "§4"); id && *id != index)
    ctx.error(codes::BEM_COMPONENT_ID, "§4", json_pointer_join(ptr, "id"),
              "component ids are numbered 0..N-1 in array order: this entry is at position " +
                  std::to_string(index) + " but has id " + std::to_string(*id));
  if (auto name = get_nonempty(ctx, c, "mesh_name", ptr, kMaxName, "§4")) facts.mesh_name = *name;
  if (auto n = ctx.get_u32(c, "original_index_count", ptr, true, 1, 0xFFFFFFFFu, "§4");
      n && *n % 3 != 0)
    ctx.error(codes::BEM_INDEX_COUNT_MULTIPLE, "§4", json_pointer_join(ptr, "original_index_count"),
              "\"original_index_count\" is " + std::to_string(*n) +
                  "; it must be a positive multiple of 3 (the sum of the original sub-mesh "
                  "index counts)");
  if (auto bones = get_name_list(ctx, c, "bone_names", ptr, 65536))
    facts.bone_names = std::move(*bones);
  if (auto mats = get_name_list(ctx, c, "materials", ptr, 256)) facts.materials = std::move(*mats);
  return facts;
}

/// §9: bone_name_aliases of one legacy component (1.2+, resource-bone-aliases).
void check_bone_aliases(Context& ctx, const Json& c, const std::string& ptr,
                        const ComponentFacts& facts) {
  const Json* a = ctx.field(c, "bone_name_aliases", ptr, false, "§9");
  if (!a) return;
  std::string aptr = json_pointer_join(ptr, "bone_name_aliases");
  if (!a->is_array()) {
    ctx.error(
        codes::BEM_FIELD_TYPE, "§9", aptr,
        std::string("\"bone_name_aliases\" must be an array, found ") + core::json_type_name(*a));
    return;
  }
  if (a->empty())
    ctx.need_minor(2, "\"bone_name_aliases\"", aptr, "§9");
  else
    ctx.use_capability("resource-bone-aliases", aptr);
  bool bones_known = c.contains("bone_names") && c["bone_names"].is_array();
  std::set<std::pair<std::uint32_t, std::string>> seen;
  for (const auto& [e, eptr, i] : elements(*a, aptr)) {
    if (!ctx.expect_object(e, eptr, "§9")) continue;
    auto index = ctx.get_u32(e, "index", eptr, true, 0, 0xFFFFFFFFu, "§9");
    auto resource = ctx.get_string(e, "resource", eptr, true, kMaxName, "§9");
    auto name = get_nonempty(ctx, e, "name", eptr, kMaxName, "§9");
    if (index && bones_known && *index >= facts.bone_names.size()) {
      ctx.error(codes::BEM_BONE_ALIAS_INDEX, "§9", json_pointer_join(eptr, "index"),
                "alias index " + std::to_string(*index) + " is outside bone_names (" +
                    std::to_string(facts.bone_names.size()) + " entries)");
      index.reset();
    }
    if (resource && *resource != "world" && *resource != "ui") {
      ctx.error(codes::BEM_BONE_ALIAS_RESOURCE, "§9", json_pointer_join(eptr, "resource"),
                "alias resource is \"" + resource->substr(0, 64) +
                    "\"; allowed are \"world\" and \"ui\"");
      resource.reset();
    }
    if (index && name && bones_known && *name == facts.bone_names[*index])
      ctx.error(codes::BEM_BONE_ALIAS_SAME_NAME, "§9", json_pointer_join(eptr, "name"),
                "alias \"" + *name + "\" equals the standard bone name at index " +
                    std::to_string(*index) + "; an alias must differ from it");
    if (index && resource && !seen.emplace(*index, *resource).second)
      ctx.error(codes::BEM_BONE_ALIAS_DUPLICATE, "§9", eptr,
                "bone " + std::to_string(*index) + " already has an alias for resource \"" +
                    *resource + "\"; each (index, resource) may appear once");
  }
}

// ---------------------------------------------------------------- legacy
// The fields of the other target form present in `obj`: BEM_TARGET_MIXED
// for each, "\"KEY\" " + why.
void reject_fields(Context& ctx, const Json& obj, const std::string& ptr,
                   std::initializer_list<const char*> keys, const char* why) {
  for (const char* key : keys)
    if (obj.contains(key))
      ctx.error(codes::BEM_TARGET_MIXED, "§4", json_pointer_join(ptr, key),
                std::string("\"") + key + "\" " + why);
}

// Every entry of target.components in order: the checks both target forms
// share (check_component_common), then form(c, cptr, i, facts) for the
// form's own, and the facts recorded. An entry that is not an object records
// empty facts, so ctx.components stays indexed like the array. false: no
// usable "components" array (already reported).
template <typename Form>
bool for_each_component(Context& ctx, const Json& t, const std::string& tp, Form&& form) {
  const Json* comps = ctx.get_array(t, "components", tp, true, 1, kMaxComponents, "§4");
  if (!comps) return false;
  for (const auto& [c, cptr, i] : elements(*comps, tp + "/components")) {
    if (!ctx.expect_object(c, cptr, "§4")) {
      ctx.components.emplace_back();
      continue;
    }
    ComponentFacts facts = check_component_common(ctx, c, cptr, i);
    form(c, cptr, i, facts);
    ctx.components.push_back(std::move(facts));
  }
  return true;
}

void check_legacy_target(Context& ctx, const Json& t) {
  const std::string tp = "/target";
  for (const char* key : {"kind", "id"})
    if (t.contains(key))
      ctx.error(codes::BEM_TARGET_MIXED, "§4", json_pointer_join(tp, key),
                std::string("\"") + key +
                    "\" belongs to the 1.4 explicit target form (with \"resources\"); the "
                    "character_id form must not mix in its fields");
  // Q7: the character ID is an identity; it follows the stable-ID rule (as
  // the 1.4 target "id" does).
  ctx.get_stable_id(t, "character_id", tp, true, "§4");
  get_nonempty(ctx, t, "profile_id", tp, kMaxName, "§4");
  get_nonempty(ctx, t, "revision", tp, kMaxName, "§4");
  ctx.get_string(t, "snapshot", tp, true, kMaxName, "§4");  // §4: may be empty
  auto world = get_nonempty(ctx, t, "world_resource", tp, kMaxName, "§4");
  auto ui = get_nonempty(ctx, t, "ui_resource", tp, kMaxName, "§4");
  if (world && ui && *world == *ui)
    ctx.error(codes::BEM_TARGET_RESOURCES_EQUAL, "§4", tp + "/ui_resource",
              "world_resource and ui_resource are both \"" + *world +
                  "\"; the scene model root and the detail model root must differ");

  std::map<std::string, std::size_t> mesh_names;
  for_each_component(
      ctx, t, tp,
      [&](const Json& c, const std::string& cptr, std::size_t i, ComponentFacts& facts) {
        reject_fields(ctx, c, cptr, {"resource", "renderer_kind", "renderer_path"},
                      "belongs to the 1.4 explicit target form; this target has no "
                      "\"resources\"");
        if (!facts.mesh_name.empty()) {
          auto [it, fresh] = mesh_names.emplace(facts.mesh_name, i);
          if (!fresh)
            ctx.error(codes::BEM_DUPLICATE_MESH_NAME, "§4", cptr + "/mesh_name",
                      "mesh_name \"" + facts.mesh_name + "\" is already used by component " +
                          std::to_string(it->second));
        }
        check_bone_aliases(ctx, c, cptr, facts);
      });
}

// -------------------------------------------------------------- explicit
bool has_upper(std::string_view s) {
  for (char ch : s)
    if (ch >= 'A' && ch <= 'Z') return true;
  return false;
}

std::vector<std::string_view> split_path(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (true) {
    std::size_t slash = s.find('/', start);
    if (slash == std::string_view::npos) {
      out.push_back(s.substr(start));
      return out;
    }
    out.push_back(s.substr(start, slash - start));
    start = slash + 1;
  }
}

/// Segments non-empty, not "." or "..", no backslash or colon. Empty string = ok.
std::string path_problem(std::string_view s) {
  if (s.find('\\') != std::string_view::npos) return "contains a backslash";
  if (s.find(':') != std::string_view::npos) return "contains a colon";
  for (auto seg : split_path(s)) {
    if (seg.empty()) return "has an empty segment (leading, trailing or double '/')";
    if (seg == "." || seg == "..") return "has a '.' or '..' segment";
  }
  return {};
}

struct ResourceFacts {
  std::optional<std::uint32_t> lod;
  std::size_t components = 0;
  std::string ptr;
};

void check_resources(Context& ctx, const Json& t, std::map<std::string, ResourceFacts>& out) {
  const std::string tp = "/target";
  const Json* res = ctx.get_array(t, "resources", tp, true, 1, kMaxResources, "§4");
  if (!res) return;
  // platform -> name / asset_path -> first resource index
  std::map<std::string, std::map<std::string, std::size_t>> names, paths;
  for (const auto& [r, rptr, i] : elements(*res, tp + "/resources")) {
    if (!ctx.expect_object(r, rptr, "§4")) continue;
    for (auto it = r.begin(); it != r.end(); ++it) {
      const std::string& k = it.key();
      if (k != "id" && k != "name" && k != "asset_path" && k != "platforms" && k != "lod")
        ctx.error(codes::BEM_RESOURCE_FIELD, "§4", json_pointer_join(rptr, k),
                  "unexpected field \"" + k.substr(0, 64) +
                      "\": a resource has exactly id, name, asset_path, platforms and lod");
    }
    auto id = ctx.get_stable_id(r, "id", rptr, true, "§4");
    auto name = get_nonempty(ctx, r, "name", rptr, kMaxName, "§4");
    auto asset = get_nonempty(ctx, r, "asset_path", rptr, kMaxPath, "§4");
    auto lod = ctx.get_u32(r, "lod", rptr, true, 0, 3, "§4");
    if (name && (!is_stable_id(*name) || has_upper(*name)))
      naming_issue(ctx, codes::BEM_RESOURCE_NAME, "§4", rptr + "/name",
                   "resource name \"" + name->substr(0, 120) +
                       "\" must be the lower-case resource root name (letters, digits, _ . -)");
    if (asset) {
      std::string problem = path_problem(*asset);
      if (problem.empty() && has_upper(*asset)) problem = "is not lower-case";
      if (problem.empty() && asset->rfind("assets/", 0) != 0)
        problem = "does not start with assets/";
      if (problem.empty() && name) {
        std::string want = "/" + *name + ".prefab";
        if (asset->size() < want.size() ||
            asset->compare(asset->size() - want.size(), want.size(), want) != 0)
          problem = "does not end in /" + *name + ".prefab (the file stem must equal name)";
      }
      if (!problem.empty())
        naming_issue(ctx, codes::BEM_RESOURCE_ASSET_PATH, "§4", rptr + "/asset_path",
                     "asset_path \"" + asset->substr(0, 200) + "\" " + problem);
    }
    std::vector<std::string> plats;
    if (const Json* p = ctx.get_array(r, "platforms", rptr, true, 1, 2, "§4")) {
      for (const auto& [e, pptr, k] : elements(*p, rptr + "/platforms")) {
        if (!e.is_string() || (e.get_ref<const std::string&>() != "windows-x64" &&
                               e.get_ref<const std::string&>() != "android-arm64")) {
          ctx.error(codes::BEM_RESOURCE_PLATFORM, "§4", pptr,
                    "platforms are \"windows-x64\" and \"android-arm64\"");
          continue;
        }
        const auto& s = e.get_ref<const std::string&>();
        if (std::find(plats.begin(), plats.end(), s) != plats.end()) {
          ctx.error(codes::BEM_RESOURCE_PLATFORM, "§4", pptr,
                    "platform \"" + s + "\" is listed twice");
          continue;
        }
        plats.push_back(s);
      }
    }
    // Stays on with skip_validation: duplicate resource root for a platform.
    for (const auto& plat : plats) {
      if (name) {
        auto [it, fresh] = names[plat].emplace(*name, i);
        if (!fresh)
          ctx.error(codes::BEM_RESOURCE_DUPLICATE_ROOT, "§4", rptr + "/name",
                    "resource name \"" + *name + "\" is already used for platform " + plat +
                        " by resource " + std::to_string(it->second));
      }
      if (asset) {
        auto [it, fresh] = paths[plat].emplace(*asset, i);
        if (!fresh)
          ctx.error(codes::BEM_RESOURCE_DUPLICATE_ROOT, "§4", rptr + "/asset_path",
                    "asset_path \"" + asset->substr(0, 200) + "\" is already used for platform " +
                        plat + " by resource " + std::to_string(it->second));
      }
    }
    if (id) {
      if (out.count(*id))
        ctx.error(codes::BEM_DUPLICATE_ID, "§4", rptr + "/id",
                  "resource id \"" + *id + "\" is used twice");
      else
        out[*id] = ResourceFacts{lod, 0, rptr};
    }
  }
}

/// Which LOD a renderer path sits under ("…Mesh_all/lodN…"), or -1.
int path_lod(std::string_view path) {
  auto segs = split_path(path);
  for (std::size_t i = 0; i + 1 < segs.size(); ++i)
    if (segs[i] == "Mesh_all" && segs[i + 1].size() == 4 && segs[i + 1].substr(0, 3) == "lod" &&
        segs[i + 1][3] >= '0' && segs[i + 1][3] <= '3')
      return segs[i + 1][3] - '0';
  return -1;
}

void check_explicit_target(Context& ctx, const Json& t) {
  const std::string tp = "/target";
  ctx.explicit_targets = true;
  ctx.use_capability("multi-resource-targets", tp + "/resources");
  reject_fields(ctx, t, tp, {"character_id", "world_resource", "ui_resource"},
                "belongs to the legacy target form; a target with \"resources\" uses kind, id "
                "and per-resource fields instead");
  if (auto kind = ctx.get_string(t, "kind", tp, true, kMaxName, "§4");
      kind && *kind != "character" && *kind != "weapon")
    ctx.error(codes::BEM_TARGET_KIND, "§4", tp + "/kind",
              "target kind is \"" + kind->substr(0, 64) + "\"; allowed are character and weapon");
  ctx.get_stable_id(t, "id", tp, true, "§4");
  for (const char* key : {"profile_id", "revision"}) {
    if (auto s = get_nonempty(ctx, t, key, tp, kMaxName, "§4"); s && !is_stable_id(*s))
      naming_issue(ctx, codes::BEM_STABLE_ID, "§4", json_pointer_join(tp, key),
                   std::string("\"") + key + "\" must follow the stable-ID rule in 1.4, found \"" +
                       s->substr(0, 120) + "\"");
  }
  get_nonempty(ctx, t, "snapshot", tp, kMaxName, "§4");  // 1.4: 1..256 bytes

  std::map<std::string, ResourceFacts> resources;
  check_resources(ctx, t, resources);

  // resource id -> mesh_name / renderer_path -> first component
  std::map<std::string, std::map<std::string, std::size_t>> mesh_names, renderer_paths;
  const bool any = for_each_component(
      ctx, t, tp,
      [&](const Json& c, const std::string& cptr, std::size_t i, ComponentFacts& facts) {
        if (c.contains("bone_name_aliases"))
          ctx.error(codes::BEM_BONE_ALIASES_EXPLICIT, "§4", cptr + "/bone_name_aliases",
                    "\"bone_name_aliases\" is not allowed with 1.4 explicit resource targets (not "
                    "even empty)");
        ResourceFacts* res = nullptr;
        if (auto r = ctx.get_string(c, "resource", cptr, true, kMaxName, "§4")) {
          auto it = resources.find(*r);
          if (it == resources.end())
            ctx.error(codes::BEM_COMPONENT_RESOURCE, "§4", cptr + "/resource",
                      "component resource \"" + r->substr(0, 120) +
                          "\" is not the id of any target resource");
          else {
            res = &it->second;
            ++res->components;
            facts.resource = *r;
          }
        }
        if (auto kind = ctx.get_string(c, "renderer_kind", cptr, true, kMaxName, "§4")) {
          if (*kind != "skinned" && *kind != "static") {
            ctx.error(
                codes::BEM_RENDERER_KIND, "§4", cptr + "/renderer_kind",
                "renderer_kind is \"" + kind->substr(0, 64) + "\"; allowed are skinned and static");
          } else {
            facts.renderer_kind = *kind;
            if (*kind == "static") {
              ctx.use_capability("static-meshes", cptr + "/renderer_kind");
              if (c.contains("bone_names") && c["bone_names"].is_array() &&
                  !c["bone_names"].empty())
                ctx.error(codes::BEM_STATIC_BONES, "§4", cptr + "/bone_names",
                          "a static component has no bones: bone_names must be empty");
            }
          }
        }
        if (auto path = ctx.get_string(c, "renderer_path", cptr, true, kMaxPath, "§4")) {
          if (!path->empty()) {
            std::string problem = path_problem(*path);
            if (!problem.empty())
              naming_issue(ctx, codes::BEM_RENDERER_PATH, "§4", cptr + "/renderer_path",
                           "renderer_path \"" + path->substr(0, 200) + "\" " + problem);
          }
          int lod = path_lod(*path);
          // Stays on with skip_validation: resource/LOD mismatch of a receiver path.
          if (lod >= 0 && res && res->lod && static_cast<std::uint32_t>(lod) != *res->lod)
            ctx.error(codes::BEM_RENDERER_LOD, "§4", cptr + "/renderer_path",
                      "renderer_path is under Mesh_all/lod" + std::to_string(lod) +
                          " but resource \"" + facts.resource + "\" uses lod " +
                          std::to_string(*res->lod));
          if (res) {
            auto [it, fresh] = renderer_paths[facts.resource].emplace(*path, i);
            if (!fresh)
              ctx.error(codes::BEM_DUPLICATE_RENDERER_PATH, "§4", cptr + "/renderer_path",
                        "renderer_path \"" + path->substr(0, 200) +
                            "\" is already used by component " + std::to_string(it->second) +
                            " of the same resource");
          }
        }
        if (res && !facts.mesh_name.empty()) {
          auto [it, fresh] = mesh_names[facts.resource].emplace(facts.mesh_name, i);
          if (!fresh)
            ctx.error(codes::BEM_DUPLICATE_MESH_NAME, "§4", cptr + "/mesh_name",
                      "mesh_name \"" + facts.mesh_name + "\" is already used by component " +
                          std::to_string(it->second) + " of the same resource");
        }
      });
  if (!any) return;
  for (const auto& [id, r] : resources)
    if (r.components == 0)
      ctx.error(codes::BEM_RESOURCE_UNUSED, "§4", r.ptr,
                "resource \"" + id + "\" has no components; every resource needs at least one");
}

}  // namespace

void check_target(Context& ctx) {
  const Json* t = ctx.field(ctx.manifest, "target", "", false, "§4");  // missing: check_top_level
  if (!t || !ctx.expect_object(*t, "/target", "§4")) return;
  // §4 / §1: the target form is chosen by the presence of "resources".
  if (t->contains("resources"))
    check_explicit_target(ctx, *t);
  else
    check_legacy_target(ctx, *t);
  // platform is the format constant in both forms.
  if (auto p = ctx.get_string(*t, "platform", "/target", true, kMaxName, "§4");
      p && *p != "windows-x64")
    ctx.error(codes::BEM_TARGET_PLATFORM, "§4", "/target/platform",
              "target platform is \"" + p->substr(0, 64) +
                  "\"; it is the format constant \"windows-x64\" (Android reads the same "
                  "package)");
}

}  // namespace charkit::bem
