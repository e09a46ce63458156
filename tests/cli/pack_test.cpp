// `charkit bem pack`, run as the real program: every example goes through
// export -> pack -> validate, the packed packages through the independent
// checker tests/tools/bem_check.py.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "charkit/core/json.h"
#include "cli_support.h"
#include "package_builder.h"

namespace charkit::clitest {
namespace {

namespace fs = std::filesystem;
using core::Json;

const fs::path kExamples = CHARKIT_EXAMPLES_DIR;
const fs::path kChecker = kExamples / ".." / ".." / "tools" / "bem_check.py";

using PackCli = ScratchDir;

/// The independent checker (tests/tools/bem_check.py, Python's own reader
/// of the §2/§14 containers) accepts every file; skipped without python3's
/// zstandard module.
void expect_checker_accepts(const std::string& quoted_files) {
  const std::string py = python_with_zstandard();
  if (py.empty()) return;
  const RunResult checked = run_with_stderr(py + " " + quote(kChecker) + quoted_files);
  EXPECT_EQ(checked.exit_code, 0) << checked.out;
}

TEST_F(PackCli, ExamplesExportPackAndValidate) {
  std::string packed_files;
  int packed = 0;
  for (const auto& e : fs::directory_iterator(kExamples)) {
    const fs::path in = e.path();
    if (in.extension() != ".bem" && in.extension() != ".zip") continue;
    SCOPED_TRACE(in.filename().string());
    const fs::path glb = dir_ / (in.stem().string() + ".glb");
    const fs::path out = dir_ / (in.stem().string() + in.extension().string());
    auto r = run_charkit("bem export " + quote(in) + " -o " + quote(glb));
    ASSERT_EQ(r.exit_code, 0) << r.out;
    r = run_charkit(
        "bem pack " + quote(glb) + " --template " + quote(in) + " -o " + quote(out) + " --json",
        false);
    const Json j = Json::parse(r.out, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << r.out;
    ASSERT_EQ(r.exit_code, 0) << r.out;
    ++packed;
    EXPECT_EQ(j["ok"], true);
    EXPECT_FALSE(j["meshes"].empty());
    EXPECT_EQ(run_charkit("bem validate " + quote(out)).exit_code, 0);
    packed_files += " " + quote(out);
  }
  EXPECT_EQ(packed, 7);  // 1.0, 1.1 game layout, 1.4 explicit, 1.5 binary, ZIP, drivers, options
  std::string py = python_with_zstandard();
  if (py.empty()) GTEST_SKIP() << "python3 with the zstandard module is not installed";
  const RunResult checked = run_with_stderr(py + " " + quote(kChecker) + packed_files);
  EXPECT_EQ(checked.exit_code, 0) << checked.out;
}

TEST_F(PackCli, ErrorsNameTheProblemAndExitCodesFollowTheConvention) {
  const fs::path tmpl = kExamples / "example-1.1-game-layout.bem";
  const fs::path glb = dir_ / "scene.glb";
  ASSERT_EQ(run_charkit("bem export " + quote(tmpl) + " -o " + quote(glb)).exit_code, 0);
  // Output name: .bem or .zip (or --to).
  auto r = run_charkit(
      "bem pack " + quote(glb) + " --template " + quote(tmpl) + " -o " + quote(dir_ / "out.obj"),
      true);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_FALSE(fs::exists(dir_ / "out.obj"));
  // Missing scene: I/O, exit 2.
  r = run_charkit("bem pack " + quote(dir_ / "missing.glb") + " --template " + quote(tmpl) +
                      " -o " + quote(dir_ / "out.bem"),
                  true);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  // A scene that is not glTF: exit 1 with the reader's code.
  auto junk = write("junk.glb", {'n', 'o', 't', ' ', 'g', 'l', 'T', 'F'});
  r = run_charkit(
      "bem pack " + quote(junk) + " --template " + quote(tmpl) + " -o " + quote(dir_ / "out.bem"),
      true);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_FALSE(fs::exists(dir_ / "out.bem"));
  // A template that is not a valid package: exit 1, BEM_PACK_TEMPLATE.
  auto p = testkit::make_valid_package(1);
  p.manifest["meshes"][0]["vertex_count"] = 4;
  auto bad = write("bad.bem", p.binary());
  r = run_charkit(
      "bem pack " + quote(glb) + " --template " + quote(bad) + " -o " + quote(dir_ / "out.bem"),
      true);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("BEM_PACK_TEMPLATE"), std::string::npos) << r.out;
  // The text summary names the mesh, and --to zip writes a ZIP whatever the name.
  r = run_charkit("bem pack " + quote(glb) + " --template " + quote(tmpl) + " -o " +
                  quote(dir_ / "out.pkg") + " --to zip");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("mesh 0 <- glTF mesh 0"), std::string::npos) << r.out;
  std::ifstream in(dir_ / "out.pkg", std::ios::binary);
  char magic[4] = {};
  in.read(magic, 4);
  EXPECT_EQ(std::string(magic, 4), "PK\x03\x04");
}

// --spec: the package's own id and name in the written package; a spec
// error names the spec file and its JSON pointer; --texture-format takes
// KIND=FORMAT only.
TEST_F(PackCli, SpecFileAndTextureFormats) {
  const fs::path tmpl = kExamples / "example-1.5.bem";
  const fs::path glb = dir_ / "scene.glb";
  ASSERT_EQ(run_charkit("bem export " + quote(tmpl) + " -o " + quote(glb)).exit_code, 0);
  const std::string spec_text =
      R"({"package_id": "creator.edit", "name": "Edited", "version": "1.1.0"})";
  auto spec = write("spec.json", std::vector<std::uint8_t>(spec_text.begin(), spec_text.end()));
  const fs::path out = dir_ / "out.bem";
  auto r = run_charkit("bem pack " + quote(glb) + " --template " + quote(tmpl) + " --spec " +
                       quote(spec) + " -o " + quote(out) + " --texture-format color=BC7");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  r = run_charkit("bem inspect " + quote(out) + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("creator.edit"), std::string::npos) << r.out;
  EXPECT_EQ(run_charkit("bem validate " + quote(out)).exit_code, 0);
  expect_checker_accepts(" " + quote(out));

  const std::string bad_text = R"({"package_id": "x", "colour": "red"})";
  auto bad = write("bad.json", std::vector<std::uint8_t>(bad_text.begin(), bad_text.end()));
  r = run_charkit("bem pack " + quote(glb) + " --template " + quote(tmpl) + " --spec " +
                      quote(bad) + " -o " + quote(dir_ / "bad.bem"),
                  true);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("BEM_PACK_SPEC"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("/colour"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("bad.json"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir_ / "bad.bem"));

  r = run_charkit("bem pack " + quote(glb) + " --template " + quote(tmpl) + " -o " +
                      quote(dir_ / "tf.bem") + " --texture-format color=BC6H",
                  true);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("KIND=FORMAT"), std::string::npos) << r.out;
}

// A package with sliders: bem export writes them as shape keys, bem pack
// carries them back (the channels rebuilt, no new parameter); exported with
// --bake-sliders they cannot come back: exit 1, BEM_PACK_MORPHS.
TEST_F(PackCli, SlidersComeBackThroughExport) {
  const fs::path pkg = kExamples / ".." / "sliders" / "example-1.5-sliders.bem";
  const fs::path glb = dir_ / "keys.glb";
  ASSERT_EQ(run_charkit("bem export " + quote(pkg) + " -o " + quote(glb)).exit_code, 0);
  auto r = run_charkit("bem pack " + quote(glb) + " --template " + quote(pkg) + " -o " +
                           quote(dir_ / "back.bem") + " --json",
                       false);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const Json j = Json::parse(r.out);
  EXPECT_EQ(j["meshes"][0]["sliders"], 0);  // the template's own, not new ones
  r = run_charkit("bem inspect " + quote(dir_ / "back.bem") + " --json");
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("shoulders"), std::string::npos) << r.out;
  EXPECT_EQ(run_charkit("bem validate " + quote(dir_ / "back.bem")).exit_code, 0);
  expect_checker_accepts(" " + quote(dir_ / "back.bem"));

