// `charkit bem library` and `bem simulate --ini`: the real program on a
// library folder of packages built by hand (docs/bem/library.md).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "charkit/core/json.h"
#include "cli_support.h"
#include "package_builder.h"

namespace charkit {
namespace {

using clitest::read_text;

namespace fs = std::filesystem;
using clitest::quote;
using clitest::run_charkit;
using core::Json;

// The 1.5 baseline (outfit a replaces component 0 of chr_0013_aglina) with
// another package id and one material driver "glow".
testkit::TestPackage package(const std::string& id) {
  testkit::TestPackage p = testkit::make_valid_package(5);
  Json& m = p.manifest;
  m["package_id"] = id;
  m["required_capabilities"].push_back("dynamic-drivers-v1");
  m["drivers"] = Json::array({Json{
      {"id", "glow"},
      {"waveform", "sine"},
      {"base_frequency", 1.0},
      {"bindings",
       Json::array({Json{{"type", "material_float"}, {"component", 0}, {"property", "_Glow"}}})}}});
  return p;
}

class LibraryCli : public clitest::ScratchDir {
 protected:
  std::string lib() { return quote(dir_ / "lib"); }
  clitest::RunResult run(const std::string& args) {
    return run_charkit("bem library " + lib() + " " + args, true);
  }
  Json list() {
    auto r = run_charkit("bem library " + lib() + " list --json");
    EXPECT_EQ(r.exit_code, 0) << r.out;
    return Json::parse(r.out, nullptr, false);
  }
};

TEST_F(LibraryCli, AddListConflictsEditsAndRemove) {
  auto a = write("a.bem", package("pkg.a").binary());
  auto b = write("b.bem", package("pkg.b").binary());
  auto r = run("add " + quote(a));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  ASSERT_EQ(run("add " + quote(b)).exit_code, 0);
  EXPECT_TRUE(fs::exists(dir_ / "lib/packages/a.bem"));
  const fs::path ini = dir_ / "lib/runtime.ini";
  EXPECT_EQ(read_text(ini),
            "[Mod.pkg.a]\nenabled=true\npackage=packages/a.bem\n\n"
            "[Mod.pkg.b]\nenabled=true\npackage=packages/b.bem\n");
  EXPECT_EQ(run("add " + quote(a)).exit_code, 2);  // BEM_LIBRARY_EXISTS

  Json j = list();
  ASSERT_EQ(j["packages"].size(), 2u);
  EXPECT_EQ(j["packages"][0]["id"], "pkg.a");
  EXPECT_EQ(j["packages"][0]["valid"], true);
  EXPECT_EQ(j["packages"][0]["version"], "1.5");
  EXPECT_EQ(j["packages"][0]["character"], "chr_0013_aglina");
  ASSERT_EQ(j["conflicts"].size(), 1u);  // both replace component 0
  EXPECT_EQ(j["conflicts"][0]["wins"], "pkg.b");

  // A comment and odd spacing added by hand survive every edit.
  {
    std::string t = read_text(ini);
    std::ofstream(ini, std::ios::binary) << "; my notes\n"
                                         << t << "[General]\noverlay_hotkey = F3\n";
  }
  ASSERT_EQ(run("disable pkg.b").exit_code, 0);
  EXPECT_EQ(list()["conflicts"].size(), 0u);
  r = run("set pkg.a --hotkey glow=ctrl+f2 --options outfit:b");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(read_text(ini),
            "; my notes\n[Mod.pkg.a]\nenabled=true\npackage=packages/a.bem\noptions=outfit:b\n"
            "driver_hotkeys=glow:CTRL+F2\n\n"
            "[Mod.pkg.b]\nenabled=false\npackage=packages/b.bem\n[General]\noverlay_hotkey = F3\n");
  j = list();
  EXPECT_EQ(j["packages"][0]["options"], "outfit:b");
  EXPECT_EQ(j["packages"][0]["hotkeys"], "glow:CTRL+F2");
  // A bad key, an unknown driver: refused, the file unchanged.
  const std::string before = read_text(ini);
  r = run("set pkg.a --hotkey glow=F99");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  // About the option's value, not a line of a file that was never written.
  EXPECT_NE(r.out.find("--hotkey: error RUNTIME_INI_HOTKEY"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("line "), std::string::npos) << r.out;
  EXPECT_EQ(run("set pkg.a --hotkey thrust=F1").exit_code, 2);
  EXPECT_EQ(read_text(ini), before);
  // The overlay key is only warned about.
  r = run("set pkg.a --hotkey glow=F3");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("overlay_hotkey"), std::string::npos) << r.out;

  // The text listing shows the drivers= states as the JSON one does.
  {
    std::string t = read_text(ini);
    t.insert(t.find("driver_hotkeys="), "drivers=glow:play\n");
    std::ofstream(ini, std::ios::binary) << t;
  }
  r = run("list");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("\n  drivers glow:play"), std::string::npos) << r.out;
  EXPECT_EQ(list()["packages"][0]["drivers"], "glow:play");

