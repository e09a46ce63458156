// The bem module's declared error codes as constants:
// `e.code == bem::codes::BEM_APPEARANCE_TARGET_DUPLICATE`. Declared in error_codes.def
// next to this file; see charkit/core/error_codes.h.
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include "charkit/core/error_codes.h"

namespace charkit::bem::codes {
#define CHARKIT_ERROR(code, meaning, remedy) inline constexpr core::ErrorCode code{#code};
#include "charkit/bem/error_codes.def"
#undef CHARKIT_ERROR
/// Every code the module declares, with its meaning and what the user can
/// do, in declaration order: `charkit errors` and docs/errors.md list the
/// modules' tables one after another.
inline constexpr core::ErrorCodeInfo kAll[] = {
#define CHARKIT_ERROR(code, meaning, remedy) {#code, "bem", meaning, remedy},
#include "charkit/bem/error_codes.def"
#undef CHARKIT_ERROR
};
}  // namespace charkit::bem::codes

namespace charkit::bem {

/// The code of a manifest that is not strict JSON (§3): BEM_MANIFEST_ and the
/// core JSON code, e.g. JSON_TOO_DEEP -> BEM_MANIFEST_JSON_TOO_DEEP.
inline core::ErrorCode manifest_json_code(std::string_view json_code) {
  constexpr std::pair<core::ErrorCode, core::ErrorCode> kCodes[] = {
      {core::codes::JSON_BOM, codes::BEM_MANIFEST_JSON_BOM},
      {core::codes::JSON_DUPLICATE_KEY, codes::BEM_MANIFEST_JSON_DUPLICATE_KEY},
      {core::codes::JSON_NUL_CHARACTER, codes::BEM_MANIFEST_JSON_NUL_CHARACTER},
      {core::codes::JSON_SYNTAX, codes::BEM_MANIFEST_JSON_SYNTAX},
      {core::codes::JSON_TOO_DEEP, codes::BEM_MANIFEST_JSON_TOO_DEEP},
      // The value limit is derived from the memory budget.
      {core::codes::JSON_TOO_MANY_VALUES, codes::BEM_MEMORY_BUDGET},
  };
  for (const auto& [json, manifest] : kCodes) {
    if (json_code == json) return manifest;
  }
  return codes::BEM_MANIFEST_JSON_SYNTAX;
}

}  // namespace charkit::bem
