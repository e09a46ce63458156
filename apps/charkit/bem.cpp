// `charkit bem validate` and `charkit bem inspect`: the BEM commands.
// Data comes from the library (bem::validate_package, bem::inspect_package);
// this file only maps files to bytes and results to text or JSON.
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "charkit/bem/inspect.h"
#include "charkit/bem/validate.h"
#include "charkit/core/json.h"
#include "charkit/core/mapped_file.h"
#include "charkit/version.h"
#include "cli_output.h"
#include "commands.h"
#include "package_input.h"
#include "printable.h"

namespace charkit::app {
namespace {

using core::Json;

std::string version_text(const std::optional<int>& minor) {
  return minor ? "1." + std::to_string(*minor) : std::string("?");
}
Json version_json(const std::optional<int>& minor) {
  return minor ? Json("1." + std::to_string(*minor)) : Json(nullptr);
}

std::string plural(std::size_t n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

std::string counts_text(const core::Report& r) {
  return plural(r.num_errors(), "error") + ", " + plural(r.num_warnings(), "warning") + ", " +
         plural(r.num_infos(), "info");
}

// Container kind from the first bytes, for files the reader could not open.
// ---- validate -----------------------------------------------------------

struct ValidateArgs {
  std::vector<std::string> files;
  bool json = false;
  bool skip_validation = false;
  std::size_t max_issues = 200;
  unsigned threads = 0;
  std::uint64_t max_memory = 0;
};

enum class FileOutcome { kValid, kInvalid, kIoError };

// ---- the selection proof (docs/bem/proof.md) ----------------------------

/// 5400 -> "5,400".
std::string grouped(std::uint64_t n) {
  std::string digits = std::to_string(n), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string mib(std::uint64_t bytes) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return buf;
}

/// "selections: 12 legal combinations; worst case: 7 draws (outfit:b), …"
std::string selections_text(const bem::ProofSummary& p) {
  std::string t = "selections: " + p.combinations + " legal combination" +
                  (p.combinations == "1" ? "" : "s") + "; " + grouped(p.nodes) +
                  " decision-graph nodes";
  if (!p.has_worst_cases) return t + "\n";
  auto w = [](const bem::WorstCase& c) { return " (" + printable(c.witness) + ")"; };
  t += "; worst case: " + grouped(p.draws.value) + " draws" + w(p.draws) + ", " +
       grouped(p.indices.value) + " indices" + w(p.indices) + ", " +
       grouped(p.texture_bindings.value) + " texture bindings" + w(p.texture_bindings) +
       ", decoded " + mib(p.decoded_bytes.value) + w(p.decoded_bytes) + ", resident " +
       mib(p.resident_bytes.value) + w(p.resident_bytes);
  return t + "\n";
}

Json selections_json(const bem::ProofSummary& p) {
  Json j{{"combinations", p.combinations}, {"nodes", p.nodes}, {"states", p.states}};
  if (!p.has_worst_cases) return j;
  auto w = [](const bem::WorstCase& c) {
    return Json{{"value", c.value},
                {"limit", c.limit ? Json(*c.limit) : Json(nullptr)},
                {"witness", c.witness}};
  };
  j["draws"] = w(p.draws);
  j["indices"] = w(p.indices);
  j["textureBindings"] = w(p.texture_bindings);
  j["decodedBytes"] = w(p.decoded_bytes);
  j["residentBytes"] = w(p.resident_bytes);
  return j;
}

FileOutcome validate_one(const std::string& path, const ValidateArgs& args, Json& json_out,
                         std::string& text_out) {
  auto file = PackageInput::open(path);
  if (!file) {
    const core::Error& e = file.error();
    json_out = Json{{"uri", path},
                    {"valid", false},
                    {"ioError", Json{{"code", e.code}, {"message", e.message}}}};
    report_error(path, e, kExitUsage);
    text_out.clear();
    return FileOutcome::kIoError;
  }
  detail(path, "validating " + std::to_string(file->bytes().size()) + " bytes");
  bem::ValidateOptions options;
  options.skip_validation = args.skip_validation;
  options.max_issues = args.max_issues;
  options.threads = args.threads;
  options.max_memory_bytes = args.max_memory;
  options.input_hints = file->hints();
  // One file: its payloads as progress (a list shows files instead).
  StepProgress progress(path, "checking payloads");
  if (args.files.size() == 1) options.progress = progress.fn();
  bem::ValidationResult r = bem::validate_package(file->bytes(), options);
  progress.finish();
  const bem::ValidationSummary& s = r.summary;

  // The reader sets the kind and (binary) the header version once it could open
  // the container; before that the defaults say nothing about this file.
  bool opened = s.kind != bem::ContainerKind::kBinary || s.declared_minor.has_value();
  std::string container =
      opened ? bem::container_kind_name(s.kind) : bem::sniffed_container_name(file->bytes());
  bool single = opened && s.kind != bem::ContainerKind::kCollection;
  std::optional<int> effective, needed;
  if (single) {
    effective = s.effective_minor;
    needed = s.needed_minor;
  }

  Json j = Json::object();
  j["uri"] = path;
  j["container"] = container;
  j["declaredVersion"] = version_json(s.declared_minor);
  j["effectiveVersion"] = version_json(effective);
  j["neededVersion"] = version_json(needed);
  j["payloadCount"] = s.payload_count;
  j["valid"] = r.valid();
  j["issues"] = Json::parse(r.report.to_json_issues());
  Json members = Json::array();

  std::string subject = printable(path);
  // Issue messages quote manifest strings: escape them like everything else.
  std::string text = printable(r.report.to_text(subject), true);
  if (s.proof) {
    j["selections"] = selections_json(*s.proof);
    text += subject + ": " + selections_text(*s.proof);
  }
  for (const auto& m : s.members) {
    bool ok = !m.report.has_errors();
    members.push_back(Json{{"name", m.name},
                           {"effectiveVersion", "1." + std::to_string(m.effective_minor)},
                           {"valid", ok},
                           {"issues", Json::parse(m.report.to_json_issues())}});
    if (m.proof) members.back()["selections"] = selections_json(*m.proof);
    std::string msub = subject + "[" + printable(m.name) + "]";
    text += printable(m.report.to_text(msub), true);
    if (m.proof) text += msub + ": " + selections_text(*m.proof);
    text += msub + ": " + (ok ? "valid" : "invalid") + " (member, BEM 1." +
            std::to_string(m.effective_minor) + "; " + counts_text(m.report) + ")\n";
  }
  j["members"] = std::move(members);

  std::string verdict = subject + ": " + (r.valid() ? "valid" : "invalid") + " (" + container;
  if (single) {
    verdict += ", BEM " + version_text(effective);
    if (!s.declared_minor) verdict += " inferred";
    verdict += ", content needs " + version_text(needed);
    verdict += ", " + plural(s.payload_count, "payload");
  } else if (s.kind == bem::ContainerKind::kCollection && opened) {
    verdict += ", " + plural(s.members.size(), "member");
  }
  verdict += "; " + counts_text(r.report) + ")\n";
  text_out = text + verdict;
  json_out = std::move(j);
  return r.valid() ? FileOutcome::kValid : FileOutcome::kInvalid;
}

int run_validate(const ValidateArgs& args) {
  Json files = Json::array();
  std::size_t valid = 0, invalid = 0, unreadable = 0;
  // Per-file progress for long lists (a bar on a terminal).
  ProgressReporter progress("", "validating", args.files.size() > 1 ? args.files.size() : 0);
  for (std::size_t i = 0; i < args.files.size(); ++i) {
    progress.update(i, args.files[i]);
    Json j;
    std::string text;
    switch (validate_one(args.files[i], args, j, text)) {
      case FileOutcome::kValid:
        ++valid;
        break;
      case FileOutcome::kInvalid:
        ++invalid;
        break;
      case FileOutcome::kIoError:
        ++unreadable;
        break;
    }
    progress.update(i + 1);
    if (args.json) {
      files.push_back(std::move(j));
    } else {
      std::cout << text << std::flush;
    }
  }
  if (args.json) {
    Json doc = Json{{"validator", Json{{"name", "charkit"}, {"version", CHARKIT_VERSION_STRING}}},
                    {"files", std::move(files)},
                    {"summary", Json{{"files", args.files.size()},
                                     {"valid", valid},
                                     {"invalid", invalid},
                                     {"unreadable", unreadable}}}};
    print_json(std::move(doc));
  } else if (args.files.size() > 1) {
    std::cout << plural(args.files.size(), "file") << ": " << valid << " valid, " << invalid
              << " invalid, " << unreadable << " unreadable\n";
  }
  if (unreadable) return kExitUsage;
  return invalid ? kExitInvalid : kExitOk;
}

// ---- inspect ------------------------------------------------------------

std::string scalar(const Json& obj, const char* key, const char* fallback = "?") {
  if (!obj.is_object()) return fallback;
  auto it = obj.find(key);
  if (it == obj.end()) return fallback;
  if (it->is_string()) return printable(it->get_ref<const std::string&>());
  if (it->is_number() || it->is_boolean()) return it->dump();
  return fallback;
}

std::string bytes_text(const Json& v) {
  if (!v.is_number_unsigned()) return "?";
  auto n = v.get<std::uint64_t>();
  char buf[32];
  if (n >= (1u << 20))
    std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(n) / (1 << 20));
  else if (n >= 1024)
    std::snprintf(buf, sizeof buf, "%.1f KiB", static_cast<double>(n) / 1024);
  else
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(n));
  return buf;
}

const Json& list(const Json& obj, const char* key) {
  static const Json kEmpty = Json::array();
  if (!obj.is_object()) return kEmpty;
  auto it = obj.find(key);
  return it != obj.end() && it->is_array() ? *it : kEmpty;
}

std::string join_strings(const Json& arr, const char* sep = ", ") {
  std::string out;
  for (const auto& v : arr) {
    if (!out.empty()) out += sep;
    out += v.is_string() ? printable(v.get_ref<const std::string&>()) : printable(v.dump());
  }
  return out;
}

void print_target(std::ostream& os, const Json& t) {
  bool explicit_form = scalar(t, "form") == "explicit";
  os << "target (" << (explicit_form ? "1.4 explicit resources" : "legacy") << "): ";
  if (explicit_form)
    os << scalar(t, "kind") << " " << scalar(t, "id");
  else
    os << "character " << scalar(t, "characterId");
  os << ", platform " << scalar(t, "platform") << ", profile " << scalar(t, "profileId")
     << ", revision " << scalar(t, "revision") << ", snapshot \"" << scalar(t, "snapshot", "")
     << "\"\n";
  if (!explicit_form)
    os << "  world resource " << scalar(t, "worldResource") << ", ui resource "
       << scalar(t, "uiResource") << "\n";
  for (const auto& r : list(t, "resources"))
    os << "  resource " << scalar(r, "id") << ": " << scalar(r, "name") << " lod "
       << scalar(r, "lod") << " [" << join_strings(list(r, "platforms")) << "] "
       << scalar(r, "assetPath") << "\n";
  const Json& comps = list(t, "components");
  os << "  components (" << comps.size() << "):\n";
  for (const auto& c : comps) {
    os << "    [" << scalar(c, "id") << "] " << scalar(c, "meshName");
    if (c.contains("resource"))
      os << " (" << scalar(c, "resource") << ", " << scalar(c, "rendererKind") << ", path \""
         << scalar(c, "rendererPath", "") << "\")";
    os << ": " << scalar(c, "originalIndexCount") << " original indices, " << scalar(c, "bones")
       << " bone(s), materials " << join_strings(list(c, "materials")) << "\n";
  }
}

void print_mesh(std::ostream& os, const Json& m) {
  os << "  [" << scalar(m, "index") << "] " << scalar(m, "vertexCount") << " vertices, index size "
     << scalar(m, "indexSize") << ", " << scalar(m, "bones") << " bone(s)";
  if (m.contains("rendererKind")) os << ", " << scalar(m, "rendererKind");
  if (m.contains("indices"))
    os << ", indices payload " << scalar(m, "indices") << " (" << scalar(m, "indexCount") << ")";
  os << "\n      streams:";
  std::size_t i = 0;
  for (const auto& s : list(m, "streams")) {
    os << (i ? ";" : "") << " #" << i << " stride " << scalar(s, "stride") << " payload "
       << scalar(s, "payload");
    ++i;
  }
  os << "\n      attributes:";
  i = 0;
  for (const auto& a : list(m, "attributes"))
    os << (i++ ? "," : "") << " " << scalar(a, "semanticName") << " " << scalar(a, "formatName")
       << "x" << scalar(a, "dimension") << " @s" << scalar(a, "stream") << "+"
       << scalar(a, "offset");
  const Json& draws = list(m, "draws");
  os << "\n      draws (" << draws.size() << "):\n";
  i = 0;
  for (const auto& d : draws) {
    os << "        [" << i++ << "] ";
    if (d.contains("indices"))
      os << "indices payload " << scalar(d, "indices");
    else
      os << "start " << scalar(d, "start");
    os << ", count " << scalar(d, "count") << ", material " << scalar(d, "materialComponent") << "/"
       << scalar(d, "materialSlot") << " " << scalar(d, "materialName") << ", textures ["
       << join_strings(list(d, "textures")) << "]";
    if (d.contains("when")) os << ", when " << printable(d["when"].dump());
    if (d.contains("materialOverrides"))
      os << ", material overrides " << printable(d["materialOverrides"].dump());
    os << "\n";
  }
}

void print_payloads(std::ostream& os, const Json& info) {
  const Json& rows = list(info, "payloads");
  os << "payloads (" << rows.size() << "):\n";
  if (rows.empty()) return;
  char line[160];
  std::snprintf(line, sizeof line, "  %6s  %-11s %12s %12s %7s\n", "id", "codec", "stored",
                "decoded", "ratio");
  os << line;
  for (const auto& r : rows) {
    if (!r.value("present", false)) {
      std::snprintf(line, sizeof line, "  %6s  (missing)\n", scalar(r, "id").c_str());
      os << line;
      continue;
    }
    double ratio = r.contains("ratio") && r["ratio"].is_number() ? r["ratio"].get<double>() : 0.0;
    std::snprintf(line, sizeof line, "  %6s  %-11s %12s %12s %6.1f%%", scalar(r, "id").c_str(),
                  scalar(r, "codec").c_str(), bytes_text(r["storedSize"]).c_str(),
                  bytes_text(r["decodedSize"]).c_str(), ratio * 100.0);
    os << line;
    if (r.contains("member")) os << "  " << scalar(r, "member");
    os << "\n";
  }
  if (const Json& t = info.contains("payloadTotals") ? info["payloadTotals"] : Json();
      t.is_object()) {
    double ratio = t["ratio"].is_number() ? t["ratio"].get<double>() : 0.0;
    std::snprintf(line, sizeof line, "  %6s  %-11s %12s %12s %6.1f%%\n", "total", "",
                  bytes_text(t["storedSize"]).c_str(), bytes_text(t["decodedSize"]).c_str(),
                  ratio * 100.0);
    os << line;
  }
}

void print_inspection(std::ostream& os, const std::string& subject, const Json& info) {
  os << subject << ": " << scalar(info, "container") << " container, "
     << bytes_text(info.value("fileSize", Json())) << ", declared version "
     << scalar(info, "declaredVersion", "none") << "\n";
  for (const auto& p : list(info, "problems"))
    os << "  problem: " << scalar(p, "code") << " [" << scalar(p, "section", "") << "] "
       << scalar(p, "message") << "\n";
  if (info.contains("header")) {
    const Json& h = info["header"];
    os << "header: version " << scalar(h, "major") << "." << scalar(h, "minor") << ", file size "
       << scalar(h, "fileSize") << ", manifest " << scalar(h, "manifestSize") << " bytes, "
       << scalar(h, "payloadCount") << " payloads, flags " << scalar(h, "flags") << "\n";
  }
  if (info.contains("manifest")) {
    const Json& m = info["manifest"];
    os << "manifest: " << scalar(m, "bytes") << " bytes";
    if (m.contains("member")) os << " in " << scalar(m, "member");
    if (m.contains("error")) os << ", unreadable: " << scalar(m, "error");
    os << "\n";
  }
  if (info.contains("package")) {
    const Json& p = info["package"];
    os << "package: " << scalar(p, "id") << " \"" << scalar(p, "name") << "\" by "
       << scalar(p, "author") << ", version " << scalar(p, "version") << "\n";
    os << "capabilities: " << join_strings(list(info, "capabilities")) << "\n";
  }
  if (info.contains("target")) print_target(os, info["target"]);
  if (info.contains("appearances")) {
    os << "appearances (" << list(info, "appearances").size() << "), default "
       << scalar(info, "defaultAppearance") << ":\n";
    for (const auto& a : list(info, "appearances"))
      os << "  " << scalar(a, "id") << " \"" << scalar(a, "name")
         << "\": " << scalar(a, "components") << " components\n";
  }
  if (info.contains("optionGroups")) {
    os << "option groups (" << list(info, "optionGroups").size() << "):\n";
    for (const auto& g : list(info, "optionGroups")) {
      os << "  " << scalar(g, "id") << " \"" << scalar(g, "name") << "\" default "
         << scalar(g, "default") << (g.value("conditional", false) ? " (conditional)" : "") << ":";
      for (const auto& c : list(g, "choices"))
        os << " " << scalar(c, "id") << " \"" << scalar(c, "name") << "\"";
      os << "\n";
    }
  }
  if (info.contains("componentRules"))
    os << "component rules: " << scalar(info["componentRules"], "rules") << " rules, "
       << scalar(info["componentRules"], "candidates") << " candidates\n";
  if (info.contains("selectionConstraints"))
    os << "selection constraints: " << scalar(info, "selectionConstraints") << "\n";
  for (const auto& s : list(info, "textureSlots"))
    os << "texture slot " << scalar(s, "id") << ": " << scalar(s, "candidates") << " candidates\n";
  if (info.contains("meshes")) {
    os << "meshes (" << list(info, "meshes").size() << "):\n";
    for (const auto& m : list(info, "meshes")) print_mesh(os, m);
  }
  if (info.contains("textures")) {
    os << "textures (" << list(info, "textures").size() << "):\n";
    for (const auto& t : list(info, "textures")) {
      os << "  [" << scalar(t, "index") << "] " << scalar(t, "width") << "x" << scalar(t, "height")
         << " " << scalar(t, "formatName") << ", " << scalar(t, "mips") << " mip(s), "
         << (scalar(t, "srgb") == "true" ? "sRGB" : "linear") << ", replaces "
         << scalar(t, "originalName") << ", payload " << scalar(t, "payload");
      if (t.contains("semantic")) os << ", semantic " << scalar(t, "semantic");
      os << "\n";
    }
  }
  if (info.contains("parameters")) {
    os << "parameters (" << list(info, "parameters").size() << "):\n";
    for (const auto& p : list(info, "parameters"))
      os << "  " << scalar(p, "id") << " \"" << scalar(p, "name") << "\" " << scalar(p, "min")
         << ".." << scalar(p, "max") << " step " << scalar(p, "step") << ", neutral "
         << scalar(p, "neutral") << ", default " << scalar(p, "default") << "\n";
  }
  for (const auto& d : list(info, "meshDeformations"))
    os << "mesh deformation: mesh " << scalar(d, "mesh") << " by " << scalar(d, "parameter") << ", "
       << scalar(d, "frames") << " frames\n";
  if (info.contains("rootOffset"))
    os << "root offset: " << scalar(info["rootOffset"], "path") << " by ["
       << join_strings(list(info["rootOffset"], "translation")) << "]\n";
  if (info.contains("drivers")) {
    os << "drivers (" << list(info, "drivers").size() << "):\n";
    for (const auto& d : list(info, "drivers")) {
      os << "  " << scalar(d, "id") << " \"" << scalar(d, "name", "") << "\" "
         << scalar(d, "waveform", "pingpong") << "/" << scalar(d, "playback", "loop") << " at "
         << scalar(d, "baseFrequency") << " Hz:";
      for (const auto& b : list(d, "bindings")) {
        os << " " << scalar(b, "type");
        for (const char* k : {"target", "property", "keyword"})
          if (b.contains(k)) os << " " << scalar(b, k);
        os << ";";
      }
      if (d.contains("sound")) os << " sound payload " << scalar(d["sound"], "payload");
      os << "\n";
    }
  }
  if (info.contains("payloads")) print_payloads(os, info);
  if (info.contains("members")) {
    os << "members (" << list(info, "members").size() << "):\n";
    for (const auto& m : list(info, "members")) {
      os << "  " << scalar(m, "name") << ": " << bytes_text(m.value("decodedSize", Json())) << "\n";
      if (m.contains("error")) os << "    " << scalar(m, "error") << "\n";
    }
    for (const auto& m : list(info, "members"))
      if (m.contains("package")) {
        os << "\n";
        print_inspection(os, subject + "[" + scalar(m, "name") + "]", m["package"]);
      }
  }
}

int run_inspect(const std::string& path, bool json) {
  auto file = PackageInput::open(path);
  if (!file) return report_error(path, file.error(), input_error_exit_code(file.error()));
  Json info = bem::inspect_package(file->bytes());
  if (json) {
    Json doc = Json{{"uri", path}};
    doc.update(info);
    print_json(std::move(doc));
  } else {
    print_inspection(std::cout, printable(path), info);
  }
  // Inspect succeeds on anything it could read as a package container.
  return info.value("readable", false) ? kExitOk : kExitInvalid;
}

}  // namespace

