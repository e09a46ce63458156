// FBX and glTF motions read with Assimp, in a child process (docs/motion.md):
// the import, the scene walk into AssimpTracks and the encoding that
// carries the result back. Built with CHARKIT_WITH_ASSIMP only; its
// stand-in is disabled/assimp_import.cpp (docs/building.md, "Optional
// dependencies").
#include "charkit/motion/assimp_motion.h"

#include <assimp/MemoryIOWrapper.h>
#include <assimp/config.h>
#include <assimp/postprocess.h>
#include <assimp/scene.h>
#include <assimp/IOStream.hpp>
#include <assimp/IOSystem.hpp>
#include <assimp/Importer.hpp>

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

namespace {

using Quat = core::Quatd;
using detail::Affine;
using detail::compose;
using detail::trs;

Affine from_ai(const aiMatrix4x4& a) {
  Affine r;
  r.m = {a.a1, a.b1, a.c1, a.a2, a.b2, a.c2, a.a3, a.b3, a.c3};  // column-major
  r.t = {a.a4, a.b4, a.c4};
  return r;
}

// The importer's only file access: files under `dir` (none when dir is
// empty), regular files, read whole into memory within a byte budget.
class BoundedIOSystem : public Assimp::IOSystem {
 public:
  BoundedIOSystem(std::filesystem::path dir, std::uint64_t budget)
      : dir_(std::move(dir)), budget_(budget) {}

  bool Exists(const char* file) const override { return !resolve(file).empty(); }
  char getOsSeparator() const override { return '/'; }
  Assimp::IOStream* Open(const char* file, const char* mode) override {
    if (!mode || std::strchr(mode, 'w') || std::strchr(mode, 'a') || std::strchr(mode, '+'))
      return nullptr;
    const std::filesystem::path p = resolve(file);
    if (p.empty()) return nullptr;
    std::error_code ec;
    const auto size = std::filesystem::file_size(p, ec);
    if (ec || size > budget_) return nullptr;
    std::ifstream in(p, std::ios::binary);
    if (!in) return nullptr;
    auto* buf = new (std::nothrow) std::uint8_t[size ? size : 1];
    if (!buf) return nullptr;
    in.read(reinterpret_cast<char*>(buf), static_cast<std::streamsize>(size));
    if (static_cast<std::uint64_t>(in.gcount()) != size) {
      delete[] buf;
      return nullptr;
    }
    budget_ -= size;
    return new Assimp::MemoryIOStream(buf, static_cast<std::size_t>(size), true);
  }
  void Close(Assimp::IOStream* s) override { delete s; }

 private:
  std::filesystem::path resolve(const char* file) const {
    if (dir_.empty() || !file || !*file) return {};
    std::error_code ec;
    std::filesystem::path p(file);
    if (p.is_relative()) p = dir_ / p;
    p = std::filesystem::weakly_canonical(p, ec);
    if (ec) return {};
    // Inside dir_ (or below it) and a regular file.
    auto rel = p.lexically_relative(dir_);
    if (rel.empty() || *rel.begin() == "..") return {};
    if (!std::filesystem::is_regular_file(p, ec) || ec) return {};
    return p;
  }

  std::filesystem::path dir_;
  std::uint64_t budget_;
};

core::Error fail(core::ErrorCode code, std::string message) {
  return core::make_error(std::move(code), std::move(message));
}

bool is_helper(const aiString& name) {
  return std::strstr(name.C_Str(), "_$AssimpFbx$_") != nullptr;
}

std::string safe_name(const aiString& s) {
  // aiString holds at most 1023 bytes; length is trusted only within that.
  const std::size_t n = std::min<std::size_t>(s.length, MAXLEN - 1);
  return std::string(s.data, ::strnlen(s.data, n));
}

template <typename AiKey, typename V, typename Conv>
void copy_keys(const AiKey* keys, unsigned count, std::vector<AssimpTracks::Key<V>>& out,
               Conv conv) {
  if (!keys) return;
  out.reserve(count);
  for (unsigned i = 0; i < count; ++i)
    if (std::isfinite(keys[i].mTime)) out.push_back({keys[i].mTime, conv(keys[i].mValue)});
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.t < b.t; });
}

