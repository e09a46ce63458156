#include "charkit/motion/convert.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include "charkit/core/names.h"
#include "charkit/motion/detail/ndjson.h"
#include "charkit/motion/error_codes.h"
#include "charkit/motion/forward_kinematics.h"

namespace charkit::motion {

std::optional<double> fps_from_frame_time(double frame_time) {
  if (!(frame_time > 0.0001) || !(frame_time <= 3600.0)) return std::nullopt;
  const double fps = 1.0 / frame_time;
  const double n = std::round(fps);
  if (n >= 1 && std::abs(fps - n) <= 0.001 * n) return n;
  return std::round(fps * 1000.0) / 1000.0;
}

core::Status check_motion_budget(const MotionBudget& b, std::uint64_t frames,
                                 std::uint64_t joints) {
  const double jf = static_cast<double>(frames) * static_cast<double>(joints);
  if (b.max_joint_frames && jf > static_cast<double>(b.max_joint_frames))
    return core::make_error(codes::MOTION_BUDGET_JOINT_FRAMES,
                            std::to_string(frames) + " frames × " + std::to_string(joints) +
                                " joints is more than the budget of " +
                                std::to_string(b.max_joint_frames) + " joint-frames");
  const double out = static_cast<double>(frames) * static_cast<double>(kEstimatedFrameLineBytes);
  if (b.max_output_bytes && out > static_cast<double>(b.max_output_bytes))
    return core::make_error(codes::MOTION_BUDGET_OUTPUT_BYTES,
                            std::to_string(frames) + " frames make about " +
                                std::to_string(static_cast<std::uint64_t>(out)) +
                                " bytes of keypoints (" + std::to_string(kEstimatedFrameLineBytes) +
                                " a frame), more than the budget of " +
                                std::to_string(b.max_output_bytes) + " bytes");
  return core::Ok{};
}

core::Status check_output_budget(const MotionBudget& b, std::uint64_t written) {
  if (b.max_output_bytes && written > b.max_output_bytes)
    return core::make_error(codes::MOTION_BUDGET_OUTPUT_BYTES,
                            "the keypoints passed the budget of " +
                                std::to_string(b.max_output_bytes) + " bytes while being written");
  return core::Ok{};
}

core::Status check_cancel(const std::atomic<bool>* cancel) {
  if (cancel && cancel->load(std::memory_order_relaxed))
    return core::make_error(codes::MOTION_CANCELLED, "the conversion was cancelled");
  return core::Ok{};
}

MappingCoverage mapping_coverage(const JointMapping& mapping, const JointTable& table) {
  MappingCoverage c;
  for (std::size_t p = 0; p < kPointCount; ++p) {
    if (table.candidates[p].empty()) continue;
    ++c.wanted;
    if (mapping.points[p].source == PointSource::kMapped)
      ++c.found;
    else
      c.missing.push_back(point_name(p));
  }
  return c;
}

core::Status check_joint_mapping(std::span<const BvhJoint> joints, const JointMapping& mapping,
                                 const JointTable& table, bool to_warning,
                                 std::vector<BvhWarning>& warnings) {
  const MappingCoverage c = mapping_coverage(mapping, table);
  if (c.wanted == 0 || c.found * 2 >= c.wanted) return core::Ok{};
  if (c.found == 0 && !to_warning) {
    std::vector<std::string_view> names;
    for (const BvhJoint& j : joints)
      if (!j.end_site) names.push_back(j.name);
    return core::make_error(
        kNoMappedJoints,
        "none of the skeleton's " + std::to_string(names.size()) +
            " joints matches a joint name the table has for the " + std::to_string(c.wanted) +
            " MediaPipe points it maps, so every point would be missing; the skeleton's joints: " +
            core::format_name_list(names) +
            "; name them with a joint map (--joint-map, docs/motion.md §Joint mapping)");
  }
  warnings.push_back(BvhWarning{
      kFewMappedJoints.str(),
      "only " + std::to_string(c.found) + " of the " + std::to_string(c.wanted) +
          " MediaPipe points the table maps were found in the skeleton; missing (confidence 0): " +
          core::format_name_list(c.missing) + "; a joint map (--joint-map) can name their joints"});
  return core::Ok{};
}

namespace {

// Buffers of one frame; allocated once per conversion, not per frame.
struct FramePipeline {
  const BvhHeader& header;
  const JointMapping& mapping;
  UpAxis up;
  std::vector<double> values;
  std::vector<Mat3> rotations;
  std::vector<Vec3> positions;
  std::array<Keypoint, kPointCount> points{};
  std::array<double, kAngleCount> angles{};

  FramePipeline(const BvhHeader& h, const JointMapping& m, UpAxis u)
      : header(h),
        mapping(m),
        up(u),
        values(h.channel_count),
        rotations(h.joints.size()),
        positions(h.joints.size()) {}

