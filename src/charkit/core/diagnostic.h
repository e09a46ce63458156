// The one diagnostic line of charkit (docs/cli.md): what `charkit` prints on
// stderr and what Report::to_text writes, one issue per line:
//
//   FILE: LOCATION: severity CODE: message
//
// FILE, LOCATION and CODE are left out when empty. Every part goes through
// core::printable (valid UTF-8, no control characters), so a crafted name
// or message quoted from an input file cannot drive a terminal.
#pragma once

#include <string>
#include <string_view>

#include "charkit/core/report.h"

namespace charkit::core {

/// One line, without the newline.
std::string format_message(Severity severity, std::string_view file, std::string_view location,
                           std::string_view code, std::string_view message);

}  // namespace charkit::core