// Up axis of the file: glTF is Y-up (glTF 2.0 §3.4); FBX says so in its
// GlobalSettings (Assimp's metadata UpAxis 0/1/2, UpAxisSign ±1), which
// Assimp 5.2 reports but does not apply.
Mat3 up_rotation(const aiScene& scene, AssimpFormat format, std::string& words) {
  const Mat3 identity = core::identity3<double>();
  if (format == AssimpFormat::kGlb || format == AssimpFormat::kGltf) {
    words = "Y-up (glTF)";
    return identity;
  }
  int axis = 1, sign = 1;
  if (scene.mMetaData) {
    std::int32_t v = 0;
    if (scene.mMetaData->Get("UpAxis", v)) axis = v;
    if (scene.mMetaData->Get("UpAxisSign", v)) sign = v < 0 ? -1 : 1;
  }
  if (axis < 0 || axis > 2) {
    words = "FBX UpAxis " + std::to_string(axis) + " not understood; used as Y-up";
    return identity;
  }
  static const char* kNames[] = {"X", "Y", "Z"};
  words = std::string("FBX UpAxis ") + (sign < 0 ? "-" : "+") + kNames[axis];
  // Rotations taking the file's up vector to +Y (column-major, core/math.h).
  if (axis == 1 && sign > 0) return identity;
  words += ", rotated to +Y";
  if (axis == 1) return {1, 0, 0, 0, -1, 0, 0, 0, -1};  // 180° about X
  if (axis == 2 && sign > 0)
    return {1, 0, 0, 0, 0, -1, 0, 1, 0};               // −90° about X: (x,y,z) → (x,z,−y)
  if (axis == 2) return {1, 0, 0, 0, 0, 1, 0, -1, 0};  // +90° about X: (x,y,z) → (x,−z,y)
  if (sign > 0) return {0, 1, 0, -1, 0, 0, 0, 0, 1};   // +90° about Z: (x,y,z) → (−y,x,z)
  return {0, -1, 0, 1, 0, 0, 0, 0, 1};                 // −90° about Z: (x,y,z) → (y,−x,z)
}

/// A node of the hierarchy in depth-first pre-order.
struct FlatNode {
  const aiNode* node;
  int parent;
  std::size_t end = 0;  ///< one past the last node of its subtree
};

/// Every node in depth-first pre-order, without recursion.
core::Result<std::vector<FlatNode>> flatten_nodes(const aiScene& scene, std::size_t max_nodes) {
  std::vector<FlatNode> nodes;
  std::vector<std::pair<const aiNode*, int>> stack{{scene.mRootNode, -1}};
  while (!stack.empty()) {
    auto [node, parent] = stack.back();
    stack.pop_back();
    if (nodes.size() >= max_nodes)
      return fail(codes::MOTION_LIMIT, "more than " + std::to_string(max_nodes) + " nodes");
    const int self = static_cast<int>(nodes.size());
    nodes.push_back({node, parent});
    if (node->mChildren)
      for (unsigned c = node->mNumChildren; c-- > 0;)
        if (node->mChildren[c]) stack.emplace_back(node->mChildren[c], self);
  }
  for (std::size_t i = nodes.size(); i-- > 0;) {
    if (nodes[i].end < i + 1) nodes[i].end = i + 1;
    if (nodes[i].parent >= 0) {
      auto& p = nodes[static_cast<std::size_t>(nodes[i].parent)];
      p.end = std::max(p.end, nodes[i].end);
    }
  }
  return nodes;
}

