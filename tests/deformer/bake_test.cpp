// Baking pose-model offsets into glTF morph targets and the pose-library
// JSON: RiggedSimple.glb with a hand-made linear model, a hand-built GLB with
// two primitives, an existing morph target and a weights animation, the pose
// library round trip and the errors.
#include "charkit/deformer/bake.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../scene/glb_test_util.h"
#include "charkit/core/json.h"
#include "charkit/scene/intake.h"

namespace charkit::deformer {
namespace {

std::vector<std::uint8_t> read_all(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

std::vector<std::uint8_t> rigged_simple() {
  return read_all(std::string(CHARKIT_TEST_DATA) + "/models/RiggedSimple.glb");
}

InputSpec one_bone(const std::string& name) {
  InputSpec s;
  s.bones.push_back({name, {}});
  return s;
}

// A linear model by hand: W[f][i] = c(f, i), a pattern with both signs.
PoseModel hand_linear(const InputSpec& spec, std::size_t vertices,
                      FeatureLayout layout = FeatureLayout::kAxisAngle) {
  PoseModel m;
  m.spec = spec;
  m.layout = layout;
  m.vertex_count = vertices;
  m.kind = ModelKind::kLinear;
  const std::size_t f = m.feature_count(), o = 3 * vertices;
  std::vector<float> w(f * o);
  for (std::size_t r = 0; r < f; ++r)
    for (std::size_t i = 0; i < o; ++i)
      w[r * o + i] = 0.01F * static_cast<float>((r + 1) * (i % 7 + 1)) * (i % 2 ? -1.0F : 1.0F);
  auto lm = LinearModel::make(f, o, std::move(w));
  EXPECT_TRUE(lm);
  m.linear = std::move(*lm);
  return m;
}

PoseLibraryEntry euler_pose(const std::string& name, double x, double y, double z) {
  PoseLibraryEntry e;
  e.name = name;
  e.pose.rotations.push_back(quaternion_from_euler_xyz_degrees(x, y, z));
  e.pose.euler_deg = {x, y, z};
  return e;
}

float f32_at(const std::vector<std::uint8_t>& b, std::size_t at) {
  return std::bit_cast<float>(charkit::testkit::glb_u32(b, at));
}

// The floats of accessor `a` of a GLB (tightly packed, float components).
std::vector<float> glb_floats(const charkit::testkit::GlbChunks& g, std::size_t a,
                              std::size_t components) {
  const auto bytes = charkit::testkit::accessor_bytes(g, a, 4 * components);
  std::vector<float> out;
  for (std::size_t i = 0; i + 4 <= bytes.size(); i += 4) out.push_back(f32_at(bytes, i));
  return out;
}

TEST(Bake, RiggedSimpleThreePoses) {
  const auto src = rigged_simple();
  auto rig = scene::load_rig(src);
  ASSERT_TRUE(rig) << rig.error().to_string();
  ASSERT_EQ(rig->vertex_count(), 96u);
  ASSERT_TRUE(rig->morph_targets.empty());
  const InputSpec spec = one_bone("joint_3");
  const PoseModel model = hand_linear(spec, 96);
  ASSERT_TRUE(validate(model));
  const std::vector<PoseLibraryEntry> poses = {
      euler_pose("bend_x", 30, 0, 0), euler_pose("twist", 0, 0, -20), euler_pose("mix", 10, 15, 5)};
  BakeOptions o;
  o.prefix = "ck_";
  auto baked = bake_shape_keys(src, *rig, model, poses, o);
  ASSERT_TRUE(baked) << baked.error().to_string();
  EXPECT_EQ(baked->shape_keys, (std::vector<std::string>{"ck_bend_x", "ck_twist", "ck_mix"}));

  // The file passes intake without warnings, and the rig reads the targets.
  auto info = scene::inspect_model(baked->gltf);
  ASSERT_TRUE(info) << info.error().to_string();
  EXPECT_TRUE(info->warnings.empty()) << info->warnings.front().code;
  EXPECT_EQ(info->morph_targets, 3u);
  auto back = scene::load_rig(baked->gltf);
  ASSERT_TRUE(back) << back.error().to_string();
  ASSERT_EQ(back->morph_targets.size(), 3u);
  EXPECT_EQ(back->positions, rig->positions);
  PoseModelEvaluator ev(model);
  std::vector<float> features(3), offsets(3 * 96);
  const std::size_t o3 = 3 * 96;
  for (std::size_t p = 0; p < 3; ++p) {
    EXPECT_EQ(back->morph_targets[p].name, "ck_" + poses[p].name);
    ASSERT_TRUE(pose_model_features(model, *rig, poses[p].pose, features));
    ASSERT_TRUE(ev.offsets(features, offsets));
    EXPECT_EQ(back->morph_targets[p].position_deltas, offsets) << p;
  }
  // Independently for the pure x bend: the rotation vector is (pi/6, 0, 0),
  // so the offsets are pi/6 times row 0 of W.
  const double angle = 3.14159265358979323846 / 6;
  for (std::size_t i = 0; i < o3; ++i) {
    const double w0 = 0.01 * static_cast<double>(i % 7 + 1) * (i % 2 ? -1.0 : 1.0);
    EXPECT_NEAR(back->morph_targets[0].position_deltas[i], angle * w0, 1e-6) << i;
  }

  // Everything that was there is still there, byte for byte.
  const auto a = charkit::testkit::split_glb(src);
  const auto b = charkit::testkit::split_glb(baked->gltf);
  for (const char* key : {"asset", "scene", "scenes", "nodes", "skins", "materials", "animations"})
    EXPECT_EQ(a.json[key], b.json[key]) << key;
  ASSERT_EQ(b.json["meshes"].size(), a.json["meshes"].size());
  const auto& pa = a.json["meshes"][0]["primitives"][0];
  const auto& pb = b.json["meshes"][0]["primitives"][0];
  EXPECT_EQ(pa["attributes"], pb["attributes"]);
  EXPECT_EQ(pa["indices"], pb["indices"]);
  EXPECT_EQ(pa["material"], pb["material"]);
  ASSERT_EQ(pb["targets"].size(), 3u);
  EXPECT_EQ(b.json["meshes"][0]["extras"]["targetNames"],
            nlohmann::json({"ck_bend_x", "ck_twist", "ck_mix"}));
  EXPECT_EQ(b.json["meshes"][0]["name"], "Cylinder");
  const std::size_t old_acc = a.json["accessors"].size();
  for (std::size_t i = 0; i < old_acc; ++i)
    EXPECT_EQ(a.json["accessors"][i], b.json["accessors"][i]);
  for (std::size_t i = 0; i < a.json["bufferViews"].size(); ++i)
    EXPECT_EQ(a.json["bufferViews"][i], b.json["bufferViews"][i]);
  const std::size_t old_len = a.json["buffers"][0]["byteLength"].get<std::size_t>();
  ASSERT_GE(b.bin.size(), old_len + 3 * o3 * 4);
  EXPECT_TRUE(std::equal(a.bin.begin(), a.bin.begin() + static_cast<std::ptrdiff_t>(old_len),
                         b.bin.begin()));
  EXPECT_EQ(b.json["buffers"][0]["byteLength"].get<std::size_t>() % 4, 0u);
  // Each new target: a float VEC3 accessor with min/max of its own data.
  for (std::size_t p = 0; p < 3; ++p) {
    const std::size_t acc = pb["targets"][p]["POSITION"].get<std::size_t>();
    EXPECT_GE(acc, old_acc);
    const auto& aj = b.json["accessors"][acc];
    EXPECT_EQ(aj["componentType"], 5126);
    EXPECT_EQ(aj["type"], "VEC3");
    EXPECT_EQ(aj["count"], 96);
    const auto v = glb_floats(b, acc, 3);
    ASSERT_EQ(v.size(), o3);
    for (std::size_t k = 0; k < 3; ++k) {
      float lo = v[k], hi = v[k];
      for (std::size_t i = k; i < o3; i += 3) {
        lo = std::min(lo, v[i]);
        hi = std::max(hi, v[i]);
      }
      EXPECT_EQ(aj["min"][k].get<float>(), lo);
      EXPECT_EQ(aj["max"][k].get<float>(), hi);
    }
  }

  // The pose library reads back to the same poses.
  auto lib = read_pose_library(baked->pose_library_json, spec);
  ASSERT_TRUE(lib) << lib.error().to_string();
  ASSERT_EQ(lib->size(), 3u);
  for (std::size_t p = 0; p < 3; ++p) {
    EXPECT_EQ((*lib)[p].name, poses[p].name);
    const Quaternion& q0 = poses[p].pose.rotations[0];
    const Quaternion& q1 = (*lib)[p].pose.rotations[0];
    EXPECT_EQ(q1.x, q0.x);
    EXPECT_EQ(q1.y, q0.y);
    EXPECT_EQ(q1.z, q0.z);
    EXPECT_EQ(q1.w, q0.w);
    EXPECT_EQ((*lib)[p].pose.euler_deg, poses[p].pose.euler_deg);
  }
  const auto lj = nlohmann::json::parse(baked->pose_library_json);
  EXPECT_EQ(lj["format"], "charkit.pose_library");
  EXPECT_EQ(lj["version"], 1);
  EXPECT_EQ(lj["mesh"], "Cylinder");
  EXPECT_EQ(lj["bones"], nlohmann::json({"joint_3"}));
  EXPECT_EQ(lj["poses"][1]["shape_key"], "ck_twist");
  EXPECT_EQ(lj["poses"][1]["rotations"]["joint_3"]["euler_xyz_deg"], nlohmann::json({0, 0, -20}));
}

// ---- a hand-built GLB: two primitives (3 and 6 vertices), one morph target
// "smile", default weights on the mesh and the node, a weights animation ----

struct HandGlb {
  nlohmann::json j;
  std::vector<std::uint8_t> bin;

  // One buffer view + accessor over raw bytes; returns the accessor index.
  std::size_t add(const std::vector<std::uint8_t>& bytes, int component, const char* type,
                  std::size_t count, nlohmann::json extra = nlohmann::json::object()) {
    while (bin.size() % 4) bin.push_back(0);
    j["bufferViews"].push_back(
        {{"buffer", 0}, {"byteOffset", bin.size()}, {"byteLength", bytes.size()}});
    bin.insert(bin.end(), bytes.begin(), bytes.end());
    nlohmann::json a = {{"bufferView", j["bufferViews"].size() - 1},
                        {"componentType", component},
                        {"count", count},
                        {"type", type}};
    a.update(extra);
    j["accessors"].push_back(a);
    return j["accessors"].size() - 1;
  }
  std::size_t add_f(const std::vector<float>& v, const char* type, std::size_t n,
                    nlohmann::json extra = nlohmann::json::object()) {
    std::vector<std::uint8_t> b;
    for (float f : v) {
      const auto u = std::bit_cast<std::uint32_t>(f);
      for (int i = 0; i < 4; ++i) b.push_back(static_cast<std::uint8_t>(u >> (8 * i)));
    }
    return add(b, 5126, type, n, std::move(extra));
  }

  std::vector<std::uint8_t> glb() const {
    std::string text = j.dump();
    while (text.size() % 4) text.push_back(' ');
    std::vector<std::uint8_t> b2 = bin;
    while (b2.size() % 4) b2.push_back(0);
    std::vector<std::uint8_t> out;
    auto u32 = [&](std::uint32_t u) {
      for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(u >> (8 * i)));
    };
    u32(0x46546C67);
    u32(2);
    u32(static_cast<std::uint32_t>(12 + 8 + text.size() + 8 + b2.size()));
    u32(static_cast<std::uint32_t>(text.size()));
    u32(0x4E4F534A);
    out.insert(out.end(), text.begin(), text.end());
    u32(static_cast<std::uint32_t>(b2.size()));
    u32(0x004E4942);
    out.insert(out.end(), b2.begin(), b2.end());
    return out;
  }
};

HandGlb two_primitive_glb() {
  HandGlb h;
  h.j = {{"asset", {{"version", "2.0"}}},
         {"scene", 0},
         {"scenes", {{{"nodes", {0, 2}}}}},
         {"nodes",
          {{{"name", "root"}, {"children", {1}}},
           {{"name", "bend"}, {"translation", {0, 1, 0}}},
           {{"name", "body"}, {"mesh", 0}, {"skin", 0}, {"weights", {0.5}}}}},
         {"skins", {{{"joints", {0, 1}}}}},
         {"materials", {{{"name", "skin"}}}},
         {"bufferViews", nlohmann::json::array()},
         {"accessors", nlohmann::json::array()}};
  const std::vector<float> pos_a = {0, 0, 0, 1, 0, 0, 0, 1, 0};
  const std::vector<float> pos_b = {0, 0, 1, 1, 0, 1, 0, 1, 1, 1, 0, 1, 1, 1, 1, 0, 1, 1};
  const auto pa = h.add_f(pos_a, "VEC3", 3, {{"min", {0, 0, 0}}, {"max", {1, 1, 0}}});
  const auto pb = h.add_f(pos_b, "VEC3", 6, {{"min", {0, 0, 1}}, {"max", {1, 1, 1}}});
  const auto ja = h.add(std::vector<std::uint8_t>(12, 0), 5121, "VEC4", 3);
  std::vector<std::uint8_t> jb(24, 0);
  for (std::size_t v = 0; v < 6; ++v) jb[4 * v] = 1;
  const auto jb_acc = h.add(jb, 5121, "VEC4", 6);
  std::vector<float> wa(12, 0.0F), wb(24, 0.0F);
  for (std::size_t v = 0; v < 3; ++v) wa[4 * v] = 1;
  for (std::size_t v = 0; v < 6; ++v) wb[4 * v] = 1;
  const auto wa_acc = h.add_f(wa, "VEC4", 3);
  const auto wb_acc = h.add_f(wb, "VEC4", 6);
  std::vector<float> ma(9, 0.0F), mb(18, 0.0F);
  ma[1] = 0.25F;
  mb[17] = -0.5F;
  const auto ma_acc = h.add_f(ma, "VEC3", 3, {{"min", {0, 0, 0}}, {"max", {0, 0.25, 0}}});
  const auto mb_acc = h.add_f(mb, "VEC3", 6, {{"min", {0, 0, -0.5}}, {"max", {0, 0, 0}}});
  const auto times = h.add_f({0.0F, 1.0F}, "SCALAR", 2, {{"min", {0}}, {"max", {1}}});
  const auto values = h.add_f({0.0F, 1.0F}, "SCALAR", 2);
  h.j["meshes"] = {
      {{"name", "two"},
       {"weights", {0.5}},
       {"extras", {{"targetNames", {"smile"}}}},
       {"primitives",
        {{{"attributes", {{"POSITION", pa}, {"JOINTS_0", ja}, {"WEIGHTS_0", wa_acc}}},
          {"material", 0},
          {"targets", {{{"POSITION", ma_acc}}}}},
         {{"attributes", {{"POSITION", pb}, {"JOINTS_0", jb_acc}, {"WEIGHTS_0", wb_acc}}},
          {"targets", {{{"POSITION", mb_acc}}}}}}}}};
  h.j["animations"] = {
      {{"name", "blink"},
       {"channels", {{{"sampler", 0}, {"target", {{"node", 2}, {"path", "weights"}}}}}},
       {"samplers", {{{"input", times}, {"output", values}, {"interpolation", "LINEAR"}}}}}};
  while (h.bin.size() % 4) h.bin.push_back(0);
  h.j["buffers"] = {{{"byteLength", h.bin.size()}}};
  return h;
}

TEST(Bake, TwoPrimitivesKeepTargetsWeightsAndAnimation) {
  const auto src = two_primitive_glb().glb();
  auto src_info = scene::inspect_model(src);
  ASSERT_TRUE(src_info) << src_info.error().to_string();
  ASSERT_TRUE(src_info->warnings.empty()) << src_info->warnings.front().code;
  auto rig = scene::load_rig(src);
  ASSERT_TRUE(rig) << rig.error().to_string();
  ASSERT_EQ(rig->vertex_count(), 9u);
  EXPECT_EQ(rig->primitive_vertex_offsets, (std::vector<std::size_t>{0, 3}));
  const InputSpec spec = one_bone("bend");
  const PoseModel model = hand_linear(spec, 9);
  const std::vector<PoseLibraryEntry> poses = {euler_pose("up", 40, 0, 0),
                                               euler_pose("side", 0, 25, 10)};
  auto baked = bake_shape_keys(src, *rig, model, poses, {});
  ASSERT_TRUE(baked) << baked.error().to_string();
  auto info = scene::inspect_model(baked->gltf);
  ASSERT_TRUE(info) << info.error().to_string();
  EXPECT_TRUE(info->warnings.empty());

  const auto g = charkit::testkit::split_glb(baked->gltf);
  const auto& mesh = g.json["meshes"][0];
  EXPECT_EQ(mesh["weights"], nlohmann::json({0.5, 0.0, 0.0}));
  EXPECT_EQ(g.json["nodes"][2]["weights"], nlohmann::json({0.5, 0.0, 0.0}));
  EXPECT_EQ(mesh["extras"]["targetNames"], nlohmann::json({"smile", "up", "side"}));
  EXPECT_EQ(mesh["primitives"][0]["material"], 0);
  EXPECT_EQ(g.json["materials"], nlohmann::json({{{"name", "skin"}}}));
  // Per primitive: the first 3 vertices' offsets in primitive 0, the next 6 in 1.
  PoseModelEvaluator ev(model);
  std::vector<float> features(3), offsets(27);
  for (std::size_t p = 0; p < 2; ++p) {
    ASSERT_TRUE(pose_model_features(model, *rig, poses[p].pose, features));
    ASSERT_TRUE(ev.offsets(features, offsets));
    const auto t0 = mesh["primitives"][0]["targets"][1 + p]["POSITION"].get<std::size_t>();
    const auto t1 = mesh["primitives"][1]["targets"][1 + p]["POSITION"].get<std::size_t>();
    EXPECT_EQ(g.json["accessors"][t0]["count"], 3);
    EXPECT_EQ(g.json["accessors"][t1]["count"], 6);
    EXPECT_EQ(glb_floats(g, t0, 3), std::vector<float>(offsets.begin(), offsets.begin() + 9));
    EXPECT_EQ(glb_floats(g, t1, 3), std::vector<float>(offsets.begin() + 9, offsets.end()));
  }
  // The old target is where it was.
  EXPECT_EQ(mesh["primitives"][0]["targets"][0]["POSITION"], 6);
  EXPECT_EQ(mesh["primitives"][1]["targets"][0]["POSITION"], 7);
  // The weights animation: keyframes (0) and (1) become (0, 0, 0) and (1, 0, 0).
  const auto out = g.json["animations"][0]["samplers"][0]["output"].get<std::size_t>();
  EXPECT_EQ(g.json["accessors"][out]["count"], 6);
  EXPECT_EQ(glb_floats(g, out, 1), (std::vector<float>{0, 0, 0, 1, 0, 0}));
  EXPECT_EQ(g.json["animations"][0]["samplers"][0]["input"], 8);
  EXPECT_EQ(g.json["animations"][0]["channels"],
            two_primitive_glb().j["animations"][0]["channels"]);

  auto back = scene::load_rig(baked->gltf);
  ASSERT_TRUE(back) << back.error().to_string();
  ASSERT_EQ(back->morph_targets.size(), 3u);
  EXPECT_EQ(back->morph_targets[0].name, "smile");
  EXPECT_EQ(back->morph_targets[0].position_deltas, rig->morph_targets[0].position_deltas);

  // The same bake as glTF JSON with a data: URI buffer reads back the same.
  BakeOptions json_out;
  json_out.glb = false;
  auto text = bake_shape_keys(src, *rig, model, poses, json_out);
  ASSERT_TRUE(text) << text.error().to_string();
  ASSERT_FALSE(text->gltf.empty());
  EXPECT_EQ(text->gltf[0], '{');
  auto tinfo = scene::inspect_model(text->gltf);
  ASSERT_TRUE(tinfo) << tinfo.error().to_string();
  EXPECT_TRUE(tinfo->warnings.empty());
  EXPECT_EQ(tinfo->container, scene::ModelContainer::kGltfJson);
  auto tback = scene::load_rig(text->gltf);
  ASSERT_TRUE(tback) << tback.error().to_string();
  ASSERT_EQ(tback->morph_targets.size(), 3u);
  for (std::size_t t = 0; t < 3; ++t)
    EXPECT_EQ(tback->morph_targets[t].position_deltas, back->morph_targets[t].position_deltas);
}

// A neural model by hand: one bone's 3 features -> 24 ELU -> 5 morph weights
// over 96 vertices, values from a fixed pattern.
PoseModel hand_neural(const InputSpec& spec, std::size_t vertices) {
  PoseModel m;
  m.spec = spec;
  m.vertex_count = vertices;
  m.kind = ModelKind::kNeural;
  const std::size_t f = m.feature_count(), hidden = 24, k = 5;
  auto pattern = [](std::size_t i, float scale) {
    return scale * static_cast<float>(static_cast<int>((i * 37 + 11) % 23) - 11) / 11.0F;
  };
  m.mlp.input_mean.assign(f, 0.1F);
  m.mlp.input_std.assign(f, 0.7F);
  DenseLayer a{f, hidden, {}, {}}, b{hidden, k, {}, {}};
  for (std::size_t i = 0; i < f * hidden; ++i) a.weights.push_back(pattern(i, 0.8F));
  for (std::size_t i = 0; i < hidden; ++i) a.biases.push_back(pattern(i + 5, 0.1F));
  for (std::size_t i = 0; i < hidden * k; ++i) b.weights.push_back(pattern(i + 3, 0.3F));
  for (std::size_t i = 0; i < k; ++i) b.biases.push_back(pattern(i + 7, 0.05F));
  m.mlp.layers = {std::move(a), std::move(b)};
  for (std::size_t c = 0; c < k; ++c) m.morph_names.push_back("m" + std::to_string(c));
  for (std::size_t i = 0; i < k * 3 * vertices; ++i) m.morphs.push_back(pattern(i, 0.02F));
  return m;
}

// More poses than one batch of the model (64) and not a multiple of it: each
// baked target has the bits of the pose run through the model alone.
TEST(Bake, ManyPosesInBatchesEqualEachPoseAlone) {
  const auto src = rigged_simple();
  auto rig = scene::load_rig(src);
  ASSERT_TRUE(rig) << rig.error().to_string();
  const PoseModel model = hand_neural(one_bone("joint_3"), 96);
  ASSERT_TRUE(validate(model)) << validate(model).error().to_string();
  std::vector<PoseLibraryEntry> poses;
  for (int i = 0; i < 150; ++i)
    poses.push_back(euler_pose("p" + std::to_string(i), (i * 7) % 90 - 45, (i * 13) % 60 - 30,
                               (i * 3) % 40 - 20));
  auto baked = bake_shape_keys(src, *rig, model, poses, BakeOptions{});
  ASSERT_TRUE(baked) << baked.error().to_string();
  auto back = scene::load_rig(baked->gltf);
  ASSERT_TRUE(back) << back.error().to_string();
  ASSERT_EQ(back->morph_targets.size(), poses.size());
  PoseModelEvaluator ev(model);
  std::vector<float> features(3), offsets(3 * 96);
  std::size_t moving = 0;
  for (std::size_t p = 0; p < poses.size(); ++p) {
    ASSERT_TRUE(pose_model_features(model, *rig, poses[p].pose, features));
    ASSERT_TRUE(ev.offsets(features, offsets));
    for (float& d : offsets)
      if (std::abs(d) <= BakeOptions{}.epsilon) d = 0.0F;
    ASSERT_EQ(back->morph_targets[p].position_deltas.size(), offsets.size());
    for (std::size_t i = 0; i < offsets.size(); ++i)
      ASSERT_EQ(std::bit_cast<std::uint32_t>(back->morph_targets[p].position_deltas[i]),
                std::bit_cast<std::uint32_t>(offsets[i]))
          << "pose " << p << " float " << i;
    moving += offsets[0] != 0.0F;
  }
  EXPECT_GT(moving, 100u);  // the poses give different, non-zero offsets
}

TEST(Bake, EpsilonZeroesSmallOffsets) {
  const auto src = two_primitive_glb().glb();
  auto rig = scene::load_rig(src);
  ASSERT_TRUE(rig);
  const InputSpec spec = one_bone("bend");
  PoseModel model = hand_linear(spec, 9);
  // Row 0 (the x rotation): 1e-4 on every x component, 0.01 (i + 1) elsewhere.
  std::vector<float> w(3 * 27, 0.0F);
  for (std::size_t i = 0; i < 27; ++i)
    w[i] = i % 3 == 0 ? 1e-4F : 0.01F * static_cast<float>(i + 1);
  model.linear = *LinearModel::make(3, 27, w);
  BakeOptions o;
  o.epsilon = 1e-3F;
  const std::vector<PoseLibraryEntry> poses = {euler_pose("up", 30, 0, 0)};
  auto baked = bake_shape_keys(src, *rig, model, poses, o);
  ASSERT_TRUE(baked) << baked.error().to_string();
  auto back = scene::load_rig(baked->gltf);
  ASSERT_TRUE(back);
  const auto& d = back->morph_targets[1].position_deltas;
  ASSERT_EQ(d.size(), 27u);
  const double angle = 3.14159265358979323846 / 6;
  for (std::size_t i = 0; i < 27; ++i) {
    if (i % 3 == 0)
      EXPECT_EQ(d[i], 0.0F) << i;  // |pi/6 * 1e-4| <= 1e-3
    else
      EXPECT_NEAR(d[i], angle * 0.01 * static_cast<double>(i + 1), 1e-6) << i;
  }
}

TEST(Bake, Errors) {
  const auto src = rigged_simple();
  auto rig = scene::load_rig(src);
  ASSERT_TRUE(rig);
  const InputSpec spec = one_bone("joint_3");
  const std::vector<PoseLibraryEntry> poses = {euler_pose("a", 10, 0, 0)};

  auto wrong = bake_shape_keys(src, *rig, hand_linear(spec, 95), poses, {});
  ASSERT_FALSE(wrong);
  EXPECT_EQ(wrong.error().code, "BAKE_VERTEX_COUNT");

  const PoseModel model = hand_linear(spec, 96);
  const std::vector<PoseLibraryEntry> twice = {euler_pose("a", 10, 0, 0),
                                               euler_pose("a", 20, 0, 0)};
  auto dup = bake_shape_keys(src, *rig, model, twice, {});
  ASSERT_FALSE(dup);
  EXPECT_EQ(dup.error().code, "BAKE_POSE_NAME");

  auto none = bake_shape_keys(src, *rig, model, {}, {});
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code, "BAKE_EMPTY");

