// One error line per failure, the same in every command file:
//   charkit: FILE: LOCATION: CODE: message
// (location left out when the error has none); the text passes through
// printable() so a crafted file name or message cannot drive the terminal.
#pragma once

#include <iostream>
#include <string>

#include "charkit/core/result.h"
#include "printable.h"

namespace charkit::app {

/// Prints the error line for `file` and returns `exit_code`.
inline int report_error(const std::string& file, const core::Error& e, int exit_code) {
  std::cerr << "charkit: " << printable(file) << ": ";
  const std::string where = e.location.to_string();
  if (!where.empty()) std::cerr << printable(where) << ": ";
  std::cerr << e.code << ": " << printable(e.message) << "\n";
  return exit_code;
}

/// The error line of `bem export` and `bem select`, a form of their own:
///   FILE: error CODE: message (POINTER)
/// (pointer left out when empty).
inline void print_bem_error(const std::string& file, const std::string& code,
                            const std::string& message, const std::string& pointer) {
  std::cerr << printable(file) << ": error " << code << ": " << printable(message);
  if (!pointer.empty()) std::cerr << " (" << printable(pointer) << ")";
  std::cerr << "\n";
}

}  // namespace charkit::app
