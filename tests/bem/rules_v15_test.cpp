// BEM 1.5: §12 material overrides and root offset, §13 drivers and their
// sounds. Each rule-breaking package starts from a valid 1.5 package that
// uses all three features and breaks exactly one rule.
#include <algorithm>
#include <string>

#include <gtest/gtest.h>

#include "charkit/core/json.h"
#include "morph_test_support.h"

using namespace charkit;
using namespace charkit::morphtest;
using testkit::TestPackage;

namespace {

constexpr std::uint32_t kSoundPayload = 6;

/// 1.5 legacy-target package: slider "body" with a channel, overrides on the
/// draw, a root offset and two drivers (a morph one with a sound, a material one).
TestPackage with_v15(int minor = 5) {
  TestPackage p = with_morph(minor);
  Json& m = p.manifest;
  for (const char* cap : {"material-overrides-v1", "root-offset-v1", "dynamic-drivers-v1"})
    m["required_capabilities"].push_back(cap);
  m["meshes"][0]["draws"][0]["material_overrides"] =
      Json{{"floats", Json{{"_Alpha", 0.5}, {"_Cutoff", 1}}},
           {"colors", Json{{"_BaseColor", Json::array({1.0, 0.5, 0.25, 1.0})}}},
           {"vectors", Json{{"_Offset", Json::array({0, -1.5, 65536, 0})}}},
           {"enable_keywords", Json::array({"_ALPHATEST_ON"})},
           {"disable_keywords", Json::array({"_EMISSION"})}};
  m["root_offset"] = Json{{"path", "Bip001"}, {"translation", Json::array({0.0, 0.04, 0.0})}};
  p.payloads.push_back(ByteVec(32, 0x4F));  // 6: sound bytes
  m["drivers"] = Json::array(
      {Json{{"id", "driver_thrust"},
            {"name", "Thrust"},
            {"waveform", "pingpong"},
            {"playback", "loop"},
            {"default_playing", false},
            {"base_frequency", 1.2},
            {"speed_multiplier", 1.0},
            {"sound", Json{{"payload", kSoundPayload},
                           {"format", "ogg"},
                           {"gain", 0.8},
                           {"loop", true},
                           {"offset_seconds", 0.0}}},
            {"bindings", Json::array({Json{{"type", "morph_parameter"},
                                           {"target", "body"},
                                           {"range", Json::array({0.05, 1.0})}}})}},
       Json{{"id", "driver_glow"},
            {"waveform", "sine"},
            {"base_frequency", 0.8},
            {"bindings", Json::array({Json{{"type", "material_float"},
                                           {"component", 0},
                                           {"material_slot", 0},
                                           {"property", "_EmissionWeight"},
                                           {"range", Json::array({0.0, 1.5})}},
                                      Json{{"type", "material_color"},
                                           {"component", 1},
                                           {"property", "_EmissionColor"},
                                           {"colors", Json::array({Json::array({0, 0, 0, 1}),
                                                                   Json::array({8, 4, 2, 1})})}},
                                      Json{{"type", "material_keyword"},
                                           {"keyword", "_EMISSION"},
                                           {"threshold", 0.25}}})}}});
  return p;
}

Json& overrides(TestPackage& p) {
  return p.manifest["meshes"][0]["draws"][0]["material_overrides"];
}
Json& root(TestPackage& p) {
  return p.manifest["root_offset"];
}
Json& driver(TestPackage& p, int i = 0) {
  return p.manifest["drivers"][i];
}
Json& binding(TestPackage& p, int d, int b) {
  return driver(p, d)["bindings"][b];
}

void expect_rule(const TestPackage& p, const std::string& code, bool skip = false) {
  auto o = run_passes(p, skip);
  EXPECT_TRUE(o.has(code)) << "direct passes, want " << code << "\n" << o.report.to_text("pkg");
  EXPECT_TRUE(o.errors()) << o.report.to_text("pkg");
  auto r = validate(p, skip);
  EXPECT_TRUE(r.report.has_code(code)) << "validator, want " << code << "\n"
                                       << r.report.to_text("pkg");
  EXPECT_FALSE(r.valid());
}

/// Valid (no errors), but an issue `code` of lower severity is reported.
void expect_valid(const TestPackage& p, const std::string& code = "", bool skip = false) {
  auto o = run_passes(p, skip);
  EXPECT_FALSE(o.errors()) << o.report.to_text("pkg");
  if (!code.empty()) {
    EXPECT_TRUE(o.has(code)) << "want " << code << "\n" << o.report.to_text("pkg");
  }
  auto r = validate(p, skip);
  EXPECT_TRUE(r.valid()) << r.report.to_text("pkg");
  if (!code.empty()) {
    EXPECT_TRUE(r.report.has_code(code)) << r.report.to_text("pkg");
  }
}

std::string repeat(char c, std::size_t n) {
  return std::string(n, c);
}

}  // namespace

