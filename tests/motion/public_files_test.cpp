// The two public BVH files (tests/data/bvh, MIT): properties of FK and of the
// converted NDJSON, and the mapped joints against an independent FK written
// here with Eigen transforms.
#include <gtest/gtest.h>

#include <eigen3/Eigen/Geometry>

#include <cmath>
#include <map>
#include <numbers>
#include <string>

#include "bvh_test_util.h"
#include "charkit/core/json.h"
#include "charkit/core/mapped_file.h"
#include "charkit/motion/convert.h"
#include "charkit/motion/forward_kinematics.h"

namespace charkit::motion {
namespace {

std::string data_path(const char* name) {
  return std::string(CHARKIT_TEST_DATA) + "/bvh/" + name;
}

struct Converted {
  core::MappedFile file;
  ConvertSummary summary;
  std::vector<core::Json> lines;
};

Converted convert_file(const char* name) {
  auto f = core::MappedFile::open(data_path(name));
  EXPECT_TRUE(f.ok());
  // Move-constructed: MappedFile's move assignment trips UBSan (core, reported).
  Converted c{std::move(*f), {}, {}};
  std::string out;
  ConvertOptions o;
  o.hints = &c.file;
  auto r = convert_bvh(core::as_chars(c.file.bytes()), o, [&](std::string_view s) {
    out += s;
    return true;
  });
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().to_string());
  c.summary = std::move(*r);
  EXPECT_FALSE(out.empty());
  EXPECT_EQ(out.back(), '\n');
  std::size_t start = 0;
  while (start < out.size()) {
    std::size_t nl = out.find('\n', start);
    auto j = core::parse_json_strict(std::string_view(out).substr(start, nl - start));
    EXPECT_TRUE(j.ok());
    c.lines.push_back(std::move(*j));
    start = nl + 1;
  }
  return c;
}

class PublicFile : public ::testing::TestWithParam<const char*> {};

TEST_P(PublicFile, BoneLengthsAreConstantAcrossFrames) {
  auto f = core::MappedFile::open(data_path(GetParam()));
  ASSERT_TRUE(f.ok());
  std::string_view text = core::as_chars(f->bytes());
  auto h = parse_bvh_header(text);
  ASSERT_TRUE(h.ok()) << h.error().to_string();
  std::vector<double> v(h->channel_count);
  std::vector<Mat3> rot(h->joints.size());
  std::vector<Vec3> pos(h->joints.size());
  ForwardKinematicsJob fk{h->joints, v, rot, pos};
  ASSERT_TRUE(fk.validate());
  FrameReader reader(*h, text);
  std::size_t frames = 0;
  while (*reader.next(v)) {
    ASSERT_TRUE(fk.run());
    for (std::size_t j = 1; j < h->joints.size(); ++j) {
      const BvhJoint& jt = h->joints[j];
      if (jt.parent < 0) continue;
      const Vec3& a = pos[j];
      const Vec3& b = pos[static_cast<std::size_t>(jt.parent)];
      double len = std::hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]);
      double want = std::hypot(jt.offset[0], jt.offset[1], jt.offset[2]);
      ASSERT_NEAR(len, want, 1e-9) << jt.name << " frame " << frames;
    }
    ++frames;
  }
  EXPECT_EQ(frames, h->declared_frames);
  EXPECT_TRUE(reader.warnings().empty());
}

