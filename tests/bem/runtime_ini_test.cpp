// runtime.ini (bem/runtime_ini.h): the public reader's rules, edits that keep
// every other byte, hotkey names and the [Mod.<id>] settings.
#include "charkit/bem/runtime_ini.h"

#include <string>

#include <gtest/gtest.h>

using namespace charkit::bem;

namespace {

const std::string kSeedExample =
    "\xEF\xBB\xBF; player settings\r\n"
    "[General]\r\n"
    "overlay_hotkey = F10\r\n"
    "\r\n"
    "[Mod.xueyuan-full]\r\n"
    "enabled=true\r\n"
    "package=packages/xueyuan-full.bem\r\n"
    "parameters_saved=dildo_depth:500&anal_morph:300\r\n"
    "driver_hotkeys=dildo_thrust:F1&anal_plug_thrust:CTRL+F2&vag_cycle:\r\n"
    "\r\n"
    "[Other]\r\n"
    "k=v\r\n";

}  // namespace

TEST(RuntimeIni, ReadsTheSeedsExampleWithBomCommentsAndCrlf) {
  auto ini = RuntimeIni::parse(kSeedExample);
  ASSERT_TRUE(ini) << ini.error().to_string();
  EXPECT_EQ(ini->text(), kSeedExample);  // the BOM is kept in the bytes, dropped when read
  EXPECT_EQ(ini->get("General", "overlay_hotkey"), "F10");  // spaces around '=' trimmed
  EXPECT_EQ(ini->get("Mod.xueyuan-full", "enabled"), "true");
  EXPECT_EQ(ini->get("Mod.xueyuan-full", "parameters_saved"), "dildo_depth:500&anal_morph:300");
  EXPECT_EQ(ini->get("Other", "k"), "v");  // no \r in values
  EXPECT_FALSE(ini->get("Other", "missing"));
  EXPECT_FALSE(ini->get("Nope", "k"));
  auto mod = read_mod_settings(*ini, "xueyuan-full");
  ASSERT_TRUE(mod) << mod.error().to_string();
  EXPECT_EQ(mod->enabled, true);
  EXPECT_EQ(mod->package, "packages/xueyuan-full.bem");
  ASSERT_EQ(mod->hotkeys.size(), 3u);
  EXPECT_EQ(mod->hotkeys[1], (std::pair<std::string, std::string>{"anal_plug_thrust", "CTRL+F2"}));
  EXPECT_EQ(mod->hotkeys[2].second, "");  // empty: unbound
  EXPECT_TRUE(mod->warnings.empty());
  EXPECT_EQ(format_pairs(mod->hotkeys), "dildo_thrust:F1&anal_plug_thrust:CTRL+F2&vag_cycle:");
}

TEST(RuntimeIni, ErrorsNameTheLine) {
  auto dup = RuntimeIni::parse("[A]\nk=1\n\n[B]\nk=2\n[A]\nk=3\n");
  ASSERT_FALSE(dup);
  EXPECT_EQ(dup.error().code, "RUNTIME_INI_DUPLICATE_KEY");
  EXPECT_NE(dup.error().message.find("line 7"), std::string::npos) << dup.error().message;
  EXPECT_NE(dup.error().message.find("first on line 2"), std::string::npos);
  EXPECT_EQ(dup.error().location.offset, 21u);
  auto syntax = RuntimeIni::parse("[A]\nk=1\njust words\n");
  ASSERT_FALSE(syntax);
  EXPECT_EQ(syntax.error().code, "RUNTIME_INI_SYNTAX");
  EXPECT_NE(syntax.error().message.find("line 3"), std::string::npos);
  EXPECT_EQ(RuntimeIni::parse("[A\n").error().code, "RUNTIME_INI_SYNTAX");
  EXPECT_EQ(RuntimeIni::parse("=v\n").error().code, "RUNTIME_INI_SYNTAX");
  EXPECT_EQ(RuntimeIni::parse("[A]\nk=\xC3\n").error().code, "RUNTIME_INI_UTF8");
  const std::string big(kRuntimeIniMaxBytes + 1, '\n');
  EXPECT_EQ(RuntimeIni::parse(big).error().code, "RUNTIME_INI_TOO_LARGE");
  EXPECT_TRUE(RuntimeIni::parse(std::string(kRuntimeIniMaxBytes, '\n')));
}