// ---- valid packages ----------------------------------------------------

TEST(V15Valid, AllFeaturesOnLegacyTarget) {
  auto p = with_v15();
  expect_valid(p);
  EXPECT_TRUE(validate_zip(p).valid()) << validate_zip(p).report.to_text("pkg");
  auto o = run_passes(p);
  EXPECT_TRUE(o.used_capabilities.count("root-offset-v1"));
  EXPECT_TRUE(o.used_capabilities.count("dynamic-drivers-v1"));
  EXPECT_EQ(o.needed_minor, 5);
}

TEST(V15Valid, AllFeaturesOnExplicitTargets) {
  auto base = testkit::make_valid_package_v14();
  base.minor = 5;
  auto p = with_morph(base);
  p.manifest["required_capabilities"].push_back("root-offset-v1");
  p.manifest["root_offset"] = Json{{"path", "Root/Bip001"}, {"translation", {0, 0, 0.1}}};
  expect_valid(p);
}

TEST(V15Valid, RootOffsetExactlyTwentyCentimetres) {  // Q18
  auto p = with_v15();
  root(p)["translation"] = Json::array({0.0, 0.2, 0.0});
  expect_valid(p);
  root(p)["translation"] = Json::array({0.12, 0.16, 0.0});
  expect_valid(p);
  root(p)["translation"] = Json::array({0, 0, -0.2});
  expect_valid(p);
}

TEST(V15Valid, EmptyOverridesAndIntegerFloats) {  // Q19
  auto p = with_v15();
  overrides(p) = Json::object();
  expect_valid(p, "BEM_OVERRIDE_EMPTY");
  overrides(p) = Json{{"floats", Json{{"_Cull", 2}, {"_Min", -128}, {"_Max", 128}}}};
  expect_valid(p);
}

TEST(V15Valid, OverrideQuotasAtTheLimit) {
  auto p = with_v15();
  Json floats = Json::object(), kws = Json::array();
  for (int i = 0; i < 32; ++i) floats["_F" + std::to_string(i)] = i;
  for (int i = 0; i < 16; ++i) kws.push_back("KW_" + std::to_string(i));
  overrides(p) = Json{{"floats", floats}, {"enable_keywords", kws}};
  expect_valid(p);
}

TEST(V15Valid, SoundOnlyDriver) {  // Q17
  auto p = with_v15();
  driver(p).erase("bindings");
  expect_valid(p);
  driver(p)["bindings"] = Json::array();
  expect_valid(p);
}

TEST(V15Valid, BlendShapeAliasAndDefaults) {
  auto p = with_v15();
  driver(p) = Json{{"id", "d"},
                   {"bindings", Json::array({Json{{"type", "blend_shape"}, {"target", "body"}}})}};
  expect_valid(p);
}

TEST(V15Valid, DefaultPlayingTrueIsAnInfo) {  // Q17
  auto p = with_v15();
  driver(p)["default_playing"] = true;
  expect_valid(p, "BEM_DRIVER_DEFAULT_PLAYING");
}

TEST(V15Valid, SixteenDrivers) {
  auto p = with_v15();
  for (int i = 2; i < 16; ++i) {
    Json d = driver(p, 1);
    d["id"] = "d" + std::to_string(i);
    p.manifest["drivers"].push_back(d);
  }
  expect_valid(p);
}