TEST_P(PublicFile, NdjsonIsInRangeAndTimed) {
  Converted c = convert_file(GetParam());
  EXPECT_EQ(c.summary.fps, 30.0);
  ASSERT_EQ(c.lines.size(), c.summary.frames);
  ASSERT_EQ(c.summary.frames, c.summary.header.declared_frames);
  double max_dev = 0;
  for (std::size_t f = 0; f < c.lines.size(); ++f) {
    const core::Json& j = c.lines[f];
    ASSERT_EQ(j.size(), 4u);
    EXPECT_EQ(j.begin().key(), "frame");
    EXPECT_EQ(j["frame"].get<std::uint64_t>(), f);
    EXPECT_DOUBLE_EQ(j["timeMs"].get<double>(), static_cast<double>(f) * 1000.0 / 30.0);
    ASSERT_EQ(j["points"].size(), 33u);
    for (const auto& p : j["points"]) {
      ASSERT_EQ(p.size(), 4u);
      double x = p[0], y = p[1], z = p[2], conf = p[3];
      EXPECT_GE(x, 0.15);
      EXPECT_LE(x, 0.85);
      EXPECT_GE(y, 0.15);
      EXPECT_LE(y, 0.85);
      EXPECT_GE(z, -0.35);
      EXPECT_LE(z, 0.35);
      EXPECT_TRUE(conf == 0.0 || conf == 0.5 || conf == 1.0) << conf;
      max_dev = std::max({max_dev, std::abs(x - 0.5), std::abs(y - 0.5), std::abs(z)});
    }
    ASSERT_EQ(j["angles"].size(), 9u);
    for (const auto& a : j["angles"]) {
      EXPECT_GE(a.get<double>(), -1.0);
      EXPECT_LE(a.get<double>(), 1.0);
    }
  }
  // The scale is taken over the whole motion: some coordinate reaches 0.35.
  EXPECT_NEAR(max_dev, 0.35, 1e-12);
}

INSTANTIATE_TEST_SUITE_P(Bvh, PublicFile,
                         ::testing::Values("test_freebvh.bvh", "test_mocapbank.bvh"));

std::string mapped_name(const ConvertSummary& s, std::size_t point) {
  int j = s.mapping.points[point].joint;
  return j < 0 ? std::string("-") : s.header.joints[static_cast<std::size_t>(j)].name;
}

TEST(PublicFiles, MixamoNamesMap) {
  Converted c = convert_file("test_freebvh.bvh");
  const std::map<std::size_t, std::string> want = {
      {0, "mixamorig:Head"},           {11, "mixamorig:LeftShoulder"},
      {12, "mixamorig:RightShoulder"}, {13, "mixamorig:LeftForeArm"},
      {14, "mixamorig:RightForeArm"},  {15, "mixamorig:LeftHand"},
      {16, "mixamorig:RightHand"},     {23, "mixamorig:LeftUpLeg"},
      {24, "mixamorig:RightUpLeg"},    {25, "mixamorig:LeftLeg"},
      {26, "mixamorig:RightLeg"},      {27, "mixamorig:LeftFoot"},
      {28, "mixamorig:RightFoot"},     {31, "mixamorig:LeftToeBase"},
      {32, "mixamorig:RightToeBase"}};
  for (const auto& [p, name] : want) EXPECT_EQ(mapped_name(c.summary, p), name) << p;
  EXPECT_EQ(c.summary.mapping.pelvis_joint, -1);
  for (const auto& line : c.lines)
    for (std::size_t i = 0; i < 33; ++i)
      EXPECT_EQ(line["points"][i][3].get<double>(), is_estimated_point(i) ? 0.5 : 1.0) << i;
}

// Independent FK: Eigen transforms, joint by joint through the parent chain.
Eigen::Vector3d eigen_world(const BvhHeader& h, std::span<const double> frame, std::size_t joint) {
  Eigen::Affine3d t = Eigen::Affine3d::Identity();
  std::vector<std::size_t> chain;
  for (int j = static_cast<int>(joint); j >= 0; j = h.joints[static_cast<std::size_t>(j)].parent)
    chain.push_back(static_cast<std::size_t>(j));
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    const BvhJoint& jt = h.joints[*it];
    Eigen::Vector3d offset(jt.offset[0], jt.offset[1], jt.offset[2]);
    Eigen::Matrix3d r = Eigen::Matrix3d::Identity();
    for (std::uint8_t k = 0; k < jt.channel_count; ++k) {
      double value = frame[jt.first_channel + k];
      switch (jt.channels[k]) {
        case Channel::kXposition:
          offset.x() = value;
          break;
        case Channel::kYposition:
          offset.y() = value;
          break;
        case Channel::kZposition:
          offset.z() = value;
          break;
        case Channel::kXrotation:
          r = r * Eigen::AngleAxisd(value * std::numbers::pi / 180, Eigen::Vector3d::UnitX());
          break;
        case Channel::kYrotation:
          r = r * Eigen::AngleAxisd(value * std::numbers::pi / 180, Eigen::Vector3d::UnitY());
          break;
        case Channel::kZrotation:
          r = r * Eigen::AngleAxisd(value * std::numbers::pi / 180, Eigen::Vector3d::UnitZ());
          break;
      }
    }
    t.translate(offset);  // t = t · T(offset)
    t.rotate(r);          // t = t · R
  }
  return t.translation();
}

