// FBX animations through Assimp, glTF / GLB animations through the glTF
// layer (docs/motion.md §FBX, glTF and GLB animations): hand-written glTF
// whose joint positions are computed by hand (LINEAR, CUBICSPLINE, STEP),
// the Khronos samples (properties, and the glTF layer against Assimp's
// reading of the same files), an FBX written here by Assimp's exporter and
// compared with the glTF-sourced positions, and the errors.
#include <gtest/gtest.h>

#include <assimp/scene.h>
#include <unistd.h>
#include <assimp/Exporter.hpp>
#include <assimp/Importer.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <numbers>
#include <string>
#include <vector>

#include "charkit/core/json.h"
#include "charkit/motion/assimp_motion.h"

namespace charkit::motion {
namespace {

std::string model_path(const char* name) {
  return std::string(CHARKIT_TEST_DATA) + "/models/" + name;
}

std::vector<std::uint8_t> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::span<const std::uint8_t> bytes_of(const std::string& s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

std::string base64(const std::vector<std::uint8_t>& in) {
  static const char* k = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (std::size_t i = 0; i < in.size(); i += 3) {
    std::uint32_t v = static_cast<std::uint32_t>(in[i]) << 16;
    if (i + 1 < in.size()) v |= static_cast<std::uint32_t>(in[i + 1]) << 8;
    if (i + 2 < in.size()) v |= in[i + 2];
    out += k[(v >> 18) & 63];
    out += k[(v >> 12) & 63];
    out += i + 1 < in.size() ? k[(v >> 6) & 63] : '=';
    out += i + 2 < in.size() ? k[v & 63] : '=';
  }
  return out;
}

void put_floats(std::vector<std::uint8_t>& buf, std::initializer_list<float> fs) {
  for (float f : fs) {
    std::uint8_t b[4];
    std::memcpy(b, &f, 4);  // little-endian host (x86-64, aarch64), as glTF stores them
    buf.insert(buf.end(), b, b + 4);
  }
}

// Three nodes Hips → Spine (0,1,0) → Head (0,1,0); animation "Turn" on Hips:
// rotation from identity to 90° about +Z and translation (0,0,0) → (2,0,0),
// keys at 0 s and 1 s, LINEAR. Hips at time t: (2t, 0, 0), rotated by
// θ = 90°·t (slerp is uniform in angle): Spine = Hips + (−sin θ, cos θ, 0),
// Head = Hips + 2·(−sin θ, cos θ, 0).
std::string minimal_gltf(bool with_animation = true, float end_s = 1.0f) {
  std::vector<std::uint8_t> buf;
  put_floats(buf, {0.0f, end_s});  // times, 8 bytes
  const float h = static_cast<float>(std::sqrt(0.5));
  put_floats(buf, {0, 0, 0, 1, 0, 0, h, h});  // quaternions xyzw, 32 bytes
  put_floats(buf, {0, 0, 0, 2, 0, 0});        // translations, 24 bytes
  std::string j =
      R"({"asset":{"version":"2.0"},"scene":0,"scenes":[{"nodes":[0]}],)"
      R"("nodes":[{"name":"Hips","children":[1]},{"name":"Spine","translation":[0,1,0],"children":[2]},)"
      R"({"name":"Head","translation":[0,1,0]}],)"
      R"("buffers":[{"byteLength":64,"uri":"data:application/octet-stream;base64,)" +
      base64(buf) +
      R"("}],)"
      R"("bufferViews":[{"buffer":0,"byteOffset":0,"byteLength":8},{"buffer":0,"byteOffset":8,"byteLength":32},)"
      R"({"buffer":0,"byteOffset":40,"byteLength":24}],)"
      R"("accessors":[{"bufferView":0,"componentType":5126,"count":2,"type":"SCALAR","min":[0],"max":[)" +
      std::to_string(end_s) +
      R"(]},)"
      R"({"bufferView":1,"componentType":5126,"count":2,"type":"VEC4"},)"
      R"({"bufferView":2,"componentType":5126,"count":2,"type":"VEC3"}])";
  if (with_animation)
    j +=
        R"(,"animations":[{"name":"Turn","channels":[{"sampler":0,"target":{"node":0,"path":"rotation"}},)"
        R"({"sampler":1,"target":{"node":0,"path":"translation"}}],)"
        R"("samplers":[{"input":0,"output":1,"interpolation":"LINEAR"},{"input":0,"output":2,"interpolation":"LINEAR"}]}])";
  return j + "}";
}

int joint_index(const AssimpMotion& m, const std::string& name) {
  for (std::size_t i = 0; i < m.joints.size(); ++i)
    if (m.joints[i].name == name) return static_cast<int>(i);
  return -1;
}

double dist(const Vec3& a, const Vec3& b) {
  return std::sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) +
                   (a[2] - b[2]) * (a[2] - b[2]));
}

std::vector<core::Json> ndjson_lines(const std::string& out) {
  std::vector<core::Json> lines;
  std::size_t start = 0;
  while (start < out.size()) {
    const std::size_t nl = out.find('\n', start);
    auto j = core::parse_json_strict(std::string_view(out).substr(start, nl - start));
    EXPECT_TRUE(j.ok());
    if (!j.ok()) break;
    lines.push_back(std::move(*j));
    start = nl + 1;
  }
  return lines;
}

std::string convert(const AssimpMotion& m, const ConvertOptions& o,
                    ConvertSummary* summary = nullptr) {
  std::string out;
  auto r = convert_assimp_motion(m, o, [&](std::string_view s) {
    out += s;
    return true;
  });
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().to_string());
  if (r.ok() && summary) *summary = *r;
  return out;
}

// ---- detection ---------------------------------------------------------------------

