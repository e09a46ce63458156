// ASCII-only case folding for protocol and file-format keywords (BVH
// keywords, HTTP/MIME header names, joint names). Locale-independent: only 'A'..'Z' are
// folded; every other byte, including non-ASCII UTF-8 bytes, is left as is.
#pragma once

#include <cstddef>
#include <string_view>

namespace charkit::core {

/// 'A'..'Z' to 'a'..'z'; any other char unchanged.
inline char ascii_lower(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

/// Equal ignoring ASCII case (strings of different lengths are never equal).
inline bool ascii_iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (ascii_lower(a[i]) != ascii_lower(b[i])) return false;
  return true;
}

/// s without leading and trailing spaces and tabs (HTTP's optional
/// whitespace, RFC 9110 §5.6.3).
inline std::string_view trim_blanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace charkit::core
