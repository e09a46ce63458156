#include "charkit/core/ascii.h"

#include <gtest/gtest.h>

#include <string>

using namespace charkit::core;

TEST(Ascii, LowerFoldsOnlyUpperCaseLetters) {
  EXPECT_EQ(ascii_lower('A'), 'a');
  EXPECT_EQ(ascii_lower('Z'), 'z');
  EXPECT_EQ(ascii_lower('a'), 'a');
  EXPECT_EQ(ascii_lower('0'), '0');
  EXPECT_EQ(ascii_lower('@'), '@');  // one below 'A'
  EXPECT_EQ(ascii_lower('['), '[');  // one above 'Z'
  EXPECT_EQ(ascii_lower('\0'), '\0');
}

TEST(Ascii, LowerLeavesNonAsciiBytesUnchanged) {
  for (int b = 0x80; b <= 0xff; ++b) {
    const char c = static_cast<char>(b);
    EXPECT_EQ(ascii_lower(c), c) << "byte " << b;
  }
  // U+00C9 (É) in UTF-8 is not folded to U+00E9 (é).
  std::string s = "\xC3\x89";
  for (char& c : s) c = ascii_lower(c);
  EXPECT_EQ(s, "\xC3\x89");
}

TEST(Ascii, IequalsIgnoresAsciiCase) {
  EXPECT_TRUE(ascii_iequals("Content-Disposition", "content-disposition"));
  EXPECT_TRUE(ascii_iequals("XPOSITION", "Xposition"));
  EXPECT_TRUE(ascii_iequals("mIxEd123", "MiXeD123"));
  EXPECT_TRUE(ascii_iequals("", ""));
  EXPECT_FALSE(ascii_iequals("ROOT", "RooX"));
  EXPECT_FALSE(ascii_iequals("a-b", "a_b"));
}

TEST(Ascii, IequalsDifferentLengthsNeverEqual) {
  EXPECT_FALSE(ascii_iequals("End", "EndSite"));
  EXPECT_FALSE(ascii_iequals("EndSite", "End"));
  EXPECT_FALSE(ascii_iequals("", "a"));
  EXPECT_FALSE(ascii_iequals("utf-8", "UTF-8 "));
}

TEST(Ascii, IequalsComparesNonAsciiBytesExactly) {
  EXPECT_TRUE(ascii_iequals("caf\xC3\xA9", "CAF\xC3\xA9"));
  // É vs é differ outside ASCII: not equal.
  EXPECT_FALSE(ascii_iequals("\xC3\x89", "\xC3\xA9"));
  // A byte 0xE1 is not 'a' + 0x80 folded: case folding never crosses 0x80.
  EXPECT_FALSE(ascii_iequals("\xC1", "\xE1"));
}
