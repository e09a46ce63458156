// Engine networks as pose models (docs/deformer/nmn.md, "Import as a pose
// model"). Both file kinds are reduced to one list of steps — dense layers
// and activations in order — which must form an MLP: Linear (act Linear)*
// (act)?, with one activation kind between the layers.
#include "charkit/deformer/engine_import.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "charkit/core/json.h"
#include "charkit/deformer/deformer_file.h"
#include "charkit/deformer/detail/engine_steps.h"
#include "charkit/deformer/error_codes.h"
#include "charkit/deformer/onnx.h"

namespace charkit::deformer {

using core::make_error;

namespace {

using detail::EngineStep;
using Step = detail::EngineStep;
using detail::unsupported;

// Steps -> Mlp (identity normalisation).
core::Result<Mlp> chain_to_mlp(const std::vector<Step>& steps) {
  Mlp m;
  bool gap_seen = false;  // an activation kind between layers was decided
  Activation between = Activation::kIdentity;
  std::size_t i = 0;
  while (i < steps.size()) {
    if (!steps[i].dense)
      return unsupported(steps[i].label + " comes before any dense layer: not an MLP chain");
    if (!m.layers.empty() && m.layers.back().outputs != steps[i].layer.inputs)
      return unsupported(steps[i].label + " takes " + std::to_string(steps[i].layer.inputs) +
                         " inputs; the layer before gives " +
                         std::to_string(m.layers.back().outputs));
    m.layers.push_back(steps[i].layer);
    ++i;
    Activation act = Activation::kIdentity;
    if (i < steps.size() && !steps[i].dense) {
      act = steps[i].act;
      ++i;
      if (i < steps.size() && !steps[i].dense)
        return unsupported(steps[i].label + " follows another activation: not an MLP chain");
    }
    if (i == steps.size()) {
      m.output_activation = act;
    } else if (!gap_seen) {
      between = act;
      gap_seen = true;
    } else if (act != between) {
      return unsupported("the layers before " + steps[i].label +
                         " are joined by a different activation than the earlier ones");
    }
  }
  if (m.layers.empty()) return unsupported("the network has no dense layer");
  m.hidden_activation = between;
  m.input_mean.assign(m.input_count(), 0.0F);
  m.input_std.assign(m.input_count(), 1.0F);
  return m;
}

// ---- .nmn -----------------------------------------------------------------------

core::Status nmn_steps(const NmnLayer& l, std::vector<Step>& steps, std::string path) {
  const std::string label = "layer " + path + " (" +
                            std::string(nmn_layer_name(static_cast<std::uint32_t>(l.type))) + ")";
  Step s;
  s.label = label;
  switch (l.type) {
    case NmnLayerType::kSequence:
      for (std::size_t c = 0; c < l.children.size(); ++c)
        if (auto st = nmn_steps(l.children[c], steps, path + "." + std::to_string(c)); !st)
          return st;
      return core::Ok{};
    case NmnLayerType::kCopy:
      return core::Ok{};
    case NmnLayerType::kLinear:
      s.dense = true;
      s.layer = {l.in, l.out, l.weights, l.biases};
      break;
    case NmnLayerType::kCompressedLinear:
      s.dense = true;
      s.layer.inputs = l.in;
      s.layer.outputs = l.out;
      s.layer.biases = l.biases;
      s.layer.weights.resize(static_cast<std::size_t>(l.in) * l.out);
      for (std::size_t i = 0; i < l.in; ++i)
        for (std::size_t o = 0; o < l.out; ++o)
          s.layer.weights[i * l.out + o] =
              static_cast<float>(l.qweights[i * l.out + o]) * l.scales[i] + l.offsets[i];
      break;
    case NmnLayerType::kMultiLinear: {
      // Block-diagonal: block b maps inputs [b*rows, (b+1)*rows) to outputs
      // [b*cols, (b+1)*cols) by its rows x cols matrix; as one dense layer
      // with zeros outside the blocks (x*0 adds nothing to a sum).
      const std::uint64_t dense = std::uint64_t{l.in} * l.out;
      if (dense > (std::uint64_t{1} << 26))
        return unsupported(label + " is too large to run as one dense layer (" +
                           std::to_string(l.in) + " x " + std::to_string(l.out) + ")");
      s.dense = true;
      s.layer.inputs = l.in;
      s.layer.outputs = l.out;
      s.layer.biases = l.biases;
      s.layer.weights.assign(static_cast<std::size_t>(dense), 0.0F);
      for (std::size_t b = 0; b < l.blocks; ++b)
        for (std::size_t r = 0; r < l.rows; ++r)
          for (std::size_t c = 0; c < l.cols; ++c)
            s.layer.weights[(b * l.rows + r) * l.out + b * l.cols + c] =
                l.weights[(b * l.rows + r) * l.cols + c];
      break;
    }
    case NmnLayerType::kRelu:
      s.act = Activation::kReLU;
      break;
    case NmnLayerType::kElu:
      s.act = Activation::kELU;
      break;
    case NmnLayerType::kTanh:
      s.act = Activation::kTanh;
      break;
    default:
      return unsupported(label + " has no counterpart in a pose model's MLP");
  }
  steps.push_back(std::move(s));
  return core::Ok{};
}

// ---- .onnx ----------------------------------------------------------------------

// The ONNX graph is read in engine_import_onnx.cpp (detail::onnx_steps).

// The mapped MLP against the ONNX executor on a few inputs: a guard against
// any reading of the graph that differs from what it computes.
core::Status check_against_onnx(core::Bytes bytes, const Mlp& mlp) {
  auto model = load_onnx(bytes);
  if (!model) return std::move(model).error();
  if (model->inputs().size() != 1 || model->outputs().size() != 1)
    return unsupported("the graph has not one input and one output");
  const OnnxValueInfo& in = model->inputs()[0];
  const std::size_t f = mlp.input_count(), k = mlp.output_count();
  std::vector<std::int64_t> shape{1, static_cast<std::int64_t>(f)};
  if (in.has_shape && in.shape.size() == 1) shape = {static_cast<std::int64_t>(f)};
  MlpEvaluator ev(mlp);
  std::vector<float> x(f), want(k);
  for (int probe = 0; probe < 4; ++probe) {
    for (std::size_t j = 0; j < f; ++j)
      x[j] = probe == 0 ? 0.0F
                        : static_cast<float>(
                              std::sin(0.7 * static_cast<double>(j + 1) + 1.3 * probe) * probe);
    std::vector<OnnxTensor> args{OnnxTensor::from_f32(shape, x)};
    auto got = model->run(args);
    if (!got) return std::move(got).error();
    if (!ev.evaluate(x, want)) return unsupported("the MLP read from the graph does not run");
    const OnnxTensor& y = (*got)[0];
    if (y.type != OnnxType::kFloat || y.f.size() != k)
      return unsupported("the graph gives " + std::to_string(y.f.size()) + " outputs, expected " +
                         std::to_string(k));
    for (std::size_t o = 0; o < k; ++o)
      if (!(std::abs(y.f[o] - want[o]) <= 1e-4F * (1.0F + std::abs(want[o]))))
        return unsupported("the graph does not compute the MLP chain it was read as (output " +
                           std::to_string(o) + ": " + std::to_string(y.f[o]) + " vs " +
                           std::to_string(want[o]) + ")");
  }
  return core::Ok{};
}

// ---- the pose model -------------------------------------------------------------

core::Status check_names(const std::vector<std::string>& got, const std::vector<std::string>& want,
                         const char* what) {
  if (got.size() != want.size())
    return make_error(codes::IMPORT_INPUTS,
                      std::string("the sidecar names ") + std::to_string(got.size()) + " " + what +
                          ", the input spec has " + std::to_string(want.size()));
  for (std::size_t i = 0; i < got.size(); ++i)
    if (got[i] != want[i])
      return make_error(codes::IMPORT_INPUTS, std::string("the sidecar's ") + what + " " +
                                                  std::to_string(i) + " is \"" + got[i] +
                                                  "\", the input spec's \"" + want[i] + "\"");
  return core::Ok{};
}

core::Result<PoseModel> to_pose_model(Mlp mlp, const std::optional<NmnSidecar>& sidecar,
                                      const scene::Rig& rig, const InputSpec& spec,
                                      const EngineImportOptions& o, core::Json hyper) {
  const std::size_t f = spec.engine_feature_count(), k = mlp.output_count();
  if (mlp.input_count() != f)
    return make_error(codes::IMPORT_INPUTS,
                      "the network takes " + std::to_string(mlp.input_count()) +
                          " inputs; the input spec gives " + std::to_string(f) + " (" +
                          std::to_string(spec.bones.size()) + " bones x 6 + " +
                          std::to_string(spec.curves.size()) + " curves)");
  if (sidecar) {
    std::vector<std::string> bones, curves;
    for (const auto& b : spec.bones) bones.push_back(b.name);
    for (const auto& c : spec.curves) curves.push_back(c.name);
    if (auto st = check_names(sidecar->bones, bones, "bones"); !st) return std::move(st).error();
    if (auto st = check_names(sidecar->curves, curves, "curves"); !st) return std::move(st).error();
  }
  PoseModel m;
  m.spec = spec;
  m.layout = FeatureLayout::kEngine;
  m.mesh_name = rig.mesh_name;
  m.vertex_count = rig.vertex_count();
  m.kind = ModelKind::kNeural;
  m.clamp = engine_import_clamp(o.clamp, sidecar);
  std::vector<const scene::RigMorphTarget*> targets;
  if (sidecar && !sidecar->morph_targets.empty()) {
    const auto& names = sidecar->morph_targets;
    if (names.size() != k && names.size() != k + 1)
      return make_error(codes::IMPORT_MORPHS, "the sidecar names " + std::to_string(names.size()) +
                                                  " morph targets; the network drives " +
                                                  std::to_string(k) + " (or one more, morph 0)");
    m.fixed_first_morph = names.size() == k + 1;
    for (const std::string& name : names) {
      auto it = std::find_if(rig.morph_targets.begin(), rig.morph_targets.end(),
                             [&](const scene::RigMorphTarget& t) { return t.name == name; });
      if (it == rig.morph_targets.end()) {
        std::string message = "morph target \"" + name +
                              "\" of the sidecar is not a morph target of mesh \"" + rig.mesh_name +
                              "\"";
        // What export-nmn writes beside the network holds them: say where
        // it was looked for, rather than leave the user to fix the mesh.
        if (!o.missing_morphs_file.empty())
          message += "; the morph targets the network drives come in " + o.missing_morphs_file +
                     ", which export-nmn writes beside the .nmn and which is not there: "
                     "put it beside the network (or name it with --morphs)";
        return make_error(codes::IMPORT_MORPHS, std::move(message));
      }
      targets.push_back(&*it);
    }
  } else {
    if (rig.morph_targets.size() != k)
      return make_error(codes::IMPORT_MORPHS,
                        "the network drives " + std::to_string(k) + " morph targets; mesh \"" +
                            rig.mesh_name + "\" has " + std::to_string(rig.morph_targets.size()) +
                            " (give a sidecar to choose them by name)");
    for (const auto& t : rig.morph_targets) targets.push_back(&t);
  }
  m.basis = m.fixed_first_morph ? NeuralBasis::kLearned : NeuralBasis::kMorphTargets;
  const std::size_t width = 3 * m.vertex_count;
  for (const scene::RigMorphTarget* t : targets) {
    if (t->position_deltas.size() != width)
      return make_error(codes::MODEL_SHAPE, "morph target \"" + t->name + "\" does not hold " +
                                                std::to_string(width) + " values");
    m.morph_names.push_back(t->name);
    m.morphs.insert(m.morphs.end(), t->position_deltas.begin(), t->position_deltas.end());
  }
  m.mlp = std::move(mlp);
  hyper["clamp"] = clamp_name(m.clamp);
  if (sidecar) hyper["outputs"] = std::string(nmn_outputs_name(sidecar->outputs));
  m.hyper = std::move(hyper);
  if (auto st = validate(m); !st) return std::move(st).error();
  return m;
}

/// The network's outputs at the middle of its training inputs (its input
/// normalisation's mean) and half a standard deviation to either side,
/// against the ranges the sidecar recorded at export: a message when one
/// lies further outside than twice its range's width (a damaged file, or a
/// sidecar written for another network), else "".
std::string outputs_far_out_of_range(const Mlp& mlp, const NmnSidecar& sidecar) {
  const std::size_t outputs = mlp.output_count(), inputs = mlp.input_count();
  if (sidecar.output_ranges.size() != outputs || mlp.input_mean.size() != inputs ||
      mlp.input_std.size() != inputs)
    return {};
  MlpEvaluator ev(mlp);
  std::vector<float> in(inputs), out(outputs);
  for (const float shift : {0.0F, -0.5F, 0.5F}) {
    for (std::size_t i = 0; i < inputs; ++i) in[i] = mlp.input_mean[i] + shift * mlp.input_std[i];
    if (!ev.evaluate(in, out)) return {};
    for (std::size_t k = 0; k < outputs; ++k) {
      const auto [lo, hi] = sidecar.output_ranges[k];
      const float margin = 2.0F * std::max(hi - lo, 1e-3F);
      if (std::isfinite(out[k]) && out[k] >= lo - margin && out[k] <= hi + margin) continue;
      auto num = [](float v) {
        char text[32];
        std::snprintf(text, sizeof text, "%.4g", static_cast<double>(v));
        return std::string(text);
      };
      return "output " + std::to_string(k) + " is " + num(out[k]) +
             " for typical inputs, far outside the range " + num(lo) + " .. " + num(hi) +
             " the sidecar recorded at export: the network file may be damaged, or the "
             "sidecar written for another network";
    }
  }
  return {};
}

}  // namespace

core::Result<Mlp> nmn_to_mlp(const NmnNetwork& n) {
  if (n.mode == NmnMode::kLocal && n.num_curves > 0)
    return make_error(codes::IMPORT_LOCAL_MODE,
                      "a local-mode network gives each of its " + std::to_string(n.num_curves) +
                          " curves " + std::to_string(n.num_floats_per_curve) +
                          " inputs, a pose model 1: it runs with `charkit deformer run` but "
                          "cannot be imported as a pose model");
  std::vector<Step> steps;
  if (auto st = nmn_steps(n.main.root, steps, "0"); !st) return std::move(st).error();
  auto mlp = chain_to_mlp(steps);
  if (!mlp) return mlp;
  if (n.input_mean.size() != mlp->input_count() || n.input_std.size() != mlp->input_count())
    return unsupported("the normalisation does not match the network's inputs");
  mlp->input_mean = n.input_mean;
  mlp->input_std = n.input_std;
  if (auto st = validate(*mlp); !st) return std::move(st).error();
  return mlp;
}

WeightClamp engine_import_clamp(std::optional<WeightClamp> asked,
                                const std::optional<NmnSidecar>& sidecar) {
  if (asked) return *asked;
  if (sidecar && sidecar->outputs == NmnOutputs::kBasisCoefficients) return WeightClamp::kNone;
  return WeightClamp::kUnit;
}

core::Result<PoseModel> import_engine_network(core::Bytes bytes, std::string_view file_name,
                                              const std::optional<NmnSidecar>& sidecar,
                                              const scene::Rig& rig, const InputSpec& spec,
                                              const EngineImportOptions& o) {
  if (o.clamp == WeightClamp::kTrainingRange)  // optional == value: set and equal
    return make_error(codes::IMPORT_OPTIONS,
                      "an engine network holds no training range: clamp to none or unit");
  if (auto st = validate(spec); !st) return std::move(st).error();
  core::Json hyper = core::Json::object();
  hyper["imported_from"] = std::string(file_name);
  const DeformerFileKind kind = detect_deformer_file(bytes);  // by content
  if (kind == DeformerFileKind::kNmn) {
    auto net = read_nmn(bytes);
    if (!net) return std::move(net).error();
    auto mlp = nmn_to_mlp(*net);
    if (!mlp) return std::move(mlp).error();
    if (net->num_bones != spec.bones.size() || net->num_curves != spec.curves.size())
      return make_error(codes::IMPORT_INPUTS,
                        "the network takes " + std::to_string(net->num_bones) + " bones and " +
                            std::to_string(net->num_curves) + " curves (" +
                            std::to_string(net->input_count()) + " inputs); the input spec has " +
                            std::to_string(spec.bones.size()) + " bones and " +
                            std::to_string(spec.curves.size()) + " curves (" +
                            std::to_string(spec.engine_feature_count()) + " inputs)");
    if (sidecar)
      if (auto st = check_nmn_sidecar(*sidecar, *net); !st) return std::move(st).error();
    hyper["format"] = "nmn";
    hyper["runtime_name"] = net->runtime_name;
    if (net->mode == NmnMode::kLocal) hyper["mode"] = "local";
    hyper["warnings"] = core::Json::array();
    if (net->group)
      hyper["warnings"].push_back(
          core::Json{{"code", codes::IMPORT_GROUP_NOT_RUN},
                     {"message", "the network's group model (" + std::to_string(net->num_groups) +
                                     " bone groups) does not run in the imported model; only "
                                     "the per-bone main model does"}});
    if (sidecar && net->mode == NmnMode::kGlobal)
      if (std::string far = outputs_far_out_of_range(*mlp, *sidecar); !far.empty())
        hyper["warnings"].push_back(
            core::Json{{"code", codes::IMPORT_OUTPUT_RANGE}, {"message", std::move(far)}});
    if (hyper["warnings"].empty()) hyper.erase("warnings");
    return to_pose_model(std::move(*mlp), sidecar, rig, spec, o, std::move(hyper));
  }
  if (kind == DeformerFileKind::kOnnx) {
    std::string input;
    auto steps = detail::onnx_steps(bytes, input);
    if (!steps) return std::move(steps).error();
    auto mlp = chain_to_mlp(*steps);
    if (!mlp) return std::move(mlp).error();
    if (auto st = validate(*mlp); !st) return std::move(st).error();
    if (auto st = check_against_onnx(bytes, *mlp); !st) return std::move(st).error();
    hyper["format"] = "onnx";
    return to_pose_model(std::move(*mlp), sidecar, rig, spec, o, std::move(hyper));
  }
  return make_error(codes::IMPORT_FORMAT,
                    std::string(file_name) + " is neither a .nmn network nor an ONNX model");
}

}  // namespace charkit::deformer
