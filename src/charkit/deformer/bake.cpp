// Baking pose-model offsets into glTF morph targets, and the pose-library
// JSON (docs/deformer/bake.md). The source file is read through the glTF layer
// and edited with scene::GltfEditor, so every member the bake does not touch
// (materials, textures, animations, extensions, extras) is written back as
// it was read.
#include "charkit/deformer/bake.h"
#include "charkit/deformer/detail/common.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "charkit/core/json.h"
#include "charkit/deformer/error_codes.h"
#include "charkit/scene/gltf_document.h"
#include "charkit/scene/gltf_editor.h"
#include "charkit/scene/intake.h"

namespace charkit::deformer {

using core::Json;
using core::Location;
using core::make_error;

namespace {

constexpr std::uint64_t kMaxGlb = 0xFFFFFFFFull;  // GLB lengths are uint32

std::string dump(const Json& j, int indent = -1) {
  // Replace rather than throw on strings that are not UTF-8 (user pose names).
  return j.dump(indent, ' ', false, Json::error_handler_t::replace);
}

// Euler XYZ (q = qz * qy * qx, pose.h) in degrees (core::euler_xyz_from_quat).
std::array<double, 3> euler_xyz_deg(const Quaternion& in) {
  constexpr double kDeg = 180.0 / 3.14159265358979323846;
  const core::Vec3d e = core::euler_xyz_from_quat(in);
  return {e[0] * kDeg, e[1] * kDeg, e[2] * kDeg};
}

// A SCALAR accessor's values as floats: float, or normalised (u)int8/16 as
// the glTF rules for animation weights say (read by scene::GltfDocument).
core::Result<std::vector<float>> read_scalar_floats(scene::GltfDocument& doc, std::size_t index) {
  const std::string ap = core::json_pointer_join("/accessors", index);
  auto info = doc.accessor(index);
  if (!info) return std::move(info).error();
  if (info->type != "SCALAR")
    return core::error_at_pointer(codes::BAKE_GLTF, "animation weights must be a SCALAR accessor",
                                  ap + "/type");
  if (info->component_type == scene::GltfComponent::kUnsignedInt)
    return core::error_at_pointer(codes::BAKE_GLTF, "unsupported component type for weights",
                                  ap + "/componentType");
  if (info->component_type != scene::GltfComponent::kFloat && !info->normalized)
    return core::error_at_pointer(codes::BAKE_GLTF, "integer weights must be normalized",
                                  ap + "/normalized");
  return doc.read_accessor_floats(index);
}

}  // namespace

// ---- features ------------------------------------------------------------------

core::Status pose_model_features(const PoseModel& model, const scene::Rig& rig, const Pose& pose,
                                 std::span<float> out) {
  if (out.size() != model.feature_count())
    return make_error(codes::FEATURE_SHAPE,
                      "the model takes " + std::to_string(model.feature_count()) +
                          " features, out holds " + std::to_string(out.size()));
  if (model.layout == FeatureLayout::kAxisAngle) return pose_features(model.spec, pose, out);
  std::vector<Quaternion> rest;
  rest.reserve(model.spec.bones.size());
  for (const BoneInput& b : model.spec.bones) {
    const auto j = scene::find_joint(rig, b.name);
    if (!j || *j >= rig.skeleton.local_transforms.size())
      return make_error(codes::TARGETS_BONE,
                        "input bone \"" + b.name + "\" is not a joint of the rig's skeleton");
    rest.push_back(to_q(rig.skeleton.local_transforms[*j].rotation));
  }
  return engine_pose_features(model.spec, pose, rest, out);
}

// ---- pose library ----------------------------------------------------------------

std::string write_pose_library(const InputSpec& spec, std::string_view mesh,
                               std::span<const PoseLibraryEntry> poses,
                               std::span<const std::string> shape_key_names) {
  Json j = Json::object();
  j["format"] = "charkit.pose_library";
  j["version"] = 1;
  j["mesh"] = std::string(mesh);
  Json bones = Json::array(), curves = Json::array();
  for (const BoneInput& b : spec.bones) bones.push_back(b.name);
  for (const CurveInput& c : spec.curves) curves.push_back(c.name);
  j["bones"] = std::move(bones);
  j["curves"] = std::move(curves);
  Json list = Json::array();
  for (std::size_t i = 0; i < poses.size(); ++i) {
    const Pose& pose = poses[i].pose;
    Json p = Json::object();
    p["name"] = poses[i].name;
    if (i < shape_key_names.size()) p["shape_key"] = shape_key_names[i];
    Json rot = Json::object();
    const bool have_euler = pose.euler_deg.size() == 3 * spec.bones.size();
    for (std::size_t b = 0; b < spec.bones.size() && b < pose.rotations.size(); ++b) {
      const Quaternion& q = pose.rotations[b];
      std::array<double, 3> e{};
      if (have_euler)
        e = {pose.euler_deg[3 * b], pose.euler_deg[3 * b + 1], pose.euler_deg[3 * b + 2]};
      else
        e = euler_xyz_deg(q);
      rot[spec.bones[b].name] = {{"quaternion", {q.x, q.y, q.z, q.w}},
                                 {"euler_xyz_deg", {e[0], e[1], e[2]}}};
    }
    p["rotations"] = std::move(rot);
    Json cv = Json::object();
    for (std::size_t c = 0; c < spec.curves.size() && c < pose.curves.size(); ++c)
      cv[spec.curves[c].name] = pose.curves[c];
    p["curves"] = std::move(cv);
    list.push_back(std::move(p));
  }
  j["poses"] = std::move(list);
  return dump(j, 2) + "\n";
}

namespace {

template <std::size_t N>
core::Result<std::array<double, N>> finite_array(const Json& j, const std::string& p) {
  if (!j.is_array() || j.size() != N)
    return core::error_at_pointer(codes::POSE_LIBRARY_JSON,
                                  "expected an array of " + std::to_string(N) + " numbers", p);
  std::array<double, N> out{};
  for (std::size_t i = 0; i < N; ++i) {
    if (!j[i].is_number())
      return core::error_at_pointer(codes::POSE_LIBRARY_JSON, "expected a number", p);
    auto v = core::json_finite_number(j[i]);
    if (!v)
      return core::error_at_pointer(codes::POSE_LIBRARY_VALUE, "not a finite number",
                                    core::json_pointer_join(p, i));
    out[i] = *v;
  }
  return out;
}

core::Status names_in(const Json& root, const char* key, const std::set<std::string>& known,
                      core::ErrorCode code) {
  if (!root.contains(key)) return core::Ok{};
  const std::string p = core::json_pointer_join("", key);
  const Json& arr = root[key];
  if (!arr.is_array())
    return core::error_at_pointer(codes::POSE_LIBRARY_JSON, "expected an array of names", p);
  for (std::size_t i = 0; i < arr.size(); ++i) {
    if (!arr[i].is_string())
      return core::error_at_pointer(codes::POSE_LIBRARY_JSON, "expected a name",
                                    core::json_pointer_join(p, i));
    if (!known.contains(arr[i].get<std::string>()))
      return core::error_at_pointer(
          code, "\"" + arr[i].get<std::string>() + "\" is not in the input spec",
          core::json_pointer_join(p, i));
  }
  return core::Ok{};
}

}  // namespace

core::Result<std::vector<PoseLibraryEntry>> read_pose_library(std::string_view json,
                                                              const InputSpec& spec) {
  auto parsed = core::parse_json_strict(json);
  if (!parsed) return std::move(parsed).error();
  const Json& r = *parsed;
  if (!r.is_object() || r.value("format", Json()) != "charkit.pose_library")
    return core::error_at_pointer(codes::POSE_LIBRARY_FORMAT, "not a charkit pose library",
                                  "/format");
  const auto version = r.contains("version") ? core::json_uint32(r["version"]) : std::nullopt;
  if (!version || *version == 0 || *version > 1)
    return core::error_at_pointer(codes::POSE_LIBRARY_FORMAT,
                                  "unsupported pose library version (this reader knows 1)",
                                  "/version");
  std::map<std::string, std::size_t> bone_index, curve_index;
  std::set<std::string> bone_names, curve_names;
  for (std::size_t b = 0; b < spec.bones.size(); ++b) {
    bone_index.emplace(spec.bones[b].name, b);
    bone_names.insert(spec.bones[b].name);
  }
  for (std::size_t c = 0; c < spec.curves.size(); ++c) {
    curve_index.emplace(spec.curves[c].name, c);
    curve_names.insert(spec.curves[c].name);
  }
  if (auto st = names_in(r, "bones", bone_names, codes::POSE_LIBRARY_BONE); !st)
    return std::move(st).error();
  if (auto st = names_in(r, "curves", curve_names, codes::POSE_LIBRARY_CURVE); !st)
    return std::move(st).error();
  if (!r.contains("poses") || !r["poses"].is_array())
    return core::error_at_pointer(codes::POSE_LIBRARY_JSON, "\"poses\" must be an array", "/poses");
  const Json& list = r["poses"];
  std::vector<PoseLibraryEntry> out;
  out.reserve(list.size());
  std::set<std::string> seen;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string pp = core::json_pointer_join("/poses", i);
    const Json& pj = list[i];
    if (!pj.is_object())
      return core::error_at_pointer(codes::POSE_LIBRARY_JSON, "a pose must be an object", pp);
    if (!pj.contains("name") || !pj["name"].is_string())
      return core::error_at_pointer(codes::POSE_LIBRARY_JSON, "a pose needs a \"name\" string",
                                    pp + "/name");
    PoseLibraryEntry e;
    e.name = pj["name"].get<std::string>();
    if (e.name.empty())
      return core::error_at_pointer(codes::POSE_LIBRARY_NAME, "empty pose name", pp + "/name");
    if (!seen.insert(e.name).second)
      return core::error_at_pointer(codes::POSE_LIBRARY_NAME,
                                    "pose name \"" + e.name + "\" used twice", pp + "/name");
    if (pj.contains("shape_key") && !pj["shape_key"].is_string())
      return core::error_at_pointer(codes::POSE_LIBRARY_JSON, "\"shape_key\" must be a string",
                                    pp + "/shape_key");
    e.pose = rest_pose(spec);
    if (pj.contains("rotations")) {
      const Json& rot = pj["rotations"];
      const std::string rp = pp + "/rotations";
      if (!rot.is_object())
        return core::error_at_pointer(codes::POSE_LIBRARY_JSON, "\"rotations\" must be an object",
                                      rp);
      for (const auto& [name, val] : rot.items()) {
        const std::string bp = core::json_pointer_join(rp, name);
        auto it = bone_index.find(name);
        if (it == bone_index.end())
          return core::error_at_pointer(codes::POSE_LIBRARY_BONE,
                                        "bone \"" + name + "\" is not in the input spec", bp);
        const std::size_t b = it->second;
        if (!val.is_object() || (!val.contains("quaternion") && !val.contains("euler_xyz_deg")))
          return core::error_at_pointer(codes::POSE_LIBRARY_JSON,
                                        "a rotation needs \"quaternion\" or \"euler_xyz_deg\"", bp);
        std::optional<std::array<double, 3>> euler;
        if (val.contains("euler_xyz_deg")) {
          auto ea = finite_array<3>(val["euler_xyz_deg"], bp + "/euler_xyz_deg");
          if (!ea) return std::move(ea).error();
          euler = *ea;
        }
        Quaternion q;
        if (val.contains("quaternion")) {
          auto qa = finite_array<4>(val["quaternion"], bp + "/quaternion");
          if (!qa) return std::move(qa).error();
          q = {(*qa)[0], (*qa)[1], (*qa)[2], (*qa)[3]};
          const double n2 = q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w;
          if (!(n2 > 1e-24) || !std::isfinite(n2))
            return core::error_at_pointer(codes::POSE_LIBRARY_VALUE, "zero quaternion",
                                          bp + "/quaternion");
          // Unit quaternions (to 1e-9) are kept exactly as written.
          if (std::abs(n2 - 1.0) > 1e-9) {
            const double n = std::sqrt(n2);
            q = {q.x / n, q.y / n, q.z / n, q.w / n};
          }
        } else {
          q = quaternion_from_euler_xyz_degrees((*euler)[0], (*euler)[1], (*euler)[2]);
        }
        if (!euler) euler = euler_xyz_deg(q);
        e.pose.rotations[b] = q;
        for (std::size_t k = 0; k < 3; ++k) e.pose.euler_deg[3 * b + k] = (*euler)[k];
      }
    }
    if (pj.contains("curves")) {
      const Json& cv = pj["curves"];
      const std::string cp = pp + "/curves";
      if (!cv.is_object())
        return core::error_at_pointer(codes::POSE_LIBRARY_JSON, "\"curves\" must be an object", cp);
      for (const auto& [name, val] : cv.items()) {
        const std::string vp = core::json_pointer_join(cp, name);
        auto it = curve_index.find(name);
        if (it == curve_index.end())
          return core::error_at_pointer(codes::POSE_LIBRARY_CURVE,
                                        "curve \"" + name + "\" is not in the input spec", vp);
        if (!val.is_number())
          return core::error_at_pointer(codes::POSE_LIBRARY_JSON, "a curve value must be a number",
                                        vp);
        auto v = core::json_finite_number(val);
        if (!v) return core::error_at_pointer(codes::POSE_LIBRARY_VALUE, "not a finite number", vp);
        e.pose.curves[it->second] = *v;
      }
    }
    out.push_back(std::move(e));
  }
  return out;
}

