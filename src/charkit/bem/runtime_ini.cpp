// runtime.ini reading and byte-preserving edits (bem/runtime_ini.h).
#include "charkit/bem/runtime_ini.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <set>

#include "charkit/bem/error_codes.h"
#include "charkit/core/utf8.h"

namespace charkit::bem {

namespace {

bool is_space(char c) {
  return c == ' ' || c == '\t';
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && (is_space(s.back()) || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

core::Error line_error(core::ErrorCode code, std::size_t line, std::size_t offset,
                       std::string msg) {
  return core::error_at_offset(code, "line " + std::to_string(line) + ": " + std::move(msg),
                               offset);
}

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

core::Result<RuntimeIni> RuntimeIni::parse(std::string_view text) {
  if (text.size() > kRuntimeIniMaxBytes)
    return core::make_error(codes::RUNTIME_INI_TOO_LARGE,
                            "the file has " + std::to_string(text.size()) +
                                " bytes; runtime.ini is read only up to 1 MiB");
  RuntimeIni ini;
  ini.text_.assign(text);
  if (auto st = ini.reparse(); !st) return std::move(st).error();
  return ini;
}

core::Status RuntimeIni::reparse() {
  const std::string_view all = text_;
  body_ = all.substr(0, 3) == "\xEF\xBB\xBF" ? 3 : 0;
  if (!core::is_valid_utf8(all.substr(body_)))
    return core::make_error(codes::RUNTIME_INI_UTF8, "the file is not valid UTF-8");
  sections_.clear();
  sections_.push_back({"", 1, body_, {}});
  std::size_t current = 0;
  std::size_t pos = body_, line = 1;
  while (pos < all.size()) {
    std::size_t eol = all.find('\n', pos);
    const std::size_t next = eol == std::string_view::npos ? all.size() : eol + 1;
    if (eol == std::string_view::npos) eol = all.size();
    const std::string_view raw = all.substr(pos, eol - pos);
    const std::string_view t = trim(raw);
    if (t.empty() || t.front() == ';' || t.front() == '#') {
      // blank or comment: part of the section it is in, but not its end
      if (!t.empty()) sections_[current].end = next;
    } else if (t.front() == '[') {
      if (t.back() != ']' || t.size() < 2)
        return line_error(codes::RUNTIME_INI_SYNTAX, line, pos, "a section header is '[name]'");
      const std::string name(trim(t.substr(1, t.size() - 2)));
      auto it = std::find_if(sections_.begin(), sections_.end(),
                             [&](const IniSection& s) { return s.name == name; });
      if (it == sections_.end()) {
        sections_.push_back({name, line, next, {}});
        current = sections_.size() - 1;
      } else {
        current = static_cast<std::size_t>(it - sections_.begin());
      }
      sections_[current].end = next;
    } else {
      const std::size_t eq = raw.find('=');
      if (eq == std::string_view::npos)
        return line_error(codes::RUNTIME_INI_SYNTAX, line, pos,
                          "not a header, key=value, comment or blank line");
      const std::string key(trim(raw.substr(0, eq)));
      if (key.empty()) return line_error(codes::RUNTIME_INI_SYNTAX, line, pos, "a key is missing");
      IniSection& sec = sections_[current];
      for (const IniEntry& e : sec.entries)
        if (e.key == key)
          return line_error(codes::RUNTIME_INI_DUPLICATE_KEY, line, pos,
                            "\"" + key + "\" is set twice in section [" + sec.name +
                                "] (first on line " + std::to_string(e.line) + ")");
      std::size_t vb = pos + eq + 1, ve = eol;
      while (vb < ve && is_space(all[vb])) ++vb;
      while (ve > vb && (is_space(all[ve - 1]) || all[ve - 1] == '\r')) --ve;
      sec.entries.push_back({key, std::string(all.substr(vb, ve - vb)), line, vb, ve});
      sec.end = next;
    }
    pos = next;
    ++line;
  }
  return core::Ok{};
}

const IniSection* RuntimeIni::section(std::string_view name) const {
  for (const IniSection& s : sections_)
    if (s.name == name) return &s;
  return nullptr;
}

std::optional<std::string> RuntimeIni::get(std::string_view section_name,
                                           std::string_view key) const {
  const IniSection* s = section(section_name);
  if (!s) return std::nullopt;
  for (const IniEntry& e : s->entries)
    if (e.key == key) return e.value;
  return std::nullopt;
}

core::Status RuntimeIni::set(std::string_view section_name, std::string_view key,
                             std::string_view value) {
  const auto bad = [](std::string_view what) {
    return core::make_error(codes::RUNTIME_INI_SYNTAX, std::string(what));
  };
  if (key.empty() || key.find_first_of("=\r\n") != std::string_view::npos || key.front() == '[' ||
      key.front() == ';' || key.front() == '#' || trim(key) != key)
    return bad("a key is one line without '=', not starting with '[', ';' or '#'");
  if (value.find_first_of("\r\n") != std::string_view::npos || trim(value) != value)
    return bad("a value is one line without leading or trailing spaces");
  if (section_name.find_first_of("[]\r\n") != std::string_view::npos)
    return bad("a section name has no brackets or newlines");
  if (!core::is_valid_utf8(key) || !core::is_valid_utf8(value) ||
      !core::is_valid_utf8(section_name))
    return core::make_error(codes::RUNTIME_INI_UTF8, "keys and values are UTF-8");
  const std::string newline = text_.find("\r\n") != std::string::npos ? "\r\n" : "\n";
  const IniSection* s = nullptr;
  for (const IniSection& sec : sections_)
    if (sec.name == section_name) s = &sec;
  std::string saved = text_;
  if (s) {
    for (const IniEntry& e : s->entries)
      if (e.key == key) {
        text_.replace(e.value_begin, e.value_end - e.value_begin, value);
        if (auto st = reparse(); !st) {
          text_ = std::move(saved);
          (void)reparse();
          return st;
        }
        return core::Ok{};
      }
    // A new key after the section's last line.
    std::size_t at = s->end;
    std::string ins;
    if (at > 0 && at <= text_.size() && text_[at - 1] != '\n') ins += newline;
    ins += std::string(key) + "=" + std::string(value) + newline;
    text_.insert(at, ins);
  } else {
    std::string ins;
    if (text_.size() > body_ && text_.back() != '\n') ins += newline;
    if (text_.size() > body_) ins += newline;  // a blank line between sections
    ins += "[" + std::string(section_name) + "]" + newline + std::string(key) + "=" +
           std::string(value) + newline;
    text_ += ins;
  }
  if (auto st = reparse(); !st) {
    text_ = std::move(saved);
    (void)reparse();
    return st;
  }
  return core::Ok{};
}

bool RuntimeIni::remove(std::string_view section_name, std::string_view key) {
  const IniSection* s = section(section_name);
  if (!s) return false;
  for (const IniEntry& e : s->entries) {
    if (e.key != key) continue;
    std::size_t b = text_.rfind('\n', e.value_begin);
    b = b == std::string::npos ? body_ : b + 1;
    std::size_t n = text_.find('\n', e.value_end);
    n = n == std::string::npos ? text_.size() : n + 1;
    text_.erase(b, n - b);
    (void)reparse();
    return true;
  }
  return false;
}

bool RuntimeIni::remove_section(std::string_view section_name) {
  if (section_name.empty() || !section(section_name)) return false;
  // Every line from each of its headers up to the next header.
  std::string out = text_.substr(0, body_);
  bool inside = false;
  std::size_t pos = body_;
  while (pos < text_.size()) {
    std::size_t eol = text_.find('\n', pos);
    const std::size_t next = eol == std::string::npos ? text_.size() : eol + 1;
    if (eol == std::string::npos) eol = text_.size();
    const std::string_view t = trim(std::string_view(text_).substr(pos, eol - pos));
    if (!t.empty() && t.front() == '[' && t.back() == ']')
      inside = trim(t.substr(1, t.size() - 2)) == section_name;
    if (!inside) out += text_.substr(pos, next - pos);
    pos = next;
  }
  text_ = std::move(out);
  (void)reparse();
  return true;
}

core::Result<bool> parse_ini_bool(std::string_view v) {
  if (v == "true" || v == "1") return true;
  if (v == "false" || v == "0") return false;
  return core::make_error(codes::RUNTIME_INI_BOOL,
                          "\"" + std::string(v) + "\" is not a boolean (true, false, 1 or 0)");
}

std::optional<std::string> canonical_hotkey(std::string_view key) {
  if (key.empty()) return std::nullopt;
  std::vector<std::string> parts;
  std::size_t pos = 0;
  // '+' is a separator except as the last character of a lone "+": keys
  // never use it (ADD is the keypad plus).
  while (true) {
    const std::size_t p = key.find('+', pos);
    if (p == std::string_view::npos) {
      parts.push_back(upper(key.substr(pos)));
      break;
    }
    parts.push_back(upper(key.substr(pos, p - pos)));
    pos = p + 1;
  }
  bool ctrl = false, alt = false, shift = false;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    bool* m = parts[i] == "CTRL"    ? &ctrl
              : parts[i] == "ALT"   ? &alt
              : parts[i] == "SHIFT" ? &shift
                                    : nullptr;
    if (!m || *m) return std::nullopt;
    *m = true;
  }
  const std::string& k = parts.back();
  static const std::set<std::string> named = {
      "ADD",      "SUBTRACT",  "MULTIPLY", "DIVIDE", "DECIMAL", "SPACE", "TAB",
      "ENTER",    "BACKSPACE", "INSERT",   "DELETE", "HOME",    "END",   "PAGEUP",
      "PAGEDOWN", "UP",        "DOWN",     "LEFT",   "RIGHT"};
  bool ok = named.count(k) > 0;
  if (!ok && k.size() == 1)
    ok = std::isalnum(static_cast<unsigned char>(k[0])) ||
         std::string_view("=-,./;'[]\\`").find(k[0]) != std::string_view::npos;
  if (!ok && k.size() >= 2 && k[0] == 'F') {
    const std::string n = k.substr(1);
    ok = std::all_of(n.begin(), n.end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }) &&
         n.size() <= 2 && n[0] != '0' && std::stoi(n) >= 1 && std::stoi(n) <= 24;
  }
  if (!ok && k.size() == 7 && k.rfind("NUMPAD", 0) == 0)
    ok = std::isdigit(static_cast<unsigned char>(k[6]));
  if (!ok) return std::nullopt;
  std::string out;
  if (ctrl) out += "CTRL+";
  if (alt) out += "ALT+";
  if (shift) out += "SHIFT+";
  return out + k;
}

namespace {

// "a:x&b:y" -> pairs; an empty text gives none. Errors name the entry.
core::Result<std::vector<std::pair<std::string, std::string>>> split_pairs(std::string_view text,
                                                                           core::ErrorCode code,
                                                                           std::size_t line,
                                                                           std::size_t offset) {
  std::vector<std::pair<std::string, std::string>> out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('&', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view item = text.substr(pos, end - pos);
    const std::size_t colon = item.find(':');
    if (colon == std::string_view::npos || colon == 0)
      return line_error(code, line, offset, "\"" + std::string(item) + "\" is not id:value");
    out.emplace_back(std::string(item.substr(0, colon)), std::string(item.substr(colon + 1)));
    pos = end + 1;
  }
  return out;
}

}  // namespace

core::Result<ModSettings> read_mod_settings(const RuntimeIni& ini, std::string_view id) {
  ModSettings m;
  m.id = std::string(id);
  const IniSection* s = ini.section("Mod." + std::string(id));
  if (!s) return m;
  std::optional<std::string> overlay;
  for (const IniSection& sec : ini.sections())
    for (const IniEntry& e : sec.entries)
      if (e.key == "overlay_hotkey" && !e.value.empty()) overlay = canonical_hotkey(e.value);
  for (const IniEntry& e : s->entries) {
    if (e.key == "enabled") {
      auto b = parse_ini_bool(e.value);
      if (!b)
        return line_error(codes::RUNTIME_INI_BOOL, e.line, e.value_begin,
                          "enabled: " + b.error().message);
      m.enabled = *b;
    } else if (e.key == "package") {
      m.package = e.value;
    } else if (e.key == "options") {
      m.options = e.value;
    } else if (e.key == "parameters_saved") {
      m.parameters_saved = e.value;
    } else if (e.key == "driver_hotkeys") {
      auto pairs = split_pairs(e.value, codes::RUNTIME_INI_HOTKEY, e.line, e.value_begin);
      if (!pairs) return std::move(pairs).error();
      if (pairs->size() > 16)
        return line_error(codes::RUNTIME_INI_HOTKEY, e.line, e.value_begin,
                          "driver_hotkeys has " + std::to_string(pairs->size()) +
                              " entries; at most 16 (one per driver)");
      std::set<std::string> ids;
      for (auto& [driver, key] : *pairs) {
        if (!ids.insert(driver).second)
          return line_error(codes::RUNTIME_INI_HOTKEY, e.line, e.value_begin,
                            "driver \"" + driver + "\" has two hotkeys");
        if (!key.empty()) {
          auto k = canonical_hotkey(key);
          if (!k)
            return line_error(codes::RUNTIME_INI_HOTKEY, e.line, e.value_begin,
                              "\"" + key + "\" (driver \"" + driver +
                                  "\") is not a key name (F1, CTRL+F2, NUMPAD1, ADD, = ...)");
          for (const auto& [other, okey] : m.hotkeys)
            if (okey == *k)
              return line_error(
                  codes::RUNTIME_INI_HOTKEY, e.line, e.value_begin,
                  "drivers \"" + other + "\" and \"" + driver + "\" are both on " + *k);
          if (overlay && *overlay == *k)
            m.warnings.push_back("driver \"" + driver + "\" shares " + *k +
                                 " with overlay_hotkey (both respond)");
          key = *k;
        }
        m.hotkeys.emplace_back(driver, key);
      }
    } else if (e.key == "drivers") {
      auto pairs = split_pairs(e.value, codes::RUNTIME_INI_DRIVERS, e.line, e.value_begin);
      if (!pairs) return std::move(pairs).error();
      for (const auto& [driver, state] : *pairs)
        if (state != "play" && state != "pause")
          return line_error(codes::RUNTIME_INI_DRIVERS, e.line, e.value_begin,
                            "\"" + driver + ":" + state + "\": a driver is id:play or id:pause");
      m.drivers = std::move(*pairs);
    }
  }
  return m;
}

std::string format_pairs(const std::vector<std::pair<std::string, std::string>>& pairs) {
  std::string out;
  for (const auto& [a, b] : pairs) out += (out.empty() ? "" : "&") + a + ":" + b;
  return out;
}

}  // namespace charkit::bem