TEST(V15Valid, SoundFormatsAndBounds) {
  auto p = with_v15();
  for (const char* f : {"wav", "mp3", "m4a", "aac", "flac", "ogg", "wma", "mp4", "bin"}) {
    driver(p)["sound"]["format"] = f;
    auto o = run_passes(p);
    EXPECT_FALSE(o.errors() || o.has("BEM_DRIVER_SOUND_FORMAT")) << f;
  }
  driver(p)["sound"] = Json{{"payload", kSoundPayload}, {"gain", 2}, {"offset_seconds", 60}};
  expect_valid(p);
}

TEST(V15Valid, V15PackageWithOnlyDrivers) {
  // §13: a 1.3-structure package plus dynamic-drivers-v1 is a valid 1.5 package.
  auto p = with_morph(5);
  p.manifest["required_capabilities"].push_back("dynamic-drivers-v1");
  p.manifest["drivers"] = Json::array(
      {Json{{"id", "d"},
            {"bindings", Json::array({Json{{"type", "morph_parameter"}, {"target", "body"}}})}}});
  expect_valid(p);
}

// ---- §12 material_overrides --------------------------------------------

TEST(V15Overrides, VersionTooLow) {
  auto p = with_morph(4);
  p.manifest["required_capabilities"].push_back("material-overrides-v1");
  p.manifest["meshes"][0]["draws"][0]["material_overrides"] = Json{{"floats", {{"_A", 1}}}};
  expect_rule(p, "BEM_VERSION_TOO_LOW");
}

TEST(V15Overrides, NotAnObject) {
  auto p = with_v15();
  overrides(p) = Json::array();
  expect_rule(p, "BEM_FIELD_TYPE");
}

TEST(V15Overrides, FloatsNotAnObject) {
  auto p = with_v15();
  overrides(p)["floats"] = Json::array({1.0});
  expect_rule(p, "BEM_FIELD_TYPE");
}

TEST(V15Overrides, FloatNotANumber) {
  auto p = with_v15();
  overrides(p)["floats"]["_Alpha"] = "0.5";
  expect_rule(p, "BEM_FIELD_TYPE");
}

TEST(V15Overrides, FloatOutOfRange) {
  auto p = with_v15();
  overrides(p)["floats"]["_Alpha"] = 128.5;
  expect_rule(p, "BEM_OVERRIDE_RANGE");
}

TEST(V15Overrides, FloatOutOfRangeClampedWhenValidationOff) {
  auto p = with_v15();
  overrides(p)["floats"]["_Alpha"] = -500;
  expect_valid(p, "BEM_OVERRIDE_CLAMPED", /*skip=*/true);
}

TEST(V15Overrides, ColorChannelOutOfRange) {
  auto p = with_v15();
  overrides(p)["colors"]["_BaseColor"][3] = 8.01;
  expect_rule(p, "BEM_OVERRIDE_RANGE");
}

TEST(V15Overrides, ColorNegative) {
  auto p = with_v15();
  overrides(p)["colors"]["_BaseColor"][0] = -0.1;
  expect_rule(p, "BEM_OVERRIDE_RANGE");
}

TEST(V15Overrides, ColorWithThreeChannels) {
  auto p = with_v15();
  overrides(p)["colors"]["_BaseColor"] = Json::array({1, 1, 1});
  expect_rule(p, "BEM_FIELD_TYPE");
}

TEST(V15Overrides, VectorOutOfRange) {
  auto p = with_v15();
  overrides(p)["vectors"]["_Offset"][1] = -65537;
  expect_rule(p, "BEM_OVERRIDE_RANGE");
}

TEST(V15Overrides, VectorNotArray) {
  auto p = with_v15();
  overrides(p)["vectors"]["_Offset"] = 1.0;
  expect_rule(p, "BEM_FIELD_TYPE");
}

TEST(V15Overrides, TooManyFloats) {
  auto p = with_v15();
  for (int i = 0; i < 31; ++i) overrides(p)["floats"]["_F" + std::to_string(i)] = 0;
  expect_rule(p, "BEM_OVERRIDE_QUOTA");  // 33
}

