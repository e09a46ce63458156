#include "charkit/deformer/dataset.h"

#include <algorithm>
#include <cmath>

#include "charkit/core/json.h"
#include "charkit/deformer/detail/common.h"
#include "charkit/deformer/error_codes.h"

namespace charkit::deformer {

using core::Json;
using core::make_error;

namespace {

constexpr const char* kFormat = "charkit.dataset";
constexpr std::uint32_t kVersion = 1;

core::Error json_error(std::string msg, std::string pointer) {
  return core::error_at_pointer(codes::DATASET_JSON, std::move(msg), std::move(pointer));
}

const char* layout_name(FeatureLayout l) {
  return l == FeatureLayout::kEngine ? "engine" : "axis_angle";
}

/// Object with exactly the allowed keys (those marked required must be present).
core::Status check_keys(const Json& j, const std::string& ptr,
                        std::initializer_list<std::pair<const char*, bool>> keys) {
  if (!j.is_object()) return json_error("expected an object", ptr);
  for (const auto& [k, v] : j.items()) {
    bool known = false;
    for (const auto& [name, req] : keys) known = known || k == name;
    if (!known) return json_error("unknown key '" + k + "'", core::json_pointer_join(ptr, k));
  }
  for (const auto& [name, req] : keys)
    if (req && !j.contains(name)) return json_error(std::string("missing key '") + name + "'", ptr);
  return core::Ok{};
}

core::Result<std::string> get_string(const Json& j, const std::string& ptr) {
  if (!j.is_string()) return json_error("expected a string", ptr);
  return j.get<std::string>();
}
core::Result<double> get_number(const Json& j, const std::string& ptr) {
  auto v = core::json_finite_number(j);
  if (!v) return json_error("expected a finite number", ptr);
  return *v;
}
core::Result<std::uint32_t> get_count(const Json& j, const std::string& ptr) {
  auto v = core::json_uint32(j);
  if (!v) return json_error("expected an integer 0..4294967295", ptr);
  return *v;
}

}  // namespace

core::Result<InputSpec> parse_input_spec(const core::Json& j, const std::string& ptr) {
  if (auto st = check_keys(j, ptr, {{"bones", true}, {"curves", true}}); !st)
    return std::move(st).error();
  InputSpec spec;
  const Json& bones = j["bones"];
  if (!bones.is_array()) return json_error("expected an array", ptr + "/bones");
  for (std::size_t b = 0; b < bones.size(); ++b) {
    const std::string bp = core::json_pointer_join(ptr + "/bones", b);
    if (auto st = check_keys(bones[b], bp, {{"name", true}, {"axes", true}}); !st)
      return std::move(st).error();
    BoneInput bone;
    auto name = get_string(bones[b]["name"], bp + "/name");
    if (!name) return std::move(name).error();
    bone.name = *name;
    const Json& axes = bones[b]["axes"];
    if (!axes.is_array() || axes.size() != 3)
      return json_error("expected an array of 3 axes (x, y, z)", bp + "/axes");
    for (std::size_t a = 0; a < 3; ++a) {
      const std::string ap = core::json_pointer_join(bp + "/axes", a);
      if (auto st =
              check_keys(axes[a], ap, {{"enabled", true}, {"min_deg", true}, {"max_deg", true}});
          !st)
        return std::move(st).error();
      if (!axes[a]["enabled"].is_boolean())
        return json_error("expected true or false", ap + "/enabled");
      bone.axes[a].enabled = axes[a]["enabled"].get<bool>();
      auto lo = get_number(axes[a]["min_deg"], ap + "/min_deg");
      if (!lo) return std::move(lo).error();
      auto hi = get_number(axes[a]["max_deg"], ap + "/max_deg");
      if (!hi) return std::move(hi).error();
      bone.axes[a].min_deg = *lo;
      bone.axes[a].max_deg = *hi;
    }
    spec.bones.push_back(std::move(bone));
  }
  const Json& curves = j["curves"];
  if (!curves.is_array()) return json_error("expected an array", ptr + "/curves");
  for (std::size_t c = 0; c < curves.size(); ++c) {
    const std::string cp = core::json_pointer_join(ptr + "/curves", c);
    if (auto st = check_keys(curves[c], cp, {{"name", true}, {"min", true}, {"max", true}}); !st)
      return std::move(st).error();
    CurveInput curve;
    auto name = get_string(curves[c]["name"], cp + "/name");
    if (!name) return std::move(name).error();
    auto lo = get_number(curves[c]["min"], cp + "/min");
    if (!lo) return std::move(lo).error();
    auto hi = get_number(curves[c]["max"], cp + "/max");
    if (!hi) return std::move(hi).error();
    curve.name = *name;
    curve.min = *lo;
    curve.max = *hi;
    spec.curves.push_back(std::move(curve));
  }
  if (auto st = validate(spec); !st) {
    core::Error e = std::move(st).error();
    e.location.pointer = ptr + e.location.pointer;
    return e;
  }
  return spec;
}

core::Json input_spec_json(const InputSpec& spec) {
  Json bones = Json::array();
  for (const BoneInput& b : spec.bones) {
    Json axes = Json::array();
    for (const AxisRange& a : b.axes)
      axes.push_back(Json{{"enabled", a.enabled}, {"min_deg", a.min_deg}, {"max_deg", a.max_deg}});
    bones.push_back(Json{{"name", b.name}, {"axes", std::move(axes)}});
  }
  Json curves = Json::array();
  for (const CurveInput& c : spec.curves)
    curves.push_back(Json{{"name", c.name}, {"min", c.min}, {"max", c.max}});
  return Json{{"bones", std::move(bones)}, {"curves", std::move(curves)}};
}

core::Status validate(const Dataset& d) {
  if (auto st = validate(d.spec); !st) return st;
  const std::size_t f = d.feature_count();
  if (d.sample_count != 0 && (f > d.features.max_size() / d.sample_count ||
                              d.vertex_count > d.deltas.max_size() / 3 / d.sample_count))
    return make_error(codes::DATASET_SHAPE, "dataset size overflows");
  if (d.features.size() != d.sample_count * f)
    return make_error(codes::DATASET_SHAPE, "features hold " + std::to_string(d.features.size()) +
                                                " floats; " + std::to_string(d.sample_count) +
                                                " x " + std::to_string(f) + " expected");
  if (d.deltas.size() != d.sample_count * 3 * d.vertex_count)
    return make_error(codes::DATASET_SHAPE, "deltas hold " + std::to_string(d.deltas.size()) +
                                                " floats; " + std::to_string(d.sample_count) +
                                                " x 3 x " + std::to_string(d.vertex_count) +
                                                " expected");
  if (!d.sample_names.empty() && d.sample_names.size() != d.sample_count)
    return make_error(codes::DATASET_SHAPE, "sample_names must be empty or one per sample");
  if (!all_finite(d.features) || !all_finite(d.deltas))
    return make_error(codes::DATASET_NOT_FINITE, "features or deltas hold NaN or infinity");
  return core::Ok{};
}

DatasetBuilder::DatasetBuilder(InputSpec spec, FeatureLayout layout, std::string mesh_name) {
  d_.spec = std::move(spec);
  d_.layout = layout;
  d_.mesh_name = std::move(mesh_name);
}

core::Status DatasetBuilder::add_sample(std::span<const float> features,
                                        std::span<const float> deltas, std::string name) {
  const std::string which = "sample " + std::to_string(d_.sample_count);
  if (features.size() != d_.feature_count())
    return make_error(codes::DATASET_SHAPE, which + ": " + std::to_string(features.size()) +
                                                " features; the input spec gives " +
                                                std::to_string(d_.feature_count()));
  if (deltas.size() % 3 != 0)
    return make_error(codes::DATASET_SHAPE, which + ": " + std::to_string(deltas.size()) +
                                                " delta floats is not 3 per vertex");
  const std::size_t v = deltas.size() / 3;
  if (d_.sample_count > 0 && v != d_.vertex_count)
    return make_error(codes::DATASET_VERTEX_COUNT,
                      which + ": the mesh has " + std::to_string(v) + " vertices, sample 0 had " +
                          std::to_string(d_.vertex_count) +
                          " (something changes the topology between poses)");
  if (!all_finite(features) || !all_finite(deltas))
    return make_error(codes::DATASET_NOT_FINITE, which + ": NaN or infinity");
  if (!name.empty() && d_.sample_names.size() != d_.sample_count)
    return make_error(codes::DATASET_SHAPE, which + ": name every sample or none");
  if (name.empty() && !d_.sample_names.empty())
    return make_error(codes::DATASET_SHAPE, which + ": name every sample or none");
  d_.vertex_count = v;
  d_.features.insert(d_.features.end(), features.begin(), features.end());
  d_.deltas.insert(d_.deltas.end(), deltas.begin(), deltas.end());
  if (!name.empty()) d_.sample_names.push_back(std::move(name));
  ++d_.sample_count;
  return core::Ok{};
}

core::Result<DatasetFiles> encode_dataset(const Dataset& d) {
  if (auto st = validate(d); !st) return std::move(st).error();
  std::vector<NpzMember> members;
  members.push_back(
      {"features", NpyArray::from_f32({d.sample_count, d.feature_count()}, d.features)});
  members.push_back({"deltas", NpyArray::from_f32({d.sample_count, d.vertex_count, 3}, d.deltas)});
  auto npz = write_npz(members);
  if (!npz) return std::move(npz).error();
  Json j;
  j["format"] = kFormat;
  j["version"] = kVersion;
  j["layout"] = layout_name(d.layout);
  j["mesh"] = d.mesh_name;
  j["sample_count"] = d.sample_count;
  j["feature_count"] = d.feature_count();
  j["vertex_count"] = d.vertex_count;
  j["inputs"] = input_spec_json(d.spec);
  j["sample_names"] = d.sample_names;
  return DatasetFiles{std::move(npz).value(), j.dump(2) + "\n"};
}

core::Result<Dataset> decode_dataset(core::Bytes npz, std::string_view json,
                                     const NpyLimits& limits) {
  auto parsed = core::parse_json_strict(json);
  if (!parsed) return std::move(parsed).error();
  const Json& j = *parsed;
  if (auto st = check_keys(j, "",
                           {{"format", true},
                            {"version", true},
                            {"layout", true},
                            {"mesh", false},
                            {"sample_count", true},
                            {"feature_count", true},
                            {"vertex_count", true},
                            {"inputs", true},
                            {"sample_names", false}});
      !st)
    return std::move(st).error();
  if (!j["format"].is_string() || j["format"].get<std::string>() != kFormat)
    return json_error(std::string("format must be \"") + kFormat + "\"", "/format");
  auto version = get_count(j["version"], "/version");
  if (!version) return std::move(version).error();
  if (*version != kVersion)
    return json_error("version " + std::to_string(*version) + " is not supported (1 is)",
                      "/version");
  Dataset d;
  auto layout = get_string(j["layout"], "/layout");
  if (!layout) return std::move(layout).error();
  if (*layout == "axis_angle")
    d.layout = FeatureLayout::kAxisAngle;
  else if (*layout == "engine")
    d.layout = FeatureLayout::kEngine;
  else
    return json_error("layout must be \"axis_angle\" or \"engine\"", "/layout");
  if (j.contains("mesh")) {
    auto mesh = get_string(j["mesh"], "/mesh");
    if (!mesh) return std::move(mesh).error();
    d.mesh_name = *mesh;
  }
  auto n = get_count(j["sample_count"], "/sample_count");
  if (!n) return std::move(n).error();
  auto f = get_count(j["feature_count"], "/feature_count");
  if (!f) return std::move(f).error();
  auto v = get_count(j["vertex_count"], "/vertex_count");
  if (!v) return std::move(v).error();
  auto spec = parse_input_spec(j["inputs"], "/inputs");
  if (!spec) return std::move(spec).error();
  d.spec = std::move(spec).value();
  d.sample_count = *n;
  d.vertex_count = *v;
  if (d.feature_count() != *f)
    return json_error("feature_count " + std::to_string(*f) + " does not match the inputs (" +
                          std::to_string(d.feature_count()) + ")",
                      "/feature_count");
  if (j.contains("sample_names")) {
    const Json& names = j["sample_names"];
    if (!names.is_array()) return json_error("expected an array", "/sample_names");
    if (!names.empty() && names.size() != d.sample_count)
      return json_error("expected one name per sample, or none", "/sample_names");
    for (std::size_t i = 0; i < names.size(); ++i) {
      auto s = get_string(names[i], core::json_pointer_join("/sample_names", i));
      if (!s) return std::move(s).error();
      d.sample_names.push_back(std::move(s).value());
    }
  }

  auto members = read_npz(npz, limits);
  if (!members) return std::move(members).error();
  const auto find = [&](const char* name) -> const NpyArray* {
    for (const NpzMember& m : *members)
      if (m.name == name) return &m.array;
    return nullptr;
  };
  const NpyArray* fa = find("features");
  const NpyArray* da = find("deltas");
  const std::vector<std::uint64_t> fshape{d.sample_count, *f};
  const std::vector<std::uint64_t> dshape{d.sample_count, d.vertex_count, 3};
  if (fa == nullptr || fa->dtype != NpyDType::kF4 || fa->shape != fshape)
    return make_error(codes::DATASET_ARRAY, "features.npy must be float32 of shape (" +
                                                std::to_string(d.sample_count) + ", " +
                                                std::to_string(*f) + ")");
  if (da == nullptr || da->dtype != NpyDType::kF4 || da->shape != dshape)
    return make_error(codes::DATASET_ARRAY, "deltas.npy must be float32 of shape (" +
                                                std::to_string(d.sample_count) + ", " +
                                                std::to_string(d.vertex_count) + ", 3)");
  d.features = fa->to_f32();
  d.deltas = da->to_f32();
  if (auto st = validate(d); !st) return std::move(st).error();
  return d;
}

core::Status save_dataset(const Dataset& dataset, const std::filesystem::path& npz_path) {
  auto files = encode_dataset(dataset);
  if (!files) return std::move(files).error();
  auto json_path = companion_path(npz_path, ".json", true);
  if (!json_path) return std::move(json_path).error();
  if (auto st = write_file_bytes(npz_path, files->npz); !st) return st;
  return write_file_bytes(*json_path, core::as_bytes(files->json));
}

core::Result<Dataset> load_dataset(const std::filesystem::path& npz_path, const NpyLimits& limits) {
  auto json_path = companion_path(npz_path, ".json", false);
  if (!json_path) return std::move(json_path).error();
  auto npz = read_file_bytes(npz_path, limits.max_data_bytes * 2 + (1ULL << 20));
  if (!npz) return std::move(npz).error();
  auto json = read_file_bytes(*json_path, 64ULL << 20);
  if (!json) {
    core::Error e = std::move(json).error();
    e.message += " (the dataset's description, which `deformer sample` writes beside the .npz)";
    return e;
  }
  return decode_dataset(*npz, core::as_chars(*json), limits);
}

}  // namespace charkit::deformer