/// The animation's channels as tracks of the evaluated nodes (`eval_of`:
/// a hierarchy node's index among them, or -1): one per node, the keys'
/// counts and times noted for the time base.
template <class Find>
detail::KeyStats read_channels(const aiAnimation& anim, const Find& find,
                               const std::vector<int>& eval_of, AssimpTracks& tr,
                               std::vector<BvhWarning>& warnings) {
  detail::KeyStats stats;
  if (!anim.mChannels) return stats;
  for (unsigned c = 0; c < anim.mNumChannels; ++c) {
    const aiNodeAnim* ch = anim.mChannels[c];
    if (!ch) continue;
    const int ni = find(ch->mNodeName);
    if (ni < 0) {
      warnings.push_back(
          {codes::MOTION_CHANNEL_UNKNOWN_NODE,
           "animation channel for unknown node \"" + safe_name(ch->mNodeName) + "\" ignored"});
      continue;
    }
    const int e = eval_of[static_cast<std::size_t>(ni)];
    if (e < 0) continue;  // moves nothing of the skeleton
    auto& en = tr.nodes[static_cast<std::size_t>(e)];
    if (en.track >= 0) {
      warnings.push_back({codes::MOTION_CHANNEL_DUPLICATE,
                          "second channel for node \"" + safe_name(ch->mNodeName) + "\" ignored"});
      continue;
    }
    AssimpTracks::Track t;
    copy_keys(ch->mPositionKeys, ch->mNumPositionKeys, t.position, [](const aiVector3D& v) {
      return Vec3{v.x, v.y, v.z};
    });
    copy_keys(ch->mScalingKeys, ch->mNumScalingKeys, t.scaling, [](const aiVector3D& v) {
      return Vec3{v.x, v.y, v.z};
    });
    copy_keys(ch->mRotationKeys, ch->mNumRotationKeys, t.rotation, [](const aiQuaternion& q) {
      return core::normalize(Quat{q.x, q.y, q.z, q.w});
    });
    auto note = [&](const auto& keys) {
      if (!keys.empty()) stats.note(keys.size(), keys.front().t, keys.back().t);
    };
    note(t.position);
    note(t.rotation);
    note(t.scaling);
    en.track = static_cast<int>(tr.tracks.size());
    tr.tracks.push_back(std::move(t));
  }
  return stats;
}

