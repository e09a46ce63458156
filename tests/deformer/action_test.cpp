// Action sampling: glTF animations (LINEAR slerp, STEP, CUBICSPLINE,
// normalised integer outputs, morph weights) and BVH motions sampled into
// rest-relative poses, checked against values worked out by hand; the Euler
// inverse; morph-target animation targets; errors; real files.
//
// The glTF files are built here byte by byte: a float/int buffer laid out
// by hand, wrapped once as glTF JSON with a base64 data: URI and once as GLB.
#include "charkit/deformer/action.h"
#include "charkit/core/json.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <numbers>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "glb_builder.h"
#include "test_data.h"

namespace charkit::deformer {
namespace {

using nlohmann::json;

constexpr double kPi = std::numbers::pi;

Quaternion axis_q(int axis, double deg) {
  const double h = deg * kPi / 360.0;
  Quaternion q{0, 0, 0, std::cos(h)};
  (axis == 0 ? q.x : axis == 1 ? q.y : q.z) = std::sin(h);
  return q;
}

// |q1 − q2| up to sign (q and −q are the same rotation).
double q_distance(const Quaternion& a, const Quaternion& b) {
  const double plus = std::hypot(a.x - b.x, a.y - b.y, a.z - b.z) + std::abs(a.w - b.w);
  const double minus = std::hypot(a.x + b.x, a.y + b.y, a.z + b.z) + std::abs(a.w + b.w);
  return std::min(plus, minus);
}

#define EXPECT_Q_NEAR(a, b, tol) EXPECT_LE(q_distance((a), (b)), (tol))

// ---------------------------------------------------------------------------
// A glTF built by hand

struct TestFile {
  json doc;
  std::vector<std::uint8_t> bin;

