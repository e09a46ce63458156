// `charkit motion convert` and `charkit motion inspect`: BVH motion, FBX
// (Assimp) or glTF / GLB (the glTF layer) animations, or keypoint JSON
// (mediapipe33@0.1.0), to
// MediaPipe-33 keypoint NDJSON
// (docs/motion.md, docs/contracts/keypoints.md). The input format is detected
// from the content, not the file name.
// The work is in charkit::motion; this file maps files to text and results
// to exit codes.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <type_traits>

#include "charkit/core/error_codes.h"
#include "charkit/core/json.h"
#include "charkit/core/mapped_file.h"
#include "charkit/motion/assimp_motion.h"
#include "charkit/motion/convert.h"
#include "charkit/motion/error_codes.h"
#include "charkit/motion/format.h"
#include "charkit/motion/keypoint_json.h"
#include "cli_output.h"
#include "commands.h"
#include "error_codes.h"
#include "printable.h"

namespace charkit::app {
namespace {

using core::Json;

std::string number_text(double v) {
  std::ostringstream os;
  os.precision(10);
  os << v;
  return os.str();
}

struct MotionArgs {
  std::string input;
  std::string output;
  std::string joint_map;
  std::string up;  ///< "" = not given: y for BVH, the file's own for FBX/glTF
  std::string animation;
  double fps = 0;
  bool json = false;
};

// Reads --joint-map into the table; prints the error and returns the exit code on failure.
int load_table(const MotionArgs& a, motion::JointTable& table) {
  table = motion::default_joint_table();
  if (a.joint_map.empty()) return kExitOk;
  std::ifstream in(a.joint_map, std::ios::binary);
  if (!in) {
    return report_error(a.joint_map, core::codes::IO_OPEN, "cannot open the joint map", kExitUsage);
  }
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (text.size() > (1u << 20)) {
    return report_error(a.joint_map, motion::codes::JOINT_MAP, "joint map larger than 1 MiB",
                        kExitInvalid);
  }
  auto t = motion::apply_joint_map(std::move(table), text);
  if (!t) {
    return report_error(a.joint_map, t.error(), kExitInvalid);
  }
  table = std::move(*t);
  return kExitOk;
}

Json warnings_json(const std::vector<motion::BvhWarning>& ws) {
  Json arr = Json::array();
  for (const auto& w : ws) arr.push_back(Json{{"code", w.code}, {"message", w.message}});
  return arr;
}

Json points_json(const motion::ConvertSummary& s) {
  Json arr = Json::array();
  for (std::size_t i = 0; i < motion::kPointCount; ++i) {
    const auto& pm = s.mapping.points[i];
    Json p{{"index", i},
           {"name", std::string(motion::point_name(i))},
           {"source", motion::point_source_name(pm.source)}};
    p["joint"] = pm.joint >= 0 ? Json(s.header.joints[static_cast<std::size_t>(pm.joint)].name)
                               : Json(nullptr);
    arr.push_back(std::move(p));
  }
  return arr;
}

Json pelvis_json(const motion::ConvertSummary& s) {
  if (s.mapping.pelvis_joint < 0) return Json("midpoint of left_hip and right_hip");
  return Json(s.header.joints[static_cast<std::size_t>(s.mapping.pelvis_joint)].name);
}

void print_warnings(const std::string& subject, const std::vector<motion::BvhWarning>& ws) {
  for (const auto& w : ws) report_warning(subject, w.code, w.message);
}

// The input of convert and inspect: the joint table, the mapped file and its
// format, detected from the content (Assimp's formats first).
struct MotionInput {
  motion::JointTable table;
  core::MappedFile file;
  bool assimp = false;  ///< FBX, glTF or GLB; `format` is then not set
  motion::MotionFormat format = motion::MotionFormat::kUnknown;
  std::string_view text() const { return core::as_chars(file.bytes()); }
};

// Reads --joint-map, maps the input and detects its format; prints the error
// and returns the exit code on failure, an unknown format included.
int open_input(const MotionArgs& a, MotionInput& in) {
  if (int rc = load_table(a, in.table); rc != kExitOk) return rc;
  auto file = core::MappedFile::open(a.input);
  if (!file) return report_error(a.input, file.error(), kExitUsage);
  in.file = std::move(*file);
  const motion::MotionFileKind kind = motion::detect_motion_file(in.text());
  in.assimp = motion::is_assimp_kind(kind);
  detail(a.input, std::to_string(in.file.bytes().size()) + " bytes, " +
                      std::string(motion::motion_file_kind_name(kind)) +
                      (kind == motion::MotionFileKind::kFbx ? " (read with Assimp)" : ""));
  if (kind == motion::MotionFileKind::kUnknown)
    return report_error(a.input, motion::unknown_motion_file_error(), kExitInvalid);
  if (!in.assimp)
    in.format = kind == motion::MotionFileKind::kBvh ? motion::MotionFormat::kBvh
                                                     : motion::MotionFormat::kKeypointJson;
  return kExitOk;
}

Json keypoint_summary_json(const MotionArgs& a, const motion::KeypointJsonSummary& s) {
  return Json{{"input", a.input},
              {"format", std::string(motion::kKeypointFormatTag)},
              {"frames", s.frames},
              {"fps", s.fps},
              {"fpsInFile", s.fps_in_file},
              {"computedTimes", s.computed_times},
              {"computedAngles", s.computed_angles},
              {"clampedValues", s.clamped_values},
              {"warnings", warnings_json(s.warnings)}};
}

// Keypoint JSON (keypoints.md §6): --joint-map and --up concern skeletons, so
// they do not apply; the points are already MediaPipe-33.
// Runs convert(sink) with a sink that writes to a.output ("-": stdout).
// Returns the converter's summary; on failure prints the error, removes a
// partial output file, stores the exit status in rc and returns nullopt.
template <typename Convert>
auto write_ndjson(const MotionArgs& a, Convert&& convert, int& rc)
    -> std::optional<std::decay_t<decltype(convert(motion::OutputSink{}).value())>> {
  const bool to_stdout = a.output == "-";
  std::FILE* out = to_stdout ? stdout : std::fopen(a.output.c_str(), "wb");
  if (!out) {
    rc = report_error(a.output, core::codes::IO_OPEN, "cannot create the output file", kExitUsage);
    return std::nullopt;
  }
  // NDJSON on stdout: no JSON document goes there.
  if (to_stdout) set_stdout_is_data();
  auto r = convert(motion::OutputSink([out](std::string_view chunk) {
    return std::fwrite(chunk.data(), 1, chunk.size(), out) == chunk.size();
  }));
  bool flushed = std::fflush(out) == 0;
  if (!to_stdout) flushed = (std::fclose(out) == 0) && flushed;
  if (!r || !flushed) {
    if (!to_stdout) std::remove(a.output.c_str());
    if (!r) {
      rc = report_error(a.input, r.error(),
                        r.error().code == core::codes::IO_WRITE ? kExitUsage : kExitInvalid);
    } else {
      rc = report_error(a.output, core::codes::IO_WRITE, "cannot write the output", kExitUsage);
    }
    return std::nullopt;
  }
  return std::move(r).value();
}

int run_convert_keypoints(const MotionArgs& a, std::string_view text) {
  if (!a.joint_map.empty() || !a.up.empty())
    report_warning(a.input, codes::USAGE,
                   "--joint-map and --up apply to skeleton input only; ignored");
  if (!a.animation.empty())
    report_warning(a.input, codes::USAGE,
                   "--animation applies to FBX/glTF/GLB input only; ignored");
  motion::KeypointJsonOptions options;
  if (a.fps > 0) options.fps = a.fps;
  StepProgress progress(a.input, "converting frames");
  options.progress = progress.fn();
  int rc = kExitOk;
  auto r = write_ndjson(
      a,
      [&](const motion::OutputSink& sink) {
        return motion::convert_keypoint_json(text, options, sink);
      },
      rc);
  progress.finish();
  if (!r) return rc;
  print_warnings(a.input, r->warnings);
  if (a.json) {
    Json j = keypoint_summary_json(a, *r);
    j["output"] = a.output;
    print_summary(std::move(j));
  } else {
    report_info(a.input, "keypoint JSON, " + std::to_string(r->frames) + " frames at " +
                             number_text(r->fps) + " fps written to " + a.output);
  }
  return kExitOk;
}

int run_inspect_keypoints(const MotionArgs& a, std::string_view text) {
  auto r = motion::analyse_keypoint_json(text, {});
  if (!r) {
    if (a.json) {
      Json err{{"code", r.error().code}, {"message", r.error().message}};
      if (r.error().location.offset)
        err["offset"] = *r.error().location.offset;
      else
        err["pointer"] = r.error().location.pointer;
      Json j{{"file", a.input},
             {"format", std::string(motion::kKeypointFormatTag)},
             {"valid", false},
             {"error", err}};
      print_json(std::move(j));
    }
    return report_error(a.input, r.error(), kExitInvalid);
  }
  if (a.json) {
    Json j = keypoint_summary_json(a, *r);
    j.erase("input");
    Json doc{{"file", a.input}, {"valid", true}};
    for (auto& [k, v] : j.items()) doc[k] = v;
    print_json(std::move(doc));
    return kExitOk;
  }
  std::ostream& os = std::cout;
  os << printable(a.input) << ": keypoint JSON (" << motion::kKeypointFormatTag << "), "
     << r->frames << " frames, " << number_text(r->fps) << " fps"
     << (r->fps_in_file ? "" : " (default)") << "\n";
  os << "timeMs computed for " << r->computed_times << " frame(s); angles computed for "
     << r->computed_angles << " frame(s); " << r->clamped_values << " value(s) clamped\n";
  print_warnings(a.input, r->warnings);
  return kExitOk;
}

void print_tree(std::ostream& os, const motion::BvhHeader& h) {
  std::vector<int> depth(h.joints.size(), 0);
  for (std::size_t i = 0; i < h.joints.size(); ++i) {
    const auto& j = h.joints[i];
    if (j.parent >= 0) depth[i] = depth[static_cast<std::size_t>(j.parent)] + 1;
    os << "  " << std::string(static_cast<std::size_t>(depth[i]) * 2, ' ') << printable(j.name);
    if (j.channel_count) {
      os << " [";
      for (std::uint8_t c = 0; c < j.channel_count; ++c)
        os << (c ? " " : "") << motion::channel_name(j.channels[c]);
      os << "]";
    }
    os << " offset (" << number_text(j.offset[0]) << ", " << number_text(j.offset[1]) << ", "
       << number_text(j.offset[2]) << ")\n";
  }
}

void print_points(std::ostream& os, const motion::ConvertSummary& s) {
  os << "MediaPipe points:\n";
  for (std::size_t i = 0; i < motion::kPointCount; ++i) {
    const auto& pm = s.mapping.points[i];
    char line[64];
    std::snprintf(line, sizeof line, "  %2zu %-17s %-9s ", i,
                  std::string(motion::point_name(i)).c_str(), motion::point_source_name(pm.source));
    os << line;
    if (pm.joint >= 0)
      os << printable(s.header.joints[static_cast<std::size_t>(pm.joint)].name);
    else if (pm.source == motion::PointSource::kMissing)
      os << "(no joint; confidence 0, parent's position)";
    else
      os << "(from its parents; confidence 0.5)";
    os << "\n";
  }
}

// ---- FBX / glTF / GLB (docs/motion.md §FBX, glTF and GLB animations) ----------

core::Result<motion::AssimpMotion> load_assimp(const MotionArgs& a) {
  motion::AssimpMotionOptions mo;
  mo.animation = a.animation;
  if (a.fps > 0) mo.fps = a.fps;
  mo.auto_up = a.up.empty();  // --up given: the user's axis instead of the file's
  return motion::load_assimp_motion_file(a.input, mo);
}

Json animation_json(const motion::AssimpMotion& m) {
  Json arr = Json::array();
  for (std::size_t i = 0; i < m.animations.size(); ++i) {
    const auto& an = m.animations[i];
    arr.push_back(Json{{"index", i},
                       {"name", an.name},
                       {"durationTicks", an.duration_ticks},
                       {"ticksPerSecond", an.ticks_per_second},
                       {"channels", an.channels},
                       {"chosen", i == m.animation}});
  }
  return arr;
}

Json assimp_json(const MotionArgs& a, const motion::AssimpMotion& m,
                 const motion::ConvertSummary& s) {
  return Json{{"format", motion::assimp_format_name(m.format)},
              {"animation", m.animation},
              {"animations", animation_json(m)},
              {"durationSeconds", m.duration_seconds},
              {"frames", s.frames},
              {"fps", s.fps},
              {"fpsSource", m.fps_source},
              {"upAxis", a.up.empty() ? m.up_axis : "--up " + a.up},
              {"skeletonFrom", m.skinned ? "skin" : "animated nodes"},
              {"animatedJoints", m.animated_joints},
              {"scale", s.scale},
              {"pelvis", pelvis_json(s)},
              {"points", points_json(s)},
              {"warnings", warnings_json(s.warnings)}};
}

int assimp_error(const MotionArgs& a, const core::Error& e) {
  return report_error(a.input, e, e.code == core::codes::IO_OPEN ? kExitUsage : kExitInvalid);
}

int run_convert_assimp(const MotionArgs& a, motion::JointTable table) {
  auto m = load_assimp(a);
  if (!m) return assimp_error(a, m.error());
  motion::ConvertOptions options;
  options.table = std::move(table);
  options.up = a.up == "z" ? motion::UpAxis::kZ : motion::UpAxis::kY;
  StepProgress progress(a.input, "converting frames");
  options.progress = progress.fn();
  int rc = kExitOk;
  auto r = write_ndjson(
      a,
      [&](const motion::OutputSink& sink) {
        return motion::convert_assimp_motion(*m, options, sink);
      },
      rc);
  progress.finish();
  if (!r) return rc;
  print_warnings(a.input, r->warnings);
  if (a.json) {
    Json j{{"input", a.input}, {"output", a.output}};
    const Json details = assimp_json(a, *m, *r);
    for (const auto& [k, v] : details.items()) j[k] = v;
    print_summary(std::move(j));
  } else {
    report_info(a.input, std::string(motion::assimp_format_name(m->format)) + " animation " +
                             std::to_string(m->animation) + ", " + std::to_string(r->frames) +
                             " frames at " + number_text(r->fps) + " fps written to " + a.output);
  }
  return kExitOk;
}

int run_inspect_assimp(const MotionArgs& a, const motion::JointTable& table) {
  auto m = load_assimp(a);
  core::Result<motion::ConvertSummary> r = core::Error{};
  if (m) {
    motion::ConvertOptions options;
    options.table = table;
    options.up = a.up == "z" ? motion::UpAxis::kZ : motion::UpAxis::kY;
    r = motion::analyse_assimp_motion(*m, options);
  }
  if (!m || !r) {
    const core::Error& e = !m ? m.error() : r.error();
    if (a.json && e.code != core::codes::IO_OPEN) {
      Json j{{"file", a.input},
             {"valid", false},
             {"error", Json{{"code", e.code}, {"message", e.message}}}};
      print_json(std::move(j));
    }
    return assimp_error(a, e);
  }
  if (a.json) {
    Json doc{{"file", a.input}, {"valid", true}};
    const Json details = assimp_json(a, *m, *r);
    for (const auto& [k, v] : details.items()) doc[k] = v;
    Json joints = Json::array();
    for (const auto& j : m->joints)
      joints.push_back(Json{{"name", j.name},
                            {"parent", j.parent},
                            {"offset", Json::array({j.offset[0], j.offset[1], j.offset[2]})}});
    doc["joints"] = std::move(joints);
    print_json(std::move(doc));
    return kExitOk;
  }
  std::ostream& os = std::cout;
  os << printable(a.input) << ": " << motion::assimp_format_name(m->format) << ", "
     << m->animations.size() << " animation(s), skeleton of " << m->joints.size() << " joints ("
     << m->root_count << " root(s)) from "
     << (m->skinned ? "the skin's bones" : "the animated nodes") << ", " << m->animated_joints
     << " animated\n";
  for (std::size_t i = 0; i < m->animations.size(); ++i) {
    const auto& an = m->animations[i];
    os << (i == m->animation ? "* " : "  ") << "animation " << i << " \"" << printable(an.name)
       << "\": " << number_text(an.duration_ticks) << " ticks at "
       << number_text(an.ticks_per_second) << " ticks/s, " << an.channels << " channels\n";
  }
  os << "frames: " << r->frames << " (" << number_text(m->duration_seconds) << " s), "
     << number_text(r->fps) << " fps (" << m->fps_source << ")\n";
  os << "up axis: " << (a.up.empty() ? m->up_axis : "--up " + a.up) << "\n";
  os << "skeleton:\n";
  print_tree(os, r->header);
  os << "pelvis (origin): " << printable(pelvis_json(*r).get<std::string>()) << "\n";
  print_points(os, *r);
  print_warnings(a.input, r->warnings);
  return kExitOk;
}

int run_convert(const MotionArgs& a) {
  MotionInput in;
  if (int rc = open_input(a, in); rc != kExitOk) return rc;
  const std::string_view text = in.text();
  if (in.assimp) return run_convert_assimp(a, std::move(in.table));
  if (in.format == motion::MotionFormat::kKeypointJson) return run_convert_keypoints(a, text);
  if (!a.animation.empty())
    report_warning(a.input, codes::USAGE,
                   "--animation applies to FBX/glTF/GLB input only; ignored");
  motion::ConvertOptions options;
  options.table = std::move(in.table);
  options.up = a.up == "z" ? motion::UpAxis::kZ : motion::UpAxis::kY;
  if (a.fps > 0) options.fps = a.fps;
  options.hints = &in.file;
  StepProgress progress(a.input, "converting frames");
  options.progress = progress.fn();

  int rc = kExitOk;
  auto r = write_ndjson(
      a, [&](const motion::OutputSink& sink) { return motion::convert_bvh(text, options, sink); },
      rc);
  progress.finish();
  if (!r) return rc;
  print_warnings(a.input, r->warnings);
  if (a.json) {
    Json j{{"input", a.input},
           {"output", a.output},
           {"format", "bvh"},
           {"frames", r->frames},
           {"fps", r->fps},
           {"scale", r->scale},
           {"pelvis", pelvis_json(*r)},
           {"points", points_json(*r)},
           {"warnings", warnings_json(r->warnings)}};
    print_summary(std::move(j));
  } else {
    report_info(a.input, std::to_string(r->frames) + " frames at " + number_text(r->fps) +
                             " fps written to " + a.output);
  }
  return kExitOk;
}

int run_inspect(const MotionArgs& a) {
  MotionInput in;
  if (int rc = open_input(a, in); rc != kExitOk) return rc;
  const std::string_view text = in.text();
  if (in.assimp) return run_inspect_assimp(a, in.table);
  if (in.format == motion::MotionFormat::kKeypointJson) return run_inspect_keypoints(a, text);
  motion::ConvertOptions options;
  options.table = in.table;
  options.hints = &in.file;
  if (a.fps > 0) options.fps = a.fps;
  auto r = motion::analyse_bvh(text, options);
  if (!r) {
    if (a.json) {
      Json j{{"file", a.input},
             {"valid", false},
             {"error", Json{{"code", r.error().code}, {"message", r.error().message}}}};
      print_json(std::move(j));
    }
    return report_error(a.input, r.error(), kExitInvalid);
  }
  const motion::BvhHeader& h = r->header;
  std::size_t end_sites = 0;
  for (const auto& j : h.joints) end_sites += j.end_site ? 1 : 0;
  if (a.json) {
    Json joints = Json::array();
    for (const auto& j : h.joints) {
      Json ch = Json::array();
      for (std::uint8_t c = 0; c < j.channel_count; ++c)
        ch.push_back(motion::channel_name(j.channels[c]));
      joints.push_back(Json{{"name", j.name},
                            {"parent", j.parent},
                            {"endSite", j.end_site},
                            {"offset", Json::array({j.offset[0], j.offset[1], j.offset[2]})},
                            {"channels", std::move(ch)}});
    }
    Json doc{{"file", a.input},
             {"valid", true},
             {"format", "bvh"},
             {"roots", h.root_count},
             {"joints", std::move(joints)},
             {"channelCount", h.channel_count},
             {"declaredFrames", h.declared_frames},
             {"frames", r->frames},
             {"frameTime", h.frame_time},
             {"fps", r->fps},
             {"pelvis", pelvis_json(*r)},
             {"points", points_json(*r)},
             {"warnings", warnings_json(r->warnings)}};
    print_json(std::move(doc));
    return kExitOk;
  }
  std::ostream& os = std::cout;
  os << printable(a.input) << ": BVH, " << h.root_count << " root(s), "
     << h.joints.size() - end_sites << " joints + " << end_sites << " End Sites, "
     << h.channel_count << " channels\n";
  os << "frames: " << r->frames << " (declared " << h.declared_frames << "), frame time "
     << number_text(h.frame_time) << " s, " << number_text(r->fps) << " fps\n";
  os << "skeleton:\n";
  print_tree(os, h);
  os << "pelvis (origin): " << printable(pelvis_json(*r).get<std::string>()) << "\n";
  print_points(os, *r);
  print_warnings(a.input, r->warnings);
  return kExitOk;
}

}  // namespace

void add_motion_commands(CLI::App& app, int& exit_code) {
  CLI::App* motion = app.add_subcommand(
      "motion", "Motion data (BVH, FBX, glTF, GLB, keypoint JSON) to MediaPipe-33 keypoints");
  motion->require_subcommand(1);

  auto conv = std::make_shared<MotionArgs>();
  CLI::App* convert = motion->add_subcommand(
      "convert",
      "Convert a BVH motion, an FBX/glTF/GLB animation (skeleton + one animation, resampled at a "
      "fixed rate) or mediapipe33@0.1.0 keypoint JSON to MediaPipe-33 keypoint NDJSON "
      "(one frame per line: frame, timeMs, 33 points [x,y,z,confidence], 9 joint-angle cosines); "
      "the format is detected from the content, not the file name");
  convert->add_option("input", conv->input, "BVH, FBX, glTF, GLB or keypoint JSON file")
      ->required()
      ->type_name("IN");
  convert->add_option("-o,--output", conv->output, "Output NDJSON file, '-' for stdout")
      ->required()
      ->type_name("OUT");
  convert
      ->add_option("--joint-map", conv->joint_map,
                   "JSON object: MediaPipe point name or index -> [joint names], tried before "
                   "the default table (BVH, FBX, glTF, GLB)")
      ->type_name("FILE");
  convert
      ->add_option(
          "--up", conv->up,
          "Up axis of the source: y or z (rotated -90 deg about X). Default: y for BVH; for FBX "
          "the file's UpAxis setting, for glTF/GLB y")
      ->check(CLI::IsMember({"y", "z"}))
      ->type_name("AXIS");
  convert
      ->add_option(
          "--animation", conv->animation,
          "FBX/glTF/GLB: the animation to convert, by index (0 = first, the default) or by name")
      ->type_name("N|NAME");
  convert
      ->add_option("--fps", conv->fps,
                   "Frame rate for timeMs (default: BVH Frame Time, the JSON's fps, an FBX's frame "
                   "rate or a "
                   "glTF's key spacing, else 30); FBX/glTF/GLB are resampled at this rate")
      ->check(CLI::Range(0.001, 1000.0))
      ->type_name("N");
  convert->add_flag("--json", conv->json, "Print a JSON summary (stdout; stderr with -o -)");
  convert->footer(
      "Exit status: 0 converted, 1 invalid input (BVH, a file Assimp cannot read, no animation, "
      "keypoint "
      "JSON) or joint map, 2 usage or I/O error.\n"
      "Example: charkit motion convert walk.glb -o walk.ndjson --animation Walk --fps 30\n"
      "Formats and rules: docs/motion.md, docs/contracts/keypoints.md, "
      "docs/contracts/skeleton-topology.md.");
  convert->callback([conv, &exit_code] { exit_code = run_convert(*conv); });

  auto insp = std::make_shared<MotionArgs>();
  CLI::App* inspect = motion->add_subcommand(
      "inspect",
      "Show a BVH file's skeleton tree, channels, frames and fps, and which MediaPipe points are "
      "mapped from which joints, missing or estimated; for FBX/glTF/GLB also the animations, the "
      "chosen one, its duration, the up-axis handling and where the fps comes from; for keypoint "
      "JSON: validity (errors with a JSON pointer), frames, fps and what would be computed or "
      "clamped");
  inspect->add_option("input", insp->input, "BVH, FBX, glTF, GLB or keypoint JSON file")
      ->required()
      ->type_name("IN");
  inspect->add_option("--joint-map", insp->joint_map, "Joint map as for convert")
      ->type_name("FILE");
  inspect
      ->add_option("--animation", insp->animation,
                   "FBX/glTF/GLB: animation index or name (default 0)")
      ->type_name("N|NAME");
  inspect->add_option("--fps", insp->fps, "FBX/glTF/GLB: resampling rate, as for convert")
      ->check(CLI::Range(0.001, 1000.0))
      ->type_name("N");
  inspect->add_option("--up", insp->up, "FBX/glTF/GLB: up axis, as for convert")
      ->check(CLI::IsMember({"y", "z"}))
      ->type_name("AXIS");
  inspect->add_flag("--json", insp->json, "Print the inspection as JSON");
  inspect->footer(
      "Exit status: 0 inspected, 1 invalid input (BVH, a file Assimp cannot read, no animation, "
      "keypoint "
      "JSON) or joint map, 2 usage or I/O error.");
  inspect->callback([insp, &exit_code] { exit_code = run_inspect(*insp); });
}

}  // namespace charkit::app
