// `bem pack --spec`: spec files' fields, options, sliders and overrides.
#include "pack_test_support.h"

#include <gtest/gtest.h>
#include <unistd.h>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include "charkit/bem/error_codes.h"
#include "charkit/bem/export_gltf.h"
#include "charkit/bem/folder.h"
#include "charkit/bem/load.h"
#include "charkit/bem/pack.h"
#include "charkit/bem/pack_spec.h"
#include "charkit/bem/packed_tbn.h"
#include "charkit/bem/settings.h"
#include "charkit/bem/writer.h"
#include "charkit/core/base64.h"
#include "charkit/core/bytes.h"
#include "charkit/core/half.h"
#include "charkit/core/json.h"
#include "charkit/scene/gltf_document.h"
#include "charkit/scene/image.h"
#include "charkit/scene/texture_decode.h"
#include "charkit/scene/texture_encode.h"
#include "morph_test_support.h"
#include "package_builder.h"

namespace charkit::bem {
namespace {

using namespace packtest;  // NOLINT(google-build-using-namespace): the tests' shared helpers

/// The packed content written and loaded back, with `settings` selected.
std::vector<float> exported_positions(const PackageContent& c, const std::string& settings) {
  core::Report report;
  auto written = write_binary(c, {}, &report);
  EXPECT_TRUE(written.ok()) << (written.ok() ? "" : written.error().to_string()) << "\n"
                            << report.to_text("packed");
  if (!written.ok()) return {};
  const ByteVec glb = export_selection(written->bytes, settings, false, false);
  return glb.empty() ? std::vector<float>{} : attributes_of(glb).at("0/POSITION");
}

// The spec sets the package's fields, options and rules; a slider made of
// two shape keys (one each side of a neutral tick in the middle) moves the
// vertices by each key's displacement, interpolated between the frames.
TEST(BemPackSpec, FieldsOptionsAndATwoSidedSlider) {
  Template t;
  ASSERT_NO_FATAL_FAILURE(load_template(t, testkit::make_valid_package(3).binary()));
  SceneSpec s = triangle_scene();
  s.targets = {{0, 0, 0, 0, 0, 0, 0, -0.5f, 0}, {0, 0, 0, 0.5f, 0, 0, 0, 0, 0}};
  s.target_names = {"chest small", "chest big"};
  const PackSpec spec = spec_of(R"({
    "package_id": "creator.outfit", "name": "My outfit", "author": "A. Creator",
    "version": "2.0.0",
    "option_groups": [{"id": "look", "name": "Look", "default": "new",
                       "choices": [{"id": "new", "name": "New"}, {"id": "old", "name": "Old"}]}],
    "component_rules": [
      {"target": 0, "candidates": [{"when": {"eq": ["look", "new"]}, "operation": "replace", "mesh": 0},
                                   {"when": {"eq": ["look", "old"]}, "operation": "keep"}]},
      {"target": 1, "candidates": [{"when": true, "operation": "hide"}]}],
    "parameters": [{"id": "chest", "name": "Chest", "default": 500, "step": 250,
                    "available_when": {"eq": ["look", "new"]},
                    "frames": [{"value": 0, "shape_key": "chest small"},
                               {"value": 500, "neutral": true},
                               {"value": 1000, "shape_key": "chest big"}]}]})");
  PackOptions o;
  o.spec = &spec;
  auto r = pack(t, build_scene(s), o);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  const Json& m = r->content.manifest;
  EXPECT_EQ(m["package_id"], "creator.outfit");
  EXPECT_EQ(m["name"], "My outfit");
  EXPECT_EQ(m["author"], "A. Creator");
  EXPECT_EQ(m["version"], "2.0.0");
  EXPECT_EQ(m["option_groups"][0]["id"], "look");
  EXPECT_EQ(m["component_rules"][1]["candidates"][0]["operation"], "hide");
  EXPECT_EQ(m["parameters"], Json::parse(R"([{"id":"chest","name":"Chest","min":0,"max":1000,
      "neutral":500,"default":500,"step":250,"available_when":{"eq":["look","new"]}}])"));
  ASSERT_EQ(m["mesh_deformations"].size(), 1u);
  const Json& frames = m["mesh_deformations"][0]["frames"];
  ASSERT_EQ(frames.size(), 3u);
  EXPECT_EQ(frames[0]["value"], 0);
  EXPECT_EQ(frames[1], Json::parse(R"({"value":500,"neutral":true})"));
  EXPECT_EQ(frames[2]["value"], 1000);
  EXPECT_EQ(payload_at(r->content, "/mesh_deformations/0/frames/0/payload"),
            morphtest::deformation_payload({{2, -0.0f, -0.5f, 0}}));
  EXPECT_EQ(payload_at(r->content, "/mesh_deformations/0/frames/2/payload"),
            morphtest::deformation_payload({{1, -0.5f, 0, 0}}));
  EXPECT_EQ(r->meshes[0].sliders, 1u);
  // The glTF positions (x mirrored back by the export) at four ticks.
  EXPECT_EQ(exported_positions(r->content, "chest:500"),
            (std::vector<float>{0, 0, 0, 1, 0, 0, 0, 1, 0}));
  EXPECT_EQ(exported_positions(r->content, "chest:1000"),
            (std::vector<float>{0, 0, 0, 1.5f, 0, 0, 0, 1, 0}));
  EXPECT_EQ(exported_positions(r->content, "chest:0"),
            (std::vector<float>{0, 0, 0, 1, 0, 0, 0, 0.5f, 0}));
  EXPECT_EQ(exported_positions(r->content, "chest:250"),
            (std::vector<float>{0, 0, 0, 1, 0, 0, 0, 0.75f, 0}));
}

