// `charkit bem simulate`: a 1.5 package's dynamic drivers (§13) over time,
// one JSON line per step, through bem::DriverRuntime (docs/bem/runtime.md).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "charkit/bem/drivers.h"
#include "charkit/bem/error_codes.h"
#include "charkit/bem/load.h"
#include "charkit/bem/plan.h"
#include "charkit/bem/runtime_ini.h"
#include "charkit/bem/selection.h"
#include "charkit/bem/settings.h"
#include "charkit/core/error_codes.h"
#include "charkit/core/json.h"
#include "charkit/core/mapped_file.h"
#include "cli_output.h"
#include "commands.h"
#include "error_codes.h"
#include "package_input.h"
#include "printable.h"

namespace charkit::app {
namespace {

using core::Json;

struct SimulateArgs {
  std::string file;
  std::string options;
  std::string parameters;
  std::string events;
  std::string output;
  std::string ini;
  bool options_given = false, parameters_given = false;
  double dt = 1.0 / 30.0;
  std::uint64_t steps = 30;
  bool skip_validation = false;
  bool positions = false;
};

/// Payloads decoded once and kept: --positions re-reads the selection every
/// step, and only the frames' weights change between steps.
class CachedPayloads final : public bem::PayloadSource {
 public:
  explicit CachedPayloads(const bem::Package& package) : source_(package) {}
  core::Result<bem::PayloadData> read(std::uint32_t id) const override {
    auto it = cache_.find(id);
    if (it == cache_.end()) {
      auto r = source_.read(id);
      if (!r) return std::move(r).error();
      const core::Bytes b = r->bytes();
      it = cache_.emplace(id, std::vector<std::uint8_t>(b.begin(), b.end())).first;
    }
    return bem::PayloadData(core::Bytes(it->second));
  }

