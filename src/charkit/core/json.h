// Strict JSON parsing on top of nlohmann-json's SAX interface.
// Adds what a format like BEM needs beyond RFC 8259: duplicate keys rejected
// at any depth, NUL characters rejected in strings and keys, a nesting limit,
// no byte-order mark, and helpers for exact UInt32 checks. The declarations
// live in json_fwd.h (for headers); this header adds nlohmann-json itself,
// for the code that reads or builds JSON values.
#pragma once

#include <nlohmann/json.hpp>

#include "charkit/core/json_fwd.h"