  // Appends raw bytes as a new bufferView (4-byte aligned) and an accessor.
  std::size_t add(const void* data, std::size_t bytes, int component_type, std::size_t count,
                  const char* type, bool normalized = false) {
    while (bin.size() % 4 != 0) bin.push_back(0);
    const std::size_t offset = bin.size();
    const auto* p = static_cast<const std::uint8_t*>(data);
    bin.insert(bin.end(), p, p + bytes);
    doc["bufferViews"].push_back({{"buffer", 0}, {"byteOffset", offset}, {"byteLength", bytes}});
    json acc = {{"bufferView", doc["bufferViews"].size() - 1},
                {"componentType", component_type},
                {"count", count},
                {"type", type}};
    if (normalized) acc["normalized"] = true;
    doc["accessors"].push_back(acc);
    return doc["accessors"].size() - 1;
  }
  std::size_t floats(const std::vector<float>& v, const char* type, std::size_t width) {
    const std::size_t a = add(v.data(), v.size() * 4, 5126, v.size() / width, type);
    if (std::string(type) == "VEC3") {  // POSITION accessors need min and max
      json mn = json::array({v[0], v[1], v[2]}), mx = mn;
      for (std::size_t i = 0; i < v.size(); ++i) {
        mn[i % 3] = std::min(mn[i % 3].get<float>(), v[i]);
        mx[i % 3] = std::max(mx[i % 3].get<float>(), v[i]);
      }
      doc["accessors"][a]["min"] = mn;
      doc["accessors"][a]["max"] = mx;
    }
    return a;
  }
  std::size_t quats(const std::vector<Quaternion>& qs) {
    std::vector<float> v;
    for (const auto& q : qs)
      v.insert(v.end(), {static_cast<float>(q.x), static_cast<float>(q.y), static_cast<float>(q.z),
                         static_cast<float>(q.w)});
    return floats(v, "VEC4", 4);
  }
};

void add_sampler(json& anim, std::size_t input, std::size_t output, const char* interpolation,
                 std::size_t node, const char* path) {
  json s = {{"input", input}, {"output", output}};
  if (interpolation != nullptr) s["interpolation"] = interpolation;
  anim["samplers"].push_back(s);
  anim["channels"].push_back(
      {{"sampler", anim["samplers"].size() - 1}, {"target", {{"node", node}, {"path", path}}}});
}

// Rest rotation of joint "a": 90° about z.
Quaternion rest_a() {
  return axis_q(2, 90);
}

// Mesh node 0 (mesh + skin), joint "a" (node 1, rest 90° about z) with child
// "b" (node 2, at (1,0,0)). One triangle; vertex 0 on a, vertices 1, 2 on b.
// Morph targets "up" and "side". Animations:
//  0 "wave":  a rotation LINEAR (default) keys at 0, 1, 2 s: rest·I,
//             rest·Rx(90°), rest·Ry(−90°); b rotation STEP at 0, 1.5 s:
//             Rz(10°), Rz(40°); mesh weights LINEAR at 0, 2 s: (0,1), (1,0);
//             b translation at 0, 2.5 s (ignored, but it makes the
//             animation 2.5 s long).
//  1 "cubic": weights and b rotation CUBICSPLINE at 0, 2 s.
//  2 "quantized": b rotation as normalised shorts, weights as normalised
//             unsigned bytes, LINEAR at 0, 2 s.
TestFile make_file() {
  TestFile f;
  f.doc = {{"asset", {{"version", "2.0"}}},
           {"buffers", json::array()},
           {"bufferViews", json::array()},
           {"accessors", json::array()}};
  const std::size_t pos = f.floats({0, 0, 0, 1, 0, 0, 1, 1, 0}, "VEC3", 3);
  const std::uint8_t joints[12] = {0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0};
  const std::size_t jnt = f.add(joints, 12, 5121, 3, "VEC4");
  const std::size_t wgt = f.floats({1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0}, "VEC4", 4);
  const std::size_t up = f.floats({0, 0, 1, 0, 0, 0, 0, 0, 0}, "VEC3", 3);
  const std::size_t side = f.floats({0, 0, 0, 0.5F, 0, 0, 0, 0, -1}, "VEC3", 3);
  f.doc["meshes"] = json::array(
      {{{"name", "tri"},
        {"primitives",
         json::array({{{"attributes", {{"POSITION", pos}, {"JOINTS_0", jnt}, {"WEIGHTS_0", wgt}}},
                       {"targets", json::array({{{"POSITION", up}}, {{"POSITION", side}}})}}})},
        {"extras", {{"targetNames", {"up", "side"}}}}}});
  const Quaternion ra = rest_a();
  f.doc["nodes"] =
      json::array({{{"name", "body"}, {"mesh", 0}, {"skin", 0}},
                   {{"name", "a"}, {"rotation", {ra.x, ra.y, ra.z, ra.w}}, {"children", {2}}},
                   {{"name", "b"}, {"translation", {1, 0, 0}}}});
  f.doc["skins"] = json::array({{{"joints", {1, 2}}}});
  f.doc["scenes"] = json::array({{{"nodes", {0, 1}}}});

  const std::size_t t3 = f.floats({0, 1, 2}, "SCALAR", 1);
  const std::size_t t_step = f.floats({0, 1.5F}, "SCALAR", 1);
  const std::size_t t2 = f.floats({0, 2}, "SCALAR", 1);
  const std::size_t t_long = f.floats({0, 2.5F}, "SCALAR", 1);

  json wave = {{"name", "wave"}};
  add_sampler(wave, t3, f.quats({ra, multiply(ra, axis_q(0, 90)), multiply(ra, axis_q(1, -90))}),
              nullptr, 1, "rotation");
  add_sampler(wave, t_step, f.quats({axis_q(2, 10), axis_q(2, 40)}), "STEP", 2, "rotation");
  add_sampler(wave, t2, f.floats({0, 1, 1, 0}, "SCALAR", 1), "LINEAR", 0, "weights");
  add_sampler(wave, t_long, f.floats({1, 0, 0, 1, 0, 5}, "VEC3", 3), "LINEAR", 2, "translation");

  json cubic = {{"name", "cubic"}};
  // Per key: in-tangents, values, out-tangents (2 weights each).
  // Weight 0: v0 = 0, b0 = 1, v1 = 1, a1 = 0. Weight 1: v0 = 1, b0 = 0, v1 = 0, a1 = 1.
  add_sampler(cubic, t2, f.floats({0, 0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 0}, "SCALAR", 1), "CUBICSPLINE",
              0, "weights");
  // b: identity to Rz(90°) with zero tangents.
  const Quaternion zero{0, 0, 0, 0};
  add_sampler(cubic, t2, f.quats({zero, Quaternion{}, zero, zero, axis_q(2, 90), zero}),
              "CUBICSPLINE", 2, "rotation");

  json quant = {{"name", "quantized"}};
  const std::int16_t shorts[8] = {0, 0, 0, 32767, 0, 0, 23170, 23170};
  add_sampler(quant, t2, f.add(shorts, 16, 5122, 2, "VEC4", true), nullptr, 2, "rotation");
  const std::uint8_t bytes[4] = {0, 255, 51, 204};
  add_sampler(quant, t2, f.add(bytes, 4, 5121, 4, "SCALAR", true), nullptr, 0, "weights");

  f.doc["animations"] = json::array({wave, cubic, quant});
  return f;
}

std::vector<std::uint8_t> to_gltf(const TestFile& f) {
  json doc = f.doc;
  doc["buffers"] =
      json::array({{{"byteLength", f.bin.size()}, {"uri", testkit::gltf_data_uri(f.bin)}}});
  const std::string s = doc.dump();
  return {s.begin(), s.end()};
}

std::vector<std::uint8_t> to_glb(const TestFile& f) {
  json doc = f.doc;
  doc["buffers"] = json::array({{{"byteLength", f.bin.size()}}});
  return testkit::build_glb(doc.dump(), f.bin);
}

InputSpec spec_ab() {
  InputSpec s;
  s.bones.push_back({"a", {}});
  s.bones.push_back({"b", {}});
  return s;
}

struct Loaded {
  std::vector<std::uint8_t> bytes;
  scene::Rig rig;
};

Loaded load(const TestFile& f, bool glb = false) {
  Loaded l;
  l.bytes = glb ? to_glb(f) : to_gltf(f);
  auto rig = scene::load_rig(l.bytes);
  EXPECT_TRUE(rig) << rig.error().to_string();
  if (rig) l.rig = std::move(*rig);
  return l;
}

ActionOptions at_fps(double fps) {
  ActionOptions o;
  o.fps = fps;
  return o;
}

// ---------------------------------------------------------------------------

TEST(ActionEuler, InverseOfQuaternionFromEuler) {
  for (double x = -170; x <= 180; x += 35)
    for (double y = -85; y <= 85; y += 17)
      for (double z = -175; z <= 180; z += 25) {
        // x and z compared modulo 360°: 180° may come back as −180° + ε.
        const auto e = euler_xyz_degrees(quaternion_from_euler_xyz_degrees(x, y, z));
        EXPECT_NEAR(std::remainder(e[0] - x, 360.0), 0, 1e-9) << x << " " << y << " " << z;
        EXPECT_NEAR(e[1], y, 1e-9) << x << " " << y << " " << z;
        EXPECT_NEAR(std::remainder(e[2] - z, 360.0), 0, 1e-9) << x << " " << y << " " << z;
        EXPECT_GT(e[0], -180.0 - 1e-9);
        EXPECT_LE(e[0], 180.0);
      }
  // Single axes, by hand: 90° about y is (0, 90, 0); a negated quaternion
  // is the same rotation.
  const auto e = euler_xyz_degrees({0, -std::sin(kPi / 4), 0, -std::cos(kPi / 4)});
  EXPECT_NEAR(e[0], 0, 1e-9);
  EXPECT_NEAR(e[1], 90, 1e-9);
  EXPECT_NEAR(e[2], 0, 1e-9);
}

TEST(ActionEuler, GimbalLockGivesTheSameRotation) {
  for (double y : {90.0, -90.0}) {
    const Quaternion q = quaternion_from_euler_xyz_degrees(25, y, 40);
    const auto e = euler_xyz_degrees(q);
    EXPECT_NEAR(e[1], y, 1e-6);
    EXPECT_NEAR(e[2], 0, 1e-9);
    EXPECT_Q_NEAR(quaternion_from_euler_xyz_degrees(e[0], e[1], e[2]), q, 1e-7);
  }
}

TEST(ActionGltf, RestFirstThenEveryFrame) {
  const auto l = load(make_file());
  auto s = sample_gltf_action(l.bytes, l.rig, spec_ab(), at_fps(4));
  ASSERT_TRUE(s) << s.error().to_string();
  // 2.5 s at 4 fps: frames 0..10, plus the rest pose.
  ASSERT_EQ(s->poses.size(), 12u);
  ASSERT_EQ(s->times.size(), 12u);
  ASSERT_EQ(s->names.size(), 12u);
  EXPECT_EQ(s->names[0], "rest");
  EXPECT_EQ(s->times[0], -1.0);
  for (const auto& q : s->poses[0].rotations) EXPECT_Q_NEAR(q, Quaternion{}, 0);
  for (std::size_t i = 1; i < 12; ++i) {
    EXPECT_EQ(s->names[i], "frame_" + std::to_string(i - 1));
    EXPECT_DOUBLE_EQ(s->times[i], static_cast<double>(i - 1) / 4.0);
    EXPECT_EQ(s->poses[i].rotations.size(), 2u);
    EXPECT_EQ(s->poses[i].euler_deg.size(), 6u);
  }
}

TEST(ActionGltf, LinearSlerpAndStepRelativeToRest) {
  const auto l = load(make_file());
  auto s = sample_gltf_action(l.bytes, l.rig, spec_ab(), at_fps(4));
  ASSERT_TRUE(s) << s.error().to_string();
  const auto& p = s->poses;
  // Frame 0 (t = 0): a at its rest rotation, b at Rz(10°).
  EXPECT_Q_NEAR(p[1].rotations[0], Quaternion{}, 1e-6);
  EXPECT_Q_NEAR(p[1].rotations[1], axis_q(2, 10), 1e-6);
  // Frame 1 (t = 0.25): a a quarter of the way from I to Rx(90°): Rx(22.5°).
  EXPECT_Q_NEAR(p[2].rotations[0], axis_q(0, 22.5), 1e-6);
  EXPECT_NEAR(p[2].euler_deg[0], 22.5, 1e-4);
  EXPECT_NEAR(p[2].euler_deg[1], 0, 1e-4);
  EXPECT_NEAR(p[2].euler_deg[2], 0, 1e-4);
  // Frame 4 (t = 1): Rx(90°) exactly at the key; b still at its first STEP key.
  EXPECT_Q_NEAR(p[5].rotations[0], axis_q(0, 90), 1e-6);
  EXPECT_Q_NEAR(p[5].rotations[1], axis_q(2, 10), 1e-6);
  // Frame 5 (t = 1.25): STEP holds 10°.
  EXPECT_Q_NEAR(p[6].rotations[1], axis_q(2, 10), 1e-6);
  // Frame 6 (t = 1.5): halfway from Rx(90°) to Ry(−90°). Their dot is
  // cos²45° = 1/2, the slerp midpoint is (qa + qb) / |qa + qb| with
  // |qa + qb| = 2 cos 30° = √3. b switches to its second STEP key.
  const double h = std::sqrt(0.5);
  const Quaternion mid{h / std::sqrt(3.0), -h / std::sqrt(3.0), 0, 2 * h / std::sqrt(3.0)};
  EXPECT_Q_NEAR(p[7].rotations[0], mid, 1e-6);
  EXPECT_Q_NEAR(p[7].rotations[1], axis_q(2, 40), 1e-6);
  // Frame 10 (t = 2.5, after the last key at 2 s): held at Ry(−90°).
  EXPECT_Q_NEAR(p[11].rotations[0], axis_q(1, -90), 1e-6);
  EXPECT_NEAR(p[11].euler_deg[1], -90, 1e-3);
  // Euler angles match the rotations (b: 40° about z).
  EXPECT_NEAR(p[7].euler_deg[3], 0, 1e-4);
  EXPECT_NEAR(p[7].euler_deg[4], 0, 1e-4);
  EXPECT_NEAR(p[7].euler_deg[5], 40, 1e-4);
  for (const auto& pose : p) EXPECT_TRUE(pose.curves.empty());
}

TEST(ActionGltf, WeightsInterpolateLinearly) {
  const auto l = load(make_file());
  ASSERT_EQ(l.rig.morph_targets.size(), 2u);
  auto s = sample_gltf_action(l.bytes, l.rig, spec_ab(), at_fps(4));
  ASSERT_TRUE(s) << s.error().to_string();
  const auto& w = s->morph_weights;
  ASSERT_EQ(w.size(), 12u * 2);
  EXPECT_EQ(w[0], 0.0F);  // rest
  EXPECT_EQ(w[1], 0.0F);
  // Keys (0, 1) at 0 s and (1, 0) at 2 s: weight 0 = t / 2, weight 1 = 1 − t / 2.
  for (std::size_t f = 0; f <= 10; ++f) {
    const double t = std::min(static_cast<double>(f) / 4.0, 2.0);
    EXPECT_NEAR(w[(f + 1) * 2], t / 2, 1e-6) << f;
    EXPECT_NEAR(w[(f + 1) * 2 + 1], 1 - t / 2, 1e-6) << f;
  }
}

TEST(ActionGltf, GlbAndJsonGiveTheSameSamples) {
  const auto file = make_file();
  const auto a = load(file, false);
  const auto b = load(file, true);
  auto sa = sample_gltf_action(a.bytes, a.rig, spec_ab(), at_fps(8));
  auto sb = sample_gltf_action(b.bytes, b.rig, spec_ab(), at_fps(8));
  ASSERT_TRUE(sa) << sa.error().to_string();
  ASSERT_TRUE(sb) << sb.error().to_string();
  ASSERT_EQ(sa->poses.size(), 22u);
  ASSERT_EQ(sb->poses.size(), sa->poses.size());
  for (std::size_t i = 0; i < sa->poses.size(); ++i)
    for (std::size_t k = 0; k < 2; ++k)
      EXPECT_Q_NEAR(sa->poses[i].rotations[k], sb->poses[i].rotations[k], 0);
  EXPECT_EQ(sa->morph_weights, sb->morph_weights);
}

TEST(ActionGltf, FramesEvenlySpacedInclusive) {
  const auto l = load(make_file());
  ActionOptions o = at_fps(4);
  o.start_frame = 2;
  o.end_frame = 6;
  o.frames = 5;
  auto s = sample_gltf_action(l.bytes, l.rig, spec_ab(), o);
  ASSERT_TRUE(s) << s.error().to_string();
  ASSERT_EQ(s->poses.size(), 6u);
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(s->names[i + 1], "frame_" + std::to_string(i + 2));
    EXPECT_DOUBLE_EQ(s->times[i + 1], static_cast<double>(i + 2) / 4.0);
  }
  // Three samples over frames 0..1: 0, 0.5, 1 (t = 0, 0.125, 0.25).
  o.start_frame = 0;
  o.end_frame = 1;
  o.frames = 3;
  s = sample_gltf_action(l.bytes, l.rig, spec_ab(), o);
  ASSERT_TRUE(s) << s.error().to_string();
  ASSERT_EQ(s->names.size(), 4u);
  EXPECT_EQ(s->names[2], "frame_0.5");
  EXPECT_DOUBLE_EQ(s->times[2], 0.125);
  EXPECT_NEAR(s->morph_weights[2 * 2], 0.0625, 1e-6);
  EXPECT_Q_NEAR(s->poses[2].rotations[0], axis_q(0, 90 * 0.125), 1e-6);
  // Default end = the last frame; every frame from start.
  o = at_fps(4);
  o.start_frame = 7;
  s = sample_gltf_action(l.bytes, l.rig, spec_ab(), o);
  ASSERT_TRUE(s) << s.error().to_string();
  ASSERT_EQ(s->names.size(), 5u);  // rest, 7, 8, 9, 10
  EXPECT_EQ(s->names.back(), "frame_10");
  // One frame: the start.
  o.frames = 1;
  s = sample_gltf_action(l.bytes, l.rig, spec_ab(), o);
  ASSERT_TRUE(s) << s.error().to_string();
  ASSERT_EQ(s->names.size(), 2u);
  EXPECT_EQ(s->names[1], "frame_7");
}

TEST(ActionGltf, CubicSplineByName) {
  const auto l = load(make_file());
  ActionOptions o = at_fps(2);
  o.animation = "cubic";
  auto s = sample_gltf_action(l.bytes, l.rig, spec_ab(), o);
  ASSERT_TRUE(s) << s.error().to_string();
  ASSERT_EQ(s->poses.size(), 6u);  // 2 s at 2 fps: frames 0..4
  // t = 1 is s = 0.5 of a 2 s interval: h00 = h01 = 1/2, h10 = 1/8,
  // h11 = −1/8; p = h00 v0 + 2 h10 b0 + h01 v1 + 2 h11 a1.
  // Weight 0: 0 + 2/8 + 1/2 + 0 = 0.75. Weight 1: 1/2 + 0 + 0 − 2/8 = 0.25.
  EXPECT_NEAR(s->morph_weights[3 * 2], 0.75, 1e-6);
  EXPECT_NEAR(s->morph_weights[3 * 2 + 1], 0.25, 1e-6);
  // t = 0.5 (s = 1/4): h00 = 27/32, h10 = 9/64, h01 = 5/32, h11 = −3/64.
  // Weight 0: 2·9/64 + 5/32 = 14/32; weight 1: 27/32 − 2·3/64 = 24/32.
  EXPECT_NEAR(s->morph_weights[2 * 2], 14.0 / 32, 1e-6);
  EXPECT_NEAR(s->morph_weights[2 * 2 + 1], 24.0 / 32, 1e-6);
  // b: zero tangents, symmetric halfway point: (I + Rz(90°)) normalised = Rz(45°).
  EXPECT_Q_NEAR(s->poses[3].rotations[1], axis_q(2, 45), 1e-6);
  // a has no channel in this animation: it stays at rest.
  EXPECT_Q_NEAR(s->poses[3].rotations[0], Quaternion{}, 0);
}

TEST(ActionGltf, NormalisedIntegerOutputsByIndex) {
  const auto l = load(make_file());
  ActionOptions o = at_fps(1);
  o.animation = "2";
  auto s = sample_gltf_action(l.bytes, l.rig, spec_ab(), o);
  ASSERT_TRUE(s) << s.error().to_string();
  ASSERT_EQ(s->poses.size(), 4u);
  // Shorts 23170 / 32767 ≈ sin 45°: key 1 is Rz(90°) to 1e-5.
  EXPECT_Q_NEAR(s->poses[3].rotations[1], axis_q(2, 90), 1e-4);
  EXPECT_Q_NEAR(s->poses[2].rotations[1], axis_q(2, 45), 1e-4);
  // Bytes (0, 255) → (0, 1); (51, 204) → (0.2, 0.8); halfway (0.1, 0.9).
  EXPECT_NEAR(s->morph_weights[1 * 2], 0.0, 1e-7);
  EXPECT_NEAR(s->morph_weights[1 * 2 + 1], 1.0, 1e-7);
  EXPECT_NEAR(s->morph_weights[2 * 2], 0.1, 1e-6);
  EXPECT_NEAR(s->morph_weights[2 * 2 + 1], 0.9, 1e-6);
  EXPECT_NEAR(s->morph_weights[3 * 2], 0.2, 1e-6);
}

TEST(ActionGltf, ErrorsNameTheProblem) {
  const auto l = load(make_file());
  auto code = [&](const ActionOptions& o, const InputSpec& spec = spec_ab()) {
    auto s = sample_gltf_action(l.bytes, l.rig, spec, o);
    return s ? std::string("ok") : s.error().code;
  };
  ActionOptions o = at_fps(4);
  o.animation = "nope";
  auto bad = sample_gltf_action(l.bytes, l.rig, spec_ab(), o);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, "ACTION_ANIMATION");
  EXPECT_NE(bad.error().message.find("\"wave\""), std::string::npos) << bad.error().message;
  o.animation = "3";
  EXPECT_EQ(code(o), "ACTION_ANIMATION");
  o = at_fps(4);
  o.end_frame = 11;  // last is 10
  EXPECT_EQ(code(o), "ACTION_RANGE");
  o.end_frame = 10;
  EXPECT_EQ(code(o), "ok");
  o.start_frame = 6;
  o.end_frame = 5;
  EXPECT_EQ(code(o), "ACTION_RANGE");
  o = at_fps(4);
  o.start_frame = -1;
  EXPECT_EQ(code(o), "ACTION_RANGE");
  o = at_fps(4);
  o.max_frames = 10;  // 11 frames
  EXPECT_EQ(code(o), "ACTION_TOO_MANY");
  o.max_frames = 11;
  EXPECT_EQ(code(o), "ok");
  o.frames = 12;
  EXPECT_EQ(code(o), "ACTION_TOO_MANY");
  o = at_fps(0);
  EXPECT_EQ(code(o), "ACTION_OPTION");
  o = at_fps(4);
  o.start_frame = std::nan("");
  EXPECT_EQ(code(o), "ACTION_OPTION");
  InputSpec spec = spec_ab();
  spec.bones.push_back({"c", {}});
  spec.bones.push_back({"d", {}});
  auto missing = sample_gltf_action(l.bytes, l.rig, spec, at_fps(4));
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, "ACTION_BONE");
  EXPECT_NE(missing.error().message.find("\"c\", \"d\""), std::string::npos);
}

