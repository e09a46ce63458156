#include "charkit/motion/keypoint_json.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>

#include "charkit/core/error_codes.h"
#include "charkit/core/json.h"
#include "charkit/motion/detail/ndjson.h"
#include "charkit/motion/error_codes.h"

namespace charkit::motion {

MotionFormat detect_motion_format(std::string_view text) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  std::size_t i = 0;
  while (i < text.size() &&
         (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n'))
    ++i;
  text.remove_prefix(i);
  if (text.starts_with('{')) return MotionFormat::kKeypointJson;
  constexpr std::string_view kHierarchy = "hierarchy";
  if (text.size() < kHierarchy.size()) return MotionFormat::kUnknown;
  for (std::size_t k = 0; k < kHierarchy.size(); ++k) {
    char c = text[k];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != kHierarchy[k]) return MotionFormat::kUnknown;
  }
  return MotionFormat::kBvh;
}

void angles_from_image_points(std::span<const Keypoint> points, std::span<double> angles) {
  std::array<Vec3, kPointCount> p{};
  for (std::size_t i = 0; i < kPointCount; ++i)
    p[i] = Vec3{points[i].x - 0.5, 0.5 - points[i].y, -points[i].z};
  joint_angles(p, angles);
}

namespace {

using core::Json;
using core::json_pointer_join;

// keypoints.md §6.3: every number must lie within ±kMaxAbs (larger values are
// pixel coordinates or garbage, not normalised ones), then is clamped.
constexpr double kMaxAbs = 10.0;
constexpr double kMaxTimeMs = 1e12;

core::Error fail(core::ErrorCode code, const std::string& ptr, const std::string& msg) {
  return core::make_error(code, (ptr.empty() ? std::string("(root)") : ptr) + ": " + msg,
                          core::Location::at_pointer(ptr));
}

// One frame, normalised; filled by the walk and handed to the writer.
struct FrameOut {
  std::array<Keypoint, kPointCount> points{};
  std::array<double, kAngleCount> angles{};
  double time_ms = 0;
  bool time_given = false;
};

class Walker {
 public:
  Walker(const KeypointJsonOptions& o, KeypointJsonSummary& s) : options_(o), summary_(s) {}

  // Validates the document; calls emit(frame_index, frame) for each frame when given.
  template <typename Emit>
  core::Status walk(const Json& doc, Emit&& emit) {
    if (!doc.is_object())
      return fail(
          codes::KEYPOINTS_TYPE, "",
          std::string("the document must be an object, found ") + core::json_type_name(doc));
    for (const auto& [key, value] : doc.items()) {
      (void)value;
      if (key != "format" && key != "fps" && key != "frames")
        return fail(codes::KEYPOINTS_MEMBER, json_pointer_join("", key), "unknown member");
    }
    auto fmt = doc.find("format");
    if (fmt == doc.end()) return fail(codes::KEYPOINTS_MEMBER, "", "missing member \"format\"");
    if (!fmt->is_string() || fmt->get_ref<const std::string&>() != kKeypointFormatTag)
      return fail(codes::KEYPOINTS_FORMAT, "/format",
                  "must be the string \"" + std::string(kKeypointFormatTag) + "\"");
    summary_.fps = kDefaultFps;
    if (auto f = doc.find("fps"); f != doc.end()) {
      auto v = core::json_finite_number(*f);
      if (!v)
        return fail(codes::KEYPOINTS_TYPE, "/fps",
                    std::string("must be a number, found ") + core::json_type_name(*f));
      if (!(*v >= 0.001 && *v <= 1000.0))
        return fail(codes::KEYPOINTS_RANGE, "/fps", "must be in [0.001, 1000]");
      summary_.fps = *v;
      summary_.fps_in_file = true;
    }
    if (options_.fps) summary_.fps = *options_.fps;
    auto frames = doc.find("frames");
    if (frames == doc.end()) return fail(codes::KEYPOINTS_MEMBER, "", "missing member \"frames\"");
    if (!frames->is_array())
      return fail(codes::KEYPOINTS_TYPE, "/frames",
                  std::string("must be an array, found ") + core::json_type_name(*frames));
    if (frames->size() > options_.limits.max_frames)
      return fail(codes::KEYPOINTS_LIMIT, "/frames",
                  "more than " + std::to_string(options_.limits.max_frames) + " frames");
    if (auto b = check_motion_budget(options_.budget, frames->size(), kPointCount); !b) return b;
    summary_.frames = frames->size();
    double previous_time = -1;
    FrameOut out;
    for (std::size_t f = 0; f < frames->size(); ++f) {
      if (f % kCancelPollFrames == 0) {
        if (auto c = check_cancel(options_.cancel); !c) return c;
        if (options_.progress) options_.progress(f, frames->size());
      }
      const std::string ptr = json_pointer_join("/frames", f);
      if (auto st = frame((*frames)[f], f, ptr, out); !st) return st;
      if (out.time_ms < previous_time)
        return fail(
            codes::KEYPOINTS_TIME, out.time_given ? ptr + "/timeMs" : ptr,
            out.time_given
                ? "earlier than the previous frame's timeMs"
                : "the computed timeMs (frame x 1000 / fps) is earlier than the previous frame's");
      previous_time = out.time_ms;
      if (!emit(static_cast<std::uint64_t>(f), out))
        return core::make_error(core::codes::IO_WRITE, "cannot write the output");
    }
    if (options_.progress) options_.progress(frames->size(), frames->size());
    return core::Ok{};
  }

