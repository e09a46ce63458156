#include "cli_output.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <utility>

#include "charkit/core/json.h"
#include "printable.h"

namespace charkit::app {
namespace {

using core::Json;

struct OutputState {
  Json errors = Json::array();
  Json warnings = Json::array();
  std::optional<Json> doc;
  bool stdout_is_data = false;
};

OutputState& state() {
  static OutputState s;
  return s;
}

Json message_json(Severity s, std::string_view file, std::string_view location,
                  std::string_view code, std::string_view text) {
  auto opt = [](std::string_view v) { return v.empty() ? Json(nullptr) : Json(std::string(v)); };
  return Json{{"file", opt(file)},
              {"location", opt(location)},
              {"severity", severity_name(s)},
              {"code", opt(code)},
              {"message", std::string(text)}};
}

// Records the flags of the parsed command chain (a command's own --json or
// --quiet counts as well as the ones install_output_options added).
void record_flags(CLI::App& app) {
  auto given = [&app](const char* name) {
    const CLI::Option* o = app.get_option_no_throw(name);
    return o != nullptr && o->count() > 0;
  };
  OutputMode& m = output_mode();
  m.json = m.json || given("--json");
  m.quiet = m.quiet || given("--quiet");
  m.verbose = m.verbose || given("--verbose");
  for (CLI::App* sub : app.get_subcommands()) record_flags(*sub);
}

void install(CLI::App& app, bool root) {
  std::vector<CLI::App*> subs =
      app.get_subcommands([](CLI::App* s) { return !s->get_name().empty(); });
  if (subs.empty()) {
    if (!app.get_option_no_throw("--json"))
      app.add_flag("--json", output_mode().json,
                   "Print one JSON document on stdout (errors included)");
    if (!app.get_option_no_throw("--quiet"))
      app.add_flag(app.get_option_no_throw("-q") ? "--quiet" : "-q,--quiet", output_mode().quiet,
                   "Only errors on stderr: no warnings, notes or progress");
    if (!app.get_option_no_throw("--verbose"))
      app.add_flag(app.get_option_no_throw("-v") ? "--verbose" : "-v,--verbose",
                   output_mode().verbose, "More detail and progress on stderr");
    return;
  }
  // A group run without a sub-command prints its help (exit status 0).
  app.require_subcommand(0, 1);
  CLI::App* self = &app;
  app.callback([self] {
    if (self->get_subcommands().empty()) std::cout << help_text(*self);
  });
  for (CLI::App* sub : subs) install(*sub, false);
  if (root) app.parse_complete_callback([self] { record_flags(*self); });
}

}  // namespace

namespace {

// A finite number (the whole argument) at least `low`, or above it when
// `strict`.
CLI::Validator number_from(double low, bool strict, std::string name, std::string message) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        const bool ok = !text.empty() && end == text.c_str() + text.size() && std::isfinite(v) &&
                        (strict ? v > low : v >= low);
        return ok ? std::string() : message;
      },
      std::move(name));
}

}  // namespace

CLI::Validator positive_number() {
  return number_from(0.0, true, "POSITIVE", "must be a number greater than 0");
}

CLI::Validator non_negative_number() {
  return number_from(0.0, false, "NONNEGATIVE", "must be a number, 0 or more");
}

std::string help_text(const CLI::App& app) {
  // The text `charkit A B --help` prints: the usage line names the whole path.
  std::string path;
  for (const CLI::App* a = &app; a != nullptr; a = a->get_parent())
    path = a->get_name() + (path.empty() ? "" : " " + path);
  return app.get_formatter()->make_help(&app, path, CLI::AppFormatMode::Normal);
}

OutputMode& output_mode() {
  static OutputMode m;
  return m;
}

void message(Severity s, std::string_view file, std::string_view location, std::string_view code,
             std::string_view text) {
  if (s == Severity::kError) state().errors.push_back(message_json(s, file, location, code, text));
  if (s == Severity::kWarning)
    state().warnings.push_back(message_json(s, file, location, code, text));
  if (s != Severity::kError && output_mode().quiet) return;
  std::cerr << format_message(s, file, location, code, text) << "\n" << std::flush;
}

int report_error(std::string_view file, const core::Error& e, int exit_code) {
  message(Severity::kError, file, e.location.to_string(), e.code, e.message);
  return exit_code;
}

int report_error(std::string_view file, core::ErrorCode code, std::string_view text,
                 int exit_code) {
  message(Severity::kError, file, {}, code.name(), text);
  return exit_code;
}

void report_warning(std::string_view file, const std::string& code, std::string_view text,
                    std::string_view location) {
  message(Severity::kWarning, file, location, code, text);
}