  ForwardKinematicsJob fk() {
    return ForwardKinematicsJob{header.joints, values, rotations, positions};
  }
  PoseJob pose() { return PoseJob{&mapping, positions, up, points, angles}; }
};

struct Pass1 {
  std::uint64_t frames = 0;
  double max_abs = 0;
  std::vector<BvhWarning> warnings;
};

core::Result<Pass1> run_pass1(std::string_view text, const BvhHeader& header,
                              const ConvertOptions& o, FramePipeline& fp) {
  Pass1 r;
  const ForwardKinematicsJob fk = fp.fk();
  const PoseJob pose = fp.pose();
  if (auto st = fk.validate(); !st) return std::move(st).error();
  if (auto st = pose.validate(); !st) return std::move(st).error();
  FrameReader reader(header, text, o.limits, o.hints);
  const std::uint64_t joints = std::max<std::uint64_t>(header.joints.size(), 1);
  const std::uint64_t max_jf = o.budget.max_joint_frames;
  for (;;) {
    if (reader.frames_read() % kCancelPollFrames == 0)
      if (auto c = check_cancel(o.cancel); !c) return c.error();
    auto got = reader.next(fp.values);
    if (!got) return got.error();
    if (!*got) break;
    // The frame count is known only once every row was read: the joint-frame
    // budget bounds this pass as it goes.
    if (max_jf && reader.frames_read() > max_jf / joints)
      return check_motion_budget({max_jf, 0}, reader.frames_read(), joints).error();
    if (auto st = fk.run(); !st) return std::move(st).error();
    if (auto st = pose.run(); !st) return std::move(st).error();
    for (const Keypoint& k : fp.points) {
      const double m = std::max({std::abs(k.x), std::abs(k.y), std::abs(k.z)});
      if (!std::isfinite(m))
        return core::make_error(codes::MOTION_NOT_FINITE,
                                "frame " + std::to_string(reader.frames_read() - 1) +
                                    ": joint positions overflow (values too large)");
      r.max_abs = std::max(r.max_abs, m);
    }
  }
  r.frames = reader.frames_read();
  r.warnings = reader.warnings();
  return r;
}

core::Result<ConvertSummary> analyse(std::string_view text, const ConvertOptions& o,
                                     bool converting) {
  auto header = parse_bvh_header(text, o.limits);
  if (!header) return header.error();
  ConvertSummary s;
  s.header = std::move(*header);
  s.mapping = map_joints(s.header.joints, o.table);
  // Checked before any frame is read; its warning comes after the file's.
  std::vector<BvhWarning> mapping_warnings;
  if (auto c =
          check_joint_mapping(s.header.joints, s.mapping, o.table, !converting, mapping_warnings);
      !c)
    return c.error();
  if (o.fps) {
    s.fps = *o.fps;
  } else if (auto f = fps_from_frame_time(s.header.frame_time)) {
    s.fps = *f;
  } else {
    s.fps = kDefaultFps;
    s.warnings.push_back(BvhWarning{codes::BVH_FRAME_TIME,
                                    "Frame Time is not a usable duration; using " +
                                        std::to_string(static_cast<int>(kDefaultFps)) + " fps"});
  }
  FramePipeline fp(s.header, s.mapping, o.up);
  auto p1 = run_pass1(text, s.header, o, fp);
  if (!p1) return p1.error();
  s.frames = p1->frames;
  if (auto b = check_motion_budget(o.budget, s.frames, s.header.joints.size()); !b)
    return b.error();
  s.max_abs = p1->max_abs;
  s.scale = projection_scale(s.max_abs);
  for (auto& w : p1->warnings) s.warnings.push_back(std::move(w));
  for (auto& w : mapping_warnings) s.warnings.push_back(std::move(w));
  return s;
}

}  // namespace

core::Result<ConvertSummary> analyse_bvh(std::string_view text, const ConvertOptions& options) {
  return analyse(text, options, false);
}

core::Result<ConvertSummary> convert_bvh(std::string_view text, const ConvertOptions& options,
                                         const OutputSink& sink) {
  auto analysed = analyse(text, options, true);
  if (!analysed) return analysed;
  ConvertSummary& s = *analysed;
  auto fp = std::make_unique<FramePipeline>(s.header, s.mapping, options.up);
  const ForwardKinematicsJob fk = fp->fk();
  const PoseJob pose = fp->pose();

  FrameLineWriter out(options.budget, sink);
  std::array<Keypoint, kPointCount> projected{};
  FrameReader reader(s.header, text, options.limits, options.hints);
  for (std::uint64_t frame = 0;; ++frame) {
    if (frame % kCancelPollFrames == 0) {
      if (auto c = check_cancel(options.cancel); !c) return c.error();
      if (options.progress) options.progress(frame, s.frames);
    }
    auto got = reader.next(fp->values);
    if (!got) return got.error();  // cannot happen after pass 1; kept for safety
    if (!*got) break;
    if (auto st = fk.run(); !st) return std::move(st).error();
    if (auto st = pose.run(); !st) return std::move(st).error();
    for (std::size_t i = 0; i < kPointCount; ++i) projected[i] = project(fp->points[i], s.scale);
    if (auto w = out.add(frame, frame_time_ms(frame, s.fps), projected, fp->angles); !w)
      return w.error();
  }
  if (auto w = out.finish(); !w) return w.error();
  if (options.progress) options.progress(s.frames, s.frames);
  return analysed;
}

}  // namespace charkit::motion