  r = run("set nope --options outfit:a");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("pkg.a, pkg.b"), std::string::npos) << r.out;
  ASSERT_EQ(run("remove pkg.b").exit_code, 0);
  EXPECT_FALSE(fs::exists(dir_ / "lib/packages/b.bem"));
  EXPECT_EQ(read_text(ini).find("pkg.b"), std::string::npos);
  EXPECT_NE(read_text(ini).find("[General]\noverlay_hotkey = F3\n"), std::string::npos);
}

// A library folder that is not there is an error for every action but
// `add` (which makes it), and an unknown action is named as such.
TEST_F(LibraryCli, MissingFolderAndUnknownActionAreUsageErrors) {
  for (const char* action : {"list", "remove pkg.a", "enable pkg.a", "set pkg.a --options x"}) {
    auto r = run(action);
    EXPECT_EQ(r.exit_code, 2) << action << ": " << r.out;
    EXPECT_NE(r.out.find("IO_OPEN"), std::string::npos) << action << ": " << r.out;
  }
  EXPECT_FALSE(fs::exists(dir_ / "lib"));
  auto r = run("frobnicate");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("unknown action \"frobnicate\""), std::string::npos) << r.out;
  ASSERT_EQ(run("add " + quote(write("a.bem", package("pkg.a").binary()))).exit_code, 0);
  EXPECT_EQ(run("list").exit_code, 0);
}

TEST_F(LibraryCli, InvalidPackagesNeedForceAndAreAddedDisabled) {
  auto bytes = package("pkg.bad").binary();
  bytes.resize(bytes.size() - 7);  // the last payload cut short
  auto path = write("bad.bem", bytes);
  auto r = run("add " + quote(path));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("BEM_LIBRARY_INVALID_PACKAGE"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir_ / "lib/runtime.ini"));
  ASSERT_EQ(run("add " + quote(path) + " --force").exit_code, 0);
  Json j = list();
  ASSERT_EQ(j["packages"].size(), 1u);
  EXPECT_EQ(j["packages"][0]["enabled"], false);
  EXPECT_EQ(j["packages"][0]["valid"], false);
  EXPECT_NE(j["packages"][0]["problem"].get<std::string>().find("invalid"), std::string::npos);
  // A broken runtime.ini is reported with its line.
  std::ofstream(dir_ / "lib/runtime.ini", std::ios::binary) << "[Mod.x]\nenabled=1\nenabled=0\n";
  r = run("list");
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("RUNTIME_INI_DUPLICATE_KEY"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("line 3"), std::string::npos) << r.out;
}

TEST_F(LibraryCli, SimulateReadsTheDriversStatesFromTheIni) {
  auto p = write("a.bem", package("pkg.a").binary());
  std::ofstream(dir_ / "runtime.ini", std::ios::binary)
      << "[Mod.pkg.a]\nenabled=true\ndrivers=glow:play\n";
  auto r = run_charkit("bem simulate " + quote(p) + " --ini " + quote(dir_ / "runtime.ini") +
                       " --dt 0.25 --steps 1");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  std::istringstream in(r.out);
  std::string line;
  std::getline(in, line);
  Json j0 = Json::parse(line);
  EXPECT_EQ(j0["drivers"][0]["state"], "playing");
  std::getline(in, line);
  Json j1 = Json::parse(line);
  EXPECT_EQ(j1["drivers"][0]["phase"], 0.25);
  // sine at 0.25 (w = (1 - cos(pi/2)) / 2, 0.5 within rounding), range [0, 1]
  EXPECT_NEAR(j1["drivers"][0]["bindings"][0]["value"].get<double>(), 0.5, 1e-15);
  std::ofstream(dir_ / "runtime.ini", std::ios::binary) << "[Mod.pkg.a]\ndrivers=glow:run\n";
  r = run_charkit("bem simulate " + quote(p) + " --ini " + quote(dir_ / "runtime.ini"), true);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("RUNTIME_INI_DRIVERS"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace charkit