core::Result<AssimpMotion> build_motion(const aiScene& scene, AssimpFormat format,
                                        const AssimpMotionOptions& o) {
  const AssimpLimits& lim = o.limits;
  if (o.fps && !(std::isfinite(*o.fps) && *o.fps > 0))
    return fail(codes::MOTION_FPS, "the frame rate must be a positive number");
  if (!scene.mRootNode) return fail(codes::MOTION_NO_SKELETON, "the file has no node hierarchy");
  if (scene.mNumAnimations == 0 || !scene.mAnimations)
    return fail(codes::MOTION_NO_ANIMATION, "the file holds no animation");
  std::vector<std::string> names;
  for (unsigned a = 0; a < scene.mNumAnimations; ++a)
    names.push_back(scene.mAnimations[a] ? safe_name(scene.mAnimations[a]->mName) : "");
  auto chosen = detail::choose_animation(names, o.animation);
  if (!chosen) return chosen.error();
  const aiAnimation* anim = scene.mAnimations[*chosen];
  if (!anim) return fail(codes::MOTION_NO_ANIMATION, "the chosen animation is empty");

  auto flat = flatten_nodes(scene, lim.max_nodes);
  if (!flat) return std::move(flat).error();
  const std::vector<FlatNode>& nodes = *flat;
  std::unordered_map<std::string, std::size_t> by_name;
  for (std::size_t i = 0; i < nodes.size(); ++i)
    by_name.emplace(safe_name(nodes[i].node->mName), i);
  auto find = [&](const aiString& name) -> int {
    auto it = by_name.find(safe_name(name));
    return it == by_name.end() ? -1 : static_cast<int>(it->second);
  };

  // Targets: the bones of skinned meshes, else the animated nodes.
  std::vector<char> target(nodes.size(), 0);
  bool any = false;
  if (scene.mMeshes)
    for (unsigned m = 0; m < scene.mNumMeshes; ++m) {
      const aiMesh* mesh = scene.mMeshes[m];
      if (!mesh || !mesh->mBones) continue;
      for (unsigned b = 0; b < mesh->mNumBones; ++b)
        if (mesh->mBones[b])
          if (int i = find(mesh->mBones[b]->mName); i >= 0)
            target[static_cast<std::size_t>(i)] = any = true;
    }
  AssimpMotion out;
  out.skinned = any;
  if (!any && anim->mChannels)
    for (unsigned c = 0; c < anim->mNumChannels; ++c)
      if (anim->mChannels[c])
        if (int i = find(anim->mChannels[c]->mNodeName); i >= 0)
          target[static_cast<std::size_t>(i)] = any = true;
  if (!any)
    return fail(
        codes::MOTION_NO_SKELETON,
        "no skinned mesh bones and no animated node found in the node hierarchy (nothing to move)");

  detail::PreorderForest forest;
  for (const FlatNode& node : nodes) {
    forest.parent.push_back(node.parent);
    forest.end.push_back(node.end);
    forest.has_mesh.push_back(node.node->mNumMeshes > 0 ? 1 : 0);
  }
  const detail::SkeletonNodes picked = detail::pick_skeleton(forest, target);
  const std::size_t lca = picked.lca;
  const std::vector<char>& include = picked.include;

  // The evaluation chain's nodes, with their rest transforms.
  auto tr = std::make_shared<AssimpTracks>();
  std::vector<int> eval_of(nodes.size(), -1);
  std::vector<char> eval_helper;
  for (std::size_t i : picked.chain) {
    AssimpTracks::Node n;
    n.parent = nodes[i].parent >= 0 ? eval_of[static_cast<std::size_t>(nodes[i].parent)] : -1;
    const aiMatrix4x4& m = nodes[i].node->mTransformation;
    n.rest = from_ai(m);
    aiVector3D s, t;
    aiQuaternion r;
    m.Decompose(s, r, t);
    n.rest_t = {t.x, t.y, t.z};
    n.rest_s = {s.x, s.y, s.z};
    n.rest_r = core::normalize(Quat{r.x, r.y, r.z, r.w});
    eval_of[i] = static_cast<int>(tr->nodes.size());
    eval_helper.push_back(is_helper(nodes[i].node->mName) ? 1 : 0);
    tr->nodes.push_back(n);
  }

  // Joints: included nodes that are not `$AssimpFbx$` helpers; a helper's
  // transform stays in the chain, folded into the joint below it.
  std::vector<int> eval_joint(tr->nodes.size(), -1);
  for (std::size_t i = lca; i < nodes[lca].end; ++i) {
    if (!include[i] || is_helper(nodes[i].node->mName)) continue;
    if (out.joints.size() >= lim.max_joints)
      return fail(codes::MOTION_LIMIT,
                  "more than " + std::to_string(lim.max_joints) + " skeleton joints");
    BvhJoint j;
    j.name = safe_name(nodes[i].node->mName);
    int parent_joint = -1;
    Affine rel = tr->nodes[static_cast<std::size_t>(eval_of[i])].rest;
    for (int k = nodes[i].parent; k >= 0 && static_cast<std::size_t>(k) >= lca;
         k = nodes[static_cast<std::size_t>(k)].parent) {
      const auto ku = static_cast<std::size_t>(k);
      if (!include[ku]) break;
      if (!is_helper(nodes[ku].node->mName)) {
        parent_joint = eval_joint[static_cast<std::size_t>(eval_of[ku])];
        break;
      }
      rel = compose(tr->nodes[static_cast<std::size_t>(eval_of[ku])].rest, rel);
    }
    j.parent = parent_joint;
    j.offset = rel.t;
    if (parent_joint < 0) ++out.root_count;
    eval_joint[static_cast<std::size_t>(eval_of[i])] = static_cast<int>(out.joints.size());
    out.joints.push_back(std::move(j));
    tr->joint_node.push_back(static_cast<std::uint32_t>(eval_of[i]));
  }
  if (out.joints.empty()) return fail(codes::MOTION_NO_SKELETON, "the skeleton has no joints");

  // Tracks of the chosen animation on the evaluated nodes.
  const detail::KeyStats stats = read_channels(*anim, find, eval_of, *tr, out.warnings);
  for (std::size_t j = 0; j < out.joints.size(); ++j) {
    // The joint's node or a helper folded into it.
    int k = static_cast<int>(tr->joint_node[j]);
    bool moved = false;
    for (bool first = true; k >= 0 && (first || eval_helper[static_cast<std::size_t>(k)]);
         first = false) {
      moved = moved || tr->nodes[static_cast<std::size_t>(k)].track >= 0;
      k = tr->nodes[static_cast<std::size_t>(k)].parent;
    }
    out.animated_joints += moved ? 1 : 0;
  }

  // Time base, rate and length (docs/motion.md).
  const double tps_in = anim->mTicksPerSecond;
  const bool tps_given = std::isfinite(tps_in) && tps_in > 0;
  tr->ticks_per_second = tps_given ? tps_in : kDefaultFps;
  if (!tps_given)
    out.warnings.push_back(
        {codes::MOTION_TICKS_PER_SECOND, "the animation gives no ticks per second; using 30"});
  const double dur_ticks =
      std::isfinite(anim->mDuration) && anim->mDuration > 0 ? anim->mDuration : stats.max_key;
  if (auto st = detail::set_time_base(out, *tr, tps_given && tps_in >= 1 && tps_in <= 240,
                                      dur_ticks, stats, o);
      !st)
    return std::move(st).error();

  if (o.auto_up) {
    tr->up = up_rotation(scene, format, out.up_axis);
  } else {
    out.up_axis = "as stored (--up given)";
  }
  out.format = format;
  for (unsigned a = 0; a < scene.mNumAnimations; ++a) {
    const aiAnimation* an = scene.mAnimations[a];
    if (!an) continue;
    out.animations.push_back(
        {safe_name(an->mName), an->mDuration, an->mTicksPerSecond, an->mNumChannels});
  }
  out.animation = *chosen;
  out.tracks = std::move(tr);
  return out;
}