// ---- bake ------------------------------------------------------------------------

namespace {

// The "weights" animations of the mesh's nodes: each group of old_targets values
// (a keyframe, or a cubic spline's in-tangent / value / out-tangent) gets
// a 0 for every new target, in a new output accessor.
core::Status extend_weight_animations(scene::GltfDocument& src, scene::GltfEditor& editor,
                                      const std::vector<std::size_t>& mesh_nodes,
                                      std::size_t old_targets, std::size_t added) {
  const scene::GltfAsset& asset = src.asset();
  for (std::size_t a = 0; a < asset.animations.size(); ++a) {
    const scene::GltfAnimation& anim = asset.animations[a];
    std::set<std::size_t> samplers;
    for (const scene::GltfChannel& ch : anim.channels)
      if (ch.path == scene::GltfPath::kWeights && ch.node &&
          std::find(mesh_nodes.begin(), mesh_nodes.end(), *ch.node) != mesh_nodes.end())
        samplers.insert(ch.sampler);
    for (std::size_t s : samplers) {
      const scene::GltfAnimationSampler& sampler = anim.samplers[s];
      auto values = read_scalar_floats(src, sampler.output);
      if (!values) return std::move(values).error();
      if (old_targets == 0 || values->size() % old_targets != 0)
        return core::error_at_pointer(codes::BAKE_GLTF,
                                      "weights output does not hold whole groups of targets",
                                      sampler.pointer + "/output");
      const std::size_t groups = values->size() / old_targets;
      const std::size_t count = groups * (old_targets + added);
      if (editor.buffer_size() + 4 * count > kMaxGlb - 4096)
        return make_error(codes::BAKE_TOO_LARGE, "the baked buffer would exceed 4 GiB");
      std::vector<float> out;
      out.reserve(count);
      for (std::size_t g = 0; g < groups; ++g) {
        out.insert(out.end(), values->begin() + static_cast<std::ptrdiff_t>(g * old_targets),
                   values->begin() + static_cast<std::ptrdiff_t>((g + 1) * old_targets));
        out.insert(out.end(), added, 0.0F);
      }
      editor.set_sampler_output(a, s,
                                editor.append_floats(out, 1, false, scene::GltfViewUse::kOther));
    }
  }
  return core::Ok{};
}

}  // namespace