void add_bem_commands(CLI::App& app, int& exit_code) {
  CLI::App* bem = app.add_subcommand("bem", "BEM character-model packages (.bem binary or ZIP)");
  bem->require_subcommand(1);

  auto validate_args = std::make_shared<ValidateArgs>();
  CLI::App* validate = bem->add_subcommand(
      "validate",
      "Check BEM packages against every rule of BEM 1.0-1.5 (binary, ZIP, collections)");
  validate->add_option("files", validate_args->files, "Package files (.bem, .zip)")
      ->required()
      ->type_name("FILE");
  validate->add_flag("--json", validate_args->json,
                     "Print one JSON report for all files (glTF-validator style)");
  validate->add_flag("--skip-validation", validate_args->skip_validation,
                     "Apply the user's 'disable model validation' switch: relax only what the spec "
                     "relaxes (§12, root offset, 1.4 notes)");
  validate
      ->add_option("--max-issues", validate_args->max_issues,
                   "Keep at most N issues per file (counts stay exact)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1000000}))
      ->default_val(200)
      ->type_name("N");
  validate
      ->add_option("--threads", validate_args->threads,
                   "Payloads decoded at once (0: one per core); the report does not depend on it")
      ->check(CLI::Range(0u, 256u))
      ->default_val(0)
      ->type_name("N");
  validate
      ->add_option("--max-memory", validate_args->max_memory,
                   "Most bytes of decoded data held at once per file (payload buffers of every "
                   "thread, the parsed manifest); past it validation stops with "
                   "BEM_MEMORY_BUDGET (0: no limit)")
      ->default_val(0)
      ->type_name("BYTES");
  validate->footer("Exit status: 0 all valid, 1 any invalid, 2 usage or I/O error.");
  validate->callback([validate_args, &exit_code] { exit_code = run_validate(*validate_args); });

  auto inspect_path = std::make_shared<std::string>();
  auto inspect_json = std::make_shared<bool>(false);
  CLI::App* inspect = bem->add_subcommand(
      "inspect",
      "Show what a BEM package holds: version, target, meshes, textures, options, "
      "payload table");
  inspect->add_option("file", *inspect_path, "Package file (.bem, .zip)")
      ->required()
      ->type_name("FILE");
  inspect->add_flag("--json", *inspect_json, "Print the inspection as JSON");
  inspect->footer(
      "Works on invalid packages as far as they are readable. Exit status: 0 inspected, 1 not a "
      "readable BEM container, 2 usage or I/O error.");
  inspect->callback([inspect_path, inspect_json, &exit_code] {
    exit_code = run_inspect(*inspect_path, *inspect_json);
  });

  add_bem_select_command(*bem, exit_code);
  add_bem_simulate_command(*bem, exit_code);
  add_bem_library_command(*bem, exit_code);
  add_bem_convert_commands(*bem, exit_code);
  add_bem_export_command(*bem, exit_code);
  add_bem_pack_command(*bem, exit_code);
}

}  // namespace charkit::app
