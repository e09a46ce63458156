// §8 textures and §7/§9 texture reference lists: each test breaks one rule
// of the valid baseline, or shows a valid use of a feature.
#include <gtest/gtest.h>

#include "charkit/core/json.h"
#include "mesh_test_util.h"

using namespace charkit;
using rules_test::Form;
using testkit::ByteVec;
using testkit::Json;
using testkit::TestPackage;

namespace {

/// Baseline whose texture 0 is replaced by (format, w, h, mips) with a payload of `bytes` bytes.
TestPackage with_texture(int minor, std::uint32_t format, std::uint32_t w, std::uint32_t h,
                         std::uint32_t mips, std::size_t bytes) {
  TestPackage p = testkit::make_valid_package(minor);
  Json& t = p.manifest["textures"][0];
  t["format"] = format;
  t["width"] = w;
  t["height"] = h;
  t["mips"] = mips;
  if (format == 63) t["srgb"] = false;
  p.payloads[4] = ByteVec(bytes, 0x11);
  return p;
}

Json& texture0(TestPackage& p) {
  return p.manifest["textures"][0];
}

}  // namespace

TEST(TextureRules, BaselineValidInEveryVersion) {
  for (int m = 0; m <= 5; ++m) EXPECT_ACCEPTS(testkit::make_valid_package(m));
  EXPECT_ACCEPTS(testkit::make_valid_package_v14());
}

// Full mip chain sizes computed by hand (§8, Q13: blocks rounded up per level).
struct ChainCase {
  std::uint32_t format, w, h, mips;
  std::size_t bytes;
};
class TextureChain : public ::testing::TestWithParam<ChainCase> {};

TEST_P(TextureChain, ExactSizeValidOffByOneRejected) {
  const ChainCase c = GetParam();
  for (int minor : {0, 2, 5}) {
    EXPECT_ACCEPTS(with_texture(minor, c.format, c.w, c.h, c.mips, c.bytes));
    EXPECT_REJECTS(with_texture(minor, c.format, c.w, c.h, c.mips, c.bytes + 1),
                   "BEM_PAYLOAD_SIZE");
    EXPECT_REJECTS(with_texture(minor, c.format, c.w, c.h, c.mips, c.bytes - 1),
                   "BEM_PAYLOAD_SIZE");
  }
}
INSTANTIATE_TEST_SUITE_P(
    Formats, TextureChain,
    ::testing::Values(ChainCase{4, 4, 4, 3, 64 + 16 + 4},      // RGBA32
                      ChainCase{4, 5, 3, 3, 60 + 8 + 4},       // RGBA32 odd: 5x3, 2x1, 1x1
                      ChainCase{63, 3, 5, 3, 15 + 2 + 1},      // R8: 3x5, 1x2, 1x1
                      ChainCase{10, 8, 8, 4, 32 + 8 + 8 + 8},  // BC1: levels below 4x4 = 1 block
                      ChainCase{26, 4, 8, 4, 16 + 8 + 8 + 8},  // BC4
                      ChainCase{12, 8, 4, 1, 32},              // BC3
                      ChainCase{25, 4, 4, 3, 16 + 16 + 16},    // BC7
                      ChainCase{27, 4, 4, 1, 16},              // BC5
                      ChainCase{48, 6, 6, 1, 64},              // ASTC 4x4: 2x2 blocks
                      ChainCase{49, 5, 5, 3, 16 + 16 + 16},    // ASTC 5x5
                      ChainCase{50, 10, 10, 2, 64 + 16}));     // ASTC 6x6: 2x2, then 5x5 -> 1

TEST(TextureRules, UnsupportedFormats) {
  for (std::uint32_t f : {24u, 0u, 5u, 11u, 28u, 47u, 51u, 62u, 64u}) {
    TestPackage p = testkit::make_valid_package(2);
    texture0(p)["format"] = f;
    EXPECT_REJECTS(p, "BEM_TEXTURE_FORMAT");
  }
}

