// Error lines of the command files: every one goes through message()
// (cli_output.h), `FILE: LOCATION: severity CODE: message`.
#pragma once

#include <string>

#include "charkit/core/result.h"
#include "cli_output.h"

namespace charkit::app {

/// The error line of `bem export` and `bem select`: the JSON pointer (when
/// any) is the location.
inline void print_bem_error(const std::string& file, const std::string& code,
                            const std::string& message_text, const std::string& pointer) {
  message(Severity::kError, file, pointer, code, message_text);
}

}  // namespace charkit::app
