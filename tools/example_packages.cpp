#include "example_packages.h"

#include <string>
#include <utility>
#include <vector>

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

// The options example (§6, §7, §10, §12): two target components and three
// meshes with position, normal, tangent, UV and a 12- or 4-byte skin.
//  - mesh 0 (body, component 0): two stacked quads, two draws on two
//    materials; draw 0 always, draw 1 only with outfit:full, so outfit:light
//    shows the mesh with its first draw alone. Skinned over Bip001_Pelvis and
//    Bip001_Spine, the middle row and the bottom row weighted to both.
//  - group "hair" swaps component 1: short → mesh 1 (one quad, rigid on
//    Bip001_Head), long → mesh 2 (two quads over Bip001_Head of component 1
//    and Bip001_Spine of component 0, weights blended), game → keep.
//  - parameters "length" (on mesh 2, available with hair:long) and "waist"
//    (on mesh 0, available with outfit:full, default 50 ≠ neutral 0).
//  - two RGBA32 textures: 4×4 for the body draws, 2×2 for the hair.
// Identical payload bytes share one id (§2).
testkit::TestPackage example_options() {
  using testkit::ByteVec;
  testkit::TestPackage p;
  p.minor = 5;
  auto payload = [&p](const ByteVec& bytes) {
    for (std::size_t i = 0; i < p.payloads.size(); ++i)
      if (p.payloads[i] == bytes) return static_cast<int>(i);
    p.payloads.push_back(bytes);
    return static_cast<int>(p.payloads.size() - 1);
  };
  auto append = [](ByteVec& to, const ByteVec& bytes) {
    to.insert(to.end(), bytes.begin(), bytes.end());
  };
  struct Vertex {
    float x, y, u, v;
    std::uint16_t w0, w1;
    std::uint8_t b0, b1;
  };
  // Stream 0: position, normal +z, tangent +x (w = +1), Float32 (stride 40);
  // stream 1: UV Float32×2; stream 2: the skin. Returns the manifest mesh.
  auto mesh = [&](const std::vector<Vertex>& vs, bool rigid, const Json& bones) {
    ByteVec s0;
    ByteVec s1;
    ByteVec s2;
    for (const Vertex& v : vs) {
      append(s0, testkit::f32_bytes({v.x, v.y, 0, 0, 0, 1, 1, 0, 0, 1}));
      append(s1, testkit::f32_bytes({v.u, v.v}));
      if (rigid) {
        append(s2, ByteVec{v.b0, 0, 0, 0});
      } else {
        append(s2, testkit::u16_bytes({v.w0, v.w1, 0, 0}));
        append(s2, ByteVec{v.b0, v.b1, 0, 0});
      }
    }
    Json attrs = Json::array({Json::array({0, 0, 3, 0, 0}), Json::array({1, 0, 3, 0, 12}),
                              Json::array({2, 0, 4, 0, 24}), Json::array({4, 0, 2, 1, 0})});
    if (rigid) {
      attrs.push_back(Json::array({13, 6, 4, 2, 0}));
    } else {
      attrs.push_back(Json::array({12, 4, 4, 2, 0}));
      attrs.push_back(Json::array({13, 6, 4, 2, 8}));
    }
    return Json{
        {"vertex_count", vs.size()},
        {"index_size", 2},
        {"streams", Json::array({Json{{"stride", 40}, {"payload", payload(s0)}},
                                 Json{{"stride", 8}, {"payload", payload(s1)}},
                                 Json{{"stride", rigid ? 4 : 12}, {"payload", payload(s2)}}})},
        {"attributes", attrs},
        {"bones", bones},
        {"draws", Json::array()}};
  };
  auto draw = [&](const Json& when, const std::vector<std::uint16_t>& indices, int component,
                  int slot, const char* material, int texture) {
    return Json{{"when", when},
                {"indices", payload(testkit::u16_bytes(indices))},
                {"count", indices.size()},
                {"material_component", component},
                {"material_slot", slot},
                {"material_name", material},
                {"textures", Json::array({texture})}};
  };
  const Json pelvis = Json{{"component", 0}, {"index", 0}, {"name", "Bip001_Pelvis"}};
  const Json spine = Json{{"component", 0}, {"index", 1}, {"name", "Bip001_Spine"}};
  const Json head = Json{{"component", 1}, {"index", 0}, {"name", "Bip001_Head"}};
  const std::vector<std::uint16_t> quad = {0, 1, 2, 0, 2, 3};
  const std::vector<std::uint16_t> upper_quad = {3, 2, 4, 3, 4, 5};

  Json& m = p.manifest;
  m["schema"] = 1;
  m["package_id"] = "charkit.example.options";
  m["name"] = "charkit example (BEM 1.5 options)";
  m["author"] = "charkit project (CC0)";
  m["version"] = "1.0.0";
  m["required_capabilities"] =
      Json::array({"native-materials", "palette-u8", "indices-u32", "composable-options",
                   "body-parameters", "mesh-position-deltas", "material-overrides-v1"});
  m["target"] = Json{
      {"character_id", "chr_0013_aglina"},
      {"platform", "windows-x64"},
      {"profile_id", "aglina.windows"},
      {"revision", "20260918"},
      {"snapshot", ""},
      {"world_resource", "chr_0013_aglina_postmodel"},
      {"ui_resource", "chr_0013_aglina_uimodel"},
      {"components",
       Json::array({Json{{"id", 0},
                         {"mesh_name", "S_actor_example_body_01_lod0"},
                         {"original_index_count", 300},
                         {"bone_names", Json::array({"Bip001_Pelvis", "Bip001_Spine"})},
                         {"materials",
                          Json::array({"M_actor_example_body_01", "M_actor_example_body_02"})}},
                    Json{{"id", 1},
                         {"mesh_name", "S_actor_example_hair_01_lod0"},
                         {"original_index_count", 150},
                         {"bone_names", Json::array({"Bip001_Head"})},
                         {"materials", Json::array({"M_actor_example_hair_01"})}}})}};

  // Mesh 0: the body, 0.5 wide and 1 high; bone 0 Pelvis, bone 1 Spine.
  Json body = mesh({{0, 0, 0, 0, 49151, 16384, 0, 1},
                    {0.5F, 0, 1, 0, 49151, 16384, 0, 1},
                    {0.5F, 0.5F, 1, 0.5F, 32768, 32767, 0, 1},
                    {0, 0.5F, 0, 0.5F, 32768, 32767, 0, 1},
                    {0.5F, 1, 1, 1, 65535, 0, 1, 0},
                    {0, 1, 0, 1, 65535, 0, 1, 0}},
                   false, Json::array({pelvis, spine}));
  body["draws"].push_back(draw(true, quad, 0, 0, "M_actor_example_body_01", 0));
  Json upper = draw(Json{{"eq", Json::array({"outfit", "full"})}}, upper_quad, 0, 1,
                    "M_actor_example_body_02", 0);
  upper["material_overrides"] =
      Json{{"colors", Json{{"_BaseColor", Json::array({0.6, 0.7, 1.0, 1.0})}}}};
  body["draws"].push_back(upper);
  // Mesh 1: short hair, one quad above the body, rigid on Head.
  Json short_hair = mesh({{0, 1, 0, 0, 0, 0, 0, 0},
                          {0.5F, 1, 1, 0, 0, 0, 0, 0},
                          {0.5F, 1.25F, 1, 1, 0, 0, 0, 0},
                          {0, 1.25F, 0, 1, 0, 0, 0, 0}},
                         true, Json::array({head}));
  short_hair["draws"].push_back(draw(true, quad, 1, 0, "M_actor_example_hair_01", 1));
  // Mesh 2: long hair, two quads from 1.25 down to 0.25; bone 0 Head, bone 1 Spine.
  Json long_hair = mesh({{0, 0.75F, 0, 0.5F, 32768, 32767, 0, 1},
                         {0.5F, 0.75F, 1, 0.5F, 32768, 32767, 0, 1},
                         {0.5F, 1.25F, 1, 1, 65535, 0, 0, 1},
                         {0, 1.25F, 0, 1, 65535, 0, 0, 1},
                         {0.5F, 0.25F, 1, 0, 16384, 49151, 0, 1},
                         {0, 0.25F, 0, 0, 16384, 49151, 0, 1}},
                        false, Json::array({head, spine}));
  long_hair["draws"].push_back(
      draw(true, {0, 1, 2, 0, 2, 3, 5, 4, 1, 5, 1, 0}, 1, 0, "M_actor_example_hair_01", 1));
  m["meshes"] = Json::array({body, short_hair, long_hair});

  // Textures: a 4×4 checker of two greys and a 2×2 brown.
  ByteVec checker;
  for (int i = 0; i < 16; ++i) {
    std::uint8_t g = ((i / 4 + i % 4) % 2) != 0 ? 0x60 : 0xA0;
    append(checker, ByteVec{g, g, g, 0xFF});
  }
  ByteVec brown;
  for (int i = 0; i < 4; ++i) append(brown, ByteVec{0x70, 0x48, 0x30, 0xFF});
  m["textures"] = Json::array({Json{{"width", 4},
                                    {"height", 4},
                                    {"mips", 1},
                                    {"format", 4},
                                    {"srgb", true},
                                    {"original_name", "T_actor_example_body_01_d"},
                                    {"payload", payload(checker)}},
                               Json{{"width", 2},
                                    {"height", 2},
                                    {"mips", 1},
                                    {"format", 4},
                                    {"srgb", true},
                                    {"original_name", "T_actor_example_hair_01_d"},
                                    {"payload", payload(brown)}}});

  m["option_groups"] = Json::parse(R"([
    {"id": "outfit", "name": "Outfit", "default": "full",
     "choices": [{"id": "full", "name": "Full"}, {"id": "light", "name": "Light"}]},
    {"id": "hair", "name": "Hair", "default": "short",
     "choices": [{"id": "short", "name": "Short"}, {"id": "long", "name": "Long"},
                 {"id": "game", "name": "Game's own"}]}])");
  m["component_rules"] = Json::parse(R"([
    {"target": 0, "candidates": [{"when": true, "operation": "replace", "mesh": 0}]},
    {"target": 1, "candidates": [
      {"when": {"eq": ["hair", "short"]}, "operation": "replace", "mesh": 1},
      {"when": {"eq": ["hair", "long"]}, "operation": "replace", "mesh": 2},
      {"when": {"eq": ["hair", "game"]}, "operation": "keep"}]}])");

  // Two sliders (§10), each with a neutral frame at 0 and a frame at 100:
  // "length" on mesh 2, moving its bottom vertices (4, 5) down by 0.25,
  // available with hair:long (so only while mesh 2 is shown); "waist" on
  // mesh 0, moving its middle vertices (2, 3) apart by 0.125 each, step 10,
  // default 50 (not its neutral 0), available with outfit:full — with
  // outfit:light mesh 0 is still shown but the slider is unavailable and
  // evaluates at its neutral.
  auto sparse = [&](const std::vector<std::pair<std::uint32_t, float>>& moves, bool vertical) {
    const std::string header =
        "{\"count\":" + std::to_string(moves.size()) + ",\"encoding\":\"sparse-position-f32\"}";
    ByteVec delta = testkit::u32_bytes({static_cast<std::uint32_t>(header.size())});
    delta.insert(delta.end(), header.begin(), header.end());
    for (const auto& [vertex, d] : moves) {
      append(delta, testkit::u32_bytes({vertex}));
      append(delta, vertical ? testkit::f32_bytes({0, d, 0}) : testkit::f32_bytes({d, 0, 0}));
    }
    return Json::array(
        {Json{{"value", 0}, {"neutral", true}}, Json{{"value", 100},
                                                     {"payload", payload(delta)},
                                                     {"count", moves.size()},
                                                     {"encoding", "sparse-position-f32"}}});
  };
  m["parameters"] = Json::parse(R"([
    {"id": "length", "name": "Hair length", "min": 0, "max": 100, "neutral": 0, "default": 0,
     "step": 1, "available_when": {"eq": ["hair", "long"]}},
    {"id": "waist", "name": "Waist", "min": 0, "max": 100, "neutral": 0, "default": 50,
     "step": 10, "available_when": {"eq": ["outfit", "full"]}}])");
  m["mesh_deformations"] =
      Json::array({Json{{"mesh", 2},
                        {"parameter", "length"},
                        {"frames", sparse({{4, -0.25F}, {5, -0.25F}}, true)}},
                   Json{{"mesh", 0},
                        {"parameter", "waist"},
                        {"frames", sparse({{2, 0.125F}, {3, -0.125F}}, false)}}});
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
      {"example-1.5-options.bem", binary_best_codec(example_options())},
  };
}

}  // namespace charkit::examples
