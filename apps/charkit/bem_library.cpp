// `charkit bem library DIR list|add|remove|enable|disable|set`: a player's
// package library, a folder with runtime.ini and packages/ (docs/bem/library.md).
// Every edit of runtime.ini keeps the rest of the file byte for byte
// (bem::RuntimeIni) and is written whole or not at all (write + rename).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "charkit/bem/drivers.h"
#include "charkit/bem/error_codes.h"
#include "charkit/bem/load.h"
#include "charkit/bem/plan.h"
#include "charkit/bem/runtime_ini.h"
#include "charkit/bem/settings.h"
#include "charkit/core/error_codes.h"
#include "charkit/core/json.h"
#include "charkit/core/mapped_file.h"
#include "cli_output.h"
#include "commands.h"
#include "error_codes.h"
#include "output_file.h"
#include "printable.h"

namespace charkit::app {
namespace {

namespace fs = std::filesystem;
using core::Json;

struct LibraryArgs {
  std::string dir;
  std::string action;
  std::string target;  ///< PACKAGE for add, ID otherwise
  std::string options;
  std::string parameters;
  std::vector<std::string> hotkeys;  ///< DRIVER=KEY
  bool options_given = false, parameters_given = false;
  bool force = false;
  bool json = false;
};

std::string ini_path(const LibraryArgs& a) {
  return (fs::path(a.dir) / "runtime.ini").string();
}

// runtime.ini of the library ("" when the file does not exist yet).
core::Result<bem::RuntimeIni> read_ini(const LibraryArgs& a) {
  std::error_code ec;
  if (!fs::exists(ini_path(a), ec)) return bem::RuntimeIni::parse("");
  auto file = core::MappedFile::open(ini_path(a));
  if (!file) return std::move(file).error();
  if (file->bytes().size() > bem::kRuntimeIniMaxBytes)
    return core::make_error(bem::codes::RUNTIME_INI_TOO_LARGE, "runtime.ini is larger than 1 MiB");
  return bem::RuntimeIni::parse(core::as_chars(file->bytes()));
}

core::Status write_ini(const LibraryArgs& a, const bem::RuntimeIni& ini) {
  const std::string& t = ini.text();
  return write_output_file(ini_path(a), std::vector<std::uint8_t>(t.begin(), t.end()));
}

/// A package of the library, loaded (or why not).
struct Entry {
  bem::ModSettings mod;
  std::string file;  ///< absolute path of the package
  std::vector<std::uint8_t> bytes;
  std::optional<bem::LoadedPackage> loaded;
  std::string problem;  ///< why it cannot be used ("" when it can)
  std::optional<bem::Settings> settings;
  std::optional<bem::Plan> plan;
  std::string character;
  std::vector<std::string> replaces;  ///< mesh names of the components it replaces
};

void load_entry(const LibraryArgs& a, Entry& e) {
  if (e.mod.package.empty()) {
    e.problem = "no package= key";
    return;
  }
  const fs::path p = fs::path(e.mod.package).is_absolute() ? fs::path(e.mod.package)
                                                           : fs::path(a.dir) / e.mod.package;
  e.file = p.string();
  auto file = core::MappedFile::open(e.file);
  if (!file) {
    e.problem = file.error().message;
    return;
  }
  e.bytes.assign(file->bytes().begin(), file->bytes().end());
  e.loaded = bem::load_package(core::Bytes(e.bytes));
  if (!e.loaded->ok()) {
    e.problem = "invalid: " + e.loaded->error;
    return;
  }
  const bem::Model& model = *e.loaded->model;
  auto s = bem::parse_settings(model, e.mod.options, e.mod.parameters_saved);
  if (!s) {
    e.problem = "saved settings: " + s.error().message;
    return;
  }
  e.settings = std::move(*s);
  auto plan = bem::make_plan(model, *e.settings, {});
  if (!plan) {
    e.problem = "cannot be planned: " + plan.error().message;
    return;
  }
  e.plan = std::move(*plan);
  const Json& target = e.loaded->manifest.value("target", Json::object());
  e.character = target.is_object() ? target.value("character_id", std::string()) : "";
  for (const bem::PlannedComponent& pc : e.plan->components)
    if (pc.op == bem::Operation::kReplace)
      e.replaces.push_back(model.components[pc.target].mesh_name);
}

core::Result<std::vector<Entry>> entries(const LibraryArgs& a, const bem::RuntimeIni& ini) {
  std::vector<Entry> out;
  for (const bem::IniSection& s : ini.sections()) {
    if (s.name.rfind("Mod.", 0) != 0) continue;
    auto mod = bem::read_mod_settings(ini, s.name.substr(4));
    if (!mod) return std::move(mod).error();
    Entry e;
    e.mod = std::move(*mod);
    load_entry(a, e);
    out.push_back(std::move(e));
  }
  return out;
}

// An error about runtime.ini (reading it, a [Mod.*] rule, an edit).
int fail(const LibraryArgs& a, const core::Error& e, int exit) {
  return report_error(ini_path(a), e, exit);
}

// runtime.ini could not be read: I/O (exit 2) or its content (exit 1).
int fail_ini(const LibraryArgs& a, const core::Error& e) {
  return fail(a, e, core::is_io_error(e) ? kExitUsage : kExitInvalid);
}

int run_list(const LibraryArgs& a) {
  auto ini = read_ini(a);
  if (!ini) return fail_ini(a, ini.error());
  auto es = entries(a, *ini);
  if (!es) return fail(a, es.error(), kExitInvalid);
  // Conflicts: two enabled packages replacing the same component (mesh name)
  // of the same character. Packages load in runtime.ini order, so the later
  // one's replacement is the one the player shows.
  Json conflicts = Json::array();
  std::string conflict_text;
  for (std::size_t i = 0; i < es->size(); ++i)
    for (std::size_t j = i + 1; j < es->size(); ++j) {
      const Entry &x = (*es)[i], &y = (*es)[j];
      if (!x.mod.enabled.value_or(false) || !y.mod.enabled.value_or(false)) continue;
      if (!x.problem.empty() || !y.problem.empty() || x.character != y.character) continue;
      for (const std::string& mesh : x.replaces)
        if (std::find(y.replaces.begin(), y.replaces.end(), mesh) != y.replaces.end()) {
          conflicts.push_back(Json{{"character", x.character},
                                   {"component", mesh},
                                   {"packages", Json::array({x.mod.id, y.mod.id})},
                                   {"wins", y.mod.id}});
          conflict_text += "conflict: " + printable(x.mod.id) + " and " + printable(y.mod.id) +
                           " both replace " + printable(mesh) + " of " +
                           printable(x.character.empty() ? "(no character id)" : x.character) +
                           "; " + printable(y.mod.id) +
                           " wins (later in runtime.ini, loaded last)\n";
        }
    }
  if (a.json) {
    Json list = Json::array();
    for (const Entry& e : *es) {
      Json j{{"id", e.mod.id},
             {"enabled", e.mod.enabled.value_or(false)},
             {"package", e.mod.package},
             {"valid", e.problem.empty()}};
      if (!e.problem.empty()) j["problem"] = e.problem;
      if (e.loaded && e.loaded->model) {
        const bem::Model& m = *e.loaded->model;
        j["version"] = "1." + std::to_string(m.minor);
        j["character"] = e.character;
        if (e.settings) {
          j["options"] = bem::format_options(m, *e.settings);
          j["parameters"] = bem::format_parameters(m, *e.settings);
        }
        j["replaces"] = e.replaces;
      }
      j["hotkeys"] = bem::format_pairs(e.mod.hotkeys);
      j["drivers"] = bem::format_pairs(e.mod.drivers);
      j["warnings"] = e.mod.warnings;
      list.push_back(std::move(j));
    }
    print_json(Json{{"library", a.dir}, {"packages", list}, {"conflicts", conflicts}});
    return kExitOk;
  }
  for (const Entry& e : *es) {
    std::string line = printable(e.mod.id) + ": " +
                       (e.mod.enabled.value_or(false) ? "enabled" : "disabled") + ", " +
                       printable(e.mod.package);
    if (!e.problem.empty()) {
      line += " — " + printable(e.problem);
    } else {
      const bem::Model& m = *e.loaded->model;
      line += ", BEM 1." + std::to_string(m.minor) + ", valid, " +
              printable(e.character.empty() ? "(no character id)" : e.character) + "\n  options " +
              printable(bem::format_options(m, *e.settings)) + "; parameters " +
              printable(bem::format_parameters(m, *e.settings));
      if (!e.mod.hotkeys.empty())
        line += "\n  hotkeys " + printable(bem::format_pairs(e.mod.hotkeys));
      if (!e.mod.drivers.empty())
        line += "\n  drivers " + printable(bem::format_pairs(e.mod.drivers));
    }
    std::cout << line << "\n";
    for (const std::string& w : e.mod.warnings)
      report_warning(ini_path(a), bem::codes::RUNTIME_INI_HOTKEY, w);
  }
  std::cout << conflict_text;
  if (es->empty()) std::cout << "no packages in " << printable(a.dir) << "\n";
  return kExitOk;
}

std::string package_id_of(const bem::LoadedPackage& p) {
  return p.manifest.is_object() ? p.manifest.value("package_id", std::string()) : "";
}

int run_add(const LibraryArgs& a) {
  auto file = core::MappedFile::open(a.target);
  if (!file) return report_error(a.target, file.error(), kExitUsage);
  std::vector<std::uint8_t> bytes(file->bytes().begin(), file->bytes().end());
  bem::LoadedPackage loaded = bem::load_package(core::Bytes(bytes));
  std::string id = package_id_of(loaded);
  if (!loaded.ok() && !a.force) {
    report_issues(a.target, loaded.validation.report);
    return report_error(a.target, codes::BEM_LIBRARY_INVALID_PACKAGE,
                        "not added: " + loaded.error + " (--force adds it anyway, disabled)",
                        kExitInvalid);
  }
  if (id.empty()) id = fs::path(a.target).stem().string();
  auto ini = read_ini(a);
  if (!ini) return fail_ini(a, ini.error());
  if (ini->section("Mod." + id))
    return report_error(a.target, codes::BEM_LIBRARY_EXISTS,
                        "the library already has a package \"" + id + "\" (remove it first)",
                        kExitUsage);
  const std::string rel = "packages/" + fs::path(a.target).filename().string();
  std::error_code ec;
  fs::create_directories(fs::path(a.dir) / "packages", ec);
  if (fs::exists(fs::path(a.dir) / rel, ec))
    return report_error(a.target, codes::BEM_LIBRARY_EXISTS,
                        "the library already has a file " + rel, kExitUsage);
  if (auto st = write_output_file((fs::path(a.dir) / rel).string(), bytes); !st)
    return report_error(a.dir, st.error(), kExitUsage);
  const std::string sec = "Mod." + id;
  for (auto [k, v] : std::vector<std::pair<std::string, std::string>>{
           {"enabled", loaded.ok() ? "true" : "false"}, {"package", rel}})
    if (auto st = ini->set(sec, k, v); !st) return fail(a, st.error(), kExitInvalid);
  if (auto st = write_ini(a, *ini); !st) return report_error(ini_path(a), st.error(), kExitUsage);
  std::cout << "added " << printable(id) << " (" << rel << ", "
            << (loaded.ok() ? "enabled" : "invalid, disabled") << ")\n";
  return kExitOk;
}

int run_edit(const LibraryArgs& a) {
  auto ini = read_ini(a);
  if (!ini) return fail_ini(a, ini.error());
  const std::string sec = "Mod." + a.target;
  if (!ini->section(sec)) {
    std::string ids;
    for (const bem::IniSection& s : ini->sections())
      if (s.name.rfind("Mod.", 0) == 0) ids += (ids.empty() ? "" : ", ") + s.name.substr(4);
    return report_error(a.dir, codes::BEM_LIBRARY_UNKNOWN,
                        "no package \"" + a.target +
                            "\" in the library (it has: " + (ids.empty() ? "none" : ids) + ")",
                        kExitUsage);
  }
  if (a.action == "remove") {
    const std::string pkg = ini->get(sec, "package").value_or("");
    ini->remove_section(sec);
    if (auto st = write_ini(a, *ini); !st) return report_error(ini_path(a), st.error(), kExitUsage);
    std::error_code ec;
    if (!pkg.empty() && fs::path(pkg).is_relative() && pkg.rfind("packages/", 0) == 0)
      fs::remove(fs::path(a.dir) / pkg, ec);
    std::cout << "removed " << printable(a.target) << "\n";
    return kExitOk;
  }
  if (a.action == "enable" || a.action == "disable") {
    if (auto st = ini->set(sec, "enabled", a.action == "enable" ? "true" : "false"); !st)
      return fail(a, st.error(), kExitInvalid);
  } else {  // set
    auto mod = bem::read_mod_settings(*ini, a.target);
    if (!mod) return fail(a, mod.error(), kExitInvalid);
    Entry e;
    e.mod = *mod;
    load_entry(a, e);
    const bem::Model* model = e.loaded && e.loaded->model ? &*e.loaded->model : nullptr;
    if ((a.options_given || a.parameters_given || !a.hotkeys.empty()) && !model)
      return report_error(a.dir, codes::BEM_LIBRARY_INVALID_PACKAGE,
                          "\"" + a.target + "\": " + e.problem, kExitInvalid);
    if (a.options_given || a.parameters_given) {
      auto s = bem::parse_settings(*model, a.options_given ? a.options : mod->options,
                                   a.parameters_given ? a.parameters : mod->parameters_saved);
      if (!s) return report_error(a.dir, s.error(), kExitUsage);
      for (const bem::SettingsWarning& w : s->warnings) report_warning(a.dir, w.code, w.message);
      if (a.options_given)
        if (auto st = ini->set(sec, "options", bem::format_options(*model, *s)); !st)
          return fail(a, st.error(), kExitInvalid);
      if (a.parameters_given)
        if (auto st = ini->set(sec, "parameters_saved", bem::format_parameters(*model, *s)); !st)
          return fail(a, st.error(), kExitInvalid);
    }
    if (!a.hotkeys.empty()) {
      const bem::DriverSet drivers = bem::read_drivers(e.loaded->manifest, *model);
      auto pairs = mod->hotkeys;
      for (const std::string& h : a.hotkeys) {
        const std::size_t eq = h.find('=');
        const std::string driver = h.substr(0, eq);
        const std::string key = eq == std::string::npos ? "" : h.substr(eq + 1);
        if (eq == std::string::npos ||
            std::none_of(drivers.drivers.begin(), drivers.drivers.end(),
                         [&](const bem::Driver& d) { return d.id == driver; }))
          return report_error(a.dir, bem::codes::RUNTIME_INI_HOTKEY,
                              "--hotkey " + h + ": DRIVER=KEY with a driver of the package",
                              kExitUsage);
        auto it = std::find_if(pairs.begin(), pairs.end(),
                               [&](const auto& p) { return p.first == driver; });
        if (it != pairs.end())
          it->second = key;
        else
          pairs.emplace_back(driver, key);
      }
      bem::RuntimeIni trial = *ini;
      if (auto st = trial.set(sec, "driver_hotkeys", bem::format_pairs(pairs)); !st)
        return fail(a, st.error(), kExitInvalid);
      // The same checks as reading: key names, one key per driver, no shared key.
      // A refusal is about the --hotkey values: the trial file is never
      // written, so its byte and line would point nowhere.
      auto checked = bem::read_mod_settings(trial, a.target);
      if (!checked) {
        core::Error refusal = std::move(checked).error();
        refusal.location = core::Location{};
        if (refusal.message.rfind("line ", 0) == 0)  // "line N: …" of the trial file
          refusal.message.erase(0, refusal.message.find(": ") + 2);
        return report_error("--hotkey", refusal, kExitUsage);
      }
      for (const std::string& w : checked->warnings)
        report_warning(a.dir, bem::codes::RUNTIME_INI_HOTKEY, w);
      if (auto st = ini->set(sec, "driver_hotkeys", bem::format_pairs(checked->hotkeys)); !st)
        return fail(a, st.error(), kExitInvalid);
    }
  }
  if (auto st = write_ini(a, *ini); !st) return report_error(ini_path(a), st.error(), kExitUsage);
  std::cout << a.action << " " << printable(a.target) << ": runtime.ini updated\n";
  return kExitOk;
}

int run_library(const LibraryArgs& a) {
  const bool edit =
      a.action == "remove" || a.action == "enable" || a.action == "disable" || a.action == "set";
  if (a.action != "list" && a.action != "add" && !edit)
    return report_error(
        a.dir, codes::BEM_LIBRARY_USAGE,
        "unknown action \"" + a.action + "\" (list, add, remove, enable, disable, set)",
        kExitUsage);
  // Only `add` makes a library; the others need the folder to be there.
  std::error_code ec;
  if (a.action != "add" && !fs::is_directory(a.dir, ec))
    return report_error(a.dir, core::codes::IO_OPEN, "no such library folder (`add` creates one)",
                        kExitUsage);
  if (a.action == "list") return run_list(a);
  if (a.target.empty())
    return report_error(a.dir, codes::BEM_LIBRARY_USAGE, a.action + " needs a package or an id",
                        kExitUsage);
  if (a.action == "add") return run_add(a);
  return run_edit(a);
}

}  // namespace

void add_bem_library_command(CLI::App& bem, int& exit_code) {
  auto args = std::make_shared<LibraryArgs>();
  CLI::App* lib = bem.add_subcommand(
      "library",
      "A player's package library (DIR/runtime.ini + DIR/packages/): list the packages with "
      "their validity, saved settings and conflicts; add, remove, enable, disable; set saved "
      "options, parameters and driver hotkeys. Edits keep the rest of runtime.ini byte for byte");
  lib->add_option("dir", args->dir, "Library folder")->required()->type_name("DIR");
  lib->add_option("action", args->action, "list, add, remove, enable, disable or set")
      ->required()
      ->type_name("ACTION");
  lib->add_option("target", args->target, "add: the package file; others: the package id")
      ->type_name("PACKAGE|ID");
  lib->add_option("--options", args->options, "set: saved options 'group:choice&…'")
      ->type_name("S")
      ->each([args](const std::string&) { args->options_given = true; });
  lib->add_option("--parameters", args->parameters, "set: saved parameters 'id:tick&…'")
      ->type_name("S")
      ->each([args](const std::string&) { args->parameters_given = true; });
  lib->add_option("--hotkey", args->hotkeys,
                  "set: a driver's start/stop key, DRIVER=KEY (F1, CTRL+F2, NUMPAD1, ADD, =; "
                  "empty: unbound); repeatable")
      ->type_name("DRIVER=KEY");
  lib->add_flag("--force", args->force, "add: add an invalid package anyway (disabled)");
  lib->add_flag("--json", args->json, "list: print JSON");
  lib->footer(
      "Saved settings are normalised as `bem select` does. A conflict is two enabled packages "
      "replacing the same component of the same character; the later one in runtime.ini wins. "
      "docs/bem/library.md.\nExit status: 0 done, 1 invalid package or runtime.ini, 2 usage or "
      "I/O error.");
  lib->callback([args, &exit_code] { exit_code = run_library(*args); });
}

}  // namespace charkit::app
