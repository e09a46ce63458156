// Package folders (the ZIP layout as a directory) are accepted by every
// command that reads a package: validate, inspect, select and export.
#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "cli_support.h"

using namespace charkit::clitest;

namespace {

const std::string kExample = std::string(CHARKIT_EXAMPLES_DIR) + "/example-1.5.bem";

class FolderInput : public ScratchDir {
 protected:
  std::filesystem::path unpacked() {
    auto dir = dir_ / "pkg";
    auto r = run_charkit("bem unpack " + quote(kExample) + " " + quote(dir));
    EXPECT_EQ(r.exit_code, 0);
    return dir;
  }
};

}  // namespace

TEST_F(FolderInput, ValidateAcceptsAFolder) {
  auto dir = unpacked();
  auto r = run_charkit("bem validate " + quote(dir));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("valid"), std::string::npos) << r.out;
}

TEST_F(FolderInput, ABrokenFolderIsInvalidNotAnIoError) {
  auto dir = unpacked();
  // Drop one payload: the package is incomplete (§14 names the payload).
  std::filesystem::path victim;
  for (const auto& e : std::filesystem::directory_iterator(dir / "payloads")) {
    victim = e.path();
    break;
  }
  ASSERT_FALSE(victim.empty());
  std::filesystem::remove(victim);
  auto r = run_charkit("bem validate " + quote(dir), true);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("ZIP package is missing payload"), std::string::npos) << r.out;
}

TEST_F(FolderInput, SelectInspectAndExportAcceptAFolder) {
  auto dir = unpacked();
  auto from_file = run_charkit("bem select " + quote(kExample) + " --json");
  auto from_dir = run_charkit("bem select " + quote(dir) + " --json");
  ASSERT_EQ(from_file.exit_code, 0) << from_file.out;
  ASSERT_EQ(from_dir.exit_code, 0) << from_dir.out;
  // The same package gives the same plan from either container.
  auto plan = [](const std::string& s) { return s.substr(s.find("\"settings\"")); };
  EXPECT_EQ(plan(from_file.out), plan(from_dir.out));
  EXPECT_EQ(run_charkit("bem inspect " + quote(dir)).exit_code, 0);
  auto glb = dir_ / "out.glb";
  EXPECT_EQ(run_charkit("bem export " + quote(dir) + " -o " + quote(glb)).exit_code, 0);
  EXPECT_TRUE(std::filesystem::exists(glb));
}

TEST_F(FolderInput, AMissingPathIsAnIoError) {
  EXPECT_EQ(run_charkit("bem validate " + quote(dir_ / "nope")).exit_code, 2);
  EXPECT_EQ(run_charkit("bem select " + quote(dir_ / "nope")).exit_code, 2);
}
