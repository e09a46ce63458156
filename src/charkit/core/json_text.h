// JSON text for output that leaves a process (HTTP answers, stored
// reports, CLI output). Kept out of json.h so that the many files using
// only the parser do not depend on it.
#pragma once

#include <string>

#include "charkit/core/json.h"

namespace charkit::core {

/// j as JSON text (compact, or pretty with indent >= 0). Strings that are
/// not valid UTF-8 are written with U+FFFD in place of each invalid byte:
/// serialising never throws on text that quotes untrusted input.
inline std::string dump_json(const Json& j, int indent = -1) {
  return j.dump(indent, ' ', false, Json::error_handler_t::replace);
}

}  // namespace charkit::core
