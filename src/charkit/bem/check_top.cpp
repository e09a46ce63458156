// §1 capabilities and §3 top-level fields (check_top_level); the checks that
// need every pass's facts (check_final): capabilities used but not declared,
// the multi-resource-targets ⇔ resources rule and the §11 candidate totals.
#include <array>
#include <string_view>

#include "charkit/bem/detail/context.h"
#include "charkit/bem/error_codes.h"
#include "charkit/core/json.h"

namespace charkit::bem {

namespace {

// §1: every version requires these three.
constexpr std::array<const char*, 3> kAlwaysRequired = {"native-materials", "palette-u8",
                                                        "indices-u32"};

// §3 top-level fields and the first version that knows each one. Fields of the
// 1.0 structure are listed with 0 and handled by the structure check.
struct TopField {
  const char* name;
  int min_minor;
};
constexpr TopField kTopFields[] = {
    {"schema", 0},
    {"package_id", 0},
    {"name", 0},
    {"author", 0},
    {"version", 0},
    {"required_capabilities", 0},
    {"target", 0},
    {"meshes", 0},
    {"textures", 0},
    {"default_appearance_id", 0},
    {"appearances", 0},
    {"option_groups", 1},
    {"component_rules", 1},
    {"selection_constraints", 1},
    {"texture_slots", 2},
    {"parameters", 3},
    {"mesh_deformations", 3},
    {"root_offset", 5},
    {"drivers", 5},
    {"format_version", 0},
};

// Fields that only exist in the 1.1+ composable structure (§3, §6, §9, §10, §12, §13).
constexpr std::array<const char*, 7> kComposableOnly = {
    "component_rules",   "selection_constraints", "texture_slots", "parameters",
    "mesh_deformations", "root_offset",           "drivers"};

bool known_top_field(std::string_view key) {
  for (const auto& f : kTopFields)
    if (key == f.name) return true;
  return false;
}

void check_identity(Context& ctx) {
  const Json& m = ctx.manifest;
  // §3: schema is fixed 1.
  if (auto schema = ctx.get_u32(m, "schema", "", true, 0, 0xFFFFFFFFu, "§3")) {
    if (*schema != 1)
      ctx.error(codes::BEM_SCHEMA, "§3", "/schema",
                "\"schema\" is " + std::to_string(*schema) + "; BEM 1.x packages use schema 1");
  }
  // Q7: package_id is an identity kept across updates and used as a settings
  // key, so it follows the stable-ID rule; name/author/version are names.
  ctx.get_stable_id(m, "package_id", "", true, "§3");
  if (auto name = ctx.get_string(m, "name", "", true, 256, "§3"); name && name->empty())
    ctx.error(codes::BEM_STRING_LENGTH, "§3", "/name", "\"name\" must not be empty");
  ctx.get_string(m, "author", "", true, 256, "§3");
  ctx.get_string(m, "version", "", true, 256, "§3");
}

void check_capabilities(Context& ctx) {
  const Json* caps = ctx.get_array(ctx.manifest, "required_capabilities", "", true, 0,
                                   static_cast<std::size_t>(-1), "§1");
  if (!caps) return;
  const std::string base = "/required_capabilities";
  for (const auto& [c, ptr, i] : elements(*caps, base)) {
    const std::string* text = ctx.expect_string(c, ptr, "§1", "capabilities are strings");
    if (!text) continue;
    const std::string& name = *text;
    int m = capability_min_minor(name);
    if (m < 0) {
      ctx.error(codes::BEM_CAPABILITY_UNKNOWN, "§1", ptr,
                "unknown capability \"" + name.substr(0, 120) +
                    "\"; readers reject packages that require capabilities they do not know");
      continue;
    }
    if (!ctx.declared_capabilities.insert(name).second) {
      ctx.error(codes::BEM_CAPABILITY_DUPLICATE, "§1", ptr,
                "capability \"" + name + "\" is listed more than once");
      continue;
    }
    // Q3: a reader of an older header rejects a newer capability even if the
    // package does not use it.
    if (m > 0) ctx.need_minor(m, "capability \"" + name + "\"", ptr, "§1");
  }
  for (const char* req : kAlwaysRequired)
    if (!ctx.declared_capabilities.count(req))
      ctx.error(codes::BEM_CAPABILITY_REQUIRED, "§1", base,
                std::string("every BEM package must declare capability \"") + req + "\"");
}

void check_structure(Context& ctx) {
  const Json& m = ctx.manifest;
  if (ctx.structure_v10 ||
      (ctx.minor_known() && ctx.minor() == 0 && !m.contains("option_groups"))) {
    // §5: the 1.0 fixed-appearance structure.
    ctx.structure_v10 = true;
    ctx.field(m, "default_appearance_id", "", true, "§5");
    ctx.field(m, "appearances", "", true, "§5");
    ctx.allow_max_minor(0, "the fixed-appearance structure (appearances)",
                        m.contains("appearances") ? "/appearances" : "/default_appearance_id",
                        "§6");
    ctx.use_capability("fixed-appearances",
                       m.contains("appearances") ? "/appearances" : "/default_appearance_id");
    for (const char* key : kComposableOnly)
      if (m.contains(key))
        ctx.error(codes::BEM_STRUCTURE_MIXED, "§3", core::json_pointer_join("", key),
                  std::string("\"") + key +
                      "\" belongs to the 1.1+ option structure; a 1.0 package with "
                      "appearances must not have it");
    return;
  }
  // §6: the 1.1+ composable-option structure.
  ctx.need_minor(1, "option groups and component rules", "/option_groups", "§6");
  ctx.field(m, "option_groups", "", true, "§6");
  ctx.field(m, "component_rules", "", true, "§6");
  // Q3: composable-options is required by every 1.1+ structure, slider-only
  // 1.3 packages included (component_rules are composable-option data).
  ctx.use_capability("composable-options", "/option_groups");
  for (const char* key : {"appearances", "default_appearance_id"})
    if (m.contains(key))
      ctx.error(codes::BEM_STRUCTURE_MIXED, "§6", core::json_pointer_join("", key),
                std::string("\"") + key +
                    "\" belongs to the 1.0 fixed-appearance structure; 1.1+ packages use "
                    "option_groups and component_rules instead");
}

}  // namespace

void check_top_level(Context& ctx) {
  const Json& m = ctx.manifest;
  check_identity(ctx);
  check_capabilities(ctx);
  ctx.field(m, "target", "", true, "§4");
  ctx.field(m, "meshes", "", true, "§7");
  ctx.field(m, "textures", "", true, "§8");
  check_structure(ctx);

  // §3: later top-level fields need their version (the passes for these
  // fields add their capabilities; presence alone already needs the version).
  // texture_slots is handled by check_options together with its capability.
  for (const auto& f : kTopFields)
    if (f.min_minor > 1 && m.contains(f.name) && std::string_view(f.name) != "texture_slots")
      ctx.need_minor(f.min_minor, std::string("top-level field \"") + f.name + "\"",
                     core::json_pointer_join("", f.name), "§3");

  // §3: unknown ordinary fields are optional metadata.
  for (auto it = m.begin(); it != m.end(); ++it)
    if (!known_top_field(it.key()))
      ctx.info(codes::BEM_UNKNOWN_FIELD, "§3", core::json_pointer_join("", it.key()),
               "unknown top-level field \"" + it.key().substr(0, 120) +
                   "\" is kept as optional metadata and has no effect");
}

void check_final(Context& ctx) {
  // §1: a feature in use needs its capability declared.
  for (const auto& [cap, ptr] : ctx.used_capabilities)
    if (!ctx.declared_capabilities.count(cap))
      ctx.error(
          codes::BEM_CAPABILITY_MISSING, "§1", ptr,
          "this uses capability \"" + cap + "\" but required_capabilities does not declare it");

  // §1: multi-resource-targets is declared exactly when target has resources.
  // (Resources without the declaration are reported above.)
  if (ctx.declared_capabilities.count("multi-resource-targets") && !ctx.explicit_targets)
    ctx.error(codes::BEM_TARGET_RESOURCES_CAPABILITY, "§1", "/required_capabilities",
              "capability \"multi-resource-targets\" is declared but target has no "
              "\"resources\"; declare it only with the 1.4 explicit resource targets");

  // §11: component + draw + slot candidates across the package.
  if (!ctx.structure_v10) {
    const std::uint64_t total = ctx.total_candidates;
    if (total > 4096)
      ctx.error(codes::BEM_CANDIDATE_LIMIT, "§11", "",
                "the package declares " + std::to_string(total) +
                    " candidates (component + draw + texture-slot candidates); at most 4096 "
                    "are allowed");
    else if (total > 512)
      ctx.need_minor(2, std::to_string(total) + " candidates (more than 512)", "", "§11");
  }

  // §11: payload directory entries, 4096 before 1.2. The binary reader checks
  // its header count; a ZIP's payload numbers count the same way.
  if (ctx.package.kind() == ContainerKind::kZip && ctx.package.payload_count() > 4096)
    ctx.need_minor(2, std::to_string(ctx.package.payload_count()) + " payloads (more than 4096)",
                   "", "§11");

  // §5/§6: a ZIP without format_version is judged as 1.0 when it has the
  // appearance structure; content of a later version cannot be combined with it.
  if (ctx.structure_v10 && !ctx.minor_known() && ctx.needed_minor() > 0)
    ctx.error(codes::BEM_STRUCTURE_MIXED, "§1", "/appearances",
              "the 1.0 fixed-appearance structure cannot be combined with content that "
              "needs BEM 1." +
                  std::to_string(ctx.needed_minor()));
}

}  // namespace charkit::bem
