// The deform module's declared error codes as constants:
// `e.code == deform::codes::BEM_DELTA_COUNT`. Declared in error_codes.def
// next to this file; see charkit/core/error_codes.h.
#pragma once

#include "charkit/core/error_codes.h"

namespace charkit::deform::codes {
#define CHARKIT_ERROR(code, meaning, remedy) inline constexpr core::ErrorCode code{#code};
#include "charkit/deform/error_codes.def"
#undef CHARKIT_ERROR
}  // namespace charkit::deform::codes
