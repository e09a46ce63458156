// Selection (§5–§7, §9, §10): settings strings, normalisation, plans and lazy
// payload reading, on hand-written manifests. Every expected value below is
// worked out by hand from the manifest in this file and the spec.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "charkit/bem/container.h"
#include "charkit/bem/load.h"
#include "charkit/bem/model.h"
#include "charkit/bem/plan.h"
#include "charkit/bem/selection.h"
#include "charkit/bem/settings.h"
#include "charkit/core/json.h"
#include "morph_test_support.h"
#include "package_builder.h"

namespace charkit::bem {
namespace {

using testkit::ByteVec;
using testkit::f32_bytes;
using testkit::u16_bytes;
using Pairs = std::vector<std::pair<std::uint32_t, std::uint32_t>>;
using U32s = std::vector<std::uint32_t>;

// A 1.3 package: three groups (part only available with outfit b), three
// components (0 body: mesh 0 or mesh 1; 1 hair: keep with a slot texture;
// 2 accessory: hidden or mesh 1 — mesh 1 then replaces two components),
// two texture slots, two parameters (slim only available with colour blue).
//
// Payloads: 0–2 mesh 0 streams, 3 and 4 mesh 0 indices (3 shared by draws 0
// and 2), 5–7 mesh 1 streams, 8 and 9 mesh 1 indices, 10–12 textures, 13 body
// frame 1000, 14 slim frame 0, 15 slim frame 1000.
const char* kManifest = R"({
 "schema": 1, "package_id": "test.select", "name": "Select", "author": "tests", "version": "1",
 "required_capabilities": ["native-materials", "palette-u8", "indices-u32", "composable-options",
   "texture-slots", "keep-material-textures", "body-parameters", "mesh-position-deltas"],
 "target": {"character_id": "chr_0001_test", "platform": "windows-x64", "profile_id": "test.windows",
   "revision": "1", "snapshot": "", "world_resource": "chr_0001_test_postmodel",
   "ui_resource": "chr_0001_test_uimodel",
   "components": [
     {"id": 0, "mesh_name": "S_body_lod0", "original_index_count": 3, "bone_names": ["B_pelvis"], "materials": ["M_body"]},
     {"id": 1, "mesh_name": "S_hair_lod0", "original_index_count": 3, "bone_names": ["B_head"], "materials": ["M_hair"]},
     {"id": 2, "mesh_name": "S_acc_lod0", "original_index_count": 3, "bone_names": ["B_acc"], "materials": ["M_acc"]}]},
 "option_groups": [
   {"id": "outfit", "name": "Outfit", "default": "a", "choices": [{"id": "a", "name": "A"}, {"id": "b", "name": "B"}]},
   {"id": "colour", "name": "Colour", "default": "red", "choices": [{"id": "red", "name": "Red"}, {"id": "blue", "name": "Blue"}]},
   {"id": "part", "name": "Part", "default": "on", "available_when": {"eq": ["outfit", "b"]},
    "choices": [{"id": "on", "name": "On"}, {"id": "off", "name": "Off"}]}],
 "selection_constraints": [{"not": {"all": [{"eq": ["outfit", "a"]}, {"eq": ["colour", "blue"]}]}}],
 "component_rules": [
   {"target": 0, "candidates": [
     {"when": {"eq": ["outfit", "a"]}, "operation": "replace", "mesh": 0},
     {"when": {"eq": ["outfit", "b"]}, "operation": "replace", "mesh": 1}]},
   {"target": 1, "candidates": [
     {"when": true, "operation": "keep", "material_overrides": [
       {"material_slot": 0, "material_name": "M_hair", "textures": [{"slot": "hair_d"}]}]}]},
   {"target": 2, "candidates": [
     {"when": {"eq": ["outfit", "a"]}, "operation": "hide"},
     {"when": {"eq": ["outfit", "b"]}, "operation": "replace", "mesh": 1}]}],
 "texture_slots": [
   {"id": "body_d", "candidates": [
     {"when": {"eq": ["colour", "red"]}, "texture": null},
     {"when": {"eq": ["colour", "blue"]}, "texture": 1}]},
   {"id": "hair_d", "candidates": [
     {"when": {"eq": ["colour", "red"]}, "texture": 2},
     {"when": {"eq": ["colour", "blue"]}, "texture": null}]}],
 "meshes": [
   {"vertex_count": 3, "index_size": 2,
    "streams": [{"stride": 12, "payload": 0}, {"stride": 8, "payload": 1}, {"stride": 4, "payload": 2}],
    "attributes": [[0, 0, 3, 0, 0], [4, 0, 2, 1, 0], [13, 6, 4, 2, 0]],
    "bones": [{"component": 0, "index": 0, "name": "B_pelvis"}],
    "draws": [
      {"when": true, "indices": 3, "count": 3, "material_component": 0, "material_slot": 0, "material_name": "M_body", "textures": [0]},
      {"when": {"eq": ["colour", "blue"]}, "indices": 4, "count": 3, "material_component": 0, "material_slot": 0, "material_name": "M_body", "textures": [{"slot": "body_d"}]},
      {"indices": 3, "count": 3, "material_component": 0, "material_slot": 0, "material_name": "M_body", "textures": []}]},
   {"vertex_count": 4, "index_size": 2,
    "streams": [{"stride": 12, "payload": 5}, {"stride": 8, "payload": 6}, {"stride": 4, "payload": 7}],
    "attributes": [[0, 0, 3, 0, 0], [4, 0, 2, 1, 0], [13, 6, 4, 2, 0]],
    "bones": [{"component": 2, "index": 0, "name": "B_acc"}],
    "draws": [
      {"when": {"eq": ["part", "on"]}, "indices": 8, "count": 6, "material_component": 2, "material_slot": 0, "material_name": "M_acc", "textures": [0]},
      {"when": true, "indices": 9, "count": 3, "material_component": 2, "material_slot": 0, "material_name": "M_acc", "textures": [{"slot": "body_d"}]}]}],
 "textures": [
   {"width": 4, "height": 4, "mips": 1, "format": 4, "srgb": true, "original_name": "T_body_d", "payload": 10},
   {"width": 4, "height": 4, "mips": 1, "format": 4, "srgb": true, "original_name": "T_body_n", "payload": 11},
   {"width": 4, "height": 4, "mips": 1, "format": 4, "srgb": true, "original_name": "T_hair_d", "payload": 12}],
 "parameters": [
   {"id": "body", "name": "Body", "min": 0, "max": 1000, "neutral": 0, "default": 0, "step": 1},
   {"id": "slim", "name": "Slim", "min": 0, "max": 1000, "neutral": 500, "default": 500, "step": 250,
    "available_when": {"eq": ["colour", "blue"]}}],
 "mesh_deformations": [
   {"mesh": 0, "parameter": "body", "frames": [
     {"value": 0, "neutral": true},
     {"value": 1000, "payload": 13, "count": 2, "encoding": "sparse-position-f32"}]},
   {"mesh": 1, "parameter": "slim", "frames": [
     {"value": 0, "payload": 14, "count": 1, "encoding": "sparse-position-f32"},
     {"value": 500, "neutral": true},
     {"value": 1000, "payload": 15, "count": 2, "encoding": "sparse-position-f32"}]}]
})";

