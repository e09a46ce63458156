// `.nmn` export (docs/deformer/nmn.md): a model trained in the engine's
// layout written as it is (export_model_nmn), or a dataset retrained the
// engine's way (export_nmn: train_pose_model on an engine-layout copy of the
// dataset, ELU after every layer, the averaged input std) and then written
// the same way.
#include "charkit/deformer/nmn_export.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <utility>

#include "charkit/core/json.h"
#include "charkit/deformer/detail/prng.h"
#include "charkit/deformer/error_codes.h"
#include "charkit/deformer/npy.h"

namespace charkit::deformer {

using core::make_error;

namespace {

core::Error dataset_error(std::string msg) {
  return make_error(codes::NMN_EXPORT_DATASET, std::move(msg));
}

}  // namespace

core::Result<std::vector<float>> engine_features_of(const scene::Rig& rig, const Dataset& d) {
  if (auto st = validate(d); !st) return dataset_error(st.error().to_string());
  std::vector<Quaternion> rest_local;
  for (const BoneInput& b : d.spec.bones) {
    const auto j = scene::find_joint(rig, b.name);
    if (!j || *j >= rig.skeleton.local_transforms.size())
      return make_error(codes::NMN_EXPORT_SPEC,
                        "input bone \"" + b.name + "\" is not a joint of the rig's skeleton");
    rest_local.push_back(core::quat_from_xyzw<double>(rig.skeleton.local_transforms[*j].rotation));
  }
  if (d.layout == FeatureLayout::kEngine) return d.features;
  const std::size_t bones = d.spec.bones.size(), curves = d.spec.curves.size();
  const std::size_t f = d.feature_count(), fe = d.spec.engine_feature_count();
  std::vector<float> out(d.sample_count * fe);
  Pose pose;
  pose.rotations.resize(bones);
  pose.curves.resize(curves);
  for (std::size_t r = 0; r < d.sample_count; ++r) {
    const float* row = d.features.data() + r * f;
    for (std::size_t b = 0; b < bones; ++b)
      pose.rotations[b] =
          core::quat_from_rotation_vector(core::Vec3d{row[3 * b], row[3 * b + 1], row[3 * b + 2]});
    for (std::size_t c = 0; c < curves; ++c) pose.curves[c] = row[3 * bones + c];
    if (auto st = engine_pose_features(d.spec, pose, rest_local,
                                       std::span<float>(out.data() + r * fe, fe));
        !st)
      return std::move(st).error();
  }
  return out;
}

void engine_input_normalisation(std::span<const float> x, std::size_t rows, std::size_t bones,
                                std::size_t curves, std::vector<float>& mean,
                                std::vector<float>& std) {
  const std::size_t f = 6 * bones + curves;
  std::vector<double> m(f, 0.0), sd(f, 0.0);
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t j = 0; j < f; ++j) m[j] += x[r * f + j];
  for (double& v : m) v /= static_cast<double>(std::max<std::size_t>(rows, 1));
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t j = 0; j < f; ++j) {
      const double e = x[r * f + j] - m[j];
      sd[j] += e * e;
    }
  for (double& v : sd) v = std::sqrt(v / static_cast<double>(std::max<std::size_t>(rows, 1)));
  // One averaged value per group, as the engine's training scripts do.
  auto average = [&](std::size_t begin, std::size_t end) {
    double s = 0.0;
    for (std::size_t j = begin; j < end; ++j) s += sd[j];
    return end > begin ? s / static_cast<double>(end - begin) : 0.0;
  };
  const double bone_std = average(0, 6 * bones) + 1e-5;
  const double curve_std = average(6 * bones, f) + 1e-5;
  mean.resize(f);
  std.resize(f);
  for (std::size_t j = 0; j < f; ++j) {
    mean[j] = static_cast<float>(m[j]);
    std[j] = static_cast<float>(j < 6 * bones ? bone_std : curve_std);
  }
}

