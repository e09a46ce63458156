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

bool moves_node(const scene::GltfChannel& ch) {
  return ch.node && (ch.path == scene::GltfPath::kTranslation ||
                     ch.path == scene::GltfPath::kRotation || ch.path == scene::GltfPath::kScale);
}

// One glTF animation read into an AssimpMotion, step by step: the scene's
// node forest, the skeleton in it, the evaluation chain and joints, the
// channels' tracks, the time base.
class Builder {
 public:
  Builder(scene::GltfDocument& doc, AssimpFormat format, const AssimpMotionOptions& o)
      : doc_(doc), a_(doc.asset()), format_(format), o_(o) {}

  core::Result<AssimpMotion> run();

 private:
  struct N {
    std::size_t node = 0;  // glTF index; unused for the virtual root
    int parent = -1;
    std::size_t end = 0;  // one past the last node of its subtree
  };
  void forest();
  core::Status skeleton(const scene::GltfAnimation& anim);
  core::Status chain_and_joints();
  core::Status tracks(const scene::GltfAnimation& anim, detail::KeyStats& stats);

  scene::GltfDocument& doc_;
  const scene::GltfAsset& a_;
  AssimpFormat format_;
  const AssimpMotionOptions& o_;
  AssimpMotion out_;
  std::shared_ptr<AssimpTracks> tr_ = std::make_shared<AssimpTracks>();
  std::vector<N> nodes_{{0, -1, 0}};  // pre-order under a virtual root at 0
  std::vector<int> pos_of_;           // glTF node → index in nodes_ (-1: not in the scene)
  std::size_t lca_ = 0;
  std::vector<char> include_;
  std::vector<std::size_t> chain_;  // the evaluation chain (indices in nodes_)
  std::vector<int> eval_of_;        // index in nodes_ → node of the evaluation chain
};

// The default scene's nodes (every root when the file has no scene) in
// depth-first pre-order under a virtual root at index 0.
void Builder::forest() {
  pos_of_.assign(a_.nodes.size(), -1);
  std::vector<std::size_t> roots;
  if (!a_.scenes.empty()) {
    roots = a_.scenes[a_.scene.value_or(0)].nodes;
  } else {
    for (std::size_t i = 0; i < a_.nodes.size(); ++i)
      if (!a_.nodes[i].parent) roots.push_back(i);
  }
  std::vector<std::pair<std::size_t, int>> stack;
  for (std::size_t r = roots.size(); r-- > 0;) stack.emplace_back(roots[r], 0);
  while (!stack.empty()) {
    auto [node, parent] = stack.back();
    stack.pop_back();
    if (pos_of_[node] >= 0) continue;  // listed twice: kept where first met
    const int self = static_cast<int>(nodes_.size());
    pos_of_[node] = self;
    nodes_.push_back({node, parent});
    const auto& children = a_.nodes[node].children;
    for (std::size_t c = children.size(); c-- > 0;) stack.emplace_back(children[c], self);
  }
  for (std::size_t i = nodes_.size(); i-- > 0;) {
    if (nodes_[i].end < i + 1) nodes_[i].end = i + 1;
    if (nodes_[i].parent >= 0) {
      auto& p = nodes_[static_cast<std::size_t>(nodes_[i].parent)];
      p.end = std::max(p.end, nodes_[i].end);
    }
  }
}

