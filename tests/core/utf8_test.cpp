// UTF-8 validation, repair, boundary-safe cutting and quoting (core/utf8.h),
// checked against byte sequences written out by hand from RFC 3629.
#include "charkit/core/utf8.h"

#include <gtest/gtest.h>

#include <string>

#include "charkit/core/json.h"
#include "charkit/core/json_text.h"

namespace charkit::core {
namespace {

TEST(Utf8, ValidSequences) {
  EXPECT_TRUE(is_valid_utf8(""));
  EXPECT_TRUE(is_valid_utf8("plain ascii"));
  EXPECT_TRUE(is_valid_utf8("\xC3\xA9"));          // U+00E9
  EXPECT_TRUE(is_valid_utf8("\xE2\x82\xAC"));      // U+20AC
  EXPECT_TRUE(is_valid_utf8("\xF0\x9F\x98\x80"));  // U+1F600
  EXPECT_TRUE(is_valid_utf8("\xF4\x8F\xBF\xBF"));  // U+10FFFF, the last code point
  EXPECT_TRUE(is_valid_utf8("\xED\x9F\xBF"));      // U+D7FF, just below the surrogates
  EXPECT_EQ(utf8_sequence_length("\xF0\x9F\x98\x80", 0), 4u);
  EXPECT_EQ(utf8_sequence_length("a\xC3\xA9", 1), 2u);
}

TEST(Utf8, InvalidSequences) {
  EXPECT_FALSE(is_valid_utf8("\xFF"));
  EXPECT_FALSE(is_valid_utf8("\xFF\xFE"));
  EXPECT_FALSE(is_valid_utf8("\x80"));              // stray continuation byte
  EXPECT_FALSE(is_valid_utf8("\xC3\x28"));          // second byte not a continuation
  EXPECT_FALSE(is_valid_utf8("\xC3"));              // truncated
  EXPECT_FALSE(is_valid_utf8("\xE2\x82"));          // truncated
  EXPECT_FALSE(is_valid_utf8("\xC0\xAF"));          // overlong '/'
  EXPECT_FALSE(is_valid_utf8("\xE0\x80\xAF"));      // overlong '/'
  EXPECT_FALSE(is_valid_utf8("\xF0\x80\x80\xAF"));  // overlong '/'
  EXPECT_FALSE(is_valid_utf8("\xED\xA0\x80"));      // U+D800, a surrogate
  EXPECT_FALSE(is_valid_utf8("\xF4\x90\x80\x80"));  // U+110000
  EXPECT_FALSE(is_valid_utf8("\xF5\x80\x80\x80"));
}

TEST(Utf8, RepairReplacesEachInvalidByte) {
  EXPECT_EQ(to_valid_utf8("ok"), "ok");
  EXPECT_EQ(to_valid_utf8("a\xFF\xFE"
                          "b"),
            "a\xEF\xBF\xBD\xEF\xBF\xBD"
            "b");
  EXPECT_EQ(to_valid_utf8("\xC3\x28"), "\xEF\xBF\xBD(");
  EXPECT_EQ(to_valid_utf8("\xC3\xA9\xC3"), "\xC3\xA9\xEF\xBF\xBD");
  EXPECT_TRUE(is_valid_utf8(to_valid_utf8("\xED\xA0\x80\xF4\x90\x80\x80")));
}

TEST(Utf8, PrefixNeverCutsACharacter) {
  const std::string s =
      "ab\xC3\xA9"
      "cd";  // a b é c d
  EXPECT_EQ(utf8_prefix(s, 3), "ab");
  EXPECT_EQ(utf8_prefix(s, 4), "ab\xC3\xA9");
  EXPECT_EQ(utf8_prefix(s, 100), s);
  EXPECT_EQ(utf8_prefix("\xF0\x9F\x98\x80", 3), "");
}

TEST(Utf8, QuoteExcerptIsValidAndPrintable) {
  EXPECT_EQ(quote_excerpt("abc"), "'abc'");
  EXPECT_EQ(quote_excerpt("\xFF\xFE"), "'\\xFF\\xFE'");
  EXPECT_EQ(quote_excerpt("a\nb"), "'a\\x0Ab'");
  // 39 ASCII bytes then a two-byte character: a 40-byte cut keeps it out whole.
  const std::string long_text = std::string(39, 'x') + "\xC3\xA9" + "tail";
  const std::string q = quote_excerpt(long_text, 40);
  EXPECT_TRUE(is_valid_utf8(q));
  EXPECT_EQ(q, "'" + std::string(39, 'x') + "...'");
  EXPECT_EQ(printable("tab\there", false), "tab\\x09here");
  EXPECT_EQ(printable("line\n", true), "line\n");
  EXPECT_EQ(printable("\xC3\xA9\x80"), "\xC3\xA9\\x80");
}

TEST(Utf8, JsonDumpNeverThrowsOnInvalidText) {
  Json j = {{"message", std::string("bad \xFF\xFE bytes")}};
  EXPECT_THROW((void)j.dump(), Json::type_error);
  std::string text;
  EXPECT_NO_THROW(text = dump_json(j));
  EXPECT_TRUE(is_valid_utf8(text));
  EXPECT_EQ(Json::parse(text)["message"], "bad \xEF\xBF\xBD\xEF\xBF\xBD bytes");
}

}  // namespace
}  // namespace charkit::core
