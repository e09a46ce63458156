// libFuzzer target: the strict JSON parser (duplicate keys, NUL, depth, BOM,
// value limit).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "charkit/core/json.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  // A value limit the inputs reach (a memory budget's), then none.
  std::uint64_t values = 0;
  auto limited = charkit::core::parse_json_strict(
      text, charkit::core::JsonLimits{.max_depth = 48, .max_values = 64}, &values);
  if (!limited && limited.error().code != "JSON_TOO_MANY_VALUES") (void)limited.error().to_string();
  auto parsed = charkit::core::parse_json_strict(text, charkit::core::JsonLimits{.max_depth = 48});
  if (!parsed) {
    (void)parsed.error().to_string();
    return 0;
  }
  const charkit::core::Json& j = *parsed;
  (void)charkit::core::json_type_name(j);
  (void)charkit::core::json_uint32(j);
  (void)charkit::core::json_finite_number(j);
  if (j.is_object())
    for (const auto& [key, value] : j.items()) {
      (void)charkit::core::json_pointer_join("", key);
      (void)charkit::core::json_uint32(value);
    }
  // Whatever was accepted can be written back out.
  (void)j.dump(-1, ' ', false, charkit::core::Json::error_handler_t::replace);
  return 0;
}
