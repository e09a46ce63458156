// The charkit program's declared error codes as constants:
// `report_error(file, codes::USAGE, "…", kExitUsage)`. Declared in
// error_codes.def next to this file; see charkit/core/error_codes.h.
#pragma once

#include "charkit/core/error_codes.h"

namespace charkit::app::codes {
#define CHARKIT_ERROR(code, meaning, remedy) inline constexpr core::ErrorCode code{#code};
#include "error_codes.def"
#undef CHARKIT_ERROR
/// Every code the program declares, with its meaning and what the user can
/// do, in declaration order (`charkit errors` lists it after the modules').
inline constexpr core::ErrorCodeInfo kAll[] = {
#define CHARKIT_ERROR(code, meaning, remedy) {#code, "cli", meaning, remedy},
#include "error_codes.def"
#undef CHARKIT_ERROR
};
}  // namespace charkit::app::codes