TEST(TextureRules, BcNeedsMultiplesOfFour) {
  EXPECT_REJECTS(with_texture(1, 10, 6, 4, 1, 16), "BEM_TEXTURE_BLOCK_ALIGN");
  EXPECT_REJECTS(with_texture(1, 25, 4, 2, 1, 16), "BEM_TEXTURE_BLOCK_ALIGN");
  // ASTC has no such rule: blocks are rounded up.
  EXPECT_ACCEPTS(with_texture(1, 48, 6, 2, 1, 32));
}

TEST(TextureRules, DimensionRanges) {
  for (const char* key : {"width", "height"}) {
    TestPackage p = testkit::make_valid_package(1);
    texture0(p)[key] = 0;
    EXPECT_REJECTS(p, "BEM_FIELD_RANGE");
    texture0(p)[key] = 32769;
    EXPECT_REJECTS(p, "BEM_FIELD_RANGE");
    texture0(p)[key] = 4.0;
    EXPECT_REJECTS(p, "BEM_FIELD_TYPE");
    texture0(p).erase(key);
    EXPECT_REJECTS(p, "BEM_FIELD_MISSING");
  }
}

TEST(TextureRules, MipRanges) {
  TestPackage p = testkit::make_valid_package(3);
  texture0(p)["mips"] = 0;
  EXPECT_REJECTS(p, "BEM_FIELD_RANGE");
  texture0(p)["mips"] = 17;
  EXPECT_REJECTS(p, "BEM_FIELD_RANGE");
  // Q13: a 4x4 texture has a chain of 3 levels; a 4th is rejected.
  EXPECT_REJECTS(with_texture(3, 4, 4, 4, 4, 64 + 16 + 4 + 4), "BEM_TEXTURE_MIPS");
  // 32768 px needs 16 levels: the full chain is allowed.
  EXPECT_REJECTS(with_texture(3, 63, 32768, 1, 17, 1), "BEM_FIELD_RANGE");
}

TEST(TextureRules, R8IsLinearOnly) {
  TestPackage p = with_texture(0, 63, 4, 4, 1, 16);
  EXPECT_ACCEPTS(p);
  texture0(p)["srgb"] = true;
  EXPECT_REJECTS(p, "BEM_TEXTURE_SRGB");
}

TEST(TextureRules, SrgbIsBoolean) {
  TestPackage p = testkit::make_valid_package(1);
  texture0(p)["srgb"] = 1;
  EXPECT_REJECTS(p, "BEM_FIELD_TYPE");
  texture0(p).erase("srgb");
  EXPECT_REJECTS(p, "BEM_FIELD_MISSING");
}

TEST(TextureRules, OriginalName) {
  TestPackage p = testkit::make_valid_package(1);
  texture0(p)["original_name"] = "";
  EXPECT_REJECTS(p, "BEM_STRING_LENGTH");
  texture0(p)["original_name"] = std::string(257, 'a');
  EXPECT_REJECTS(p, "BEM_STRING_LENGTH");
  texture0(p)["original_name"] = std::string(256, 'a');
  EXPECT_ACCEPTS(p);
  texture0(p)["original_name"] = 7;
  EXPECT_REJECTS(p, "BEM_FIELD_TYPE");
  texture0(p).erase("original_name");
  EXPECT_REJECTS(p, "BEM_FIELD_MISSING");
}

TEST(TextureRules, PayloadReference) {
  TestPackage p = testkit::make_valid_package(1);
  texture0(p)["payload"] = 9;
  EXPECT_REJECTS(p, "BEM_PAYLOAD_ID");
  auto r = rules_test::validate(p, Form::kZip);
  EXPECT_TRUE(r.report.has_code("BEM_ZIP_MISSING_PAYLOAD")) << r.report.to_text("zip");
  texture0(p)["payload"] = -1;
  EXPECT_REJECTS(p, "BEM_FIELD_TYPE");
}

