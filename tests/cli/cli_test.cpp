// The `charkit` program end to end: exit codes 0/1/2, text and JSON output
// of `bem validate`, `bem inspect --json`'s payload table, --help/--version.
#include <algorithm>

#include "charkit/core/json.h"
#include "cli_support.h"
#include "package_builder.h"

namespace charkit::clitest {
namespace {

using core::Json;

// A binary package with two header errors (major 2, flags 1).
std::vector<std::uint8_t> broken_header_package() {
  auto p = testkit::make_valid_package(3);
  testkit::BinaryLayout l;
  l.major = 2;
  l.minor = 3;
  l.flags = 1;
  l.manifest = p.manifest.dump();
  for (const auto& b : p.payloads) l.payloads.push_back({b, false});
  return testkit::build_binary(l);
}

// A package whose container is fine but has 3 stray bytes after the payloads.
std::vector<std::uint8_t> trailing_bytes_package() {
  auto p = testkit::make_valid_package(2);
  testkit::BinaryLayout l;
  l.minor = 2;
  l.manifest = p.manifest.dump();
  for (const auto& b : p.payloads) l.payloads.push_back({b, true});
  l.trailing = {1, 2, 3};
  return testkit::build_binary(l);
}

Json parse_output(const std::string& out) {
  auto j = core::parse_json_strict(out);
  EXPECT_TRUE(j.ok()) << (j.ok() ? "" : j.error().to_string()) << "\n" << out;
  return j.ok() ? *j : Json();
}

std::vector<std::string> codes_of(const Json& issues) {
  std::vector<std::string> codes;
  for (const auto& m : issues["messages"]) codes.push_back(m["code"].get<std::string>());
  return codes;
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// ---- help, version, usage errors ------------------------------------------

TEST(CliHelp, HelpAndVersionExitZero) {
  for (const char* args : {"--help", "bem --help", "bem validate --help", "bem inspect --help"}) {
    auto r = run_charkit(args);
    EXPECT_EQ(r.exit_code, 0) << args;
    EXPECT_NE(r.out.find("Usage"), std::string::npos) << args << "\n" << r.out;
  }
  EXPECT_NE(run_charkit("bem validate --help").out.find("--max-issues"), std::string::npos);
  EXPECT_NE(run_charkit("bem validate --help").out.find("Exit status"), std::string::npos);
  auto v = run_charkit("--version");
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_NE(v.out.find("charkit "), std::string::npos) << v.out;
}

TEST(CliUsage, UsageErrorsExitTwo) {
  // Bare `charkit` and a bare group print their help instead (CliConventions).
  for (const char* args :
       {"bem validate", "bem inspect", "bem frobnicate x.bem", "bem validate --bogus x.bem",
        "bem validate --max-issues 0 x.bem", "bem validate --max-issues many x.bem",
        "bem validate --threads -1 x.bem", "bem validate --threads 257 x.bem", "nosuchgroup"}) {
    EXPECT_EQ(run_charkit(args).exit_code, 2) << "charkit " << args;
  }
}

// ---- validate -------------------------------------------------------------

class CliValidate : public ScratchDir {};

TEST_F(CliValidate, ValidBinaryExitsZero) {
  auto path = write("good.bem", testkit::make_valid_package(5).binary(true));
  auto r = run_charkit("bem validate " + quote(path));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("good.bem: valid (binary, BEM 1.5"), std::string::npos) << r.out;
}

TEST_F(CliValidate, EveryVersionValidBinary) {
  std::string args = "bem validate";
  for (int minor = 0; minor <= 5; ++minor)
    args += " " + quote(write("v" + std::to_string(minor) + ".bem",
                              testkit::make_valid_package(minor).binary()));
  auto r = run_charkit(args);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("6 files: 6 valid, 0 invalid, 0 unreadable"), std::string::npos) << r.out;
}

TEST_F(CliValidate, ValidZipExitsZero) {
  auto path = write("good.zip", testkit::make_valid_package(4).zip(true));
  auto r = run_charkit("bem validate " + quote(path));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("good.zip: valid (zip, BEM 1.4"), std::string::npos) << r.out;
}

