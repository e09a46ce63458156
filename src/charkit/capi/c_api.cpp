// The C API (charkit/capi/c_api.h): library, errors, input specs, poses and
// features, rigs and datasets. Models, the engine bridge, BEM and motion are
// in c_api_model.cpp. docs/c_api.md.
#include "charkit/capi/c_api.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "charkit/capi/detail.h"
#include "charkit/capi/error_codes.h"
#include "charkit/core/error_codes.h"
#include "charkit/core/json.h"
#include "charkit/core/math.h"
#include "charkit/deform/skinning.h"
#include "charkit/deformer/pc2.h"
#include "charkit/deformer/targets.h"
#include "charkit/version.h"

namespace charkit::capi {

namespace {
thread_local std::string t_code;
thread_local std::string t_message;
thread_local std::string t_location;
}  // namespace

void clear_error() {
  t_code.clear();
  t_message.clear();
  t_location.clear();
}

charkit_status fail(const core::Error& e) {
  t_code = e.code;
  t_message = e.message;
  t_location = e.location.to_string();
  if (core::is_io_error(e)) return CHARKIT_IO_ERROR;
  if (e.code == capi::codes::CAPI_ARGUMENT) return CHARKIT_BAD_ARGUMENT;
  if (e.code == capi::codes::CAPI_CANCELLED) return CHARKIT_CANCELLED;
  if (e.code == capi::codes::CAPI_INTERNAL) return CHARKIT_INTERNAL;
  return CHARKIT_INVALID_INPUT;
}

charkit_status bad_argument(std::string message) {
  return fail(core::make_error(capi::codes::CAPI_ARGUMENT, std::move(message)));
}

char* dup_string(const std::string& s) {
  auto* p = static_cast<char*>(std::malloc(s.size() + 1));
  if (!p) throw std::bad_alloc();
  std::memcpy(p, s.data(), s.size());
  p[s.size()] = '\0';
  return p;
}

bool layout_ok(int layout) {
  return layout == CHARKIT_LAYOUT_AXIS_ANGLE || layout == CHARKIT_LAYOUT_ENGINE;
}

deformer::FeatureLayout layout_of(int layout) {
  return layout == CHARKIT_LAYOUT_ENGINE ? deformer::FeatureLayout::kEngine
                                         : deformer::FeatureLayout::kAxisAngle;
}

namespace {

deformer::Quaternion quat_at(const double* q) {
  return deformer::Quaternion{q[0], q[1], q[2], q[3]};
}

bool finite_all(const float* p, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    if (!std::isfinite(p[i])) return false;
  return true;
}

// Sizes the caller gives, multiplied without overflow into a float count
// that stays addressable.
bool product(std::uint64_t a, std::uint64_t b, std::uint64_t& out) {
  if (a != 0 && b > std::numeric_limits<std::uint64_t>::max() / a) return false;
  out = a * b;
  return out <= (std::uint64_t{1} << 40);
}

}  // namespace

charkit_status poses_from(const deformer::InputSpec& spec, const double* rotations,
                          const double* curves, std::uint64_t count,
                          std::vector<deformer::Pose>& out) {
  const std::size_t bones = spec.bones.size();
  const std::size_t ncurves = spec.curves.size();
  if (count > 0 && bones > 0 && !rotations) return bad_argument("rotations is NULL");
  if (count > 0 && ncurves > 0 && !curves) return bad_argument("curves is NULL");
  out.clear();
  out.reserve(count);
  for (std::uint64_t i = 0; i < count; ++i) {
    deformer::Pose p;
    for (std::size_t b = 0; b < bones; ++b) {
      const double* q = rotations + (i * bones + b) * 4;
      const double n = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
      if (!std::isfinite(n) || n < 1e-12)
        return fail(core::make_error(capi::codes::CAPI_ARGUMENT,
                                     "pose " + std::to_string(i) + ", bone \"" +
                                         spec.bones[b].name +
                                         "\": the rotation is not a finite non-zero quaternion"));
      deformer::Quaternion r = quat_at(q);
      // Unit quaternions are taken as given (bit-equal features to the
      // CLI's); others are normalised.
      if (std::abs(n - 1.0) > 1e-9) {
        r.x /= n;
        r.y /= n;
        r.z /= n;
        r.w /= n;
      }
      p.rotations.push_back(r);
    }
    for (std::size_t c = 0; c < ncurves; ++c) {
      const double v = curves[i * ncurves + c];
      if (!std::isfinite(v))
        return fail(core::make_error(capi::codes::CAPI_ARGUMENT,
                                     "pose " + std::to_string(i) + ", curve \"" +
                                         spec.curves[c].name + "\": the value is not finite"));
      p.curves.push_back(v);
    }
    out.push_back(std::move(p));
  }
  return CHARKIT_OK;
}

}  // namespace charkit::capi

