// §10 (BEM 1.3): slider parameters and mesh position deformations, and the
// content of each sparse-position-f32 frame payload.
#include <cmath>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "charkit/bem/detail/context.h"
#include "charkit/bem/error_codes.h"
#include "charkit/core/bytes.h"
#include "charkit/core/json.h"

namespace charkit::bem {

namespace {

using core::json_pointer_join;

constexpr std::size_t kMaxParameters = 64;              // §10, §11
constexpr std::size_t kMaxDeformations = 4096;          // §10, §11
constexpr std::uint32_t kMaxTick = 1000;                // §10: integer ticks 0..1000
constexpr std::size_t kMinFrames = 2, kMaxFrames = 64;  // §10
constexpr std::uint32_t kMaxDescriptor = 4096;          // §10: J in 1..4096
constexpr const char* kEncoding = "sparse-position-f32";
constexpr int kMaxRecordIssues = 5;  // bad records reported per frame

/// A parameter's tick domain, as far as it could be read.
struct Parameter {
  std::uint32_t min = 0, max = 0, neutral = 0, step = 1;
  bool valid = false;  ///< min < max, step ≥ 1, neutral known
};

std::string tick_list(std::uint32_t min, std::uint32_t step) {
  return std::to_string(min) + ", " + std::to_string(min + step) + ", " +
         std::to_string(min + 2 * step) + ", …";
}

/// §10: a parameter's available_when may only test option groups. Walks the
/// condition (JSON depth is already bounded at 48) and reports eq operands
/// that name a slider parameter instead of an option group.
void find_parameter_refs(Context& ctx, const Json& cond, const std::string& ptr,
                         const std::set<std::string>& group_ids) {
  if (!cond.is_object()) return;
  for (auto it = cond.begin(); it != cond.end(); ++it) {
    std::string p = json_pointer_join(ptr, it.key());
    if (it.key() == "eq" && it->is_array() && !it->empty() && (*it)[0].is_string()) {
      const auto& name = (*it)[0].get_ref<const std::string&>();
      if (ctx.parameter_ids.count(name) && !group_ids.count(name))
        ctx.error(codes::BEM_PARAMETER_CONDITION, "§10", json_pointer_join(p, 0),
                  "available_when refers to slider parameter \"" + name +
                      "\"; a parameter's condition may only test option groups");
    } else if (it.key() == "not") {
      find_parameter_refs(ctx, *it, p, group_ids);
    } else if ((it.key() == "all" || it.key() == "any") && it->is_array()) {
      for (std::size_t i = 0; i < it->size(); ++i)
        find_parameter_refs(ctx, (*it)[i], json_pointer_join(p, i), group_ids);
    }
  }
}

/// A tick value (neutral, default) must lie in [min, max] (Q14) and sit on the step grid.
void check_tick(Context& ctx, const char* what, std::uint32_t v, std::uint32_t min,
                std::uint32_t max, std::uint32_t step, const std::string& ptr) {
  if (v < min || v > max) {
    ctx.error(codes::BEM_PARAMETER_VALUE_RANGE, "§10", ptr,
              std::string("\"") + what + "\" is " + std::to_string(v) +
                  ", outside the parameter's range " + std::to_string(min) + ".." +
                  std::to_string(max));
  } else if ((v - min) % step != 0) {
    ctx.error(codes::BEM_PARAMETER_STEP, "§10", ptr,
              std::string("\"") + what + "\" is " + std::to_string(v) +
                  ", not aligned to the step grid " + tick_list(min, step));
  }
}

std::map<std::string, Parameter> check_parameters(Context& ctx) {
  std::map<std::string, Parameter> params;
  auto it = ctx.manifest.find("parameters");
  if (it == ctx.manifest.end()) return params;
  const std::string ptr = "/parameters";
  // §3 table: parameters is a 1.3 field (present, even empty, means 1.3 content).
  ctx.need_minor(3, "\"parameters\"", ptr, "§10");
  const Json* list = ctx.get_array(ctx.manifest, "parameters", "", false, 0, kMaxParameters, "§10");
  if (!list) return params;
  if (!list->empty()) ctx.use_capability("body-parameters", ptr);

  std::vector<std::pair<const Json*, std::string>> conditions;
  for (const auto& [p, pp, i] : elements(*list, ptr)) {
    if (!ctx.expect_object(p, pp, "§10")) continue;
    auto id = ctx.get_stable_id(p, "id", pp, true, "§10");
    ctx.get_string(p, "name", pp, true, 256, "§10");
    auto min = ctx.get_u32(p, "min", pp, true, 0, kMaxTick, "§10");
    auto max = ctx.get_u32(p, "max", pp, true, 0, kMaxTick, "§10");
    auto neutral = ctx.get_u32(p, "neutral", pp, true, 0, kMaxTick, "§10");
    auto def = ctx.get_u32(p, "default", pp, true, 0, kMaxTick, "§10");
    auto step = ctx.get_u32(p, "step", pp, true, 1, kMaxTick, "§10");

    Parameter param;
    if (min && max && *min >= *max) {
      ctx.error(codes::BEM_PARAMETER_RANGE, "§10", json_pointer_join(pp, "max"),
                "\"min\" (" + std::to_string(*min) + ") must be less than \"max\" (" +
                    std::to_string(*max) + ")");
    } else if (min && max && step) {
      if ((*max - *min) % *step != 0)
        ctx.error(codes::BEM_PARAMETER_STEP, "§10", json_pointer_join(pp, "max"),
                  "\"max\" is " + std::to_string(*max) + ", not aligned to the step grid " +
                      tick_list(*min, *step));
      if (neutral)
        check_tick(ctx, "neutral", *neutral, *min, *max, *step, json_pointer_join(pp, "neutral"));
      if (def)
        check_tick(ctx, "default", *def, *min, *max, *step, json_pointer_join(pp, "default"));
      if (neutral) param = Parameter{*min, *max, *neutral, *step, true};
    }
    if (id) {
      if (params.count(*id) || ctx.parameter_ids.count(*id)) {
        ctx.error(codes::BEM_PARAMETER_DUPLICATE, "§10", json_pointer_join(pp, "id"),
                  "parameter id \"" + *id + "\" is used twice");
      } else {
        params.emplace(*id, param);
        ctx.parameter_ids.insert(*id);
      }
    }
    if (const Json* cond = ctx.field(p, "available_when", pp, false, "§10"))
      conditions.emplace_back(cond, json_pointer_join(pp, "available_when"));
  }
  // Conditions last: a condition may wrongly name a slider declared after it.
  std::set<std::string> group_ids;
  for (const auto& g : ctx.groups) group_ids.insert(g.first);
  for (const auto& [cond, cp] : conditions) {
    find_parameter_refs(ctx, *cond, cp, group_ids);
    check_condition(ctx, *cond, cp, -1, "§10");
  }
  return params;
}

/// Keys of an object that are not in `allowed` (§10, Q9: frames have exactly these keys).
void check_exact_keys(Context& ctx, const Json& obj, std::initializer_list<const char*> allowed,
                      const std::string& ptr, const char* kind) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    bool ok = false;
    for (const char* a : allowed) ok = ok || it.key() == a;
    if (!ok)
      ctx.error(codes::BEM_FRAME_FIELDS, "§10", json_pointer_join(ptr, it.key()),
                std::string("unexpected field \"") + it.key() + "\" in a " + kind +
                    "; such a frame contains exactly " +
                    (allowed.size() == 2 ? "\"value\" and \"neutral\""
                                         : "\"value\", \"payload\", \"count\" and \"encoding\""));
  }
}