TEST(V15Overrides, QuotasTimesFourWhenValidationOff) {
  auto p = with_v15();
  for (int i = 0; i < 31; ++i) overrides(p)["floats"]["_F" + std::to_string(i)] = 0;
  expect_valid(p, "", /*skip=*/true);  // 33 ≤ 128
  for (int i = 31; i < 127; ++i) overrides(p)["floats"]["_F" + std::to_string(i)] = 0;
  expect_rule(p, "BEM_OVERRIDE_QUOTA", /*skip=*/true);  // 129
}

TEST(V15Overrides, TooManyColors) {
  auto p = with_v15();
  for (int i = 0; i < 16; ++i)
    overrides(p)["colors"]["_C" + std::to_string(i)] = Json::array({0, 0, 0, 0});
  expect_rule(p, "BEM_OVERRIDE_QUOTA");
}

TEST(V15Overrides, TooManyVectors) {
  auto p = with_v15();
  for (int i = 0; i < 8; ++i)
    overrides(p)["vectors"]["_V" + std::to_string(i)] = Json::array({0, 0, 0, 0});
  expect_rule(p, "BEM_OVERRIDE_QUOTA");
}

TEST(V15Overrides, TooManyKeywords) {
  auto p = with_v15();
  for (int i = 0; i < 16; ++i)
    overrides(p)["disable_keywords"].push_back("KW_" + std::to_string(i));
  expect_rule(p, "BEM_OVERRIDE_QUOTA");
}

TEST(V15Overrides, PropertyNameWithoutUnderscore) {
  auto p = with_v15();
  overrides(p)["floats"]["Alpha"] = 1;
  expect_rule(p, "BEM_OVERRIDE_NAME");
}

TEST(V15Overrides, PropertyNameTooLong) {
  auto p = with_v15();
  overrides(p)["floats"]["_" + repeat('a', 96)] = 1;  // 97 characters
  expect_rule(p, "BEM_OVERRIDE_NAME");
}

TEST(V15Overrides, PropertyNameOnlyUnderscore) {
  auto p = with_v15();
  overrides(p)["colors"]["_"] = Json::array({0, 0, 0, 0});
  expect_rule(p, "BEM_OVERRIDE_NAME");
}

TEST(V15Overrides, PropertyNameRelaxedWhenValidationOff) {
  auto p = with_v15();
  overrides(p)["floats"]["Main Tex.Alpha"] = 1;
  expect_valid(p, "", /*skip=*/true);
  overrides(p)["floats"]["bad\tname"] = 1;
  expect_rule(p, "BEM_OVERRIDE_NAME", /*skip=*/true);
}

TEST(V15Overrides, LowercaseKeyword) {
  auto p = with_v15();
  overrides(p)["enable_keywords"].push_back("_emission");
  expect_rule(p, "BEM_OVERRIDE_KEYWORD");
  expect_valid(p, "", /*skip=*/true);
}

TEST(V15Overrides, OneCharacterKeyword) {
  auto p = with_v15();
  overrides(p)["disable_keywords"].push_back("A");
  expect_rule(p, "BEM_OVERRIDE_KEYWORD");
}

TEST(V15Overrides, KeywordNotAString) {
  auto p = with_v15();
  overrides(p)["disable_keywords"].push_back(5);
  expect_rule(p, "BEM_FIELD_TYPE");
}

TEST(V15Overrides, KeywordsNotAnArray) {
  auto p = with_v15();
  overrides(p)["enable_keywords"] = "_EMISSION";
  expect_rule(p, "BEM_FIELD_TYPE");
}

TEST(V15Overrides, KeywordEnabledAndDisabled) {  // Q19
  auto p = with_v15();
  overrides(p)["enable_keywords"].push_back("_EMISSION");
  expect_rule(p, "BEM_OVERRIDE_KEYWORD_CONFLICT");
}

TEST(V15Overrides, UnknownFieldIsAWarning) {
  auto p = with_v15();
  overrides(p)["float"] = Json{{"_A", 1}};
  expect_valid(p, "BEM_OVERRIDE_UNKNOWN_FIELD");
}

// ---- §12 root_offset ---------------------------------------------------

TEST(V15RootOffset, VersionTooLow) {
  auto p = with_morph(3);
  p.manifest["required_capabilities"].push_back("root-offset-v1");
  p.manifest["root_offset"] = Json{{"path", "Bip001"}, {"translation", {0, 0.04, 0}}};
  expect_rule(p, "BEM_VERSION_TOO_LOW");
}

