// §7 meshes: vertex counts, streams, attributes, skin layouts, bone palettes;
// 1.4 static meshes and the renderer-kind / resource rules of the reference
// note. Draws are checked in check_draws.cpp.
#include <array>
#include <set>
#include <vector>

#include "charkit/bem/detail/context.h"
#include "charkit/bem/detail/mesh_rules.h"
#include "charkit/bem/detail/vertex_format.h"
#include "charkit/bem/error_codes.h"
#include "charkit/core/json.h"

namespace charkit::bem {
namespace {

using core::json_pointer_join;

constexpr std::uint32_t kSemanticBlendWeight = vertex_attr::kBlendWeight;
constexpr std::uint32_t kSemanticBlendIndices = vertex_attr::kBlendIndices;
using vertex_attr::kFormatBytes;

using Decl = std::array<std::uint32_t, 5>;  // semantic, format, dimension, stream, offset

struct Attribute {
  Decl d{};
  std::string ptr;
  bool sized = false;  ///< format and dimension valid, so its byte size is known
  std::uint32_t bytes() const { return kFormatBytes[d[1]] * d[2]; }
};

/// §7 skin stream table: the declarations of stream 2 for each stride.
struct SkinLayout {
  std::uint32_t stride;
  int min_minor;
  std::vector<Decl> decls;
};
const std::vector<SkinLayout>& skin_layouts() {
  static const std::vector<SkinLayout> layouts = {
      {4, 0, {{13, 6, 4, 2, 0}}},
      {12, 0, {{12, 4, 4, 2, 0}, {13, 6, 4, 2, 8}}},
      {32, 2, {{12, 0, 4, 2, 0}, {13, 10, 4, 2, 16}}},  // §9: 1.2+
  };
  return layouts;
}

std::string decl_text(const Decl& d) {
  std::string s = "[";
  for (std::size_t i = 0; i < d.size(); ++i) s += (i ? "," : "") + std::to_string(d[i]);
  return s + "]";
}

/// Parse "attributes": each entry [semantic, format, dimension, stream, offset].
std::vector<Attribute> parse_attributes(Context& ctx, const Json& list, const std::string& lptr,
                                        std::size_t stream_count, bool& ok) {
  std::vector<Attribute> out;
  std::set<std::uint32_t> semantics;
  for (const auto& [e, aptr, i] : elements(list, lptr)) {
    if (!e.is_array() || e.size() != 5) {
      ctx.error(codes::BEM_ATTRIBUTE_SHAPE, "§7", aptr,
                "a vertex attribute must be an array [semantic, format, dimension, stream, "
                "offset] of 5 UInt32 values");
      ok = false;
      continue;
    }
    Attribute a;
    a.ptr = aptr;
    bool ints = true;
    for (std::size_t k = 0; k < 5; ++k) {
      auto v = core::json_uint32(e[k]);
      if (!v) {
        ctx.error(codes::BEM_FIELD_TYPE, "§3", json_pointer_join(aptr, k),
                  std::string("attribute values must be UInt32 integers, found ") +
                      core::json_type_name(e[k]));
        ints = false;
        break;
      }
      a.d[k] = *v;
    }
    if (!ints) {
      ok = false;
      continue;
    }
    bool good = true;
    if (a.d[0] > 13) {
      ctx.error(codes::BEM_ATTRIBUTE_SEMANTIC, "§7", json_pointer_join(aptr, 0),
                "vertex attribute semantic " + std::to_string(a.d[0]) + " is not in 0..13");
      good = false;
    } else if (!semantics.insert(a.d[0]).second) {
      ctx.error(codes::BEM_ATTRIBUTE_DUPLICATE, "§7", json_pointer_join(aptr, 0),
                "vertex attribute semantic " + std::to_string(a.d[0]) + " is declared twice");
      good = false;
    }
    if (a.d[1] > 11) {
      ctx.error(codes::BEM_ATTRIBUTE_FORMAT, "§7", json_pointer_join(aptr, 1),
                "vertex attribute format " + std::to_string(a.d[1]) + " is not in 0..11");
      good = false;
    }
    if (a.d[2] < 1 || a.d[2] > 4) {
      ctx.error(codes::BEM_ATTRIBUTE_DIMENSION, "§7", json_pointer_join(aptr, 2),
                "vertex attribute dimension " + std::to_string(a.d[2]) + " is not in 1..4");
      good = false;
    }
    if (a.d[3] >= stream_count) {
      ctx.error(codes::BEM_ATTRIBUTE_STREAM, "§7", json_pointer_join(aptr, 3),
                "vertex attribute stream " + std::to_string(a.d[3]) +
                    " does not exist (the mesh has " + std::to_string(stream_count) + " streams)");
      good = false;
    }
    a.sized = a.d[1] <= 11 && a.d[2] >= 1 && a.d[2] <= 4 && a.d[3] < stream_count;
    if (!good) ok = false;
    out.push_back(std::move(a));
  }
  return out;
}

/// §7: within each stream, attributes are packed in declaration order and
/// fill the stride exactly.
void check_packing(Context& ctx, const std::vector<Attribute>& attrs,
                   const std::vector<std::optional<std::uint32_t>>& strides,
                   const std::string& mptr, bool& ok) {
  for (std::size_t s = 0; s < strides.size(); ++s) {
    std::uint64_t running = 0;
    bool sized = true;
    for (const auto& a : attrs) {
      if (a.d[3] != s) continue;
      if (!a.sized) {
        sized = false;
        break;
      }
      if (a.d[4] != running) {
        ctx.error(codes::BEM_ATTRIBUTE_OFFSET, "§7", json_pointer_join(a.ptr, 4),
                  "attribute offset is " + std::to_string(a.d[4]) +
                      " but the attributes declared "
                      "before it in stream " +
                      std::to_string(s) + " take " + std::to_string(running) +
                      " bytes; attributes are packed in declaration order");
        ok = false;
      }
      running += a.bytes();
    }
    if (sized && strides[s] && running != *strides[s]) {
      ctx.error(
          codes::BEM_ATTRIBUTE_STRIDE, "§7",
          json_pointer_join(json_pointer_join(json_pointer_join(mptr, "streams"), s), "stride"),
          "stream " + std::to_string(s) + " has stride " + std::to_string(*strides[s]) +
              " but its attributes take " + std::to_string(running) + " bytes");
      ok = false;
    }
  }
}

/// §7 skin stream (skinned meshes): one of the three layouts, BlendIndices
/// last (Q23: last of the whole declaration). Returns the skin stride when the
/// layout is valid.
std::optional<std::uint32_t> check_skin_layout(Context& ctx, const std::vector<Attribute>& attrs,
                                               std::optional<std::uint32_t> stride,
                                               const std::string& mptr, bool& ok) {
  std::vector<Decl> stream2;
  bool clean = true;
  for (const auto& a : attrs) {
    bool skin_semantic = a.d[0] == kSemanticBlendWeight || a.d[0] == kSemanticBlendIndices;
    if (a.d[3] == 2) {
      stream2.push_back(a.d);
    } else if (skin_semantic) {
      ctx.error(codes::BEM_SKIN_LAYOUT, "§7", a.ptr,
                "BlendWeight/BlendIndices must be declared in stream 2, found in stream " +
                    std::to_string(a.d[3]));
      clean = false;
    }
  }
  if (!attrs.empty()) {
    for (std::size_t i = 0; i + 1 < attrs.size(); ++i)
      if (attrs[i].d[0] == kSemanticBlendIndices) {
        ctx.error(codes::BEM_SKIN_BLEND_INDICES_LAST, "§7", attrs[i].ptr,
                  "BlendIndices (semantic 13) must be the last vertex attribute");
        clean = false;
      }
  }
  std::string aptr = json_pointer_join(mptr, "attributes");
  if (!stride) {
    ok = false;
    return std::nullopt;
  }
  const SkinLayout* match = nullptr;
  for (const auto& l : skin_layouts())
    if (l.stride == *stride) match = &l;
  if (!match) {
    ctx.error(codes::BEM_SKIN_LAYOUT, "§7",
              json_pointer_join(json_pointer_join(json_pointer_join(mptr, "streams"), 2), "stride"),
              "skin stream (stream 2) has stride " + std::to_string(*stride) +
                  "; allowed 4 (rigid UInt8 indices), 12 (UNorm16 weights + UInt8 indices) or 32 "
                  "(Float32 weights + UInt32 indices)");
    ok = false;
    return std::nullopt;
  }
  if (stream2 != match->decls) {
    std::string want;
    for (const auto& d : match->decls) want += (want.empty() ? "" : ", ") + decl_text(d);
    std::string got;
    for (const auto& d : stream2) got += (got.empty() ? "" : ", ") + decl_text(d);
    ctx.error(codes::BEM_SKIN_LAYOUT, "§7", aptr,
              "skin stream of stride " + std::to_string(*stride) + " must declare exactly " + want +
                  " in this order; found " + (got.empty() ? std::string("nothing") : got));
    ok = false;
    return std::nullopt;
  }
  if (match->min_minor > 0)
    ctx.need_minor(match->min_minor, "the 32-byte Float32 skin stream", aptr, "§9");
  if (!clean) {
    ok = false;
    return std::nullopt;
  }
  return *stride;
}

/// §7 bone palette; returns its size when the array itself is valid.
std::optional<std::uint32_t> check_bones(Context& ctx, const Json& mesh, bool is_static,
                                         MeshDrawInput& input, bool& ok) {
  const std::string& mptr = input.pointer;
  if (is_static) {
    // 1.4 note: static meshes have an empty palette.
    const Json* b = ctx.field(mesh, "bones", mptr, false, "§7");
    if (b && !(b->is_array() && b->empty())) {
      ctx.error(codes::BEM_STATIC_BONES, "§7", json_pointer_join(mptr, "bones"),
                "a static mesh must have an empty \"bones\" palette");
      ok = false;
    }
    return std::nullopt;
  }
  const Json* bones = ctx.get_array(mesh, "bones", mptr, true, 1, 256, "§7");
  if (!bones) {
    ok = false;
    return std::nullopt;
  }
  std::string bptr = json_pointer_join(mptr, "bones");
  bool check_target = !ctx.components.empty();
  for (const auto& [b, eptr, i] : elements(*bones, bptr)) {
    if (!ctx.expect_object(b, eptr, "§7")) {
      ok = false;
      continue;
    }
    auto comp = ctx.get_u32(b, "component", eptr, true, 0, 0xFFFFFFFFu, "§7");
    auto index = ctx.get_u32(b, "index", eptr, true, 0, 0xFFFFFFFFu, "§7");
    auto name = ctx.get_string(b, "name", eptr, true, 256, "§7");
    if (!comp || !index || !name) {
      ok = false;
      continue;
    }
    if (!check_target) continue;  // the target pass reported why it has no components
    if (*comp >= ctx.components.size()) {
      ctx.error(codes::BEM_BONE_COMPONENT, "§7", json_pointer_join(eptr, "component"),
                "bone donor component " + std::to_string(*comp) +
                    " does not exist (the target has " + std::to_string(ctx.components.size()) +
                    " components)");
      ok = false;
      continue;
    }
    const ComponentFacts& c = ctx.components[*comp];
    if (*index >= c.bone_names.size()) {
      ctx.error(codes::BEM_BONE_INDEX, "§7", json_pointer_join(eptr, "index"),
                "bone index " + std::to_string(*index) + " is out of range: component " +
                    std::to_string(*comp) + " has " + std::to_string(c.bone_names.size()) +
                    " bone names");
      ok = false;
    } else if (*name != c.bone_names[*index]) {
      // §9: the palette names the standard bone name, never an alias.
      ctx.error(codes::BEM_BONE_NAME, "§7", json_pointer_join(eptr, "name"),
                "bone name \"" + name->substr(0, 256) + "\" does not match component " +
                    std::to_string(*comp) + " bone " + std::to_string(*index) + " \"" +
                    c.bone_names[*index] + "\"");
      ok = false;
    }
    if (input.explicit_targets) {
      if (c.renderer_kind == "static") {
        ctx.error(codes::BEM_BONE_DONOR_STATIC, "§7", json_pointer_join(eptr, "component"),
                  "bone donor component " + std::to_string(*comp) +
                      " is a static renderer; bone donors must be skinned");
        ok = false;
      }
      check_donor_resource(ctx, *comp, json_pointer_join(eptr, "component"), input);
    }
  }
  return static_cast<std::uint32_t>(bones->size());
}

void check_one_mesh(Context& ctx, const Json& mesh, std::size_t index, MeshFacts& facts) {
  std::string mptr = json_pointer_join("/meshes", index);
  if (!ctx.expect_object(mesh, mptr, "§7")) return;
  bool ok = true;

  auto vertex_count = ctx.get_u32(mesh, "vertex_count", mptr, true, 1, kMaxVertices, "§7");
  auto index_size = ctx.get_u32(mesh, "index_size", mptr, true, 0, 0xFFFFFFFFu, "§7");
  if (index_size && *index_size != 2 && *index_size != 4) {
    ctx.error(
        codes::BEM_FIELD_RANGE, "§7", json_pointer_join(mptr, "index_size"),
        "\"index_size\" is " + std::to_string(*index_size) + ", allowed 2 (UInt16) or 4 (UInt32)");
    index_size.reset();
  }
  if (!vertex_count || !index_size) ok = false;

  // Renderer kind: 1.4 explicit targets only (docs/bem/mesh.md).
  bool is_static = false;
  std::string kind;
  std::string kptr = json_pointer_join(mptr, "renderer_kind");
  if (ctx.explicit_targets) {
    if (auto rk = ctx.get_string(mesh, "renderer_kind", mptr, true, 256, "§7")) {
      if (*rk == "skinned" || *rk == "static") {
        kind = *rk;
        is_static = *rk == "static";
        if (is_static) ctx.use_capability("static-meshes", kptr);
      } else {
        ctx.error(codes::BEM_RENDERER_KIND, "§7", kptr,
                  "\"renderer_kind\" is \"" + rk->substr(0, 64) +
                      "\"; allowed \"skinned\" or \"static\"");
        ok = false;
      }
    } else {
      ok = false;
    }
  } else if (mesh.contains("renderer_kind")) {
    ctx.error(codes::BEM_RENDERER_KIND_LEGACY, "§7", kptr,
              "\"renderer_kind\" belongs to the 1.4 explicit target form (target.resources); with "
              "the legacy character_id/world_resource target every mesh is skinned");
    ok = false;
  }

  // Streams: exactly 3 when skinned; 1..3 when static (1.4 note).
  std::vector<std::optional<std::uint32_t>> strides, payload_ids;
  const Json* streams = ctx.get_array(mesh, "streams", mptr, true, is_static ? 1 : 3, 3, "§7");
  std::string sptr = json_pointer_join(mptr, "streams");
  if (streams) {
    for (const auto& [st, eptr, s] : elements(*streams, sptr)) {
      if (!ctx.expect_object(st, eptr, "§7")) {
        strides.emplace_back();
        payload_ids.emplace_back();
        ok = false;
        continue;
      }
      strides.push_back(ctx.get_u32(st, "stride", eptr, true, 1, 64, "§7"));
      payload_ids.push_back(ctx.get_u32(st, "payload", eptr, true, 0, 0xFFFFFFFFu, "§7"));
      if (!strides.back() || !payload_ids.back()) ok = false;
    }
  } else {
    ok = false;
  }

  // Attributes.
  std::vector<Attribute> attrs;
  if (const Json* list = ctx.get_array(mesh, "attributes", mptr, true, 0, 16, "§7")) {
    attrs = parse_attributes(ctx, *list, json_pointer_join(mptr, "attributes"), strides.size(), ok);
    check_packing(ctx, attrs, strides, mptr, ok);
  } else {
    ok = false;
  }
  for (const auto& a : attrs)
    if (a.d[0] == 0 && a.d[1] == 0 && a.d[2] == 3) facts.has_float3_position = true;

  MeshDrawInput input;
  input.mesh_index = index;
  input.pointer = mptr;
  input.vertex_count = vertex_count;
  input.index_size = index_size;
  input.explicit_targets = ctx.explicit_targets;

  std::optional<std::uint32_t> skin_stride;
  if (is_static) {
    // 1.4 note: no skin attributes on a static mesh.
    for (const auto& a : attrs)
      if (a.d[0] == kSemanticBlendWeight || a.d[0] == kSemanticBlendIndices) {
        ctx.error(codes::BEM_STATIC_SKIN_ATTRIBUTE, "§7", a.ptr,
                  "a static mesh must not declare BlendWeight/BlendIndices (semantic 12/13)");
        ok = false;
      }
  } else if (streams && strides.size() == 3) {
    skin_stride = check_skin_layout(ctx, attrs, strides[2], mptr, ok);
  }
  std::optional<std::uint32_t> palette = check_bones(ctx, mesh, is_static, input, ok);

  // Stream payloads: vertex_count × stride bytes each (§7).
  for (std::size_t s = 0; s < payload_ids.size(); ++s) {
    if (!payload_ids[s]) continue;
    PayloadUse use;
    use.pointer = json_pointer_join(json_pointer_join(sptr, s), "payload");
    use.role = PayloadRole::kVertexStream;
    if (!vertex_count || !strides[s]) {
      ctx.use_payload(*payload_ids[s], 0, ~0ull, use);  // existence only
      continue;
    }
    std::uint64_t size = std::uint64_t{*vertex_count} * *strides[s];
    if (!is_static && s == 2 && skin_stride && palette) {
      use.role = PayloadRole::kSkinStream;
      use.vertex_count = *vertex_count;
      use.skin_stride = *skin_stride;
      use.palette_size = *palette;
    }
    if (!ctx.use_payload(*payload_ids[s], size, size, use)) ok = false;
  }

  check_mesh_draws(ctx, mesh, input);

  // 1.4: every component this mesh replaces lives in the donors' resource and
  // has the mesh's renderer kind.
  if (ctx.explicit_targets) {
    std::set<std::uint32_t> receivers;
    for (const auto& [comp, m] : ctx.replacements)
      if (m == index) receivers.insert(comp);
    for (std::uint32_t comp : receivers) {
      if (comp >= ctx.components.size()) continue;
      const ComponentFacts& c = ctx.components[comp];
      if (!input.resource.empty() && c.resource != input.resource) {
        ctx.error(codes::BEM_REPLACE_RESOURCE, "§7", mptr,
                  "mesh " + std::to_string(index) + " replaces component " + std::to_string(comp) +
                      " of resource \"" + c.resource + "\" but its donors belong to resource \"" +
                      input.resource + "\"");
        ok = false;
      }
      if (!kind.empty() && !c.renderer_kind.empty() && c.renderer_kind != kind) {
        ctx.error(codes::BEM_RENDERER_KIND_MISMATCH, "§7", kptr,
                  "mesh " + std::to_string(index) + " is " + kind + " but replaces component " +
                      std::to_string(comp) + ", a " + c.renderer_kind + " renderer");
        ok = false;
      }
    }
  }

  facts.vertex_count = vertex_count.value_or(0);
  facts.index_size = index_size.value_or(0);
  facts.is_static = is_static;
  facts.valid = ok;
}

}  // namespace

void check_donor_resource(Context& ctx, std::uint32_t component, const std::string& ptr,
                          MeshDrawInput& input) {
  if (!input.explicit_targets || component >= ctx.components.size()) return;
  const std::string& res = ctx.components[component].resource;
  if (res.empty()) return;
  if (input.resource.empty()) {
    input.resource = res;
    input.resource_pointer = ptr;
    return;
  }
  if (res != input.resource)
    ctx.error(codes::BEM_DONOR_RESOURCE, "§7", ptr,
              "donor component " + std::to_string(component) + " belongs to resource \"" + res +
                  "\" but " + input.resource_pointer + " names a donor of resource \"" +
                  input.resource +
                  "\"; all bone and material donors of one mesh share one resource");
}

void check_meshes(Context& ctx) {
  // §3: at most 4096 meshes.
  const Json* list = ctx.get_array(ctx.manifest, "meshes", "", true, 0, 4096, "§7");
  if (!list) return;
  ctx.meshes.assign(list->size(), MeshFacts{});
  for (std::size_t i = 0; i < list->size(); ++i) check_one_mesh(ctx, (*list)[i], i, ctx.meshes[i]);
}

}  // namespace charkit::bem