// ---- the isolated import's answer --------------------------------------------------
//
// Assimp runs in a child process (core::run_isolated): libassimp 5.2 crashes
// on some malformed files that no check of ours filters out, and a crash
// must end as an error, not take the CLI or a server worker with it. The
// child builds the AssimpMotion and sends it back in this little-endian
// form; the parent checks every count and index as it reads, as for any
// other input.

class Encoder {
 public:
  void u8(std::uint8_t v) { w_.write(v); }
  void u32(std::uint32_t v) { w_.write(v); }
  void u64(std::uint64_t v) { w_.write(v); }
  void f64(double v) { w_.write(std::bit_cast<std::uint64_t>(v)); }
  void i32(int v) { w_.write(static_cast<std::uint32_t>(v)); }
  void str(const std::string& s) {
    u32(static_cast<std::uint32_t>(s.size()));
    w_.write_string(s);
  }
  template <std::size_t N>
  void arr(const std::array<double, N>& a) {
    for (double d : a) f64(d);
  }
  void arr(const core::Quatd& q) {
    f64(q.x);
    f64(q.y);
    f64(q.z);
    f64(q.w);
  }
  std::vector<std::uint8_t> take() && { return std::move(w_).take(); }

 private:
  core::ByteWriter w_;
};

class Decoder {
 public:
  explicit Decoder(core::Bytes b) : r_(b) {}
  bool ok() const { return ok_; }
  bool at_end() const { return r_.at_end(); }
  std::uint8_t u8() {
    std::uint8_t v = 0;
    ok_ = ok_ && r_.read(v);
    return v;
  }
  std::uint32_t u32() {
    std::uint32_t v = 0;
    ok_ = ok_ && r_.read(v);
    return v;
  }
  std::uint64_t u64() {
    std::uint64_t v = 0;
    ok_ = ok_ && r_.read(v);
    return v;
  }
  double f64() { return std::bit_cast<double>(u64()); }
  int i32() { return static_cast<int>(static_cast<std::int32_t>(u32())); }
  std::string str() {
    const std::uint32_t n = u32();
    core::Bytes b;
    ok_ = ok_ && r_.read_bytes(n, b);
    return ok_ ? std::string(core::as_chars(b)) : std::string();
  }
  template <std::size_t N>
  void arr(std::array<double, N>& a) {
    for (double& d : a) d = f64();
  }
  void arr(core::Quatd& q) {
    q.x = f64();
    q.y = f64();
    q.z = f64();
    q.w = f64();
  }
  /// A count of items of at least min_bytes each, checked against what is left.
  std::size_t count(std::size_t min_bytes, std::uint64_t max) {
    const std::uint64_t n = u64();
    if (n > max || n > r_.remaining() / std::max<std::size_t>(min_bytes, 1)) ok_ = false;
    return ok_ ? static_cast<std::size_t>(n) : 0;
  }

