// The scene module's declared error codes as constants:
// `e.code == scene::codes::FBX_HEADER`. Declared in error_codes.def
// next to this file; see charkit/core/error_codes.h.
#pragma once

#include "charkit/core/error_codes.h"

namespace charkit::scene::codes {
#define CHARKIT_ERROR(code, meaning, remedy) inline constexpr core::ErrorCode code{#code};
#include "charkit/scene/error_codes.def"
#undef CHARKIT_ERROR
}  // namespace charkit::scene::codes