 private:
  core::Status frame(const Json& j, std::size_t index, const std::string& ptr, FrameOut& out) {
    if (!j.is_object())
      return fail(codes::KEYPOINTS_TYPE, ptr,
                  std::string("a frame must be an object, found ") + core::json_type_name(j));
    for (const auto& [key, value] : j.items()) {
      (void)value;
      if (key != "frame" && key != "timeMs" && key != "points" && key != "angles")
        return fail(codes::KEYPOINTS_MEMBER, json_pointer_join(ptr, key), "unknown member");
    }
    if (auto n = j.find("frame"); n != j.end()) {
      auto v = core::json_uint32(*n);
      if (!v || *v != index)
        return fail(codes::KEYPOINTS_FRAME, ptr + "/frame",
                    "must be the frame's index " + std::to_string(index));
    }
    auto pts = j.find("points");
    if (pts == j.end()) return fail(codes::KEYPOINTS_MEMBER, ptr, "missing member \"points\"");
    const std::string pts_ptr = ptr + "/points";
    if (!pts->is_array())
      return fail(codes::KEYPOINTS_TYPE, pts_ptr,
                  std::string("must be an array, found ") + core::json_type_name(*pts));
    if (pts->size() != kPointCount)
      return fail(codes::KEYPOINTS_COUNT, pts_ptr,
                  "must have 33 points, found " + std::to_string(pts->size()));
    for (std::size_t i = 0; i < kPointCount; ++i)
      if (auto st = point((*pts)[i], json_pointer_join(pts_ptr, i), out.points[i]); !st) return st;

    if (auto t = j.find("timeMs"); t != j.end()) {
      auto v = core::json_finite_number(*t);
      if (!v)
        return fail(codes::KEYPOINTS_TYPE, ptr + "/timeMs",
                    std::string("must be a number, found ") + core::json_type_name(*t));
      if (!(*v >= 0 && *v <= kMaxTimeMs))
        return fail(codes::KEYPOINTS_RANGE, ptr + "/timeMs", "must be in [0, 1e12]");
      out.time_ms = *v == 0 ? 0.0 : *v;
      out.time_given = true;
    } else {
      out.time_ms = frame_time_ms(index, summary_.fps);
      out.time_given = false;
      ++summary_.computed_times;
    }

    if (auto a = j.find("angles"); a != j.end()) {
      const std::string a_ptr = ptr + "/angles";
      if (!a->is_array())
        return fail(codes::KEYPOINTS_TYPE, a_ptr,
                    std::string("must be an array, found ") + core::json_type_name(*a));
      if (a->size() != kAngleCount)
        return fail(codes::KEYPOINTS_COUNT, a_ptr,
                    "must have 9 angles, found " + std::to_string(a->size()));
      for (std::size_t k = 0; k < kAngleCount; ++k) {
        const std::string v_ptr = json_pointer_join(a_ptr, k);
        auto v = core::json_finite_number((*a)[k]);
        if (!v)
          return fail(codes::KEYPOINTS_TYPE, v_ptr,
                      std::string("must be a number, found ") + core::json_type_name((*a)[k]));
        if (!(*v >= -1.0 && *v <= 1.0))
          return fail(codes::KEYPOINTS_RANGE, v_ptr, "an angle cosine must be in [-1, 1]");
        out.angles[k] = *v;
      }
    } else {
      angles_from_image_points(out.points, out.angles);
      ++summary_.computed_angles;
    }
    return core::Ok{};
  }

  // A number within ±kMaxAbs, clamped to [lo, hi] (counted when moved).
  core::Status number(const Json& j, const std::string& ptr, double lo, double hi, double& out) {
    auto v = core::json_finite_number(j);
    if (!v)
      return fail(codes::KEYPOINTS_TYPE, ptr,
                  std::string("must be a number, found ") + core::json_type_name(j));
    if (!(std::abs(*v) <= kMaxAbs))
      return fail(codes::KEYPOINTS_RANGE, ptr, "must be in [-10, 10] (normalised, not pixels)");
    out = std::clamp(*v, lo, hi);
    if (out != *v) {
      if (summary_.clamped_values == 0) first_clamped_ = ptr;
      ++summary_.clamped_values;
    }
    return core::Ok{};
  }