  const PoseModel other = hand_linear(one_bone("elbow"), 96);
  auto bone = bake_shape_keys(src, *rig, other, poses, {});
  ASSERT_FALSE(bone);
  EXPECT_EQ(bone.error().code, "TARGETS_BONE");

  // A shape key name the mesh already has.
  const auto two = two_primitive_glb().glb();
  auto rig2 = scene::load_rig(two);
  ASSERT_TRUE(rig2);
  const std::vector<PoseLibraryEntry> smile = {euler_pose("smile", 10, 0, 0)};
  auto clash = bake_shape_keys(two, *rig2, hand_linear(one_bone("bend"), 9), smile, {});
  ASSERT_FALSE(clash);
  EXPECT_EQ(clash.error().code, "BAKE_NAME_CLASH");

  // The rig of another file.
  auto mismatch = bake_shape_keys(two, *rig, model, poses, {});
  ASSERT_FALSE(mismatch);
  EXPECT_EQ(mismatch.error().code, "BAKE_RIG_MISMATCH");
}

// ---- features and the pose library --------------------------------------------

TEST(Bake, EngineFeaturesUseTheRigsRestRotation) {
  auto rig = scene::load_rig(rigged_simple());
  ASSERT_TRUE(rig);
  const InputSpec spec = one_bone("joint_3");
  const PoseModel model = hand_linear(spec, 96, FeatureLayout::kEngine);
  ASSERT_EQ(model.feature_count(), 6u);
  const auto& names = rig->skeleton.joint_names;
  const std::size_t j =
      static_cast<std::size_t>(std::find(names.begin(), names.end(), "joint_3") - names.begin());
  ASSERT_LT(j, names.size());
  const auto& r = rig->skeleton.local_transforms[j].rotation;
  const Quaternion rest{r[0], r[1], r[2], r[3]};
  const Quaternion pose_q = quaternion_from_euler_xyz_degrees(0, 0, 30);
  Pose pose;
  pose.rotations = {pose_q};
  std::vector<float> out(6);
  ASSERT_TRUE(pose_model_features(model, *rig, pose, out));
  const auto expect = engine_rotation_features(multiply(rest, pose_q));
  for (std::size_t k = 0; k < 6; ++k) EXPECT_NEAR(out[k], expect[k], 1e-6) << k;
  // At rest the features are the rest rotation's, not the identity's.
  pose.rotations = {Quaternion{}};
  ASSERT_TRUE(pose_model_features(model, *rig, pose, out));
  const auto at_rest = engine_rotation_features(rest);
  for (std::size_t k = 0; k < 6; ++k) EXPECT_NEAR(out[k], at_rest[k], 1e-6) << k;

  std::vector<float> small(5);
  auto shape = pose_model_features(model, *rig, pose, small);
  ASSERT_FALSE(shape);
  EXPECT_EQ(shape.error().code, "FEATURE_SHAPE");
  auto missing = pose_model_features(hand_linear(one_bone("nope"), 96, FeatureLayout::kEngine),
                                     *rig, pose, out);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, "TARGETS_BONE");
}

