#include "charkit/motion/assimp_motion.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <new>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "charkit/core/bytes.h"
#include "charkit/core/error_codes.h"
#include "charkit/core/isolated.h"
#include "charkit/core/json.h"
#include "charkit/core/mapped_file.h"
#include "charkit/motion/detail/motion_tracks.h"
#include "charkit/motion/detail/ndjson.h"
#include "charkit/motion/error_codes.h"
#include "charkit/scene/gltf_document.h"
#include "charkit/scene/intake.h"

namespace charkit::motion {

// ---- format detection ------------------------------------------------------------

namespace {

// Stops at the first top-level key: "asset" → glTF; "format" or "frames"
// (keypoint JSON, keypoints.md §6) → not glTF. Never builds a DOM.
class TopLevelKeys : public nlohmann::json_sax<nlohmann::json> {
 public:
  bool gltf = false;
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override {
    ++depth_;
    return true;
  }
  bool end_object() override {
    --depth_;
    return true;
  }
  bool start_array(std::size_t) override {
    ++depth_;
    return depth_ > 1;  // a top-level array is neither
  }
  bool end_array() override {
    --depth_;
    return true;
  }
  bool key(string_t& k) override {
    if (depth_ != 1) return true;
    if (k == "asset") {
      gltf = true;
      return false;
    }
    return k != "format" && k != "frames";
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return false;
  }

