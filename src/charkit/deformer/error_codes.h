// The deformer module's declared error codes as constants:
// `e.code == deformer::codes::ACTION_CHANNEL`. Declared in error_codes.def
// next to this file; see charkit/core/error_codes.h.
#pragma once

#include "charkit/core/error_codes.h"

namespace charkit::deformer::codes {
#define CHARKIT_ERROR(code, meaning, remedy) inline constexpr core::ErrorCode code{#code};
#include "charkit/deformer/error_codes.def"
#undef CHARKIT_ERROR
/// Every code the module declares, with its meaning and what the user can
/// do, in declaration order: `charkit errors` and docs/errors.md list the
/// modules' tables one after another.
inline constexpr core::ErrorCodeInfo kAll[] = {
#define CHARKIT_ERROR(code, meaning, remedy) {#code, "deformer", meaning, remedy},
#include "charkit/deformer/error_codes.def"
#undef CHARKIT_ERROR
};
}  // namespace charkit::deformer::codes