 private:
  core::ByteReader r_;
  bool ok_ = true;
};

template <typename V>
void encode_keys(Encoder& e, const std::vector<AssimpTracks::Key<V>>& keys) {
  e.u64(keys.size());
  for (const auto& k : keys) {
    e.f64(k.t);
    e.arr(k.v);
  }
}

template <typename V>
void decode_keys(Decoder& d, std::vector<AssimpTracks::Key<V>>& keys) {
  const std::size_t n = d.count(8 + sizeof(V), ~0ull);  // t, then V's doubles
  keys.resize(n);
  for (auto& k : keys) {
    k.t = d.f64();
    d.arr(k.v);
  }
}

std::vector<std::uint8_t> encode_motion(const AssimpMotion& m) {
  Encoder e;
  e.u8(static_cast<std::uint8_t>(m.format));
  e.u64(m.joints.size());
  for (const BvhJoint& j : m.joints) {
    e.str(j.name);
    e.i32(j.parent);
    e.arr(j.offset);
  }
  e.u64(m.root_count);
  e.u8(m.skinned ? 1 : 0);
  e.u64(m.animations.size());
  for (const auto& a : m.animations) {
    e.str(a.name);
    e.f64(a.duration_ticks);
    e.f64(a.ticks_per_second);
    e.u32(a.channels);
  }
  e.u64(m.animation);
  e.f64(m.duration_seconds);
  e.f64(m.fps);
  e.str(m.fps_source);
  e.u64(m.frames);
  e.str(m.up_axis);
  e.u32(m.animated_joints);
  e.u64(m.warnings.size());
  for (const auto& w : m.warnings) {
    e.str(w.code);
    e.str(w.message);
  }
  const AssimpTracks& t = *m.tracks;
  e.u64(t.nodes.size());
  for (const auto& n : t.nodes) {
    e.i32(n.parent);
    e.arr(n.rest.m);
    e.arr(n.rest.t);
    e.arr(n.rest_t);
    e.arr(n.rest_s);
    e.arr(n.rest_r);
    e.i32(n.track);
  }
  e.u64(t.tracks.size());
  for (const auto& k : t.tracks) {
    encode_keys(e, k.position);
    encode_keys(e, k.rotation);
    encode_keys(e, k.scaling);
  }
  e.u64(t.joint_node.size());
  for (std::uint32_t j : t.joint_node) e.u32(j);
  e.arr(t.up);
  e.f64(t.ticks_per_second);
  return std::move(e).take();
}