TEST(ActionGltf, MalformedAnimationsAreRefusedWithPointers) {
  const TestFile base = make_file();
  const scene::Rig rig = load(base).rig;
  auto run = [&](const TestFile& f, const std::string& anim = "") {
    ActionOptions o = at_fps(4);
    o.animation = anim;
    return sample_gltf_action(to_gltf(f), rig, spec_ab(), o);
  };
  {  // three weights per key for a two-target mesh
    TestFile f = base;
    json anim = {{"name", "bad"}};
    add_sampler(anim, 0, f.floats({0, 1, 2, 3, 4, 5}, "SCALAR", 1), nullptr, 0, "weights");
    anim["samplers"][0]["input"] = f.floats({0, 1}, "SCALAR", 1);
    f.doc["animations"].push_back(anim);
    auto s = run(f, "bad");
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().code, "ACTION_WEIGHTS");
  }
  {  // malformed sparse output accessor (read by scene::GltfDocument)
    TestFile f = base;
    const std::size_t out = f.doc["animations"][0]["samplers"][0]["output"].get<std::size_t>();
    f.doc["accessors"][out]["sparse"] = {{"count", 1}};
    auto s = run(f);
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().code, "GLTF_SPARSE");
    EXPECT_EQ(s.error().location.pointer, "/accessors/" + std::to_string(out) + "/sparse/indices");
  }
  {  // a sparse output accessor is read: zeros with every key substituted
     // sample as the plain accessor does
    TestFile f = base;
    const std::size_t out = f.doc["animations"][0]["samplers"][0]["output"].get<std::size_t>();
    const std::size_t n = f.doc["accessors"][out]["count"].get<std::size_t>();
    const json view = f.doc["accessors"][out]["bufferView"];
    std::vector<std::uint16_t> idx(n);
    for (std::size_t i = 0; i < n; ++i) idx[i] = static_cast<std::uint16_t>(i);
    const std::size_t ia = f.add(idx.data(), n * 2, 5123, n, "SCALAR");
    json& acc = f.doc["accessors"][out];
    acc.erase("bufferView");
    acc["sparse"] = {
        {"count", n},
        {"indices",
         {{"bufferView", f.doc["accessors"][ia]["bufferView"]}, {"componentType", 5123}}},
        {"values", {{"bufferView", view}}}};
    auto sparse = run(f);
    auto plain = run(base);
    ASSERT_TRUE(sparse) << sparse.error().to_string();
    ASSERT_TRUE(plain);
    ASSERT_EQ(sparse->poses.size(), plain->poses.size());
    for (std::size_t i = 0; i < plain->poses.size(); ++i)
      EXPECT_EQ(sparse->poses[i].euler_deg, plain->poses[i].euler_deg) << i;
  }
  {  // key times going back
    TestFile f = base;
    const std::size_t in = f.floats({0, 2, 1}, "SCALAR", 1);
    f.doc["animations"][0]["samplers"][0]["input"] = in;
    auto s = run(f);
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().code, "GLTF_ANIMATION");
    EXPECT_EQ(s.error().location.pointer, "/accessors/" + std::to_string(in));
  }
  {  // unknown interpolation
    TestFile f = base;
    f.doc["animations"][0]["samplers"][1]["interpolation"] = "BEZIER";
    auto s = run(f);
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().code, "GLTF_VALUE");  // refused by the glTF layer
    EXPECT_EQ(s.error().location.pointer, "/animations/0/samplers/1/interpolation");
  }
  {  // output count does not match the keys
    TestFile f = base;
    f.doc["animations"][0]["samplers"][0]["input"] =
        f.doc["animations"][0]["samplers"][1]["input"];  // 2 keys, 3 rotations
    auto s = run(f);
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().code, "GLTF_ANIMATION");
    EXPECT_EQ(s.error().location.pointer, "/animations/0/samplers/0/output");
  }
  {  // channel pointing at a missing sampler
    TestFile f = base;
    f.doc["animations"][0]["channels"][1]["sampler"] = 9;
    auto s = run(f);
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().code, "GLTF_INDEX");  // refused by the glTF layer
    EXPECT_EQ(s.error().location.pointer, "/animations/0/channels/1/sampler");
  }
  {  // accessor past the end of its view: inspect_model refuses it first
    TestFile f = base;
    const std::size_t out = f.doc["animations"][0]["samplers"][1]["output"].get<std::size_t>();
    f.doc["accessors"][out]["byteOffset"] = 4;
    auto s = run(f);
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().code, "GLTF_LENGTH");
    EXPECT_EQ(s.error().location.pointer, "/accessors/" + std::to_string(out));
  }
  {  // no animations at all
    TestFile f = base;
    f.doc.erase("animations");
    auto s = run(f);
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().code, "ACTION_ANIMATION");
  }
}