testkit::TestPackage fixture() {
  using morphtest::deformation_payload;
  testkit::TestPackage p;
  p.minor = 3;
  p.manifest = core::Json::parse(kManifest);
  p.payloads = {
      f32_bytes({0, 0, 0, 1, 0, 0, 0, 1, 0}),             // 0
      f32_bytes({0, 0, 1, 0, 0, 1}),                      // 1
      ByteVec(12, 0),                                     // 2
      u16_bytes({0, 1, 2}),                               // 3
      u16_bytes({2, 1, 0}),                               // 4
      f32_bytes({0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 1, 0}),    // 5
      f32_bytes({0, 0, 1, 0, 0, 1, 1, 1}),                // 6
      ByteVec(16, 0),                                     // 7
      u16_bytes({0, 1, 2, 1, 3, 2}),                      // 8
      u16_bytes({0, 1, 3}),                               // 9
      ByteVec(64, 0x10),                                  // 10
      ByteVec(64, 0x20),                                  // 11
      ByteVec(64, 0x30),                                  // 12
      deformation_payload({{0, 0, 0, 1}, {2, 2, 0, 0}}),  // 13 body @1000
      deformation_payload({{3, 0, 0, -4}}),               // 14 slim @0
      deformation_payload({{3, 0, 0, 8}, {1, 4, 0, 0}}),  // 15 slim @1000
  };
  return p;
}

// The package opened and its model built (no validation: the planner must
// not rely on it); `bytes` keeps the file alive.
struct Opened {
  ByteVec bytes;
  std::unique_ptr<Package> package;
  Model model;
};

Opened open(const testkit::TestPackage& p, bool zstd = false) {
  Opened o;
  o.bytes = p.binary(zstd);
  core::Report report;
  o.package = Package::open(o.bytes, report);
  EXPECT_TRUE(o.package) << report.to_text("fixture");
  auto m = build_model(p.manifest, *o.package, p.minor);
  EXPECT_TRUE(m.ok()) << m.error().to_string();
  if (m.ok()) o.model = std::move(*m);
  return o;
}

Settings settings(const Model& m, const std::string& opt, const std::string& par = "") {
  auto s = parse_settings(m, opt, par);
  EXPECT_TRUE(s.ok()) << s.error().to_string();
  return s.ok() ? *s : Settings{};
}

