// format_name_list (core/names.h): the one list of valid names in messages
// that reject a name. Expected strings are written out by hand. Also
// EnumNames (core/enum_names.h), the name table of an enum.
#include "charkit/core/names.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "charkit/core/enum_names.h"
#include "charkit/core/utf8.h"

namespace charkit::core {
namespace {

std::vector<std::string> numbered(std::size_t n) {
  std::vector<std::string> v;
  for (std::size_t i = 0; i < n; ++i) v.push_back("j" + std::to_string(i));
  return v;
}

TEST(NameList, EmptyIsNone) {
  EXPECT_EQ(format_name_list(std::vector<std::string>{}), "none");
}

TEST(NameList, FewNamesAllQuotedInOrder) {
  const std::vector<std::string> v{"Hips", "Spine", "Head"};
  EXPECT_EQ(format_name_list(v), "'Hips', 'Spine', 'Head'");
  const std::vector<std::string_view> sv{"left_wrist"};
  EXPECT_EQ(format_name_list(sv), "'left_wrist'");
}

TEST(NameList, ExactlyTheLimitIsAllOfThem) {
  const std::string s = format_name_list(numbered(20));
  EXPECT_EQ(s.substr(0, 12), "'j0', 'j1', ");
  EXPECT_TRUE(s.ends_with("'j18', 'j19'")) << s;
  EXPECT_EQ(s.find("more"), std::string::npos);
}

TEST(NameList, MoreThanTheLimitCountsTheRest) {
  const std::string s = format_name_list(numbered(57));
  EXPECT_TRUE(s.ends_with("'j19' and 37 more (57 in all)")) << s;
  EXPECT_EQ(s.find("'j20'"), std::string::npos);
  EXPECT_EQ(format_name_list(numbered(3), 2), "'j0', 'j1' and 1 more (3 in all)");
  EXPECT_EQ(format_name_list(numbered(3), 0), "'j0' and 2 more (3 in all)");
}

TEST(NameList, UntrustedNamesAreQuotedSafelyAndCut) {
  const std::vector<std::string> v{"a\x1b[2Jb", "bad\xFF", std::string(100, 'x')};
  const std::string s = format_name_list(v);
  EXPECT_EQ(s, "'a\\x1B[2Jb', 'bad\\xFF', '" + std::string(64, 'x') + "...'");
  EXPECT_TRUE(is_valid_utf8(s));
}

TEST(NameList, OutputIsBoundedWhateverTheInput) {
  std::vector<std::string> v(100000, std::string(10000, '\x01'));
  const std::string s = format_name_list(v);
  EXPECT_LE(s.size(), 20 * (64 * 4 + 8) + 64);
  EXPECT_TRUE(s.ends_with(" and 99980 more (100000 in all)")) << s.substr(s.size() - 60);
}

}  // namespace
}  // namespace charkit::core

namespace charkit::core {
namespace {

enum class Colour { kRed, kGreen, kBlue };
constexpr EnumNames<Colour, 3> kColours{
    {{{Colour::kRed, "red"}, {Colour::kGreen, "green"}, {Colour::kBlue, "blue"}}}};

// An enum's name table: names and parsing agree, in both directions.
TEST(EnumNames, NameAndParseComeFromOneTable) {
  static_assert(kColours.name(Colour::kGreen) == "green");
  static_assert(kColours.parse("blue") == Colour::kBlue);
  for (const auto& [value, name] : kColours.entries) {
    EXPECT_EQ(kColours.name(value), name);
    EXPECT_EQ(kColours.parse(name), value);
  }
  EXPECT_EQ(kColours.parse("Red"), std::nullopt);  // case-sensitive
  EXPECT_EQ(kColours.parse(""), std::nullopt);
  // A value outside the table (an out-of-range cast) still gets valid text.
  EXPECT_EQ(kColours.name(static_cast<Colour>(7)), "red");
}

}  // namespace
}  // namespace charkit::core