void report_issues(std::string_view file, const core::Report& report) {
  for (const core::Issue& i : report.issues()) {
    message(i.severity, file, i.location.to_string(), i.code,
            i.section.empty() ? i.message : i.message + " (" + i.section + ")");
  }
}

void report_info(std::string_view file, std::string_view text) {
  message(Severity::kInfo, file, {}, {}, text);
}

void detail(std::string_view file, std::string_view text) {
  if (output_mode().verbose) message(Severity::kInfo, file, {}, {}, text);
}

void print_json(core::Json doc) {
  state().doc = std::move(doc);
  // Without --json (a command that always prints JSON) the document goes out now.
  if (!output_mode().json) {
    std::cout << state().doc->dump(2, ' ', false, Json::error_handler_t::replace) << "\n";
    state().doc.reset();
  }
}

void set_stdout_is_data() {
  state().stdout_is_data = true;
}

void print_summary(core::Json doc) {
  if (state().stdout_is_data)
    std::cerr << doc.dump(2, ' ', false, Json::error_handler_t::replace) << "\n";
  else
    print_json(std::move(doc));
}

Json reported_messages(Severity s) {
  return s == Severity::kError ? state().errors : state().warnings;
}

int finish_output(int exit_code) {
  OutputState& st = state();
  if (!output_mode().json || st.stdout_is_data) return exit_code;
  Json doc{{"ok", exit_code == 0}};
  if (st.doc && st.doc->is_object()) {
    for (auto& [k, v] : st.doc->items())
      if (k != "ok") doc[k] = std::move(v);
    if (!st.errors.empty() && !doc.contains("errors")) doc["errors"] = st.errors;
    if (!st.warnings.empty() && !doc.contains("warnings")) doc["warnings"] = st.warnings;
  } else {
    if (st.doc) doc["result"] = std::move(*st.doc);
    doc["errors"] = st.errors;
    doc["warnings"] = st.warnings;
  }
  std::cout << doc.dump(2, ' ', false, Json::error_handler_t::replace) << "\n" << std::flush;
  return exit_code;
}

void install_output_options(CLI::App& app) {
  install(app, true);
}

// ---- progress -------------------------------------------------------------

ProgressReporter::ProgressReporter(std::string file, std::string label, std::size_t total)
    : file_(std::move(file)),
      label_(std::move(label)),
      total_(total),
      tty_(isatty(STDERR_FILENO) != 0),
      enabled_(!output_mode().quiet && total > 0),
      start_(std::chrono::steady_clock::now()),
      last_(start_) {}

ProgressReporter::~ProgressReporter() {
  finish();
}

void ProgressReporter::update(std::size_t done, std::string_view note) {
  if (!enabled_) return;
  if (done > total_) done = total_;
  const auto now = std::chrono::steady_clock::now();
  // Steps shorter than a second show nothing (unless --verbose).
  if (!output_mode().verbose && now - start_ < std::chrono::seconds(1) && done < total_) return;
  if (!output_mode().verbose && !bar_drawn_ && !printed_line_ && done == total_ &&
      now - start_ < std::chrono::seconds(1))
    return;
  const std::size_t percent = done * 100 / total_;
  std::string text = label_ + ": " + std::to_string(done) + " of " + std::to_string(total_) + " (" +
                     std::to_string(percent) + " %)";
  if (!note.empty()) text += ", " + std::string(note);
  if (tty_) {
    if (now - last_ < std::chrono::milliseconds(100) && done < total_ && bar_drawn_) return;
    constexpr std::size_t kWidth = 24;
    const std::size_t filled = done * kWidth / total_;
    std::string bar(filled, '#');
    bar += std::string(kWidth - filled, '-');
    std::cerr << "\r\033[K" << (file_.empty() ? "" : printable(file_) + ": ") << "[" << bar << "] "
              << printable(text) << std::flush;
    bar_drawn_ = true;
    last_ = now;
    return;
  }
  const std::size_t decile = percent / 10;
  if (printed_line_ && done < total_ && now - last_ < std::chrono::seconds(1) &&
      decile <= last_decile_)
    return;
  if (printed_line_ && done == total_ && decile <= last_decile_ && percent == 100 &&
      last_decile_ == 10)
    return;
  std::cerr << format_message(Severity::kInfo, file_, {}, "PROGRESS", text) << "\n" << std::flush;
  printed_line_ = true;
  last_decile_ = decile;
  last_ = now;
}

void ProgressReporter::finish() {
  if (bar_drawn_) std::cerr << "\n" << std::flush;
  bar_drawn_ = false;
  enabled_ = false;
}

}  // namespace charkit::app
