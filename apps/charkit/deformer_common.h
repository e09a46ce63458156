// Small helpers shared by the `charkit deformer` command files.
#pragma once

#include "charkit/core/error_codes.h"

#include <cmath>
#include <cstddef>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "charkit/core/bytes.h"
#include "charkit/core/result.h"
#include "charkit/deformer/dataset.h"
#include "charkit/deformer/npy.h"
#include "charkit/deformer/pose.h"
#include "charkit/scene/gltf_asset.h"
#include "charkit/scene/intake.h"
#include "charkit/scene/rig.h"
#include "cli_output.h"
#include "error_codes.h"

namespace charkit::app {

/// A VRM's humanoid bone names -> the rig's joint (node) names, "#N" for an
/// unnamed node; empty for other files (or files that do not load: the map
/// then takes joint names only).
inline std::map<std::string, std::string> vrm_humanoid_joints(core::Bytes bytes) {
  std::map<std::string, std::string> out;
  auto model = scene::inspect_and_load_model(bytes);
  if (!model || !model->document || !model->document->asset().vrm) return out;
  const scene::GltfAsset& asset = model->document->asset();
  for (const scene::VrmHumanBone& b : asset.vrm->human_bones) {
    const std::string& name = asset.nodes[b.node].name;  // node indices are checked at load
    out.emplace(b.bone, name.empty() ? "#" + std::to_string(b.node) : name);
  }
  return out;
}

/// "a, b,c" -> {"a", "b", "c"} (spaces dropped, empty items skipped).
inline std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == ',') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else if (c != ' ') {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

/// "128,64" -> {128, 64}; false on anything else (or a width of 0 or > 65536).
inline bool parse_widths(const std::string& s, std::vector<std::size_t>& out) {
  out.clear();
  for (const std::string& h : split_list(s)) {
    std::size_t v = 0;
    std::istringstream is(h);
    if (!(is >> v) || !is.eof() || v == 0 || v > 65536) return false;
    out.push_back(v);
  }
  return !out.empty();
}

/// The training progress callback (MlpOptions::progress, TrainProgress):
/// a ProgressReporter made on the first call, once the total is known.
/// Empty with --quiet.
inline std::function<void(std::size_t, std::size_t, double)> training_progress(bool quiet) {
  if (quiet || output_mode().quiet) return {};
  auto reporter = std::make_shared<std::unique_ptr<ProgressReporter>>();
  return [reporter](std::size_t done, std::size_t total, double loss) {
    if (!*reporter) *reporter = std::make_unique<ProgressReporter>("", "training", total);
    char note[48];
    std::snprintf(note, sizeof note, "batch loss %.6g", loss);
    (*reporter)->update(done, note);
    if (done >= total) reporter->reset();
  };
}

/// The exit status of a failed load: 2 for the I/O family (a missing or
/// unreadable file, docs/cli.md), 1 for invalid content.
inline int load_exit(const core::Error& e) {
  return core::is_io_error(e) ? 2 : 1;
}

inline core::Error usage_error(std::string message) {
  return core::make_error(codes::USAGE, std::move(message));
}

/// The input spec of a command: --spec FILE (the JSON `deformer sample
/// --write-spec` writes), else --bones NAMES (or "all": every joint) turned
/// on --axes within ±--range degrees.
inline core::Result<deformer::InputSpec> input_spec_from(const std::string& spec_path,
                                                         const std::string& bones,
                                                         const std::string& axes, double range,
                                                         const scene::Rig& rig) {
  if (!spec_path.empty()) {
    auto bytes = deformer::read_file_bytes(spec_path, std::size_t{16} << 20);
    if (!bytes) return std::move(bytes).error();
    auto j = core::parse_json_strict(core::as_chars(core::Bytes(*bytes)));
    if (!j) return std::move(j).error();
    return deformer::parse_input_spec(*j, "");
  }
  std::vector<std::string> names = split_list(bones);
  if (names.empty())
    return usage_error("give the input bones with --bones NAME,NAME,… (or --bones all) or --spec");
  if (names.size() == 1 && names[0] == "all") names = rig.skeleton.joint_names;
  if (axes.empty() || axes.find_first_not_of("xyz") != std::string::npos)
    return usage_error("--axes takes a subset of \"xyz\"");
  if (!std::isfinite(range) || range <= 0.0 || range > 360.0)
    return usage_error("--range must be in (0, 360] degrees");
  deformer::InputSpec spec;
  for (const std::string& n : names) {
    deformer::BoneInput b;
    // "#N" (how model inspect shows an unnamed node) becomes the joint's name.
    const auto joint = scene::find_joint(rig, n);
    b.name = joint ? rig.skeleton.joint_names[*joint] : n;
    for (int k = 0; k < 3; ++k) {
      b.axes[static_cast<std::size_t>(k)].enabled =
          axes.find(static_cast<char>('x' + k)) != std::string::npos;
      b.axes[static_cast<std::size_t>(k)].min_deg = -range;
      b.axes[static_cast<std::size_t>(k)].max_deg = range;
    }
    spec.bones.push_back(std::move(b));
  }
  if (auto st = deformer::validate(spec); !st) return std::move(st).error();
  return spec;
}

}  // namespace charkit::app
