// The `*.bmd_ue.json` sidecar (docs/deformer/nmn.md, "Sidecar").
#include "charkit/deformer/nmn_sidecar.h"

#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include "charkit/core/enum_names.h"
#include "charkit/core/json.h"
#include "charkit/deformer/error_codes.h"

namespace charkit::deformer {
namespace {

constexpr core::EnumNames<NmnOutputs, 3> kOutputs{
    {{{NmnOutputs::kUnknown, "unknown"},
      {NmnOutputs::kMorphWeights, "morphWeights"},
      {NmnOutputs::kBasisCoefficients, "basisCoefficients"}}}};

using core::Json;

core::Error schema(std::string message, std::string pointer) {
  return core::error_at_pointer(codes::SIDECAR_SCHEMA, std::move(message), std::move(pointer));
}

std::optional<core::Error> names(const Json& doc, const char* key, std::vector<std::string>& out,
                                 bool required) {
  const std::string ptr = std::string("/") + key;
  auto it = doc.find(key);
  if (it == doc.end()) {
    if (required) return schema(std::string("missing \"") + key + "\" (an array of names)", "");
    return std::nullopt;
  }
  if (!it->is_array())
    return schema(std::string("\"") + key + "\" must be an array of strings", ptr);
  for (std::size_t i = 0; i < it->size(); ++i) {
    const Json& v = (*it)[i];
    if (!v.is_string()) return schema("must be a string", core::json_pointer_join(ptr, i));
    out.push_back(v.get<std::string>());
  }
  return std::nullopt;
}

core::Error mismatch(std::string message) {
  return core::make_error(codes::SIDECAR_MISMATCH, std::move(message));
}

}  // namespace

std::string_view nmn_outputs_name(NmnOutputs outputs) {
  return kOutputs.name(outputs);
}

core::Result<NmnSidecar> read_nmn_sidecar(std::string_view text) {
  auto parsed = core::parse_json_strict(text);
  if (!parsed) return std::move(parsed).error();
  const Json& doc = *parsed;
  if (!doc.is_object()) return schema("the sidecar must be a JSON object", "");
  auto fmt = doc.find("format");
  if (fmt == doc.end() || !fmt->is_string() || fmt->get<std::string>() != kNmnSidecarFormat)
    return schema("\"format\" must be \"charkit.bmd_ue\"", "/format");
  auto ver = doc.find("version");
  if (ver == doc.end() || core::json_uint32(*ver) != kNmnSidecarVersion)
    return schema("\"version\" must be 1", "/version");
  NmnSidecar s;
  if (auto m = doc.find("model"); m != doc.end()) {
    if (!m->is_string()) return schema("\"model\" must be a string", "/model");
    s.model = m->get<std::string>();
  }
  auto mode = doc.find("mode");
  if (mode == doc.end() || !mode->is_string() ||
      (mode->get<std::string>() != "global" && mode->get<std::string>() != "local"))
    return schema("\"mode\" must be \"global\" or \"local\"", "/mode");
  s.mode = mode->get<std::string>() == "global" ? NmnMode::kGlobal : NmnMode::kLocal;
  if (auto e = names(doc, "bones", s.bones, true)) return *e;
  if (auto e = names(doc, "curves", s.curves, true)) return *e;
  if (auto e = names(doc, "morphTargets", s.morph_targets, true)) return *e;
  if (auto r = doc.find("outputRanges"); r != doc.end()) {
    if (!r->is_array())
      return schema("\"outputRanges\" must be an array of [min, max] pairs", "/outputRanges");
    for (std::size_t i = 0; i < r->size(); ++i) {
      const Json& pair = (*r)[i];
      const std::string rp = core::json_pointer_join("/outputRanges", i);
      std::optional<double> lo, hi;
      if (pair.is_array() && pair.size() == 2) {
        lo = core::json_finite_number(pair[0]);
        hi = core::json_finite_number(pair[1]);
      }
      constexpr double kMax = std::numeric_limits<float>::max();  // stays finite as a float
      if (!lo || !hi || *lo > *hi || std::abs(*lo) > kMax || std::abs(*hi) > kMax)
        return schema("must be [min, max]: two finite numbers, min <= max", rp);
      s.output_ranges.push_back({static_cast<float>(*lo), static_cast<float>(*hi)});
    }
  }
  if (auto o = doc.find("outputs"); o != doc.end()) {
    // "unknown" is what a sidecar without the key means, not a value to write.
    const auto v = o->is_string() ? kOutputs.parse(o->get<std::string>()) : std::nullopt;
    if (!v || *v == NmnOutputs::kUnknown)
      return schema("\"outputs\" must be \"morphWeights\" or \"basisCoefficients\"", "/outputs");
    s.outputs = *v;
  }
  if (auto g = doc.find("groups"); g != doc.end()) {
    if (!g->is_array())
      return schema("\"groups\" must be an array of arrays of item indices", "/groups");
    for (std::size_t i = 0; i < g->size(); ++i) {
      const Json& grp = (*g)[i];
      const std::string gp = core::json_pointer_join("/groups", i);
      if (!grp.is_array()) return schema("must be an array of item indices", gp);
      if (i > 0 && grp.size() != s.groups.front().size())
        return schema("every group must hold the same number of items", gp);
      std::vector<std::uint32_t> items;
      for (std::size_t k = 0; k < grp.size(); ++k) {
        auto v = core::json_uint32(grp[k]);
        if (!v)
          return schema("must be an item index (integer >= 0)", core::json_pointer_join(gp, k));
        items.push_back(*v);
      }
      s.groups.push_back(std::move(items));
    }
  }
  return s;
}

std::string write_nmn_sidecar(const NmnSidecar& s) {
  Json doc{{"format", std::string(kNmnSidecarFormat)}, {"version", kNmnSidecarVersion}};
  if (!s.model.empty()) doc["model"] = s.model;
  doc["mode"] = s.mode == NmnMode::kGlobal ? "global" : "local";
  doc["bones"] = s.bones;
  doc["curves"] = s.curves;
  doc["morphTargets"] = s.morph_targets;
  if (s.outputs != NmnOutputs::kUnknown) doc["outputs"] = nmn_outputs_name(s.outputs);
  if (!s.output_ranges.empty()) {
    Json ranges = Json::array();
    for (const auto& [lo, hi] : s.output_ranges) ranges.push_back(Json::array({lo, hi}));
    doc["outputRanges"] = std::move(ranges);
  }
  if (!s.groups.empty()) doc["groups"] = s.groups;
  return doc.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

core::Status check_nmn_sidecar(const NmnSidecar& s, const NmnNetwork& n) {
  if (s.mode != n.mode)
    return mismatch(std::string("the sidecar is for ") +
                    (s.mode == NmnMode::kGlobal ? "global" : "local") + " mode, the network is " +
                    (n.mode == NmnMode::kGlobal ? "global" : "local"));
  const std::uint64_t inputs =
      std::uint64_t{s.bones.size()} * 6 + std::uint64_t{s.curves.size()} * n.num_floats_per_curve;
  if (inputs != n.input_count() || s.bones.size() != n.num_bones || s.curves.size() != n.num_curves)
    return mismatch("the sidecar names " + std::to_string(s.bones.size()) + " bones and " +
                    std::to_string(s.curves.size()) + " curves = " + std::to_string(inputs) +
                    " inputs (bones x 6 + curves x " + std::to_string(n.num_floats_per_curve) +
                    "), the network has " + std::to_string(n.num_bones) + " bones, " +
                    std::to_string(n.num_curves) + " curves = " + std::to_string(n.input_count()) +
                    " inputs");
  const std::uint64_t outputs = n.output_count();
  if (!s.morph_targets.empty() && s.morph_targets.size() != outputs &&
      s.morph_targets.size() != outputs + 1)
    return mismatch("the sidecar names " + std::to_string(s.morph_targets.size()) +
                    " morph targets, the network has " + std::to_string(outputs) +
                    " outputs (expected that many, or one more for the mean-delta morph 0)");
  if (!s.output_ranges.empty() && s.output_ranges.size() != outputs)
    return mismatch("the sidecar records " + std::to_string(s.output_ranges.size()) +
                    " output ranges, the network has " + std::to_string(outputs) + " outputs");
  if (n.group) {
    if (s.groups.size() != n.num_groups ||
        (!s.groups.empty() && s.groups.front().size() != n.num_items_per_group))
      return mismatch("the network has " + std::to_string(n.num_groups) + " groups of " +
                      std::to_string(n.num_items_per_group) +
                      " items; the sidecar's \"groups\" differ");
    const std::uint64_t items = std::uint64_t{s.bones.size()} + s.curves.size();
    for (const auto& g : s.groups)
      for (auto i : g)
        if (i >= items)
          return mismatch("group item index " + std::to_string(i) +
                          " is past the bones and curves");
  } else if (!s.groups.empty()) {
    return mismatch("the sidecar lists groups but the network has no group model");
  }
  return core::Ok{};
}

std::vector<std::uint32_t> nmn_sidecar_group_items(const NmnSidecar& s) {
  std::vector<std::uint32_t> out;
  for (const auto& g : s.groups) out.insert(out.end(), g.begin(), g.end());
  return out;
}

std::string nmn_sidecar_path(std::string_view model_path) {
  std::string p(model_path);
  auto slash = p.find_last_of('/');
  auto dot = p.find_last_of('.');
  if (dot != std::string::npos && (slash == std::string::npos || dot > slash)) p.resize(dot);
  return p + ".bmd_ue.json";
}

}  // namespace charkit::deformer
