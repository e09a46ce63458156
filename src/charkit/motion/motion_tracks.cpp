// The rules the FBX (Assimp) and glTF motion readers share
// (detail/motion_tracks.h): the input check, the animation choice, the
// skeleton and its evaluation chain, and the time base.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "charkit/core/bytes.h"
#include "charkit/core/names.h"
#include "charkit/core/utf8.h"
#include "charkit/motion/detail/motion_tracks.h"
#include "charkit/motion/error_codes.h"
#include "charkit/scene/gltf_document.h"

namespace charkit::motion {

namespace detail {

core::Result<std::size_t> choose_animation(const std::vector<std::string>& names,
                                           const std::string& want) {
  const std::size_t n = names.size();
  // The file's animations for a message: names in index order (unnamed as '').
  auto list = [&] {
    return std::to_string(n) + ", by index from 0: " + core::format_name_list(names);
  };
  if (want.empty()) return std::size_t{0};
  if (std::all_of(want.begin(), want.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
      want.size() < 10) {
    const std::size_t i = std::stoul(want);
    if (i < n) return i;
    return core::make_error(codes::MOTION_ANIMATION_NOT_FOUND,
                            "no animation " + want + " (the file has " + list() + ")");
  }
  for (std::size_t i = 0; i < n; ++i)
    if (names[i] == want) return i;
  return core::make_error(codes::MOTION_ANIMATION_NOT_FOUND,
                          "no animation named " +
                              core::quote_excerpt(want, core::kNameListNameBytes) +
                              " (the file has " + list() + ")");
}

core::Result<AssimpFormat> checked_format(std::span<const std::uint8_t> bytes,
                                          const AssimpLimits& limits) {
  if (bytes.size() > limits.max_bytes)
    return core::make_error(codes::MOTION_LIMIT, "the file is larger than " +
                                                     std::to_string(limits.max_bytes) + " bytes");
  const AssimpFormat format = detect_assimp_format(core::as_chars(bytes));
  if (format == AssimpFormat::kUnknown)
    return core::make_error(
        codes::MOTION_FORMAT,
        "not a glTF (JSON with \"asset\"), GLB (glTF magic) or FBX (binary or ASCII) file");
  if (format == AssimpFormat::kGlb)
    if (auto chunks = scene::split_glb(bytes); !chunks)
      return core::make_error(codes::MOTION_IMPORT_FAILED,
                              "not a valid GLB container: " + chunks.error().to_string());
  return format;
}

SkeletonNodes pick_skeleton(const PreorderForest& f, const std::vector<char>& target,
                            bool virtual_root) {
  const std::size_t n = f.parent.size();
  SkeletonNodes s;
  // Pre-order: a is an ancestor of b when a <= b < end(a).
  bool first = true;
  for (std::size_t i = 0; i < n; ++i) {
    if (!target[i]) continue;
    if (first) {
      s.lca = i;
      first = false;
      continue;
    }
    while (!(s.lca <= i && i < f.end[s.lca])) s.lca = static_cast<std::size_t>(f.parent[s.lca]);
  }
  std::vector<char> on_path(n, 0), under_target(n, 0);
  s.include.assign(n, 0);
  for (std::size_t i = s.lca; i < f.end[s.lca]; ++i)
    if (target[i])
      for (std::size_t k = i; !on_path[k]; k = static_cast<std::size_t>(f.parent[k])) {
        on_path[k] = 1;
        if (k == s.lca) break;
      }
  for (std::size_t i = s.lca; i < f.end[s.lca]; ++i) {
    const bool root = i == s.lca;
    const auto parent = static_cast<std::size_t>(root ? 0 : f.parent[i]);
    under_target[i] = target[i] || (!root && under_target[parent]);
    s.include[i] =
        on_path[i] || (!root && s.include[parent] && under_target[parent] && !f.has_mesh[i]);
  }
  if (virtual_root) s.include[0] = 0;
  const int top = virtual_root ? 0 : -1;  // the chain climbs to this parent, exclusive
  for (int k = f.parent[s.lca]; k > top; k = f.parent[static_cast<std::size_t>(k)])
    s.chain.push_back(static_cast<std::size_t>(k));
  std::reverse(s.chain.begin(), s.chain.end());
  for (std::size_t i = s.lca; i < f.end[s.lca]; ++i)
    if (s.include[i]) s.chain.push_back(i);
  return s;
}

core::Status set_time_base(AssimpMotion& out, const AssimpTracks& tr, bool fps_from_ticks,
                           double duration_ticks, const KeyStats& keys,
                           const AssimpMotionOptions& o) {
  const AssimpLimits& lim = o.limits;
  if (o.fps) {
    out.fps = *o.fps;
    out.fps_source = "option";
  } else if (fps_from_ticks) {
    out.fps = tr.ticks_per_second;
    out.fps_source = "ticks per second";
  } else {
    std::optional<double> f;
    if (keys.densest >= 2 && keys.densest_span > 0)
      f = fps_from_frame_time(keys.densest_span / static_cast<double>(keys.densest - 1) /
                              tr.ticks_per_second);
    if (f && *f >= 10 && *f <= 240) {
      out.fps = *f;
      out.fps_source = "key spacing";
    } else {
      out.fps = kDefaultFps;
      out.fps_source = "default";
    }
  }
  out.duration_seconds = std::max(0.0, duration_ticks / tr.ticks_per_second);
  const double span_frames = out.duration_seconds * out.fps;
  if (!std::isfinite(span_frames) || span_frames + 1 > static_cast<double>(lim.max_frames))
    return core::make_error(codes::MOTION_LIMIT,
                            "the animation is " + std::to_string(out.duration_seconds) +
                                " s long: more than " + std::to_string(lim.max_frames) +
                                " frames at " + std::to_string(out.fps) + " fps");
  out.frames = static_cast<std::uint64_t>(std::llround(span_frames)) + 1;
  if (static_cast<double>(out.frames) * static_cast<double>(tr.nodes.size()) >
      static_cast<double>(lim.max_work))
    return core::make_error(codes::MOTION_LIMIT, std::to_string(out.frames) + " frames × " +
                                                     std::to_string(tr.nodes.size()) +
                                                     " nodes is more work than the limit of " +
                                                     std::to_string(lim.max_work));
  return core::Ok{};
}

}  // namespace detail

}  // namespace charkit::motion