Plan plan(const Model& m, const std::string& opt, const std::string& par = "",
          PlanOptions po = {}) {
  auto p = make_plan(m, settings(m, opt, par), po);
  EXPECT_TRUE(p.ok()) << p.error().to_string();
  return p.ok() ? *p : Plan{};
}

std::vector<std::string> warning_codes(const Settings& s) {
  std::vector<std::string> out;
  for (const auto& w : s.warnings) out.push_back(w.code);
  return out;
}

// A payload source that counts decodes per id.
class CountingSource : public PayloadSource {
 public:
  explicit CountingSource(const Package& p) : inner_(p) {}
  core::Result<PayloadData> read(std::uint32_t id) const override {
    ++counts[id];
    return inner_.read(id);
  }
  mutable std::map<std::uint32_t, int> counts;

 private:
  PackagePayloadSource inner_;
};

TEST(SelectFixture, PassesValidation) {
  // The fixture is a real package, not just something the planner accepts.
  auto p = fixture();
  ByteVec bytes = p.binary();
  LoadedPackage l = load_package(bytes);
  EXPECT_TRUE(l.ok()) << l.error << "\n" << l.validation.report.to_text("fixture");
}

// ---- settings strings ------------------------------------------------------

TEST(SelectSettings, EmptyStringsAreDefaults) {
  Opened o = open(fixture());
  Settings s = settings(o.model, "");
  EXPECT_EQ(s.saved, (U32s{0, 0, 0}));
  // part is only available with outfit b: no effective value, saved kept.
  ASSERT_EQ(s.effective.size(), 3u);
  EXPECT_EQ(s.effective[0], 0u);
  EXPECT_EQ(s.effective[1], 0u);
  EXPECT_FALSE(s.effective[2].has_value());
  EXPECT_EQ(s.saved_ticks, (U32s{0, 500}));
  EXPECT_EQ(s.ticks, (U32s{0, 500}));
  EXPECT_TRUE(s.warnings.empty());
  EXPECT_EQ(format_options(o.model, s), "outfit:a&colour:red&part:on");
  EXPECT_EQ(format_parameters(o.model, s), "body:0&slim:500");
}

TEST(SelectSettings, SyntaxErrorsCarryTheColumn) {
  Opened o = open(fixture());
  auto column = [&](const std::string& opt, const std::string& par = "") -> long {
    auto s = parse_settings(o.model, opt, par);
    if (s.ok()) return -1;
    EXPECT_EQ(s.error().code, "BEM_SETTINGS_SYNTAX");
    return s.error().location.offset ? static_cast<long>(*s.error().location.offset) : -2;
  };
  EXPECT_EQ(column("outfit:a&"), 9);  // empty pair at the end
  EXPECT_EQ(column("&outfit:a"), 0);  // empty pair at the start
  EXPECT_EQ(column("outfit:a&&colour:red"), 9);
  EXPECT_EQ(column("outfit"), 0);                     // no ':'
  EXPECT_EQ(column("outfit:"), 7);                    // empty value
  EXPECT_EQ(column(":a"), 0);                         // empty key
  EXPECT_EQ(column("outfit:a b"), 8);                 // space
  EXPECT_EQ(column("outfit:a:b"), 8);                 // second ':'
  EXPECT_EQ(column("colour:red&out\xC3\xA9:a"), 14);  // non-ASCII byte
  EXPECT_EQ(column("outfit:a&_x:y"), 9);              // ID must start with a letter/digit
  EXPECT_EQ(column("outfit:a&outfit:b"), 9);          // same group twice
  EXPECT_EQ(column("", "body:1&body:2"), 7);          // same parameter twice
  EXPECT_EQ(column("", "body:abc"), 5);
  EXPECT_EQ(column("", "body:1.5"), 6);
  EXPECT_EQ(column("", "body:4294967296"), 5);  // not a UInt32
  EXPECT_EQ(column("", "body:-1"), 5);
  EXPECT_EQ(column(std::string(97, 'a') + ":b"), 96);  // longer than a stable ID
}

TEST(SelectSettings, UnknownGroupAndChoiceAreNormalised) {
  Opened o = open(fixture());
  Settings s = settings(o.model, "hat:on&outfit:b");
  EXPECT_EQ(warning_codes(s), std::vector<std::string>{"BEM_SETTINGS_UNKNOWN_GROUP"});
  EXPECT_EQ(s.warnings[0].column, 0u);
  EXPECT_EQ(s.saved, (U32s{1, 0, 0}));
  EXPECT_EQ(format_options(o.model, s), "outfit:b&colour:red&part:on");

  // outfit falls back to a; a with blue breaks the constraint → all defaults.
  s = settings(o.model, "colour:blue&outfit:c");
  EXPECT_EQ(warning_codes(s),
            (std::vector<std::string>{"BEM_SETTINGS_UNKNOWN_CHOICE", "BEM_SETTINGS_CONSTRAINT"}));
  EXPECT_EQ(s.warnings[0].column, 19u);  // the value "c"
  EXPECT_EQ(s.saved, (U32s{0, 0, 0}));
  EXPECT_EQ(format_options(o.model, settings(o.model, "outfit:c&colour:red")),
            "outfit:a&colour:red&part:on");
}