 private:
  int depth_ = 0;
};

bool json_has_top_level_asset(std::string_view text) {
  TopLevelKeys sax;
  try {
    (void)nlohmann::json::sax_parse(text.begin(), text.end(), &sax,
                                    nlohmann::json::input_format_t::json, true);
  } catch (...) {
    return false;
  }
  return sax.gltf;
}

}  // namespace

AssimpFormat detect_assimp_format(std::string_view b) {
  if (b.size() >= 12 && b.substr(0, 4) == "glTF") return AssimpFormat::kGlb;
  if (b.substr(0, 18) == "Kaydara FBX Binary") return AssimpFormat::kFbxBinary;
  std::string_view t = b;
  if (t.substr(0, 3) == "\xEF\xBB\xBF") t.remove_prefix(3);
  while (!t.empty() && (t[0] == ' ' || t[0] == '\t' || t[0] == '\r' || t[0] == '\n'))
    t.remove_prefix(1);
  if (t.substr(0, 5) == "; FBX" || t.substr(0, 18) == "FBXHeaderExtension")
    return AssimpFormat::kFbxAscii;
  if (!t.empty() && t[0] == '{' && json_has_top_level_asset(t)) return AssimpFormat::kGltf;
  return AssimpFormat::kUnknown;
}

const char* assimp_format_name(AssimpFormat f) {
  switch (f) {
    case AssimpFormat::kGlb:
      return "glb";
    case AssimpFormat::kGltf:
      return "gltf";
    case AssimpFormat::kFbxBinary:
      return "fbx";
    case AssimpFormat::kFbxAscii:
      return "fbx-ascii";
    case AssimpFormat::kUnknown:
      break;
  }
  return "unknown";
}

// ---- maths and tracks ----------------------------------------------------------

namespace {

using Quat = core::Quatd;
using detail::Affine;
using detail::compose;
using detail::trs;

template <typename V, typename Lerp>
V interpolate(const std::vector<AssimpTracks::Key<V>>& keys, double t, const V& rest, Lerp lerp) {
  if (keys.empty()) return rest;
  if (!(t > keys.front().t)) return keys.front().v;  // also NaN
  if (t >= keys.back().t) return keys.back().v;
  auto it = std::upper_bound(keys.begin(), keys.end(), t,
                             [](double x, const AssimpTracks::Key<V>& k) { return x < k.t; });
  const auto& k1 = *it;
  const auto& k0 = *(it - 1);
  const double span = k1.t - k0.t;
  if (!(span > 0)) return k1.v;
  return lerp(k0.v, k1.v, (t - k0.t) / span);
}

Vec3 lerp3(const Vec3& a, const Vec3& b, double f) {
  return core::lerp(a, b, f);
}

Quat slerp(const Quat& a, const Quat& b, double f) {
  return core::slerp(a, b, f);
}

// A glTF channel's value at `seconds` (3 or 4 components).
Vec3 evaluate3(const scene::GltfTrack& t, double seconds) {
  std::array<double, 4> v{};
  t.evaluate(seconds, v);
  return {v[0], v[1], v[2]};
}
Quat evaluate_rotation(const scene::GltfTrack& t, double seconds) {
  std::array<double, 4> v{};
  t.evaluate(seconds, v);
  return {v[0], v[1], v[2], v[3]};
}

}  // namespace

void AssimpMotion::sample_at(double seconds, std::span<Vec3> out) const {
  if (!tracks || out.size() != joints.size()) return;
  const AssimpTracks& tr = *tracks;
  const double ticks = seconds * tr.ticks_per_second;
  std::vector<Affine> world(tr.nodes.size());
  for (std::size_t i = 0; i < tr.nodes.size(); ++i) {
    const auto& n = tr.nodes[i];
    Affine local = n.rest;
    if (n.track >= 0) {
      const auto& k = tr.tracks[static_cast<std::size_t>(n.track)];
      local = trs(k.gltf_translation ? evaluate3(*k.gltf_translation, seconds)
                                     : interpolate(k.position, ticks, n.rest_t, lerp3),
                  k.gltf_rotation ? evaluate_rotation(*k.gltf_rotation, seconds)
                                  : interpolate(k.rotation, ticks, n.rest_r, slerp),
                  k.gltf_scale ? evaluate3(*k.gltf_scale, seconds)
                               : interpolate(k.scaling, ticks, n.rest_s, lerp3));
    }
    world[i] = n.parent >= 0 ? compose(world[static_cast<std::size_t>(n.parent)], local) : local;
  }
  for (std::size_t j = 0; j < joints.size(); ++j)
    out[j] = core::mul(tr.up, world[tr.joint_node[j]].t);
}

void AssimpMotion::sample(std::uint64_t frame, std::span<Vec3> out) const {
  sample_at(static_cast<double>(frame) / fps, out);
}

namespace {

bool read_by_gltf_layer(std::span<const std::uint8_t> bytes, const AssimpMotionOptions& o) {
  if (o.gltf_with_assimp || bytes.size() > o.limits.max_bytes) return false;
  const AssimpFormat f = detect_assimp_format(core::as_chars(bytes));
  return f == AssimpFormat::kGlb || f == AssimpFormat::kGltf;
}

}  // namespace

core::Result<AssimpMotion> load_assimp_motion(std::span<const std::uint8_t> bytes,
                                              const AssimpMotionOptions& options) {
  if (read_by_gltf_layer(bytes, options)) return load_gltf_motion(bytes, "", options);
  return detail::import_with_assimp(bytes, {}, options);
}

core::Result<AssimpMotion> load_assimp_motion_file(const std::string& path,
                                                   const AssimpMotionOptions& options) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) return core::make_error(core::codes::IO_OPEN, "cannot open the file: " + ec.message());
  if (size > options.limits.max_bytes)
    return core::make_error(
        codes::MOTION_LIMIT,
        "the file is larger than " + std::to_string(options.limits.max_bytes) + " bytes");
  auto file = core::MappedFile::open(path);
  if (!file) return file.error();
  auto dir =
      std::filesystem::weakly_canonical(std::filesystem::absolute(path, ec), ec).parent_path();
  if (ec) dir.clear();
  if (read_by_gltf_layer(file->bytes(), options))
    return load_gltf_motion(file->bytes(), dir.empty() ? "" : dir.string(), options);
  return detail::import_with_assimp(file->bytes(), dir, options);
}

