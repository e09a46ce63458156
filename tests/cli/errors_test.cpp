// `charkit errors`: the declared codes, one explained, JSON, and the markdown
// that docs/errors.md is (tests/errors/check_error_codes.py compares them).
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "charkit/core/json.h"
#include "cli_support.h"

namespace charkit::clitest {
namespace {

using core::Json;

TEST(ErrorsCli, ExplainsOneCode) {
  auto r = run_charkit("errors BEM_HEADER_MAGIC");
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.rfind("BEM_HEADER_MAGIC (bem)\n  ", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("What you can do: "), std::string::npos) << r.out;

  auto j = run_charkit("errors STORE_TOO_LARGE --json");
  ASSERT_EQ(j.exit_code, 0);
  const Json doc = Json::parse(j.out);
  EXPECT_EQ(doc.at("code"), "STORE_TOO_LARGE");
  EXPECT_EQ(doc.at("module"), "store");
  EXPECT_FALSE(doc.at("meaning").get<std::string>().empty());
  EXPECT_FALSE(doc.at("remedy").get<std::string>().empty());
}

TEST(ErrorsCli, UnknownCodeIsAUsageError) {
  auto r = run_charkit("errors BEM_NO_SUCH_CODE", true);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("ERRORS_UNKNOWN_CODE"), std::string::npos) << r.out;
  auto j = run_charkit("errors bem_header_magic --json");
  EXPECT_EQ(j.exit_code, 2);
  const Json doc = Json::parse(j.out);  // the one --json error document (docs/cli.md)
  EXPECT_EQ(doc.at("ok"), false);
  EXPECT_EQ(doc.at("errors").at(0).at("code"), "ERRORS_UNKNOWN_CODE");
}

TEST(ErrorsCli, ListsLibraryAndProgramCodesOnce) {
  auto r = run_charkit("errors --json");
  ASSERT_EQ(r.exit_code, 0);
  const Json doc = Json::parse(r.out);
  std::set<std::string> codes, modules;
  for (const auto& c : doc.at("codes")) {
    EXPECT_TRUE(codes.insert(c.at("code").get<std::string>()).second) << c.at("code");
    modules.insert(c.at("module").get<std::string>());
    EXPECT_FALSE(c.at("meaning").get<std::string>().empty()) << c.at("code");
    EXPECT_FALSE(c.at("remedy").get<std::string>().empty()) << c.at("code");
  }
  // Modules come in blocks, lowest layer first, the program's own last.
  ASSERT_FALSE(doc.at("codes").empty());
  EXPECT_EQ(doc.at("codes").front().at("module"), "core");
  EXPECT_EQ(doc.at("codes").back().at("module"), "cli");
  EXPECT_TRUE(codes.count("IO_OPEN"));                     // core
  EXPECT_TRUE(codes.count("BEM_MANIFEST_JSON_TOO_DEEP"));  // bem, built from JSON_TOO_DEEP
  EXPECT_TRUE(codes.count("SIDECAR_TOO_LARGE"));           // the program's own
  EXPECT_EQ(modules, (std::set<std::string>{"core", "scene", "gpu", "deform", "render", "motion",
                                            "deformer", "bem", "store", "server", "capi", "cli"}));
  // The text list has one line per code.
  auto t = run_charkit("errors");
  ASSERT_EQ(t.exit_code, 0);
  EXPECT_EQ(static_cast<std::size_t>(std::count(t.out.begin(), t.out.end(), '\n')), codes.size());
}

TEST(ErrorsCli, MarkdownHasEveryCodeInATableRow) {
  auto md = run_charkit("errors --markdown");
  ASSERT_EQ(md.exit_code, 0);
  EXPECT_NE(md.out.find("charkit errors --markdown > docs/errors.md"), std::string::npos);
  EXPECT_NE(md.out.find("\n## cli\n"), std::string::npos);
  EXPECT_NE(md.out.find("\n| `ERRORS_UNKNOWN_CODE` | "), std::string::npos);
  EXPECT_NE(md.out.find("\n| `BEM_HEADER_MAGIC` | "), std::string::npos);
}

}  // namespace
}  // namespace charkit::clitest
