// Base64 (RFC 4648 §4) and base64url (§5): the one encoder and decoder of
// the library. glTF data: URIs, baked glTF files and API tokens use them.
//
// Decoding policy (strict, so that one text has one meaning):
// - the alphabet of the chosen variant only; no whitespace, no line breaks,
//   no characters of the other variant (a '-' in standard base64 is an error);
// - '=' padding is optional, but where present it must complete the last
//   4-character group exactly (1 or 2 '=' after 3 or 2 characters) and
//   nothing may follow it;
// - a lone character in the last group (1 mod 4) is an error;
// - the unused low bits of the last character must be zero (RFC 4648 §3.5),
//   so decode(encode(b)) == b and every accepted text is canonical.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "charkit/core/result.h"

namespace charkit::core {

enum class Base64Alphabet {
  kStandard,  ///< RFC 4648 §4: A–Z a–z 0–9 + /
  kUrl,       ///< RFC 4648 §5: A–Z a–z 0–9 - _
};

/// Encode bytes; with pad, '=' fills the last group to 4 characters.
std::string base64_encode(std::span<const std::uint8_t> bytes,
                          Base64Alphabet alphabet = Base64Alphabet::kStandard, bool pad = true);

/// RFC 4648 §5 base64url without padding (API tokens).
std::string base64url(std::span<const std::uint8_t> bytes);

/// Decode text under the policy above. Errors (byte offset into text):
/// BASE64_CHARACTER (a character outside the alphabet), BASE64_PADDING
/// (misplaced or surplus '=', or characters after it), BASE64_LENGTH (a lone
/// character in the last group), BASE64_TRAILING_BITS (non-zero unused bits).
Result<std::vector<std::uint8_t>> base64_decode(
    std::string_view text, Base64Alphabet alphabet = Base64Alphabet::kStandard);

/// Exact decoded size of a text that base64_decode accepts (an upper bound
/// for any other text), without decoding: for checks before allocating.
std::size_t base64_decoded_size(std::string_view text);

}  // namespace charkit::core
