// §5 appearances, §6 option groups / conditions / component rules / keep
// material overrides / selection constraints, §9 texture slots (check_options).
#include <gtest/gtest.h>

#include <string>

#include "charkit/bem/validate.h"
#include "charkit/core/json.h"
#include "package_builder.h"

using namespace charkit;
using core::Json;
using testkit::ByteVec;
using testkit::TestPackage;

namespace {

bem::ValidationResult validate_options(const TestPackage& p, bool zip = false) {
  auto bytes = zip ? p.zip() : p.binary();
  return bem::validate_package(bytes);
}

::testing::AssertionResult has_options_error(const TestPackage& p, const std::string& code) {
  for (bool zip : {false, true}) {
    auto r = validate_options(p, zip);
    if (!r.report.has_code(code) || r.valid())
      return ::testing::AssertionFailure()
             << (zip ? "zip: " : "binary: ") << "expected " << code << "\n"
             << r.report.to_text("pkg");
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult options_are_valid(const TestPackage& p) {
  for (bool zip : {false, true}) {
    auto r = validate_options(p, zip);
    if (!r.valid())
      return ::testing::AssertionFailure()
             << (zip ? "zip: " : "binary: ") << r.report.to_text("pkg");
  }
  return ::testing::AssertionSuccess();
}

Json eq(const std::string& g, const std::string& c) {
  return Json{{"eq", Json::array({g, c})}};
}

// A minimal 1×1 RGBA PNG.
ByteVec tiny_png() {
  const char* hex =
      "89504E470D0A1A0A0000000D49484452000000010000000108060000001F15C489"
      "0000000A49444154789C63000100000500010D0A2DB40000000049454E44AE426082";
  ByteVec out;
  for (const char* h = hex; h[0] && h[1]; h += 2)
    out.push_back(static_cast<std::uint8_t>(std::stoi(std::string(h, 2), nullptr, 16)));
  return out;
}

Json& appearance(TestPackage& p, std::size_t i = 0) {
  return p.manifest["appearances"][i];
}
Json& group(TestPackage& p, std::size_t i = 0) {
  return p.manifest["option_groups"][i];
}
Json& rule(TestPackage& p, std::size_t i) {
  return p.manifest["component_rules"][i];
}
Json& cand(TestPackage& p, std::size_t r, std::size_t c) {
  return p.manifest["component_rules"][r]["candidates"][c];
}

/// A second group "colour" {c0, c1} available when outfit == b.
void add_colour_group(TestPackage& p) {
  p.manifest["option_groups"].push_back(Json{
      {"id", "colour"},
      {"name", "Colour"},
      {"default", "c0"},
      {"available_when", eq("outfit", "b")},
      {"choices",
       Json::array({Json{{"id", "c0"}, {"name", "C0"}}, Json{{"id", "c1"}, {"name", "C1"}}})}});
}

/// Keep candidate of rule 0 with a valid material override (1.1+).
TestPackage with_keep_override(int minor) {
  auto p = testkit::make_valid_package(minor);
  p.manifest["required_capabilities"].push_back("keep-material-textures");
  cand(p, 0, 1)["material_overrides"] =
      Json::array({Json{{"material_slot", 0},
                        {"material_name", "M_actor_example_body_01"},
                        {"textures", Json::array({0})}}});
  return p;
}

/// A 1.2+ package with texture slot "dress_d" (texture 0 for outfit a, null for b).
TestPackage with_slot(int minor) {
  auto p = testkit::make_valid_package(minor);
  p.manifest["required_capabilities"].push_back("texture-slots");
  p.manifest["texture_slots"] = Json::array({Json{
      {"id", "dress_d"},
      {"candidates", Json::array({Json{{"when", eq("outfit", "a")}, {"texture", 0}},
                                  Json{{"when", eq("outfit", "b")}, {"texture", nullptr}}})}}});
  return p;
}

/// A group with n choices c0..c(n-1).
Json group_with_choices(const std::string& id, std::size_t n) {
  Json choices = Json::array();
  for (std::size_t i = 0; i < n; ++i)
    choices.push_back(Json{{"id", "c" + std::to_string(i)}, {"name", "C"}});
  return Json{{"id", id}, {"name", id}, {"default", "c0"}, {"choices", choices}};
}

class OptionsComposableMinors : public ::testing::TestWithParam<int> {};

}  // namespace

// ------------------------------------------------------------ §5 (1.0)
TEST(Appearances, SecondAppearanceAndPreviewAreValid) {
  auto p = testkit::make_valid_package(0);
  Json b = appearance(p);
  b["id"] = "outfit-b";
  b["description"] = "hidden hair";
  b["components"][1] = Json{{"target", 1}, {"operation", "hide"}};
  b["preview"] = 5;
  p.manifest["appearances"].push_back(b);
  p.payloads.push_back(tiny_png());
  EXPECT_TRUE(options_are_valid(p));
}

TEST(Appearances, Count) {
  auto p = testkit::make_valid_package(0);
  p.manifest["appearances"] = Json::array();
  EXPECT_TRUE(has_options_error(p, "BEM_ARRAY_SIZE"));
  p = testkit::make_valid_package(0);
  for (int i = 1; i < 65; ++i) {
    Json a = appearance(p);
    a["id"] = "look-" + std::to_string(i);
    p.manifest["appearances"].push_back(a);
  }
  EXPECT_TRUE(has_options_error(p, "BEM_ARRAY_SIZE"));
  p.manifest["appearances"].erase(64);
  EXPECT_TRUE(options_are_valid(p));
}

TEST(Appearances, IdsAndDefault) {
  auto p = testkit::make_valid_package(0);
  p.manifest["default_appearance_id"] = "outfit-z";
  EXPECT_TRUE(has_options_error(p, "BEM_DEFAULT_APPEARANCE"));
  p = testkit::make_valid_package(0);
  p.manifest["appearances"].push_back(appearance(p));
  EXPECT_TRUE(has_options_error(p, "BEM_DUPLICATE_ID"));
  p = testkit::make_valid_package(0);
  appearance(p)["id"] = "outfit a";
  EXPECT_TRUE(has_options_error(p, "BEM_STABLE_ID"));
  p = testkit::make_valid_package(0);
  p.manifest["default_appearance_id"] = 0;
  EXPECT_TRUE(has_options_error(p, "BEM_FIELD_TYPE"));
}

TEST(Appearances, EveryComponentExactlyOnce) {
  auto p = testkit::make_valid_package(0);
  appearance(p)["components"].erase(1);
  EXPECT_TRUE(has_options_error(p, "BEM_APPEARANCE_TARGET_MISSING"));
  p = testkit::make_valid_package(0);
  appearance(p)["components"][1]["target"] = 0;
  EXPECT_TRUE(has_options_error(p, "BEM_APPEARANCE_TARGET_DUPLICATE"));
  p = testkit::make_valid_package(0);
  appearance(p)["components"][1]["target"] = 2;
  EXPECT_TRUE(has_options_error(p, "BEM_COMPONENT_INDEX"));
  p = testkit::make_valid_package(0);
  appearance(p)["components"][1].erase("target");
  EXPECT_TRUE(has_options_error(p, "BEM_FIELD_MISSING"));
}

TEST(Appearances, Operations) {
  auto p = testkit::make_valid_package(0);
  appearance(p)["components"][1]["operation"] = "swap";
  EXPECT_TRUE(has_options_error(p, "BEM_OPERATION"));
  p = testkit::make_valid_package(0);
  appearance(p)["components"][0]["mesh"] = 1;
  EXPECT_TRUE(has_options_error(p, "BEM_MESH_INDEX"));
  p = testkit::make_valid_package(0);
  appearance(p)["components"][0].erase("mesh");
  EXPECT_TRUE(has_options_error(p, "BEM_FIELD_MISSING"));
  p = testkit::make_valid_package(0);
  appearance(p)["components"][1]["mesh"] = 0;  // Q9: mesh on keep
  EXPECT_TRUE(has_options_error(p, "BEM_OPERATION_MESH"));
  p = testkit::make_valid_package(0);
  appearance(p)["components"][1]["operation"] = "hide";
  EXPECT_TRUE(options_are_valid(p));
}

TEST(Appearances, Preview) {
  auto p = testkit::make_valid_package(0);
  appearance(p)["preview"] = 9;
  EXPECT_TRUE(validate_options(p).report.has_code("BEM_PAYLOAD_ID"));
  EXPECT_TRUE(validate_options(p, true).report.has_code("BEM_ZIP_MISSING_PAYLOAD"));
  EXPECT_FALSE(validate_options(p).valid());
  p = testkit::make_valid_package(0);
  appearance(p)["preview"] = 5;
  ByteVec big = tiny_png();
  big.resize((8u << 20) + 1, 0);
  p.payloads.push_back(big);
  auto r = validate_options(p);
  EXPECT_TRUE(r.report.has_code("BEM_PAYLOAD_SIZE")) << r.report.to_text("pkg");
  p = testkit::make_valid_package(0);
  appearance(p)["preview"] = "preview.png";
  EXPECT_TRUE(has_options_error(p, "BEM_FIELD_TYPE"));
}

TEST(Appearances, NameRequired) {
  auto p = testkit::make_valid_package(0);
  appearance(p).erase("name");
  EXPECT_TRUE(has_options_error(p, "BEM_FIELD_MISSING"));
}

// ------------------------------------------------------- §6 option groups
TEST_P(OptionsComposableMinors, SecondGroupWithAvailableWhenIsValid) {
  auto p = testkit::make_valid_package(GetParam());
  add_colour_group(p);
  cand(p, 1, 0)["when"] = Json{{"any", Json::array({eq("colour", "c0"), eq("colour", "c1"),
                                                    Json{{"not", eq("outfit", "b")}}})}};
  EXPECT_TRUE(options_are_valid(p));
}

TEST_P(OptionsComposableMinors, GroupFields) {
  auto p = testkit::make_valid_package(GetParam());
  group(p)["default"] = "c";
  EXPECT_TRUE(has_options_error(p, "BEM_GROUP_DEFAULT"));
  p = testkit::make_valid_package(GetParam());
  group(p).erase("name");
  EXPECT_TRUE(has_options_error(p, "BEM_FIELD_MISSING"));
  p = testkit::make_valid_package(GetParam());
  group(p)["choices"] = Json::array();
  EXPECT_TRUE(has_options_error(p, "BEM_ARRAY_SIZE"));
  p = testkit::make_valid_package(GetParam());
  group(p)["choices"][1]["id"] = "a";
  EXPECT_TRUE(has_options_error(p, "BEM_DUPLICATE_ID"));
  p = testkit::make_valid_package(GetParam());
  group(p)["choices"][1]["id"] = "b!";
  EXPECT_TRUE(has_options_error(p, "BEM_STABLE_ID"));
  p = testkit::make_valid_package(GetParam());
  group(p)["choices"][1].erase("name");
  EXPECT_TRUE(has_options_error(p, "BEM_FIELD_MISSING"));
  p = testkit::make_valid_package(GetParam());
  p.manifest["option_groups"].push_back(group(p));
  EXPECT_TRUE(has_options_error(p, "BEM_DUPLICATE_ID"));
  p = testkit::make_valid_package(GetParam());
  group(p)["id"] = "out fit";
  EXPECT_TRUE(has_options_error(p, "BEM_STABLE_ID"));
}

TEST_P(OptionsComposableMinors, AtMost64Groups) {
  auto p = testkit::make_valid_package(GetParam());
  for (int i = 1; i < 64; ++i)
    p.manifest["option_groups"].push_back(group_with_choices("g" + std::to_string(i), 2));
  EXPECT_TRUE(options_are_valid(p));
  p.manifest["option_groups"].push_back(group_with_choices("g64", 2));
  EXPECT_TRUE(has_options_error(p, "BEM_ARRAY_SIZE"));
}

TEST_P(OptionsComposableMinors, AvailableWhenOnlyEarlierGroups) {
  auto p = testkit::make_valid_package(GetParam());
  add_colour_group(p);
  group(p, 0)["available_when"] = eq("colour", "c1");
  EXPECT_TRUE(has_options_error(p, "BEM_CONDITION_GROUP_ORDER"));
  p = testkit::make_valid_package(GetParam());
  group(p, 0)["available_when"] = eq("outfit", "a");  // itself
  EXPECT_TRUE(has_options_error(p, "BEM_CONDITION_GROUP_ORDER"));
}

TEST_P(OptionsComposableMinors, ChoicesPerGroup) {
  auto p = testkit::make_valid_package(GetParam());
  p.manifest["option_groups"].push_back(group_with_choices("many", 17));
  if (GetParam() == 1) {
    EXPECT_TRUE(has_options_error(p, "BEM_VERSION_TOO_LOW"));
  } else {
    EXPECT_TRUE(options_are_valid(p));
  }
  p = testkit::make_valid_package(GetParam());
  p.manifest["option_groups"].push_back(group_with_choices("many", 16));
  EXPECT_TRUE(options_are_valid(p));
  p = testkit::make_valid_package(GetParam());
  p.manifest["option_groups"].push_back(group_with_choices("many", 64));
  if (GetParam() >= 2) {
    EXPECT_TRUE(options_are_valid(p));
  }
  p.manifest["option_groups"].back() = group_with_choices("many", 65);
  EXPECT_TRUE(has_options_error(p, "BEM_ARRAY_SIZE"));
}

TEST_P(OptionsComposableMinors, EmptyGroupListNeedsOnePointThree) {
  auto p = testkit::make_valid_package(GetParam());
  p.manifest["option_groups"] = Json::array();
  rule(p, 0)["candidates"] =
      Json::array({Json{{"when", true}, {"operation", "replace"}, {"mesh", 0}}});
  if (GetParam() < 3) {
    EXPECT_TRUE(has_options_error(p, "BEM_VERSION_TOO_LOW"));
  } else {
    EXPECT_TRUE(options_are_valid(p));
  }
}

// ------------------------------------------------------------ conditions
TEST_P(OptionsComposableMinors, ConditionReferences) {
  auto p = testkit::make_valid_package(GetParam());
  cand(p, 0, 0)["when"] = eq("hair", "a");
  EXPECT_TRUE(has_options_error(p, "BEM_CONDITION_UNKNOWN_GROUP"));
  p = testkit::make_valid_package(GetParam());
  cand(p, 0, 0)["when"] = eq("outfit", "z");
  EXPECT_TRUE(has_options_error(p, "BEM_CONDITION_UNKNOWN_CHOICE"));
}

TEST_P(OptionsComposableMinors, ConditionSyntax) {
  const Json bad[] = {
      "true",
      1,
      nullptr,
      Json::object(),
      Json{{"eq", Json::array({"outfit", "a"})}, {"not", false}},
      Json{{"eq", Json::array({"outfit"})}},
      Json{{"eq", Json::array({"outfit", "a", "b"})}},
      Json{{"eq", "outfit:a"}},
      Json{{"xor", Json::array({true, false})}},
      Json::array({true}),
  };
  for (const auto& c : bad) {
    auto p = testkit::make_valid_package(GetParam());
    cand(p, 0, 0)["when"] = c;
    EXPECT_TRUE(has_options_error(p, "BEM_CONDITION_SYNTAX")) << c.dump();
  }
}

TEST_P(OptionsComposableMinors, ConditionOperands) {
  auto p = testkit::make_valid_package(GetParam());
  cand(p, 0, 0)["when"] = Json{{"all", Json::array()}};
  EXPECT_TRUE(has_options_error(p, "BEM_CONDITION_OPERANDS"));
  Json many = Json::array();
  for (int i = 0; i < 32; ++i) many.push_back(eq("outfit", "a"));
  cand(p, 0, 0)["when"] = Json{{"all", many}};
  EXPECT_TRUE(options_are_valid(p));
  many.push_back(eq("outfit", "a"));
  cand(p, 0, 0)["when"] = Json{{"all", many}};
  EXPECT_TRUE(has_options_error(p, "BEM_CONDITION_OPERANDS"));
  cand(p, 0, 0)["when"] = Json{{"any", eq("outfit", "a")}};
  EXPECT_TRUE(has_options_error(p, "BEM_CONDITION_OPERANDS"));
}

TEST_P(OptionsComposableMinors, ConditionDepth) {
  // Q2: a leaf is depth 1, so 15 "not" levels above a leaf are the maximum.
  auto nest = [](int levels) {
    Json c = eq("outfit", "a");
    for (int i = 0; i < levels; ++i) c = Json{{"not", Json{{"not", c}}}};
    return c;
  };
  Json ok = Json{{"not", nest(7)}};  // 15 operators + leaf = 16
  auto p = testkit::make_valid_package(GetParam());
  cand(p, 0, 0)["when"] = Json{{"not", ok}};  // 17
  EXPECT_TRUE(has_options_error(p, "BEM_CONDITION_DEPTH"));
  cand(p, 0, 0)["when"] = nest(8);  // 16 operators + leaf = 17
  EXPECT_TRUE(has_options_error(p, "BEM_CONDITION_DEPTH"));
  cand(p, 0, 0)["when"] = Json{{"not", Json{{"not", nest(7)}}}};  // 16 ops + leaf = 17
  EXPECT_TRUE(has_options_error(p, "BEM_CONDITION_DEPTH"));
  // 15 operators + leaf = 16: the deepest allowed. An odd number of "not"s
  // around eq(outfit, b) means outfit == a, so the candidates still cover
  // every combination exactly once (the selection proof checks that).
  Json deepest = Json{{"not", eq("outfit", "b")}};
  for (int i = 0; i < 7; ++i) deepest = Json{{"not", Json{{"not", deepest}}}};
  cand(p, 0, 0)["when"] = deepest;
  EXPECT_TRUE(options_are_valid(p));
}

// ------------------------------------------------------ component rules
TEST_P(OptionsComposableMinors, RulesCoverComponentsInOrder) {
  auto p = testkit::make_valid_package(GetParam());
  p.manifest["component_rules"].erase(1);
  EXPECT_TRUE(has_options_error(p, "BEM_COMPONENT_RULES_COUNT"));
  p = testkit::make_valid_package(GetParam());
  std::swap(rule(p, 0), rule(p, 1));
  EXPECT_TRUE(has_options_error(p, "BEM_COMPONENT_RULE_TARGET"));
  p = testkit::make_valid_package(GetParam());
  rule(p, 1)["candidates"] = Json::array();
  EXPECT_TRUE(has_options_error(p, "BEM_ARRAY_SIZE"));
  p = testkit::make_valid_package(GetParam());
  p.manifest["component_rules"].push_back(rule(p, 1));
  EXPECT_TRUE(has_options_error(p, "BEM_COMPONENT_RULES_COUNT"));
}

TEST_P(OptionsComposableMinors, CandidateFields) {
  auto p = testkit::make_valid_package(GetParam());
  cand(p, 1, 0).erase("when");  // Q10: when is required
  EXPECT_TRUE(has_options_error(p, "BEM_FIELD_MISSING"));
  p = testkit::make_valid_package(GetParam());
  cand(p, 1, 0)["operation"] = "remove";
  EXPECT_TRUE(has_options_error(p, "BEM_OPERATION"));
  p = testkit::make_valid_package(GetParam());
  cand(p, 0, 0)["mesh"] = 3;
  EXPECT_TRUE(has_options_error(p, "BEM_MESH_INDEX"));
  p = testkit::make_valid_package(GetParam());
  cand(p, 0, 0).erase("mesh");
  EXPECT_TRUE(has_options_error(p, "BEM_FIELD_MISSING"));
  p = testkit::make_valid_package(GetParam());
  cand(p, 1, 0)["mesh"] = 0;  // Q9: mesh on keep
  EXPECT_TRUE(has_options_error(p, "BEM_OPERATION_MESH"));
  p = testkit::make_valid_package(GetParam());
  cand(p, 1, 0)["operation"] = "hide";
  EXPECT_TRUE(options_are_valid(p));
}

TEST_P(OptionsComposableMinors, KeepMaterialOverridesValid) {
  EXPECT_TRUE(options_are_valid(with_keep_override(GetParam())));
}

TEST_P(OptionsComposableMinors, KeepMaterialOverrideRules) {
  auto p = with_keep_override(GetParam());
  p.manifest["required_capabilities"].erase(p.manifest["required_capabilities"].size() - 1);
  EXPECT_TRUE(has_options_error(p, "BEM_CAPABILITY_MISSING"));
  p = with_keep_override(GetParam());
  cand(p, 0, 1)["material_overrides"][0]["material_slot"] = 1;
  EXPECT_TRUE(has_options_error(p, "BEM_MATERIAL_SLOT"));
  p = with_keep_override(GetParam());
  cand(p, 0, 1)["material_overrides"][0]["material_name"] = "M_other";
  EXPECT_TRUE(has_options_error(p, "BEM_MATERIAL_NAME"));
  p = with_keep_override(GetParam());
  cand(p, 0, 1)["material_overrides"].push_back(cand(p, 0, 1)["material_overrides"][0]);
  EXPECT_TRUE(has_options_error(p, "BEM_MATERIAL_SLOT_DUPLICATE"));
  p = with_keep_override(GetParam());
  cand(p, 0, 1)["material_overrides"][0]["textures"] = Json::array();
  EXPECT_TRUE(has_options_error(p, "BEM_ARRAY_SIZE"));
  p = with_keep_override(GetParam());
  cand(p, 0, 1)["material_overrides"] = Json::array();
  EXPECT_TRUE(has_options_error(p, "BEM_ARRAY_SIZE"));
  p = with_keep_override(GetParam());
  cand(p, 0, 1)["material_overrides"][0].erase("material_name");
  EXPECT_TRUE(has_options_error(p, "BEM_FIELD_MISSING"));
  // Only keep candidates may carry overrides.
  p = with_keep_override(GetParam());
  cand(p, 0, 0)["material_overrides"] = cand(p, 0, 1)["material_overrides"];
  EXPECT_TRUE(has_options_error(p, "BEM_MATERIAL_OVERRIDES_OPERATION"));
  p = with_keep_override(GetParam());
  cand(p, 0, 1)["operation"] = "hide";
  EXPECT_TRUE(has_options_error(p, "BEM_MATERIAL_OVERRIDES_OPERATION"));
}

TEST(Options, KeepMaterialOverridesNeedOnePointOne) {
  auto p = with_keep_override(1);
  p.minor = 0;
  EXPECT_TRUE(has_options_error(p, "BEM_VERSION_TOO_LOW"));
}

// ------------------------------------------------- selection constraints
TEST_P(OptionsComposableMinors, SelectionConstraints) {
  auto p = testkit::make_valid_package(GetParam());
  p.manifest["selection_constraints"] =
      Json::array({Json{{"any", Json::array({eq("outfit", "a"), eq("outfit", "b")})}}, true});
  EXPECT_TRUE(options_are_valid(p));
  p.manifest["selection_constraints"].push_back(Json{{"eq", "outfit"}});
  EXPECT_TRUE(has_options_error(p, "BEM_CONDITION_SYNTAX"));
  p = testkit::make_valid_package(GetParam());
  p.manifest["selection_constraints"] = Json{{"eq", Json::array({"outfit", "a"})}};
  EXPECT_TRUE(has_options_error(p, "BEM_FIELD_TYPE"));
}

TEST_P(OptionsComposableMinors, DefaultSelectionMustSatisfyConstraints) {
  auto p = testkit::make_valid_package(GetParam());
  p.manifest["selection_constraints"] = Json::array({Json{{"not", eq("outfit", "a")}}});
  EXPECT_TRUE(has_options_error(p, "BEM_DEFAULT_SELECTION_INVALID"));
  // An unavailable group has no value: eq on it is false.
  p = testkit::make_valid_package(GetParam());
  add_colour_group(p);
  p.manifest["selection_constraints"] = Json::array({eq("colour", "c0")});
  EXPECT_TRUE(has_options_error(p, "BEM_DEFAULT_SELECTION_INVALID"));
  p.manifest["selection_constraints"] = Json::array({Json{{"not", eq("colour", "c0")}}});
  EXPECT_TRUE(options_are_valid(p));
}

INSTANTIATE_TEST_SUITE_P(Minors, OptionsComposableMinors, ::testing::Range(1, 6));

// ---------------------------------------------------- §9 texture slots
TEST(TextureSlots, ValidFromOnePointTwo) {
  for (int minor = 2; minor <= 5; ++minor)
    EXPECT_TRUE(options_are_valid(with_slot(minor))) << minor;
}

TEST(TextureSlots, NeedOnePointTwo) {
  EXPECT_TRUE(has_options_error(with_slot(1), "BEM_VERSION_TOO_LOW"));
}

TEST(TextureSlots, NeedCapability) {
  auto p = with_slot(2);
  p.manifest["required_capabilities"].erase(p.manifest["required_capabilities"].size() - 1);
  EXPECT_TRUE(has_options_error(p, "BEM_CAPABILITY_MISSING"));
}

TEST(TextureSlots, UsedFromKeepOverride) {
  auto p = with_slot(2);
  p.manifest["required_capabilities"].push_back("keep-material-textures");
  cand(p, 0, 1)["material_overrides"] =
      Json::array({Json{{"material_slot", 0},
                        {"material_name", "M_actor_example_body_01"},
                        {"textures", Json::array({Json{{"slot", "dress_d"}}})}}});
  EXPECT_TRUE(options_are_valid(p));
}

TEST(TextureSlots, Rules) {
  auto p = with_slot(2);
  p.manifest["texture_slots"].push_back(p.manifest["texture_slots"][0]);
  EXPECT_TRUE(has_options_error(p, "BEM_DUPLICATE_ID"));
  p = with_slot(2);
  p.manifest["texture_slots"][0]["id"] = "dress d";
  EXPECT_TRUE(has_options_error(p, "BEM_STABLE_ID"));
  p = with_slot(2);
  p.manifest["texture_slots"][0]["candidates"] = Json::array();
  EXPECT_TRUE(has_options_error(p, "BEM_ARRAY_SIZE"));
  p = with_slot(2);
  p.manifest["texture_slots"][0]["candidates"][0]["texture"] = 4;
  EXPECT_TRUE(has_options_error(p, "BEM_TEXTURE_INDEX"));
  p = with_slot(2);
  p.manifest["texture_slots"][0]["candidates"][0]["texture"] = "0";
  EXPECT_TRUE(has_options_error(p, "BEM_FIELD_TYPE"));
  p = with_slot(2);
  p.manifest["texture_slots"][0]["candidates"][0].erase("texture");
  EXPECT_TRUE(has_options_error(p, "BEM_FIELD_MISSING"));
  p = with_slot(2);
  p.manifest["texture_slots"][0]["candidates"][0].erase("when");
  EXPECT_TRUE(has_options_error(p, "BEM_FIELD_MISSING"));
  p = with_slot(2);
  p.manifest["texture_slots"][0]["candidates"][1]["when"] = eq("outfit", "c");
  EXPECT_TRUE(has_options_error(p, "BEM_CONDITION_UNKNOWN_CHOICE"));
  p = with_slot(2);
  p.manifest["texture_slots"] = Json::object();
  EXPECT_TRUE(has_options_error(p, "BEM_FIELD_TYPE"));
}

TEST(TextureSlots, SameOriginalTexture) {
  auto p = with_slot(2);
  Json t = p.manifest["textures"][0];
  t["original_name"] = "T_actor_example_body_01_n";
  t["srgb"] = false;
  p.manifest["textures"].push_back(t);
  p.manifest["texture_slots"][0]["candidates"][1]["texture"] = 1;
  EXPECT_TRUE(has_options_error(p, "BEM_TEXTURE_SLOT_ORIGINAL"));
  p.manifest["textures"][1]["original_name"] = "T_actor_example_body_01_d";
  EXPECT_TRUE(options_are_valid(p));
}