TEST(V15RootOffset, NotAnObject) {
  auto p = with_v15();
  root(p) = "Bip001";
  expect_rule(p, "BEM_FIELD_TYPE");
}

TEST(V15RootOffset, TooLong) {
  auto p = with_v15();
  root(p)["translation"] = Json::array({0.0, 0.2001, 0.0});
  expect_rule(p, "BEM_ROOT_OFFSET_RANGE");
}

TEST(V15RootOffset, RelaxedAndClampedWhenValidationOff) {
  auto p = with_v15();
  root(p)["translation"] = Json::array({0.5, 0.5, 0.0});  // 0.71 m ≤ 1.0
  auto o = run_passes(p, true);
  EXPECT_FALSE(o.errors() || o.has("BEM_ROOT_OFFSET_CLAMPED")) << o.report.to_text("pkg");
  root(p)["translation"] = Json::array({0.0, -1.5, 0.0});
  expect_valid(p, "BEM_ROOT_OFFSET_CLAMPED", /*skip=*/true);
}

TEST(V15RootOffset, TranslationWrongSize) {
  auto p = with_v15();
  root(p)["translation"] = Json::array({0.0, 0.1});
  expect_rule(p, "BEM_ARRAY_SIZE");
}

TEST(V15RootOffset, TranslationNotNumbers) {
  auto p = with_v15();
  root(p)["translation"] = Json::array({0.0, "0.1", 0.0});
  expect_rule(p, "BEM_FIELD_TYPE");
}

TEST(V15RootOffset, MissingTranslation) {
  auto p = with_v15();
  root(p).erase("translation");
  expect_rule(p, "BEM_FIELD_MISSING");
}

TEST(V15RootOffset, MissingPath) {
  auto p = with_v15();
  root(p).erase("path");
  expect_rule(p, "BEM_FIELD_MISSING");
}

TEST(V15RootOffset, EmptyPath) {
  auto p = with_v15();
  root(p)["path"] = "";
  expect_rule(p, "BEM_ROOT_OFFSET_PATH");
}

TEST(V15RootOffset, PathTooLong) {
  auto p = with_v15();
  root(p)["path"] = repeat('a', 257);
  expect_rule(p, "BEM_STRING_LENGTH");
}

TEST(V15RootOffset, PathWithDotDot) {
  auto p = with_v15();
  root(p)["path"] = "Bip001/../Root";
  expect_rule(p, "BEM_ROOT_OFFSET_PATH");
}

TEST(V15RootOffset, PathWithDoubleSlash) {
  auto p = with_v15();
  root(p)["path"] = "Root//Bip001";
  expect_rule(p, "BEM_ROOT_OFFSET_PATH");
}

TEST(V15RootOffset, PathWithBackslash) {
  auto p = with_v15();
  root(p)["path"] = "Root\\Bip001";
  expect_rule(p, "BEM_ROOT_OFFSET_PATH");
}

TEST(V15RootOffset, PathAllowedCharacters) {
  auto p = with_v15();
  root(p)["path"] = "Root Node/Bip001-Pelvis_2";
  expect_valid(p);
}

// ---- §13 drivers -------------------------------------------------------

TEST(V15Drivers, VersionTooLow) {
  auto p = with_morph(4);
  p.manifest["required_capabilities"].push_back("dynamic-drivers-v1");
  p.manifest["drivers"] = Json::array(
      {Json{{"id", "d"},
            {"bindings", Json::array({Json{{"type", "morph_parameter"}, {"target", "body"}}})}}});
  expect_rule(p, "BEM_VERSION_TOO_LOW");
}

TEST(V15Drivers, NotAnArray) {
  auto p = with_v15();
  p.manifest["drivers"] = Json::object();
  expect_rule(p, "BEM_FIELD_TYPE");
}

TEST(V15Drivers, SeventeenDrivers) {  // Q16
  auto p = with_v15();
  for (int i = 2; i < 17; ++i) {
    Json d = driver(p, 1);
    d["id"] = "d" + std::to_string(i);
    p.manifest["drivers"].push_back(d);
  }
  expect_rule(p, "BEM_DRIVER_QUOTA");
}

