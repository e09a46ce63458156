// UTF-8 checks and repairs (utf8.h).
#include "charkit/core/utf8.h"

#include <cstdint>
#include <cstdio>

namespace charkit::core {

std::size_t utf8_sequence_length(std::string_view s, std::size_t i) {
  const auto b = static_cast<unsigned char>(s[i]);
  if (b < 0x80) return 1;
  std::size_t n = 0;
  std::uint32_t cp = 0;
  if (b >= 0xC2 && b <= 0xDF) {
    n = 2;
    cp = b & 0x1Fu;
  } else if ((b & 0xF0) == 0xE0) {
    n = 3;
    cp = b & 0x0Fu;
  } else if (b >= 0xF0 && b <= 0xF4) {
    n = 4;
    cp = b & 0x07u;
  } else {
    return 0;  // continuation byte, C0/C1 (always overlong), F5..FF
  }
  if (n > s.size() - i) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    const auto c = static_cast<unsigned char>(s[i + k]);
    if ((c & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (c & 0x3Fu);
  }
  if (n == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) return 0;
  if (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) return 0;
  return n;
}

bool is_valid_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    // ASCII runs are the common case.
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    const std::size_t n = utf8_sequence_length(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string to_valid_utf8(std::string_view s) {
  if (is_valid_utf8(s)) return std::string(s);
  std::string out;
  out.reserve(s.size() + 16);
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = utf8_sequence_length(s, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

std::string_view utf8_prefix(std::string_view s, std::size_t max_bytes) {
  if (s.size() <= max_bytes) return s;
  std::size_t end = 0;
  while (end < s.size()) {
    std::size_t n = utf8_sequence_length(s, end);
    if (n == 0) n = 1;
    if (end + n > max_bytes) break;
    end += n;
  }
  return s.substr(0, end);
}

std::string printable(std::string_view s, bool keep_newlines) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    const std::size_t n = utf8_sequence_length(s, i);
    if (n == 0 || (n == 1 && ((b < 0x20 && !(keep_newlines && b == '\n')) || b == 0x7F))) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02X", b);
      out += buf;
      ++i;
      continue;
    }
    out.append(s.substr(i, n));
    i += n;
  }
  return out;
}

std::string quote_excerpt(std::string_view s, std::size_t max_bytes) {
  const std::string_view head = utf8_prefix(s, max_bytes);
  std::string out = "'" + printable(head);
  if (head.size() < s.size()) out += "...";
  return out + "'";
}

}  // namespace charkit::core