TEST(AssimpFormat, DetectedFromContent) {
  EXPECT_EQ(detect_assimp_format(std::string("glTF\x02\0\0\0\x20\0\0\0", 12)), AssimpFormat::kGlb);
  EXPECT_EQ(detect_assimp_format(std::string("Kaydara FBX Binary  \0\x1a\0", 23)),
            AssimpFormat::kFbxBinary);
  EXPECT_EQ(detect_assimp_format("; FBX 7.4.0 project file\nFBXHeaderExtension:  {\n}"),
            AssimpFormat::kFbxAscii);
  EXPECT_EQ(detect_assimp_format("\xEF\xBB\xBF  \r\n; FBX 6.1.0 project file"),
            AssimpFormat::kFbxAscii);
  EXPECT_EQ(detect_assimp_format(R"({"scene":0,"asset":{"version":"2.0"}})"), AssimpFormat::kGltf);
  EXPECT_EQ(detect_assimp_format(minimal_gltf()), AssimpFormat::kGltf);
  // Keypoint JSON and others are not Assimp's.
  EXPECT_EQ(detect_assimp_format(R"({"format":"mediapipe33@0.1.0","frames":[],"asset":{}})"),
            AssimpFormat::kUnknown);
  EXPECT_EQ(detect_assimp_format(R"({"x":{"asset":1}})"), AssimpFormat::kUnknown);  // not top level
  EXPECT_EQ(detect_assimp_format("HIERARCHY\nROOT Hips\n"), AssimpFormat::kUnknown);
  EXPECT_EQ(detect_assimp_format("glTF"), AssimpFormat::kUnknown);  // shorter than a GLB header
  EXPECT_EQ(detect_assimp_format(""), AssimpFormat::kUnknown);
  EXPECT_EQ(detect_assimp_format("{\"asset\": "),
            AssimpFormat::kGltf);  // a broken glTF is still glTF (Assimp says why)
}

// ---- the hand-written glTF -------------------------------------------------------------

TEST(AssimpMotion, HandWrittenGltfJointPositions) {
  const std::string text = minimal_gltf();
  auto m = load_assimp_motion(bytes_of(text));
  ASSERT_TRUE(m.ok()) << m.error().to_string();
  EXPECT_EQ(m->format, AssimpFormat::kGltf);
  ASSERT_EQ(m->joints.size(), 3u);
  EXPECT_EQ(m->joints[0].name, "Hips");
  EXPECT_EQ(m->joints[1].name, "Spine");
  EXPECT_EQ(m->joints[2].name, "Head");
  EXPECT_EQ(m->joints[0].parent, -1);
  EXPECT_EQ(m->joints[1].parent, 0);
  EXPECT_EQ(m->joints[2].parent, 1);
  EXPECT_FALSE(m->skinned);
  EXPECT_EQ(m->animated_joints, 1u);
  ASSERT_EQ(m->animations.size(), 1u);
  EXPECT_EQ(m->animations[0].name, "Turn");
  EXPECT_NEAR(m->duration_seconds, 1.0, 1e-9);
  // Two keys 1 s apart give no usable frame rate: the default 30 fps,
  // round(1 s × 30) + 1 = 31 frames.
  EXPECT_EQ(m->fps, 30.0);
  EXPECT_EQ(m->fps_source, "default");
  EXPECT_EQ(m->frames, 31u);

  std::vector<Vec3> p(3);
  for (double t : {0.0, 0.25, 0.5, 0.8, 1.0, 1.5, -1.0}) {
    m->sample_at(t, p);
    const double tc = std::clamp(t, 0.0, 1.0);  // held before the first and after the last key
    const double th = tc * std::numbers::pi / 2;
    const Vec3 hips{2 * tc, 0, 0};
    const Vec3 spine{hips[0] - std::sin(th), std::cos(th), 0};
    const Vec3 head{hips[0] - 2 * std::sin(th), 2 * std::cos(th), 0};
    for (int k = 0; k < 3; ++k) {
      EXPECT_NEAR(p[0][static_cast<std::size_t>(k)], hips[static_cast<std::size_t>(k)], 1e-6) << t;
      EXPECT_NEAR(p[1][static_cast<std::size_t>(k)], spine[static_cast<std::size_t>(k)], 1e-6) << t;
      EXPECT_NEAR(p[2][static_cast<std::size_t>(k)], head[static_cast<std::size_t>(k)], 1e-6) << t;
    }
  }
  // Frame 15 is t = 0.5 s.
  std::vector<Vec3> q(3);
  m->sample(15, q);
  m->sample_at(0.5, p);
  EXPECT_EQ(p, q);
}

TEST(AssimpMotion, HandWrittenGltfNdjson) {
  const std::string text = minimal_gltf();
  auto m = load_assimp_motion(bytes_of(text));
  ASSERT_TRUE(m.ok()) << m.error().to_string();
  ConvertSummary s;
  const auto lines = ndjson_lines(convert(*m, {}, &s));
  ASSERT_EQ(lines.size(), 31u);
  // Head is the nose (point 0); shoulders and hips are missing, so the pelvis
  // is "Hips" by name and the shoulder centre is the pelvis. The largest
  // coordinate over the motion (skeleton-topology.md §3.1, w = |N − S| = 2,
  // u = N/|N|, r = (1,0,0)): point 6 right_eye_outer = N + 0.1·w·u − 0.15·w·r,
  // x = −2.2 − 0.3 = −2.5 at θ = 90°. Scale 0.35 / 2.5 = 0.14.
  EXPECT_NEAR(s.max_abs, 2.5, 1e-6);
  EXPECT_NEAR(s.scale, 0.14, 1e-9);
  EXPECT_EQ(s.mapping.points[0].source, PointSource::kMapped);
  const core::Json& f15 = lines[15];
  EXPECT_EQ(f15["frame"], 15);
  EXPECT_NEAR(f15["timeMs"].get<double>(), 500.0, 1e-9);
  // θ = 45°: nose = (−√2, √2, 0) → x = 0.5 − √2·0.14, y = 0.5 − √2·0.14, z = 0.
  const double e = 0.5 - std::sqrt(2.0) * 0.14;
  EXPECT_NEAR(f15["points"][0][0].get<double>(), e, 1e-6);
  EXPECT_NEAR(f15["points"][0][1].get<double>(), e, 1e-6);
  EXPECT_NEAR(f15["points"][0][2].get<double>(), 0.0, 1e-6);
  EXPECT_EQ(f15["points"][0][3].get<double>(), 1.0);
  EXPECT_EQ(f15["points"][11][3].get<double>(), 0.0);  // missing shoulder
  // Frame 0: nose straight up, (0.5, 0.5 − 2·0.14).
  EXPECT_NEAR(lines[0]["points"][0][0].get<double>(), 0.5, 1e-6);
  EXPECT_NEAR(lines[0]["points"][0][1].get<double>(), 0.5 - 0.28, 1e-6);
}

