// Secure random bytes and base64url (random.h).
#include "charkit/core/random.h"

#include <climits>

#include <openssl/rand.h>

namespace charkit::core {

Status secure_random_bytes(std::span<std::uint8_t> out) {
  while (!out.empty()) {
    const int n =
        out.size() > static_cast<std::size_t>(INT_MAX) ? INT_MAX : static_cast<int>(out.size());
    if (RAND_bytes(out.data(), n) != 1)
      return make_error("CRYPTO_RANDOM", "the system's random generator is not available");
    out = out.subspan(static_cast<std::size_t>(n));
  }
  return Ok{};
}

std::string base64url(std::span<const std::uint8_t> bytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  out.reserve((bytes.size() * 4 + 2) / 3);
  std::size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const std::uint32_t v = (static_cast<std::uint32_t>(bytes[i]) << 16) |
                            (static_cast<std::uint32_t>(bytes[i + 1]) << 8) | bytes[i + 2];
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += kAlphabet[v & 63];
  }
  if (bytes.size() - i == 1) {
    const std::uint32_t v = static_cast<std::uint32_t>(bytes[i]) << 16;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
  } else if (bytes.size() - i == 2) {
    const std::uint32_t v = (static_cast<std::uint32_t>(bytes[i]) << 16) |
                            (static_cast<std::uint32_t>(bytes[i + 1]) << 8);
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
  }
  return out;
}

}  // namespace charkit::core