// ---------------------------------------------------------------------------
// Morph-target animation → targets

TEST(ActionTargets, DeltasAreWeightedMorphSums) {
  const auto l = load(make_file());
  auto s = sample_gltf_action(l.bytes, l.rig, spec_ab(), at_fps(4));
  ASSERT_TRUE(s) << s.error().to_string();
  auto t = build_targets_from_morph_animation(l.rig, spec_ab(), *s);
  ASSERT_TRUE(t) << t.error().to_string();
  const Dataset& d = t->dataset;
  ASSERT_EQ(d.sample_count, 12u);
  ASSERT_EQ(d.vertex_count, 3u);
  EXPECT_EQ(d.sample_names, s->names);
  // up = (0,0,1) on vertex 0; side = (0.5,0,0) on vertex 1, (0,0,−1) on vertex 2.
  double sum = 0, max = 0;
  for (std::size_t i = 0; i < 12; ++i) {
    const double wu = i == 0 ? 0.0 : std::min(static_cast<double>(i - 1) / 4.0, 2.0) / 2;
    const double ws = i == 0 ? 0.0 : 1 - wu;
    const float* row = &d.deltas[i * 9];
    const double want[9] = {0, 0, wu, 0.5 * ws, 0, 0, 0, 0, -ws};
    for (std::size_t k = 0; k < 9; ++k) EXPECT_NEAR(row[k], want[k], 1e-6) << i << " " << k;
    // Rigid joints: LBS moves the correction rigidly, so the LBS error of a
    // vertex is the length of its delta.
    sum += wu + 0.5 * ws + ws;
    max = std::max({max, wu, 0.5 * ws, ws});
  }
  EXPECT_NEAR(t->lbs.max_error, max, 1e-6);
  EXPECT_NEAR(t->lbs.mean_error, sum / 36, 1e-6);
  // Axis-angle features of frame 1 (a: Rx(22.5°)).
  EXPECT_NEAR(d.features[2 * 6 + 0], 22.5 * kPi / 180, 1e-6);
  EXPECT_NEAR(d.features[2 * 6 + 1], 0, 1e-6);
}