TEST(TextureRules, SemanticAndNormalEncoding) {
  TestPackage p = testkit::make_valid_package(2);
  texture0(p)["semantic"] = "normal";
  texture0(p)["normal_encoding"] = "xy-unorm";
  texture0(p)["srgb"] = false;
  EXPECT_ACCEPTS(p);
  texture0(p)["normal_encoding"] = "xyz-unorm";
  EXPECT_ACCEPTS(p);
  texture0(p)["normal_encoding"] = "rg-snorm";
  EXPECT_REJECTS(p, "BEM_TEXTURE_NORMAL_ENCODING");
  texture0(p)["normal_encoding"] = "xy-unorm";
  texture0(p)["semantic"] = "albedo";  // Q13: only "normal" is known
  EXPECT_REJECTS(p, "BEM_TEXTURE_SEMANTIC");
  texture0(p)["semantic"] = true;
  EXPECT_REJECTS(p, "BEM_FIELD_TYPE");
}

TEST(TextureRules, NormalMapWithoutEncodingIsAWarning) {
  TestPackage p = testkit::make_valid_package(2);
  texture0(p)["semantic"] = "normal";
  auto r = rules_test::validate(p);
  EXPECT_TRUE(r.valid()) << r.report.to_text("pkg");
  EXPECT_TRUE(r.report.has_code("BEM_TEXTURE_NORMAL_ENCODING_MISSING"));
}

TEST(TextureRules, TooManyTextures) {
  TestPackage p = testkit::make_valid_package(2);
  Json t = texture0(p);
  p.manifest["textures"] = Json::array();
  for (int i = 0; i < 4097; ++i) p.manifest["textures"].push_back(t);
  EXPECT_REJECTS(p, "BEM_ARRAY_SIZE");
  p.manifest["textures"].erase(4096);
  EXPECT_ACCEPTS(p);  // 4096 textures sharing one payload
}

TEST(TextureRules, TexturesFieldShape) {
  TestPackage p = testkit::make_valid_package(1);
  p.manifest["textures"] = Json::object();
  EXPECT_REJECTS(p, "BEM_FIELD_TYPE");
  p.manifest["textures"] = Json::array({5});
  EXPECT_REJECTS(p, "BEM_FIELD_TYPE");
  p.manifest.erase("textures");
  EXPECT_REJECTS(p, "BEM_FIELD_MISSING");
}

// §11: one texture with its chain ≤ 64 MiB in 1.0/1.1, ≤ 256 MiB from 1.2.
TEST(TextureRules, SizeLimitPerVersion) {
  // RGBA32 4100x4100 = 67,240,000 bytes > 64 MiB.
  const std::uint32_t side = 4100;
  const std::size_t bytes = std::size_t{side} * side * 4;
  for (int minor : {0, 1}) {
    TestPackage p = with_texture(minor, 4, side, side, 1, 16);  // payload size is not the point
    EXPECT_REJECTS(p, "BEM_VERSION_TOO_LOW");
  }
  TestPackage ok = with_texture(2, 4, side, side, 1, bytes);
  bem::ValidateOptions fast;
  fast.check_payloads = false;
  auto r = rules_test::validate(ok, Form::kBinary, fast);
  EXPECT_TRUE(r.valid()) << r.report.to_text("pkg");
  // 8192x8193 RGBA32 = 268,468,224 bytes > 256 MiB: too large for every version.
  EXPECT_REJECTS(with_texture(5, 4, 8192, 8193, 1, 16), "BEM_TEXTURE_TOO_LARGE");
}

// ---- texture reference lists (§7, §9) ------------------------------------

namespace {
Json& draw_textures(TestPackage& p) {
  return p.manifest["meshes"][0]["draws"][0]["textures"];
}

/// Baseline with a second texture (payload shared with texture 0).
TestPackage with_two_textures(int minor, const std::string& second_original) {
  TestPackage p = testkit::make_valid_package(minor);
  Json t = texture0(p);
  t["original_name"] = second_original;
  p.manifest["textures"].push_back(t);
  return p;
}
}  // namespace

TEST(TextureListRules, TwoDistinctTexturesValid) {
  for (int minor : {0, 1, 5}) {
    TestPackage p = with_two_textures(minor, "T_actor_example_body_01_n");
    draw_textures(p) = Json::array({0, 1});
    EXPECT_ACCEPTS(p);
  }
}

TEST(TextureListRules, EmptyListValid) {  // Q10
  for (int minor : {0, 1, 4}) {
    TestPackage p = testkit::make_valid_package(minor);
    draw_textures(p) = Json::array();
    EXPECT_ACCEPTS(p);
  }
}