// ---- conversion ------------------------------------------------------------------

namespace {

ConvertSummary summary_of(const AssimpMotion& m, const ConvertOptions& o) {
  ConvertSummary s;
  s.header.joints = m.joints;
  s.header.root_count = m.root_count;
  s.header.declared_frames = m.frames;
  s.header.frame_time = 1.0 / m.fps;
  s.mapping = map_joints(s.header.joints, o.table);
  s.frames = m.frames;
  s.fps = m.fps;
  s.warnings = m.warnings;
  return s;
}

struct Frames {
  const AssimpMotion& m;
  std::vector<Vec3> positions;
  std::array<Keypoint, kPointCount> points{};
  std::array<double, kAngleCount> angles{};
  PoseJob pose;
  Frames(const AssimpMotion& motion, const JointMapping& mapping, UpAxis up)
      : m(motion), positions(motion.joints.size()), pose{&mapping, positions, up, points, angles} {}
  core::Status run(std::uint64_t f) {
    m.sample(f, positions);
    return pose.run();
  }
};

core::Result<ConvertSummary> analyse(const AssimpMotion& m, const ConvertOptions& o,
                                     bool converting) {
  if (!m.tracks || m.joints.empty() || !(m.fps > 0))
    return core::make_error(codes::MOTION_INTERNAL, "not a loaded animation");
  // The frame count is duration × fps, known before any frame is sampled.
  if (auto b = check_motion_budget(o.budget, m.frames, m.joints.size()); !b) return b.error();
  ConvertSummary s = summary_of(m, o);
  if (auto c = check_joint_mapping(s.header.joints, s.mapping, o.table, !converting, s.warnings);
      !c)
    return c.error();
  Frames fr(m, s.mapping, o.up);
  if (auto st = fr.pose.validate(); !st) return std::move(st).error();
  for (std::uint64_t f = 0; f < m.frames; ++f) {
    if (f % kCancelPollFrames == 0)
      if (auto c = check_cancel(o.cancel); !c) return c.error();
    if (auto st = fr.run(f); !st) return std::move(st).error();
    for (const Keypoint& k : fr.points) {
      const double v = std::max({std::abs(k.x), std::abs(k.y), std::abs(k.z)});
      if (!std::isfinite(v))
        return core::make_error(
            codes::MOTION_NOT_FINITE,
            "frame " + std::to_string(f) + ": joint positions are not finite numbers");
      s.max_abs = std::max(s.max_abs, v);
    }
  }
  s.scale = projection_scale(s.max_abs);
  return s;
}

}  // namespace

core::Result<ConvertSummary> analyse_assimp_motion(const AssimpMotion& motion,
                                                   const ConvertOptions& options) {
  return analyse(motion, options, false);
}

core::Result<ConvertSummary> convert_assimp_motion(const AssimpMotion& motion,
                                                   const ConvertOptions& options,
                                                   const OutputSink& sink) {
  auto analysed = analyse(motion, options, true);
  if (!analysed) return analysed;
  const ConvertSummary& s = *analysed;
  Frames fr(motion, s.mapping, options.up);
  FrameLineWriter out(options.budget, sink);
  std::array<Keypoint, kPointCount> projected{};
  for (std::uint64_t f = 0; f < motion.frames; ++f) {
    if (f % kCancelPollFrames == 0) {
      if (auto c = check_cancel(options.cancel); !c) return c.error();
      if (options.progress) options.progress(f, motion.frames);
    }
    if (auto st = fr.run(f); !st) return std::move(st).error();
    for (std::size_t i = 0; i < kPointCount; ++i) projected[i] = project(fr.points[i], s.scale);
    if (auto w = out.add(f, frame_time_ms(f, s.fps), projected, fr.angles); !w) return w.error();
  }
  if (auto w = out.finish(); !w) return w.error();
  if (options.progress) options.progress(motion.frames, motion.frames);
  return analysed;
}

}  // namespace charkit::motion