TEST(PublicFiles, MocapbankMappedJointsAgreeWithAnIndependentFk) {
  Converted c = convert_file("test_mocapbank.bvh");
  const ConvertSummary& s = c.summary;
  const std::map<std::size_t, std::string> want = {
      {0, "Head"},        {11, "LeftShoulder"}, {12, "RightShoulder"}, {13, "LeftElbow"},
      {14, "RightElbow"}, {15, "LeftWrist"},    {16, "RightWrist"},    {23, "LeftHip"},
      {24, "RightHip"},   {25, "LeftKnee"},     {26, "RightKnee"},     {27, "LeftAnkle"},
      {28, "RightAnkle"}};
  for (const auto& [p, name] : want) EXPECT_EQ(mapped_name(s, p), name) << p;
  EXPECT_EQ(s.mapping.points[31].source, PointSource::kMissing);

  std::string_view text = core::as_chars(c.file.bytes());
  FrameReader reader(s.header, text);
  std::vector<double> v(s.header.channel_count);
  for (std::size_t f = 0; *reader.next(v); ++f) {
    const auto& pts = c.lines[f]["points"];
    Eigen::Vector3d pelvis =
        0.5 * (eigen_world(s.header, v, static_cast<std::size_t>(s.mapping.points[23].joint)) +
               eigen_world(s.header, v, static_cast<std::size_t>(s.mapping.points[24].joint)));
    for (const auto& [p, name] : want) {
      Eigen::Vector3d w =
          eigen_world(s.header, v, static_cast<std::size_t>(s.mapping.points[p].joint)) - pelvis;
      ASSERT_NEAR(pts[p][0].get<double>(), 0.5 + w.x() * s.scale, 1e-9) << name << " frame " << f;
      ASSERT_NEAR(pts[p][1].get<double>(), 0.5 - w.y() * s.scale, 1e-9) << name << " frame " << f;
      ASSERT_NEAR(pts[p][2].get<double>(), -w.z() * s.scale, 1e-9) << name << " frame " << f;
    }
    // No toe joints: the foot index sits on the ankle with confidence 0.
    EXPECT_EQ(pts[31][0], pts[27][0]);
    EXPECT_EQ(pts[31][1], pts[27][1]);
    EXPECT_EQ(pts[31][3].get<double>(), 0.0);
  }
}

TEST(Convert, FpsFromFrameTime) {
  EXPECT_EQ(fps_from_frame_time(0.0333333), 30.0);
  EXPECT_EQ(fps_from_frame_time(0.033333), 30.0);
  EXPECT_EQ(fps_from_frame_time(0.0083333), 120.0);
  EXPECT_EQ(fps_from_frame_time(0.04), 25.0);
  EXPECT_EQ(fps_from_frame_time(1.0 / 29.97), 29.97);
  EXPECT_EQ(fps_from_frame_time(0.0), std::nullopt);
  EXPECT_EQ(fps_from_frame_time(-1.0), std::nullopt);
}