TEST(RuntimeIni, EditsKeepEveryOtherByte) {
  auto ini = RuntimeIni::parse(kSeedExample);
  ASSERT_TRUE(ini);
  // A changed value replaces only its bytes.
  ASSERT_TRUE(ini->set("Mod.xueyuan-full", "enabled", "false"));
  std::string want = kSeedExample;
  want.replace(want.find("enabled=true") + 8, 4, "false");
  EXPECT_EQ(ini->text(), want);
  // A new key goes after the section's last line, before the blank line; the
  // file's CRLF line ends are used.
  ASSERT_TRUE(ini->set("Mod.xueyuan-full", "options", "outfit:b"));
  want.insert(want.find("\r\n\r\n[Other]") + 2, "options=outfit:b\r\n");
  EXPECT_EQ(ini->text(), want);
  // A new section at the end.
  ASSERT_TRUE(ini->set("Mod.new", "enabled", "true"));
  want += "\r\n[Mod.new]\r\nenabled=true\r\n";
  EXPECT_EQ(ini->text(), want);
  // Removing a key removes its line only; removing a section all its lines.
  ASSERT_TRUE(ini->remove("Other", "k"));
  std::string w2 = want;
  w2.erase(w2.find("k=v\r\n"), 5);
  EXPECT_EQ(ini->text(), w2);
  ASSERT_TRUE(ini->remove_section("Mod.new"));
  w2.erase(w2.find("[Mod.new]"));
  EXPECT_EQ(ini->text(), w2);
  EXPECT_FALSE(ini->remove("Other", "k"));
  // What would not read back is refused, and the text is unchanged.
  const std::string before = ini->text();
  EXPECT_EQ(ini->set("A", "k", "two\nlines").error().code, "RUNTIME_INI_SYNTAX");
  EXPECT_EQ(ini->set("A", "k=", "v").error().code, "RUNTIME_INI_SYNTAX");
  EXPECT_EQ(ini->set("A", "k", " padded").error().code, "RUNTIME_INI_SYNTAX");
  EXPECT_EQ(ini->text(), before);
  // Appending to a file without a final newline.
  auto bare = RuntimeIni::parse("[A]\nk=1");
  ASSERT_TRUE(bare);
  ASSERT_TRUE(bare->set("A", "j", "2"));
  EXPECT_EQ(bare->text(), "[A]\nk=1\nj=2\n");
}

TEST(RuntimeIni, BooleansAndHotkeyNames) {
  EXPECT_EQ(*parse_ini_bool("true"), true);
  EXPECT_EQ(*parse_ini_bool("1"), true);
  EXPECT_EQ(*parse_ini_bool("false"), false);
  EXPECT_EQ(*parse_ini_bool("0"), false);
  EXPECT_EQ(parse_ini_bool("yes").error().code, "RUNTIME_INI_BOOL");
  EXPECT_EQ(parse_ini_bool("True").error().code, "RUNTIME_INI_BOOL");
  EXPECT_EQ(canonical_hotkey("f1"), "F1");
  EXPECT_EQ(canonical_hotkey("F24"), "F24");
  EXPECT_EQ(canonical_hotkey("ctrl+F2"), "CTRL+F2");
  EXPECT_EQ(canonical_hotkey("shift+ctrl+a"), "CTRL+SHIFT+A");
  EXPECT_EQ(canonical_hotkey("NUMPAD1"), "NUMPAD1");
  EXPECT_EQ(canonical_hotkey("ADD"), "ADD");
  EXPECT_EQ(canonical_hotkey("="), "=");
  EXPECT_EQ(canonical_hotkey("ALT+["), "ALT+[");
  for (const char* bad :
       {"", "F25", "F0", "F01", "CTRL+", "HYPER+A", "CTRL+CTRL+A", "NUMPAD", "ESCAPE?", "AB"})
    EXPECT_FALSE(canonical_hotkey(bad)) << bad;
}

TEST(RuntimeIni, ModSettingsRules) {
  auto read = [](const std::string& body) {
    auto ini = RuntimeIni::parse("[General]\noverlay_hotkey=F1\n[Mod.p]\n" + body);
    EXPECT_TRUE(ini) << ini.error().to_string();
    return read_mod_settings(*ini, "p");
  };
  auto clash = read("driver_hotkeys=a:f1&b:\ndrivers=a:play&b:pause\n");
  ASSERT_TRUE(clash) << clash.error().to_string();
  EXPECT_EQ(clash->hotkeys[0].second, "F1");  // canonical spelling
  ASSERT_EQ(clash->warnings.size(), 1u);      // F1 is overlay_hotkey too: warned, kept
  EXPECT_NE(clash->warnings[0].find("overlay_hotkey"), std::string::npos);
  EXPECT_EQ(format_pairs(clash->drivers), "a:play&b:pause");
  EXPECT_EQ(read("driver_hotkeys=a:F2&b:f2\n").error().code, "RUNTIME_INI_HOTKEY");
  EXPECT_EQ(read("driver_hotkeys=a:F2&a:F3\n").error().code, "RUNTIME_INI_HOTKEY");
  EXPECT_EQ(read("driver_hotkeys=a:F99\n").error().code, "RUNTIME_INI_HOTKEY");
  std::string seventeen;
  for (int i = 0; i < 17; ++i) seventeen += (i ? "&d" : "d") + std::to_string(i) + ":";
  auto many = read("driver_hotkeys=" + seventeen + "\n");
  ASSERT_FALSE(many);
  EXPECT_NE(many.error().message.find("at most 16"), std::string::npos);
  EXPECT_EQ(read("drivers=a:run\n").error().code, "RUNTIME_INI_DRIVERS");
  auto b = read("enabled=yes\n");
  ASSERT_FALSE(b);
  EXPECT_EQ(b.error().code, "RUNTIME_INI_BOOL");
  EXPECT_NE(b.error().message.find("line 4"), std::string::npos) << b.error().message;
  // A package without a section: nothing saved.
  auto ini = RuntimeIni::parse("");
  ASSERT_TRUE(ini);
  auto none = read_mod_settings(*ini, "absent");
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->enabled);
  EXPECT_TRUE(none->hotkeys.empty());
}
