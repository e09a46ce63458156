// Validation Report: the issues a validator found, each with a stable code,
// a severity, the spec section it comes from, a location and a message.
// Rendered as text for people and as JSON (in the shape of the Khronos glTF
// validator's report) for tools.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "charkit/core/result.h"

namespace charkit::core {

enum class Severity : std::uint8_t { kError = 0, kWarning = 1, kInfo = 2 };

const char* severity_name(Severity s);

struct Issue {
  std::string code;  ///< stable machine code, e.g. BEM_HEADER_MAGIC (a declared ErrorCode)
  Severity severity = Severity::kError;
  std::string section;  ///< spec section, e.g. "§2"
  Location location;
  std::string message;
};

class Report {
 public:
  explicit Report(std::size_t max_issues = 200) : max_issues_(max_issues) {}

  void add(Issue issue);
  void error(ErrorCode code, std::string section, Location loc, std::string message) {
    add({code.str(), Severity::kError, std::move(section), std::move(loc), std::move(message)});
  }
  void warning(ErrorCode code, std::string section, Location loc, std::string message) {
    add({code.str(), Severity::kWarning, std::move(section), std::move(loc), std::move(message)});
  }
  void info(ErrorCode code, std::string section, Location loc, std::string message) {
    add({code.str(), Severity::kInfo, std::move(section), std::move(loc), std::move(message)});
  }
  /// Merge another report's issues (their counts too, even past our cap).
  void merge(const Report& other);

  const std::vector<Issue>& issues() const { return issues_; }
  std::size_t num_errors() const { return counts_[0]; }
  std::size_t num_warnings() const { return counts_[1]; }
  std::size_t num_infos() const { return counts_[2]; }
  /// True when more issues were found than the cap allowed to keep.
  bool truncated() const { return truncated_; }
  bool has_errors() const { return counts_[0] != 0; }
  /// Stop early once the cap of errors is reached (callers may check this in long loops).
  bool full() const { return issues_.size() >= max_issues_; }
  std::size_t max_issues() const { return max_issues_; }

  /// True when an issue with this code was recorded (kept or counted past the cap).
  bool has_code(const std::string& code) const;

  /// Human-readable rendering: one line per issue, then a summary line.
  std::string to_text(const std::string& subject) const;
  /// JSON object {"numErrors", "numWarnings", "numInfos", "truncated", "messages": [...]}.
  std::string to_json_issues() const;

 private:
  std::vector<Issue> issues_;
  std::vector<std::string> codes_seen_;
  std::size_t counts_[3] = {0, 0, 0};
  std::size_t max_issues_;
  bool truncated_ = false;
};

}  // namespace charkit::core
