// `charkit bem select`: the plan of one selection (settings strings →
// normalised settings → components, draws, textures, deformations and the
// payloads they use). Data comes from the library (bem::load_package,
// bem::parse_settings, bem::make_plan); this file maps it to text or JSON
// (schema: docs/bem.md, "charkit bem select --json").
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "charkit/bem/error_codes.h"
#include "charkit/bem/load.h"
#include "charkit/bem/plan.h"
#include "charkit/bem/settings.h"
#include "charkit/core/json.h"
#include "charkit/core/mapped_file.h"
#include "cli_errors.h"
#include "commands.h"
#include "error_codes.h"
#include "package_input.h"
#include "printable.h"

namespace charkit::app {
namespace {

using core::Json;

struct SelectArgs {
  std::string file;
  std::string options;
  std::string parameters;
  std::string resource;
  std::string platform;
  bool json = false;
  bool skip_validation = false;
};

Json error_json(const std::string& file, const std::string& code, const std::string& message,
                const core::Location& loc = {}) {
  Json e = Json{{"code", code}, {"message", message}};
  if (loc.offset) e["column"] = *loc.offset;
  if (!loc.pointer.empty()) e["pointer"] = loc.pointer;
  return Json{{"file", file}, {"error", std::move(e)}};
}

// The code: a declared one, or that of an error a call returned; never a literal.
int fail(const SelectArgs& a, int exit, const char* code, const std::string& message,
         const core::Location& loc = {}) = delete;
int fail(const SelectArgs& a, int exit, const std::string& code, const std::string& message,
         const core::Location& loc = {}) {
  if (a.json) print_json(error_json(a.file, code, message, loc));
  print_bem_error(a.file, code, message,
                  !loc.pointer.empty() ? loc.pointer
                  : loc.offset         ? "column " + std::to_string(*loc.offset)
                                       : std::string());
  return exit;
}

Json frame_json(const bem::PlannedFrame& f) {
  return Json{{"frame", f.frame},     {"value", f.value},
              {"neutral", f.neutral}, {"payload", f.neutral ? Json(nullptr) : Json(f.payload)},
              {"count", f.count},     {"weight", f.weight}};
}

Json plan_json(const SelectArgs& a, const bem::Model& model, const bem::Settings& s,
               const bem::Plan& plan) {
  Json j = Json::object();
  j["file"] = a.file;
  j["version"] = "1." + std::to_string(model.minor);
  j["settings"] = bem::format_options(model, s);
  j["parametersSettings"] = bem::format_parameters(model, s);
  j["resource"] = plan.resource.empty() ? Json(nullptr) : Json(plan.resource);
  j["platform"] = plan.platform.empty() ? Json(nullptr) : Json(plan.platform);
  Json eff = Json::object();
  for (std::size_t g = 0; g < model.groups.size(); ++g)
    eff[model.groups[g].id] =
        s.effective[g] ? Json(model.groups[g].choices[*s.effective[g]]) : Json(nullptr);
  j["effective"] = std::move(eff);

  Json comps = Json::array();
  for (const bem::PlannedComponent& pc : plan.components) {
    Json c = Json{{"target", pc.target},
                  {"meshName", model.components[pc.target].mesh_name},
                  {"operation", bem::operation_name(pc.op)},
                  {"candidate", pc.candidate}};
    if (pc.op == bem::Operation::kReplace) {
      c["mesh"] = pc.mesh;
      c["draws"] = pc.draws;
    }
    comps.push_back(std::move(c));
  }
  j["components"] = std::move(comps);

  Json draws = Json::array();
  for (const auto& [m, d] : plan.draws) draws.push_back(Json::array({m, d}));
  j["draws"] = std::move(draws);

  Json meshes = Json::array();
  for (const bem::PlannedMesh& pm : plan.meshes) {
    Json segs = Json::array();
    for (const bem::IndexSegment& sg : pm.segments)
      segs.push_back(Json{{"draw", sg.draw},
                          {"payload", sg.payload},
                          {"sourceStart", sg.source_start},
                          {"start", sg.start},
                          {"count", sg.count}});
    Json streams = Json::array();
    for (const auto& sp : pm.stream_payloads) streams.push_back(sp ? Json(*sp) : Json(nullptr));
    meshes.push_back(Json{{"mesh", pm.mesh},
                          {"components", pm.components},
                          {"indexCount", pm.index_count},
                          {"segments", std::move(segs)},
                          {"streams", std::move(streams)}});
  }
  j["meshes"] = std::move(meshes);

  Json tex = Json::array();
  for (const bem::TextureBinding& b : plan.textures) {
    Json t = Json::object();
    if (b.source == bem::TextureBinding::Source::kDraw) {
      t["source"] = "draw";
      t["mesh"] = b.mesh;
      t["draw"] = b.draw;
    } else {
      t["source"] = "keep";
      t["override"] = b.override_index;
    }
    t["component"] = b.component;
    t["materialSlot"] = b.material_slot;
    t["materialName"] = b.material_name;
    t["entry"] = b.entry;
    t["slot"] = b.slot ? Json(model.slots[*b.slot].id) : Json(nullptr);
    t["originalName"] = b.original_name;
    t["texture"] = b.texture ? Json(*b.texture) : Json(nullptr);
    tex.push_back(std::move(t));
  }
  j["textures"] = std::move(tex);

  Json params = Json::object();
  for (std::size_t i = 0; i < model.parameters.size(); ++i)
    params[model.parameters[i].id] = plan.parameter_ticks[i];
  j["parameters"] = std::move(params);

  Json defs = Json::array();
  for (const bem::PlannedMesh& pm : plan.meshes)
    for (const bem::PlannedChannel& ch : pm.channels) {
      Json frames = Json::array();
      for (const bem::PlannedFrame& f : ch.frames) frames.push_back(frame_json(f));
      defs.push_back(Json{{"deformation", ch.deformation},
                          {"mesh", ch.mesh},
                          {"parameter", model.parameters[ch.parameter].id},
                          {"tick", ch.tick},
                          {"available", ch.available},
                          {"frames", std::move(frames)}});
    }
  j["deformations"] = std::move(defs);
  j["payloads"] = plan.payloads;

  Json warns = Json::array();
  for (const bem::SettingsWarning& w : s.warnings)
    warns.push_back(Json{{"code", w.code},
                         {"message", w.message},
                         {"string", w.in_parameters ? "parameters" : "options"},
                         {"column", w.column}});
  j["warnings"] = std::move(warns);
  return j;
}

std::string plan_text(const SelectArgs& a, const bem::Model& model, const bem::Settings& s,
                      const bem::Plan& plan) {
  std::string t;
  auto line = [&t](const std::string& x) { t += x + "\n"; };
  line(printable(a.file) + ": BEM 1." + std::to_string(model.minor) +
       (plan.resource.empty()
            ? ""
            : ", resource " + printable(plan.resource) + " on " + printable(plan.platform)));
  line("options:    " + printable(bem::format_options(model, s)));
  line("parameters: " + printable(bem::format_parameters(model, s)));
  for (std::size_t g = 0; g < model.groups.size(); ++g)
    line("  group " + printable(model.groups[g].id) + " = " +
         (s.effective[g]
              ? printable(model.groups[g].choices[*s.effective[g]])
              : "(unavailable; saved " + printable(model.groups[g].choices[s.saved[g]]) + ")"));
  line("components:");
  for (const bem::PlannedComponent& pc : plan.components) {
    std::string x = "  " + std::to_string(pc.target) + " " +
                    printable(model.components[pc.target].mesh_name) + ": " +
                    bem::operation_name(pc.op);
    if (pc.op == bem::Operation::kReplace) {
      x += " with mesh " + std::to_string(pc.mesh) + ", draws";
      for (std::uint32_t d : pc.draws) x += " " + std::to_string(d);
    }
    line(x);
  }
  for (const bem::PlannedMesh& pm : plan.meshes) {
    line("mesh " + std::to_string(pm.mesh) + ": " + std::to_string(pm.index_count) + " indices");
    for (const bem::IndexSegment& sg : pm.segments)
      line("  draw " + std::to_string(sg.draw) + ": start " + std::to_string(sg.start) +
           ", count " + std::to_string(sg.count) + " (payload " + std::to_string(sg.payload) + ")");
    for (const bem::PlannedChannel& ch : pm.channels) {
      std::string x = "  morph " + printable(model.parameters[ch.parameter].id) + " at " +
                      std::to_string(ch.tick) + (ch.available ? "" : " (unavailable: neutral)") +
                      ":";
      for (const bem::PlannedFrame& f : ch.frames)
        x += " frame " + std::to_string(f.value) + " × " + std::to_string(f.weight);
      line(x);
    }
  }
  if (!plan.textures.empty()) line("textures:");
  for (const bem::TextureBinding& b : plan.textures) {
    std::string x = b.source == bem::TextureBinding::Source::kDraw
                        ? "  mesh " + std::to_string(b.mesh) + " draw " + std::to_string(b.draw)
                        : "  keep component " + std::to_string(b.component);
    x += " " + printable(b.original_name.empty() ? "(unnamed)" : b.original_name) + " <- " +
         (b.texture ? "texture " + std::to_string(*b.texture) : std::string("original"));
    if (b.slot) x += " (slot " + printable(model.slots[*b.slot].id) + ")";
    line(x);
  }
  std::string p = "payloads:";
  for (std::uint32_t id : plan.payloads) p += " " + std::to_string(id);
  line(p + " (" + std::to_string(plan.payloads.size()) + " of " +
       std::to_string(model.payload_sizes.size()) + ")");
  return t;
}

int run_select(const SelectArgs& a) {
  auto file = PackageInput::open(a.file);
  if (!file)
    return fail(a, input_error_exit_code(file.error()), file.error().code, file.error().message);
  bem::ValidateOptions vo;
  vo.skip_validation = a.skip_validation;
  vo.input_hints = file->hints();
  bem::LoadedPackage loaded = bem::load_package(file->bytes(), vo);
  if (!loaded.ok()) {
    const core::Report& r = loaded.validation.report;
    if (a.json) {
      Json j = error_json(a.file, codes::BEM_SELECT_INVALID_PACKAGE, loaded.error);
      j["valid"] = loaded.validation.valid();
      j["issues"] = Json::parse(r.to_json_issues());
      print_json(std::move(j));
    }
    report_issues(a.file, r);
    return report_error(a.file, codes::BEM_SELECT_INVALID_PACKAGE, "cannot select: " + loaded.error,
                        kExitInvalid);
  }
  const bem::Model& model = *loaded.model;
  auto settings = bem::parse_settings(model, a.options, a.parameters);
  if (!settings) {
    const core::Error& e = settings.error();
    return fail(a, kExitUsage, e.code, e.message, e.location);
  }
  auto plan = bem::make_plan(model, *settings, bem::PlanOptions{a.resource, a.platform});
  if (!plan) {
    const core::Error& e = plan.error();
    // A resource or platform the package lacks is a usage error; anything else
    // means the package itself cannot be planned.
    const bool usage =
        e.code == bem::codes::BEM_PLAN_RESOURCE || e.code == bem::codes::BEM_PLAN_PLATFORM;
    return fail(a, usage ? kExitUsage : kExitInvalid, e.code, e.message, e.location);
  }
  if (a.json) {
    print_json(plan_json(a, model, *settings, *plan));
  } else {
    // Warnings go to stderr: `FILE: options, column N: warning CODE: message`.
    for (const bem::SettingsWarning& w : settings->warnings)
      report_warning(a.file, w.code, w.message,
                     std::string(w.in_parameters ? "parameters" : "options") + ", column " +
                         std::to_string(w.column));
    std::cout << plan_text(a, model, *settings, *plan);
  }
  return kExitOk;
}

}  // namespace

void add_bem_select_command(CLI::App& bem, int& exit_code) {
  auto args = std::make_shared<SelectArgs>();
  CLI::App* select = bem.add_subcommand(
      "select",
      "Plan one selection of a valid package: normalise the saved settings, then list the "
      "components, selected draws, texture bindings, deformations and the payloads they use");
  select->add_option("file", args->file, "Package file (.bem, .zip)")
      ->required()
      ->type_name("FILE");
  select
      ->add_option("--options", args->options,
                   "Saved option string 'group:choice&group:choice' (1.0: an appearance id); "
                   "missing groups take their default")
      ->type_name("S");
  select
      ->add_option(
          "--parameters", args->parameters,
          "Saved parameter string 'id:tick&id:tick'; missing parameters take their default")
      ->type_name("S");
  select
      ->add_option("--resource", args->resource,
                   "1.4: plan only the components of this resource id")
      ->type_name("R");
  select
      ->add_option("--platform", args->platform,
                   "1.4: the platform the resource is planned for (windows-x64, android-arm64)")
      ->type_name("P");
  select->add_flag("--json", args->json, "Print the plan as JSON (schema in docs/bem.md)");
  select->add_flag("--skip-validation", args->skip_validation,
                   "Apply the user's 'disable model validation' switch while validating");
  select->footer(
      "Unknown groups, choices, parameters and invalid ticks are normalised to the default with a "
      "warning (docs/bem/select.md).\nExit status: 0 planned, 1 invalid package, 2 usage or I/O "
      "error (including a syntax error in --options/--parameters, reported with its column, and an "
      "unknown --resource or unserved --platform).");
  select->callback([args, &exit_code] { exit_code = run_select(*args); });
}

}  // namespace charkit::app
