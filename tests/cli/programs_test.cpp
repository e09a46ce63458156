// The three executables behind `charkit` (docs/cli.md §Programs): the
// launcher's choice of program for each argument list, its two places to
// look (beside itself, ../libexec/charkit), its error when neither holds the
// program, charkit-bem's libraries, and the same output from both programs.
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "charkit/core/json.h"
#include "cli_support.h"

namespace charkit::clitest {
namespace {

namespace fs = std::filesystem;

class Programs : public ScratchDir {
 protected:
  // A stand-in program that prints its name and arguments.
  void fake(const fs::path& path, const std::string& name) {
    fs::create_directories(path.parent_path());
    std::ofstream(path) << "#!/bin/sh\necho \"" << name << " $*\"\n";
    ::chmod(path.c_str(), 0755);
  }
  // A copy of the built launcher at `path`.
  void launcher(const fs::path& path) {
    fs::create_directories(path.parent_path());
    fs::copy_file(CHARKIT_BIN, path, fs::copy_options::overwrite_existing);
  }
};

TEST_F(Programs, TheFirstArgumentThatIsNotAnOptionPicksTheProgram) {
  const fs::path bin = dir_ / "flat";
  launcher(bin / "charkit");
  fake(bin / "charkit-bem", "BEM");
  fake(bin / "charkit-all", "ALL");
  auto run = [&](const std::string& args) {
    return run_with_stderr(quote(bin / "charkit") + " " + args).out;
  };
  EXPECT_EQ(run("bem validate a.bem"), "BEM bem validate a.bem\n");
  EXPECT_EQ(run("--json -q bem inspect x"), "BEM --json -q bem inspect x\n");
  EXPECT_EQ(run("--version"), "BEM --version\n");
  EXPECT_EQ(run("motion convert in.bvh"), "ALL motion convert in.bvh\n");
  EXPECT_EQ(run("--json model inspect bem"), "ALL --json model inspect bem\n");
  EXPECT_EQ(run("help bem validate"), "ALL help bem validate\n");
  EXPECT_EQ(run(""), "ALL \n");  // the top-level help lists every group
  EXPECT_EQ(run("--help"), "ALL --help\n");
  EXPECT_EQ(run("--version --help"), "ALL --version --help\n");
  EXPECT_EQ(run("-- bem"), "ALL -- bem\n");
  EXPECT_EQ(run("bemx"), "ALL bemx\n");
  // Arguments pass through unchanged, spaces and all.
  EXPECT_EQ(run("bem validate 'a b.bem' ''"), "BEM bem validate a b.bem \n");
}

TEST_F(Programs, InstalledTheProgramsAreInLibexec) {
  launcher(dir_ / "bin" / "charkit");
  fake(dir_ / "libexec" / "charkit" / "charkit-bem", "BEM");
  fake(dir_ / "libexec" / "charkit" / "charkit-all", "ALL");
  EXPECT_EQ(run_with_stderr(quote(dir_ / "bin" / "charkit") + " bem x").out, "BEM bem x\n");
  EXPECT_EQ(run_with_stderr(quote(dir_ / "bin" / "charkit") + " motion x").out, "ALL motion x\n");
  // Run through a symbolic link, the launcher still finds its own folder.
  fs::create_symlink(dir_ / "bin" / "charkit", dir_ / "link");
  EXPECT_EQ(run_with_stderr(quote(dir_ / "link") + " token list").out, "ALL token list\n");
}

TEST_F(Programs, AMissingProgramIsOneClearError) {
  launcher(dir_ / "alone" / "charkit");
  fake(dir_ / "alone" / "charkit-bem", "BEM");
  const std::string self = quote(dir_ / "alone" / "charkit");
  auto r = run_with_stderr(self + " motion convert x.bvh");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("error CLI_PROGRAM_MISSING: cannot run charkit-all"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("libexec/charkit/charkit-all"), std::string::npos) << r.out;
  // With --json: one JSON document on stdout, the error in it.
  auto j = run_with_stderr("(" + self + " --json motion convert x.bvh 2>/dev/null)");
  EXPECT_EQ(j.exit_code, 2);
  const auto doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(doc["ok"], false);
  ASSERT_EQ(doc["errors"].size(), 1u);
  EXPECT_EQ(doc["errors"][0]["code"], "CLI_PROGRAM_MISSING");
  EXPECT_EQ(doc["errors"][0]["severity"], "error");
  EXPECT_NE(doc["errors"][0]["message"].get<std::string>().find("charkit-all"), std::string::npos);
  // The bem group is still there.
  EXPECT_EQ(run_with_stderr(self + " bem x").out, "BEM bem x\n");
}

TEST_F(Programs, CharkitBemLoadsNoneOfTheOtherGroupsLibraries) {
  // The dynamic loader lists what it maps (no code of the program runs).
  auto r = run_with_stderr("LD_TRACE_LOADED_OBJECTS=1 '" CHARKIT_BEM_BIN "'");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("libzstd"), std::string::npos) << r.out;
  for (const char* lib : {"libassimp", "libprotobuf", "libonnx", "libcurl", "libpq", "libssl"})
    EXPECT_EQ(r.out.find(lib), std::string::npos) << lib << " in\n" << r.out;
  auto all = run_with_stderr("LD_TRACE_LOADED_OBJECTS=1 '" CHARKIT_ALL_BIN "'");
  EXPECT_NE(all.out.find("libprotobuf"), std::string::npos) << all.out;
}

TEST_F(Programs, BothProgramsGiveTheSameBemOutput) {
  for (const char* name : {"example-1.5.bem", "example-1.5.zip"}) {
    const std::string pkg = std::string("'") + CHARKIT_EXAMPLES_DIR + "/" + name + "'";
    for (const char* cmd : {"bem validate --json ", "bem inspect "}) {
      auto a = run_with_stderr(std::string("'") + CHARKIT_BIN + "' " + cmd + pkg);
      auto b = run_with_stderr(std::string("'") + CHARKIT_ALL_BIN + "' " + cmd + pkg);
      EXPECT_EQ(a.exit_code, b.exit_code) << cmd << name;
      EXPECT_EQ(a.out, b.out) << cmd << name;
      EXPECT_FALSE(a.out.empty());
    }
  }
  EXPECT_EQ(run_with_stderr(std::string("'") + CHARKIT_BIN + "' --version").out,
            run_with_stderr(std::string("'") + CHARKIT_ALL_BIN + "' --version").out);
}

}  // namespace
}  // namespace charkit::clitest
