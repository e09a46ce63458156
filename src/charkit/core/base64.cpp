// Base64 and base64url (base64.h).
#include "charkit/core/base64.h"

#include <algorithm>
#include <array>
#include <cstdio>

#include "charkit/core/error_codes.h"

namespace charkit::core {

namespace {

constexpr char kStandard[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr char kUrl[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

// Value of each byte in the alphabet, -1 outside it.
std::array<int, 256> reverse_table(const char* alphabet) {
  std::array<int, 256> t{};
  t.fill(-1);
  for (int i = 0; i < 64; ++i) t[static_cast<unsigned char>(alphabet[i])] = i;
  return t;
}

std::string describe(char c) {
  const auto u = static_cast<unsigned char>(c);
  if (u >= 0x21 && u < 0x7f) return std::string("'") + c + "'";
  char buf[16];
  std::snprintf(buf, sizeof buf, "byte 0x%02X", static_cast<unsigned>(u));
  return buf;
}

}  // namespace

std::string base64_encode(std::span<const std::uint8_t> in, Base64Alphabet alphabet, bool pad) {
  const char* abc = alphabet == Base64Alphabet::kUrl ? kUrl : kStandard;
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < in.size(); i += 3) {
    const std::size_t left = in.size() - i;
    std::uint32_t v = std::uint32_t{in[i]} << 16;
    if (left > 1) v |= std::uint32_t{in[i + 1]} << 8;
    if (left > 2) v |= in[i + 2];
    out += abc[(v >> 18) & 63];
    out += abc[(v >> 12) & 63];
    if (left > 1)
      out += abc[(v >> 6) & 63];
    else if (pad)
      out += '=';
    if (left > 2)
      out += abc[v & 63];
    else if (pad)
      out += '=';
  }
  return out;
}

std::string base64url(std::span<const std::uint8_t> bytes) {
  return base64_encode(bytes, Base64Alphabet::kUrl, false);
}

std::size_t base64_decoded_size(std::string_view text) {
  std::size_t n = text.size();
  while (n > 0 && text[n - 1] == '=') --n;
  return n / 4 * 3 + (n % 4 == 0 ? 0 : n % 4 - 1);
}

Result<std::vector<std::uint8_t>> base64_decode(std::string_view s, Base64Alphabet alphabet) {
  static const std::array<int, 256> kStandardValues = reverse_table(kStandard);
  static const std::array<int, 256> kUrlValues = reverse_table(kUrl);
  const std::array<int, 256>& values =
      alphabet == Base64Alphabet::kUrl ? kUrlValues : kStandardValues;
  // Data characters end at the first '='.
  std::size_t data_end = 0;
  while (data_end < s.size() && s[data_end] != '=') ++data_end;
  std::vector<std::uint8_t> out;
  out.reserve(base64_decoded_size(s.substr(0, data_end)));
  std::uint32_t acc = 0;
  int bits = 0;
  for (std::size_t i = 0; i < data_end; ++i) {
    const int v = values[static_cast<unsigned char>(s[i])];
    if (v < 0)
      return core::error_at_offset(codes::BASE64_CHARACTER,
                                   describe(s[i]) + " is not a " +
                                       (alphabet == Base64Alphabet::kUrl ? "base64url" : "base64") +
                                       " character",
                                   i);
    acc = ((acc << 6) | static_cast<std::uint32_t>(v)) & 0xFFFFFFu;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<std::uint8_t>((acc >> bits) & 0xFFu));
    }
  }
  const std::size_t rest = data_end % 4;
  if (rest == 1)
    return core::error_at_offset(codes::BASE64_LENGTH,
                                 "a single character in the last group of 4 cannot encode a byte",
                                 data_end - 1);
  if (data_end < s.size()) {
    // Padding: exactly what completes the last group, and nothing after it.
    const std::size_t want = rest == 0 ? 0 : 4 - rest;
    std::size_t have = 0;
    while (data_end + have < s.size() && s[data_end + have] == '=') ++have;
    if (want == 0 || have != want || data_end + have != s.size()) {
      const std::size_t at = want == 0 ? data_end : data_end + std::min(have, want);
      return core::error_at_offset(
          codes::BASE64_PADDING,
          want == 0     ? "'=' padding after a complete group of 4 characters"
          : have < want ? "the last group needs " + std::to_string(want) + " '=' characters"
                        : "characters after the '=' padding",
          at);
    }
  }
  if (bits > 0 && (acc & ((1u << bits) - 1)) != 0)
    return core::error_at_offset(codes::BASE64_TRAILING_BITS,
                                 "the unused low bits of the last character are not zero",
                                 data_end - 1);
  return out;
}

}  // namespace charkit::core