TEST(SelectSettings, UnavailableGroupKeepsItsSavedValue) {
  Opened o = open(fixture());
  Settings s = settings(o.model, "outfit:a&part:off");
  EXPECT_TRUE(s.warnings.empty());
  EXPECT_EQ(s.saved[2], 1u);
  EXPECT_FALSE(s.effective[2].has_value());
  EXPECT_EQ(format_options(o.model, s), "outfit:a&colour:red&part:off");
  // Available again with outfit b: the saved value is effective.
  s = settings(o.model, "part:off&outfit:b");
  EXPECT_EQ(s.effective[2], 1u);
}

TEST(SelectSettings, IllegalCombinationFallsBackToDefaults) {
  Opened o = open(fixture());
  Settings s = settings(o.model, "outfit:a&colour:blue");
  EXPECT_EQ(warning_codes(s), std::vector<std::string>{"BEM_SETTINGS_CONSTRAINT"});
  EXPECT_EQ(s.saved, (U32s{0, 0, 0}));
}

TEST(SelectSettings, ParameterNormalisation) {
  Opened o = open(fixture());
  Settings s = settings(o.model, "colour:blue&outfit:b", "slim:750&foo:1&body:1001");
  EXPECT_EQ(warning_codes(s), (std::vector<std::string>{"BEM_SETTINGS_UNKNOWN_PARAMETER",
                                                        "BEM_SETTINGS_INVALID_TICK"}));
  EXPECT_TRUE(s.warnings[0].in_parameters);
  EXPECT_EQ(s.warnings[0].column, 9u);
  EXPECT_EQ(s.warnings[1].column, 20u);
  EXPECT_EQ(s.saved_ticks, (U32s{0, 750}));
  EXPECT_EQ(s.ticks, (U32s{0, 750}));
  EXPECT_EQ(format_parameters(o.model, s), "body:0&slim:750");
  // Off the step grid (step 250): default.
  s = settings(o.model, "colour:blue&outfit:b", "slim:300");
  EXPECT_EQ(warning_codes(s), std::vector<std::string>{"BEM_SETTINGS_INVALID_TICK"});
  EXPECT_EQ(s.saved_ticks[1], 500u);
  // Unavailable (colour red): saved tick kept, evaluated at neutral 500.
  s = settings(o.model, "outfit:b", "slim:1000");
  EXPECT_TRUE(s.warnings.empty());
  EXPECT_EQ(s.saved_ticks[1], 1000u);
  EXPECT_EQ(s.ticks[1], 500u);
  EXPECT_FALSE(s.parameter_available[1]);
  EXPECT_EQ(format_parameters(o.model, s), "body:0&slim:1000");
}

TEST(SelectSettings, V10AppearanceIds) {
  testkit::TestPackage p = testkit::make_valid_package(0);
  p.manifest["appearances"].push_back(core::Json::parse(
      R"({"id": "outfit-b", "name": "B", "components": [{"target": 0, "operation": "keep"}, {"target": 1, "operation": "hide"}]})"));
  Opened o = open(p);
  Settings s = settings(o.model, "outfit-b");
  EXPECT_EQ(s.saved, U32s{1});
  EXPECT_EQ(format_options(o.model, s), "outfit-b");
  s = settings(o.model, "");
  EXPECT_EQ(format_options(o.model, s), "outfit-a");
  s = settings(o.model, "outfit-z");
  EXPECT_EQ(warning_codes(s), std::vector<std::string>{"BEM_SETTINGS_UNKNOWN_APPEARANCE"});
  EXPECT_EQ(format_options(o.model, s), "outfit-a");
  auto bad = parse_settings(o.model, "appearance:outfit-b", "");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().location.offset, 10u);

  Plan pl = plan(o.model, "outfit-b");
  ASSERT_EQ(pl.components.size(), 2u);
  EXPECT_EQ(pl.components[0].op, Operation::kKeep);
  EXPECT_EQ(pl.components[1].op, Operation::kHide);
  EXPECT_TRUE(pl.meshes.empty());
  EXPECT_TRUE(pl.payloads.empty());
  pl = plan(o.model, "outfit-a");
  EXPECT_EQ(pl.components[0].op, Operation::kReplace);
  EXPECT_EQ(pl.components[1].op, Operation::kKeep);
  EXPECT_EQ(pl.draws, (Pairs{{0, 0}}));
  // streams 0,1,2, index payload 3, texture 4
  EXPECT_EQ(pl.payloads, (U32s{0, 1, 2, 3, 4}));
}

