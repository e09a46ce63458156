// `charkit bem convert` and `charkit bem unpack`, run as the real program.
// Written packages are also handed to the independent checker
// tests/tools/bem_check.py (written from the spec, in Python).
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "charkit/core/json.h"
#include "cli_support.h"
#include "package_builder.h"
#include "test_data.h"

namespace charkit::clitest {
namespace {

namespace fs = std::filesystem;

const fs::path kExamples = CHARKIT_EXAMPLES_DIR;
const fs::path kChecker = kExamples / ".." / ".." / "tools" / "bem_check.py";

std::vector<fs::path> examples() {
  std::vector<fs::path> v;
  for (const auto& e : fs::directory_iterator(kExamples))
    if (e.path().extension() == ".bem" || e.path().extension() == ".zip") v.push_back(e.path());
  std::sort(v.begin(), v.end());
  return v;
}

std::vector<std::uint8_t> read_bytes(const fs::path& p) {
  return testkit::read_file(p.string());
}

using ConvertCli = ScratchDir;

TEST_F(ConvertCli, ExamplesConvertBothWaysAndValidate) {
  for (const auto& in : examples()) {
    SCOPED_TRACE(in.filename().string());
    auto bem = dir_ / (in.stem().string() + ".out.bem");
    auto zip = dir_ / (in.stem().string() + ".out.zip");
    auto r = run_charkit("bem convert " + quote(in) + " " + quote(bem) + " --threads 2");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find("binary"), std::string::npos) << r.out;
    r = run_charkit("bem convert " + quote(bem) + " " + quote(zip) + " --format-version");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_NE(r.out.find("ZIP"), std::string::npos) << r.out;
    auto b = read_bytes(bem), z = read_bytes(zip);
    ASSERT_GE(b.size(), 8u);
    EXPECT_EQ(std::string(b.begin(), b.begin() + 8), std::string("BEM\0PKG\0", 8));
    EXPECT_EQ(std::string(z.begin(), z.begin() + 4), "PK\x03\x04");
    EXPECT_EQ(run_charkit("bem validate " + quote(bem) + " " + quote(zip)).exit_code, 0);
  }
}

TEST_F(ConvertCli, WrittenPackagesPassTheIndependentChecker) {
  std::string py = python_with_zstandard();
  if (py.empty()) GTEST_SKIP() << "python3 with the zstandard module is not installed";
  std::string files;
  for (const auto& in : examples()) {
    auto bem = dir_ / (in.stem().string() + ".bem");
    auto zip = dir_ / (in.stem().string() + ".zip");
    ASSERT_EQ(run_charkit("bem convert " + quote(in) + " " + quote(bem)).exit_code, 0);
    ASSERT_EQ(
        run_charkit("bem convert " + quote(in) + " " + quote(zip) + " --format-version").exit_code,
        0);
    files += " " + quote(bem) + " " + quote(zip);
  }
  // A package with duplicate and unreferenced payloads, written by us.
  auto p = testkit::make_valid_package(3);
  p.payloads.push_back(p.payloads[4]);
  p.payloads.push_back({7, 7, 7});
  p.manifest["textures"][0]["payload"] = 5;
  auto in = write("dups.bem", p.binary());
  auto out = dir_ / "dedup.bem";
  ASSERT_EQ(run_charkit("bem convert " + quote(in) + " " + quote(out)).exit_code, 0);
  files += " " + quote(out);

  const RunResult checked = run_with_stderr(py + " " + quote(kChecker) + files);
  EXPECT_EQ(checked.exit_code, 0) << checked.out;

  // The checker is not a rubber stamp: the input with its duplicate and
  // unreferenced payloads fails it.
  std::string bad = py + " " + quote(kChecker) + " " + quote(in) + " >/dev/null 2>&1";
  EXPECT_NE(std::system(bad.c_str()), 0);
}

TEST_F(ConvertCli, InvalidPackageExitsOneWithTheValidatorsErrors) {
  auto p = testkit::make_valid_package(1);
  p.manifest["meshes"][0]["vertex_count"] = 4;  // streams hold 3 vertices
  auto in = write("bad.bem", p.binary());
  auto r = run_charkit("bem convert " + quote(in) + " " + quote(dir_ / "out.bem"), true);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("BEM_WRITE_INVALID"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("error BEM_"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir_ / "out.bem"));
}

TEST_F(ConvertCli, UsageAndIoErrorsExitTwo) {
  EXPECT_EQ(run_charkit("bem convert " + quote(dir_ / "missing.bem") + " " + quote(dir_ / "o.bem"))
                .exit_code,
            2);
  EXPECT_EQ(run_charkit("bem convert").exit_code, 2);
  auto in = write("ok.bem", testkit::make_valid_package(1).binary());
  EXPECT_EQ(
      run_charkit("bem convert " + quote(in) + " " + quote(dir_ / "o.bem") + " --to tar").exit_code,
      2);
  EXPECT_EQ(run_charkit("bem convert " + quote(in) + " " + quote(dir_ / "no" / "such" / "o.bem"))
                .exit_code,
            2);
}

TEST_F(ConvertCli, ToOverridesTheExtensionAndJsonReports) {
  auto p = testkit::make_valid_package(5);  // content needs only 1.1
  p.payloads.push_back(p.payloads[0]);      // unreferenced: dropped
  auto in = write("in.zip", p.zip());
  auto out = dir_ / "out.zip";
  auto r = run_charkit("bem convert " + quote(in) + " " + quote(out) + " --to bem --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto b = read_bytes(out);
  ASSERT_GE(b.size(), 12u);
  EXPECT_EQ(std::string(b.begin(), b.begin() + 8), std::string("BEM\0PKG\0", 8));
  EXPECT_EQ(b[10], 1);  // header minor: §1 lowest version
  auto j = core::Json::parse(r.out);
  EXPECT_EQ(j["container"], "binary");
  EXPECT_EQ(j["version"], "1.1");
  EXPECT_EQ(j["payloadsIn"], 6);
  EXPECT_EQ(j["payloadsOut"], 5);
  EXPECT_EQ(j["unreferencedDropped"], 1);
}

TEST_F(ConvertCli, UnpackThenConvertTheFolderGivesTheSamePackage) {
  auto in = kExamples / "example-1.5.bem";
  auto folder = dir_ / "unpacked";
  auto r = run_charkit("bem unpack " + quote(in) + " " + quote(folder));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_TRUE(fs::exists(folder / "manifest.json"));
  EXPECT_TRUE(fs::exists(folder / "payloads" / "0000.bin"));
  // Not into a non-empty folder without --force.
  EXPECT_EQ(run_charkit("bem unpack " + quote(in) + " " + quote(folder)).exit_code, 2);
  EXPECT_EQ(run_charkit("bem unpack " + quote(in) + " " + quote(folder) + " --force").exit_code, 0);

  auto from_file = dir_ / "a.bem", from_folder = dir_ / "b.bem";
  ASSERT_EQ(run_charkit("bem convert " + quote(in) + " " + quote(from_file)).exit_code, 0);
  r = run_charkit("bem convert " + quote(folder) + " " + quote(from_folder));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(read_bytes(from_file), read_bytes(from_folder));
}

TEST_F(ConvertCli, UnpackOfAnUnreadableFileExitsOne) {
  auto in = write("junk.bem", {'n', 'o', 't', ' ', 'b', 'e', 'm'});
  EXPECT_EQ(run_charkit("bem unpack " + quote(in) + " " + quote(dir_ / "out")).exit_code, 1);
}

}  // namespace
}  // namespace charkit::clitest
