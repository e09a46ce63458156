// Cryptographically secure random bytes (OpenSSL's RAND_bytes), for
// secrets such as API tokens. Not for simulation or sampling: those use
// seeded, reproducible generators.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "charkit/core/result.h"

namespace charkit::core {

/// Fills out; CRYPTO_RANDOM when the generator cannot deliver (not seeded).
Status secure_random_bytes(std::span<std::uint8_t> out);

}  // namespace charkit::core