core::Result<AssimpMotion> decode_motion(core::Bytes bytes, const AssimpLimits& lim) {
  auto bad = [](const std::string& what) {
    return fail(codes::MOTION_IMPORT_FAILED,
                "the import process sent an inconsistent answer (" + what + ")");
  };
  Decoder d(bytes);
  AssimpMotion m;
  const std::uint8_t format = d.u8();
  if (format > static_cast<std::uint8_t>(AssimpFormat::kUnknown)) return bad("format");
  m.format = static_cast<AssimpFormat>(format);
  m.joints.resize(d.count(4 + 4 + 24, lim.max_joints));
  for (std::size_t i = 0; i < m.joints.size(); ++i) {
    BvhJoint& j = m.joints[i];
    j.name = d.str();
    j.parent = d.i32();
    d.arr(j.offset);
    if (j.parent < -1 || j.parent >= static_cast<int>(i)) return bad("joint parent");
  }
  m.root_count = static_cast<std::size_t>(d.u64());
  m.skinned = d.u8() != 0;
  m.animations.resize(d.count(4 + 8 + 8 + 4, ~0ull));
  for (auto& a : m.animations) {
    a.name = d.str();
    a.duration_ticks = d.f64();
    a.ticks_per_second = d.f64();
    a.channels = d.u32();
  }
  m.animation = static_cast<std::size_t>(d.u64());
  m.duration_seconds = d.f64();
  m.fps = d.f64();
  m.fps_source = d.str();
  m.frames = d.u64();
  m.up_axis = d.str();
  m.animated_joints = d.u32();
  m.warnings.resize(d.count(8, ~0ull));
  for (auto& w : m.warnings) {
    w.code = d.str();
    w.message = d.str();
  }
  auto t = std::make_shared<AssimpTracks>();
  t->nodes.resize(d.count(4 + 9 * 8 + 3 * 8 * 3 + 4 * 8 + 4, lim.max_nodes));
  for (auto& n : t->nodes) {
    n.parent = d.i32();
    d.arr(n.rest.m);
    d.arr(n.rest.t);
    d.arr(n.rest_t);
    d.arr(n.rest_s);
    d.arr(n.rest_r);
    n.track = d.i32();
  }
  t->tracks.resize(d.count(24, t->nodes.size()));
  for (auto& k : t->tracks) {
    decode_keys(d, k.position);
    decode_keys(d, k.rotation);
    decode_keys(d, k.scaling);
  }
  t->joint_node.resize(d.count(4, lim.max_joints));
  for (auto& j : t->joint_node) j = d.u32();
  d.arr(t->up);
  t->ticks_per_second = d.f64();
  if (!d.ok() || !d.at_end()) return bad("length");
  for (std::size_t i = 0; i < t->nodes.size(); ++i) {
    const auto& n = t->nodes[i];
    if (n.parent < -1 || n.parent >= static_cast<int>(i)) return bad("node parent");
    if (n.track < -1 || n.track >= static_cast<int>(t->tracks.size())) return bad("node track");
  }
  if (t->joint_node.size() != m.joints.size()) return bad("joint count");
  for (std::uint32_t j : t->joint_node)
    if (j >= t->nodes.size()) return bad("joint node");
  if (m.animation >= m.animations.size() && !m.animations.empty()) return bad("animation index");
  if (!(m.fps > 0) || !std::isfinite(m.fps) || m.frames > lim.max_frames) return bad("frames");
  m.tracks = std::move(t);
  return m;
}

const char* hint_of(AssimpFormat f) {
  switch (f) {
    case AssimpFormat::kGlb:
      return "glb";
    case AssimpFormat::kGltf:
      return "gltf";
    default:
      return "fbx";
  }
}