core::Result<NmnExport> export_nmn(const scene::Rig& rig, const Dataset& d,
                                   const NmnExportOptions& o) {
  auto opt = [](std::string msg) { return make_error(codes::NMN_EXPORT_OPTIONS, std::move(msg)); };
  if (o.morphs == 0) return opt("the basis needs at least one morph");
  if (o.iterations == 0 || o.batch_size == 0) return opt("iterations and batch size must be > 0");
  if (std::find(o.hidden.begin(), o.hidden.end(), std::size_t{0}) != o.hidden.end())
    return opt("hidden layer widths must be > 0");
  if (!(o.learning_rate > 0.0) || !std::isfinite(o.learning_rate))
    return opt("the learning rate must be a positive number");
  if (o.runtime_name.find('\0') != std::string::npos)
    return opt("the runtime name holds a NUL byte");
  if (auto st = validate(d); !st) return dataset_error(st.error().to_string());
  if (d.sample_count < 2) return dataset_error("the export needs at least 2 samples");
  if (d.vertex_count != rig.vertex_count())
    return dataset_error("the dataset has " + std::to_string(d.vertex_count) +
                         " vertices, the rig's mesh " + std::to_string(rig.vertex_count()));

  auto x = engine_features_of(rig, d);
  if (!x) return std::move(x).error();
  const std::size_t bones = d.spec.bones.size(), curves = d.spec.curves.size();
  const std::size_t n = d.sample_count;

  Dataset ed;
  ed.spec = d.spec;
  ed.layout = FeatureLayout::kEngine;
  ed.mesh_name = d.mesh_name;
  ed.sample_count = n;
  ed.vertex_count = d.vertex_count;
  ed.features = std::move(*x);
  ed.deltas = d.deltas;
  ed.sample_names = d.sample_names;

  PoseModelOptions po;
  po.kind = ModelKind::kNeural;
  po.basis = NeuralBasis::kLearned;
  po.basis_size = std::min(o.morphs, n - 1);
  po.clamp = WeightClamp::kTrainingRange;
  po.holdout = 0.0;  // the engine trains on every sample
  po.mlp.hidden = o.hidden;
  po.mlp.hidden_activation = Activation::kELU;
  po.mlp.output_activation = Activation::kELU;  // Linear+ELU on every layer
  po.mlp.adam.learning_rate = o.learning_rate;
  po.mlp.iterations = o.iterations;
  po.mlp.batch_size = o.batch_size;
  po.mlp.seed = o.seed;
  po.mlp.progress = o.progress;
  engine_input_normalisation(ed.features, n, bones, curves, po.mlp.fixed_input_mean,
                             po.mlp.fixed_input_std);
  auto model = train_pose_model(ed, po);
  if (!model) {
    core::Error e = std::move(model).error();
    if (e.code == codes::MODEL_DATASET) e.code = codes::NMN_EXPORT_DATASET;
    return e;
  }
  (*model->hyper)["export"] = "nmn";
  (*model->hyper)["runtime_name"] = o.runtime_name;
  (*model->hyper)["input_std"] = "engine-averaged";
  // Trained with the targets' ranges recorded; the file runs unclamped, so
  // the model does too, and the ranges go into the sidecar.
  std::vector<std::array<float, 2>> ranges;
  for (std::size_t k = 0; k < model->weight_min.size() && k < model->weight_max.size(); ++k)
    ranges.push_back({model->weight_min[k], model->weight_max[k]});
  model->clamp = WeightClamp::kNone;
  model->weight_min.clear();
  model->weight_max.clear();
  (*model->hyper)["clamp"] = clamp_name(WeightClamp::kNone);
  auto out = export_model_nmn(*model, ed.features, o.runtime_name);
  if (!out) return std::move(out).error();
  if (ranges.size() == out->network.output_count()) out->sidecar.output_ranges = std::move(ranges);
  return out;
}

std::string nmn_export_refusal(const PoseModel& m) {
  if (m.kind != ModelKind::kNeural) return "it is a linear model, and the engine runs a network";
  if (m.layout != FeatureLayout::kEngine)
    return "its inputs are in the axis-angle layout; the engine feeds 6 floats per bone (train "
           "it on an engine-layout dataset)";
  if (m.basis != NeuralBasis::kLearned || !m.fixed_first_morph)
    return "its outputs weigh morph targets it was given; an exported network drives a learned "
           "basis whose morph 0 is the mean delta";
  if (m.clamp != WeightClamp::kNone)
    return std::string("it clamps its weights (") + clamp_name(m.clamp) +
           "), which an .nmn cannot record: train it with clamp none";
  return {};
}