TEST_F(CliValidate, InvalidExitsOneAndNamesCodeSectionLocation) {
  auto path = write("bad.bem", broken_header_package());
  auto r = run_charkit("bem validate " + quote(path));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  // file: location: severity CODE [§N]: message
  EXPECT_NE(r.out.find("bad.bem: byte 8: error BEM_HEADER_MAJOR [§2]: "), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("bad.bem: byte 36: error BEM_HEADER_FLAGS [§2]: "), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("bad.bem: invalid"), std::string::npos) << r.out;
}

TEST_F(CliValidate, NotAPackageExitsOne) {
  auto path = write("notes.txt", {'h', 'e', 'l', 'l', 'o', '\n'});
  auto r = run_charkit("bem validate " + quote(path));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("BEM_CONTAINER_UNKNOWN"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("notes.txt: invalid (unknown"), std::string::npos) << r.out;
  auto empty = write("empty.bem", {});
  EXPECT_EQ(run_charkit("bem validate " + quote(empty)).exit_code, 1);
}

TEST_F(CliValidate, MissingFileExitsTwo) {
  auto r = run_charkit("bem validate " + quote(dir_ / "nope.bem"), true);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find((dir_ / "nope.bem").string() + ": error IO_OPEN: "), std::string::npos)
      << r.out;
  // A directory is not a package file either.
  EXPECT_EQ(run_charkit("bem validate " + quote(dir_)).exit_code, 2);
}

TEST_F(CliValidate, WorstOutcomeWins) {
  auto good = write("good.bem", testkit::make_valid_package(1).binary());
  auto bad = write("bad.bem", trailing_bytes_package());
  EXPECT_EQ(run_charkit("bem validate " + quote(good) + " " + quote(bad)).exit_code, 1);
  EXPECT_EQ(run_charkit("bem validate " + quote(bad) + " " + quote(good)).exit_code, 1);
  EXPECT_EQ(run_charkit("bem validate " + quote(good) + " " + quote(dir_ / "missing.bem") + " " +
                        quote(bad))
                .exit_code,
            2);
}

TEST_F(CliValidate, JsonReportParsesAndNamesCodes) {
  auto good = write("good.bem", testkit::make_valid_package(2).binary());
  auto bad = write("bad.bem", trailing_bytes_package());
  auto r = run_charkit("bem validate --json " + quote(good) + " " + quote(bad) + " " +
                       quote(dir_ / "missing.bem"));
  EXPECT_EQ(r.exit_code, 2);
  Json doc = parse_output(r.out);
  ASSERT_TRUE(doc.is_object());
  EXPECT_EQ(doc["validator"]["name"], "charkit");
  ASSERT_EQ(doc["files"].size(), 3u);

  const Json& g = doc["files"][0];
  EXPECT_EQ(g["uri"], good.string());
  EXPECT_EQ(g["container"], "binary");
  EXPECT_EQ(g["declaredVersion"], "1.2");
  EXPECT_EQ(g["effectiveVersion"], "1.2");
  EXPECT_TRUE(g["neededVersion"].is_string());
  EXPECT_EQ(g["valid"], true);
  EXPECT_EQ(g["issues"]["numErrors"], 0);
  EXPECT_TRUE(g["members"].is_array());

  const Json& b = doc["files"][1];
  EXPECT_EQ(b["valid"], false);
  EXPECT_GE(b["issues"]["numErrors"].get<int>(), 1);
  EXPECT_TRUE(contains(codes_of(b["issues"]), "BEM_TRAILING_BYTES")) << b.dump(2);
  for (const auto& m : b["issues"]["messages"]) {
    EXPECT_FALSE(m["section"].get<std::string>().empty()) << m.dump();
    EXPECT_TRUE(m.contains("offset") || m.contains("pointer") || m.contains("member")) << m.dump();
    EXPECT_FALSE(m["message"].get<std::string>().empty());
    EXPECT_EQ(m["severityName"], "error");
  }

  const Json& missing = doc["files"][2];
  EXPECT_EQ(missing["valid"], false);
  EXPECT_EQ(missing["ioError"]["code"], "IO_OPEN");
  EXPECT_EQ(doc["summary"]["valid"], 1);
  EXPECT_EQ(doc["summary"]["invalid"], 1);
  EXPECT_EQ(doc["summary"]["unreadable"], 1);
}