// The targets (the joints of the skins that skin a mesh, else the animated
// nodes) and the skeleton around them (detail::pick_skeleton, the rule of
// the Assimp path). The virtual root is never included.
core::Status Builder::skeleton(const scene::GltfAnimation& anim) {
  std::vector<char> target(nodes_.size(), 0);
  bool any = false;
  for (std::size_t i = 1; i < nodes_.size(); ++i) {
    const scene::GltfNode& g = a_.nodes[nodes_[i].node];
    if (!g.mesh || !g.skin) continue;
    for (std::size_t j : a_.skins[*g.skin].joints)
      if (pos_of_[j] >= 0) target[static_cast<std::size_t>(pos_of_[j])] = any = true;
  }
  out_.skinned = any;
  if (!any)
    for (const scene::GltfChannel& ch : anim.channels)
      if (moves_node(ch) && pos_of_[*ch.node] >= 0)
        target[static_cast<std::size_t>(pos_of_[*ch.node])] = any = true;
  if (!any)
    return gltf_fail(
        codes::MOTION_NO_SKELETON,
        "no skinned mesh joints and no animated node found in the scene (nothing to move)");
  detail::PreorderForest forest;
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    forest.parent.push_back(nodes_[i].parent);
    forest.end.push_back(nodes_[i].end);
    forest.has_mesh.push_back(i > 0 && a_.nodes[nodes_[i].node].mesh ? 1 : 0);
  }
  detail::SkeletonNodes picked = detail::pick_skeleton(forest, target, true);
  lca_ = picked.lca;
  include_ = std::move(picked.include);
  chain_ = std::move(picked.chain);
  return core::Ok{};
}

// The evaluation chain (the ancestor's ancestors, root first, then the
// included nodes) and the joints: every included node, whose parent joint
// is its parent when that is included.
core::Status Builder::chain_and_joints() {
  eval_of_.assign(nodes_.size(), -1);
  for (std::size_t i : chain_) {
    AssimpTracks::Node n;
    n.parent = nodes_[i].parent > 0 ? eval_of_[static_cast<std::size_t>(nodes_[i].parent)] : -1;
    rest_of(a_.nodes[nodes_[i].node], n);
    eval_of_[i] = static_cast<int>(tr_->nodes.size());
    tr_->nodes.push_back(n);
  }
  std::vector<int> joint_of(nodes_.size(), -1);
  for (std::size_t i = lca_; i < nodes_[lca_].end; ++i) {
    if (!include_[i]) continue;
    if (out_.joints.size() >= o_.limits.max_joints)
      return gltf_fail(codes::MOTION_LIMIT,
                       "more than " + std::to_string(o_.limits.max_joints) + " skeleton joints");
    const int p = nodes_[i].parent;
    const bool parent_joint = i != lca_ && p > 0 && include_[static_cast<std::size_t>(p)];
    BvhJoint j;
    j.name = node_name(a_, nodes_[i].node);
    j.parent = parent_joint ? joint_of[static_cast<std::size_t>(p)] : -1;
    j.offset = tr_->nodes[static_cast<std::size_t>(eval_of_[i])].rest.t;
    if (j.parent < 0) ++out_.root_count;
    joint_of[i] = static_cast<int>(out_.joints.size());
    out_.joints.push_back(std::move(j));
    tr_->joint_node.push_back(static_cast<std::uint32_t>(eval_of_[i]));
  }
  if (out_.joints.empty())
    return gltf_fail(codes::MOTION_NO_SKELETON, "the skeleton has no joints");
  return core::Ok{};
}

// The animation's translation, rotation and scale channels on the chain's
// nodes, read and checked by the glTF layer.
core::Status Builder::tracks(const scene::GltfAnimation& anim, detail::KeyStats& stats) {
  for (const scene::GltfChannel& ch : anim.channels) {
    if (!moves_node(ch) || pos_of_[*ch.node] < 0) continue;  // weights, or outside the scene
    const int e = eval_of_[static_cast<std::size_t>(pos_of_[*ch.node])];
    if (e < 0) continue;  // moves nothing of the skeleton
    auto& en = tr_->nodes[static_cast<std::size_t>(e)];
    if (en.track < 0) {
      en.track = static_cast<int>(tr_->tracks.size());
      tr_->tracks.emplace_back();
    }
    AssimpTracks::Track& t = tr_->tracks[static_cast<std::size_t>(en.track)];
    std::optional<scene::GltfTrack>& slot =
        ch.path == scene::GltfPath::kTranslation ? t.gltf_translation
        : ch.path == scene::GltfPath::kRotation  ? t.gltf_rotation
                                                 : t.gltf_scale;
    if (slot) {
      out_.warnings.push_back(
          {codes::MOTION_CHANNEL_DUPLICATE, "second " + ch.path_name + " channel for node \"" +
                                                node_name(a_, *ch.node) + "\" ignored"});
      continue;
    }
    auto track = scene::read_gltf_track(doc_, anim.samplers[ch.sampler], ch.path);
    if (!track) return not_valid(format_, track.error());
    stats.note(track->times.size(), track->times.front(), track->times.back());
    slot = std::move(*track);
  }
  for (std::uint32_t n : tr_->joint_node) out_.animated_joints += tr_->nodes[n].track >= 0 ? 1 : 0;
  return core::Ok{};
}

