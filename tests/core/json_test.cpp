#include "charkit/core/json.h"

#include <gtest/gtest.h>

using namespace charkit::core;

TEST(StrictJson, ParsesPlainObject) {
  auto r = parse_json_strict(R"({"a":[1,2,{"b":"c"}]})");
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_EQ((*r)["a"][2]["b"], "c");
}

TEST(StrictJson, RejectsDuplicateKeyAtDepth) {
  auto r = parse_json_strict(R"({"a":[{"x":1},{"y":1,"y":2}]})");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "JSON_DUPLICATE_KEY");
  EXPECT_EQ(r.error().location.pointer, "/a/1/y");
}

TEST(StrictJson, SameKeyInSiblingObjectsIsFine) {
  EXPECT_TRUE(parse_json_strict(R"([{"x":1},{"x":2}])").ok());
}

TEST(StrictJson, RejectsNulInStringAndKey) {
  auto r = parse_json_strict(R"({"a":"x\u0000y"})");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "JSON_NUL_CHARACTER");
  EXPECT_EQ(r.error().location.pointer, "/a");
  auto k = parse_json_strict(R"({"a\u0000":1})");
  ASSERT_FALSE(k.ok());
  EXPECT_EQ(k.error().code, "JSON_NUL_CHARACTER");
}

TEST(StrictJson, NestingLimitCountsRootAsLevelOne) {
  std::string ok48 = std::string(48, '[') + std::string(48, ']');
  std::string bad49 = std::string(49, '[') + std::string(49, ']');
  EXPECT_TRUE(parse_json_strict(ok48).ok());
  auto r = parse_json_strict(bad49);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "JSON_TOO_DEEP");
}

// Values are counted as they are read: objects, arrays, strings, numbers
// and literals (keys are not), and the limit stops the parse at the first
// value past it with its pointer.
TEST(StrictJson, ValueLimitCountsEveryValueButNotKeys) {
  const std::string text = R"({"a":[1,"x",null,{"b":true}],"c":{}})";
  std::uint64_t values = 0;
  auto all = parse_json_strict(text, JsonLimits{}, &values);
  ASSERT_TRUE(all.ok()) << all.error().to_string();
  EXPECT_EQ(values, 8u);  // root, array, 1, "x", null, {b}, true, {}
  EXPECT_TRUE(parse_json_strict(text, JsonLimits{.max_values = 8}).ok());
  auto r = parse_json_strict(text, JsonLimits{.max_values = 7}, &values);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "JSON_TOO_MANY_VALUES");
  EXPECT_EQ(r.error().location.pointer, "/c");
  EXPECT_EQ(values, 7u);
  auto early = parse_json_strict(text, JsonLimits{.max_values = 3});
  ASSERT_FALSE(early.ok());
  EXPECT_EQ(early.error().location.pointer, "/a/1");
}

TEST(StrictJson, RejectsBomAndTrailingGarbage) {
  auto r = parse_json_strict("\xEF\xBB\xBF{}");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "JSON_BOM");
  auto t = parse_json_strict("{} x");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.error().code, "JSON_SYNTAX");
  ASSERT_TRUE(t.error().location.offset.has_value());
}

TEST(StrictJson, SyntaxErrorHasOffset) {
  auto r = parse_json_strict("{\"a\": tru}");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "JSON_SYNTAX");
  ASSERT_TRUE(r.error().location.offset.has_value());
  EXPECT_GE(*r.error().location.offset, 6u);
}

TEST(StrictJson, Uint32IsExactIntegerToken) {
  EXPECT_EQ(json_uint32(*parse_json_strict("36")), 36u);
  EXPECT_EQ(json_uint32(*parse_json_strict("4294967295")), 4294967295u);
  EXPECT_FALSE(json_uint32(*parse_json_strict("4294967296")));
  EXPECT_FALSE(json_uint32(*parse_json_strict("36.0")));
  EXPECT_FALSE(json_uint32(*parse_json_strict("3.6e1")));
  EXPECT_FALSE(json_uint32(*parse_json_strict("-0")));
  EXPECT_FALSE(json_uint32(*parse_json_strict("-1")));
  EXPECT_FALSE(json_uint32(*parse_json_strict("\"1\"")));
}

TEST(StrictJson, KeepsKeyOrder) {
  auto r = parse_json_strict(R"({"z":1,"a":2})");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->begin().key(), "z");
}

TEST(JsonPointer, EscapesTokens) {
  EXPECT_EQ(json_pointer_join("/a", "b/c~d"), "/a/b~1c~0d");
  EXPECT_EQ(json_pointer_join("", std::size_t{3}), "/3");
}