 private:
  bem::PackagePayloadSource source_;
  mutable std::map<std::uint32_t, std::vector<std::uint8_t>> cache_;
};

/// The deformed positions of the meshes with active channels at the frame's
/// ticks (§10 evaluation through bem::read_selection): [{"mesh", "positions"}].
core::Result<Json> positions_json(const bem::Model& model, const bem::Settings& base,
                                  const bem::RuntimeFrame& f, const bem::PayloadSource& source) {
  bem::Settings s = base;
  for (std::size_t p = 0; p < s.ticks.size() && p < f.ticks.size(); ++p)
    if (s.parameter_available[p]) s.ticks[p] = f.ticks[p];  // unavailable: neutral (§10)
  auto plan = bem::make_plan(model, s, {});
  if (!plan) return std::move(plan).error();
  bem::SelectionOptions so;
  so.read_textures = false;
  auto sel = bem::read_selection(model, *plan, source, so);
  if (!sel) return std::move(sel).error();
  Json out = Json::array();
  for (const bem::SelectedMesh& m : sel->meshes)
    if (!m.positions.empty()) out.push_back(Json{{"mesh", m.mesh}, {"positions", m.positions}});
  return out;
}

Json frame_json(std::uint64_t step, double time, const bem::Model& model,
                const bem::DriverRuntime& rt, const bem::RuntimeFrame& f) {
  Json line{{"step", step}, {"time", time}};
  Json state = bem::runtime_frame_json(model, rt, f);
  for (auto& [k, v] : state.items()) line[k] = std::move(v);
  return line;
}

int run_simulate(const SimulateArgs& a) {
  if (!(a.dt > 0.0) || !std::isfinite(a.dt) || a.dt > 3600.0)
    return report_error(a.file, codes::BEM_SIMULATE_OPTIONS,
                        "--dt must be a number of seconds in (0, 3600]", kExitUsage);
  if (a.steps > 10'000'000)
    return report_error(a.file, codes::BEM_SIMULATE_OPTIONS, "--steps is at most 10000000",
                        kExitUsage);
  auto file = PackageInput::open(a.file);
  if (!file) return report_error(a.file, file.error(), input_error_exit_code(file.error()));
  bem::ValidateOptions vo;
  vo.skip_validation = a.skip_validation;
  vo.input_hints = file->hints();
  bem::LoadedPackage loaded = bem::load_package(file->bytes(), vo);
  if (!loaded.ok()) {
    report_issues(a.file, loaded.validation.report);
    return report_error(a.file, codes::BEM_SIMULATE_INVALID_PACKAGE,
                        "cannot simulate: " + loaded.error, kExitInvalid);
  }
  const bem::Model& model = *loaded.model;
  // runtime.ini: the package's [Mod.<package_id>] gives the saved settings
  // the command line does not, and the drivers= states.
  bem::ModSettings mod;
  std::string options = a.options, parameters = a.parameters;
  if (!a.ini.empty()) {
    auto ini_file = core::MappedFile::open(a.ini);
    if (!ini_file) return report_error(a.ini, ini_file.error(), kExitUsage);
    auto ini = bem::RuntimeIni::parse(core::as_chars(ini_file->bytes()));
    if (!ini) return report_error(a.ini, ini.error(), kExitInvalid);
    const std::string id = loaded.manifest.value("package_id", std::string());
    auto m = bem::read_mod_settings(*ini, id);
    if (!m) return report_error(a.ini, m.error(), kExitInvalid);
    mod = std::move(*m);
    if (!ini->section("Mod." + id))
      report_warning(a.ini, codes::BEM_SIMULATE_OPTIONS,
                     "no [Mod." + id + "] section; defaults used");
    if (!a.options_given) options = mod.options;
    if (!a.parameters_given) parameters = mod.parameters_saved;
  }
  auto settings = bem::parse_settings(model, options, parameters);
  if (!settings) return report_error(a.file, settings.error(), kExitUsage);
  for (const bem::SettingsWarning& w : settings->warnings)
    report_warning(a.file, w.code, w.message,
                   std::string(w.in_parameters ? "parameters" : "options") + ", column " +
                       std::to_string(w.column));
  auto plan = bem::make_plan(model, *settings, {});
  if (!plan) return report_error(a.file, plan.error(), kExitInvalid);
  bem::DriverSet set = bem::read_drivers(loaded.manifest, model);
  for (const std::string& line : set.log) report_info(a.file, line);
  bem::DriverRuntime rt(std::move(set), model, settings->ticks,
                        bem::static_materials(model, *plan));
  for (const auto& [id, state] : mod.drivers) {
    const int d = rt.find(id);
    if (d < 0) {
      report_warning(a.ini, bem::codes::BEM_SIMULATE_EVENTS, "drivers=: no driver \"" + id + "\"");
      continue;
    }
    rt.start(static_cast<std::size_t>(d));
    if (state == "pause") rt.pause(static_cast<std::size_t>(d));
  }
  auto events = bem::parse_driver_events(a.events, rt.drivers());
  if (!events) return report_error("--events", events.error(), kExitUsage);

  // "-" is standard output, as everywhere else in the program.
  const bool to_file = !a.output.empty() && a.output != "-";
  std::ofstream file_out;
  std::ostream* os = &std::cout;
  if (!to_file) set_stdout_is_data();  // --json: the summary goes to stderr
  if (to_file) {
    file_out.open(a.output, std::ios::binary | std::ios::trunc);
    if (!file_out)
      return report_error(a.output, core::codes::IO_CREATE, "cannot create the output file",
                          kExitUsage);
    os = &file_out;
  }
  std::unique_ptr<CachedPayloads> payloads;
  if (a.positions) payloads = std::make_unique<CachedPayloads>(*loaded.package);
  std::size_t next = 0;
  constexpr double kEps = 1e-9;
  for (std::uint64_t k = 0; k <= a.steps; ++k) {
    const double t = static_cast<double>(k) * a.dt;
    // Events at or before this time apply before the state is reported and
    // before the step that starts here.
    while (next < events->size() && (*events)[next].time <= t + kEps) {
      const bem::DriverEvent& e = (*events)[next++];
      bem::apply_driver_control(rt, e.action, e.driver, e.arg);
    }
    const bem::RuntimeFrame frame = rt.frame();
    Json line = frame_json(k, t, model, rt, frame);
    if (a.positions) {
      auto pos = positions_json(model, *settings, frame, *payloads);
      if (!pos) return report_error(a.file, pos.error(), kExitInvalid);
      line["positions"] = std::move(*pos);
    }
    *os << line.dump() << '\n';
    if (k < a.steps) rt.step(a.dt);
  }
  os->flush();
  if (!*os)
    return report_error(to_file ? a.output : "-", core::codes::IO_WRITE, "cannot write the output",
                        kExitUsage);
  if (output_mode().json) {
    Json drivers = Json::array();
    for (const auto& d : rt.drivers()) drivers.push_back(d.id);
    print_summary(Json{{"input", a.file},
                       {"output", to_file ? a.output : std::string("-")},
                       {"lines", a.steps + 1},
                       {"dt", a.dt},
                       {"drivers", std::move(drivers)}});
  } else if (to_file) {
    report_info(a.output, std::to_string(a.steps + 1) + " lines, " +
                              std::to_string(rt.drivers().size()) + " drivers");
  }
  return kExitOk;
}

}  // namespace

void add_bem_simulate_command(CLI::App& bem, int& exit_code) {
  auto args = std::make_shared<SimulateArgs>();
  CLI::App* sim = bem.add_subcommand(
      "simulate",
      "Run a 1.5 package's dynamic drivers (§13) over time: one JSON line per step with every "
      "driver's state, phase, w and binding outputs, the parameter ticks, the material values "
      "and the sound events");
  sim->add_option("file", args->file, "Package file (.bem, .zip)")->required()->type_name("FILE");
  sim->add_option("--options", args->options, "Saved option string 'group:choice&…'")
      ->type_name("S")
      ->each([args](const std::string&) { args->options_given = true; });
  sim->add_option("--parameters", args->parameters,
                  "Saved parameter string 'id:tick&…': the manual ticks drivers release to")
      ->type_name("S")
      ->each([args](const std::string&) { args->parameters_given = true; });
  sim->add_option("--ini", args->ini,
                  "A runtime.ini: its [Mod.<package id>] gives options, parameters_saved and the "
                  "drivers= states (id:play, id:pause) unless the command line says otherwise")
      ->type_name("runtime.ini");
  sim->add_option("--events", args->events,
                  "Controls 'TIME:ACTION:DRIVER[:ARG]&…', actions start, pause, stop, toggle, "
                  "speed (e.g. '0:start:glow&2.5:speed:glow:2&4:stop:glow'); an event applies "
                  "before the step that starts at its time")
      ->type_name("EVENTS");
  sim->add_option("--dt", args->dt, "Seconds per step")->capture_default_str();
  sim->add_option("--steps", args->steps, "Steps after the state at time 0")->capture_default_str();
  sim->add_option("-o,--output", args->output,
                  "Write the NDJSON here instead of stdout (\"-\": stdout)")
      ->type_name("OUT.ndjson");
  sim->add_flag("--positions", args->positions,
                "Add each line's deformed positions of the meshes with active §10 channels "
                "(x y z per vertex)");
  sim->add_flag("--skip-validation", args->skip_validation,
                "Apply the user's 'disable model validation' switch while validating");
  sim->footer(
      "Line 0 is the state at time 0, line k the state after k steps of --dt. Without events the "
      "drivers start as their default_playing says. Schema and worked examples: "
      "docs/bem/runtime.md.\nExit status: 0 done, 1 invalid package, 2 usage or I/O error.");
  sim->callback([args, &exit_code] { exit_code = run_simulate(*args); });
}

}  // namespace charkit::app