void check_channel(Context& ctx, const Json& ch, const std::string& cp,
                   const std::map<std::string, Parameter>& params,
                   std::set<std::pair<std::uint32_t, std::string>>& seen) {
  if (!ctx.expect_object(ch, cp, "§10")) return;
  auto mesh = ctx.get_u32(ch, "mesh", cp, true, 0, 0xFFFFFFFFu, "§10");
  auto pname = ctx.get_string(ch, "parameter", cp, true, 256, "§10");

  const MeshFacts* facts = nullptr;
  if (mesh) {
    if (*mesh >= ctx.meshes.size()) {
      ctx.error(codes::BEM_DEFORMATION_MESH, "§10", json_pointer_join(cp, "mesh"),
                "\"mesh\" is " + std::to_string(*mesh) + " but the package has " +
                    std::to_string(ctx.meshes.size()) + " meshes");
    } else if (ctx.meshes[*mesh].valid) {
      facts = &ctx.meshes[*mesh];
      if (!facts->has_float3_position)
        ctx.error(codes::BEM_DEFORMATION_POSITION, "§10", json_pointer_join(cp, "mesh"),
                  "mesh " + std::to_string(*mesh) +
                      " has no Float32 XYZ position attribute (semantic 0, format 0, "
                      "dimension 3), which a deformed mesh needs");
    }
  }
  const Parameter* param = nullptr;
  if (pname) {
    auto it = params.find(*pname);
    if (it == params.end()) {
      if (!ctx.parameter_ids.count(*pname))
        ctx.error(codes::BEM_DEFORMATION_PARAMETER, "§10", json_pointer_join(cp, "parameter"),
                  "\"parameter\" names \"" + *pname + "\", which is not a declared parameter id");
    } else if (it->second.valid) {
      param = &it->second;
    }
    if (mesh && !seen.emplace(*mesh, *pname).second)
      ctx.error(codes::BEM_DEFORMATION_DUPLICATE, "§10", cp,
                "a second channel for mesh " + std::to_string(*mesh) + " and parameter \"" +
                    *pname + "\"; each (mesh, parameter) pair may appear only once");
  }

  const Json* frames = ctx.get_array(ch, "frames", cp, true, kMinFrames, kMaxFrames, "§10");
  if (!frames) return;
  const std::string fp = json_pointer_join(cp, "frames");
  std::uint32_t vertex_limit = facts ? facts->vertex_count : kMaxVertices;
  int neutral_frames = 0;
  std::optional<std::uint32_t> prev, first, last;
  bool values_ok = true;
  for (const auto& [f, p, i] : elements(*frames, fp)) {
    if (!ctx.expect_object(f, p, "§10")) {
      values_ok = false;
      continue;
    }
    auto value = ctx.get_u32(f, "value", p, true, 0, kMaxTick, "§10");
    if (value) {
      if (prev && *value <= *prev)
        ctx.error(codes::BEM_FRAME_ORDER, "§10", json_pointer_join(p, "value"),
                  "frame value " + std::to_string(*value) + " does not follow " +
                      std::to_string(*prev) + "; frame values must be strictly increasing");
      if (param && *value >= param->min && (*value - param->min) % param->step != 0)
        ctx.error(codes::BEM_FRAME_STEP, "§10", json_pointer_join(p, "value"),
                  "frame value " + std::to_string(*value) + " is not aligned to the step grid " +
                      tick_list(param->min, param->step));
      prev = value;
      if (i == 0) first = value;
      if (i + 1 == frames->size()) last = value;
    } else {
      values_ok = false;
    }

    if (f.contains("neutral")) {
      // §10: the neutral frame is exactly {"value": neutral, "neutral": true}.
      ++neutral_frames;
      check_exact_keys(ctx, f, {"value", "neutral"}, p, "neutral frame");
      auto is_true = ctx.get_bool(f, "neutral", p, true, "§10");
      if (is_true && !*is_true)
        ctx.error(codes::BEM_FRAME_NEUTRAL, "§10", json_pointer_join(p, "neutral"),
                  "\"neutral\" must be true; a data frame has no \"neutral\" field");
      if (value && param && *value != param->neutral)
        ctx.error(codes::BEM_FRAME_NEUTRAL, "§10", json_pointer_join(p, "value"),
                  "the neutral frame has value " + std::to_string(*value) +
                      " but the parameter's neutral is " + std::to_string(param->neutral));
      continue;
    }
    // §10: other frames contain exactly value, payload, count, encoding.
    check_exact_keys(ctx, f, {"value", "payload", "count", "encoding"}, p, "data frame");
    auto payload = ctx.get_u32(f, "payload", p, true, 0, 0xFFFFFFFFu, "§10");
    auto count = ctx.get_u32(f, "count", p, true, 0, 0xFFFFFFFFu, "§10");
    if (auto enc = ctx.get_string(f, "encoding", p, true, 256, "§10"); enc && *enc != kEncoding)
      ctx.error(
          codes::BEM_FRAME_ENCODING, "§10", json_pointer_join(p, "encoding"),
          "\"encoding\" is \"" + enc->substr(0, 64) + "\"; only \"" + kEncoding + "\" is defined");
    if (count && *count > vertex_limit) {
      ctx.error(codes::BEM_FRAME_COUNT, "§10", json_pointer_join(p, "count"),
                "\"count\" is " + std::to_string(*count) + " records but the mesh has " +
                    std::to_string(vertex_limit) + " vertices");
      count.reset();
    }
    if (payload && count && facts) {
      std::uint64_t records = 16ull * *count;
      PayloadUse use{PayloadRole::kDeformation,
                     json_pointer_join(p, "payload"),
                     facts->vertex_count,
                     0,
                     0,
                     0,
                     *count};
      ctx.use_payload(*payload, 4 + 1 + records, 4 + kMaxDescriptor + records, std::move(use));
    }
  }
  if (neutral_frames != 1)
    ctx.error(codes::BEM_FRAME_NEUTRAL_COUNT, "§10", fp,
              "a channel needs exactly one neutral frame {\"value\": neutral, \"neutral\": true}, "
              "found " +
                  std::to_string(neutral_frames));
  if (param && values_ok && first && last && (*first != param->min || *last != param->max))
    ctx.error(codes::BEM_FRAME_COVER, "§10", fp,
              "frames span " + std::to_string(*first) + ".." + std::to_string(*last) +
                  " but must cover the parameter's whole range " + std::to_string(param->min) +
                  ".." + std::to_string(param->max));
}

