// The request glue of the server: targets, queries, Range, file names.
#include "charkit/server/detail/http_glue.h"

#include <gtest/gtest.h>

namespace charkit::server {
namespace {

TEST(HttpGlue, PercentDecode) {
  EXPECT_EQ(*percent_decode("a%20b+c", true), "a b c");
  EXPECT_EQ(*percent_decode("a%2Fb+c", false), "a/b+c");
  EXPECT_EQ(percent_decode("%2", true).error().code, "HTTP_BAD_ESCAPE");
  EXPECT_EQ(percent_decode("%zz", true).error().code, "HTTP_BAD_ESCAPE");
  EXPECT_EQ(percent_decode("a%00", true).error().code, "HTTP_NUL");
}

TEST(HttpGlue, Query) {
  auto q = parse_query("filename=walk%20cycle.bvh&&limit=5&flag");
  ASSERT_TRUE(q.ok());
  ASSERT_EQ(q->size(), 3u);
  EXPECT_EQ(*query_value(*q, "filename"), "walk cycle.bvh");
  EXPECT_EQ(*query_value(*q, "limit"), "5");
  EXPECT_EQ(*query_value(*q, "flag"), "");
  EXPECT_FALSE(query_value(*q, "after").has_value());
  std::string many;
  for (int i = 0; i < 33; ++i) many += "a=1&";
  EXPECT_EQ(parse_query(many).error().code, "HTTP_TOO_MANY_PARAMS");
}

TEST(HttpGlue, Target) {
  auto t = parse_target("/api//motions/3?x=1");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->segments, (std::vector<std::string>{"api", "motions", "3"}));
  EXPECT_EQ(t->params, (QueryParams{{"x", "1"}}));
  // The query is decoded once, here: names and values alike.
  auto enc = parse_target("/api/live/x?rol%65=publis%68&a+b=c%20d");
  ASSERT_TRUE(enc.ok());
  EXPECT_EQ(enc->params, (QueryParams{{"role", "publish"}, {"a b", "c d"}}));
  EXPECT_EQ(parse_target("/api?role=%7").error().code, "HTTP_BAD_ESCAPE");
  EXPECT_EQ(parse_target("/api?role=%00").error().code, "HTTP_NUL");
  EXPECT_TRUE(parse_target("/")->segments.empty());
  EXPECT_EQ(parse_target("http://x/").error().code, "HTTP_BAD_TARGET");
  EXPECT_EQ(parse_target(std::string_view("/a\0b", 4)).error().code, "HTTP_BAD_TARGET");
  EXPECT_EQ(parse_target("/a b").error().code, "HTTP_BAD_TARGET");
  EXPECT_EQ(parse_target("/api/../etc").error().code, "HTTP_BAD_PATH");
  EXPECT_EQ(parse_target("/api/%2e%2E/etc").error().code, "HTTP_BAD_PATH");
  EXPECT_EQ(parse_target("/api/a%2Fb").error().code, "HTTP_BAD_PATH");
}

TEST(HttpGlue, Ids) {
  EXPECT_EQ(parse_id("42"), 42);
  EXPECT_EQ(parse_id("0"), std::nullopt);
  EXPECT_EQ(parse_id("+1"), std::nullopt);
  EXPECT_EQ(parse_id("1e3"), std::nullopt);
  EXPECT_EQ(parse_id(""), std::nullopt);
  EXPECT_EQ(parse_id("99999999999999999999999"), std::nullopt);
  EXPECT_EQ(parse_id("9007199254740993"), std::nullopt);  // 2^53 + 1
  EXPECT_TRUE(is_sha256_hex(std::string(64, 'a')));
  EXPECT_FALSE(is_sha256_hex(std::string(64, 'A')));
  EXPECT_FALSE(is_sha256_hex(std::string(63, 'a')));
}

TEST(HttpGlue, Range) {
  using K = ByteRange::Kind;
  auto r = parse_range("bytes=10-19", 100);
  EXPECT_EQ(r.kind, K::kSatisfiable);
  EXPECT_EQ(r.first, 10u);
  EXPECT_EQ(r.last, 19u);
  r = parse_range("bytes=90-200", 100);  // clamped to the end
  EXPECT_EQ(r.kind, K::kSatisfiable);
  EXPECT_EQ(r.last, 99u);
  r = parse_range("bytes=95-", 100);
  EXPECT_EQ(r.first, 95u);
  EXPECT_EQ(r.last, 99u);
  r = parse_range("bytes=-10", 100);
  EXPECT_EQ(r.first, 90u);
  EXPECT_EQ(r.last, 99u);
  r = parse_range("bytes=-1000", 100);
  EXPECT_EQ(r.first, 0u);
  EXPECT_EQ(parse_range("bytes=100-", 100).kind, K::kUnsatisfiable);
  EXPECT_EQ(parse_range("bytes=-0", 100).kind, K::kUnsatisfiable);
  EXPECT_EQ(parse_range("bytes=0-1,5-6", 100).kind, K::kNone);
  EXPECT_EQ(parse_range("items=0-1", 100).kind, K::kNone);
  EXPECT_EQ(parse_range("bytes=5-1", 100).kind, K::kNone);
  EXPECT_EQ(parse_range("bytes=a-b", 100).kind, K::kNone);
  EXPECT_EQ(parse_range("", 100).kind, K::kNone);
}

TEST(HttpGlue, FileNames) {
  EXPECT_EQ(clean_file_name("walk.bvh"), "walk.bvh");
  EXPECT_EQ(clean_file_name("../../etc/passwd"), "passwd");
  EXPECT_EQ(clean_file_name("C:\\Users\\x\\run.fbx"), "run.fbx");
  EXPECT_EQ(clean_file_name("a\nb\x01.bvh"), "ab.bvh");
  EXPECT_EQ(clean_file_name(".."), "");
  EXPECT_EQ(clean_file_name("dir/"), "");
  EXPECT_EQ(clean_file_name("\xC3\xA9t\xC3\xA9.vrm"), "\xC3\xA9t\xC3\xA9.vrm");  // été.vrm
  EXPECT_EQ(clean_file_name("bad\xFF.vrm"), "bad.vrm");
  std::string longname(300, 'x');
  EXPECT_EQ(clean_file_name(longname).size(), kMaxFileNameBytes);
}

}  // namespace
}  // namespace charkit::server