InputSpec two_bones_one_curve() {
  InputSpec s;
  s.bones.push_back({"arm", {}});
  s.bones.push_back({"hand", {}});
  s.curves.push_back({"smile", 0.0, 1.0});
  return s;
}

TEST(PoseLibrary, RoundTripAndDerivedEuler) {
  const InputSpec spec = two_bones_one_curve();
  SampleOptions so;
  so.random_poses = 4;
  so.seed = 9;
  auto sampled = sample_poses(spec, so);
  ASSERT_TRUE(sampled);
  std::vector<PoseLibraryEntry> poses;
  for (std::size_t i = 0; i < sampled->size(); ++i)
    poses.push_back({"pose_" + std::to_string(i), (*sampled)[i]});
  // A pose without Euler angles: they are derived from the quaternions,
  // including the gimbal case (y = 90 degrees, z taken as 0).
  PoseLibraryEntry listed;
  listed.name = "listed";
  listed.pose.rotations = {quaternion_from_euler_xyz_degrees(10, 20, 30),
                           quaternion_from_euler_xyz_degrees(25, 90, 0)};
  listed.pose.curves = {0.75};
  poses.push_back(listed);
  const std::vector<std::string> keys = {"k0"};
  const std::string text = write_pose_library(spec, "body", poses, keys);
  auto back = read_pose_library(text, spec);
  ASSERT_TRUE(back) << back.error().to_string();
  ASSERT_EQ(back->size(), poses.size());
  for (std::size_t i = 0; i < poses.size(); ++i) {
    EXPECT_EQ((*back)[i].name, poses[i].name);
    ASSERT_EQ((*back)[i].pose.rotations.size(), 2u);
    for (std::size_t b = 0; b < 2; ++b) {
      EXPECT_EQ((*back)[i].pose.rotations[b].x, poses[i].pose.rotations[b].x);
      EXPECT_EQ((*back)[i].pose.rotations[b].y, poses[i].pose.rotations[b].y);
      EXPECT_EQ((*back)[i].pose.rotations[b].z, poses[i].pose.rotations[b].z);
      EXPECT_EQ((*back)[i].pose.rotations[b].w, poses[i].pose.rotations[b].w);
    }
    EXPECT_EQ((*back)[i].pose.curves, poses[i].pose.curves);
    if (i + 1 < poses.size()) {
      EXPECT_EQ((*back)[i].pose.euler_deg, poses[i].pose.euler_deg);
    }
  }
  const auto& e = back->back().pose.euler_deg;
  ASSERT_EQ(e.size(), 6u);
  const double expect[6] = {10, 20, 30, 25, 90, 0};
  for (std::size_t k = 0; k < 6; ++k) EXPECT_NEAR(e[k], expect[k], 1e-6) << k;
  const auto j = nlohmann::json::parse(text);
  EXPECT_EQ(j["poses"][0]["shape_key"], "k0");
  EXPECT_FALSE(j["poses"][1].contains("shape_key"));
  EXPECT_EQ(j["curves"], nlohmann::json({"smile"}));
  EXPECT_EQ(j["poses"].back()["curves"]["smile"], 0.75);
}

