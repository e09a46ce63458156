// The player's settings file, runtime.ini, and the `[Mod.<package id>]`
// sections that hold each package's saved settings (docs/bem/library.md).
//
// Reading follows the public reader's rules (shared/reference): at most
// 1 MiB, a UTF-8 BOM is dropped, a key given twice in one section is an
// error, booleans are true/false/1/0. Editing keeps every other byte of the
// file as it was: a changed value replaces only its own bytes, a new key goes
// at the end of its section, a new section at the end of the file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "charkit/core/result.h"

namespace charkit::bem {

inline constexpr std::size_t kRuntimeIniMaxBytes = std::size_t{1} << 20;

struct IniEntry {
  std::string key;
  std::string value;                           ///< trimmed of spaces and tabs
  std::size_t line = 0;                        ///< 1-based
  std::size_t value_begin = 0, value_end = 0;  ///< byte range of the value in text()
};

struct IniSection {
  std::string name;  ///< "" for keys before the first header
  std::size_t line = 0;
  std::size_t end = 0;  ///< byte offset just past its last non-blank line
  std::vector<IniEntry> entries;
};

class RuntimeIni {
 public:
  /// Errors (location: the byte offset of the line, message "line N: …"):
  /// RUNTIME_INI_TOO_LARGE, RUNTIME_INI_UTF8, RUNTIME_INI_SYNTAX (a line that
  /// is no header, key=value, comment or blank), RUNTIME_INI_DUPLICATE_KEY.
  /// A header naming a section again continues that section.
  static core::Result<RuntimeIni> parse(std::string_view text);

  /// The file's bytes, BOM included when it had one.
  const std::string& text() const { return text_; }
  const std::vector<IniSection>& sections() const { return sections_; }
  const IniSection* section(std::string_view name) const;
  std::optional<std::string> get(std::string_view section, std::string_view key) const;

  /// Sets a value (replacing only its bytes), or adds the key at the end of
  /// the section, or the section at the end of the file. Errors:
  /// RUNTIME_INI_SYNTAX for a key or value that would not read back
  /// (newlines, '=' or '[' leading a key, surrounding spaces).
  core::Status set(std::string_view section, std::string_view key, std::string_view value);
  /// Removes the key's line; false when absent.
  bool remove(std::string_view section, std::string_view key);
  /// Removes every line of the section, header included; false when absent.
  bool remove_section(std::string_view section);

 private:
  core::Status reparse();
  std::string text_;
  std::size_t body_ = 0;  ///< 3 after a BOM, else 0
  std::vector<IniSection> sections_;
};

/// true/false/1/0 (exactly). Errors: RUNTIME_INI_BOOL.
core::Result<bool> parse_ini_bool(std::string_view value);

/// A key name as overlay_hotkey writes it: modifiers CTRL, ALT, SHIFT joined
/// by '+' before one key: F1–F24, A–Z, 0–9, NUMPAD0–NUMPAD9, ADD, SUBTRACT,
/// MULTIPLY, DIVIDE, DECIMAL, SPACE, TAB, ENTER, BACKSPACE, INSERT, DELETE,
/// HOME, END, PAGEUP, PAGEDOWN, UP, DOWN, LEFT, RIGHT, or one of = - , . / ; '
/// [ ] \ `. Returns the canonical spelling (upper case, modifiers in the
/// order CTRL, ALT, SHIFT), or nullopt.
std::optional<std::string> canonical_hotkey(std::string_view key);

/// One `[Mod.<id>]` section as the library reads it.
struct ModSettings {
  std::string id;
  std::optional<bool> enabled;
  std::string package;
  std::string options;           ///< key `options`
  std::string parameters_saved;  ///< key `parameters_saved`
  /// driver_hotkeys: id -> canonical key ("" = unbound), in file order.
  std::vector<std::pair<std::string, std::string>> hotkeys;
  /// drivers=: id -> "play" or "pause", in file order.
  std::vector<std::pair<std::string, std::string>> drivers;
  std::vector<std::string> warnings;  ///< a hotkey that clashes with overlay_hotkey
};

/// Reads `[Mod.<id>]` (overlay_hotkey from the file's other sections, for the
/// clash warning). Errors, located at the line: RUNTIME_INI_BOOL (enabled),
/// RUNTIME_INI_HOTKEY (a key that is no key name, more than 16 entries, two
/// drivers on one key, an id twice), RUNTIME_INI_DRIVERS (an entry that is
/// not id:play or id:pause).
core::Result<ModSettings> read_mod_settings(const RuntimeIni& ini, std::string_view id);

/// "id:KEY&id:KEY" from pairs (as the file holds them).
std::string format_pairs(const std::vector<std::pair<std::string, std::string>>& pairs);

}  // namespace charkit::bem