TEST_F(CliValidate, MaxIssuesTruncates) {
  auto bad = write("bad.bem", broken_header_package());
  auto all = parse_output(run_charkit("bem validate --json " + quote(bad)).out);
  ASSERT_GE(all["files"][0]["issues"]["messages"].size(), 2u);
  EXPECT_EQ(all["files"][0]["issues"]["truncated"], false);
  auto r = run_charkit("bem validate --json --max-issues 1 " + quote(bad));
  EXPECT_EQ(r.exit_code, 1);
  auto one = parse_output(r.out);
  EXPECT_EQ(one["files"][0]["issues"]["messages"].size(), 1u);
  EXPECT_EQ(one["files"][0]["issues"]["truncated"], true);
  // Counts stay exact past the cap.
  EXPECT_EQ(one["files"][0]["issues"]["numErrors"], all["files"][0]["issues"]["numErrors"]);
}

// The report does not depend on --threads (tests/threads checks the library
// on many packages; this is the option reaching it).
TEST_F(CliValidate, ThreadsDoNotChangeTheReport) {
  testkit::TestPackage p = testkit::make_valid_package(5);
  p.payloads[3] = testkit::u16_bytes({0, 1, 3});  // an index out of range
  for (int k = 0; k < 6; ++k) p.payloads.push_back(testkit::ByteVec(4096u << k, 1));
  auto path = write("faults.bem", p.binary(true));
  auto one = run_charkit("bem validate --json --threads 1 " + quote(path));
  EXPECT_EQ(one.exit_code, 1);
  EXPECT_NE(one.out.find("BEM_INDEX_RANGE"), std::string::npos) << one.out;
  EXPECT_NE(one.out.find("BEM_PAYLOAD_UNREFERENCED"), std::string::npos) << one.out;
  for (const char* threads : {"2", "4", "0"}) {
    auto many =
        run_charkit("bem validate --json --threads " + std::string(threads) + " " + quote(path));
    EXPECT_EQ(many.exit_code, 1) << threads;
    EXPECT_EQ(many.out, one.out) << "--threads " << threads;
  }
  EXPECT_NE(run_charkit("bem validate --help").out.find("--threads"), std::string::npos);
}

