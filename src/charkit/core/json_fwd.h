// The JSON value type and the strict parser's declarations, without
// nlohmann-json's implementation: what a header needs to name a JSON value in
// a declaration (a parameter, a return type). A header that holds a value by
// value, or code that reads or builds one, includes charkit/core/json.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "charkit/core/result.h"

namespace charkit::core {

/// Object keys keep their source order (inspect output and writers rely on it).
using Json = nlohmann::ordered_json;

/// A JSON value with value semantics held behind a pointer, so that a struct
/// in a header can hold one without including nlohmann-json: copies copy the
/// value, a default box holds null. Like C++26's std::indirect, a box that
/// was moved from holds nothing and may only be assigned or destroyed.
class JsonBox {
 public:
  JsonBox();
  JsonBox(const Json& value);  // NOLINT(google-explicit-constructor): a box of a value
  JsonBox(Json&& value);       // NOLINT(google-explicit-constructor)
  JsonBox(const JsonBox& other);
  JsonBox(JsonBox&& other) noexcept;
  JsonBox& operator=(const JsonBox& other);
  JsonBox& operator=(JsonBox&& other) noexcept;
  ~JsonBox();
  /// A box holding `{}`.
  static JsonBox empty_object();

  Json& operator*() { return *value_; }
  const Json& operator*() const { return *value_; }
  Json* operator->() { return value_.get(); }
  const Json* operator->() const { return value_.get(); }

 private:
  std::unique_ptr<Json> value_;
};

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