// ---- plans -----------------------------------------------------------------

TEST(SelectPlan, Defaults) {
  Opened o = open(fixture());
  Plan p = plan(o.model, "");
  ASSERT_EQ(p.components.size(), 3u);
  EXPECT_EQ(p.components[0].op, Operation::kReplace);
  EXPECT_EQ(p.components[0].mesh, 0u);
  EXPECT_EQ(p.components[0].draws, (U32s{0, 2}));
  EXPECT_EQ(p.components[1].op, Operation::kKeep);
  EXPECT_EQ(p.components[2].op, Operation::kHide);
  EXPECT_EQ(p.draws, (Pairs{{0, 0}, {0, 2}}));
  ASSERT_EQ(p.meshes.size(), 1u);
  const PlannedMesh& m = p.meshes[0];
  EXPECT_EQ(m.components, U32s{0});
  EXPECT_EQ(m.index_count, 6u);
  ASSERT_EQ(m.segments.size(), 2u);
  EXPECT_EQ(m.segments[0].payload, 3u);
  EXPECT_EQ(m.segments[0].start, 0u);
  EXPECT_EQ(m.segments[1].draw, 2u);
  EXPECT_EQ(m.segments[1].payload, 3u);
  EXPECT_EQ(m.segments[1].start, 3u);
  // Textures: mesh 0 draw 0 fixed texture 0; hair keep override slot hair_d
  // with colour red → texture 2.
  ASSERT_EQ(p.textures.size(), 2u);
  EXPECT_EQ(p.textures[0].source, TextureBinding::Source::kDraw);
  EXPECT_EQ(p.textures[0].texture, 0u);
  EXPECT_EQ(p.textures[0].original_name, "T_body_d");
  EXPECT_EQ(p.textures[1].source, TextureBinding::Source::kKeepOverride);
  EXPECT_EQ(p.textures[1].component, 1u);
  EXPECT_EQ(p.textures[1].slot, 1u);
  EXPECT_EQ(p.textures[1].texture, 2u);
  EXPECT_EQ(p.textures[1].original_name, "T_hair_d");
  // body at 0 on mesh 0: exactly the neutral frame.
  ASSERT_EQ(m.channels.size(), 1u);
  EXPECT_EQ(m.channels[0].tick, 0u);
  ASSERT_EQ(m.channels[0].frames.size(), 1u);
  EXPECT_TRUE(m.channels[0].frames[0].neutral);
  EXPECT_EQ(m.channels[0].frames[0].weight, 1.0f);
  EXPECT_EQ(p.payloads, (U32s{0, 1, 2, 3, 10, 12}));
}

TEST(SelectPlan, MeshReplacingTwoComponentsAndSlots) {
  Opened o = open(fixture());
  Plan p = plan(o.model, "outfit:b&colour:blue&part:off");
  ASSERT_EQ(p.components.size(), 3u);
  EXPECT_EQ(p.components[0].mesh, 1u);
  EXPECT_EQ(p.components[0].draws, U32s{1});
  EXPECT_EQ(p.components[2].op, Operation::kReplace);
  EXPECT_EQ(p.components[2].mesh, 1u);
  EXPECT_EQ(p.components[2].draws, U32s{1});
  ASSERT_EQ(p.meshes.size(), 1u);
  EXPECT_EQ(p.meshes[0].components, (U32s{0, 2}));
  EXPECT_EQ(p.draws, (Pairs{{1, 1}}));
  // mesh 1 draw 1 slot body_d (blue → texture 1); hair slot null → keeps T_hair_d.
  ASSERT_EQ(p.textures.size(), 2u);
  EXPECT_EQ(p.textures[0].mesh, 1u);
  EXPECT_EQ(p.textures[0].draw, 1u);
  EXPECT_EQ(p.textures[0].texture, 1u);
  EXPECT_EQ(p.textures[0].original_name, "T_body_n");
  EXPECT_FALSE(p.textures[1].texture.has_value());
  EXPECT_EQ(p.textures[1].original_name, "T_hair_d");
  // slim available at its default 500 = the neutral frame.
  ASSERT_EQ(p.meshes[0].channels.size(), 1u);
  EXPECT_EQ(p.meshes[0].channels[0].parameter, 1u);
  EXPECT_EQ(p.meshes[0].channels[0].frames.size(), 1u);
  EXPECT_TRUE(p.meshes[0].channels[0].frames[0].neutral);
  EXPECT_EQ(p.payloads, (U32s{5, 6, 7, 9, 11}));
}