TEST(AssimpMotion, AnimationByIndexNameAndFps) {
  const std::string text = minimal_gltf();
  AssimpMotionOptions o;
  o.animation = "Turn";
  o.fps = 10;
  auto m = load_assimp_motion(bytes_of(text), o);
  ASSERT_TRUE(m.ok()) << m.error().to_string();
  EXPECT_EQ(m->frames, 11u);
  EXPECT_EQ(m->fps_source, "option");
  o.animation = "0";
  EXPECT_TRUE(load_assimp_motion(bytes_of(text), o).ok());
  o.animation = "1";
  auto bad = load_assimp_motion(bytes_of(text), o);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, "MOTION_ANIMATION_NOT_FOUND");
  EXPECT_NE(bad.error().message.find("(the file has 1, by index from 0: 'Turn')"),
            std::string::npos)
      << bad.error().message;
  o.animation = "Walk";
  bad = load_assimp_motion(bytes_of(text), o);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, "MOTION_ANIMATION_NOT_FOUND");
}

// ---- errors ---------------------------------------------------------------------------

TEST(AssimpMotion, NoAnimation) {
  const std::string text = minimal_gltf(false);
  auto m = load_assimp_motion(bytes_of(text));
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().code, "MOTION_NO_ANIMATION");
  // A skinned VRM without animation.
  auto v = load_assimp_motion_file(model_path("sphere.vrm"));
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error().code, "MOTION_NO_ANIMATION") << v.error().to_string();
}

TEST(AssimpMotion, CorruptFilesFailClearly) {
  auto glb = read_file(model_path("RiggedSimple.glb"));
  ASSERT_GT(glb.size(), 1000u);
  // Truncated: the header's length points past the end (checked before Assimp).
  std::vector<std::uint8_t> cut(glb.begin(), glb.begin() + 600);
  auto r = load_assimp_motion(cut);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "MOTION_IMPORT_FAILED");
  EXPECT_EQ(r.error().message,
            "not a valid GLB container: GLB_TRUNCATED: the header declares 11048 bytes, the file "
            "has 600 (at byte 8)");
  // A chunk length past the end (bytes 12–15: the JSON chunk's length).
  auto big = glb;
  big[15] = 0x2d;
  r = load_assimp_motion(big);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(
      r.error().message.find("not a valid GLB container: GLB_CHUNK_LENGTH: JSON chunk length"),
      std::string::npos)
      << r.error().message;
  EXPECT_NE(r.error().message.find("(at byte 12)"), std::string::npos) << r.error().message;
  // The JSON chunk overwritten with junk: refused by our glTF checks before
  // Assimp sees it, with the JSON error and its byte offset.
  auto junk = glb;
  for (std::size_t i = 20; i < 120; ++i) junk[i] = '#';
  r = load_assimp_motion(junk);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "MOTION_IMPORT_FAILED") << r.error().to_string();
  EXPECT_NE(r.error().message.find("not a valid glb file: JSON_SYNTAX"), std::string::npos)
      << r.error().message;
  EXPECT_NE(r.error().message.find("(at byte 20)"), std::string::npos) << r.error().message;
  // A GLB whose JSON holds ill-formed UTF-8 (found by assimp_motion_fuzz:
  // libassimp 5.2 crashes on it) is refused cleanly.
  auto bad_utf8 = glb;
  const std::string needle = "\"generator\"";
  const std::string_view text(reinterpret_cast<const char*>(bad_utf8.data()), bad_utf8.size());
  const std::size_t at = text.find(needle);
  ASSERT_NE(at, std::string_view::npos);
  bad_utf8[at + 1] = 0xF2;  // a lead byte without its continuation bytes
  r = load_assimp_motion(bad_utf8);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "MOTION_IMPORT_FAILED") << r.error().to_string();
  EXPECT_NE(r.error().message.find("JSON_SYNTAX"), std::string::npos) << r.error().message;
  // Assimp's own message, for a file that passes our checks but that
  // Assimp refuses: an FBX header over nonsense (below).
  // A broken glTF JSON and an FBX header over nonsense.
  r = load_assimp_motion(
      bytes_of(std::string(R"({"asset":{"version":"2.0"},"nodes":[{"children":[7]}]})")));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "MOTION_IMPORT_FAILED") << r.error().to_string();
  r = load_assimp_motion(bytes_of(std::string("; FBX 7.4.0 project file\nthis is { not FBX")));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "MOTION_IMPORT_FAILED") << r.error().to_string();
  EXPECT_NE(r.error().message.find("Assimp cannot read this"), std::string::npos)
      << r.error().message;
  r = load_assimp_motion(bytes_of(std::string("Kaydara FBX Binary  \0\x1a\0\xe8\x1c\0\0", 27)));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "MOTION_IMPORT_FAILED") << r.error().to_string();
}

// The GLB container around new JSON text (padded with spaces), keeping the
// BIN chunk of `glb`.
std::vector<std::uint8_t> with_json(const std::vector<std::uint8_t>& glb, std::string json) {
  auto u32 = [&](std::size_t at) {
    return static_cast<std::uint32_t>(glb[at]) | static_cast<std::uint32_t>(glb[at + 1]) << 8 |
           static_cast<std::uint32_t>(glb[at + 2]) << 16 |
           static_cast<std::uint32_t>(glb[at + 3]) << 24;
  };
  const std::size_t json_len = u32(12);
  const std::vector<std::uint8_t> rest(glb.begin() + 20 + static_cast<std::ptrdiff_t>(json_len),
                                       glb.end());
  while (json.size() % 4 != 0) json += ' ';
  std::vector<std::uint8_t> out;
  auto put = [&](std::uint32_t v) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  };
  out.insert(out.end(), {'g', 'l', 'T', 'F'});
  put(2);
  put(static_cast<std::uint32_t>(20 + json.size() + rest.size()));
  put(static_cast<std::uint32_t>(json.size()));
  out.insert(out.end(), {'J', 'S', 'O', 'N'});
  out.insert(out.end(), json.begin(), json.end());
  out.insert(out.end(), rest.begin(), rest.end());
  return out;
}

