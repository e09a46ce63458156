// Test support for the §10 morph and §12/§13 BEM 1.5 rules: packages that use
// those features, and a harness that runs just these passes on a Context
// whose earlier-pass facts (components, groups, meshes) are filled from the
// manifest, so the rules are tested on their own as well as end to end.
#pragma once

#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "charkit/bem/detail/context.h"
#include "charkit/bem/validate.h"
#include "charkit/core/json.h"
#include "package_builder.h"

namespace charkit::morphtest {

using core::Json;
using testkit::ByteVec;

struct Record {
  std::uint32_t vertex;
  float dx, dy, dz;
};

/// A sparse-position-f32 frame payload (§10): UInt32 J, descriptor, records.
inline ByteVec deformation_payload(const std::vector<Record>& records,
                                   std::string descriptor = "") {
  if (descriptor.empty())
    descriptor =
        "{\"count\":" + std::to_string(records.size()) + ",\"encoding\":\"sparse-position-f32\"}";
  ByteVec b = testkit::u32_bytes({static_cast<std::uint32_t>(descriptor.size())});
  b.insert(b.end(), descriptor.begin(), descriptor.end());
  for (const auto& r : records) {
    auto v = testkit::u32_bytes({r.vertex});
    auto d = testkit::f32_bytes({r.dx, r.dy, r.dz});
    b.insert(b.end(), v.begin(), v.end());
    b.insert(b.end(), d.begin(), d.end());
  }
  return b;
}

inline Json body_parameter() {
  return Json{{"id", "body"}, {"name", "Body"}, {"min", 0}, {"max", 1000},
              {"neutral", 0}, {"default", 0},   {"step", 1}};
}

/// Payload index of the deformation frame added by with_morph.
constexpr std::uint32_t kFramePayload = 5;

/// The baseline package of `minor` (≥ 3) plus one parameter "body" and one
/// channel deforming mesh 0 with a neutral frame at 0 and 2 records at 1000.
inline testkit::TestPackage with_morph(testkit::TestPackage p) {
  Json& m = p.manifest;
  m["required_capabilities"].push_back("body-parameters");
  m["required_capabilities"].push_back("mesh-position-deltas");
  m["parameters"] = Json::array({body_parameter()});
  p.payloads.push_back(deformation_payload({{0, 0.1f, 0, 0}, {2, 0, 0.1f, 0}}));
  m["mesh_deformations"] =
      Json::array({Json{{"mesh", 0},
                        {"parameter", "body"},
                        {"frames", Json::array({Json{{"value", 0}, {"neutral", true}},
                                                Json{{"value", 1000},
                                                     {"payload", kFramePayload},
                                                     {"count", 2},
                                                     {"encoding", "sparse-position-f32"}}})}}});
  return p;
}
inline testkit::TestPackage with_morph(int minor) {
  return with_morph(testkit::make_valid_package(minor));
}

/// What the direct harness saw.
struct PassOutcome {
  core::Report report{1000};
  std::map<std::string, std::string> used_capabilities;
  int needed_minor = 0;
  bool errors() const { return report.has_errors(); }
  bool has(const std::string& code) const { return report.has_code(code); }
};

/// Facts that the target, option and mesh passes leave, read straight from
/// the (well-formed) test manifest.
inline void fill_facts(bem::Context& ctx, const Json& m) {
  if (m.contains("target") && m["target"].contains("components"))
    for (const auto& c : m["target"]["components"]) {
      bem::ComponentFacts f;
      f.mesh_name = c.value("mesh_name", "");
      if (c.contains("materials"))
        for (const auto& s : c["materials"])
          if (s.is_string()) f.materials.push_back(s.get<std::string>());
      ctx.components.push_back(f);
    }
  if (m.contains("option_groups"))
    for (const auto& g : m["option_groups"]) {
      std::vector<std::string> choices;
      for (const auto& c : g["choices"]) choices.push_back(c["id"].get<std::string>());
      ctx.groups.emplace_back(g["id"].get<std::string>(), choices);
    }
  if (m.contains("meshes"))
    for (const auto& mesh : m["meshes"]) {
      bem::MeshFacts f;
      f.vertex_count = mesh["vertex_count"].get<std::uint32_t>();
      f.index_size = mesh["index_size"].get<std::uint32_t>();
      for (const auto& a : mesh["attributes"])
        if (a[0] == 0 && a[1] == 0 && a[2] == 3) f.has_float3_position = true;
      f.valid = true;
      ctx.meshes.push_back(f);
    }
}

/// Run check_morphs, check_v15, the draws' material_overrides and the frame
/// payload checks directly (independent of the other passes).
inline PassOutcome run_passes(const testkit::TestPackage& p, bool skip = false, bool zip = false) {
  PassOutcome out;
  ByteVec bytes = zip ? p.zip() : p.binary();
  auto pkg = bem::Package::open(bytes, out.report);
  if (!pkg) {
    ADD_FAILURE() << "container did not open: " << out.report.to_text("pkg");
    return out;
  }
  auto parsed = core::parse_json_strict(pkg->manifest_text());
  if (!parsed) {
    ADD_FAILURE() << "manifest did not parse";
    return out;
  }
  const Json& m = *parsed;
  bem::ValidateOptions options;
  options.skip_validation = skip;
  bem::Context ctx(m, *pkg, out.report, options, p.minor, true);
  fill_facts(ctx, m);
  bem::check_morphs(ctx);
  bem::check_v15(ctx);
  for (std::size_t i = 0; i < m["meshes"].size(); ++i) {
    const Json& draws = m["meshes"][i]["draws"];
    for (std::size_t d = 0; d < draws.size(); ++d)
      if (draws[d].contains("material_overrides")) {
        std::string ptr =
            "/meshes/" + std::to_string(i) + "/draws/" + std::to_string(d) + "/material_overrides";
        ctx.use_capability("material-overrides-v1", ptr);
        bem::check_material_overrides(ctx, draws[d]["material_overrides"], ptr);
      }
  }
  for (const auto& [id, uses] : ctx.payload_uses)
    for (const auto& use : uses)
      if (use.role == bem::PayloadRole::kDeformation) {
        auto data = pkg->read_payload(id);
        if (!data) {
          ADD_FAILURE() << "payload " << id << " did not decode";
          continue;
        }
        bem::check_deformation_payload(ctx, id, data->bytes(), use);
      }
  out.used_capabilities = ctx.used_capabilities;
  out.needed_minor = ctx.needed_minor();
  return out;
}

/// The whole validator, binary form.
inline bem::ValidationResult validate(const testkit::TestPackage& p, bool skip = false) {
  bem::ValidateOptions options;
  options.skip_validation = skip;
  auto bytes = p.binary();
  return bem::validate_package(bytes, options);
}
inline bem::ValidationResult validate_zip(const testkit::TestPackage& p, bool skip = false) {
  bem::ValidateOptions options;
  options.skip_validation = skip;
  auto bytes = p.zip();
  return bem::validate_package(bytes, options);
}

}  // namespace charkit::morphtest