TEST(PoseLibrary, HandWrittenLibrary) {
  const InputSpec spec = two_bones_one_curve();
  // Euler only; a bone and the curve left out (rest, 0); a non-unit quaternion.
  const std::string text = R"({"format": "charkit.pose_library", "version": 1,
    "poses": [{"name": "a", "rotations": {"hand": {"euler_xyz_deg": [0, 0, 90]}}},
              {"name": "b", "rotations": {"arm": {"quaternion": [0, 0, 2, 0]}},
               "curves": {"smile": 0.5}}]})";
  auto lib = read_pose_library(text, spec);
  ASSERT_TRUE(lib) << lib.error().to_string();
  ASSERT_EQ(lib->size(), 2u);
  const Pose& a = (*lib)[0].pose;
  EXPECT_EQ(a.rotations[0].w, 1.0);
  EXPECT_NEAR(a.rotations[1].z, std::sqrt(0.5), 1e-12);
  EXPECT_NEAR(a.rotations[1].w, std::sqrt(0.5), 1e-12);
  EXPECT_EQ(a.curves, std::vector<double>{0.0});
  const Pose& b = (*lib)[1].pose;
  EXPECT_EQ(b.rotations[0].z, 1.0);  // normalised
  EXPECT_EQ(b.rotations[0].w, 0.0);
  EXPECT_NEAR(std::abs(b.euler_deg[2]), 180.0, 1e-9);
  EXPECT_EQ(b.curves, std::vector<double>{0.5});
}