core::Result<AssimpMotion> Builder::run() {
  if (o_.fps && !(std::isfinite(*o_.fps) && *o_.fps > 0))
    return gltf_fail(codes::MOTION_FPS, "the frame rate must be a positive number");
  if (a_.nodes.size() > o_.limits.max_nodes)
    return gltf_fail(codes::MOTION_LIMIT,
                     "more than " + std::to_string(o_.limits.max_nodes) + " nodes");
  if (a_.animations.empty())
    return gltf_fail(codes::MOTION_NO_ANIMATION, "the file holds no animation");
  std::vector<std::string> names;
  for (const scene::GltfAnimation& an : a_.animations) names.push_back(an.name);
  auto chosen = detail::choose_animation(names, o_.animation);
  if (!chosen) return chosen.error();
  const scene::GltfAnimation& anim = a_.animations[*chosen];
  tr_->ticks_per_second = 1;  // glTF key times are seconds
  forest();
  if (auto st = skeleton(anim); !st) return std::move(st).error();
  if (auto st = chain_and_joints(); !st) return std::move(st).error();
  detail::KeyStats stats;
  if (auto st = tracks(anim, stats); !st) return std::move(st).error();
  // Time base and length: seconds; no ticks per second to take a rate from.
  if (auto st = detail::set_time_base(out_, *tr_, false, stats.max_key, stats, o_); !st)
    return std::move(st).error();
  out_.up_axis = o_.auto_up ? "Y-up (glTF)" : "as stored (--up given)";
  out_.format = format_;
  for (const scene::GltfAnimation& an : a_.animations)
    out_.animations.push_back(
        {an.name, declared_duration(a_, an), 1.0, static_cast<std::uint32_t>(an.channels.size())});
  out_.animation = *chosen;
  out_.tracks = std::move(tr_);
  return std::move(out_);
}

}  // namespace

core::Result<AssimpMotion> load_gltf_motion(std::span<const std::uint8_t> bytes,
                                            const std::string& base_dir,
                                            const AssimpMotionOptions& options) {
  auto checked = detail::checked_format(bytes, options.limits);
  if (!checked) return std::move(checked).error();
  const AssimpFormat format = *checked;
  if (format != AssimpFormat::kGlb && format != AssimpFormat::kGltf)
    return gltf_fail(codes::MOTION_FORMAT, "an FBX file: glTF or GLB is read here");
  const std::uint64_t json_bytes =
      format == AssimpFormat::kGlb ? scene::split_glb(bytes)->json.size() : bytes.size();
  if (json_bytes > options.limits.max_json_bytes)
    return gltf_fail(codes::MOTION_LIMIT, "the glTF JSON of " + std::to_string(json_bytes) +
                                              " bytes is over the limit of " +
                                              std::to_string(options.limits.max_json_bytes));
  scene::GltfLoadOptions lo;
  lo.base_dir = base_dir;
  lo.max_total_bytes = options.limits.max_bytes;
  auto doc = scene::GltfDocument::load(bytes, lo);
  if (!doc) return not_valid(format, doc.error());
  return Builder(*doc, format, options).run();
}

}  // namespace charkit::motion
