// The one output convention of the `charkit` program (docs/cli.md):
//   - results on stdout; warnings, progress and errors on stderr;
//   - every stderr message is one line `FILE: LOCATION: severity CODE: message`
//     (FILE, LOCATION and CODE left out when empty), printed by message();
//   - with --json the command prints exactly one JSON document on stdout
//     (print_json(), or the error document finish_output() writes), with
//     "ok" and, after an error, "errors": [{file, location, severity, code,
//     message}];
//   - --quiet keeps only errors on stderr, --verbose adds detail();
//   - ProgressReporter: a bar on a terminal, periodic lines otherwise.
// Text from input files passes through printable() so a crafted name or
// message cannot drive the terminal.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <CLI/CLI.hpp>

#include "charkit/core/diagnostic.h"
#include "charkit/core/json_fwd.h"
#include "charkit/core/progress.h"
#include "charkit/core/report.h"
#include "charkit/core/result.h"

namespace charkit::app {

using core::format_message;  // the one line format (core/diagnostic.h)
using core::Severity;
using core::severity_name;

/// What the command line asked for; set once the options are parsed.
struct OutputMode {
  bool json = false;     ///< --json: one JSON document on stdout
  bool quiet = false;    ///< --quiet: only errors on stderr
  bool verbose = false;  ///< --verbose: detail() lines and progress from the start
};

OutputMode& output_mode();

/// Prints one message line on stderr (warnings and infos not with --quiet)
/// and keeps errors and warnings for the --json document.
void message(Severity s, std::string_view file, std::string_view location, std::string_view code,
             std::string_view text);

/// The error line for `file` (location and code from `e`); returns `exit_code`.
int report_error(std::string_view file, const core::Error& e, int exit_code);

/// An error without a core::Error; returns `exit_code`.
int report_error(std::string_view file, core::ErrorCode code, std::string_view text, int exit_code);

/// A warning: a declared code (charkit/<module>/error_codes.h), or the code
/// of a warning a library function returned; never a literal.
void report_warning(std::string_view file, const std::string& code, std::string_view text,
                    std::string_view location = {});
void report_warning(std::string_view file, const char* code, std::string_view text,
                    std::string_view location = {}) = delete;

/// Every issue of a validation report through message() (the spec section,
/// when any, ends the message: "… (§2)").
void report_issues(std::string_view file, const core::Report& report);

/// A status line (`FILE: info: message`), left out with --quiet.
void report_info(std::string_view file, std::string_view text);

/// Extra detail, printed only with --verbose.
void detail(std::string_view file, std::string_view text);

/// The command's result document: printed on stdout by finish_output() with
/// "ok" (exit status 0) and the reported errors added. Call at most once.
void print_json(core::Json doc);

/// stdout carries data (e.g. NDJSON with `-o -`): no document is added there.
void set_stdout_is_data();

/// A command's summary document: as print_json(), or on stderr after
/// set_stdout_is_data(), since stdout then holds the data.
void print_summary(core::Json doc);

/// Called by main with the exit status: prints the JSON document (the
/// command's, or {"ok", "errors", "warnings"}) when --json was given.
int finish_output(int exit_code);

/// The reported errors and warnings as JSON objects (for documents that want them).
core::Json reported_messages(Severity s);

/// The help text of `app`, as `charkit … APP --help` prints it.
std::string help_text(const CLI::App& app);

/// Adds --json, -q/--quiet and -v/--verbose to every leaf command that lacks
/// them, lets a group without a sub-command print its help, and records the
/// parsed flags in output_mode() before any command runs.
void install_output_options(CLI::App& app);

/// Option checks with plain messages (CLI11's PositiveNumber and
/// NonNegativeNumber print "Value 0 not in range 0.000000 to 1797…"): a
/// finite number > 0, and one ≥ 0. The value itself is not echoed.
CLI::Validator positive_number();
CLI::Validator non_negative_number();

/// Progress of one long step on stderr: a rewritten bar when stderr is a
/// terminal, else a line at most once a second or per 10 %. Nothing with
/// --quiet; nothing during the first second unless --verbose.
class ProgressReporter {
 public:
  ProgressReporter(std::string file, std::string label, std::size_t total);
  ~ProgressReporter();
  ProgressReporter(const ProgressReporter&) = delete;
  ProgressReporter& operator=(const ProgressReporter&) = delete;

  /// `done` of `total` steps; `note` is appended (e.g. "batch loss 0.01").
  void update(std::size_t done, std::string_view note = {});
  /// Ends the bar (a newline on a terminal); called by the destructor.
  void finish();

 private:
  std::string file_;
  std::string label_;
  std::size_t total_;
  bool tty_;
  bool enabled_;
  bool bar_drawn_ = false;
  std::size_t last_decile_ = 0;
  bool printed_line_ = false;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_;
};

/// A library progress callback (core::ProgressFn) shown as a
/// ProgressReporter: the reporter starts at the first call, when the library
/// knows the total. finish() (or the destructor) ends the bar.
class StepProgress {
 public:
  StepProgress(std::string file, std::string label)
      : file_(std::move(file)), label_(std::move(label)) {}
  /// The callback; valid while this object lives.
  core::ProgressFn fn() {
    return [this](std::size_t done, std::size_t total) {
      if (!bar_) bar_.emplace(file_, label_, total);
      bar_->update(done);
    };
  }
  void finish() {
    if (bar_) bar_->finish();
  }

 private:
  std::string file_;
  std::string label_;
  std::optional<ProgressReporter> bar_;
};

}  // namespace charkit::app