TEST(V15Drivers, DuplicateId) {
  auto p = with_v15();
  driver(p, 1)["id"] = "driver_thrust";
  expect_rule(p, "BEM_DRIVER_DUPLICATE_ID");
}

TEST(V15Drivers, MissingId) {
  auto p = with_v15();
  driver(p).erase("id");
  expect_rule(p, "BEM_FIELD_MISSING");
}

TEST(V15Drivers, IdNotStable) {
  auto p = with_v15();
  driver(p)["id"] = "thrust:F1";
  expect_rule(p, "BEM_STABLE_ID");
}

TEST(V15Drivers, NameTooLong) {
  auto p = with_v15();
  driver(p)["name"] = repeat('n', 257);
  expect_rule(p, "BEM_STRING_LENGTH");
}

TEST(V15Drivers, UnknownWaveformIsAWarning) {
  auto p = with_v15();
  driver(p)["waveform"] = "square";
  expect_valid(p, "BEM_DRIVER_WAVEFORM");
}

TEST(V15Drivers, WaveformNotAString) {
  auto p = with_v15();
  driver(p)["waveform"] = 1;
  expect_rule(p, "BEM_FIELD_TYPE");
}

TEST(V15Drivers, UnknownPlaybackIsAWarning) {
  auto p = with_v15();
  driver(p)["playback"] = "bounce";
  expect_valid(p, "BEM_DRIVER_PLAYBACK");
}

TEST(V15Drivers, EveryWaveformAndPlayback) {
  auto p = with_v15();
  for (const char* w : {"pingpong", "sine", "jitter", "sawtooth", "step"})
    for (const char* pb : {"loop", "once"}) {
      driver(p)["waveform"] = w;
      driver(p)["playback"] = pb;
      auto o = run_passes(p);
      EXPECT_EQ(o.report.num_errors() + o.report.num_warnings(), 0u) << w << " " << pb;
    }
}

TEST(V15Drivers, DefaultPlayingNotBoolean) {
  auto p = with_v15();
  driver(p)["default_playing"] = "false";
  expect_rule(p, "BEM_FIELD_TYPE");
}

TEST(V15Drivers, BaseFrequencyTooHigh) {
  auto p = with_v15();
  driver(p)["base_frequency"] = 10.5;
  expect_rule(p, "BEM_FIELD_RANGE");
}

TEST(V15Drivers, BaseFrequencyNegative) {
  auto p = with_v15();
  driver(p)["base_frequency"] = -0.1;
  expect_rule(p, "BEM_FIELD_RANGE");
}

TEST(V15Drivers, SpeedMultiplierTooHigh) {
  auto p = with_v15();
  driver(p)["speed_multiplier"] = 11;
  expect_rule(p, "BEM_FIELD_RANGE");
}

TEST(V15Drivers, NoBindingsAndNoSound) {
  auto p = with_v15();
  driver(p, 1).erase("bindings");
  expect_rule(p, "BEM_FIELD_MISSING");
}

TEST(V15Drivers, EmptyBindingsWithoutSound) {
  auto p = with_v15();
  driver(p, 1)["bindings"] = Json::array();
  expect_rule(p, "BEM_ARRAY_SIZE");
}

TEST(V15Drivers, ThirtyThreeBindings) {
  auto p = with_v15();
  Json b = Json::array();
  for (int i = 0; i < 33; ++i) b.push_back(binding(p, 0, 0));
  driver(p)["bindings"] = b;
  expect_rule(p, "BEM_ARRAY_SIZE");
}

TEST(V15Drivers, BindingNotAnObject) {
  auto p = with_v15();
  driver(p)["bindings"][0] = "body";
  expect_rule(p, "BEM_FIELD_TYPE");
}

TEST(V15Drivers, BindingWithoutType) {
  auto p = with_v15();
  binding(p, 0, 0).erase("type");
  expect_rule(p, "BEM_FIELD_MISSING");
}

TEST(V15Drivers, UnknownBindingTypeIsAWarning) {
  auto p = with_v15();
  binding(p, 1, 0)["type"] = "material_texture";
  expect_valid(p, "BEM_DRIVER_BINDING_TYPE");
}