// libassimp 5.2 dereferences a missing inverseBindMatrices accessor and
// crashes (found by assimp_motion_fuzz). The file is valid glTF (the member
// is optional, glTF 2.0 §5.28), so our checks pass it; the import runs in a
// child process and the crash becomes an error.
TEST(AssimpMotion, AnAssimpCrashBecomesAnError) {
  const auto glb = read_file(model_path("RiggedSimple.glb"));
  const std::size_t json_len = glb[12] | glb[13] << 8 | glb[14] << 16 | glb[15] << 24;
  auto json = core::Json::parse(std::string(glb.begin() + 20, glb.begin() + 20 + json_len));
  ASSERT_TRUE(json["skins"][0].contains("inverseBindMatrices"));
  json["skins"][0].erase("inverseBindMatrices");
  const auto crashing = with_json(glb, json.dump());
  AssimpMotionOptions assimp;
  assimp.gltf_with_assimp = true;
  auto r = load_assimp_motion(crashing, assimp);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "MOTION_IMPORT_FAILED") << r.error().to_string();
  EXPECT_NE(r.error().message.find("Assimp could not read this glb file: the Assimp import "
                                   "crashed"),
            std::string::npos)
      << r.error().message;
  // And the process goes on: the unmodified file still loads.
  auto ok = load_assimp_motion(glb, assimp);
  ASSERT_TRUE(ok.ok()) << ok.error().to_string();
  // The glTF layer reads the file Assimp crashed on (it is valid glTF).
  auto layer = load_assimp_motion(crashing);
  ASSERT_TRUE(layer.ok()) << layer.error().to_string();
  EXPECT_EQ(layer->joints.size(), ok->joints.size());
}

// A hang or a runaway import is stopped by the child's time limit.
TEST(AssimpMotion, TheImportTimeLimitHolds) {
  AssimpMotionOptions o;
  o.gltf_with_assimp = true;
  o.isolation.timeout = std::chrono::milliseconds(1);
  const auto glb = read_file(model_path("CesiumMan.glb"));
  auto r = load_assimp_motion(glb, o);
  // 1 ms is too short for CesiumMan's import in any build of ours.
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "MOTION_IMPORT_FAILED");
  EXPECT_NE(r.error().message.find("ran longer than 1 ms"), std::string::npos) << r.error().message;
}

// The motion carried back from the child equals the one built in process:
// every field and every sampled position.
TEST(AssimpMotion, IsolatedImportEqualsInProcess) {
  for (const char* name : {"CesiumMan.glb", "RiggedSimple.glb", "RiggedFigure.glb"}) {
    SCOPED_TRACE(name);
    AssimpMotionOptions isolated, inproc;
    isolated.gltf_with_assimp = inproc.gltf_with_assimp = true;
    inproc.isolate = false;
    auto a = load_assimp_motion_file(model_path(name), isolated);
    auto b = load_assimp_motion_file(model_path(name), inproc);
    ASSERT_TRUE(a.ok()) << a.error().to_string();
    ASSERT_TRUE(b.ok()) << b.error().to_string();
    EXPECT_EQ(a->format, b->format);
    ASSERT_EQ(a->joints.size(), b->joints.size());
    for (std::size_t j = 0; j < a->joints.size(); ++j) {
      EXPECT_EQ(a->joints[j].name, b->joints[j].name);
      EXPECT_EQ(a->joints[j].parent, b->joints[j].parent);
      EXPECT_EQ(a->joints[j].offset, b->joints[j].offset);
    }
    EXPECT_EQ(a->root_count, b->root_count);
    EXPECT_EQ(a->skinned, b->skinned);
    ASSERT_EQ(a->animations.size(), b->animations.size());
    for (std::size_t i = 0; i < a->animations.size(); ++i) {
      EXPECT_EQ(a->animations[i].name, b->animations[i].name);
      EXPECT_EQ(a->animations[i].duration_ticks, b->animations[i].duration_ticks);
      EXPECT_EQ(a->animations[i].channels, b->animations[i].channels);
    }
    EXPECT_EQ(a->duration_seconds, b->duration_seconds);
    EXPECT_EQ(a->fps, b->fps);
    EXPECT_EQ(a->fps_source, b->fps_source);
    EXPECT_EQ(a->frames, b->frames);
    EXPECT_EQ(a->up_axis, b->up_axis);
    EXPECT_EQ(a->animated_joints, b->animated_joints);
    EXPECT_EQ(a->warnings.size(), b->warnings.size());
    std::vector<Vec3> pa(a->joints.size()), pb(b->joints.size());
    for (std::uint64_t f = 0; f < a->frames; ++f) {
      a->sample(f, pa);
      b->sample(f, pb);
      ASSERT_EQ(pa, pb) << "frame " << f;  // bit-identical: the codec carries doubles whole
    }
  }
}

TEST(AssimpMotion, TextFileIsNotAModel) {
  auto r = load_assimp_motion(bytes_of(std::string("just some text\n")));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "MOTION_FORMAT");
  // The file API, with a misleading name.
  const auto path = std::filesystem::temp_directory_path() /
                    ("charkit_assimp_text_" + std::to_string(getpid()) + ".fbx");
  { std::ofstream(path) << "just some text\n"; }
  r = load_assimp_motion_file(path.string());
  std::filesystem::remove(path);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "MOTION_FORMAT");
  r = load_assimp_motion_file("/nonexistent/charkit/x.glb");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "IO_OPEN");
}

TEST(AssimpMotion, SizeAndFrameLimits) {
  const std::string text = minimal_gltf();
  AssimpMotionOptions o;
  o.limits.max_bytes = 100;
  auto r = load_assimp_motion(bytes_of(text), o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "MOTION_LIMIT");
  o = {};
  o.fps = 1000;
  o.limits.max_frames = 500;  // 1 s at 1000 fps = 1001 frames
  r = load_assimp_motion(bytes_of(text), o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "MOTION_LIMIT");
}