core::Result<BakeResult> bake_shape_keys(core::Bytes source_gltf, const scene::Rig& rig,
                                         const PoseModel& model,
                                         std::span<const PoseLibraryEntry> poses,
                                         const BakeOptions& o) {
  // 1. The model, the rig and the poses.
  if (auto st = validate(model); !st) return std::move(st).error();
  if (model.vertex_count != rig.vertex_count())
    return make_error(codes::BAKE_VERTEX_COUNT,
                      "the model has " + std::to_string(model.vertex_count) +
                          " vertices, the rig " + std::to_string(rig.vertex_count()));
  // The shape keys stand for rotations of the model's bones: the rig must have them
  // (whatever the feature layout).
  for (const BoneInput& bone : model.spec.bones)
    if (!scene::find_joint(rig, bone.name))
      return make_error(codes::TARGETS_BONE,
                        "input bone \"" + bone.name + "\" is not a joint of the rig's skeleton");
  if (poses.empty()) return make_error(codes::BAKE_EMPTY, "no poses to bake");
  if (!std::isfinite(o.epsilon) || o.epsilon < 0)
    return make_error(codes::BAKE_OPTIONS, "epsilon must be finite and >= 0");
  BakeResult result;
  {
    std::set<std::string> seen;
    for (std::size_t i = 0; i < poses.size(); ++i) {
      if (poses[i].name.empty())
        return make_error(codes::BAKE_POSE_NAME, "pose " + std::to_string(i) + " has no name");
      if (!seen.insert(poses[i].name).second)
        return make_error(codes::BAKE_POSE_NAME, "pose name \"" + poses[i].name + "\" used twice");
      result.shape_keys.push_back(o.prefix + poses[i].name);
    }
  }

  // 2. The source file: checked by model intake and loaded in the same pass.
  auto source = scene::inspect_and_load_model(source_gltf);
  if (!source) return std::move(source).error();
  if (!source->document)
    return make_error(codes::BAKE_GLTF, "the source must be a GLB or a glTF JSON file");
  scene::GltfDocument& src = *source->document;
  const scene::GltfAsset& asset = src.asset();

  // 3. The rig's mesh, its primitives and their vertex ranges.
  const std::string mp = core::json_pointer_join("/meshes", rig.mesh_index);
  if (rig.mesh_index >= asset.meshes.size())
    return core::error_at_pointer(codes::BAKE_RIG_MISMATCH,
                                  "the file has no mesh " + std::to_string(rig.mesh_index), mp);
  if (rig.node_index >= asset.nodes.size() || asset.nodes[rig.node_index].mesh != rig.mesh_index)
    return core::error_at_pointer(codes::BAKE_RIG_MISMATCH,
                                  "the rig's node does not use the rig's mesh",
                                  core::json_pointer_join("/nodes", rig.node_index));
  const scene::GltfMesh& mesh = asset.meshes[rig.mesh_index];
  const std::size_t prims = mesh.primitives.size();
  std::vector<std::size_t> prim_count, prim_first;
  std::size_t total = 0;
  for (const scene::GltfPrimitive& prim : mesh.primitives) {
    const auto pos = prim.attributes.find("POSITION");
    if (!pos)
      return core::error_at_pointer(codes::BAKE_GLTF, "primitive without a valid POSITION",
                                    prim.pointer + "/attributes");
    const std::uint64_t count = asset.accessors[*pos].count;
    if (count == 0)
      return core::error_at_pointer(codes::BAKE_GLTF, "POSITION accessor without vertices",
                                    asset.accessors[*pos].pointer);
    prim_first.push_back(total);
    prim_count.push_back(static_cast<std::size_t>(count));
    total += static_cast<std::size_t>(count);
  }
  if (total != rig.vertex_count() ||
      (!rig.primitive_vertex_offsets.empty() && rig.primitive_vertex_offsets != prim_first))
    return core::error_at_pointer(codes::BAKE_RIG_MISMATCH,
                                  "the mesh's primitives hold " + std::to_string(total) +
                                      " vertices, the rig " + std::to_string(rig.vertex_count()),
                                  mp + "/primitives");
  // Every primitive has the same number of targets (checked by the glTF layer).
  const std::size_t old_targets = mesh.target_count();

  // 4. Target names: mesh.extras.targetNames, filled with the rig's
  // "target_<i>" names where absent, then the new ones.
  std::vector<std::string> names = mesh.target_names;
  names.resize(std::min(names.size(), old_targets));
  while (names.size() < old_targets) names.push_back("target_" + std::to_string(names.size()));
  for (const std::string& key : result.shape_keys)
    if (std::find(names.begin(), names.end(), key) != names.end())
      return make_error(codes::BAKE_NAME_CLASH, "the mesh already has a shape key \"" + key + "\"");
  for (const std::string& key : result.shape_keys) names.push_back(key);

  // 5. Buffer 0 receives the new data (created when the file has no buffer).
  auto edit =
      scene::GltfEditor::begin(src, codes::BAKE_GLTF, scene::GltfEditor::OtherBuffers::kKeep);
  if (!edit) return std::move(edit).error();
  scene::GltfEditor& editor = *edit;
  const std::size_t v3 = 3 * rig.vertex_count();
  const std::uint64_t new_bytes = static_cast<std::uint64_t>(poses.size()) * v3 * 4;
  if (new_bytes > kMaxGlb || editor.buffer_size() + new_bytes > kMaxGlb - 4096)
    return make_error(codes::BAKE_TOO_LARGE, "the baked buffer would exceed 4 GiB");

  // 6. Offsets per pose: one POSITION target accessor per pose and primitive.
  // The poses run through the model in batches (each row has the same bits
  // as a pose run alone: deformer/batch.md), at most 64 and 16 MiB of offsets.
  PoseModelEvaluator ev(model);
  const std::size_t fc = model.feature_count();
  const std::size_t batch =
      std::clamp<std::size_t>((std::size_t{16} << 20) / (std::max<std::size_t>(v3, 1) * 4), 1, 64);
  std::vector<float> features(batch * fc), offsets(batch * v3);
  for (std::size_t first = 0; first < poses.size(); first += batch) {
    const std::size_t rows = std::min(batch, poses.size() - first);
    for (std::size_t r = 0; r < rows; ++r)
      if (auto st = pose_model_features(model, rig, poses[first + r].pose,
                                        std::span(features).subspan(r * fc, fc));
          !st)
        return std::move(st).error();
    if (!ev.offsets(std::span<const float>(features).first(rows * fc), rows,
                    std::span(offsets).first(rows * v3)))
      return make_error(codes::MODEL_SHAPE,
                        "the model cannot run on pose \"" + poses[first].name + "\"");
    for (float& d : std::span(offsets).first(rows * v3))
      if (std::abs(d) <= o.epsilon) d = 0.0F;  // also turns -0 into +0
    for (std::size_t r = 0; r < rows; ++r) {
      const std::span<const float> pose_offsets = std::span(offsets).subspan(r * v3, v3);
      for (std::size_t p = 0; p < prims; ++p) {
        scene::GltfAttributes target;
        target.items.push_back(
            {"POSITION", editor.append_floats(
                             pose_offsets.subspan(3 * prim_first[p], 3 * prim_count[p]), 3, true)});
        editor.add_target(rig.mesh_index, p, target);
      }
    }
  }
  editor.set_target_names(rig.mesh_index, names);

  // 7. Default weights of the mesh and of the nodes that use it: new targets at 0.
  const auto extended = [&](std::vector<double> w) {
    w.resize(old_targets + poses.size(), 0.0);
    return w;
  };
  if (!mesh.weights.empty()) editor.set_mesh_weights(rig.mesh_index, extended(mesh.weights));
  const std::vector<std::size_t> mesh_nodes = asset.nodes_of_mesh(rig.mesh_index);
  for (std::size_t n : mesh_nodes) {
    const std::vector<double>& w = asset.nodes[n].weights;
    if (w.empty()) continue;
    if (w.size() != old_targets)
      return core::error_at_pointer(codes::BAKE_GLTF, "weights do not match the morph target count",
                                    asset.nodes[n].pointer + "/weights");
    editor.set_node_weights(n, extended(w));
  }

  // 8. "weights" animations of those nodes: zeros for the new targets.
  if (auto st = extend_weight_animations(src, editor, mesh_nodes, old_targets, poses.size()); !st)
    return std::move(st).error();

  // 9. Write the file.
  result.pose_library_json =
      write_pose_library(model.spec, rig.mesh_name, poses, result.shape_keys);
  if (!o.glb) {
    const std::string text = editor.finish_gltf_embedded();
    result.gltf.assign(text.begin(), text.end());
    return result;
  }
  auto glb = editor.finish_glb();
  if (!glb) return make_error(codes::BAKE_TOO_LARGE, "the GLB would exceed 4 GiB");
  result.gltf = std::move(*glb);
  return result;
}

}  // namespace charkit::deformer