// The import proper, run in the child process.
core::Result<AssimpMotion> import_in_process(std::span<const std::uint8_t> bytes,
                                             const std::filesystem::path& dir, AssimpFormat format,
                                             const AssimpMotionOptions& o) {
  try {
    Assimp::Importer importer;
    importer.SetIOHandler(new BoundedIOSystem(dir, o.limits.max_bytes - bytes.size()));
    importer.SetPropertyBool(AI_CONFIG_IMPORT_FBX_READ_MATERIALS, false);
    importer.SetPropertyBool(AI_CONFIG_IMPORT_FBX_READ_TEXTURES, false);
    importer.SetPropertyBool(AI_CONFIG_IMPORT_FBX_READ_CAMERAS, false);
    importer.SetPropertyBool(AI_CONFIG_IMPORT_FBX_READ_LIGHTS, false);
    // No post-processing that changes the hierarchy (no PreTransformVertices,
    // OptimizeGraph); the structure is validated.
    const aiScene* scene = importer.ReadFileFromMemory(
        bytes.data(), bytes.size(), aiProcess_ValidateDataStructure, hint_of(format));
    if (!scene) {
      std::string msg = importer.GetErrorString();
      if (msg.empty()) msg = "unknown reason";
      return fail(codes::MOTION_IMPORT_FAILED, std::string("Assimp cannot read this ") +
                                                   assimp_format_name(format) + " file: " + msg);
    }
    return build_motion(*scene, format, o);
  } catch (const std::bad_alloc&) {
    return fail(codes::MOTION_IMPORT_FAILED, "out of memory while importing");
  } catch (const std::exception& e) {
    return fail(codes::MOTION_IMPORT_FAILED, std::string("Assimp failed: ") + e.what());
  } catch (...) {
    return fail(codes::MOTION_IMPORT_FAILED, "Assimp failed with an unknown exception");
  }
}

}  // namespace

core::Result<AssimpMotion> detail::import_with_assimp(std::span<const std::uint8_t> bytes,
                                                      const std::filesystem::path& dir,
                                                      const AssimpMotionOptions& o) {
  // The GLB container (glTF 2.0 §4.4) is checked before Assimp sees it:
  // Assimp 5.2 allocates and clears a chunk's declared length before
  // comparing it with the file, so a corrupt length would cost gigabytes and
  // minutes.
  auto detected = detail::checked_format(bytes, o.limits);
  if (!detected) return std::move(detected).error();
  const AssimpFormat format = *detected;
  // Assimp 5.2 does not survive every malformed glTF (a fuzzed GLB with
  // ill-formed UTF-8 in its JSON crashed it inside its glTF 2 importer), so
  // glTF and GLB go through our own strict, bounded glTF checks first
  // (scene/intake: JSON, every index and byte range) and reach Assimp only
  // when those hold.
  if (format == AssimpFormat::kGlb || format == AssimpFormat::kGltf)
    if (auto checked = scene::inspect_model(bytes); !checked)
      return fail(codes::MOTION_IMPORT_FAILED, std::string("not a valid ") +
                                                   assimp_format_name(format) +
                                                   " file: " + checked.error().to_string());
  if (!o.isolate) return import_in_process(bytes, dir, format, o);
  // Assimp itself runs in a child process (see the answer's codec above).
  auto answer = core::run_isolated(
      [&]() -> core::Result<std::vector<std::uint8_t>> {
        auto m = import_in_process(bytes, dir, format, o);
        if (!m) return m.error();
        return encode_motion(*m);
      },
      o.isolation, "the Assimp import");
  if (!answer) {
    const core::Error& e = answer.error();
    if (e.code == core::codes::ISOLATED_CANCELLED)
      return fail(codes::MOTION_CANCELLED, "the Assimp import was cancelled");
    if (core::is_isolation_error(e))
      return fail(codes::MOTION_IMPORT_FAILED, std::string("Assimp could not read this ") +
                                                   assimp_format_name(format) +
                                                   " file: " + e.message);
    return e;
  }
  return decode_motion(*answer, o.limits);
}

}  // namespace charkit::motion