// A 1.7 KB glTF whose animation lasts 6 000 s made 180 001 frames
// and 388 MB of keypoints. The budget refuses it from duration × fps before
// one frame is sampled or written.
TEST(AssimpMotion, BudgetRefusesALongAnimationBeforeSampling) {
  const std::string text = minimal_gltf(true, 6000.0f);
  ASSERT_LT(text.size(), 2000u);
  auto m = load_assimp_motion(bytes_of(text));
  ASSERT_TRUE(m.ok()) << m.error().to_string();
  EXPECT_EQ(m->frames, 180'001u);
  ConvertOptions o;
  o.budget.max_output_bytes = 256ull << 20;  // the server's default
  int chunks = 0;
  auto r = convert_assimp_motion(*m, o, [&](std::string_view) {
    ++chunks;
    return true;
  });
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "MOTION_BUDGET_OUTPUT_BYTES");
  EXPECT_EQ(chunks, 0);
  o.budget = {};
  o.budget.max_joint_frames = 180'001 * m->joints.size() - 1;
  auto a = analyse_assimp_motion(*m, o);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.error().code, "MOTION_BUDGET_JOINT_FRAMES");
  // The short original converts within the same budgets.
  auto small = load_assimp_motion(bytes_of(minimal_gltf()));
  ASSERT_TRUE(small.ok());
  o.budget = {50'000'000, 256ull << 20};
  EXPECT_FALSE(convert(*small, o).empty());
}

TEST(AssimpMotion, CancelStopsImportAndConversion) {
  std::atomic<bool> cancel{true};
  AssimpMotionOptions ao;
  ao.gltf_with_assimp = true;  // the Assimp import, in its child process, is what is cancelled
  ao.isolation.cancel = &cancel;
  auto m = load_assimp_motion(bytes_of(minimal_gltf()), ao);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().code, "MOTION_CANCELLED");
  cancel = false;
  m = load_assimp_motion(bytes_of(minimal_gltf()), ao);
  ASSERT_TRUE(m.ok()) << m.error().to_string();
  cancel = true;
  ConvertOptions o;
  o.cancel = &cancel;
  auto r = convert_assimp_motion(*m, o, [](std::string_view) { return true; });
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "MOTION_CANCELLED");
}

TEST(AssimpMotion, ExternalFilesOnlyBesideTheInput) {
  // From memory no file may be opened: a buffer URI fails the import.
  std::string text = minimal_gltf();
  const std::string data_uri =
      text.substr(text.find("data:"), text.find("\"}]", text.find("data:")) - text.find("data:"));
  std::string ext = text;
  ext.replace(ext.find(data_uri), data_uri.size(), "/etc/hostname");
  auto r = load_assimp_motion(bytes_of(ext));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "MOTION_IMPORT_FAILED");
}

// ---- the Khronos samples --------------------------------------------------------------

// CesiumMan (19 joints, 49 keys over 2 s): a skinned walk.
TEST(AssimpMotion, CesiumManProperties) {
  auto m = load_assimp_motion_file(model_path("CesiumMan.glb"));
  ASSERT_TRUE(m.ok()) << m.error().to_string();
  EXPECT_EQ(m->format, AssimpFormat::kGlb);
  EXPECT_TRUE(m->skinned);
  EXPECT_EQ(m->joints.size(), 19u);  // the skin's joints; the LCA is a bone
  EXPECT_EQ(m->root_count, 1u);
  EXPECT_NEAR(m->duration_seconds, 2.0, 1e-6);
  // 48 key intervals over 2 s: 24 fps from the key spacing; round(2 × 24) + 1 frames.
  EXPECT_EQ(m->fps, 24.0);
  EXPECT_EQ(m->fps_source, "key spacing");
  EXPECT_EQ(m->frames, 49u);
  EXPECT_EQ(m->up_axis, "Y-up (glTF)");

  // Bone lengths constant across frames (rigid bones, no scale keys change them).
  std::vector<Vec3> p0(m->joints.size()), p(m->joints.size());
  m->sample(0, p0);
  double max_bone = 0;
  for (std::size_t j = 0; j < m->joints.size(); ++j)
    if (m->joints[j].parent >= 0)
      max_bone = std::max(max_bone, dist(p0[j], p0[static_cast<std::size_t>(m->joints[j].parent)]));
  ASSERT_GT(max_bone, 0);
  bool moved = false;
  for (std::uint64_t f = 1; f < m->frames; ++f) {
    m->sample(f, p);
    for (std::size_t j = 0; j < m->joints.size(); ++j) {
      moved = moved || dist(p[j], p0[j]) > 1e-3 * max_bone;
      const int par = m->joints[j].parent;
      if (par < 0) continue;
      EXPECT_NEAR(dist(p[j], p[static_cast<std::size_t>(par)]),
                  dist(p0[j], p0[static_cast<std::size_t>(par)]), 1e-4 * max_bone)
          << "frame " << f << " joint " << m->joints[j].name;
    }
  }
  EXPECT_TRUE(moved);

  // Through the MediaPipe pipeline. The sample's joints are unnamed
  // ("#N"), so a joint map names them: the two three-joint arm chains
  // and the two four-joint leg chains of the tree.
  const std::string map =
      R"({"left_shoulder":["#13"],"left_elbow":["#14"],"left_wrist":["#15"],)"
      R"("right_shoulder":["#16"],"right_elbow":["#17"],"right_wrist":["#18"],)"
      R"("left_hip":["#3"],"left_knee":["#4"],"left_ankle":["#5"],"left_foot_index":["#6"],)"
      R"("right_hip":["#7"],"right_knee":["#8"],"right_ankle":["#9"],"right_foot_index":["#10"],)"
      R"("nose":["#20"]})";
  auto table = apply_joint_map(default_joint_table(), map);
  ASSERT_TRUE(table.ok()) << table.error().to_string();
  ConvertOptions o;
  o.table = *table;
  ConvertSummary s;
  const auto lines = ndjson_lines(convert(*m, o, &s));
  ASSERT_EQ(lines.size(), 49u);
  for (std::size_t pt : {0u, 11u, 12u, 13u, 14u, 15u, 16u, 23u, 24u, 25u, 26u, 27u, 28u, 31u, 32u})
    EXPECT_EQ(s.mapping.points[pt].source, PointSource::kMapped) << pt;
  auto pt3 = [](const core::Json& line, std::size_t i) {
    const auto& q = line["points"][i];
    return Vec3{q[0].get<double>(), q[1].get<double>(), q[2].get<double>()};
  };
  const std::pair<std::size_t, std::size_t> bones[] = {{13, 15}, {14, 16}, {25, 27},
                                                       {26, 28}, {11, 13}, {23, 25}};
  for (std::size_t f = 0; f < lines.size(); ++f) {
    const auto& l = lines[f];
    EXPECT_EQ(l["frame"].get<std::uint64_t>(), f);
    EXPECT_NEAR(l["timeMs"].get<double>(), static_cast<double>(f) * 1000.0 / 24.0, 1e-9);
    ASSERT_EQ(l["points"].size(), 33u);
    ASSERT_EQ(l["angles"].size(), 9u);
    for (const auto& q : l["points"]) {
      EXPECT_GE(q[0].get<double>(), 0.15);
      EXPECT_LE(q[0].get<double>(), 0.85);
      EXPECT_GE(q[1].get<double>(), 0.15);
      EXPECT_LE(q[1].get<double>(), 0.85);
      EXPECT_GE(q[2].get<double>(), -0.35);
      EXPECT_LE(q[2].get<double>(), 0.35);
    }
    for (const auto& a : l["angles"]) {
      EXPECT_GE(a.get<double>(), -1.0);
      EXPECT_LE(a.get<double>(), 1.0);
    }
    // The projection is a uniform scale plus a reflection: mapped bone
    // lengths stay constant in the output too.
    for (auto [a, b] : bones)
      EXPECT_NEAR(dist(pt3(l, a), pt3(l, b)), dist(pt3(lines[0], a), pt3(lines[0], b)), 1e-4) << f;
  }
}