TEST(ActionTargets, EngineLayoutUsesRestRotations) {
  const auto l = load(make_file());
  auto s = sample_gltf_action(l.bytes, l.rig, spec_ab(), at_fps(4));
  ASSERT_TRUE(s) << s.error().to_string();
  auto t = build_targets_from_morph_animation(l.rig, spec_ab(), *s, FeatureLayout::kEngine);
  ASSERT_TRUE(t) << t.error().to_string();
  const Dataset& d = t->dataset;
  ASSERT_EQ(d.feature_count(), 12u);
  // Rest pose: a's local rotation is its rest, Rz(90°): first two matrix
  // rows (0, −1, 0) and (1, 0, 0); b at identity: (1, 0, 0), (0, 1, 0).
  const float want[12] = {0, -1, 0, 1, 0, 0, 1, 0, 0, 0, 1, 0};
  for (std::size_t k = 0; k < 12; ++k) EXPECT_NEAR(d.features[k], want[k], 1e-6) << k;
}

TEST(ActionTargets, ErrorsNameTheProblem) {
  const auto l = load(make_file());
  auto s = sample_gltf_action(l.bytes, l.rig, spec_ab(), at_fps(4));
  ASSERT_TRUE(s) << s.error().to_string();
  ActionSamples no_weights = *s;
  no_weights.morph_weights.clear();
  auto t = build_targets_from_morph_animation(l.rig, spec_ab(), no_weights);
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().code, "ACTION_NO_WEIGHTS");
  ActionSamples short_weights = *s;
  short_weights.morph_weights.pop_back();
  t = build_targets_from_morph_animation(l.rig, spec_ab(), short_weights);
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().code, "TARGETS_SAMPLE_COUNT");
  t = build_targets_from_morph_animation(l.rig, spec_ab(), ActionSamples{});
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().code, "TARGETS_EMPTY");
  scene::Rig no_morphs = l.rig;
  no_morphs.morph_targets.clear();
  t = build_targets_from_morph_animation(no_morphs, spec_ab(), *s);
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().code, "ACTION_NO_WEIGHTS");
  InputSpec other;
  other.bones.push_back({"zz", {}});
  ActionSamples one;
  one.poses = {rest_pose(other)};
  one.morph_weights = {0, 0};
  t = build_targets_from_morph_animation(l.rig, other, one);
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().code, "TARGETS_BONE");
}