using namespace charkit;
using capi::bad_argument;
using capi::fail;
using capi::guarded;

extern "C" {

int charkit_c_api_version(void) {
  return CHARKIT_C_API_VERSION;
}

const char* charkit_version(void) {
  return CHARKIT_VERSION_STRING;
}

const char* charkit_last_error_code(void) {
  return capi::t_code.c_str();
}
const char* charkit_last_error_message(void) {
  return capi::t_message.c_str();
}
const char* charkit_last_error_location(void) {
  return capi::t_location.c_str();
}

void charkit_free(void* p) {
  std::free(p);
}

// ---- input spec ------------------------------------------------------------

charkit_status charkit_spec_from_json(const char* json, charkit_spec** out) {
  return guarded([&] {
    if (!json || !out) return bad_argument("json or out is NULL");
    *out = nullptr;
    auto j = core::parse_json_strict(json);
    if (!j) return fail(j.error());
    auto spec = deformer::parse_input_spec(*j, "");
    if (!spec) return fail(spec.error());
    if (auto st = deformer::validate(*spec); !st) return fail(st.error());
    *out = new charkit_spec{std::move(*spec)};
    return CHARKIT_OK;
  });
}

void charkit_spec_free(charkit_spec* spec) {
  delete spec;
}

charkit_status charkit_spec_to_json(const charkit_spec* spec, char** out_json) {
  return guarded([&] {
    if (!spec || !out_json) return bad_argument("spec or out_json is NULL");
    *out_json = capi::dup_string(deformer::input_spec_json(spec->spec).dump());
    return CHARKIT_OK;
  });
}

uint64_t charkit_spec_bone_count(const charkit_spec* spec) {
  return spec ? spec->spec.bones.size() : 0;
}

uint64_t charkit_spec_curve_count(const charkit_spec* spec) {
  return spec ? spec->spec.curves.size() : 0;
}

uint64_t charkit_spec_feature_count(const charkit_spec* spec, int layout) {
  if (!spec || !capi::layout_ok(layout)) return 0;
  return layout == CHARKIT_LAYOUT_ENGINE ? spec->spec.engine_feature_count()
                                         : spec->spec.feature_count();
}

charkit_status charkit_sample_poses(const charkit_spec* spec, uint64_t random_poses, uint64_t seed,
                                    double* rotations, double* euler_deg, double* curves) {
  return guarded([&] {
    if (!spec) return bad_argument("spec is NULL");
    const auto& s = spec->spec;
    if (!s.bones.empty() && !rotations) return bad_argument("rotations is NULL");
    deformer::SampleOptions o;
    o.random_poses = random_poses;
    o.seed = seed;
    auto poses = deformer::sample_poses(s, o);
    if (!poses) return fail(poses.error());
    const std::size_t nb = s.bones.size();
    const std::size_t nc = s.curves.size();
    for (std::size_t i = 0; i < poses->size(); ++i) {
      const deformer::Pose& p = (*poses)[i];
      for (std::size_t b = 0; b < nb; ++b) {
        const auto& q = p.rotations[b];
        double* r = rotations + (i * nb + b) * 4;
        r[0] = q.x;
        r[1] = q.y;
        r[2] = q.z;
        r[3] = q.w;
        if (euler_deg)
          for (std::size_t k = 0; k < 3; ++k)
            euler_deg[(i * nb + b) * 3 + k] =
                p.euler_deg.size() == 3 * nb ? p.euler_deg[b * 3 + k] : 0.0;
      }
      if (curves)
        for (std::size_t c = 0; c < nc; ++c) curves[i * nc + c] = p.curves[c];
    }
    return CHARKIT_OK;
  });
}

charkit_status charkit_pose_features(const charkit_spec* spec, int layout, const double* rotations,
                                     const double* curves, const double* rest_local, uint64_t poses,
                                     float* out) {
  return guarded([&] {
    if (!spec || !out) return bad_argument("spec or out is NULL");
    if (!capi::layout_ok(layout)) return bad_argument("unknown layout " + std::to_string(layout));
    const auto& s = spec->spec;
    std::vector<deformer::Pose> ps;
    if (auto st = capi::poses_from(s, rotations, curves, poses, ps); st != CHARKIT_OK) return st;
    std::vector<deformer::Quaternion> rest;
    if (rest_local)
      for (std::size_t b = 0; b < s.bones.size(); ++b)
        rest.push_back(capi::quat_at(rest_local + b * 4));
    const std::size_t f =
        layout == CHARKIT_LAYOUT_ENGINE ? s.engine_feature_count() : s.feature_count();
    for (std::size_t i = 0; i < ps.size(); ++i) {
      std::span<float> row(out + i * f, f);
      auto st = layout == CHARKIT_LAYOUT_ENGINE
                    ? deformer::engine_pose_features(s, ps[i], rest, row)
                    : deformer::pose_features(s, ps[i], row);
      if (!st) return fail(st.error());
    }
    return CHARKIT_OK;
  });
}

// ---- rigs --------------------------------------------------------------------

charkit_status charkit_rig_create(const char* mesh_name, uint64_t joint_count,
                                  const char* const* joint_names, const int32_t* parents,
                                  const float* rest_trs, const float* inverse_bind,
                                  uint64_t vertex_count, const float* positions,
                                  const uint32_t* joints, const float* weights,
                                  uint64_t triangle_count, const uint32_t* triangles,
                                  charkit_rig** out) {
  return guarded([&] {
    if (!out) return bad_argument("out is NULL");
    *out = nullptr;
    if (joint_count == 0 || !joint_names || !parents || !rest_trs)
      return bad_argument("a rig needs joints: joint_names, parents and rest_trs");
    if (vertex_count == 0 || !positions || !joints || !weights)
      return bad_argument("a rig needs vertices: positions, joints and weights");
    if (triangle_count > 0 && !triangles) return bad_argument("triangles is NULL");
    std::uint64_t n = 0;
    if (!capi::product(vertex_count, 4, n) || !capi::product(triangle_count, 3, n) ||
        joint_count > (std::uint64_t{1} << 20))
      return bad_argument("the rig is too large");
    scene::Rig rig;
    rig.mesh_name = mesh_name ? mesh_name : "";
    auto& sk = rig.skeleton;
    for (std::uint64_t j = 0; j < joint_count; ++j) {
      if (!joint_names[j]) return bad_argument("joint_names[" + std::to_string(j) + "] is NULL");
      sk.joint_names.emplace_back(joint_names[j]);
      if (parents[j] < -1 || (parents[j] >= 0 && static_cast<std::uint64_t>(parents[j]) >= j))
        return bad_argument("joint " + std::to_string(j) + " (\"" + sk.joint_names.back() +
                            "\"): its parent must be an earlier joint or -1");
      sk.parents.push_back(parents[j]);
      const float* t = rest_trs + j * 10;
      if (!capi::finite_all(t, 10))
        return bad_argument("joint " + std::to_string(j) + ": rest transform not finite");
      scene::Transform tr;
      tr.translation = {t[0], t[1], t[2]};
      tr.rotation = {t[3], t[4], t[5], t[6]};
      tr.scale = {t[7], t[8], t[9]};
      sk.local_transforms.push_back(tr);
    }
    std::vector<std::string> sorted = sk.joint_names;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
      return bad_argument("two joints have the same name");
    rig.joint_parent_offsets.assign(joint_count, scene::kIdentity4);
    for (std::uint64_t j = 0; j < joint_count; ++j) rig.joint_nodes.push_back(j);
    if (inverse_bind) {
      if (!capi::finite_all(inverse_bind, joint_count * 16))
        return bad_argument("inverse_bind is not finite");
      for (std::uint64_t j = 0; j < joint_count; ++j) {
        scene::Mat4 m{};
        std::copy_n(inverse_bind + j * 16, 16, m.begin());
        sk.inverse_bind_matrices.push_back(m);
      }
    } else {
      auto world = scene::joint_world_matrices(rig, sk.local_transforms);
      if (!world) return fail(world.error());
      for (const scene::Mat4& w : *world) {
        core::Mat4<double> d{};
        for (std::size_t k = 0; k < 16; ++k) d[k] = w[k];
        const core::Mat4<double> inv = core::inverse(d);
        scene::Mat4 f{};
        for (std::size_t k = 0; k < 16; ++k) f[k] = static_cast<float>(inv[k]);
        if (!capi::finite_all(f.data(), 16))
          return bad_argument("a joint's rest world matrix has no inverse");
        sk.inverse_bind_matrices.push_back(f);
      }
    }
    if (!capi::finite_all(positions, vertex_count * 3)) return bad_argument("positions not finite");
    rig.positions.assign(positions, positions + vertex_count * 3);
    rig.joints.assign(joints, joints + vertex_count * 4);
    rig.weights.assign(weights, weights + vertex_count * 4);
    if (triangles) {
      rig.triangles.assign(triangles, triangles + triangle_count * 3);
      for (std::uint32_t v : rig.triangles)
        if (v >= vertex_count) return bad_argument("a triangle names a vertex past the mesh");
    }
    rig.primitive_vertex_offsets = {0};
    const deform::SkinView skin{rig.positions, rig.joints, rig.weights};
    if (auto st = skin.validate(joint_count); !st) return fail(st.error());
    *out = new charkit_rig{std::move(rig)};
    return CHARKIT_OK;
  });
}

charkit_status charkit_rig_load(const char* path, const char* mesh, charkit_rig** out) {
  return guarded([&] {
    if (!path || !out) return bad_argument("path or out is NULL");
    *out = nullptr;
    scene::RigOptions o;
    if (mesh) o.mesh_name = mesh;
    auto rig = scene::load_rig_file(path, o);
    if (!rig) return fail(rig.error());
    *out = new charkit_rig{std::move(*rig)};
    return CHARKIT_OK;
  });
}

void charkit_rig_free(charkit_rig* rig) {
  delete rig;
}

charkit_status charkit_rig_add_morph(charkit_rig* rig, const char* name, const float* deltas) {
  return guarded([&] {
    if (!rig || !name || !deltas) return bad_argument("rig, name or deltas is NULL");
    if (!*name) return bad_argument("a morph target needs a name");
    const std::size_t n = rig->rig.positions.size();
    if (!capi::finite_all(deltas, n)) return bad_argument("morph deltas not finite");
    std::vector<scene::RigMorphTarget> t(1);
    t[0].name = name;
    t[0].position_deltas.assign(deltas, deltas + n);
    // Replace a target of that name, else append (deformer's add_morph_targets rule).
    auto& targets = rig->rig.morph_targets;
    auto it = std::find_if(targets.begin(), targets.end(),
                           [&](const scene::RigMorphTarget& m) { return m.name == t[0].name; });
    if (it != targets.end())
      *it = std::move(t[0]);
    else
      targets.push_back(std::move(t[0]));
    return CHARKIT_OK;
  });
}

charkit_status charkit_rig_info_json(const charkit_rig* rig, char** out_json) {
  return guarded([&] {
    if (!rig || !out_json) return bad_argument("rig or out_json is NULL");
    const scene::Rig& r = rig->rig;
    core::Json morphs = core::Json::array();
    for (const auto& m : r.morph_targets) morphs.push_back(m.name);
    core::Json j{{"mesh", r.mesh_name},
                 {"vertices", r.vertex_count()},
                 {"triangles", r.triangles.size() / 3},
                 {"joints", r.skeleton.joint_names},
                 {"parents", r.skeleton.parents},
                 {"morphs", morphs}};
    *out_json = capi::dup_string(j.dump());
    return CHARKIT_OK;
  });
}

charkit_status charkit_rig_positions(const charkit_rig* rig, float* out, uint64_t count) {
  return guarded([&] {
    if (!rig || !out) return bad_argument("rig or out is NULL");
    if (count != rig->rig.positions.size())
      return bad_argument("out holds " + std::to_string(count) + " floats, the rig has " +
                          std::to_string(rig->rig.positions.size()));
    std::copy(rig->rig.positions.begin(), rig->rig.positions.end(), out);
    return CHARKIT_OK;
  });
}

charkit_status charkit_rig_skin(const charkit_rig* rig, const charkit_spec* spec,
                                const double* rotations, const float* offsets, float* out) {
  return guarded([&] {
    if (!rig || !spec || !out) return bad_argument("rig, spec or out is NULL");
    const scene::Rig& r = rig->rig;
    std::vector<deformer::Pose> ps;
    std::vector<double> zero_curves(spec->spec.curves.size(), 0.0);
    if (auto st = capi::poses_from(spec->spec, rotations, zero_curves.data(), 1, ps);
        st != CHARKIT_OK)
      return st;
    auto locals = deformer::pose_locals(r, spec->spec, ps[0]);
    if (!locals) return fail(locals.error());
    auto mats = scene::skinning_matrices(r, *locals);
    if (!mats) return fail(mats.error());
    std::vector<float> base = r.positions;
    if (offsets)
      for (std::size_t k = 0; k < base.size(); ++k) base[k] += offsets[k];
    const deform::SkinView skin{base, r.joints, r.weights};
    std::span<float> o(out, base.size());
    const deform::SkinJob lbs{skin, r.skeleton.joint_count(), *mats, o};
    if (auto st = lbs.validate(); !st) return fail(st.error());
    if (auto st = lbs.run(); !st) return fail(st.error());
    return CHARKIT_OK;
  });
}

// ---- datasets ----------------------------------------------------------------

charkit_status charkit_dataset_create(const charkit_spec* spec, int layout, const char* mesh_name,
                                      uint64_t samples, uint64_t vertex_count,
                                      const float* features, const float* deltas,
                                      charkit_dataset** out) {
  return guarded([&] {
    if (!spec || !out || !features || !deltas)
      return bad_argument("spec, features, deltas or out is NULL");
    *out = nullptr;
    if (!capi::layout_ok(layout)) return bad_argument("unknown layout " + std::to_string(layout));
    std::uint64_t nd = 0;
    if (!capi::product(samples, vertex_count * 3, nd))
      return bad_argument("the dataset is too large");
    deformer::DatasetBuilder b(spec->spec, capi::layout_of(layout), mesh_name ? mesh_name : "");
    const std::size_t f = layout == CHARKIT_LAYOUT_ENGINE ? spec->spec.engine_feature_count()
                                                          : spec->spec.feature_count();
    for (std::uint64_t i = 0; i < samples; ++i) {
      auto st =
          b.add_sample(std::span<const float>(features + i * f, f),
                       std::span<const float>(deltas + i * vertex_count * 3, vertex_count * 3),
                       "pose_" + std::to_string(i));
      if (!st) return fail(st.error());
    }
    auto d = std::move(b).take();
    if (auto st = deformer::validate(d); !st) return fail(st.error());
    *out = new charkit_dataset{std::move(d)};
    return CHARKIT_OK;
  });
}

charkit_status charkit_dataset_from_positions(const charkit_rig* rig, const charkit_spec* spec,
                                              int layout, uint64_t poses, const double* rotations,
                                              const double* curves, const float* positions,
                                              double* lbs_error, charkit_dataset** out) {
  return guarded([&] {
    if (!rig || !spec || !positions || !out)
      return bad_argument("rig, spec, positions or out is NULL");
    *out = nullptr;
    if (!capi::layout_ok(layout)) return bad_argument("unknown layout " + std::to_string(layout));
    std::vector<deformer::Pose> ps;
    if (auto st = capi::poses_from(spec->spec, rotations, curves, poses, ps); st != CHARKIT_OK)
      return st;
    const std::size_t v = rig->rig.vertex_count();
    std::uint64_t n = 0;
    if (!capi::product(poses, v * 3, n)) return bad_argument("too many positions");
    deformer::PointCache cache;
    cache.point_count = v;
    cache.sample_count = poses;
    cache.positions.assign(positions, positions + n);
    if (!capi::finite_all(cache.positions.data(), n))
      return bad_argument("a target position is not finite (NaN or infinite)");
    auto built = deformer::build_targets_from_cache(rig->rig, spec->spec, ps, cache,
                                                    capi::layout_of(layout));
    if (!built) return fail(built.error());
    if (lbs_error) {
      lbs_error[0] = built->lbs.mean_error;
      lbs_error[1] = built->lbs.max_error;
    }
    *out = new charkit_dataset{std::move(built->dataset)};
    return CHARKIT_OK;
  });
}

charkit_status charkit_dataset_load(const char* npz_path, charkit_dataset** out) {
  return guarded([&] {
    if (!npz_path || !out) return bad_argument("npz_path or out is NULL");
    *out = nullptr;
    auto d = deformer::load_dataset(npz_path);
    if (!d) return fail(d.error());
    *out = new charkit_dataset{std::move(*d)};
    return CHARKIT_OK;
  });
}

charkit_status charkit_dataset_save(const charkit_dataset* dataset, const char* npz_path) {
  return guarded([&] {
    if (!dataset || !npz_path) return bad_argument("dataset or npz_path is NULL");
    if (auto st = deformer::save_dataset(dataset->d, npz_path); !st) return fail(st.error());
    return CHARKIT_OK;
  });
}

void charkit_dataset_free(charkit_dataset* dataset) {
  delete dataset;
}

charkit_status charkit_dataset_shape(const charkit_dataset* dataset, uint64_t* samples,
                                     uint64_t* features, uint64_t* vertices, int* layout) {
  return guarded([&] {
    if (!dataset) return bad_argument("dataset is NULL");
    const auto& d = dataset->d;
    if (samples) *samples = d.sample_count;
    if (features) *features = d.feature_count();
    if (vertices) *vertices = d.vertex_count;
    if (layout)
      *layout = d.layout == deformer::FeatureLayout::kEngine ? CHARKIT_LAYOUT_ENGINE
                                                             : CHARKIT_LAYOUT_AXIS_ANGLE;
    return CHARKIT_OK;
  });
}

namespace {
charkit_status copy_out(const std::vector<float>& from, float* out, uint64_t count,
                        const char* what) {
  if (!out) return bad_argument("out is NULL");
  if (count != from.size())
    return bad_argument(std::string(what) + ": out holds " + std::to_string(count) +
                        " floats, needs " + std::to_string(from.size()));
  std::copy(from.begin(), from.end(), out);
  return CHARKIT_OK;
}
}  // namespace

charkit_status charkit_dataset_features(const charkit_dataset* dataset, float* out,
                                        uint64_t count) {
  return guarded([&] {
    if (!dataset) return bad_argument("dataset is NULL");
    return copy_out(dataset->d.features, out, count, "features");
  });
}

charkit_status charkit_dataset_deltas(const charkit_dataset* dataset, float* out, uint64_t count) {
  return guarded([&] {
    if (!dataset) return bad_argument("dataset is NULL");
    return copy_out(dataset->d.deltas, out, count, "deltas");
  });
}

charkit_status charkit_dataset_spec(const charkit_dataset* dataset, charkit_spec** out) {
  return guarded([&] {
    if (!dataset || !out) return bad_argument("dataset or out is NULL");
    *out = new charkit_spec{dataset->d.spec};
    return CHARKIT_OK;
  });
}

}  // extern "C"