core::Status check_nmn_exportable(const PoseModel& m) {
  if (std::string why = nmn_export_refusal(m); !why.empty())
    return make_error(codes::NMN_EXPORT_MODEL,
                      "the model cannot be written to an .nmn as it is: " + why);
  // Also guarantees what the export relies on: layers, one mean and std per
  // input, as many inputs as the spec gives.
  return validate(m);
}

namespace {

/// The file's activation layer after a dense layer, if any.
std::optional<NmnLayerType> nmn_activation(Activation a) {
  switch (a) {
    case Activation::kELU:
      return NmnLayerType::kElu;
    case Activation::kReLU:
      return NmnLayerType::kRelu;
    case Activation::kTanh:
      return NmnLayerType::kTanh;
    case Activation::kIdentity:
      break;
  }
  return std::nullopt;
}

/// 64 rows around the model's input mean (± 2 std, uniform), seeded: what a
/// network is checked on when no dataset is at hand.
std::vector<float> rows_around_mean(const Mlp& mlp) {
  constexpr std::size_t kRows = 64;
  const std::size_t f = mlp.input_count();
  std::vector<float> rows(kRows * f);
  Rng rng(777);
  for (std::size_t r = 0; r < kRows; ++r)
    for (std::size_t j = 0; j < f; ++j)
      rows[r * f + j] =
          static_cast<float>(mlp.input_mean[j] + mlp.input_std[j] * rng.uniform(-2.0, 2.0));
  return rows;
}

}  // namespace

core::Result<NmnExport> export_model_nmn(const PoseModel& m, std::span<const float> check_rows,
                                         std::string_view runtime_name) {
  if (auto st = check_nmn_exportable(m); !st) return std::move(st).error();
  if (runtime_name.find('\0') != std::string_view::npos)
    return make_error(codes::NMN_EXPORT_OPTIONS, "the runtime name holds a NUL byte");
  const Mlp& mlp = m.mlp;
  const std::size_t f = mlp.input_count(), outputs = mlp.output_count();
  std::vector<float> generated;
  if (check_rows.empty()) {
    generated = rows_around_mean(mlp);
    check_rows = generated;
  }
  if (check_rows.size() % f != 0)
    return dataset_error("the check rows hold " + std::to_string(check_rows.size()) +
                         " floats, not a whole number of " + std::to_string(f) + "-float rows");
  const std::size_t n = check_rows.size() / f;

  NmnExport out;
  NmnNetwork& net = out.network;
  net.mode = NmnMode::kGlobal;
  net.num_morphs = static_cast<std::uint32_t>(outputs);
  net.num_morphs_per_bone = 0;
  net.num_bones = static_cast<std::uint32_t>(m.spec.bones.size());
  net.num_curves = static_cast<std::uint32_t>(m.spec.curves.size());
  net.num_floats_per_curve = 1;
  net.input_mean = mlp.input_mean;  // identity (0, 1) for a network trained without
  net.input_std = mlp.input_std;    // standardisation
  net.runtime_name = std::string(runtime_name);
  net.main.input_size = static_cast<std::uint32_t>(f);
  net.main.output_size = static_cast<std::uint32_t>(outputs);
  net.main.root.type = NmnLayerType::kSequence;
  net.main.root.in = net.main.input_size;  // a Sequence's sizes, as read_nmn records them
  net.main.root.out = net.main.output_size;
  for (std::size_t i = 0; i < mlp.layers.size(); ++i) {
    const DenseLayer& l = mlp.layers[i];
    NmnLayer lin;
    lin.type = NmnLayerType::kLinear;
    lin.in = static_cast<std::uint32_t>(l.inputs);
    lin.out = static_cast<std::uint32_t>(l.outputs);
    lin.weights = l.weights;  // both [in][out] row-major
    lin.biases = l.biases;
    net.main.root.children.push_back(std::move(lin));
    const bool last = i + 1 == mlp.layers.size();
    if (auto act = nmn_activation(last ? mlp.output_activation : mlp.hidden_activation)) {
      NmnLayer a;
      a.type = *act;
      a.in = a.out = static_cast<std::uint32_t>(l.outputs);
      net.main.root.children.push_back(std::move(a));
    }
  }

  // Write, read back, run the file's network against the model's.
  auto bytes = write_nmn(net);
  if (!bytes) return std::move(bytes).error();
  auto back = read_nmn(*bytes);
  if (!back) return std::move(back).error();
  if (!(*back == net))
    return make_error(codes::NMN_EXPORT_MISMATCH, "the written network reads back differently");
  auto runner = NmnRunner::create(*back);
  if (!runner) return std::move(runner).error();
  MlpEvaluator ev(mlp);
  std::vector<float> a(outputs), b(outputs);
  std::vector<float> lo(outputs, std::numeric_limits<float>::infinity());
  std::vector<float> hi(outputs, -std::numeric_limits<float>::infinity());
  double worst = 0.0;
  for (std::size_t r = 0; r < n; ++r) {
    const std::span<const float> row = check_rows.subspan(r * f, f);
    if (!ev.evaluate(row, a))
      return make_error(codes::NMN_EXPORT_MISMATCH, "the model's network cannot run on its inputs");
    runner->run(row, b);
    for (std::size_t k = 0; k < outputs; ++k) {
      worst = std::max(worst, std::abs(static_cast<double>(a[k]) - b[k]));
      lo[k] = std::min(lo[k], a[k]);
      hi[k] = std::max(hi[k], a[k]);
    }
  }
  out.reimport_max_abs_diff = worst;
  if (!(worst <= kNmnExportTolerance))
    return make_error(codes::NMN_EXPORT_MISMATCH,
                      "the re-read network differs from the model's by " + std::to_string(worst) +
                          " (tolerance 1e-5)");

  out.sidecar.mode = NmnMode::kGlobal;
  for (const BoneInput& bi : m.spec.bones) out.sidecar.bones.push_back(bi.name);
  for (const CurveInput& ci : m.spec.curves) out.sidecar.curves.push_back(ci.name);
  out.sidecar.morph_targets = m.morph_names;
  // The outputs weigh a learned basis (mean delta + principal components):
  // an import must not clamp them to [0, 1].
  out.sidecar.outputs = NmnOutputs::kBasisCoefficients;
  // Per output, the range an import checks the network against (a damaged
  // file gives outputs far outside).
  if (m.weight_min.size() == outputs && m.weight_max.size() == outputs)
    for (std::size_t k = 0; k < outputs; ++k)
      out.sidecar.output_ranges.push_back({m.weight_min[k], m.weight_max[k]});
  else if (n > 0)
    for (std::size_t k = 0; k < outputs; ++k) out.sidecar.output_ranges.push_back({lo[k], hi[k]});
  if (auto st = check_nmn_sidecar(out.sidecar, out.network); !st) return std::move(st).error();
  out.model = m;
  return out;
}

