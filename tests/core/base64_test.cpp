// core/base64: RFC 4648 §10 test vectors and the decoding policy of base64.h.
#include "charkit/core/base64.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace charkit::core {
namespace {

std::vector<std::uint8_t> bytes_of(std::string_view s) {
  return {s.begin(), s.end()};
}

struct Vector {
  const char* plain;
  const char* encoded;
};

// RFC 4648 §10.
constexpr Vector kRfcVectors[] = {{"", ""},
                                  {"f", "Zg=="},
                                  {"fo", "Zm8="},
                                  {"foo", "Zm9v"},
                                  {"foob", "Zm9vYg=="},
                                  {"fooba", "Zm9vYmE="},
                                  {"foobar", "Zm9vYmFy"}};

TEST(Base64, EncodesRfc4648Vectors) {
  for (const Vector& v : kRfcVectors) EXPECT_EQ(base64_encode(bytes_of(v.plain)), v.encoded);
}

TEST(Base64, DecodesRfc4648VectorsWithAndWithoutPadding) {
  for (const Vector& v : kRfcVectors) {
    auto padded = base64_decode(v.encoded);
    ASSERT_TRUE(padded) << v.encoded << ": " << padded.error().to_string();
    EXPECT_EQ(*padded, bytes_of(v.plain));
    std::string bare = v.encoded;
    while (!bare.empty() && bare.back() == '=') bare.pop_back();
    auto unpadded = base64_decode(bare);
    ASSERT_TRUE(unpadded) << bare;
    EXPECT_EQ(*unpadded, bytes_of(v.plain));
    EXPECT_EQ(base64_decoded_size(v.encoded), std::string_view(v.plain).size());
  }
}

TEST(Base64, UrlAlphabetUsesMinusAndUnderscore) {
  const std::vector<std::uint8_t> b = {0xFB, 0xFF, 0xBF};
  EXPECT_EQ(base64_encode(b), "+/+/");
  EXPECT_EQ(base64url(b), "-_-_");
  EXPECT_EQ(base64url(std::vector<std::uint8_t>{0xFB}), "-w");  // no padding
  EXPECT_EQ(base64_encode(std::vector<std::uint8_t>{0xFB}, Base64Alphabet::kUrl, true), "-w==");
  auto d = base64_decode("-_-_", Base64Alphabet::kUrl);
  ASSERT_TRUE(d);
  EXPECT_EQ(*d, b);
  // Each alphabet refuses the other's two characters.
  auto std_on_url = base64_decode("-_-_");
  ASSERT_FALSE(std_on_url);
  EXPECT_EQ(std_on_url.error().code, "BASE64_CHARACTER");
  EXPECT_EQ(std_on_url.error().location.offset, 0u);
  auto url_on_std = base64_decode("ab+/", Base64Alphabet::kUrl);
  ASSERT_FALSE(url_on_std);
  EXPECT_EQ(url_on_std.error().location.offset, 2u);
}

TEST(Base64, AllByteValuesRoundTrip) {
  std::vector<std::uint8_t> all(256);
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<std::uint8_t>(i);
  for (std::size_t n = 0; n <= all.size(); n += 37) {
    const std::span<const std::uint8_t> part(all.data(), n);
    for (auto alphabet : {Base64Alphabet::kStandard, Base64Alphabet::kUrl}) {
      auto d = base64_decode(base64_encode(part, alphabet), alphabet);
      ASSERT_TRUE(d);
      EXPECT_EQ(*d, std::vector<std::uint8_t>(part.begin(), part.end()));
    }
  }
}

struct Bad {
  const char* text;
  const char* code;
  std::uint64_t offset;
};

TEST(Base64, RejectsBadInputWithCodeAndOffset) {
  const Bad cases[] = {
      {"Zm9v YmFy", "BASE64_CHARACTER", 4},   // no whitespace
      {"Zm9v\nYmFy", "BASE64_CHARACTER", 4},  // no line breaks
      {"Zm9\x80", "BASE64_CHARACTER", 3},
      {"Z", "BASE64_LENGTH", 0},
      {"Zm9vY", "BASE64_LENGTH", 4},
      {"Zm9vY===", "BASE64_LENGTH", 4},
      {"Zm9v=", "BASE64_PADDING", 4},     // padding after a whole group
      {"Zg=", "BASE64_PADDING", 3},       // one '=' short
      {"Zg===", "BASE64_PADDING", 4},     // one '=' too many
      {"Zg==Zg==", "BASE64_PADDING", 4},  // data after the padding
      {"Zm8=x", "BASE64_PADDING", 4},
      {"Zh==", "BASE64_TRAILING_BITS", 1},  // 'h' leaves low bits set
      {"Zm9=", "BASE64_TRAILING_BITS", 2},
  };
  for (const Bad& c : cases) {
    auto r = base64_decode(c.text);
    ASSERT_FALSE(r) << c.text;
    EXPECT_EQ(r.error().code, c.code) << c.text;
    EXPECT_EQ(r.error().location.offset, c.offset) << c.text;
    EXPECT_FALSE(r.error().message.empty());
  }
}

}  // namespace
}  // namespace charkit::core