// ---------------------------------------------------------------------------
// BVH

// hips: Z X Y rotation order; arm: Z Y X. Frame 1: hips Rz(90°), arm
// (z 10, y 30, x 20). Frame 2: hips (z 30, x 40, y 50), arm at rest.
constexpr const char* kBvh =
    "HIERARCHY\n"
    "ROOT hips\n{\n  OFFSET 0 0 0\n"
    "  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n"
    "  JOINT arm\n  {\n    OFFSET 1 0 0\n    CHANNELS 3 Zrotation Yrotation Xrotation\n"
    "    End Site\n    {\n      OFFSET 1 0 0\n    }\n  }\n}\n"
    "MOTION\nFrames: 3\nFrame Time: 0.5\n"
    "0 0 0 0 0 0 0 0 0\n"
    "5 0 0 90 0 0 10 30 20\n"
    "5 0 0 30 40 50 0 0 0\n";

InputSpec spec_bvh() {
  InputSpec s;
  s.bones.push_back({"arm", {}});
  s.bones.push_back({"hips", {}});
  return s;
}

TEST(ActionBvh, KnownFrameRotations) {
  auto s = sample_bvh_action(kBvh, spec_bvh(), {});
  ASSERT_TRUE(s) << s.error().to_string();
  ASSERT_EQ(s->poses.size(), 4u);
  EXPECT_EQ(s->names, (std::vector<std::string>{"rest", "frame_0", "frame_1", "frame_2"}));
  EXPECT_EQ(s->times, (std::vector<double>{-1, 0, 0.5, 1.0}));
  EXPECT_TRUE(s->morph_weights.empty());
  EXPECT_Q_NEAR(s->poses[1].rotations[0], Quaternion{}, 1e-12);
  // arm: CHANNELS Z Y X → R = Rz(10)·Ry(30)·Rx(20), Euler XYZ (20, 30, 10).
  EXPECT_Q_NEAR(s->poses[2].rotations[0], quaternion_from_euler_xyz_degrees(20, 30, 10), 1e-12);
  EXPECT_NEAR(s->poses[2].euler_deg[0], 20, 1e-9);
  EXPECT_NEAR(s->poses[2].euler_deg[1], 30, 1e-9);
  EXPECT_NEAR(s->poses[2].euler_deg[2], 10, 1e-9);
  EXPECT_Q_NEAR(s->poses[2].rotations[1], axis_q(2, 90), 1e-12);
  // hips: CHANNELS Z X Y → Rz(30)·Rx(40)·Ry(50).
  const Quaternion hips = multiply(axis_q(2, 30), multiply(axis_q(0, 40), axis_q(1, 50)));
  EXPECT_Q_NEAR(s->poses[3].rotations[1], hips, 1e-12);
}