TEST(PoseLibrary, Errors) {
  const InputSpec spec = two_bones_one_curve();
  auto code = [&](const std::string& text) {
    auto r = read_pose_library(text, spec);
    return r ? std::string("ok") : r.error().code;
  };
  auto pointer = [&](const std::string& text) {
    auto r = read_pose_library(text, spec);
    return r ? std::string("ok") : r.error().location.pointer;
  };
  const std::string head = R"({"format": "charkit.pose_library", "version": 1, )";
  EXPECT_EQ(
      code(head +
           R"("poses": [{"name": "a", "rotations": {"leg": {"euler_xyz_deg": [0, 0, 1]}}}]})"),
      "POSE_LIBRARY_BONE");
  EXPECT_EQ(
      pointer(head +
              R"("poses": [{"name": "a", "rotations": {"leg": {"euler_xyz_deg": [0, 0, 1]}}}]})"),
      "/poses/0/rotations/leg");
  EXPECT_EQ(code(head + R"("bones": ["arm", "leg"], "poses": []})"), "POSE_LIBRARY_BONE");
  EXPECT_EQ(code(head + R"("poses": [{"name": "a", "curves": {"frown": 1}}]})"),
            "POSE_LIBRARY_CURVE");
  EXPECT_EQ(code(head + R"("poses": [{"name": "a"}, {"name": "a"}]})"), "POSE_LIBRARY_NAME");
  EXPECT_EQ(pointer(head + R"("poses": [{"name": "a"}, {"name": "a"}]})"), "/poses/1/name");
  EXPECT_EQ(code(head + R"("poses": [{"name": ""}]})"), "POSE_LIBRARY_NAME");
  EXPECT_EQ(
      code(head +
           R"("poses": [{"name": "a", "rotations": {"arm": {"quaternion": [0, 0, 0, 0]}}}]})"),
      "POSE_LIBRARY_VALUE");
  EXPECT_EQ(
      code(head + R"("poses": [{"name": "a", "rotations": {"arm": {"quaternion": [0, 0, 1]}}}]})"),
      "POSE_LIBRARY_JSON");
  EXPECT_EQ(code(head + R"("poses": [{"name": "a", "rotations": {"arm": {}}}]})"),
            "POSE_LIBRARY_JSON");
  EXPECT_EQ(code(head + R"("poses": {}})"), "POSE_LIBRARY_JSON");
  EXPECT_EQ(code(R"({"format": "charkit.pose_model", "version": 1, "poses": []})"),
            "POSE_LIBRARY_FORMAT");
  EXPECT_EQ(code(R"({"format": "charkit.pose_library", "version": 2, "poses": []})"),
            "POSE_LIBRARY_FORMAT");
  EXPECT_EQ(code("{"), "JSON_SYNTAX");
  EXPECT_EQ(code(head + R"("poses": []})"), "ok");
}

}  // namespace
}  // namespace charkit::deformer