// One shape key with the spec's range and step: the key at max (or at min
// when the neutral tick is max), the default from the mesh's weight on the
// step grid; keys the spec does not name stay 0..1000 sliders.
TEST(BemPackSpec, OneShapeKeyTakesTheSpecsRange) {
  Template t;
  ASSERT_NO_FATAL_FAILURE(load_template(t, testkit::make_valid_package(3).binary()));
  SceneSpec s = triangle_scene();
  s.targets = {{0, 0, 0, 0.5f, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 0, 0, 0.5f, 0}, {}};
  s.targets[2] = std::vector<float>(9, 0.0f);
  s.target_names = {"Belly", "Blink", "Other"};
  s.target_weights = {0.25f, 0, 0.5f};
  const PackSpec spec = spec_of(R"({"parameters": [
      {"id": "belly", "shape_key": "Belly", "max": 100, "step": 10},
      {"id": "Blink", "neutral": 1000}]})");
  PackOptions o;
  o.spec = &spec;
  auto r = pack(t, build_scene(s), o);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  const Json& m = r->content.manifest;
  // Belly: weight 0.25 of 100 ticks = 25, on the step-10 grid: 30 (half away from zero).
  EXPECT_EQ(m["parameters"], Json::parse(R"([
      {"id":"belly","name":"Belly","min":0,"max":100,"neutral":0,"default":30,"step":10},
      {"id":"Blink","name":"Blink","min":0,"max":1000,"neutral":1000,"default":1000,"step":1},
      {"id":"Other","name":"Other","min":0,"max":1000,"neutral":0,"default":500,"step":1}])"));
  const Json& ch = m["mesh_deformations"];
  ASSERT_EQ(ch.size(), 3u);
  EXPECT_EQ(ch[0]["frames"][1]["value"], 100);
  EXPECT_EQ(ch[1]["frames"][0]["value"], 0);
  EXPECT_EQ(ch[1]["frames"][0]["count"], 1);
  EXPECT_EQ(ch[1]["frames"][1], Json::parse(R"({"value":1000,"neutral":true})"));
  EXPECT_EQ(exported_positions(r->content, "belly:50&Blink:0"),
            (std::vector<float>{0, 0, 0, 1.25f, 0, 0, 0, 1.5f, 0}));
}

// §12/§5 pass-through: the spec's draw material overrides, root offset and
// drivers land in the manifest, and the capabilities they use are declared
// (so the package is BEM 1.5 without the creator listing them).
TEST(BemPackSpec, OverridesRootOffsetAndDriversDeclareTheirCapabilities) {
  Template t;
  ASSERT_NO_FATAL_FAILURE(load_template(t, testkit::make_valid_package(3).binary()));
  SceneSpec s = triangle_scene();
  s.targets = {{0, 0, 0, 0.5f, 0, 0, 0, 0, 0}};
  s.target_names = {"sway"};
  const PackSpec spec = spec_of(R"({
    "material_overrides": [{"mesh": 0, "draw": 0, "floats": {"_Smoothness": 0.25},
                            "enable_keywords": ["_EMISSION"]}],
    "root_offset": {"path": "Bip001", "translation": [0.0, 0.04, 0.0]},
    "drivers": [{"id": "swing", "name": "Swing", "waveform": "sine", "default_playing": false,
                 "base_frequency": 0.5,
                 "bindings": [{"type": "morph_parameter", "target": "sway",
                               "range": [0.0, 1.0]}]}]})");
  PackOptions o;
  o.spec = &spec;
  auto r = pack(t, build_scene(s), o);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  const Json& m = r->content.manifest;
  EXPECT_EQ(m["meshes"][0]["draws"][0]["material_overrides"],
            Json::parse(R"({"floats":{"_Smoothness":0.25},"enable_keywords":["_EMISSION"]})"));
  const Json& caps = m["required_capabilities"];
  for (const char* cap :
       {"material-overrides-v1", "root-offset-v1", "body-parameters", "mesh-position-deltas"})
    EXPECT_NE(std::find(caps.begin(), caps.end(), Json(cap)), caps.end()) << cap;
  core::Report report;
  auto written = write_binary(r->content, {}, &report);
  if (written.ok()) {
    EXPECT_EQ(written->stats.minor, 5);
    EXPECT_NE(std::find(caps.begin(), caps.end(), Json("dynamic-drivers-v1")), caps.end());
  } else {
    // The driver object above may not be complete per §13; the report names what is missing.
    ADD_FAILURE() << written.error().to_string() << "\n" << report.to_text("packed");
  }
}