TEST(V15Drivers, MorphTargetUndeclared) {
  auto p = with_v15();
  binding(p, 0, 0)["target"] = "dildo_depth";
  expect_rule(p, "BEM_DRIVER_TARGET");
}

TEST(V15Drivers, MorphTargetMissing) {
  auto p = with_v15();
  binding(p, 0, 0).erase("target");
  expect_rule(p, "BEM_FIELD_MISSING");
}

TEST(V15Drivers, MorphRangeAboveOne) {
  auto p = with_v15();
  binding(p, 0, 0)["range"] = Json::array({0.0, 1.5});
  expect_rule(p, "BEM_DRIVER_RANGE");
}

TEST(V15Drivers, MorphRangeDecreasing) {
  auto p = with_v15();
  binding(p, 0, 0)["range"] = Json::array({0.8, 0.2});
  expect_rule(p, "BEM_DRIVER_RANGE");
}

TEST(V15Drivers, RangeFlatIsAWarning) {  // Q17
  auto p = with_v15();
  binding(p, 0, 0)["range"] = Json::array({0.5, 0.5});
  expect_valid(p, "BEM_DRIVER_RANGE_FLAT");
}

TEST(V15Drivers, RangeNotAPair) {
  auto p = with_v15();
  binding(p, 0, 0)["range"] = Json::array({0.0, 0.5, 1.0});
  expect_rule(p, "BEM_FIELD_TYPE");
}

TEST(V15Drivers, FloatRangeBeyond128) {
  auto p = with_v15();
  binding(p, 1, 0)["range"] = Json::array({-200, 0});
  expect_rule(p, "BEM_DRIVER_RANGE");
}

TEST(V15Drivers, FloatRangeWideButAllowed) {
  auto p = with_v15();
  binding(p, 1, 0)["range"] = Json::array({-128, 128});
  expect_valid(p);
}

TEST(V15Drivers, ComponentOutOfRange) {
  auto p = with_v15();
  binding(p, 1, 0)["component"] = 2;
  expect_rule(p, "BEM_DRIVER_COMPONENT");
}

TEST(V15Drivers, MaterialSlotOutOfRangeIsAWarning) {
  auto p = with_v15();
  binding(p, 1, 0)["material_slot"] = 3;
  expect_valid(p, "BEM_DRIVER_MATERIAL_SLOT");
}

TEST(V15Drivers, ComponentNotAnInteger) {
  auto p = with_v15();
  binding(p, 1, 0)["component"] = "0";
  expect_rule(p, "BEM_FIELD_TYPE");
}

TEST(V15Drivers, FloatPropertyName) {
  auto p = with_v15();
  binding(p, 1, 0)["property"] = "EmissionWeight";
  expect_rule(p, "BEM_DRIVER_PROPERTY");
}

TEST(V15Drivers, FloatPropertyMissing) {
  auto p = with_v15();
  binding(p, 1, 0).erase("property");
  expect_rule(p, "BEM_FIELD_MISSING");
}

TEST(V15Drivers, ColorPropertyName) {
  auto p = with_v15();
  binding(p, 1, 1)["property"] = "_Emission-Color";
  expect_rule(p, "BEM_DRIVER_PROPERTY");
}

TEST(V15Drivers, ColorChannelAbove8) {
  auto p = with_v15();
  binding(p, 1, 1)["colors"][1][0] = 9;
  expect_rule(p, "BEM_DRIVER_COLOR");
}

TEST(V15Drivers, ColorsMissing) {
  auto p = with_v15();
  binding(p, 1, 1).erase("colors");
  expect_rule(p, "BEM_FIELD_MISSING");
}

TEST(V15Drivers, ColorsNotAPair) {
  auto p = with_v15();
  binding(p, 1, 1)["colors"] = Json::array({Json::array({0, 0, 0, 1})});
  expect_rule(p, "BEM_FIELD_TYPE");
}

TEST(V15Drivers, ColorWithThreeChannels) {
  auto p = with_v15();
  binding(p, 1, 1)["colors"][0] = Json::array({0, 0, 0});
  expect_rule(p, "BEM_FIELD_TYPE");
}