void check_deformations(Context& ctx, const std::map<std::string, Parameter>& params) {
  auto it = ctx.manifest.find("mesh_deformations");
  if (it == ctx.manifest.end()) return;
  const std::string ptr = "/mesh_deformations";
  ctx.need_minor(3, "\"mesh_deformations\"", ptr, "§10");
  const Json* list =
      ctx.get_array(ctx.manifest, "mesh_deformations", "", false, 0, kMaxDeformations, "§10");
  if (!list) return;
  if (!list->empty()) ctx.use_capability("mesh-position-deltas", ptr);
  std::set<std::pair<std::uint32_t, std::string>> seen;
  for (std::size_t i = 0; i < list->size() && !ctx.report.full(); ++i)
    check_channel(ctx, (*list)[i], json_pointer_join(ptr, i), params, seen);
}

}  // namespace

void check_morphs(Context& ctx) {
  auto params = check_parameters(ctx);
  check_deformations(ctx, params);
}

// §10 frame payload: UInt32 J, J bytes of JSON {"count":N,"encoding":...},
// then N records of UInt32 vertex index + Float32 ΔX/ΔY/ΔZ; total 4 + J + 16N.
void check_deformation_payload(Context& ctx, std::uint32_t id, core::Bytes bytes,
                               const PayloadUse& use) {
  const std::string& ptr = use.pointer;
  const std::string name = "deformation payload " + std::to_string(id);
  if (bytes.size() < 4) {
    ctx.error(codes::BEM_DEFORMATION_SIZE, "§10", ptr, name + " is shorter than its 4-byte header");
    return;
  }
  std::uint32_t j = core::load_le<std::uint32_t>(bytes.data());
  if (j < 1 || j > kMaxDescriptor || j > bytes.size() - 4) {
    ctx.error(codes::BEM_DEFORMATION_HEADER, "§10", ptr,
              name + ": descriptor length J is " + std::to_string(j) +
                  ", must be 1..4096 and fit in the payload (" + std::to_string(bytes.size()) +
                  " bytes)");
    return;
  }
  auto parsed = core::parse_json_strict(core::as_chars(bytes.subspan(4, j)),
                                        core::JsonLimits{.max_depth = 48});
  if (!parsed) {
    ctx.error(codes::BEM_DEFORMATION_JSON, "§10", ptr,
              name + ": descriptor is not valid JSON: " + parsed.error().message);
    return;
  }
  const Json& d = *parsed;
  bool shape_ok = d.is_object() && d.size() == 2 && d.contains("count") && d.contains("encoding");
  std::optional<std::uint32_t> n = shape_ok ? core::json_uint32(d["count"]) : std::nullopt;
  if (!shape_ok || !n || !d["encoding"].is_string() || d["encoding"] != kEncoding) {
    ctx.error(codes::BEM_DEFORMATION_JSON, "§10", ptr,
              name + ": descriptor must be exactly {\"count\": N, \"encoding\": \"" + kEncoding +
                  "\"} with N a UInt32");
    return;
  }
  if (*n != use.count) {
    ctx.error(codes::BEM_DEFORMATION_COUNT, "§10", ptr,
              name + ": descriptor count " + std::to_string(*n) +
                  " differs from the frame's \"count\" " + std::to_string(use.count));
    return;
  }
  std::uint64_t expected = 4ull + j + 16ull * *n;
  if (bytes.size() != expected) {
    ctx.error(codes::BEM_DEFORMATION_SIZE, "§10", ptr,
              name + " is " + std::to_string(bytes.size()) +
                  " bytes; 4 + J + 16N = " + std::to_string(expected));
    return;
  }
  // One bit per vertex for uniqueness; vertex_count is bounded by the mesh pass,
  // bound it again here so the bitmap never exceeds 128 KiB.
  std::uint32_t vc = use.vertex_count < kMaxVertices ? use.vertex_count : kMaxVertices;
  std::vector<std::uint8_t> seen((vc + 7) / 8, 0);
  const std::uint8_t* rec = bytes.data() + 4 + j;
  int reported = 0;
  std::uint64_t bad = 0;
  auto report = [&](std::uint32_t r, core::ErrorCode code, const std::string& what) {
    ++bad;
    if (reported++ < kMaxRecordIssues)
      ctx.error(code, "§10", ptr, name + ", record " + std::to_string(r) + ": " + what);
  };
  for (std::uint32_t r = 0; r < *n; ++r, rec += 16) {
    std::uint32_t v = core::load_le<std::uint32_t>(rec);
    if (v >= vc) {
      report(r, codes::BEM_DEFORMATION_INDEX,
             "vertex index " + std::to_string(v) + " is not below the vertex count " +
                 std::to_string(use.vertex_count));
    } else if (seen[v >> 3] & (1u << (v & 7))) {
      report(r, codes::BEM_DEFORMATION_DUPLICATE_INDEX,
             "vertex " + std::to_string(v) + " appears twice in the same frame");
    } else {
      seen[v >> 3] = static_cast<std::uint8_t>(seen[v >> 3] | (1u << (v & 7)));
    }
    float dx = core::load_f32_le(rec + 4), dy = core::load_f32_le(rec + 8),
          dz = core::load_f32_le(rec + 12);
    if (!std::isfinite(dx) || !std::isfinite(dy) || !std::isfinite(dz))
      report(r, codes::BEM_DEFORMATION_DELTA, "a position delta is NaN or infinite");
  }
  if (bad > kMaxRecordIssues)
    ctx.error(codes::BEM_DEFORMATION_RECORDS, "§10", ptr,
              name + ": " + std::to_string(bad) + " bad records in total (first " +
                  std::to_string(kMaxRecordIssues) + " shown)");
}

}  // namespace charkit::bem
