// §7 draws: index streams (1.0 mesh-level, 1.1+ per draw), materials,
// texture lists, conditions; §12 draw material overrides (1.5).
#include "charkit/bem/detail/context.h"
#include "charkit/bem/detail/mesh_rules.h"
#include "charkit/bem/error_codes.h"
#include "charkit/core/json.h"

namespace charkit::bem {
namespace {

using core::json_pointer_join;

constexpr std::uint32_t kMaxIndices = 16777216;   // §11: selected indices
constexpr std::size_t kDrawCandidatesV11 = 512;   // §11: 1.1
constexpr std::size_t kDrawCandidatesV12 = 4096;  // §11: 1.2+

/// Register an index payload of `count` indices (size count × index_size).
void use_indices(Context& ctx, std::uint32_t id, std::optional<std::uint32_t> count,
                 const MeshDrawInput& in, const std::string& ptr) {
  PayloadUse use;
  use.pointer = ptr;
  if (!count || !in.index_size || !in.vertex_count) {
    use.role = PayloadRole::kVertexStream;  // existence only: the size is unknown
    ctx.use_payload(id, 0, ~0ull, use);
    return;
  }
  use.role = PayloadRole::kIndices;
  use.vertex_count = *in.vertex_count;
  use.index_size = *in.index_size;
  std::uint64_t size = std::uint64_t{*count} * *in.index_size;
  ctx.use_payload(id, size, size, use);
}

/// An index count: a positive multiple of 3 (§7), at most the §11 selection limit.
std::optional<std::uint32_t> get_index_count(Context& ctx, const Json& obj, const char* key,
                                             const std::string& ptr) {
  auto n = ctx.get_u32(obj, key, ptr, true, 0, kMaxIndices, "§7");
  if (n && (*n == 0 || *n % 3 != 0)) {
    ctx.error(codes::BEM_DRAW_COUNT, "§7", json_pointer_join(ptr, key),
              std::string("\"") + key + "\" is " + std::to_string(*n) +
                  "; index counts are positive multiples of 3 (whole triangles)");
    return std::nullopt;
  }
  return n;
}

/// §7 material: donor component's native material slot, name must agree.
void check_material(Context& ctx, const Json& d, const std::string& dptr, MeshDrawInput& in) {
  auto comp = ctx.get_u32(d, "material_component", dptr, true, 0, 0xFFFFFFFFu, "§7");
  auto slot = ctx.get_u32(d, "material_slot", dptr, true, 0, 0xFFFFFFFFu, "§7");
  auto name = ctx.get_string(d, "material_name", dptr, true, 256, "§7");
  if (!comp || ctx.components.empty()) return;  // no target: its pass said why
  if (*comp >= ctx.components.size()) {
    ctx.error(codes::BEM_MATERIAL_COMPONENT, "§7", json_pointer_join(dptr, "material_component"),
              "material donor component " + std::to_string(*comp) +
                  " does not exist (the target has " + std::to_string(ctx.components.size()) +
                  " components)");
    return;
  }
  check_donor_resource(ctx, *comp, json_pointer_join(dptr, "material_component"), in);
  const ComponentFacts& c = ctx.components[*comp];
  if (!slot) return;
  if (*slot >= c.materials.size()) {
    ctx.error(codes::BEM_MATERIAL_SLOT, "§7", json_pointer_join(dptr, "material_slot"),
              "material slot " + std::to_string(*slot) + " is out of range: component " +
                  std::to_string(*comp) + " has " + std::to_string(c.materials.size()) +
                  " materials");
    return;
  }
  if (name && *name != c.materials[*slot])
    ctx.error(codes::BEM_MATERIAL_NAME, "§7", json_pointer_join(dptr, "material_name"),
              "material name \"" + name->substr(0, 256) + "\" does not match component " +
                  std::to_string(*comp) + " slot " + std::to_string(*slot) + " \"" +
                  c.materials[*slot] + "\"");
}

}  // namespace

void check_mesh_draws(Context& ctx, const Json& mesh, MeshDrawInput& in) {
  const std::string& mptr = in.pointer;
  // Structural branch: 1.0 has one mesh-level index stream that the draws
  // cover; 1.1+ gives each draw its own index payload.
  bool v10 = ctx.minor() == 0;

  std::optional<std::uint32_t> index_count;
  if (v10) {
    auto ids = ctx.get_u32(mesh, "indices", mptr, true, 0, 0xFFFFFFFFu, "§7");
    index_count = get_index_count(ctx, mesh, "index_count", mptr);
    if (ids) use_indices(ctx, *ids, index_count, in, json_pointer_join(mptr, "indices"));
  } else {
    for (const char* key : {"indices", "index_count"})
      if (mesh.contains(key))
        ctx.allow_max_minor(0, std::string("the mesh-level \"") + key + "\"",
                            json_pointer_join(mptr, key), "§7");
  }

  const Json* draws = ctx.get_array(mesh, "draws", mptr, true, 1, kDrawCandidatesV12, "§7");
  if (!draws) return;
  std::string lptr = json_pointer_join(mptr, "draws");
  if (!v10) {
    // §11: draw candidates per component: 512 in 1.1, 4096 from 1.2.
    if (draws->size() > kDrawCandidatesV11)
      ctx.need_minor(
          2, "a mesh with " + std::to_string(draws->size()) + " draw candidates (1.1 allows 512)",
          lptr, "§11");
    ctx.total_candidates += draws->size();
  }

  std::uint64_t covered = 0;  // 1.0: indices covered by the draws so far
  bool coverage_ok = true;
  for (const auto& [d, dptr, i] : elements(*draws, lptr)) {
    if (!ctx.expect_object(d, dptr, "§7")) {
      coverage_ok = false;
      continue;
    }
    if (v10) {
      // §7 1.0: ordered segments covering the mesh index stream without gaps.
      if (d.contains("when"))
        ctx.need_minor(1, "a draw condition \"when\"", json_pointer_join(dptr, "when"), "§6");
      if (d.contains("indices"))
        ctx.need_minor(1, "per-draw \"indices\"", json_pointer_join(dptr, "indices"), "§7");
      auto start = ctx.get_u32(d, "start", dptr, true, 0, 0xFFFFFFFFu, "§7");
      auto count = get_index_count(ctx, d, "count", dptr);
      if (start && coverage_ok && *start != covered) {
        ctx.error(codes::BEM_DRAW_COVERAGE, "§7", json_pointer_join(dptr, "start"),
                  "draw starts at index " + std::to_string(*start) +
                      " but the previous draws end at " + std::to_string(covered) +
                      "; draws must cover the index stream in order without gaps or overlaps");
        coverage_ok = false;
      }
      if (start && count) {
        covered = std::uint64_t{*start} + *count;
      } else {
        coverage_ok = false;
      }
    } else {
      // Q10: a missing "when" means the draw is always selected with its mesh.
      if (const Json* when = ctx.field(d, "when", dptr, false, "§7"))
        check_condition(ctx, *when, json_pointer_join(dptr, "when"), -1, "§7");
      if (d.contains("start"))
        ctx.warning(codes::BEM_DRAW_START_IGNORED, "§7", json_pointer_join(dptr, "start"),
                    "\"start\" is a 1.0 field; from 1.1 the runtime concatenates the selected "
                    "draws and computes the starts itself");
      auto ids = ctx.get_u32(d, "indices", dptr, true, 0, 0xFFFFFFFFu, "§7");
      auto count = get_index_count(ctx, d, "count", dptr);
      if (ids) use_indices(ctx, *ids, count, in, json_pointer_join(dptr, "indices"));
    }

    check_material(ctx, d, dptr, in);
    if (const Json* tex = ctx.field(d, "textures", dptr, true, "§7"))
      check_texture_list(ctx, *tex, json_pointer_join(dptr, "textures"));
    if (const Json* mo = ctx.field(d, "material_overrides", dptr, false, "§12")) {
      std::string optr = json_pointer_join(dptr, "material_overrides");
      ctx.use_capability("material-overrides-v1", optr);
      check_material_overrides(ctx, *mo, optr);
    }
  }
  if (v10 && coverage_ok && index_count && covered != *index_count)
    ctx.error(codes::BEM_DRAW_COVERAGE, "§7", lptr,
              "the draws cover " + std::to_string(covered) + " indices but the mesh has " +
                  std::to_string(*index_count) + "; draws must cover the whole index stream");
}

}  // namespace charkit::bem