// A rig whose bones have other names samples a BVH through a
// joint map (rig joint or VRM humanoid name -> BVH names tried in order).
TEST(ActionBvh, JointMapMatchesBonesOfOtherNames) {
  InputSpec spec;
  spec.bones.push_back({"upper_arm.l", {}});
  spec.bones.push_back({"pelvis", {}});
  auto unmapped = sample_bvh_action(kBvh, spec, {});
  ASSERT_FALSE(unmapped);
  EXPECT_EQ(unmapped.error().code, "ACTION_BONE");
  EXPECT_NE(unmapped.error().message.find("its joints: \"hips\", \"arm\""), std::string::npos)
      << unmapped.error().message;

  const std::map<std::string, std::string> humanoid{{"hips", "pelvis"},
                                                    {"leftUpperArm", "upper_arm.l"}};
  auto map =
      parse_bvh_joint_map(R"({"leftUpperArm": ["LeftArm", "arm"], "hips": "hips"})", humanoid);
  ASSERT_TRUE(map) << map.error().to_string();
  ASSERT_EQ(map->size(), 2u);
  EXPECT_EQ(map->at("upper_arm.l"), (std::vector<std::string>{"LeftArm", "arm"}));
  EXPECT_EQ(map->at("pelvis"), (std::vector<std::string>{"hips"}));
  ActionOptions o;
  o.bvh_joints = *map;
  auto mapped = sample_bvh_action(kBvh, spec, o);
  ASSERT_TRUE(mapped) << mapped.error().to_string();
  auto by_name = sample_bvh_action(kBvh, spec_bvh(), {});
  ASSERT_TRUE(by_name);
  ASSERT_EQ(mapped->poses.size(), by_name->poses.size());
  for (std::size_t p = 0; p < mapped->poses.size(); ++p)
    for (std::size_t b = 0; b < 2; ++b)
      EXPECT_Q_NEAR(mapped->poses[p].rotations[b], by_name->poses[p].rotations[b], 0.0);

  // A map whose names the BVH lacks says what it tried.
  o.bvh_joints = {{"pelvis", {"Hips", "root"}}, {"upper_arm.l", {"arm"}}};
  auto tried = sample_bvh_action(kBvh, spec, o);
  ASSERT_FALSE(tried);
  EXPECT_NE(tried.error().message.find("\"pelvis (tried \"Hips\", \"root\", \"pelvis\")\""),
            std::string::npos)
      << tried.error().message;

  // (An empty list was accepted until action_fuzz found it: a bone with no
  // joint name to try.)
  for (const char* bad : {"[1]", R"({"a": 3})", R"({"a": [""]})", R"({"a": [1]})",
                          R"({"hips": "x", "pelvis": "y"})", R"({"a": "x", "b": []})"}) {
    auto e = parse_bvh_joint_map(bad, humanoid);
    ASSERT_FALSE(e) << bad;
    EXPECT_EQ(e.error().code, "JOINT_MAP") << bad;
  }
  auto empty = parse_bvh_joint_map(R"({"a": "x", "b": []})", humanoid);
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.error().location.pointer, "/b") << empty.error().to_string();
  auto not_json = parse_bvh_joint_map("{", humanoid);
  ASSERT_FALSE(not_json);
  EXPECT_EQ(not_json.error().code.rfind("JSON", 0), 0u) << not_json.error().code;
}

