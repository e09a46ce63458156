#include "example_packages.h"

#include "package_builder.h"

namespace charkit::examples {
namespace {

using testkit::Json;

// The 1.5 example: the baseline 1.5 package plus the 1.5 features a creator
// meets first — a material override on the draw (§12) and a root offset.
testkit::TestPackage example_v15() {
  testkit::TestPackage p = testkit::make_valid_package(5);
  Json& m = p.manifest;
  m["package_id"] = "charkit.example.v15";
  m["name"] = "charkit example (BEM 1.5)";
  m["author"] = "charkit project (CC0)";
  m["required_capabilities"].push_back("material-overrides-v1");
  m["required_capabilities"].push_back("root-offset-v1");
  m["meshes"][0]["draws"][0]["material_overrides"] =
      Json{{"floats", Json{{"_Smoothness", 0.25}}},
           {"colors", Json{{"_BaseColor", Json::array({1.0, 0.9, 0.8, 1.0})}}},
           {"enable_keywords", Json::array({"_EMISSION"})}};
  m["root_offset"] = Json{{"path", "Bip001"}, {"translation", Json::array({0.0, 0.04, 0.0})}};
  return p;
}

// The 1.5 drivers example (§10, §12, §13): the baseline triangle with a
// parameter "open" (0..100) whose one frame moves vertex 1 by (0.5, 0.5, 0),
// a static _Glow on the draw, and three drivers: "wave" (pingpong, 0.5 Hz,
// drives "open"), "glow" (sine, 1 Hz: _Glow 0..2, _EmissionColor black to
// orange, keyword _EMISSION above w 0.5) and "blink" (step, once, 2 Hz,
// drives "open" over its upper half).
testkit::TestPackage example_drivers() {
  testkit::TestPackage p = testkit::make_valid_package(5);
  Json& m = p.manifest;
  m["package_id"] = "charkit.example.drivers";
  m["name"] = "charkit example (BEM 1.5 drivers)";
  m["author"] = "charkit project (CC0)";
  for (const char* cap :
       {"body-parameters", "mesh-position-deltas", "material-overrides-v1", "dynamic-drivers-v1"})
    m["required_capabilities"].push_back(cap);
  m["parameters"] = Json::parse(
      R"([{"id": "open", "name": "Open", "min": 0, "max": 100, "neutral": 0, "default": 0, "step": 1}])");
  m["mesh_deformations"] = Json::parse(
      R"([{"mesh": 0, "parameter": "open", "frames": [{"value": 0, "neutral": true},
          {"value": 100, "payload": 5, "count": 1, "encoding": "sparse-position-f32"}]}])");
  m["meshes"][0]["draws"][0]["material_overrides"] = Json{{"floats", Json{{"_Glow", 0.25}}}};
  m["drivers"] = Json::parse(R"([
    {"id": "wave", "name": "Wave", "waveform": "pingpong", "playback": "loop",
     "base_frequency": 0.5,
     "bindings": [{"type": "morph_parameter", "target": "open"}]},
    {"id": "glow", "name": "Glow", "waveform": "sine", "playback": "loop", "base_frequency": 1.0,
     "bindings": [
       {"type": "material_float", "component": 0, "material_slot": 0, "property": "_Glow",
        "range": [0, 2]},
       {"type": "material_color", "component": 0, "material_slot": 0,
        "property": "_EmissionColor", "colors": [[0, 0, 0, 1], [1, 0.5, 0, 1]]},
       {"type": "material_keyword", "component": 0, "material_slot": 0, "keyword": "_EMISSION",
        "threshold": 0.5}]},
    {"id": "blink", "name": "Blink", "waveform": "step", "playback": "once", "base_frequency": 2.0,
     "bindings": [{"type": "morph_parameter", "target": "open", "range": [0.5, 1]}]}])");
  // Payload 5: the frame at open = 100, one sparse record (vertex 1).
  const std::string header = R"({"count":1,"encoding":"sparse-position-f32"})";
  testkit::ByteVec delta = testkit::u32_bytes({static_cast<std::uint32_t>(header.size())});
  delta.insert(delta.end(), header.begin(), header.end());
  for (const testkit::ByteVec& b : {testkit::u32_bytes({1}), testkit::f32_bytes({0.5F, 0.5F, 0})})
    delta.insert(delta.end(), b.begin(), b.end());
  p.payloads.push_back(delta);
  return p;
}