  core::Status point(const Json& j, const std::string& ptr, Keypoint& k) {
    k = Keypoint{0, 0, 0, 1.0};
    if (j.is_array()) {
      if (j.size() != 3 && j.size() != 4)
        return fail(codes::KEYPOINTS_COUNT, ptr,
                    "a point array must be [x, y, z] or [x, y, z, confidence], found " +
                        std::to_string(j.size()) + " items");
      double* dst[4] = {&k.x, &k.y, &k.z, &k.confidence};
      for (std::size_t c = 0; c < j.size(); ++c)
        if (auto st = number(j[c], json_pointer_join(ptr, c), kLo[c], kHi[c], *dst[c]); !st)
          return st;
      return core::Ok{};
    }
    if (!j.is_object())
      return fail(
          codes::KEYPOINTS_TYPE, ptr,
          std::string("a point must be an array or an object, found ") + core::json_type_name(j));
    for (const auto& [key, value] : j.items()) {
      (void)value;
      if (key != "x" && key != "y" && key != "z" && key != "confidence" && key != "visibility")
        return fail(codes::KEYPOINTS_MEMBER, json_pointer_join(ptr, key), "unknown member");
    }
    if (j.contains("confidence") && j.contains("visibility"))
      return fail(codes::KEYPOINTS_MEMBER, ptr + "/visibility",
                  "give either confidence or visibility, not both");
    struct Field {
      const char* name;
      std::size_t c;
      double* dst;
      bool required;
    };
    const Field fields[] = {{"x", 0, &k.x, true},
                            {"y", 1, &k.y, true},
                            {"z", 2, &k.z, false},
                            {"confidence", 3, &k.confidence, false},
                            {"visibility", 3, &k.confidence, false}};
    for (const Field& fd : fields) {
      auto it = j.find(fd.name);
      if (it == j.end()) {
        if (fd.required)
          return fail(codes::KEYPOINTS_MEMBER, ptr,
                      std::string("missing member \"") + fd.name + "\"");
        continue;
      }
      if (auto st = number(*it, json_pointer_join(ptr, fd.name), kLo[fd.c], kHi[fd.c], *fd.dst);
          !st)
        return st;
    }
    return core::Ok{};
  }

 public:
  std::string first_clamped_;

 private:
  // keypoints.md §6.3: x, y ∈ [0, 1], z ∈ [−1, 1], confidence ∈ [0, 1].
  static constexpr double kLo[4] = {0.0, 0.0, -1.0, 0.0};
  static constexpr double kHi[4] = {1.0, 1.0, 1.0, 1.0};

  const KeypointJsonOptions& options_;
  KeypointJsonSummary& summary_;
};

core::Result<Json> parse(std::string_view text, const KeypointJsonOptions& options) {
  if (text.size() > options.limits.max_bytes)
    return core::error_at_offset(
        codes::KEYPOINTS_LIMIT,
        "keypoint JSON larger than " + std::to_string(options.limits.max_bytes) + " bytes", 0);
  core::JsonLimits jl;
  jl.max_depth = 8;  // document, frames, frame, points, point, and slack
  return core::parse_json_strict(text, jl);
}

void add_clamp_warning(const Walker& w, KeypointJsonSummary& s) {
  if (s.clamped_values == 0) return;
  s.warnings.push_back(
      BvhWarning{codes::KEYPOINTS_CLAMPED, std::to_string(s.clamped_values) +
                                               " value(s) clamped into range (first at " +
                                               w.first_clamped_ + ")"});
}

// The options checked, the text parsed and every frame validated once
// (the summary and its warnings); the document is kept for a second walk.
core::Result<KeypointJsonSummary> analyse(std::string_view text, const KeypointJsonOptions& options,
                                          Json& doc) {
  if (options.fps && !(*options.fps >= 0.001 && *options.fps <= 1000.0))
    return core::make_error(codes::KEYPOINTS_RANGE, "fps override must be in [0.001, 1000]");
  auto parsed = parse(text, options);
  if (!parsed) return parsed.error();
  doc = std::move(*parsed);
  KeypointJsonSummary s;
  Walker w(options, s);
  auto st = w.walk(doc, [](std::uint64_t, const FrameOut&) { return true; });
  if (!st) return st.error();
  add_clamp_warning(w, s);
  return s;
}

}  // namespace

core::Result<KeypointJsonSummary> analyse_keypoint_json(std::string_view text,
                                                        const KeypointJsonOptions& options) {
  Json doc;
  return analyse(text, options, doc);
}

core::Result<KeypointJsonSummary> convert_keypoint_json(std::string_view text,
                                                        const KeypointJsonOptions& options,
                                                        const OutputSink& sink) {
  Json doc;
  auto s = analyse(text, options, doc);
  if (!s) return s;
  FrameLineWriter out(options.budget, sink);
  KeypointJsonSummary again;
  Walker w(options, again);
  core::Status written = core::Ok{};
  auto st = w.walk(doc, [&](std::uint64_t f, const FrameOut& fr) {
    written = out.add(f, fr.time_ms, fr.points, fr.angles);
    return written.ok();
  });
  if (!written) return written.error();
  if (!st) return st.error();
  if (auto fin = out.finish(); !fin) return fin.error();
  return s;
}

}  // namespace charkit::motion
