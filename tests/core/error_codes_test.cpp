#include "charkit/core/error_codes.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>

#include "charkit/core/report.h"
#include "charkit/core/result.h"

namespace charkit::core {
namespace {

// An error is raised with a declared code only: text, a literal included,
// does not compile as a code.
template <typename C>
concept RaisesWith = requires(C c) {
  make_error(c, std::string());
};
template <typename C>
concept ReportsWith = requires(Report r, C c) {
  r.error(c, "", Location{}, "");
};
static_assert(RaisesWith<ErrorCode>);
static_assert(!RaisesWith<const char*>);
static_assert(!RaisesWith<std::string>);
static_assert(!RaisesWith<std::string_view>);
static_assert(ReportsWith<ErrorCode>);
static_assert(!ReportsWith<const char*>);
static_assert(!ReportsWith<std::string>);

TEST(ErrorCode, ComparesWithTheCodeStringOfAnError) {
  const Error e = make_error(codes::IO_OPEN, "cannot open x");
  EXPECT_TRUE(e.code == codes::IO_OPEN);
  EXPECT_FALSE(e.code != codes::IO_OPEN);
  EXPECT_FALSE(e.code == codes::IO_READ);
  EXPECT_TRUE(e.code != codes::IO_READ);
  EXPECT_EQ(codes::JSON_SYNTAX.name(), "JSON_SYNTAX");
}

TEST(ErrorCode, IsTextWhereTextIsWanted) {
  const Error e = make_error(codes::JSON_TOO_DEEP, "deep", Location::at_offset(3));
  const std::string text = codes::JSON_TOO_DEEP;
  EXPECT_EQ(text, "JSON_TOO_DEEP");
  EXPECT_EQ(e.code, "JSON_TOO_DEEP");
  EXPECT_TRUE(e.code == codes::JSON_TOO_DEEP);
  Report r;
  r.error(codes::JSON_BOM, "§1", {}, "bom");
  EXPECT_TRUE(r.has_code(codes::JSON_BOM.str()));
  EXPECT_FALSE(r.has_code(codes::JSON_SYNTAX.str()));
  EXPECT_TRUE(r.issues().front().code == codes::JSON_BOM);
}

TEST(ErrorCode, LocatedErrorsCarryTheirPointerOrOffset) {
  const Error p = error_at_pointer(codes::JSON_SYNTAX, "bad", "/nodes/3");
  EXPECT_EQ(p.code, "JSON_SYNTAX");
  EXPECT_EQ(p.message, "bad");
  EXPECT_EQ(p.location.pointer, "/nodes/3");
  EXPECT_FALSE(p.location.offset.has_value());
  const Error o = error_at_offset(codes::IO_READ, "short", 40);
  EXPECT_EQ(o.location.offset, std::optional<std::uint64_t>(40));
  EXPECT_TRUE(o.location.pointer.empty());
  EXPECT_EQ(o.location.to_string(), "byte 40");
}

TEST(ErrorCode, FamiliesAreTheIoAndIsolationPrefixes) {
  EXPECT_TRUE(is_io_error(make_error(codes::IO_WRITE, "")));
  EXPECT_FALSE(is_io_error(make_error(codes::JSON_SYNTAX, "")));
  EXPECT_FALSE(is_io_error(make_error(codes::ISOLATED_CRASH, "")));
  EXPECT_TRUE(is_isolation_error(make_error(codes::ISOLATED_CRASH, "")));
  EXPECT_FALSE(is_isolation_error(make_error(codes::IO_OPEN, "")));
}

// core's own table; the whole list (every module's, once each) is checked
// through `charkit errors` (tests/cli/errors_test.cpp), which assembles it.
TEST(ErrorCodeRegistry, CoreTableHasEachCodeOnceWithMeaningAndRemedy) {
  const std::span<const ErrorCodeInfo> table = codes::kAll;
  ASSERT_GT(table.size(), 20u);
  std::set<std::string_view> seen;
  for (const auto& i : table) {
    EXPECT_TRUE(seen.insert(i.code).second) << i.code << " twice";
    EXPECT_EQ(i.module, "core") << i.code;
    EXPECT_FALSE(i.meaning.empty()) << i.code;
    EXPECT_FALSE(i.remedy.empty()) << i.code;
    for (char c : i.code) EXPECT_TRUE((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_');
  }
  // The table and the constants come from the same declarations.
  EXPECT_NE(find_error_code(codes::JSON_SYNTAX.str(), table), nullptr);
  EXPECT_NE(find_error_code(codes::IO_OPEN.str(), table), nullptr);
}

TEST(ErrorCodeRegistry, FindsByExactSpelling) {
  const std::span<const ErrorCodeInfo> table = codes::kAll;
  const ErrorCodeInfo* i = find_error_code("JSON_TOO_DEEP", table);
  ASSERT_NE(i, nullptr);
  EXPECT_EQ(i->code, "JSON_TOO_DEEP");
  EXPECT_EQ(find_error_code("json_too_deep", table), nullptr);
  EXPECT_EQ(find_error_code("JSON_TOO", table), nullptr);
  EXPECT_EQ(find_error_code("", table), nullptr);
}

TEST(ErrorCodeRegistry, MarkdownHasOneTablePerModuleAndEscapesCells) {
  const ErrorCodeInfo table[] = {
      {"A_ONE", "alpha", "a | b", "fix\nit"},
      {"A_TWO", "alpha", "m2", "r2"},
      {"B_ONE", "beta", "m3", "r3"},
  };
  const std::string md = error_codes_markdown(table);
  EXPECT_EQ(md.rfind("# Error codes\n", 0), 0u);
  EXPECT_NE(md.find("charkit errors --markdown > docs/errors.md"), std::string::npos);
  const std::string alpha =
      "\n## alpha\n\n| Code | Meaning | What you can do |\n|---|---|---|\n"
      "| `A_ONE` | a \\| b | fix it |\n"
      "| `A_TWO` | m2 | r2 |\n";
  EXPECT_NE(md.find(alpha), std::string::npos) << md;
  EXPECT_NE(md.find("\n## beta\n\n| Code | Meaning | What you can do |\n|---|---|---|\n| `B_ONE` | "
                    "m3 | r3 |\n"),
            std::string::npos);
  EXPECT_EQ(md.find("## alpha", md.find("## beta")), std::string::npos);
}

}  // namespace
}  // namespace charkit::core