// RiggedSimple: 2 bones, 3 keys (0.0417 s … 2.083 s).
TEST(AssimpMotion, RiggedSimpleProperties) {
  auto m = load_assimp_motion_file(model_path("RiggedSimple.glb"));
  ASSERT_TRUE(m.ok()) << m.error().to_string();
  EXPECT_TRUE(m->skinned);
  ASSERT_EQ(m->joints.size(), 2u);
  EXPECT_EQ(m->joints[1].parent, 0);
  EXPECT_NEAR(m->duration_seconds, 2.0833330154418945, 1e-6);  // the accessor's max
  // Keys 1.04 s apart: too sparse for a rate, so 30 fps; round(2.0833 × 30) + 1 = 63.
  EXPECT_EQ(m->fps_source, "default");
  EXPECT_EQ(m->frames, 63u);
  std::vector<Vec3> p(2), p0(2);
  m->sample(0, p0);
  const double len = dist(p0[0], p0[1]);
  ASSERT_GT(len, 0);
  for (std::uint64_t f = 0; f < m->frames; ++f) {
    m->sample(f, p);
    EXPECT_NEAR(dist(p[0], p[1]), len, 1e-4 * len) << f;
  }
  // Its joints are unnamed ("#2", "#3"): nothing maps, so the
  // conversion is refused; a joint map naming them converts, with a warning.
  std::string out;
  auto refused = convert_assimp_motion(*m, {}, [&](std::string_view s) {
    out += s;
    return true;
  });
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, "MOTION_NO_MAPPED_JOINTS");
  EXPECT_NE(refused.error().message.find("the skeleton's joints: '#2', '#3';"), std::string::npos)
      << refused.error().message;
  EXPECT_TRUE(out.empty());
  ConvertOptions o;
  auto t =
      apply_joint_map(default_joint_table(), R"({"left_shoulder": ["#2"], "left_elbow": ["#3"]})");
  ASSERT_TRUE(t.ok());
  o.table = *t;
  ConvertSummary s;
  const auto lines = ndjson_lines(convert(*m, o, &s));
  EXPECT_EQ(lines.size(), 63u);
  ASSERT_EQ(s.warnings.size(), 1u);
  EXPECT_EQ(s.warnings[0].code, "MOTION_FEW_MAPPED_JOINTS");
}

// ---- the glTF layer against Assimp ------------------------------------------------------

// glTF and GLB are read by the glTF layer; Assimp, asked to read them too,
// is the independent reference: the same skeleton (Assimp calls unnamed
// node N "nodes[N]", charkit "#N"), time base and joint positions at every
// frame, on the three Khronos samples (LINEAR samplers, which both evaluate
// alike).
TEST(GltfMotion, MatchesAssimpOnTheSamples) {
  for (const char* name : {"CesiumMan.glb", "RiggedSimple.glb", "RiggedFigure.glb"}) {
    SCOPED_TRACE(name);
    AssimpMotionOptions assimp;
    assimp.gltf_with_assimp = true;
    auto a = load_assimp_motion_file(model_path(name));
    auto b = load_assimp_motion_file(model_path(name), assimp);
    ASSERT_TRUE(a.ok()) << a.error().to_string();
    ASSERT_TRUE(b.ok()) << b.error().to_string();
    EXPECT_EQ(a->format, b->format);
    ASSERT_EQ(a->joints.size(), b->joints.size());
    std::vector<Vec3> pa(a->joints.size()), pb(b->joints.size());
    a->sample(0, pa);
    double size = 0;
    for (const auto& v : pa)
      size = std::max({size, std::abs(v[0]), std::abs(v[1]), std::abs(v[2])});
    ASSERT_GT(size, 0);
    for (std::size_t j = 0; j < a->joints.size(); ++j) {
      const std::string& n = a->joints[j].name;
      EXPECT_EQ(n.starts_with('#') ? "nodes[" + n.substr(1) + "]" : n, b->joints[j].name);
      EXPECT_EQ(a->joints[j].parent, b->joints[j].parent) << n;
      EXPECT_LT(dist(a->joints[j].offset, b->joints[j].offset), 1e-5 * size) << n;
    }
    EXPECT_EQ(a->root_count, b->root_count);
    EXPECT_EQ(a->skinned, b->skinned);
    EXPECT_EQ(a->animations.size(), b->animations.size());
    EXPECT_NEAR(a->duration_seconds, b->duration_seconds, 1e-6);
    EXPECT_EQ(a->fps, b->fps);
    EXPECT_EQ(a->fps_source, b->fps_source);
    EXPECT_EQ(a->frames, b->frames);
    EXPECT_EQ(a->up_axis, b->up_axis);
    EXPECT_EQ(a->animated_joints, b->animated_joints);
    for (std::uint64_t f = 0; f < a->frames; ++f) {
      a->sample(f, pa);
      b->sample(f, pb);
      for (std::size_t j = 0; j < pa.size(); ++j)
        ASSERT_LT(dist(pa[j], pb[j]), 1e-4 * size) << "frame " << f << " joint " << j;
    }
  }
}

