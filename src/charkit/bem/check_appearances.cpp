// §5: the 1.0 fixed appearances (default_appearance_id + appearances).
#include <set>

#include "charkit/bem/detail/options_internal.h"
#include "charkit/bem/error_codes.h"
#include "charkit/core/json.h"

namespace charkit::bem {

using core::json_pointer_join;

namespace {

constexpr std::uint64_t kMaxPreview = 8ull << 20;  // §5: preview PNG ≤ 8 MiB

void check_appearance(Context& ctx, const Json& a, const std::string& ptr,
                      std::optional<std::size_t> mesh_count) {
  // Q23: the optional preview is a PNG payload ID on the appearance; the
  // payload pass checks the PNG signature.
  if (auto preview = ctx.get_u32(a, "preview", ptr, false, 0, 0xFFFFFFFFu, "§5"))
    ctx.use_payload(*preview, 1, kMaxPreview,
                    PayloadUse{PayloadRole::kPreview, json_pointer_join(ptr, "preview")});
  ctx.get_string(a, "name", ptr, true, 256, "§5");
  if (a.contains("description")) ctx.get_string(a, "description", ptr, false, 65536, "§5");

  const std::size_t n = ctx.components.size();
  const Json* comps = ctx.get_array(a, "components", ptr, true, 0, 4096, "§5");
  if (!comps) return;
  std::string cptr = json_pointer_join(ptr, "components");
  std::set<std::uint32_t> seen;
  for (const auto& [e, eptr, i] : elements(*comps, cptr)) {
    if (!ctx.expect_object(e, eptr, "§5")) continue;
    auto target = ctx.get_u32(e, "target", eptr, true, 0, 0xFFFFFFFFu, "§5");
    if (target && n > 0 && *target >= n) {
      ctx.error(codes::BEM_COMPONENT_INDEX, "§5", eptr + "/target",
                "target " + std::to_string(*target) + " is not a component (the target has " +
                    std::to_string(n) + ")");
      target.reset();
    }
    if (target && !seen.insert(*target).second) {
      ctx.error(codes::BEM_APPEARANCE_TARGET_DUPLICATE, "§5", eptr + "/target",
                "component " + std::to_string(*target) +
                    " is listed twice; each appearance lists every component exactly once");
      target.reset();
    }
    auto mesh = check_operation(ctx, e, eptr, mesh_count, "§5");
    if (target && mesh) ctx.replacements.emplace_back(*target, *mesh);
  }
  for (std::uint32_t c = 0; c < n; ++c)
    if (!seen.count(c))
      ctx.error(codes::BEM_APPEARANCE_TARGET_MISSING, "§5", cptr,
                "component " + std::to_string(c) +
                    " is missing; each appearance lists all target components (no inheritance)");
}

}  // namespace

void check_appearances(Context& ctx) {
  const Json& m = ctx.manifest;
  auto def = ctx.get_stable_id(m, "default_appearance_id", "", false, "§5");
  const Json* list = ctx.get_array(m, "appearances", "", false, 1, 64, "§5");
  if (!list) return;
  std::optional<std::size_t> mesh_count = manifest_array_size(m, "meshes");
  std::set<std::string> ids;
  for (const auto& [a, ptr, i] : elements(*list, "/appearances")) {
    if (!ctx.expect_object(a, ptr, "§5")) continue;
    if (auto id = ctx.get_stable_id(a, "id", ptr, true, "§5"); id && !ids.insert(*id).second)
      ctx.error(codes::BEM_DUPLICATE_ID, "§5", ptr + "/id",
                "appearance id \"" + *id + "\" is used twice");
    check_appearance(ctx, a, ptr, mesh_count);
  }
  if (def && !ids.count(*def))
    ctx.error(codes::BEM_DEFAULT_APPEARANCE, "§5", "/default_appearance_id",
              "default_appearance_id \"" + *def + "\" is not the id of any appearance");
}

}  // namespace charkit::bem