TEST(SelectPlan, EveryDrawPlansEveryMeshAndDraw) {
  // Defaults select mesh 0 draws 0 and 2 only; every_draw adds draw 1
  // (colour blue) and mesh 1 (outfit b, replacing components 0 and 2),
  // both its draws, while components still follow the defaults.
  Opened o = open(fixture());
  PlanOptions po;
  po.every_draw = true;
  Plan p = plan(o.model, "", "", po);
  ASSERT_EQ(p.components.size(), 3u);
  EXPECT_EQ(p.components[0].mesh, 0u);
  EXPECT_EQ(p.components[2].op, Operation::kHide);
  EXPECT_EQ(p.draws, (Pairs{{0, 0}, {0, 1}, {0, 2}, {1, 0}, {1, 1}}));
  ASSERT_EQ(p.meshes.size(), 2u);
  EXPECT_EQ(p.meshes[0].components, U32s{0});
  EXPECT_EQ(p.meshes[1].components, (U32s{0, 2}));
  EXPECT_EQ(p.meshes[0].index_count, 9u);
  EXPECT_EQ(p.meshes[1].index_count, 9u);
  ASSERT_EQ(p.meshes[1].segments.size(), 2u);
  EXPECT_EQ(p.meshes[1].segments[1].start, 6u);
  // Both meshes' channels are planned (mesh 1's slim at its neutral 500).
  EXPECT_EQ(p.meshes[0].channels.size(), 1u);
  EXPECT_EQ(p.meshes[1].channels.size(), 1u);
  // Streams 0-2 and 5-7, indices 3, 4, 8, 9; textures 0 (fixed) and 2 (hair
  // slot, red); body_d is null with red so reads nothing.
  EXPECT_EQ(p.payloads, (U32s{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12}));
}

TEST(SelectPlan, IndexStreamConcatenationAndFrameWeights) {
  Opened o = open(fixture());
  Plan p = plan(o.model, "outfit:b&part:on&colour:blue", "slim:750");
  ASSERT_EQ(p.meshes.size(), 1u);
  const PlannedMesh& m = p.meshes[0];
  EXPECT_EQ(m.draws, (U32s{0, 1}));
  ASSERT_EQ(m.segments.size(), 2u);
  EXPECT_EQ(m.segments[0].start, 0u);
  EXPECT_EQ(m.segments[0].count, 6u);
  EXPECT_EQ(m.segments[1].start, 6u);  // recomputed after the 6 indices of draw 0
  EXPECT_EQ(m.segments[1].count, 3u);
  EXPECT_EQ(m.index_count, 9u);
  // 750 between 500 (neutral) and 1000: (1000−750)/500 = 0.5 each.
  ASSERT_EQ(m.channels.size(), 1u);
  const PlannedChannel& c = m.channels[0];
  EXPECT_EQ(c.tick, 750u);
  ASSERT_EQ(c.frames.size(), 2u);
  EXPECT_TRUE(c.frames[0].neutral);
  EXPECT_EQ(c.frames[0].weight, 0.5f);
  EXPECT_EQ(c.frames[1].payload, 15u);
  EXPECT_EQ(c.frames[1].weight, 0.5f);
  EXPECT_EQ(p.payloads, (U32s{5, 6, 7, 8, 9, 10, 11, 15}));

  // body 250 on mesh 0: weights 0.75 (neutral 0) / 0.25 (frame 1000).
  Plan q = plan(o.model, "", "body:250");
  const PlannedChannel& b = q.meshes[0].channels[0];
  ASSERT_EQ(b.frames.size(), 2u);
  EXPECT_EQ(b.frames[0].weight, 0.75f);
  EXPECT_EQ(b.frames[1].weight, 0.25f);
  EXPECT_EQ(q.payloads, (U32s{0, 1, 2, 3, 10, 12, 13}));
}

TEST(SelectPlan, BrokenModelGivesErrorsNotCrashes) {
  Opened o = open(fixture());
  Settings s = settings(o.model, "");
  Model bad = o.model;
  bad.components[0].candidates[0].mesh = 99;
  auto r = make_plan(bad, s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "BEM_PLAN_RANGE");
  bad = o.model;
  bad.meshes[0].draws[0].textures[0].texture = 7;
  EXPECT_EQ(make_plan(bad, s).error().code, "BEM_PLAN_RANGE");
  bad = o.model;
  bad.meshes[0].streams[1].payload = 400;
  EXPECT_EQ(make_plan(bad, s).error().code, "BEM_PLAN_RANGE");
  bad = o.model;
  bad.components[2].candidates[0].when = Condition::always();  // hide and replace both hold with b
  EXPECT_EQ(make_plan(bad, settings(o.model, "outfit:b")).error().code, "BEM_PLAN_CANDIDATES");
  bad = o.model;
  bad.deformations[0].frames.pop_back();  // no frame covers 250
  EXPECT_EQ(make_plan(bad, settings(o.model, "", "body:250")).error().code, "BEM_PLAN_FRAMES");
  Settings wrong = s;
  wrong.ticks.pop_back();
  EXPECT_EQ(make_plan(o.model, wrong).error().code, "BEM_PLAN_SETTINGS");
  bad = o.model;
  bad.groups[0].default_choice = 5;
  EXPECT_EQ(parse_settings(bad, "", "").error().code, "BEM_SETTINGS_MODEL");
  bad = o.model;
  bad.parameters[1].step = 0;
  EXPECT_EQ(parse_settings(bad, "", "").error().code, "BEM_SETTINGS_MODEL");
}