TEST_F(CliValidate, CollectionMembersListed) {
  auto good = testkit::make_valid_package(5).binary();
  auto bad = trailing_bytes_package();
  auto path = write("bundle.zip", testkit::build_zip({{"good.bem", good}, {"bad.bem", bad}}));
  auto r = run_charkit("bem validate " + quote(path));
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("bundle.zip[good.bem]: valid (member"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("bundle.zip[bad.bem]: invalid (member"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("BEM_TRAILING_BYTES"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("bundle.zip: invalid (collection, 2 members"), std::string::npos) << r.out;

  Json doc = parse_output(run_charkit("bem validate --json " + quote(path)).out);
  const Json& f = doc["files"][0];
  EXPECT_EQ(f["container"], "collection");
  ASSERT_EQ(f["members"].size(), 2u);
  EXPECT_EQ(f["members"][0]["name"], "good.bem");
  EXPECT_EQ(f["members"][0]["valid"], true);
  EXPECT_EQ(f["members"][1]["valid"], false);
  EXPECT_TRUE(contains(codes_of(f["members"][1]["issues"]), "BEM_TRAILING_BYTES"));

  auto i = run_charkit("bem inspect --json " + quote(path));
  EXPECT_EQ(i.exit_code, 0);
  Json info = parse_output(i.out);
  ASSERT_EQ(info["members"].size(), 2u);
  EXPECT_EQ(info["members"][0]["package"]["declaredVersion"], "1.5");
  EXPECT_EQ(info["members"][1]["package"]["readable"], false);
}

TEST_F(CliValidate, SkipValidationFlagAccepted) {
  auto good = write("good.bem", testkit::make_valid_package(5).binary());
  EXPECT_EQ(run_charkit("bem validate --skip-validation " + quote(good)).exit_code, 0);
  auto bad = write("bad.bem", trailing_bytes_package());
  // Container bounds stay checked with the switch on.
  EXPECT_EQ(run_charkit("bem validate --skip-validation " + quote(bad)).exit_code, 1);
}

TEST_F(CliValidate, HostileNamesAreEscapedInText) {
  auto p = testkit::make_valid_package(3);
  p.manifest["package_id"] = "evil\x1b[2Jid";  // not a stable ID: reported, and escaped
  auto path = write("evil.bem", p.binary());
  auto r = run_charkit("bem validate " + quote(path));
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << r.out;
  auto i = run_charkit("bem inspect " + quote(path));
  EXPECT_EQ(i.out.find('\x1b'), std::string::npos) << i.out;
  EXPECT_NE(i.out.find("evil\\x1B[2Jid"), std::string::npos) << i.out;
}

// ---- inspect --------------------------------------------------------------

class CliInspect : public ScratchDir {};

TEST_F(CliInspect, JsonShowsPayloadTable) {
  auto path = write("good.bem", testkit::make_valid_package(5).binary(true));
  auto r = run_charkit("bem inspect --json " + quote(path));
  EXPECT_EQ(r.exit_code, 0);
  Json doc = parse_output(r.out);
  ASSERT_TRUE(doc.is_object());
  EXPECT_EQ(doc["uri"], path.string());
  EXPECT_EQ(doc["container"], "binary");
  EXPECT_EQ(doc["declaredVersion"], "1.5");
  ASSERT_EQ(doc["payloads"].size(), 5u);
  for (const auto& row : doc["payloads"]) {
    EXPECT_EQ(row["codec"], "zstd");
    EXPECT_GT(row["storedSize"].get<std::uint64_t>(), 0u);
    EXPECT_TRUE(row["ratio"].is_number());
  }
  EXPECT_EQ(doc["payloads"][4]["decodedSize"], 64);  // the 4×4 RGBA32 texture
  EXPECT_EQ(doc["payloadTotals"]["count"], 5);
  EXPECT_EQ(doc["meshes"][0]["vertexCount"], 3);
  EXPECT_EQ(doc["textures"][0]["formatName"], "RGBA32");
  EXPECT_EQ(doc["optionGroups"][0]["id"], "outfit");
}

TEST_F(CliInspect, TextListsSections) {
  auto path = write("good.zip", testkit::make_valid_package_v14().zip());
  auto r = run_charkit("bem inspect " + quote(path));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  for (const char* s :
       {"zip container", "declared version 1.4", "target (1.4 explicit resources)", "meshes (1)",
        "textures (1)", "option groups (1)", "payloads (5)", "Position Float32x3", "RGBA32"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
}

TEST_F(CliInspect, BrokenContainerStillDescribed) {
  auto path = write("trailing.bem", trailing_bytes_package());
  auto r = run_charkit("bem inspect --json " + quote(path));
  EXPECT_EQ(r.exit_code, 1);
  Json doc = parse_output(r.out);
  EXPECT_EQ(doc["readable"], false);
  EXPECT_EQ(doc["problems"][0]["code"], "BEM_TRAILING_BYTES");
  EXPECT_EQ(doc["package"]["id"], "example.package");
  EXPECT_EQ(doc["payloads"].size(), 5u);
}

TEST_F(CliInspect, GarbageAndMissing) {
  auto path = write("garbage.bin", std::vector<std::uint8_t>(100, 0xAB));
  auto r = run_charkit("bem inspect " + quote(path));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("unknown container"), std::string::npos) << r.out;
  EXPECT_EQ(run_charkit("bem inspect " + quote(dir_ / "missing.bem")).exit_code, 2);
}

}  // namespace
}  // namespace charkit::clitest
