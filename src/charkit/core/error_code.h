// ErrorCode: a declared error code (see charkit/core/error_codes.h for the
// declarations, the registry and docs/errors.md). Every error is raised
// through one (make_error, Report::error), so a misspelt code does not
// compile. Kept apart so that result.h carries no declarations: editing an
// error_codes.def rebuilds only the files that use its constants.
#pragma once

#include <string>
#include <string_view>

namespace charkit::core {

/// A declared code; compares equal to the code string of an Error or Issue.
/// It becomes text wherever text is wanted (Error::code, Issue::code, JSON,
/// a log line); text never becomes an ErrorCode: the constants in each
/// module's error_codes.h are the only ones.
class ErrorCode {
 public:
  consteval explicit ErrorCode(std::string_view name) : name_(name) {}
  constexpr std::string_view name() const { return name_; }
  std::string str() const { return std::string(name_); }
  operator std::string() const { return str(); }  // NOLINT(google-explicit-constructor)
  constexpr operator std::string_view() const {
    return name_;
  }  // NOLINT(google-explicit-constructor)

  friend bool operator==(const std::string& code, ErrorCode c) { return code == c.name_; }
  friend bool operator==(std::string_view code, ErrorCode c) { return code == c.name_; }
  friend constexpr bool operator==(ErrorCode a, ErrorCode b) { return a.name_ == b.name_; }

 private:
  std::string_view name_;
};

}  // namespace charkit::core
