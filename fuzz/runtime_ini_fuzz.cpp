// runtime.ini (bem/runtime_ini.h): parse any bytes; when they parse, read
// every [Mod.*] section and make edits, which must keep the file parseable
// and every untouched key's value. Seeds in fuzz/corpus/runtime_ini/.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "charkit/bem/runtime_ini.h"

using namespace charkit::bem;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto ini = RuntimeIni::parse(text);
  if (!ini) return 0;
  for (const IniSection& s : ini->sections()) {
    if (s.name.rfind("Mod.", 0) == 0) (void)read_mod_settings(*ini, s.name.substr(4));
    for (const IniEntry& e : s.entries)
      if (e.key == "driver_hotkeys" || e.key == "overlay_hotkey") (void)canonical_hotkey(e.value);
  }
  // An edit of a value and a new key: everything else reads back the same.
  RuntimeIni edited = *ini;
  const std::string before_other = ini->get("Other", "k").value_or("<none>");
  if (!edited.set("Mod.fuzz", "enabled", "true")) return 0;
  if (!edited.set("Mod.fuzz", "driver_hotkeys", "a:F1&b:")) return 0;
  auto again = RuntimeIni::parse(edited.text());
  if (!again) std::abort();
  if (again->get("Mod.fuzz", "enabled") != "true") std::abort();
  if (again->get("Other", "k").value_or("<none>") != before_other) std::abort();
  (void)edited.remove("Mod.fuzz", "enabled");
  (void)edited.remove_section("Mod.fuzz");
  if (!RuntimeIni::parse(edited.text())) std::abort();
  return 0;
}