// Root (animated) → Tip (0, 1, 0). Root's translation is a CUBICSPLINE over
// keys at 0 s and 2 s, its scale STEP over keys at 0 s and 1 s; Assimp
// blends both linearly, glTF 2.0 (Appendix C) does not. Expected values from
// the Hermite basis written out here: with s = t / 2 and the tangents
// scaled by the 2 s interval, p(t) = h00·v0 + h10·2·b0 + h01·v1 + h11·2·a1.
TEST(GltfMotion, CubicSplineAndStepAsGltfDefines) {
  std::vector<std::uint8_t> buf;
  put_floats(buf, {0.0f, 2.0f});  // cubic key times, 8 bytes
  // key 0: in-tangent, value, out-tangent; key 1 likewise (72 bytes).
  put_floats(buf, {0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 6, 0, 4, 0, 0, 0, 0, 0});
  put_floats(buf, {0.0f, 1.0f});        // step key times, 8 bytes
  put_floats(buf, {1, 1, 1, 2, 2, 2});  // scales, 24 bytes
  const std::string text =
      R"({"asset":{"version":"2.0"},"scene":0,"scenes":[{"nodes":[0]}],)"
      R"("nodes":[{"name":"Root","children":[1]},{"name":"Tip","translation":[0,1,0]}],)"
      R"("buffers":[{"byteLength":112,"uri":"data:application/octet-stream;base64,)" +
      base64(buf) +
      R"("}],"bufferViews":[{"buffer":0,"byteLength":8},{"buffer":0,"byteOffset":8,"byteLength":72},)"
      R"({"buffer":0,"byteOffset":80,"byteLength":8},{"buffer":0,"byteOffset":88,"byteLength":24}],)"
      R"("accessors":[{"bufferView":0,"componentType":5126,"count":2,"type":"SCALAR","min":[0],"max":[2]},)"
      R"({"bufferView":1,"componentType":5126,"count":6,"type":"VEC3"},)"
      R"({"bufferView":2,"componentType":5126,"count":2,"type":"SCALAR","min":[0],"max":[1]},)"
      R"({"bufferView":3,"componentType":5126,"count":2,"type":"VEC3"}],)"
      R"("animations":[{"channels":[{"sampler":0,"target":{"node":0,"path":"translation"}},)"
      R"({"sampler":1,"target":{"node":0,"path":"scale"}}],)"
      R"("samplers":[{"input":0,"output":1,"interpolation":"CUBICSPLINE"},)"
      R"({"input":2,"output":3,"interpolation":"STEP"}]}]})";
  auto m = load_assimp_motion(bytes_of(text));
  ASSERT_TRUE(m.ok()) << m.error().to_string();
  ASSERT_EQ(m->joints.size(), 2u);
  EXPECT_NEAR(m->duration_seconds, 2.0, 1e-9);
  std::vector<Vec3> p(2);
  for (double t : {0.0, 0.3, 0.99, 1.0, 1.4, 2.0, 2.5}) {
    m->sample_at(t, p);
    const double u = std::clamp(t, 0.0, 2.0) / 2;
    const double h00 = 2 * u * u * u - 3 * u * u + 1, h10 = u * u * u - 2 * u * u + u;
    const double h01 = -2 * u * u * u + 3 * u * u, h11 = u * u * u - u * u;
    // v0 = 0, b0 = (3, 0, 0), v1 = (4, 0, 0), a1 = (0, 6, 0).
    const Vec3 root{h10 * 2 * 3 + h01 * 4, h11 * 2 * 6, 0};
    (void)h00;
    const double scale = t < 1.0 ? 1.0 : 2.0;
    EXPECT_LT(dist(p[0], root), 1e-6) << t;
    EXPECT_LT(dist(p[1], Vec3{root[0], root[1] + scale, root[2]}), 1e-6) << t;
  }
}

// The JSON text is bounded before it is parsed (its parsed form is several
// times larger), for glTF JSON and for a GLB's JSON chunk.
TEST(GltfMotion, TheJsonTextIsBounded) {
  AssimpMotionOptions o;
  o.limits.max_json_bytes = 100;
  auto m = load_assimp_motion(bytes_of(minimal_gltf()), o);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().code, "MOTION_LIMIT");
  EXPECT_NE(m.error().message.find("over the limit of 100"), std::string::npos)
      << m.error().message;
  auto glb = load_assimp_motion_file(model_path("RiggedSimple.glb"), o);
  ASSERT_FALSE(glb.ok());
  EXPECT_EQ(glb.error().code, "MOTION_LIMIT");
  o.limits.max_json_bytes = 1 << 20;
  EXPECT_TRUE(load_assimp_motion(bytes_of(minimal_gltf()), o).ok());
}

