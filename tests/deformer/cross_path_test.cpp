// The same glTF animation sampled through charkit's two independent paths
// must give the same joint transforms (one maths layer):
// - the motion path: Assimp import (motion/assimp_motion.h) and its own
//   forward kinematics (AssimpMotion::sample_at: world joint positions);
// - the deformer's action path: deformer/action.h's glTF sampler (rest-relative
//   pose rotations), deformer/targets.h's pose_locals and scene/rig.h's
//   joint_world_matrices.
// The action path samples rotations only, so the files' translation and
// scale channels are removed first (the GLB's JSON chunk is rewritten, the
// binary chunk is kept): both paths then animate exactly the same channels.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "charkit/core/json.h"
#include "charkit/deformer/action.h"
#include "charkit/deformer/targets.h"
#include "charkit/motion/assimp_motion.h"
#include "charkit/scene/rig.h"

#include "test_data.h"

namespace charkit::deformer {
namespace {

using nlohmann::json;

using testkit::read_file;

void put_u32(std::vector<std::uint8_t>& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}

// The GLB with only the rotation channels of its first animation (glTF 2.0
// §4.4: 12-byte header, JSON chunk padded with spaces, BIN chunk as it was).
std::vector<std::uint8_t> rotation_only(const std::vector<std::uint8_t>& glb) {
  std::uint32_t json_len = 0;
  std::memcpy(&json_len, glb.data() + 12, 4);
  json doc = json::parse(glb.begin() + 20, glb.begin() + 20 + json_len);
  json kept = json::array();
  for (const json& ch : doc["animations"][0]["channels"])
    if (ch["target"]["path"] == "rotation") kept.push_back(ch);
  doc["animations"][0]["channels"] = kept;
  // Unnamed nodes get one name for both paths (Assimp and the rig loader
  // invent different ones).
  for (std::size_t i = 0; i < doc["nodes"].size(); ++i)
    if (!doc["nodes"][i].contains("name")) doc["nodes"][i]["name"] = "node_" + std::to_string(i);
  std::string text = doc.dump();
  while (text.size() % 4 != 0) text.push_back(' ');
  const std::vector<std::uint8_t> bin_chunk(glb.begin() + 20 + json_len, glb.end());
  std::vector<std::uint8_t> out;
  put_u32(out, 0x46546C67);  // "glTF"
  put_u32(out, 2);
  put_u32(out, static_cast<std::uint32_t>(12 + 8 + text.size() + bin_chunk.size()));
  put_u32(out, static_cast<std::uint32_t>(text.size()));
  put_u32(out, 0x4E4F534A);  // "JSON"
  out.insert(out.end(), text.begin(), text.end());
  out.insert(out.end(), bin_chunk.begin(), bin_chunk.end());
  return out;
}

// Samples `frames` + 1 evenly spaced times of the animation through both
// paths and compares every joint's world position.
void expect_same_joint_positions(const std::string& file, std::size_t frames,
                                 double* max_diff_out) {
  const auto bytes = rotation_only(read_file(std::string(CHARKIT_TEST_DATA) + "/models/" + file));
  ASSERT_GT(bytes.size(), 100u);

  // Motion path.
  motion::AssimpMotionOptions mo;
  mo.isolate = false;  // a trusted test file
  auto m = motion::load_assimp_motion(bytes, mo);
  ASSERT_TRUE(m) << m.error().to_string();
  ASSERT_GT(m->duration_seconds, 0.0);

  // Action path: every joint of the skin is an input bone.
  auto rig = scene::load_rig(bytes);
  ASSERT_TRUE(rig) << rig.error().to_string();
  const auto& names = rig->skeleton.joint_names;
  InputSpec spec;
  for (const std::string& n : names) spec.bones.push_back({n, {}});
  ActionOptions ao;
  ao.fps = 30;
  ao.end_frame = std::floor(m->duration_seconds * ao.fps - 1e-6);  // within both durations
  ao.frames = frames + 1;
  auto s = sample_gltf_action(bytes, *rig, spec, ao);
  ASSERT_TRUE(s) << s.error().to_string();
  ASSERT_EQ(s->poses.size(), frames + 2);  // rest, then the frames

  // Every rig joint is a motion joint with the same name.
  std::map<std::string, std::size_t> motion_index;
  for (std::size_t j = 0; j < m->joints.size(); ++j) motion_index[m->joints[j].name] = j;
  std::vector<std::size_t> to_motion;
  for (const std::string& n : names) {
    auto it = motion_index.find(n);
    ASSERT_NE(it, motion_index.end()) << n;
    to_motion.push_back(it->second);
  }

  double max_diff = 0.0, max_motion = 0.0;
  std::vector<motion::Vec3> first(m->joints.size());
  std::vector<motion::Vec3> positions(m->joints.size());
  for (std::size_t p = 1; p < s->poses.size(); ++p) {
    auto locals = pose_locals(*rig, spec, s->poses[p]);
    ASSERT_TRUE(locals) << locals.error().to_string();
    auto world = scene::joint_world_matrices(*rig, *locals);
    ASSERT_TRUE(world) << world.error().to_string();
    m->sample_at(s->times[p], positions);
    if (p == 1) first = positions;
    for (std::size_t j = 0; j < names.size(); ++j) {
      const auto& w = (*world)[j];
      const auto& q = positions[to_motion[j]];
      for (std::size_t k = 0; k < 3; ++k) {
        const double d = std::abs(static_cast<double>(w[12 + k]) - q[k]);
        max_diff = std::max(max_diff, d);
        EXPECT_NEAR(w[12 + k], q[k], 1e-4)
            << file << " joint " << names[j] << " at t = " << s->times[p] << " axis " << k;
        max_motion = std::max(max_motion, std::abs(q[k] - first[to_motion[j]][k]));
      }
    }
  }
  // The animation moves the joints: the comparison is not of rest poses.
  EXPECT_GT(max_motion, 0.01) << file;
  *max_diff_out = max_diff;
}

TEST(CrossPath, CesiumManMotionImportAndActionSamplingAgree) {
  double diff = 0;
  expect_same_joint_positions("CesiumMan.glb", 12, &diff);
  std::printf("CesiumMan: max |motion - action| joint position difference %.3g\n", diff);
}

}  // namespace
}  // namespace charkit::deformer