TEST(SelectPlan, V14ResourceAndPlatform) {
  testkit::TestPackage p = testkit::make_valid_package_v14();
  // A second resource served on Windows only, owning component 1.
  p.manifest["target"]["resources"].push_back(core::Json::parse(
      R"({"id": "ui", "name": "chr_0013_aglina_uimodel", "asset_path": "assets/characters/chr_0013_aglina_uimodel.prefab", "platforms": ["windows-x64"], "lod": 0})"));
  p.manifest["target"]["components"][1]["resource"] = "ui";
  Opened o = open(p);
  Settings s = settings(o.model, "");
  auto world = make_plan(o.model, s, {"world", "android-arm64"});
  ASSERT_TRUE(world.ok()) << world.error().to_string();
  ASSERT_EQ(world->components.size(), 1u);
  EXPECT_EQ(world->components[0].target, 0u);
  EXPECT_EQ(world->resource, "world");
  auto ui = make_plan(o.model, s, {"ui", "windows-x64"});
  ASSERT_TRUE(ui.ok());
  ASSERT_EQ(ui->components.size(), 1u);
  EXPECT_EQ(ui->components[0].target, 1u);
  EXPECT_TRUE(ui->meshes.empty());
  EXPECT_EQ(make_plan(o.model, s, {"ui", "android-arm64"}).error().code, "BEM_PLAN_PLATFORM");
  EXPECT_EQ(make_plan(o.model, s, {"hud", "windows-x64"}).error().code, "BEM_PLAN_RESOURCE");
  EXPECT_EQ(make_plan(o.model, s, {"world", ""}).error().code, "BEM_PLAN_PLATFORM");
  EXPECT_EQ(make_plan(o.model, s, {}).value().components.size(), 2u);

  Opened legacy = open(fixture());
  EXPECT_EQ(
      make_plan(legacy.model, settings(legacy.model, ""), {"world", "windows-x64"}).error().code,
      "BEM_PLAN_RESOURCE");
}

// ---- lazy reading ----------------------------------------------------------

TEST(SelectRead, DecodesOnlySelectedPayloadsOnce) {
  for (bool zstd : {false, true}) {
    Opened o = open(fixture(), zstd);
    // Mesh 1 replaces components 0 and 2; texture 0 is bound by mesh 1 draw 0.
    Plan p = plan(o.model, "outfit:b&part:on&colour:blue", "slim:750");
    CountingSource src(*o.package);
    auto sel = read_selection(o.model, p, src);
    ASSERT_TRUE(sel.ok()) << sel.error().to_string();
    std::map<std::uint32_t, int> want;
    for (std::uint32_t id : {5u, 6u, 7u, 8u, 9u, 10u, 11u, 15u}) want[id] = 1;
    EXPECT_EQ(src.counts, want) << "zstd " << zstd;
    EXPECT_EQ(sel->decoded, (U32s{5, 6, 7, 8, 9, 15, 10, 11}));

    ASSERT_EQ(sel->meshes.size(), 1u);
    const SelectedMesh& m = sel->meshes[0];
    EXPECT_EQ(m.indices, (U32s{0, 1, 2, 1, 3, 2, 0, 1, 3}));
    ASSERT_EQ(m.streams.size(), 3u);
    EXPECT_EQ(m.streams[0]->size(), 48u);
    // slim 750: 0.5 × frame 1000 (v3 +8 z, v1 +4 x) on base positions.
    EXPECT_EQ(m.positions, (std::vector<float>{0, 0, 0, 3, 0, 0, 0, 1, 0, 1, 1, 4}));
    ASSERT_EQ(sel->textures.size(), 2u);
    EXPECT_EQ(sel->textures[0].texture, 0u);
    EXPECT_EQ(sel->textures[0].data->bytes()[0], 0x10);
    EXPECT_EQ(sel->textures[1].data->bytes()[0], 0x20);
  }
}