TEST(Convert, OptionsFpsAndZeroMotion) {
  // One joint that never moves: every coordinate is 0, the scale guard keeps
  // the points at the centre; Frame Time 0 falls back to 30 fps with a warning.
  // The joint is the left wrist: 1 of the 15 mapped points, a second warning.
  std::string text = testing::bvh_lines({"HIERARCHY", "ROOT LeftHand", "{", "OFFSET 0 0 0",
                                         "CHANNELS 3 Xposition Yposition Zposition", "}", "MOTION",
                                         "Frames: 2", "Frame Time: 0", "0 0 0", "0 0 0"});
  std::string out;
  auto r = convert_bvh(text, ConvertOptions{}, [&](std::string_view s) {
    out += s;
    return true;
  });
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_EQ(r->fps, 30.0);
  EXPECT_EQ(r->scale, 1.0);
  ASSERT_EQ(r->warnings.size(), 2u);
  EXPECT_EQ(r->warnings[0].code, "BVH_FRAME_TIME");
  EXPECT_EQ(r->warnings[1].code, "MOTION_FEW_MAPPED_JOINTS");
  EXPECT_NE(out.find("{\"frame\":1,\"timeMs\":33.333333333333336,\"points\":[[0.5,0.5,0.0,0.0],"),
            std::string::npos)
      << out.substr(0, 200);

  ConvertOptions o;
  o.fps = 50;
  out.clear();
  auto r2 = convert_bvh(text, o, [&](std::string_view s) {
    out += s;
    return true;
  });
  ASSERT_TRUE(r2.ok());
  EXPECT_NE(out.find("{\"frame\":1,\"timeMs\":20.0,"), std::string::npos);
}

TEST(Convert, BadRowFailsBeforeAnyOutput) {
  std::string text = testing::bvh_lines({"HIERARCHY", "ROOT LeftHand", "{", "OFFSET 0 0 0",
                                         "CHANNELS 3 Xposition Yposition Zposition", "}", "MOTION",
                                         "Frames: 3", "Frame Time: 0.1", "0 0 0", "1 1", "0 0 0"});
  bool wrote = false;
  auto r = convert_bvh(text, ConvertOptions{}, [&](std::string_view) {
    wrote = true;
    return true;
  });
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "BVH_ROW");
  EXPECT_EQ(r.error().message.rfind("11:4: ", 0), 0u) << r.error().message;
  EXPECT_FALSE(wrote);
}

TEST(Convert, HugeValuesAreRefusedNotPrinted) {
  std::string text = testing::bvh_lines({"HIERARCHY", "ROOT Hips", "{", "OFFSET 1e308 0 0",
                                         "CHANNELS 3 Zrotation Xrotation Yrotation",
                                         "JOINT LeftHand", "{", "OFFSET 1e308 0 0", "}", "}",
                                         "MOTION", "Frames: 1", "Frame Time: 0.1", "0 0 0"});
  auto r = convert_bvh(text, ConvertOptions{}, [](std::string_view) { return true; });
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "MOTION_NOT_FINITE");
}

// Counts the pages the reader hands back: streaming releases what it has read.
class CountingHints : public core::InputHints {
 public:
  void done_reading(core::Bytes range) const override { released += range.size(); }
  mutable std::size_t released = 0;
};

TEST(Convert, ReaderReleasesWhatItHasRead) {
  std::string text = testing::bvh_lines({"HIERARCHY", "ROOT Hips", "{", "OFFSET 0 0 0",
                                         "CHANNELS 3 Xposition Yposition Zposition", "}", "MOTION",
                                         "Frames: 200000", "Frame Time: 0.1"});
  const std::size_t header = text.size();
  for (int i = 0; i < 200000; ++i) text += "1 2 3\n";
  CountingHints hints;
  auto h = parse_bvh_header(text);
  ASSERT_TRUE(h.ok());
  FrameReader reader(*h, text, {}, &hints);
  std::vector<double> v(3);
  while (*reader.next(v)) {
  }
  EXPECT_EQ(reader.frames_read(), 200000u);
  EXPECT_EQ(hints.released, text.size() - header);
}

}  // namespace
}  // namespace charkit::motion