std::filesystem::path nmn_morphs_path(const std::filesystem::path& nmn_path) {
  std::filesystem::path p = nmn_path;
  p.replace_extension(".morphs.npz");
  return p;
}

core::Status save_nmn_export(const NmnExport& e, const std::filesystem::path& nmn_path) {
  const std::size_t m = e.model.morph_count(), v = e.model.vertex_count;
  if (m == 0 || e.model.morphs.size() != m * 3 * v || e.network.num_morphs + 1 != m)
    return make_error(codes::NMN_EXPORT_SHAPE,
                      "the export's morphs do not match its network (" + std::to_string(m) +
                          " morphs, " + std::to_string(e.network.num_morphs) + " outputs)");
  std::string joined;
  for (std::size_t k = 0; k < m; ++k) {
    const std::string& name = e.model.morph_names[k];
    if (name.find('\n') != std::string::npos)
      return make_error(codes::NMN_EXPORT_SHAPE, "morph name \"" + name + "\" holds a line break");
    if (k) joined += '\n';
    joined += name;
  }
  auto bytes = write_nmn(e.network);
  if (!bytes) return std::move(bytes).error();
  NmnSidecar sidecar = e.sidecar;
  sidecar.model = nmn_path.filename().string();
  std::vector<NpzMember> members;
  members.push_back({"morphs", NpyArray::from_f32({m, v, 3}, e.model.morphs)});
  const std::vector<std::uint8_t> name_bytes(joined.begin(), joined.end());
  members.push_back({"names", NpyArray::from_u8({name_bytes.size()}, name_bytes)});
  auto npz = write_npz(members);
  if (!npz) return std::move(npz).error();
  if (auto st = write_file_bytes(nmn_path, *bytes); !st) return st;
  const std::string side = write_nmn_sidecar(sidecar);
  if (auto st = write_file_bytes(
          nmn_sidecar_path(nmn_path.string()),
          std::span(reinterpret_cast<const std::uint8_t*>(side.data()), side.size()));
      !st)
    return st;
  return write_file_bytes(nmn_morphs_path(nmn_path), *npz);
}