TEST(ActionBvh, FractionalFramesBlendNeighbours) {
  ActionOptions o;
  o.start_frame = 0;
  o.end_frame = 1;
  o.frames = 3;
  auto s = sample_bvh_action(kBvh, spec_bvh(), o);
  ASSERT_TRUE(s) << s.error().to_string();
  ASSERT_EQ(s->poses.size(), 4u);
  EXPECT_EQ(s->names[2], "frame_0.5");
  EXPECT_DOUBLE_EQ(s->times[2], 0.25);
  // Halfway from rest to q: same axis, half the angle.
  const auto full = axis_angle(quaternion_from_euler_xyz_degrees(20, 30, 10));
  const auto half = axis_angle(s->poses[2].rotations[0]);
  for (std::size_t k = 0; k < 3; ++k) EXPECT_NEAR(half[k], full[k] / 2, 1e-12);
  EXPECT_Q_NEAR(s->poses[2].rotations[1], axis_q(2, 45), 1e-12);
}

TEST(ActionBvh, ErrorsNameTheProblem) {
  InputSpec spec = spec_bvh();
  spec.bones.push_back({"leg", {}});
  spec.bones.push_back({"foot", {}});
  auto s = sample_bvh_action(kBvh, spec, {});
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, "ACTION_BONE");
  EXPECT_NE(s.error().message.find("\"leg\", \"foot\""), std::string::npos) << s.error().message;
  ActionOptions o;
  o.end_frame = 3;  // frames 0..2
  s = sample_bvh_action(kBvh, spec_bvh(), o);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, "ACTION_RANGE");
  o = {};
  o.max_frames = 2;
  s = sample_bvh_action(kBvh, spec_bvh(), o);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code, "ACTION_TOO_MANY");
  s = sample_bvh_action("HIERARCHY\nROOT x\n{\n", spec_bvh(), {});
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().code.rfind("BVH_", 0), 0u) << s.error().code;
  // A BVH action has no morph weights to make targets from.
  auto ok = sample_bvh_action(kBvh, spec_bvh(), {});
  ASSERT_TRUE(ok);
  const auto l = load(make_file());
  auto t = build_targets_from_morph_animation(l.rig, spec_ab(), *ok);
  ASSERT_FALSE(t);
  EXPECT_EQ(t.error().code, "ACTION_NO_WEIGHTS");
}

// ---------------------------------------------------------------------------
// Real files

using testkit::read_file;

// CesiumMan: 2 s of LINEAR keys. Frame 0 (t = 0) must give each joint its
// first key, read here straight from the GLB's JSON and BIN chunk.
TEST(ActionReal, CesiumManFirstKeysAndLength) {
  const auto bytes = read_file(std::string(CHARKIT_TEST_DATA) + "/models/CesiumMan.glb");
  ASSERT_GT(bytes.size(), 20u);
  auto rig = scene::load_rig(bytes);
  ASSERT_TRUE(rig) << rig.error().to_string();
  InputSpec spec;
  for (std::size_t j = 0; j < rig->skeleton.joint_count(); ++j)
    spec.bones.push_back({rig->skeleton.joint_names[j], {}});
  auto s = sample_gltf_action(bytes, *rig, spec, at_fps(30));
  ASSERT_TRUE(s) << s.error().to_string();
  ASSERT_EQ(s->poses.size(), 62u);  // frames 0..60, rest
  EXPECT_TRUE(s->morph_weights.empty());

  std::uint32_t json_len = 0;
  std::memcpy(&json_len, bytes.data() + 12, 4);
  const json doc = json::parse(bytes.begin() + 20, bytes.begin() + 20 + json_len);
  const std::uint8_t* bin = bytes.data() + 20 + json_len + 8;
  std::size_t moving = 0;
  for (const auto& ch : doc["animations"][0]["channels"]) {
    if (ch["target"]["path"] != "rotation") continue;
    const std::size_t node = ch["target"]["node"];
    std::size_t j = 0;
    while (j < rig->joint_nodes.size() && rig->joint_nodes[j] != node) ++j;
    ASSERT_LT(j, rig->joint_nodes.size());
    const int sampler = ch["sampler"].get<int>();
    const int output = doc["animations"][0]["samplers"][sampler]["output"].get<int>();
    const auto& acc = doc["accessors"][output];
    const auto& view = doc["bufferViews"][acc["bufferView"].get<int>()];
    float key[4];
    std::memcpy(key, bin + view.value("byteOffset", 0) + acc.value("byteOffset", 0), 16);
    const auto& r = rig->skeleton.local_transforms[j].rotation;
    const Quaternion animated =
        multiply(Quaternion{r[0], r[1], r[2], r[3]}, s->poses[1].rotations[j]);
    EXPECT_Q_NEAR(animated, (Quaternion{key[0], key[1], key[2], key[3]}), 1e-5) << node;
    for (std::size_t f = 1; f < s->poses.size(); ++f)
      if (std::abs(axis_angle(s->poses[f].rotations[j])[0]) > 0.02) {
        ++moving;
        break;
      }
  }
  EXPECT_GT(moving, 3u);  // the walk cycle moves several joints
}

TEST(ActionReal, FreeBvhSmoke) {
  const auto bytes = read_file(std::string(CHARKIT_TEST_DATA) + "/bvh/test_freebvh.bvh");
  const std::string text(bytes.begin(), bytes.end());
  InputSpec spec;
  spec.bones.push_back({"mixamorig:Spine", {}});
  spec.bones.push_back({"mixamorig:Head", {}});
  ActionOptions o;
  o.frames = 5;
  auto s = sample_bvh_action(text, spec, o);
  ASSERT_TRUE(s) << s.error().to_string();
  ASSERT_EQ(s->poses.size(), 6u);
  for (const auto& p : s->poses)
    for (const auto& q : p.rotations)
      EXPECT_NEAR(q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w, 1.0, 1e-12);
}

}  // namespace
}  // namespace charkit::deformer
