// The bounded XML reader of S3 answers: real answer shapes, and garbage that
// must come back as STORE_S3_XML, never a crash.
#include "charkit/store/detail/s3_xml.h"

#include <gtest/gtest.h>

#include <random>

namespace charkit::store::xml {
namespace {

TEST(S3XmlTest, ListObjectsV2Answer) {
  // The shape of AWS's ListObjectsV2 answer (API reference example).
  const std::string doc = R"(<?xml version="1.0" encoding="UTF-8"?>
<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
  <Name>bucket</Name>
  <Prefix>p/models/</Prefix>
  <KeyCount>2</KeyCount>
  <MaxKeys>1000</MaxKeys>
  <IsTruncated>true</IsTruncated>
  <NextContinuationToken>1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=</NextContinuationToken>
  <Contents><Key>p/a&amp;b.txt</Key><Size>3</Size><ETag>&quot;x&quot;</ETag></Contents>
  <Contents><Key><![CDATA[p/c<d]]></Key></Contents>
  <CommonPrefixes><Prefix>p/models/2026/</Prefix></CommonPrefixes>
  <!-- a comment -->
  <Empty/>
</ListBucketResult>
)";
  auto n = parse(doc);
  ASSERT_TRUE(n) << n.error().to_string();
  EXPECT_EQ(n->name, "ListBucketResult");
  EXPECT_EQ(n->child_text("IsTruncated"), "true");
  EXPECT_EQ(n->child_text("NextContinuationToken"),
            "1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=");
  const auto contents = n->all("Contents");
  ASSERT_EQ(contents.size(), 2u);
  EXPECT_EQ(contents[0]->child_text("Key"), "p/a&b.txt");
  EXPECT_EQ(contents[0]->child_text("ETag"), "\"x\"");
  EXPECT_EQ(contents[1]->child_text("Key"), "p/c<d");
  ASSERT_NE(n->child("CommonPrefixes"), nullptr);
  EXPECT_EQ(n->child("CommonPrefixes")->child_text("Prefix"), "p/models/2026/");
  EXPECT_NE(n->child("Empty"), nullptr);
  EXPECT_EQ(n->child("Missing"), nullptr);
  EXPECT_EQ(n->child_text("Missing"), "");
}

TEST(S3XmlTest, ErrorAnswerWithPrefixesAndReferences) {
  auto n = parse(
      "<s3:Error xmlns:s3='x'><s3:Code>NoSuchKey</s3:Code>"
      "<Message>caf&#233; &#x1F600; &lt;ok&gt; &apos;q&apos;</Message></s3:Error>");
  ASSERT_TRUE(n) << n.error().to_string();
  EXPECT_EQ(n->name, "Error");
  EXPECT_EQ(n->child_text("Code"), "NoSuchKey");
  EXPECT_EQ(n->child_text("Message"), "caf\xC3\xA9 \xF0\x9F\x98\x80 <ok> 'q'");
}

TEST(S3XmlTest, GarbageIsAnErrorNotACrash) {
  const std::vector<std::string> bad{
      "",
      "   ",
      "not xml",
      "<a>",
      "<a></b>",
      "</a>",
      "<a><b></a></b>",
      "<a>&unknown;</a>",
      "<a>&#0;</a>",
      "<a>&#xD800;</a>",
      "<a>&#x110000;</a>",
      "<a>&#12345678901;</a>",
      "<a>&amp</a>",
      "<a x=1></a>",
      "<a x='1></a>",
      "<a/><b/>",
      "<a/>text",
      "<!DOCTYPE a [<!ENTITY e 'x'>]><a>&e;</a>",
      "<a><!-- never closed </a>",
      "<a><![CDATA[ never closed </a>",
      "<?xml never closed",
      "<>",
      "< a/>",
      "<a/ >",
  };
  for (const std::string& doc : bad) {
    auto n = parse(doc);
    EXPECT_FALSE(n) << doc;
    if (!n) {
      EXPECT_EQ(n.error().code, "STORE_S3_XML") << doc;
    }
  }
}

TEST(S3XmlTest, LimitsHold) {
  std::string deep;
  for (int i = 0; i < 100; ++i) deep += "<a>";
  for (int i = 0; i < 100; ++i) deep += "</a>";
  auto n = parse(deep);
  ASSERT_FALSE(n);
  EXPECT_NE(n.error().message.find("deep"), std::string::npos);
  Limits small;
  small.max_nodes = 10;
  std::string many = "<r>";
  for (int i = 0; i < 20; ++i) many += "<k/>";
  many += "</r>";
  EXPECT_FALSE(parse(many, small));
  small.max_bytes = 8;
  EXPECT_FALSE(parse("<r>0123456789</r>", small));
}

TEST(S3XmlTest, RandomBytesNeverCrash) {
  std::mt19937 rng(1234);
  const std::string alphabet = "<>/=\"'&;#x!?[]-CDATAab \n";
  for (int round = 0; round < 20000; ++round) {
    std::string doc;
    const std::size_t len = rng() % 64;
    for (std::size_t i = 0; i < len; ++i) doc.push_back(alphabet[rng() % alphabet.size()]);
    (void)parse(doc);
  }
}

TEST(S3XmlTest, EscapeRoundTrips) {
  const std::string text = "a&b<c>d\"e'f";
  auto n = parse("<x>" + escape(text) + "</x>");
  ASSERT_TRUE(n);
  EXPECT_EQ(n->text, text);
}

}  // namespace
}  // namespace charkit::store::xml
