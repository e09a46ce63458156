// glTF and GLB animations read by charkit's glTF layer (load_gltf_motion in
// assimp_motion.h; docs/motion.md §FBX, glTF and GLB animations). The
// skeleton is chosen by the rules of the Assimp path, on the glTF node
// forest; the tracks are the channels' samplers as scene::GltfTrack.
#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "charkit/core/error_codes.h"
#include "charkit/motion/assimp_motion.h"
#include "charkit/motion/detail/motion_tracks.h"
#include "charkit/motion/error_codes.h"
#include "charkit/scene/gltf_animation.h"
#include "charkit/scene/gltf_document.h"

namespace charkit::motion {
namespace {

core::Error gltf_fail(core::ErrorCode code, std::string message) {
  return core::make_error(std::move(code), std::move(message));
}

// The glTF layer's located error, as the one code of a file that cannot be read.
core::Error not_valid(AssimpFormat format, const core::Error& e) {
  return gltf_fail(
      codes::MOTION_IMPORT_FAILED,
      std::string("not a valid ") + assimp_format_name(format) + " file: " + e.to_string());
}

std::string node_name(const scene::GltfAsset& a, std::size_t i) {
  return a.nodes[i].name.empty() ? "#" + std::to_string(i) : a.nodes[i].name;
}

// The node's rest transform, and its TRS (a matrix is decomposed).
void rest_of(const scene::GltfNode& g, AssimpTracks::Node& n) {
  core::Trs<double> t;
  if (g.matrix) {
    core::Mat4d m;
    std::copy(g.matrix->begin(), g.matrix->end(), m.begin());
    t = core::decompose(m);
    n.rest = {core::linear_part(m), {m[12], m[13], m[14]}};
  } else {
    t = {{g.translation[0], g.translation[1], g.translation[2]},
         core::normalize(core::Quatd{g.rotation[0], g.rotation[1], g.rotation[2], g.rotation[3]}),
         {g.scale[0], g.scale[1], g.scale[2]}};
    n.rest = detail::trs(t.translation, t.rotation, t.scale);
  }
  n.rest_t = t.translation;
  n.rest_r = t.rotation;
  n.rest_s = t.scale;
}

// The latest key time an animation declares (its input accessors' max,
// which glTF 2.0 requires), without reading any data.
double declared_duration(const scene::GltfAsset& a, const scene::GltfAnimation& anim) {
  double d = 0;
  for (const scene::GltfAnimationSampler& s : anim.samplers)
    if (s.input < a.accessors.size() && !a.accessors[s.input].max.empty() &&
        std::isfinite(a.accessors[s.input].max[0]))
      d = std::max(d, a.accessors[s.input].max[0]);
  return d;
}

core::Result<AssimpMotion> build(scene::GltfDocument& doc, AssimpFormat format,
                                 const AssimpMotionOptions& o) {
  const AssimpLimits& lim = o.limits;
  const scene::GltfAsset& a = doc.asset();
  if (o.fps && !(std::isfinite(*o.fps) && *o.fps > 0))
    return gltf_fail(codes::MOTION_FPS, "the frame rate must be a positive number");
  if (a.nodes.size() > lim.max_nodes)
    return gltf_fail(codes::MOTION_LIMIT, "more than " + std::to_string(lim.max_nodes) + " nodes");
  if (a.animations.empty())
    return gltf_fail(codes::MOTION_NO_ANIMATION, "the file holds no animation");
  std::vector<std::string> names;
  for (const scene::GltfAnimation& an : a.animations) names.push_back(an.name);
  auto chosen = detail::choose_animation(names, o.animation);
  if (!chosen) return chosen.error();
  const scene::GltfAnimation& anim = a.animations[*chosen];

  // The default scene's nodes (every root when the file has no scene) in
  // depth-first pre-order under a virtual root at index 0.
  struct N {
    std::size_t node = 0;  // glTF index; unused for the virtual root
    int parent = -1;
    std::size_t end = 0;  // one past the last node of its subtree
  };
  std::vector<N> nodes{{0, -1, 0}};
  std::vector<int> pos_of(a.nodes.size(), -1);
  {
    std::vector<std::size_t> roots;
    if (!a.scenes.empty()) {
      roots = a.scenes[a.scene.value_or(0)].nodes;
    } else {
      for (std::size_t i = 0; i < a.nodes.size(); ++i)
        if (!a.nodes[i].parent) roots.push_back(i);
    }
    std::vector<std::pair<std::size_t, int>> stack;
    for (std::size_t r = roots.size(); r-- > 0;) stack.emplace_back(roots[r], 0);
    while (!stack.empty()) {
      auto [node, parent] = stack.back();
      stack.pop_back();
      if (pos_of[node] >= 0) continue;  // listed twice: kept where first met
      const int self = static_cast<int>(nodes.size());
      pos_of[node] = self;
      nodes.push_back({node, parent});
      const auto& children = a.nodes[node].children;
      for (std::size_t c = children.size(); c-- > 0;) stack.emplace_back(children[c], self);
    }
    for (std::size_t i = nodes.size(); i-- > 0;) {
      if (nodes[i].end < i + 1) nodes[i].end = i + 1;
      if (nodes[i].parent >= 0) {
        auto& p = nodes[static_cast<std::size_t>(nodes[i].parent)];
        p.end = std::max(p.end, nodes[i].end);
      }
    }
  }
  auto has_mesh = [&](std::size_t i) { return i > 0 && a.nodes[nodes[i].node].mesh.has_value(); };

  // Targets: the joints of the skins that skin a mesh, else the animated nodes.
  std::vector<char> target(nodes.size(), 0);
  bool any = false;
  for (std::size_t i = 1; i < nodes.size(); ++i) {
    const scene::GltfNode& g = a.nodes[nodes[i].node];
    if (!g.mesh || !g.skin) continue;
    for (std::size_t j : a.skins[*g.skin].joints)
      if (pos_of[j] >= 0) target[static_cast<std::size_t>(pos_of[j])] = any = true;
  }
  AssimpMotion out;
  out.skinned = any;
  auto moves_node = [](const scene::GltfChannel& ch) {
    return ch.node && (ch.path == scene::GltfPath::kTranslation ||
                       ch.path == scene::GltfPath::kRotation || ch.path == scene::GltfPath::kScale);
  };
  if (!any)
    for (const scene::GltfChannel& ch : anim.channels)
      if (moves_node(ch) && pos_of[*ch.node] >= 0)
        target[static_cast<std::size_t>(pos_of[*ch.node])] = any = true;
  if (!any)
    return gltf_fail(
        codes::MOTION_NO_SKELETON,
        "no skinned mesh joints and no animated node found in the scene (nothing to move)");

  // The lowest common ancestor of the targets (pre-order: a is an ancestor
  // of b when a <= b < end(a)).
  std::size_t lca = 0;
  {
    bool first = true;
    for (std::size_t i = 1; i < nodes.size(); ++i) {
      if (!target[i]) continue;
      if (first) {
        lca = i;
        first = false;
        continue;
      }
      while (!(lca <= i && i < nodes[lca].end)) lca = static_cast<std::size_t>(nodes[lca].parent);
    }
  }
  // Included nodes in the LCA's subtree: targets, their ancestors, and
  // mesh-free descendants of targets (end effectors such as HeadTop_End).
  // The virtual root is never one.
  std::vector<char> on_path(nodes.size(), 0), under_target(nodes.size(), 0),
      include(nodes.size(), 0);
  for (std::size_t i = lca; i < nodes[lca].end; ++i)
    if (target[i])
      for (std::size_t k = i; !on_path[k]; k = static_cast<std::size_t>(nodes[k].parent)) {
        on_path[k] = 1;
        if (k == lca) break;
      }
  for (std::size_t i = lca; i < nodes[lca].end; ++i) {
    const bool root = i == lca;
    const auto parent = static_cast<std::size_t>(root ? 0 : nodes[i].parent);
    under_target[i] = target[i] || (!root && under_target[parent]);
    include[i] =
        i > 0 && (on_path[i] || (!root && include[parent] && under_target[parent] && !has_mesh(i)));
  }

  // Evaluation chain: the LCA's ancestors (root first), then the included nodes.
  auto tr = std::make_shared<AssimpTracks>();
  tr->ticks_per_second = 1;  // glTF key times are seconds
  std::vector<int> eval_of(nodes.size(), -1);
  {
    std::vector<std::size_t> chain;
    for (int k = nodes[lca].parent; k > 0; k = nodes[static_cast<std::size_t>(k)].parent)
      chain.push_back(static_cast<std::size_t>(k));
    std::reverse(chain.begin(), chain.end());
    for (std::size_t i = lca; i < nodes[lca].end; ++i)
      if (include[i]) chain.push_back(i);
    for (std::size_t i : chain) {
      AssimpTracks::Node n;
      n.parent = nodes[i].parent > 0 ? eval_of[static_cast<std::size_t>(nodes[i].parent)] : -1;
      rest_of(a.nodes[nodes[i].node], n);
      eval_of[i] = static_cast<int>(tr->nodes.size());
      tr->nodes.push_back(n);
    }
  }

  // Joints: every included node; its parent joint is its parent when that
  // is included (every node of the chain inside the LCA's subtree is).
  std::vector<int> joint_of(nodes.size(), -1);
  for (std::size_t i = lca; i < nodes[lca].end; ++i) {
    if (!include[i]) continue;
    if (out.joints.size() >= lim.max_joints)
      return gltf_fail(codes::MOTION_LIMIT,
                       "more than " + std::to_string(lim.max_joints) + " skeleton joints");
    const int p = nodes[i].parent;
    const bool parent_joint = i != lca && p > 0 && include[static_cast<std::size_t>(p)];
    BvhJoint j;
    j.name = node_name(a, nodes[i].node);
    j.parent = parent_joint ? joint_of[static_cast<std::size_t>(p)] : -1;
    j.offset = tr->nodes[static_cast<std::size_t>(eval_of[i])].rest.t;
    if (j.parent < 0) ++out.root_count;
    joint_of[i] = static_cast<int>(out.joints.size());
    out.joints.push_back(std::move(j));
    tr->joint_node.push_back(static_cast<std::uint32_t>(eval_of[i]));
  }
  if (out.joints.empty()) return gltf_fail(codes::MOTION_NO_SKELETON, "the skeleton has no joints");

  // The chosen animation's channels on the evaluated nodes, read and checked
  // by the glTF layer.
  detail::KeyStats stats;
  for (const scene::GltfChannel& ch : anim.channels) {
    if (!moves_node(ch) || pos_of[*ch.node] < 0) continue;  // weights, or outside the scene
    const int e = eval_of[static_cast<std::size_t>(pos_of[*ch.node])];
    if (e < 0) continue;  // moves nothing of the skeleton
    auto& en = tr->nodes[static_cast<std::size_t>(e)];
    if (en.track < 0) {
      en.track = static_cast<int>(tr->tracks.size());
      tr->tracks.emplace_back();
    }
    AssimpTracks::Track& t = tr->tracks[static_cast<std::size_t>(en.track)];
    std::optional<scene::GltfTrack>& slot =
        ch.path == scene::GltfPath::kTranslation ? t.gltf_translation
        : ch.path == scene::GltfPath::kRotation  ? t.gltf_rotation
                                                 : t.gltf_scale;
    if (slot) {
      out.warnings.push_back(
          {codes::MOTION_CHANNEL_DUPLICATE, "second " + ch.path_name + " channel for node \"" +
                                                node_name(a, *ch.node) + "\" ignored"});
      continue;
    }
    auto track = scene::read_gltf_track(doc, anim.samplers[ch.sampler], ch.path);
    if (!track) return not_valid(format, track.error());
    stats.note(track->times.size(), track->times.front(), track->times.back());
    slot = std::move(*track);
  }
  for (std::uint32_t n : tr->joint_node) out.animated_joints += tr->nodes[n].track >= 0 ? 1 : 0;

  // Time base and length: seconds; no ticks per second to take a rate from.
  if (auto st = detail::set_time_base(out, *tr, false, stats.max_key, stats, o); !st)
    return std::move(st).error();
  out.up_axis = o.auto_up ? "Y-up (glTF)" : "as stored (--up given)";
  out.format = format;
  for (const scene::GltfAnimation& an : a.animations)
    out.animations.push_back(
        {an.name, declared_duration(a, an), 1.0, static_cast<std::uint32_t>(an.channels.size())});
  out.animation = *chosen;
  out.tracks = std::move(tr);
  return out;
}

}  // namespace

core::Result<AssimpMotion> load_gltf_motion(std::span<const std::uint8_t> bytes,
                                            const std::string& base_dir,
                                            const AssimpMotionOptions& options) {
  if (bytes.size() > options.limits.max_bytes)
    return gltf_fail(codes::MOTION_LIMIT, "the file is larger than " +
                                              std::to_string(options.limits.max_bytes) + " bytes");
  const AssimpFormat format = detect_assimp_format(core::as_chars(bytes));
  if (format != AssimpFormat::kGlb && format != AssimpFormat::kGltf)
    return gltf_fail(codes::MOTION_FORMAT,
                     "not a glTF (JSON with \"asset\") or GLB (glTF magic) file");
  if (format == AssimpFormat::kGlb)
    if (auto chunks = scene::split_glb(bytes); !chunks)
      return gltf_fail(codes::MOTION_IMPORT_FAILED,
                       "not a valid GLB container: " + chunks.error().to_string());
  scene::GltfLoadOptions lo;
  lo.base_dir = base_dir;
  lo.max_total_bytes = options.limits.max_bytes;
  auto doc = scene::GltfDocument::load(bytes, lo);
  if (!doc) return not_valid(format, doc.error());
  return build(*doc, format, options);
}

}  // namespace charkit::motion
