// Text from input files (names, messages) goes to a terminal: control
// characters and bytes that are not valid UTF-8 are escaped (\xHH) so a
// crafted name cannot move the cursor or clear the screen, and every line
// we print is valid UTF-8. Shared by every command file.
#pragma once

#include <string>
#include <string_view>

#include "charkit/core/utf8.h"

namespace charkit::app {

inline std::string printable(std::string_view s, bool keep_newlines = false) {
  return core::printable(s, keep_newlines);
}

}  // namespace charkit::app