TEST(V15Drivers, KeywordLowercase) {
  auto p = with_v15();
  binding(p, 1, 2)["keyword"] = "_emission";
  expect_rule(p, "BEM_DRIVER_KEYWORD");
}

TEST(V15Drivers, KeywordMissing) {
  auto p = with_v15();
  binding(p, 1, 2).erase("keyword");
  expect_rule(p, "BEM_FIELD_MISSING");
}

TEST(V15Drivers, ThresholdAboveOne) {
  auto p = with_v15();
  binding(p, 1, 2)["threshold"] = 1.5;
  expect_rule(p, "BEM_FIELD_RANGE");
}

TEST(V15Drivers, SoundNotAnObject) {
  auto p = with_v15();
  driver(p)["sound"] = kSoundPayload;
  expect_rule(p, "BEM_FIELD_TYPE");
}

TEST(V15Drivers, SoundWithoutPayload) {
  auto p = with_v15();
  driver(p)["sound"].erase("payload");
  expect_rule(p, "BEM_FIELD_MISSING");
}

TEST(V15Drivers, SoundPayloadMissing) {
  auto p = with_v15();
  driver(p)["sound"]["payload"] = 99;
  expect_rule(p, "BEM_PAYLOAD_ID");
}

TEST(V15Drivers, SoundPayloadTooSmall) {
  auto p = with_v15();
  p.payloads[kSoundPayload] = ByteVec(15, 1);
  expect_rule(p, "BEM_PAYLOAD_SIZE");
}

TEST(V15Drivers, SoundGainTooHigh) {
  auto p = with_v15();
  driver(p)["sound"]["gain"] = 2.5;
  expect_rule(p, "BEM_FIELD_RANGE");
}

TEST(V15Drivers, SoundOffsetTooLate) {
  auto p = with_v15();
  driver(p)["sound"]["offset_seconds"] = 61;
  expect_rule(p, "BEM_FIELD_RANGE");
}

TEST(V15Drivers, SoundLoopNotBoolean) {
  auto p = with_v15();
  driver(p)["sound"]["loop"] = 1;
  expect_rule(p, "BEM_FIELD_TYPE");
}

TEST(V15Drivers, SoundUnknownFormatIsAWarning) {  // Q17
  auto p = with_v15();
  driver(p)["sound"]["format"] = "opus";
  expect_valid(p, "BEM_DRIVER_SOUND_FORMAT");
}

TEST(V15Drivers, NineSoundsIsAWarning) {
  auto p = with_v15();
  for (int i = 1; i < 9; ++i) {
    Json d = driver(p, 0);
    d["id"] = "s" + std::to_string(i);
    p.manifest["drivers"].push_back(d);
  }
  expect_valid(p, "BEM_DRIVER_SOUND_QUOTA");
}

// ---- capabilities (reported by the final pass) -------------------------

TEST(V15Capabilities, EachFeatureNeedsItsCapability) {
  for (const char* cap : {"material-overrides-v1", "root-offset-v1", "dynamic-drivers-v1"}) {
    SCOPED_TRACE(cap);
    auto p = with_v15();
    auto& caps = p.manifest["required_capabilities"];
    caps.erase(std::find(caps.begin(), caps.end(), cap));
    auto r = validate(p);
    EXPECT_TRUE(r.report.has_code("BEM_CAPABILITY_MISSING")) << r.report.to_text("pkg");
  }
}

TEST(V15Capabilities, ZipWithoutVersionHintInfers15) {
  auto p = with_v15();
  auto bytes = p.zip(true, /*with_format_version=*/false);
  auto r = bem::validate_package(bytes);
  EXPECT_TRUE(r.valid()) << r.report.to_text("pkg");
  EXPECT_EQ(r.summary.needed_minor, 5);
}

TEST(V15Capabilities, ZipHintTooLow) {
  auto p = with_v15();
  p.minor = 3;  // format_version "1.3"
  auto bytes = p.zip();
  auto r = bem::validate_package(bytes);
  EXPECT_TRUE(r.report.has_code("BEM_VERSION_TOO_LOW")) << r.report.to_text("pkg");
}
