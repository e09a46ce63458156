// Text from input files (names, messages) goes to a terminal: control
// characters are escaped so a crafted name cannot move the cursor or clear
// the screen. Shared by every command file.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace charkit::app {

inline std::string printable(std::string_view s, bool keep_newlines = false) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && !(keep_newlines && c == '\n')) || u == 0x7F) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02X", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace charkit::app
