// The gpu module's declared error codes as constants:
// `e.code == gpu::codes::GPU_UNAVAILABLE`. Declared in error_codes.def next
// to this file; see charkit/core/error_codes.h.
#pragma once

#include "charkit/core/error_codes.h"

namespace charkit::gpu::codes {
#define CHARKIT_ERROR(code, meaning, remedy) inline constexpr core::ErrorCode code{#code};
#include "charkit/gpu/error_codes.def"
#undef CHARKIT_ERROR
}  // namespace charkit::gpu::codes
