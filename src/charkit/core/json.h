// Strict JSON parsing on top of nlohmann-json's SAX interface.
// Adds what a format like BEM needs beyond RFC 8259: duplicate keys rejected
// at any depth, NUL characters rejected in strings and keys, a nesting limit,
// no byte-order mark, and helpers for exact UInt32 checks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "charkit/core/result.h"

namespace charkit::core {

/// Object keys keep their source order (inspect output and writers rely on it).
using Json = nlohmann::ordered_json;

struct JsonLimits {
  /// Maximum nesting of objects and arrays; the root container is level 1.
  std::size_t max_depth = 48;
  /// Maximum number of values (objects, arrays, strings, numbers, literals;
  /// object keys are not counted); 0: no limit. A parsed value holds about
  /// kJsonBytesPerValue bytes, so a caller with a memory budget derives
  /// this from it: a few KiB of `[{},{},…]` would otherwise hold hundreds
  /// of MiB.
  std::uint64_t max_values = 0;
};

/// What one parsed value is counted as holding (the DOM node, its share of
/// the container that holds it, an object's key and allocator overhead):
/// an upper estimate, measured on arrays of empty objects, empty strings
/// and small numbers (docs/bem/zip.md §Budgets).
inline constexpr std::uint64_t kJsonBytesPerValue = 96;

/// Parse text as one JSON value. Errors: JSON_SYNTAX (offset), JSON_BOM (offset 0),
/// JSON_DUPLICATE_KEY, JSON_NUL_CHARACTER, JSON_TOO_DEEP, JSON_TOO_MANY_VALUES
/// (pointer). `values`, when given, receives the number of values read.
Result<Json> parse_json_strict(std::string_view text, const JsonLimits& limits = {},
                               std::uint64_t* values = nullptr);

/// RFC 6901 escaping of one reference token ("~" -> "~0", "/" -> "~1").
std::string json_pointer_escape(std::string_view token);
/// parent + "/" + escaped token.
std::string json_pointer_join(const std::string& parent, std::string_view token);
std::string json_pointer_join(const std::string& parent, std::size_t index);

/// The value if j is a JSON integer token in 0..2^32-1 (not 36.0, not 3.6e1, not -0).
std::optional<std::uint32_t> json_uint32(const Json& j);
/// The value if j is any JSON number and finite.
std::optional<double> json_finite_number(const Json& j);
/// Short name of the JSON type for messages ("object", "array", "string", …).
const char* json_type_name(const Json& j);
/// obj[key] when obj is an object whose member key is a string; "" otherwise
/// (the optional "name" of a glTF node, mesh, skin, …).
std::string json_string_or_empty(const Json& obj, const char* key);

}  // namespace charkit::core
