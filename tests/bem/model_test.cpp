// build_model / load_package: the typed view of a manifest.
#include <gtest/gtest.h>

#include "charkit/bem/load.h"
#include "charkit/bem/model.h"
#include "charkit/core/json.h"
#include "package_builder.h"

using namespace charkit;
using bem::Condition;
using core::Json;

namespace {

bem::LoadedPackage load(const testkit::TestPackage& p) {
  // The bytes must outlive the package views: keep them in a static list.
  static std::vector<std::unique_ptr<testkit::ByteVec>> keep;
  keep.push_back(std::make_unique<testkit::ByteVec>(p.binary()));
  return bem::load_package(*keep.back());
}

}  // namespace

TEST(Model, OneOneShape) {
  auto p = testkit::make_valid_package(1);
  auto& groups = p.manifest["option_groups"];
  groups.push_back(Json{{"id", "colour"},
                        {"name", "Colour"},
                        {"default", "red"},
                        {"available_when", Json{{"eq", Json::array({"outfit", "b"})}}},
                        {"choices", Json::array({Json{{"id", "blue"}, {"name", "Blue"}},
                                                 Json{{"id", "red"}, {"name", "Red"}}})}});
  auto loaded = load(p);
  ASSERT_TRUE(loaded.ok()) << loaded.error;
  const bem::Model& m = *loaded.model;
  EXPECT_EQ(m.minor, 1);
  EXPECT_FALSE(m.appearance_structure);
  ASSERT_EQ(m.groups.size(), 2u);
  EXPECT_EQ(m.groups[1].id, "colour");
  EXPECT_EQ(m.groups[1].default_choice, 1u);  // "red" is the second choice
  ASSERT_TRUE(m.groups[1].available_when);
  EXPECT_EQ(m.groups[1].available_when->op, Condition::Op::kEq);
  EXPECT_EQ(m.groups[1].available_when->group, 0u);
  EXPECT_EQ(m.groups[1].available_when->choice, 1u);  // outfit "b"
  ASSERT_EQ(m.components.size(), 2u);
  ASSERT_EQ(m.components[0].candidates.size(), 2u);
  EXPECT_EQ(m.components[0].candidates[0].op, bem::Operation::kReplace);
  EXPECT_EQ(m.components[0].candidates[0].mesh, 0u);
  EXPECT_EQ(m.components[0].candidates[0].pointer, "/component_rules/0/candidates/0");
  EXPECT_EQ(m.components[0].candidates[1].op, bem::Operation::kKeep);
  ASSERT_EQ(m.meshes.size(), 1u);
  ASSERT_EQ(m.meshes[0].draws.size(), 1u);
  EXPECT_EQ(m.meshes[0].draws[0].indices, 3u);
  EXPECT_EQ(m.meshes[0].draws[0].count, 3u);
  ASSERT_EQ(m.meshes[0].draws[0].textures.size(), 1u);
  EXPECT_FALSE(m.meshes[0].draws[0].textures[0].is_slot);
  EXPECT_EQ(m.payload_sizes.size(), p.payloads.size());
  for (std::size_t i = 0; i < p.payloads.size(); ++i)
    EXPECT_EQ(m.payload_sizes[i], p.payloads[i].size());
}

TEST(Model, AppearancesBecomeOneGroup) {
  auto p = testkit::make_valid_package(0);
  Json second = p.manifest["appearances"][0];
  second["id"] = "outfit-b";
  second["components"][0] = Json{{"target", 0}, {"operation", "hide"}};
  p.manifest["appearances"].push_back(second);
  p.manifest["default_appearance_id"] = "outfit-b";
  auto loaded = load(p);
  ASSERT_TRUE(loaded.ok()) << loaded.error;
  const bem::Model& m = *loaded.model;
  EXPECT_TRUE(m.appearance_structure);
  ASSERT_EQ(m.groups.size(), 1u);
  EXPECT_EQ(m.groups[0].choices, (std::vector<std::string>{"outfit-a", "outfit-b"}));
  EXPECT_EQ(m.groups[0].default_choice, 1u);
  // Component 0: replace in outfit-a, hide in outfit-b.
  ASSERT_EQ(m.components[0].candidates.size(), 2u);
  EXPECT_EQ(m.components[0].candidates[1].op, bem::Operation::kHide);
  bem::EffectiveValues a{0u}, b{1u};
  EXPECT_TRUE(bem::evaluate(m.components[0].candidates[0].when, a));
  EXPECT_FALSE(bem::evaluate(m.components[0].candidates[0].when, b));
  EXPECT_TRUE(bem::evaluate(m.components[0].candidates[1].when, b));
  // 1.0 draws index into the mesh-level payload and are always selected.
  EXPECT_EQ(m.meshes[0].draws[0].indices, 3u);
  EXPECT_EQ(m.meshes[0].draws[0].when.op, Condition::Op::kTrue);
}

TEST(Model, ExplicitTargets) {
  auto loaded = load(testkit::make_valid_package_v14());
  ASSERT_TRUE(loaded.ok()) << loaded.error;
  ASSERT_EQ(loaded.model->resources.size(), 1u);
  EXPECT_EQ(loaded.model->resources[0].platforms,
            (std::vector<std::string>{"windows-x64", "android-arm64"}));
  EXPECT_EQ(loaded.model->components[0].resource, "world");
  EXPECT_EQ(loaded.model->meshes[0].renderer_kind, "skinned");
}

TEST(Model, EvaluateConditions) {
  Condition any;
  any.op = Condition::Op::kAny;
  any.operands = {Condition::eq(0, 1), Condition::eq(1, 0)};
  Condition no;
  no.op = Condition::Op::kNot;
  no.operands = {any};
  // Group 1 unavailable: eq on it is false (§6).
  EXPECT_FALSE(bem::evaluate(any, bem::EffectiveValues{0u, std::nullopt}));
  EXPECT_TRUE(bem::evaluate(no, bem::EffectiveValues{0u, std::nullopt}));
  EXPECT_TRUE(bem::evaluate(any, bem::EffectiveValues{0u, 0u}));
  EXPECT_TRUE(bem::evaluate(any, bem::EffectiveValues{1u, std::nullopt}));
}

TEST(Model, InvalidPackageIsNotLoaded) {
  auto p = testkit::make_valid_package(1);
  p.manifest["component_rules"][0]["candidates"][0]["mesh"] = 7;
  auto loaded = load(p);
  EXPECT_FALSE(loaded.ok());
  EXPECT_NE(loaded.error.find("BEM_MESH_INDEX"), std::string::npos) << loaded.error;
}

TEST(Model, BuildModelReportsThePointerOfABrokenField) {
  // build_model on a manifest that skipped validation: an error, not a crash.
  auto p = testkit::make_valid_package(1);
  auto bytes = p.binary();
  core::Report report(10);
  auto pkg = bem::Package::open(bytes, report);
  ASSERT_TRUE(pkg);
  Json m = p.manifest;
  m["meshes"][0]["draws"][0]["indices"] = 99;
  auto r = bem::build_model(m, *pkg, 1);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().location.pointer, "/meshes/0/draws/0/indices");
  m = p.manifest;
  m["component_rules"][0]["candidates"][0]["when"] = Json{{"eq", Json::array({"nope", "a"})}};
  r = bem::build_model(m, *pkg, 1);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().location.pointer, "/component_rules/0/candidates/0/when/eq/0");
}