TEST(SelectRead, SharedIndexPayloadDecodedOnce) {
  Opened o = open(fixture());
  Plan p = plan(o.model, "");  // mesh 0 draws 0 and 2 both use payload 3
  CountingSource src(*o.package);
  auto sel = read_selection(o.model, p, src);
  ASSERT_TRUE(sel.ok()) << sel.error().to_string();
  EXPECT_EQ(src.counts[3], 1);
  EXPECT_EQ(src.counts.size(), 6u);  // 0,1,2,3,10,12
  EXPECT_EQ(src.counts.count(4), 0u);
  EXPECT_EQ(sel->meshes[0].indices, (U32s{0, 1, 2, 0, 1, 2}));
  // body at neutral: positions equal the base positions.
  EXPECT_EQ(sel->meshes[0].positions, (std::vector<float>{0, 0, 0, 1, 0, 0, 0, 1, 0}));
}

TEST(SelectRead, DeformedPositions) {
  Opened o = open(fixture());
  auto positions = [&](const std::string& opt, const std::string& par) {
    Plan p = plan(o.model, opt, par);
    PackagePayloadSource src(*o.package);
    auto sel = read_selection(o.model, p, src, SelectionOptions{{}, false});
    EXPECT_TRUE(sel.ok()) << sel.error().to_string();
    return sel.ok() && !sel->meshes.empty() ? sel->meshes[0].positions : std::vector<float>{};
  };
  // Exact frame 1000: v0 + (0,0,1), v2 + (2,0,0).
  EXPECT_EQ(positions("", "body:1000"), (std::vector<float>{0, 0, 1, 1, 0, 0, 2, 1, 0}));
  // 250: 0.25 of frame 1000.
  EXPECT_EQ(positions("", "body:250"), (std::vector<float>{0, 0, 0.25f, 1, 0, 0, 0.5f, 1, 0}));
  // slim exactly at frame 0: v3 + (0,0,−4).
  EXPECT_EQ(positions("outfit:b&colour:blue", "slim:0"),
            (std::vector<float>{0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 1, -4}));
  // slim unavailable with colour red: neutral, whatever was saved.
  EXPECT_EQ(positions("outfit:b", "slim:0"),
            (std::vector<float>{0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 1, 0}));
}

TEST(SelectRead, V10SegmentsReadFromTheMeshIndexPayload) {
  testkit::TestPackage p = testkit::make_valid_package(0);
  // Two 1.0 draws over one 6-index payload: start 0 and 3 (§7 1.0 form).
  p.payloads[3] = u16_bytes({0, 1, 2, 2, 1, 0});
  core::Json& mesh = p.manifest["meshes"][0];
  mesh["index_count"] = 6;
  core::Json second = mesh["draws"][0];
  second["start"] = 3;
  second["textures"] = core::Json::array();
  mesh["draws"].push_back(second);
  Opened o = open(p);
  Plan pl = plan(o.model, "");
  ASSERT_EQ(pl.meshes.size(), 1u);
  ASSERT_EQ(pl.meshes[0].segments.size(), 2u);
  EXPECT_EQ(pl.meshes[0].segments[1].source_start, 3u);
  EXPECT_EQ(pl.meshes[0].segments[1].start, 3u);
  CountingSource src(*o.package);
  auto sel = read_selection(o.model, pl, src);
  ASSERT_TRUE(sel.ok()) << sel.error().to_string();
  EXPECT_EQ(sel->meshes[0].indices, (U32s{0, 1, 2, 2, 1, 0}));
  EXPECT_EQ(src.counts[3], 1);
  EXPECT_TRUE(sel->meshes[0].positions.empty());  // no deformations
}

TEST(SelectRead, BadPayloadsAreErrors) {
  testkit::TestPackage f = fixture();
  f.payloads[9] = u16_bytes({0, 1, 4});  // index 4 ≥ vertex_count 4
  Opened o = open(f);
  PackagePayloadSource src(*o.package);
  auto sel = read_selection(o.model, plan(o.model, "outfit:b&part:off"), src);
  ASSERT_FALSE(sel.ok());
  EXPECT_EQ(sel.error().code, "BEM_SELECT_INDEX");

  f = fixture();
  f.payloads[13] = morphtest::deformation_payload({{3, 0, 0, 1}, {0, 1, 1, 1}});  // vertex 3 of 3
  Opened o2 = open(f);
  PackagePayloadSource src2(*o2.package);
  auto sel2 = read_selection(o2.model, plan(o2.model, "", "body:1000"), src2);
  ASSERT_FALSE(sel2.ok());
  EXPECT_EQ(sel2.error().code, "BEM_DELTA_VERTEX");

  f = fixture();
  f.payloads[0].pop_back();  // stream shorter than 3 × 12
  Opened o3 = open(f);
  PackagePayloadSource src3(*o3.package);
  auto sel3 = read_selection(o3.model, plan(o3.model, ""), src3);
  ASSERT_FALSE(sel3.ok());
  EXPECT_EQ(sel3.error().code, "BEM_SELECT_SIZE");
}

}  // namespace
}  // namespace charkit::bem