TEST(BemPackSpec, Refusals) {
  auto parse_error = [](const char* text) {
    auto s = parse_pack_spec(core::as_bytes(std::string_view(text)));
    return s.ok() ? std::string("ok") : s.error().code + " " + s.error().location.pointer;
  };
  EXPECT_EQ(parse_error(R"({"colour": 1})"), "BEM_PACK_SPEC /colour");
  EXPECT_EQ(parse_error(R"({"name": 3})"), "BEM_PACK_SPEC /name");
  EXPECT_EQ(parse_error(R"({"parameters": [{"name": "x"}]})"), "BEM_PACK_SPEC /parameters/0");
  EXPECT_EQ(parse_error(R"({"parameters": [{"id": "x", "max": 2000}]})"),
            "BEM_PACK_SPEC /parameters/0/max");
  EXPECT_EQ(parse_error(R"({"parameters": [{"id": "x", "frames": [
      {"value": 500, "neutral": true}, {"value": 0, "shape_key": "a"}]}]})"),
            "BEM_PACK_SPEC /parameters/0/frames/1/value");
  EXPECT_EQ(parse_error(R"({"parameters": [{"id": "x", "frames": [
      {"value": 0, "shape_key": "b"}, {"value": 1000, "shape_key": "a"}]}]})"),
            "BEM_PACK_SPEC /parameters/0/frames");
  EXPECT_EQ(parse_error(R"({"parameters": [{"id": "x"}, {"id": "x"}]})"),
            "BEM_PACK_SPEC /parameters/1");
  EXPECT_EQ(parse_error(R"({"material_overrides": [{"draw": 0}]})"),
            "BEM_PACK_SPEC /material_overrides/0/mesh");
  EXPECT_EQ(parse_error(R"({"name": "x",)"), "JSON_SYNTAX ");

  Template t;
  ASSERT_NO_FATAL_FAILURE(load_template(t, testkit::make_valid_package(3).binary()));
  SceneSpec s = triangle_scene();
  s.targets = {{0, 0, 0, 0.5f, 0, 0, 0, 0, 0}};
  s.target_names = {"Belly"};
  auto pack_error = [&](const char* text) {
    const PackSpec spec = spec_of(text);
    PackOptions o;
    o.spec = &spec;
    auto r = pack(t, build_scene(s), o);
    return r.ok() ? std::string("ok") : r.error().code + " " + r.error().location.pointer;
  };
  EXPECT_EQ(pack_error(R"({"parameters": [{"id": "waist"}]})"), "BEM_PACK_SPEC /parameters/0");
  EXPECT_EQ(pack_error(R"({"parameters": [{"id": "w", "shape_key": "Waist"}]})"),
            "BEM_PACK_SPEC /parameters/0/shape_key");
  EXPECT_EQ(pack_error(R"({"parameters": [{"id": "w", "shape_key": "Belly", "neutral": 500}]})"),
            "BEM_PACK_SPEC /parameters/0/neutral");
  EXPECT_EQ(pack_error(R"({"parameters": [{"id": "a", "shape_key": "Belly"},
                                          {"id": "b", "shape_key": "Belly"}]})"),
            "BEM_PACK_SPEC /parameters/1/shape_key");
  EXPECT_EQ(pack_error(R"({"material_overrides": [{"mesh": 0, "draw": 4}]})"),
            "BEM_PACK_SPEC /material_overrides/0");
  EXPECT_EQ(pack_error(R"({"parameters": [{"id": "Belly", "step": 300}]})"), "ok");
}

}  // namespace
}  // namespace charkit::bem