  ASSERT_EQ(run_charkit("bem export " + quote(pkg) + " -o " + quote(dir_ / "baked.glb") +
                        " --bake-sliders")
                .exit_code,
            0);
  r = run_charkit("bem pack " + quote(dir_ / "baked.glb") + " --template " + quote(pkg) + " -o " +
                      quote(dir_ / "no.bem"),
                  true);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("BEM_PACK_MORPHS"), std::string::npos) << r.out;
}

// A JSON template made of the game-layout example's facts (its target, its
// mesh's attributes and strides, its texture's name and colour space): the
// example's export packs into a package of its own, which validates.
TEST_F(PackCli, JsonTemplateForTheGameLayout) {
  const fs::path pkg = kExamples / "example-1.1-game-layout.bem";
  const fs::path folder = dir_ / "unpacked";
  ASSERT_EQ(run_charkit("bem unpack " + quote(pkg) + " " + quote(folder)).exit_code, 0);
  std::ifstream mf(folder / "manifest.json");
  const Json m = Json::parse(mf);
  const Json& mesh = m["meshes"][0];
  Json strides = Json::array();
  for (const Json& s : mesh["streams"]) strides.push_back(s["stride"]);
  Json textures = Json::array();
  for (const Json& t : m["textures"])
    textures.push_back(Json{{"material_slot", 0},
                            {"original_name", t["original_name"]},
                            {"srgb", t["srgb"]},
                            {"format", "RGBA32"}});
  const Json tmpl{{"target", m["target"]},
                  {"layouts", Json::array({Json{{"component", 0},
                                                {"attributes", mesh["attributes"]},
                                                {"strides", strides},
                                                {"textures", textures}}})}};
  {
    std::ofstream out(dir_ / "template.json");
    out << tmpl.dump(2);
  }
  const fs::path glb = dir_ / "scene.glb";
  ASSERT_EQ(run_charkit("bem export " + quote(pkg) + " -o " + quote(glb)).exit_code, 0);
  const fs::path out = dir_ / "fresh.bem";
  auto r = run_charkit("bem pack " + quote(glb) + " --template " + quote(dir_ / "template.json") +
                           " -o " + quote(out) + " --json",
                       false);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(run_charkit("bem validate " + quote(out)).exit_code, 0);
  expect_checker_accepts(" " + quote(out));
  // A fact left out is refused, naming it.
  Json missing = tmpl;
  missing["layouts"][0].erase("strides");
  {
    std::ofstream o2(dir_ / "missing.json");
    o2 << missing.dump();
  }
  r = run_charkit("bem pack " + quote(glb) + " --template " + quote(dir_ / "missing.json") +
                      " -o " + quote(dir_ / "no.bem"),
                  true);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("/layouts/0/strides"), std::string::npos) << r.out;
}