core::Result<std::vector<scene::RigMorphTarget>> read_nmn_morphs(core::Bytes npz,
                                                                 std::size_t vertex_count) {
  // At most 1024 morphs of this mesh (RigOptions' morph-target limit): a
  // crafted archive cannot make the reader inflate more than that.
  NpyLimits limits;
  limits.max_data_bytes = std::min<std::uint64_t>(
      limits.max_data_bytes, std::uint64_t{1024} * 12 * std::max<std::size_t>(vertex_count, 1));
  limits.max_members = 16;
  auto members = read_npz(npz, limits);
  if (!members) return std::move(members).error();
  const NpyArray* morphs = nullptr;
  const NpyArray* names = nullptr;
  for (const NpzMember& m : *members) {
    if (m.name == "morphs") morphs = &m.array;
    if (m.name == "names") names = &m.array;
  }
  if (!morphs || !names)
    return make_error(codes::IMPORT_MORPHS, std::string("the morphs archive has no \"") +
                                                (morphs ? "names" : "morphs") + "\" array");
  if (morphs->dtype != NpyDType::kF4 || morphs->shape.size() != 3 || morphs->shape[2] != 3)
    return make_error(codes::IMPORT_MORPHS,
                      "\"morphs\" must be float32 of shape (morphs, vertices, 3)");
  if (morphs->shape[1] != vertex_count)
    return make_error(codes::IMPORT_MORPHS,
                      "the morphs are for " + std::to_string(morphs->shape[1]) +
                          " vertices; the mesh has " + std::to_string(vertex_count));
  if (names->dtype != NpyDType::kU1 || names->shape.size() != 1)
    return make_error(codes::IMPORT_MORPHS, "\"names\" must be a 1-D uint8 array");
  std::vector<std::string> list;
  {
    const std::string joined(names->data.begin(), names->data.end());
    std::size_t start = 0;
    while (true) {
      const std::size_t nl = joined.find('\n', start);
      list.push_back(joined.substr(start, nl == std::string::npos ? nl : nl - start));
      if (nl == std::string::npos) break;
      start = nl + 1;
    }
  }
  const std::uint64_t k = morphs->shape[0];
  if (list.size() != k)
    return make_error(codes::IMPORT_MORPHS, "the archive names " + std::to_string(list.size()) +
                                                " morphs and holds " + std::to_string(k));
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (list[i].empty())
      return make_error(codes::IMPORT_MORPHS, "morph " + std::to_string(i) + " has an empty name");
    for (std::size_t j = 0; j < i; ++j)
      if (list[j] == list[i])
        return make_error(codes::IMPORT_MORPHS, "morph name \"" + list[i] + "\" is given twice");
  }
  const std::vector<float> values = morphs->to_f32();
  const std::size_t width = 3 * vertex_count;
  std::vector<scene::RigMorphTarget> out(list.size());
  for (std::size_t i = 0; i < list.size(); ++i) {
    out[i].name = std::move(list[i]);
    out[i].position_deltas.assign(values.begin() + static_cast<std::ptrdiff_t>(i * width),
                                  values.begin() + static_cast<std::ptrdiff_t>((i + 1) * width));
    for (float v : out[i].position_deltas)
      if (!std::isfinite(v))
        return make_error(codes::IMPORT_MORPHS,
                          "morph \"" + out[i].name + "\" holds a non-finite delta");
  }
  return out;
}

std::size_t add_morph_targets(scene::Rig& rig, std::vector<scene::RigMorphTarget> targets) {
  std::size_t replaced = 0;
  for (scene::RigMorphTarget& t : targets) {
    auto it = std::find_if(rig.morph_targets.begin(), rig.morph_targets.end(),
                           [&](const scene::RigMorphTarget& r) { return r.name == t.name; });
    if (it != rig.morph_targets.end()) {
      it->position_deltas = std::move(t.position_deltas);
      ++replaced;
    } else {
      rig.morph_targets.push_back(std::move(t));
    }
  }
  return replaced;
}

}  // namespace charkit::deformer
