// Secure random bytes (random.h).
#include "charkit/core/random.h"

#include <climits>

#include <openssl/rand.h>

#include "charkit/core/error_codes.h"

namespace charkit::core {

Status secure_random_bytes(std::span<std::uint8_t> out) {
  while (!out.empty()) {
    const int n =
        out.size() > static_cast<std::size_t>(INT_MAX) ? INT_MAX : static_cast<int>(out.size());
    if (RAND_bytes(out.data(), n) != 1)
      return make_error(codes::CRYPTO_RANDOM, "the system's random generator is not available");
    out = out.subspan(static_cast<std::size_t>(n));
  }
  return Ok{};
}

}  // namespace charkit::core