// The public BEM creator project's project.json (here made from `bem
// unpack` of an example: its manifest and payload files) packs without a
// template; giving one is a usage error.
TEST_F(PackCli, ProjectJsonPacksWithoutATemplate) {
  const fs::path pkg = kExamples / "example-1.5.bem";
  const fs::path folder = dir_ / "unpacked";
  ASSERT_EQ(run_charkit("bem unpack " + quote(pkg) + " " + quote(folder)).exit_code, 0);
  std::ifstream mf(folder / "manifest.json");
  const Json manifest = Json::parse(mf);
  Json files = Json::array();
  for (std::size_t i = 0; fs::exists(
           folder / "payloads" / (std::string(i < 10 ? "000" : "00") + std::to_string(i) + ".bin"));
       ++i)
    files.push_back("payloads/" + std::string(i < 10 ? "000" : "00") + std::to_string(i) + ".bin");
  ASSERT_FALSE(files.empty());
  const std::string text = Json{{"manifest", manifest}, {"payload_files", files}}.dump(2);
  {
    std::ofstream out(folder / "project.json");
    out << text;
  }
  const fs::path out = dir_ / "from-project.bem";
  auto r = run_charkit("bem pack " + quote(folder / "project.json") + " -o " + quote(out));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(run_charkit("bem validate " + quote(out)).exit_code, 0);
  expect_checker_accepts(" " + quote(out));
  r = run_charkit("bem pack " + quote(folder / "project.json") + " --template " + quote(pkg) +
                      " -o " + quote(dir_ / "x.bem"),
                  true);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  // A glTF scene without --template: a usage error that says what is missing.
  r = run_charkit("bem pack " + quote(dir_ / "scene.glb") + " -o " + quote(dir_ / "y.bem"), true);
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("--template is required"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace charkit::clitest