// A sampler the glTF layer refuses is a located error in the motion's message.
TEST(GltfMotion, ABadSamplerIsALocatedError) {
  std::string text = minimal_gltf();
  // The rotation sampler's output read as the translations: VEC3, not VEC4.
  const std::string from = R"({"sampler":0,"target":{"node":0,"path":"rotation"}})";
  const std::string to = R"({"sampler":1,"target":{"node":0,"path":"rotation"}})";
  text.replace(text.find(from), from.size(), to);
  const std::string twice = R"({"sampler":1,"target":{"node":0,"path":"translation"}})";
  text.replace(text.find(twice), twice.size(),
               R"({"sampler":0,"target":{"node":0,"path":"translation"}})");
  auto m = load_assimp_motion(bytes_of(text));
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().code, "MOTION_IMPORT_FAILED");
  EXPECT_NE(m.error().message.find("GLTF_ANIMATION: type must be VEC4"), std::string::npos)
      << m.error().message;
  EXPECT_NE(m.error().message.find("/accessors/2/type"), std::string::npos) << m.error().message;
}

// ---- FBX written by Assimp's exporter ------------------------------------------------

// Assimp 5.2's FBX exporter writes key times in ticks as if they were
// seconds, its importer clips keys past the take's length, and the exporter
// drops the root node's transform (FBX's RootNode has none; the Khronos
// samples' root holds their Z-up → Y-up rotation). So the scene is first put
// on a seconds time base (ticks per second 1) with a length that covers every
// key, and the root's transform is moved into its children. Binary FBX from
// this exporter does not read back into Assimp 5.2 ("block offset is out of
// range"), so the ASCII form is used.
std::string export_fbx(const std::string& from, const std::filesystem::path& to) {
  Assimp::Importer importer;
  const aiScene* cs = importer.ReadFile(from, 0);
  if (!cs) return importer.GetErrorString();
  auto* scene = const_cast<aiScene*>(cs);
  aiNode* root = scene->mRootNode;
  for (unsigned c = 0; c < root->mNumChildren; ++c)
    root->mChildren[c]->mTransformation =
        root->mTransformation * root->mChildren[c]->mTransformation;
  root->mTransformation = aiMatrix4x4();
  for (unsigned a = 0; a < scene->mNumAnimations; ++a) {
    aiAnimation* an = scene->mAnimations[a];
    const double k = 1.0 / an->mTicksPerSecond;
    an->mTicksPerSecond = 1;
    an->mDuration = std::ceil(an->mDuration * k) + 1;
    for (unsigned c = 0; c < an->mNumChannels; ++c) {
      aiNodeAnim* ch = an->mChannels[c];
      for (unsigned i = 0; i < ch->mNumPositionKeys; ++i) ch->mPositionKeys[i].mTime *= k;
      for (unsigned i = 0; i < ch->mNumRotationKeys; ++i) ch->mRotationKeys[i].mTime *= k;
      for (unsigned i = 0; i < ch->mNumScalingKeys; ++i) ch->mScalingKeys[i].mTime *= k;
    }
  }
  Assimp::Exporter exporter;
  if (exporter.Export(scene, "fbxa", to.string()) != aiReturn_SUCCESS)
    return exporter.GetErrorString();
  return {};
}

// The FBX's joints at the glTF's frame times match the glTF's within 0.1 %
// of the skeleton's size. RiggedSimple's animation turns its bones about
// their own axes, so its two joint positions stay put; CesiumMan's walk
// moves every joint.
class FbxRoundTrip : public ::testing::TestWithParam<const char*> {};

TEST_P(FbxRoundTrip, MatchesTheGlb) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("charkit_assimp_fbx_" + std::to_string(getpid()) + "_" + GetParam());
  std::filesystem::create_directories(dir);
  const auto fbx = dir / "exported.fbx";
  const std::string err = export_fbx(model_path(GetParam()), fbx);
  ASSERT_EQ(err, "");
  AssimpMotionOptions o;
  o.fps = 24;
  auto g = load_assimp_motion_file(model_path(GetParam()), o);
  auto f = load_assimp_motion_file(fbx.string(), o);
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(g.ok()) << g.error().to_string();
  ASSERT_TRUE(f.ok()) << f.error().to_string();
  EXPECT_EQ(f->format, AssimpFormat::kFbxAscii);
  EXPECT_NE(f->up_axis.find("FBX UpAxis +Y"), std::string::npos) << f->up_axis;
  // Same joints by name (the FBX may add $AssimpFbx$ helpers; they fold
  // away). Assimp named the glTF's unnamed node N "nodes[N]" on export;
  // charkit calls it "#N".
  ASSERT_EQ(f->joints.size(), g->joints.size());
  std::vector<int> fj;
  for (const auto& j : g->joints) {
    const std::string name = j.name.starts_with('#') ? "nodes[" + j.name.substr(1) + "]" : j.name;
    fj.push_back(joint_index(*f, name));
    ASSERT_GE(fj.back(), 0) << j.name;
  }
  std::vector<Vec3> pg(g->joints.size()), pf(f->joints.size());
  g->sample(0, pg);
  const std::vector<Vec3> first = pg;
  double size = 0;
  for (const auto& v : pg) size = std::max({size, std::abs(v[0]), std::abs(v[1]), std::abs(v[2])});
  ASSERT_GT(size, 0);
  bool moved = false;
  for (std::uint64_t fr = 0; fr < g->frames; ++fr) {
    const double t = static_cast<double>(fr) / 24.0;
    g->sample_at(t, pg);
    f->sample_at(t, pf);
    for (std::size_t j = 0; j < pg.size(); ++j) {
      const Vec3& b = pf[static_cast<std::size_t>(fj[j])];
      EXPECT_LT(dist(pg[j], b), 1e-3 * size) << "t " << t << " joint " << g->joints[j].name;
    }
    for (std::size_t j = 0; j < pg.size(); ++j)
      moved = moved || dist(pg[j], first[j]) > 1e-2 * size;
  }
  EXPECT_EQ(moved, std::string(GetParam()) == "CesiumMan.glb");
}

INSTANTIATE_TEST_SUITE_P(Samples, FbxRoundTrip,
                         ::testing::Values("RiggedSimple.glb", "CesiumMan.glb"),
                         [](const ::testing::TestParamInfo<const char*>& sample) {
                           const std::string file = sample.param;
                           return file.substr(0, file.find('.'));
                         });

}  // namespace
}  // namespace charkit::motion