// The game's own 16/12/12 vertex layout (docs/bem/export.md, "Packed normal
// and tangent"): a quad with position + the packed normal/tangent word in
// stream 0, UV + SNorm8×4 outline data (TexCoord2) in stream 1 and the
// 12-byte skin (UNorm16×4 weights summing to 65535 + UInt8×4 bones) in
// stream 2. Every normal is +z with tangent +x and bitangent sign +1: word
// 0xC8000000 (octahedral (0, 0), tangent code 128/511 = 0.25, bits 30, 31).
testkit::TestPackage example_game_layout() {
  testkit::TestPackage p = testkit::make_valid_package(1);
  Json& m = p.manifest;
  m["package_id"] = "charkit.example.game_layout";
  m["name"] = "charkit example (game vertex layout)";
  m["author"] = "charkit project (CC0)";
  Json& mesh = m["meshes"][0];
  mesh["vertex_count"] = 4;
  mesh["streams"] =
      Json::array({Json{{"stride", 16}, {"payload", 0}}, Json{{"stride", 12}, {"payload", 1}},
                   Json{{"stride", 12}, {"payload", 2}}});
  mesh["attributes"] = Json::array({Json::array({0, 0, 3, 0, 0}), Json::array({1, 0, 1, 0, 12}),
                                    Json::array({4, 0, 2, 1, 0}), Json::array({6, 3, 4, 1, 8}),
                                    Json::array({12, 4, 4, 2, 0}), Json::array({13, 6, 4, 2, 8})});
  mesh["bones"] = Json::array({Json{{"component", 0}, {"index", 0}, {"name", "Bip001_Pelvis"}},
                               Json{{"component", 0}, {"index", 1}, {"name", "Bip001_Spine"}}});
  mesh["draws"][0]["count"] = 6;
  const float pos[4][3] = {{0, 0, 0}, {0.5F, 0, 0}, {0.5F, 0.5F, 0}, {0, 0.5F, 0}};
  const float uv[4][2] = {{0, 0}, {1, 0}, {1, 1}, {0, 1}};
  testkit::ByteVec s0;
  testkit::ByteVec s1;
  testkit::ByteVec s2;
  auto append = [](testkit::ByteVec& to, const testkit::ByteVec& bytes) {
    to.insert(to.end(), bytes.begin(), bytes.end());
  };
  const std::uint16_t weights[4][4] = {
      {65535, 0, 0, 0}, {65535, 0, 0, 0}, {32768, 32767, 0, 0}, {65535, 0, 0, 0}};
  const std::uint8_t bones[4][4] = {{0, 0, 0, 0}, {1, 0, 0, 0}, {0, 1, 0, 0}, {1, 0, 0, 0}};
  for (int v = 0; v < 4; ++v) {
    append(s0, testkit::f32_bytes({pos[v][0], pos[v][1], pos[v][2]}));
    append(s0, testkit::u32_bytes({0xC8000000u}));
    append(s1, testkit::f32_bytes({uv[v][0], uv[v][1]}));
    append(s1, testkit::ByteVec{127, 0, 0, 64});
    append(s2, testkit::u16_bytes({weights[v][0], weights[v][1], weights[v][2], weights[v][3]}));
    append(s2, testkit::ByteVec{bones[v][0], bones[v][1], bones[v][2], bones[v][3]});
  }
  p.payloads[0] = s0;
  p.payloads[1] = s1;
  p.payloads[2] = s2;
  p.payloads[3] = testkit::u16_bytes({0, 1, 2, 0, 2, 3});
  return p;
}

// Binary form as a writer makes it (§2): zstd only where it saves bytes.
std::vector<std::uint8_t> binary_best_codec(const testkit::TestPackage& p) {
  testkit::BinaryLayout l;
  l.minor = static_cast<std::uint16_t>(p.minor);
  l.manifest = p.manifest.dump();
  for (const auto& b : p.payloads)
    l.payloads.push_back({b, testkit::zstd_frame(b).size() < b.size()});
  return testkit::build_binary(l);
}

}  // namespace

std::vector<ExampleFile> make_example_packages() {
  testkit::TestPackage v15 = example_v15();
  testkit::TestPackage v14 = testkit::make_valid_package_v14();
  v14.manifest["package_id"] = "charkit.example.v14";
  v14.manifest["author"] = "charkit project (CC0)";
  testkit::TestPackage v10 = testkit::make_valid_package(0);
  v10.manifest["package_id"] = "charkit.example.v10";
  v10.manifest["author"] = "charkit project (CC0)";
  return {
      {"example-1.5.bem", binary_best_codec(v15)},
      {"example-1.5.zip", v15.zip(/*deflate=*/true)},
      {"example-1.5-drivers.bem", binary_best_codec(example_drivers())},
      {"example-1.4-explicit.bem", v14.binary()},
      {"example-1.0.bem", v10.binary()},
      {"example-1.1-game-layout.bem", binary_best_codec(example_game_layout())},
  };
}

}  // namespace charkit::examples