TEST(TextureListRules, MissingListRejected) {
  TestPackage p = testkit::make_valid_package(1);
  p.manifest["meshes"][0]["draws"][0].erase("textures");
  EXPECT_REJECTS(p, "BEM_FIELD_MISSING");
}

TEST(TextureListRules, IndexOutOfRange) {
  TestPackage p = testkit::make_valid_package(0);
  draw_textures(p) = Json::array({1});
  EXPECT_REJECTS(p, "BEM_TEXTURE_INDEX");
}

TEST(TextureListRules, SameTextureTwice) {
  TestPackage p = testkit::make_valid_package(1);
  draw_textures(p) = Json::array({0, 0});
  EXPECT_REJECTS(p, "BEM_TEXTURE_DUPLICATE");
}

TEST(TextureListRules, SameOriginalTwice) {
  TestPackage p = with_two_textures(1, "T_actor_example_body_01_d");
  draw_textures(p) = Json::array({0, 1});
  EXPECT_REJECTS(p, "BEM_TEXTURE_ORIGINAL_CONFLICT");
  // Both textures may exist; only one list may not bind both.
  draw_textures(p) = Json::array({1});
  EXPECT_ACCEPTS(p);
}

TEST(TextureListRules, BadEntries) {
  TestPackage p = testkit::make_valid_package(1);
  draw_textures(p) = Json::array({"0"});
  EXPECT_REJECTS(p, "BEM_FIELD_TYPE");
  draw_textures(p) = Json::array({-1});
  EXPECT_REJECTS(p, "BEM_FIELD_TYPE");
  draw_textures(p) = 0;
  EXPECT_REJECTS(p, "BEM_FIELD_TYPE");
}

namespace {
/// 1.2+ package with texture slot "dress_d" whose candidate is texture `tex` (or null).
TestPackage with_slot(int minor, Json tex) {
  TestPackage p = testkit::make_valid_package(minor);
  p.manifest["required_capabilities"].push_back("texture-slots");
  p.manifest["texture_slots"] = Json::array({Json{
      {"id", "dress_d"},
      {"candidates",
       Json::array(
           {Json{{"when", Json{{"eq", Json::array({"outfit", "a"})}}}, {"texture", tex}},
            Json{{"when", Json{{"eq", Json::array({"outfit", "b"})}}}, {"texture", nullptr}}})}}});
  draw_textures(p) = Json::array({Json{{"slot", "dress_d"}}});
  return p;
}
}  // namespace

TEST(TextureListRules, SlotValidFrom12) {
  for (int minor : {2, 3, 5}) EXPECT_ACCEPTS(with_slot(minor, 0));
}

TEST(TextureListRules, SlotNeeds12) {
  TestPackage p = with_slot(1, 0);
  EXPECT_REJECTS(p, "BEM_VERSION_TOO_LOW");
}

TEST(TextureListRules, SlotUnknown) {
  TestPackage p = with_slot(2, 0);
  draw_textures(p) = Json::array({Json{{"slot", "nope"}}});
  EXPECT_REJECTS(p, "BEM_TEXTURE_SLOT_UNKNOWN");
  draw_textures(p) = Json::array({Json{{"slot", 3}}});
  EXPECT_REJECTS(p, "BEM_FIELD_TYPE");
  draw_textures(p) = Json::array({Json{{"name", "dress_d"}}});
  EXPECT_REJECTS(p, "BEM_FIELD_MISSING");
}

TEST(TextureListRules, SlotTwice) {
  TestPackage p = with_slot(2, 0);
  draw_textures(p) = Json::array({Json{{"slot", "dress_d"}}, Json{{"slot", "dress_d"}}});
  EXPECT_REJECTS(p, "BEM_TEXTURE_DUPLICATE");
}

TEST(TextureListRules, SlotAndFixedTextureReplaceSameOriginal) {
  TestPackage p = with_slot(2, 0);
  draw_textures(p) = Json::array({0, Json{{"slot", "dress_d"}}});
  EXPECT_REJECTS(p, "BEM_TEXTURE_ORIGINAL_CONFLICT");
}
