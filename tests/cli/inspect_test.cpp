// bem::inspect_package as a library: what it reports for valid packages of
// each form, and that malformed input is described as far as readable and
// never crashes or throws.
#include <gtest/gtest.h>

#include <random>

#include "charkit/bem/inspect.h"
#include "charkit/core/json.h"
#include "package_builder.h"

namespace charkit {
namespace {

using core::Json;

TEST(Inspect, BinaryBaselineEveryVersion) {
  for (int minor = 0; minor <= 5; ++minor) {
    auto bytes = testkit::make_valid_package(minor).binary(minor % 2 == 1);
    Json j = bem::inspect_package(bytes);
    EXPECT_EQ(j["container"], "binary");
    EXPECT_EQ(j["readable"], true);
    EXPECT_EQ(j["declaredVersion"], "1." + std::to_string(minor));
    EXPECT_EQ(j["header"]["minor"], minor);
    EXPECT_EQ(j["manifest"]["parsed"], true);
    EXPECT_EQ(j["package"]["id"], "example.package");
    EXPECT_EQ(j["target"]["form"], "legacy");
    EXPECT_EQ(j["target"]["characterId"], "chr_0013_aglina");
    EXPECT_EQ(j["target"]["components"].size(), 2u);
    EXPECT_EQ(j["target"]["components"][0]["materials"][0], "M_actor_example_body_01");
    const Json& mesh = j["meshes"][0];
    EXPECT_EQ(mesh["vertexCount"], 3);
    EXPECT_EQ(mesh["indexSize"], 2);
    EXPECT_EQ(mesh["streams"].size(), 3u);
    EXPECT_EQ(mesh["attributes"][2]["semanticName"], "BlendIndices");
    EXPECT_EQ(mesh["attributes"][2]["formatName"], "UInt8");
    EXPECT_EQ(mesh["draws"].size(), 1u);
    EXPECT_EQ(j["textures"][0]["formatName"], "RGBA32");
    EXPECT_EQ(j["textures"][0]["srgb"], true);
    EXPECT_EQ(j["payloads"].size(), 5u);
    EXPECT_EQ(j["payloads"][0]["codec"], minor % 2 == 1 ? "zstd" : "raw");
    EXPECT_EQ(j["payloads"][0]["decodedSize"], 36);
    if (minor == 0) {
      EXPECT_EQ(j["appearances"][0]["id"], "outfit-a");
      EXPECT_EQ(mesh["indices"], 3);
      EXPECT_FALSE(j.contains("optionGroups"));
    } else {
      EXPECT_EQ(j["optionGroups"][0]["choices"].size(), 2u);
      EXPECT_EQ(j["componentRules"]["rules"], 2);
      EXPECT_EQ(mesh["draws"][0]["indices"], 3);
    }
  }
}

TEST(Inspect, ZipHintAndExplicitTarget) {
  auto p = testkit::make_valid_package_v14();
  Json j = bem::inspect_package(p.zip(true));
  EXPECT_EQ(j["container"], "zip");
  EXPECT_EQ(j["declaredVersion"], "1.4");
  EXPECT_EQ(j["manifest"]["member"], "manifest.json");
  EXPECT_EQ(j["target"]["form"], "explicit");
  EXPECT_EQ(j["target"]["resources"][0]["platforms"].size(), 2u);
  EXPECT_EQ(j["target"]["components"][1]["rendererPath"], "Mesh_all/lod0/hair");
  ASSERT_EQ(j["payloads"].size(), 5u);
  EXPECT_EQ(j["payloads"][3]["codec"], "zip-deflate");
  EXPECT_EQ(j["payloads"][3]["member"], "payloads/0003.bin");
  // Without the hint the version is not declared.
  EXPECT_TRUE(bem::inspect_package(p.zip(false, false))["declaredVersion"].is_null());
}

TEST(Inspect, V15Features) {
  auto p = testkit::make_valid_package(5);
  p.manifest["root_offset"] = Json{{"path", "Bip001"}, {"translation", Json::array({0, 0.1, 0})}};
  p.manifest["parameters"] = Json::array({Json{{"id", "body"},
                                               {"name", "Body"},
                                               {"min", 0},
                                               {"max", 1000},
                                               {"neutral", 0},
                                               {"default", 0},
                                               {"step", 1}}});
  p.manifest["drivers"] = Json::array(
      {Json{{"id", "pulse"},
            {"waveform", "sine"},
            {"base_frequency", 0.8},
            {"bindings", Json::array({Json{{"type", "morph_parameter"}, {"target", "body"}}})},
            {"sound", Json{{"payload", 4}, {"format", "ogg"}}}}});
  p.manifest["meshes"][0]["draws"][0]["material_overrides"] =
      Json{{"floats", Json{{"_A", 1.0}, {"_B", 2.0}}}, {"enable_keywords", Json::array({"X_Y"})}};
  Json j = bem::inspect_package(p.binary());
  EXPECT_EQ(j["rootOffset"]["translation"].size(), 3u);
  EXPECT_EQ(j["parameters"][0]["max"], 1000);
  EXPECT_EQ(j["drivers"][0]["bindings"][0]["target"], "body");
  EXPECT_EQ(j["drivers"][0]["sound"]["payload"], 4);
  EXPECT_EQ(j["meshes"][0]["draws"][0]["materialOverrides"]["floats"], 2);
  EXPECT_EQ(j["meshes"][0]["draws"][0]["materialOverrides"]["enable_keywords"], 1);
}

TEST(Inspect, WrongTypesAreSkipped) {
  auto p = testkit::make_valid_package(3);
  Json& m = p.manifest;
  m["meshes"][0]["vertex_count"] = "three";
  m["meshes"][0]["attributes"][0] = Json::array({0, 0, 3});  // malformed: skipped
  m["meshes"][0]["streams"][1] = 7;
  m["meshes"][0]["draws"] = Json::object();
  m["textures"][0]["format"] = -4;
  m["target"]["components"] = "none";
  m["option_groups"][0]["choices"] = Json::array({1, nullptr, Json{{"id", 5}}});
  m["required_capabilities"] = Json::object();
  Json j = bem::inspect_package(p.binary());
  EXPECT_EQ(j["readable"], true);
  EXPECT_FALSE(j["meshes"][0].contains("vertexCount"));
  EXPECT_EQ(j["meshes"][0]["attributes"].size(), 2u);
  EXPECT_EQ(j["meshes"][0]["draws"].size(), 0u);
  EXPECT_FALSE(j["textures"][0].contains("formatName"));
  EXPECT_EQ(j["target"]["components"].size(), 0u);
  EXPECT_EQ(j["optionGroups"][0]["choices"].size(), 1u);
  EXPECT_EQ(j["capabilities"].size(), 0u);
}

TEST(Inspect, UnparsableManifest) {
  testkit::BinaryLayout l;
  l.minor = 1;
  l.manifest = "{\"a\":1,\"a\":2}";
  Json j = bem::inspect_package(testkit::build_binary(l));
  EXPECT_EQ(j["readable"], true);
  EXPECT_EQ(j["manifest"]["parsed"], false);
  EXPECT_NE(j["manifest"]["error"].get<std::string>().find("JSON_DUPLICATE_KEY"),
            std::string::npos);
  EXPECT_FALSE(j.contains("package"));
}

TEST(Inspect, TruncatedAndGarbage) {
  auto bytes = testkit::make_valid_package(2).binary(true);
  for (std::size_t n : {std::size_t{0}, std::size_t{4}, std::size_t{8}, std::size_t{39},
                        std::size_t{40}, std::size_t{60}, bytes.size() - 1}) {
    std::vector<std::uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(n));
    Json j = bem::inspect_package(cut);
    EXPECT_EQ(j["readable"], false) << n;
    EXPECT_FALSE(j["problems"].empty()) << n;
  }
  // Cut mid-payload: header and manifest are still shown, entries that fit too.
  std::vector<std::uint8_t> cut(bytes.begin(), bytes.end() - 5);
  Json j = bem::inspect_package(cut);
  EXPECT_EQ(j["header"]["minor"], 2);
  EXPECT_EQ(j["package"]["id"], "example.package");
}

// Random byte flips of valid packages: inspect never crashes or throws.
TEST(Inspect, MutationsNeverCrash) {
  std::mt19937 rng(12345);
  std::vector<std::vector<std::uint8_t>> seeds = {
      testkit::make_valid_package(0).binary(), testkit::make_valid_package(5).binary(true),
      testkit::make_valid_package_v14().zip(true), testkit::make_valid_package(3).zip(false)};
  for (const auto& seed : seeds) {
    for (int round = 0; round < 300; ++round) {
      auto b = seed;
      int flips = 1 + static_cast<int>(rng() % 8);
      for (int f = 0; f < flips; ++f) b[rng() % b.size()] = static_cast<std::uint8_t>(rng());
      EXPECT_NO_THROW({
        Json j = bem::inspect_package(b);
        (void)j.dump(-1, ' ', false, Json::error_handler_t::replace);
      });
    }
  }
}

TEST(Inspect, EnumNames) {
  EXPECT_STREQ(bem::texture_format_name(25), "BC7");
  EXPECT_STREQ(bem::texture_format_name(50), "ASTC 6x6");
  EXPECT_STREQ(bem::texture_format_name(24), "unsupported");  // BC6H
  EXPECT_STREQ(bem::vertex_semantic_name(12), "BlendWeight");
  EXPECT_STREQ(bem::vertex_semantic_name(14), "unknown");
  EXPECT_STREQ(bem::vertex_format_name(11), "SInt32");
  EXPECT_STREQ(bem::vertex_format_name(12), "unknown");
}

}  // namespace
}  // namespace charkit
