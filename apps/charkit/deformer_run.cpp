// `charkit deformer info MODEL` and `charkit deformer run MODEL --input IN.npy
// -o OUT.npy`: what a model file holds, and a batch of raw features through
// it (docs/deformer/nmn.md, docs/deformer/onnx.md). The model kind is detected from
// the content: Unreal `.nmn` networks by their magic, ONNX models by the
// protobuf field tag they start with (falling back to the `.onnx` extension),
// charkit's own pose_model.json by its extension and opening brace.
// The work is in charkit::deformer; this file maps files to text and results to
// exit codes.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "charkit/core/json.h"
#include "charkit/core/mapped_file.h"
#include "charkit/deformer/deformer_file.h"
#include "charkit/deformer/error_codes.h"
#include "charkit/deformer/nmn.h"
#include "charkit/deformer/nmn_sidecar.h"
#include "charkit/deformer/npy.h"
#include "charkit/deformer/onnx.h"
#include "charkit/deformer/pose_model.h"
#include "cli_output.h"
#include "commands.h"
#include "error_codes.h"
#include "printable.h"

namespace charkit::app {
namespace {

using core::Json;

struct RunArgs {
  std::string model;
  std::string input;
  std::string output;
  std::string sidecar;
  bool clamp = false;
  bool offsets = false;
  bool json = false;
};

// FILE: LOCATION: error CODE: message
int fail(const std::string& file, const core::Error& e, int code) {
  return report_error(file, e, code);
}

int fail_io(const std::string& file, const core::Error& e) {
  return fail(file, e, kExitUsage);
}

const char* mode_name(deformer::NmnMode m) {
  return m == deformer::NmnMode::kGlobal ? "global" : "local";
}

// The sidecar: --sidecar FILE (must exist), else MODEL.bmd_ue.json if present.
// Returns the exit code on failure; sets path to "" when there is none.
int load_sidecar(const RunArgs& a, const deformer::NmnNetwork& n,
                 std::optional<deformer::NmnSidecar>& out, std::string& path) {
  path = a.sidecar.empty() ? deformer::nmn_sidecar_path(a.model) : a.sidecar;
  std::error_code ec;
  if (a.sidecar.empty() && !std::filesystem::is_regular_file(path, ec)) {
    path.clear();
    return kExitOk;
  }
  auto file = core::MappedFile::open(path);
  if (!file) return fail_io(path, file.error());
  if (file->size() > (std::size_t{64} << 20))
    return fail(path, core::make_error(codes::SIDECAR_TOO_LARGE, "sidecar larger than 64 MiB"),
                kExitInvalid);
  auto s = deformer::read_nmn_sidecar(core::as_chars(file->bytes()));
  if (!s) return fail(path, s.error(), kExitInvalid);
  if (auto st = deformer::check_nmn_sidecar(*s, n); !st)
    return fail(path, st.error(), kExitInvalid);
  out = std::move(*s);
  return kExitOk;
}

Json layer_json(const deformer::NmnLayer& l) {
  Json j{{"type", std::string(deformer::nmn_layer_name(static_cast<std::uint32_t>(l.type)))},
         {"inputs", l.in},
         {"outputs", l.out},
         {"parameters", l.parameter_count()}};
  if (l.type == deformer::NmnLayerType::kMultiLinear) {
    j["blocks"] = l.blocks;
    j["rows"] = l.rows;
    j["cols"] = l.cols;
  }
  if (l.type == deformer::NmnLayerType::kSequence) {
    Json arr = Json::array();
    for (const auto& c : l.children) arr.push_back(layer_json(c));
    j["layers"] = std::move(arr);
  }
  return j;
}

void print_layer(std::ostream& os, const deformer::NmnLayer& l, int depth) {
  os << std::string(static_cast<std::size_t>(2 * depth), ' ')
     << deformer::nmn_layer_name(static_cast<std::uint32_t>(l.type));
  switch (l.type) {
    case deformer::NmnLayerType::kSequence:
      os << " (" << l.children.size() << " layers, " << l.in << " -> " << l.out << ")\n";
      for (const auto& c : l.children) print_layer(os, c, depth + 1);
      return;
    case deformer::NmnLayerType::kMultiLinear:
      os << " " << l.blocks << " blocks x (" << l.rows << " -> " << l.cols << ") = " << l.in
         << " -> " << l.out;
      break;
    case deformer::NmnLayerType::kLinear:
    case deformer::NmnLayerType::kCompressedLinear:
      os << " " << l.in << " -> " << l.out;
      break;
    default:
      os << " " << l.in;
      break;
  }
  if (l.parameter_count() > 0) os << " (" << l.parameter_count() << " parameters)";
  os << "\n";
}

std::uint64_t parameters(const deformer::NmnNetwork& n) {
  return n.main.root.parameter_count() + (n.group ? n.group->root.parameter_count() : 0) +
         n.input_mean.size() + n.input_std.size();
}

int info_nmn(const RunArgs& a, core::Bytes bytes) {
  auto n = deformer::read_nmn(bytes);
  if (!n) return fail(a.model, n.error(), kExitInvalid);
  std::optional<deformer::NmnSidecar> sidecar;
  std::string sidecar_path;
  if (int rc = load_sidecar(a, *n, sidecar, sidecar_path); rc != kExitOk) return rc;
  if (a.json) {
    Json doc{{"file", a.model},
             {"kind", "nmn"},
             {"fileSize", bytes.size()},
             {"mode", mode_name(n->mode)},
             {"runtimeName", n->runtime_name},
             {"inputs", n->input_count()},
             {"outputs", n->output_count()},
             {"header",
              {{"numMorphs", n->num_morphs},
               {"numMorphsPerBone", n->num_morphs_per_bone},
               {"numBones", n->num_bones},
               {"numCurves", n->num_curves},
               {"numGroups", n->num_groups},
               {"numItemsPerGroup", n->num_items_per_group},
               {"numFloatsPerCurve", n->num_floats_per_curve}}},
             {"parameters", parameters(*n)},
             {"mainModel", layer_json(n->main.root)}};
    doc["groupModel"] = n->group ? layer_json(n->group->root) : Json(nullptr);
    if (sidecar) {
      doc["sidecar"] = Json{{"file", sidecar_path},
                            {"bones", sidecar->bones},
                            {"curves", sidecar->curves},
                            {"morphTargets", sidecar->morph_targets}};
    } else {
      doc["sidecar"] = nullptr;
    }
    print_json(std::move(doc));
    return kExitOk;
  }
  std::ostream& os = std::cout;
  os << printable(a.model) << ": Unreal ML Deformer network (.nmn), " << mode_name(n->mode)
     << " mode, " << bytes.size() << " bytes\n";
  os << "runtime name: \"" << printable(n->runtime_name) << "\"\n";
  os << "inputs: " << n->input_count() << " (" << n->num_bones << " bones x 6 + " << n->num_curves
     << " curves x " << n->num_floats_per_curve << "), normalised by the file's mean and std\n";
  os << "outputs: " << n->output_count();
  if (n->group)
    os << " (" << n->main.output_size << " main + " << n->group->output_size << " group)";
  os << "\n";
  os << "header: NumMorphs " << n->num_morphs << ", NumMorphsPerBone " << n->num_morphs_per_bone
     << ", NumGroups " << n->num_groups << ", NumItemsPerGroup " << n->num_items_per_group << "\n";
  os << "parameters: " << parameters(*n) << " (including " << 2 * n->input_count()
     << " normalisation values)\n";
  os << "main model:\n";
  print_layer(os, n->main.root, 1);
  if (n->group) {
    os << "group model:\n";
    print_layer(os, n->group->root, 1);
  }
  if (sidecar)
    os << "sidecar: " << printable(sidecar_path) << " (" << sidecar->bones.size() << " bones, "
       << sidecar->curves.size() << " curves, " << sidecar->morph_targets.size()
       << " morph targets)\n";
  else
    os << "sidecar: none (inputs and outputs are known by position only)\n";
  return kExitOk;
}

int info_onnx(const RunArgs& a, core::Bytes bytes);  // below, with run_onnx

int load_input(const RunArgs& a, std::size_t columns, std::size_t outputs,
               std::vector<float>& values, std::size_t& rows);
int write_outputs(const RunArgs& a, const char* kind, std::size_t rows, std::size_t inputs,
                  std::size_t outputs, std::vector<float>& out, bool clamp_to_unit);

const char* layout_name(deformer::FeatureLayout l) {
  return l == deformer::FeatureLayout::kEngine ? "engine" : "axis-angle";
}
const char* activation_name(deformer::Activation act) {
  switch (act) {
    case deformer::Activation::kReLU:
      return "ReLU";
    case deformer::Activation::kELU:
      return "ELU";
    case deformer::Activation::kTanh:
      return "tanh";
    case deformer::Activation::kIdentity:
      break;
  }
  return "identity";
}

// charkit's own model: inputs (bones and their axes, curves), what it
// outputs, the network or the linear map, and the training statistics.
int info_own(const RunArgs& a) {
  auto m = deformer::load_pose_model(a.model);
  if (!m) return fail(a.model, m.error(), kExitInvalid);
  const bool neural = m->kind == deformer::ModelKind::kNeural;
  std::uint64_t params = 0;
  Json layers = Json::array();
  if (neural) {
    for (std::size_t l = 0; l < m->mlp.layers.size(); ++l) {
      const auto& d = m->mlp.layers[l];
      params += d.weights.size() + d.biases.size();
      const bool last = l + 1 == m->mlp.layers.size();
      layers.push_back(Json{{"type", "Dense"},
                            {"inputs", d.inputs},
                            {"outputs", d.outputs},
                            {"activation", activation_name(last ? m->mlp.output_activation
                                                                : m->mlp.hidden_activation)}});
    }
  } else {
    params = m->linear.weights().size();
    layers.push_back(Json{{"type", "Linear (no bias)"},
                          {"inputs", m->linear.feature_count()},
                          {"outputs", m->linear.output_count()}});
  }
  const std::size_t outputs = neural ? m->morph_count() : 3 * m->vertex_count;
  if (a.json) {
    Json bones = Json::array(), curves = Json::array();
    for (const auto& b : m->spec.bones) bones.push_back(b.name);
    for (const auto& c : m->spec.curves) curves.push_back(c.name);
    Json doc{{"model", a.model},
             {"kind", "charkit"},
             {"modelKind", deformer::model_kind_name(m->kind)},
             {"layout", layout_name(m->layout)},
             {"inputs", m->feature_count()},
             {"outputs", outputs},
             {"bones", bones},
             {"curves", curves},
             {"vertices", m->vertex_count},
             {"morphs", m->morph_names},
             {"clamp", deformer::clamp_name(m->clamp)},
             {"layers", layers},
             {"parameters", params},
             {"holdoutMeanError", m->stats.holdout.mean},
             {"uncorrectedHoldoutMeanError", m->stats.uncorrected_holdout.mean}};
    print_json(std::move(doc));
    return kExitOk;
  }
  std::ostream& os = std::cout;
  os << printable(a.model) << ": charkit pose model (" << deformer::model_kind_name(m->kind)
     << "), mesh \"" << printable(m->mesh_name) << "\", " << m->vertex_count << " vertices\n"
     << "inputs: " << m->feature_count() << " (" << layout_name(m->layout)
     << " layout: " << m->spec.bones.size() << " bones x "
     << (m->layout == deformer::FeatureLayout::kEngine ? 6 : 3) << " + " << m->spec.curves.size()
     << " curves)\n";
  for (const auto& b : m->spec.bones) {
    os << "  bone " << printable(b.name) << ":";
    for (std::size_t k = 0; k < 3; ++k) {
      const auto& ax = b.axes[k];
      os << " " << static_cast<char>('x' + k);
      if (ax.enabled)
        os << " [" << ax.min_deg << ", " << ax.max_deg << "]";
      else
        os << " off";
    }
    os << "\n";
  }
  for (const auto& c : m->spec.curves)
    os << "  curve " << printable(c.name) << ": [" << c.min << ", " << c.max << "]\n";
  if (neural)
    os << "outputs: " << outputs << " morph weights (" << m->predicted_weights() << " predicted"
       << (m->fixed_first_morph ? ", morph 0 fixed at 1" : "") << "; clamp "
       << deformer::clamp_name(m->clamp) << ")\n";
  else
    os << "outputs: " << outputs << " vertex offsets (x y z per vertex, bind space)\n";
  os << "layers:\n";
  for (const auto& l : layers) {
    os << "  " << l["type"].get<std::string>() << " " << l["inputs"].get<std::size_t>() << " -> "
       << l["outputs"].get<std::size_t>();
    if (l.contains("activation")) os << ", " << l["activation"].get<std::string>();
    os << "\n";
  }
  os << "parameters: " << params << "\n"
     << "held-out mean vertex error: " << m->stats.holdout.mean << " (uncorrected "
     << m->stats.uncorrected_holdout.mean << ")\n";
  return kExitOk;
}

// Own model on a batch: neural models write their morph weights (raw network
// outputs, the fixed morph 0 included; the model's own clamping with
// --clamp), linear models and --offsets write the 3V bind-space offsets.
int run_own(const RunArgs& a) {
  auto m = deformer::load_pose_model(a.model);
  if (!m) return fail(a.model, m.error(), kExitInvalid);
  const bool weights = m->kind == deformer::ModelKind::kNeural && !a.offsets;
  const std::size_t outputs = weights ? m->morph_count() : 3 * m->vertex_count;
  std::vector<float> in;
  std::size_t rows = 0;
  if (int rc = load_input(a, m->feature_count(), outputs, in, rows); rc != kExitOk) return rc;
  std::vector<float> out(rows * outputs);
  // Whole batches through the network (the same bits as pose by pose).
  deformer::PoseModelEvaluator eval(*m);
  bool ok = false;
  if (!weights) {
    ok = eval.offsets(in, rows, out);
  } else if (a.clamp) {
    ok = eval.weights(in, rows, out);
  } else if (m->fixed_first_morph) {
    // Raw outputs after the fixed morph 0's weight of 1.
    const std::size_t p = outputs - 1;
    std::vector<float> raw(rows * p);
    deformer::MlpEvaluator net(m->mlp);
    ok = net.evaluate_batch(in, rows, raw);
    for (std::size_t r = 0; ok && r < rows; ++r) {
      out[r * outputs] = 1.0F;
      std::copy_n(raw.begin() + static_cast<std::ptrdiff_t>(r * p), p,
                  out.begin() + static_cast<std::ptrdiff_t>(r * outputs + 1));
    }
  } else {
    deformer::MlpEvaluator net(m->mlp);
    ok = net.evaluate_batch(in, rows, out);
  }
  if (!ok)
    return fail(a.model, core::make_error(codes::MODEL_RUN, "the model could not run on the input"),
                kExitInvalid);
  // --clamp was the model's own clamping, done above.
  return write_outputs(a, "charkit", rows, m->feature_count(), outputs, out,
                       /*clamp_to_unit=*/false);
}

// Opens the model file and calls the handler for its kind: Unreal .nmn or
// ONNX (with the file's bytes), or charkit's own pose_model.json (which the
// handler loads itself); any other file is MODEL_KIND.
using BytesHandler = int (*)(const RunArgs&, core::Bytes);
using OwnHandler = int (*)(const RunArgs&);
int by_model_kind(const RunArgs& a, BytesHandler nmn, BytesHandler onnx, OwnHandler own) {
  auto file = core::MappedFile::open(a.model);
  if (!file) return fail_io(a.model, file.error());
  switch (deformer::detect_deformer_file(file->bytes(), a.model)) {
    case deformer::DeformerFileKind::kNmn:
      return nmn(a, file->bytes());
    case deformer::DeformerFileKind::kOnnx:
      return onnx(a, file->bytes());
    case deformer::DeformerFileKind::kPoseModel:
      return own(a);
    case deformer::DeformerFileKind::kUnknown:
      break;
  }
  return fail(a.model,
              core::error_at_offset(
                  codes::MODEL_KIND,
                  "not a model file charkit knows (supported: charkit pose_model.json, Unreal "
                  ".nmn, ONNX .onnx)",
                  0),
              kExitInvalid);
}

int run_info(const RunArgs& a) {
  return by_model_kind(a, info_nmn, info_onnx, info_own);
}

// The input array: IN.npy, or the `features` array of a dataset .npz
// (what `deformer sample` writes).
core::Result<deformer::NpyArray> read_input_array(core::Bytes bytes) {
  if (bytes.size() >= 2 && bytes[0] == 'P' && bytes[1] == 'K') {
    auto members = deformer::read_npz(bytes);
    if (!members) return std::move(members).error();
    for (deformer::NpzMember& m : *members)
      if (m.name == "features") return std::move(m.array);
    return core::make_error(codes::INPUT_SHAPE,
                            "the .npz has no features array (give a dataset from `deformer "
                            "sample`, or a 2-D float32 .npy)");
  }
  return deformer::read_npy(bytes);
}

// Reads IN.npy (or a dataset .npz's features) as a 2-D float32 array with
// `columns` columns.
int load_input(const RunArgs& a, std::size_t columns, std::size_t outputs,
               std::vector<float>& values, std::size_t& rows) {
  auto file = core::MappedFile::open(a.input);
  if (!file) return fail_io(a.input, file.error());
  auto arr = read_input_array(file->bytes());
  if (!arr) return fail(a.input, arr.error(), kExitInvalid);
  if (arr->dtype != deformer::NpyDType::kF4 || arr->shape.size() != 2)
    return fail(a.input,
                core::make_error(codes::INPUT_SHAPE,
                                 "the input must be a 2-D float32 ('<f4') array, one row "
                                 "of raw features per sample"),
                kExitInvalid);
  if (arr->shape[1] != columns)
    return fail(a.input,
                core::make_error(codes::INPUT_SHAPE, "rows have " + std::to_string(arr->shape[1]) +
                                                         " features, the model takes " +
                                                         std::to_string(columns)),
                kExitInvalid);
  // A zero-column input carries no data, so its row count bounds nothing: cap the output.
  if (arr->shape[0] > (std::uint64_t{1} << 30) / std::max<std::uint64_t>(outputs, 1))
    return fail(a.input,
                core::make_error(codes::INPUT_TOO_LARGE,
                                 std::to_string(arr->shape[0]) +
                                     " rows would give more than 2^30 output values"),
                kExitInvalid);
  rows = static_cast<std::size_t>(arr->shape[0]);
  values = arr->to_f32();
  return kExitOk;
}

// Writes rows x outputs to OUT.npy (clamped to [0, 1] with --clamp: the
// range the Blender-side tools use for morph weights) and the --json summary.
int write_outputs(const RunArgs& a, const char* kind, std::size_t rows, std::size_t inputs,
                  std::size_t outputs, std::vector<float>& out, bool clamp_to_unit) {
  // NaN or infinity in the inputs or the model's values: written as they
  // are, but said, since a morph weight of NaN breaks whatever reads it.
  const auto not_finite = static_cast<std::size_t>(
      std::count_if(out.begin(), out.end(), [](float v) { return !std::isfinite(v); }));
  if (not_finite > 0)
    report_warning(a.output, codes::OUTPUT_NOT_FINITE,
                   std::to_string(not_finite) + " of " + std::to_string(out.size()) +
                       " outputs are NaN or infinite (the input or the model holds values "
                       "that are not finite)");
  if (clamp_to_unit)
    for (float& v : out) v = std::clamp(v, 0.0f, 1.0f);
  auto arr = deformer::NpyArray::from_f32({rows, outputs}, out);
  auto bytes_out = deformer::write_npy(arr);
  if (!bytes_out) return fail(a.output, bytes_out.error(), kExitUsage);
  if (auto st = deformer::write_file_bytes(a.output, *bytes_out); !st)
    return fail_io(a.output, st.error());
  if (a.json) {
    Json doc{{"model", a.model}, {"kind", kind},     {"input", a.input},   {"output", a.output},
             {"rows", rows},     {"inputs", inputs}, {"outputs", outputs}, {"clamped", a.clamp}};
    print_json(std::move(doc));
  } else {
    report_info(a.output, std::to_string(rows) + " rows × " + std::to_string(outputs) + " " + kind +
                              " outputs written" + (clamp_to_unit ? " (clamped to [0, 1])" : ""));
  }
  return kExitOk;
}

int run_nmn(const RunArgs& a, core::Bytes bytes) {
  auto n = deformer::read_nmn(bytes);
  if (!n) return fail(a.model, n.error(), kExitInvalid);
  std::optional<deformer::NmnSidecar> sidecar;
  std::string sidecar_path;
  if (int rc = load_sidecar(a, *n, sidecar, sidecar_path); rc != kExitOk) return rc;
  std::vector<std::uint32_t> items;
  if (n->group) {
    if (!sidecar)
      return fail(
          a.model,
          core::make_error(deformer::codes::NMN_GROUP_ITEMS,
                           "the network has a group model; its groups' bones and curves come from "
                           "the sidecar's \"groups\" (pass --sidecar FILE)"),
          kExitInvalid);
    items = deformer::nmn_sidecar_group_items(*sidecar);
  }
  auto runner = deformer::NmnRunner::create(*n, items);
  if (!runner) return fail(a.model, runner.error(), kExitInvalid);
  std::vector<float> in;
  std::size_t rows = 0;
  if (int rc = load_input(a, runner->input_count(), runner->output_count(), in, rows);
      rc != kExitOk)
    return rc;
  std::vector<float> out(rows * runner->output_count());
  runner->run_batch(in, out, rows);
  return write_outputs(a, "nmn", rows, runner->input_count(), runner->output_count(), out, a.clamp);
}

Json value_json(const deformer::OnnxValueInfo& v) {
  Json dims = Json::array();
  for (const auto& d : v.shape) {
    if (!d.symbol.empty())
      dims.push_back(d.symbol);
    else if (d.value >= 0)
      dims.push_back(d.value);
    else
      dims.push_back(nullptr);
  }
  return Json{{"name", v.name},
              {"type", deformer::onnx_type_name(v.elem_type)},
              {"shape", v.has_shape ? dims : Json(nullptr)}};
}

int info_onnx(const RunArgs& a, core::Bytes bytes) {
  auto m = deformer::load_onnx(bytes);
  if (!m) return fail(a.model, m.error(), kExitInvalid);
  const auto& d = m->description();
  if (a.json) {
    Json ins = Json::array(), outs = Json::array(), ops = Json::object();
    for (const auto& v : m->inputs()) ins.push_back(value_json(v));
    for (const auto& v : m->outputs()) outs.push_back(value_json(v));
    for (const auto& [op, n] : d.ops) ops[op] = n;
    Json doc{{"file", a.model},
             {"kind", "onnx"},
             {"fileSize", bytes.size()},
             {"irVersion", d.ir_version},
             {"opset", d.opset},
             {"producer", d.producer},
             {"graph", d.graph_name},
             {"nodes", d.node_count},
             {"ops", ops},
             {"parameters", d.parameters},
             {"initializers", d.initializers},
             {"inputs", ins},
             {"outputs", outs}};
    print_json(std::move(doc));
    return kExitOk;
  }
  std::ostream& os = std::cout;
  os << printable(a.model) << ": ONNX model, IR version " << d.ir_version << ", opset " << d.opset
     << ", " << bytes.size() << " bytes\n";
  if (!d.producer.empty()) os << "producer: " << printable(d.producer) << "\n";
  os << "inputs:\n";
  for (const auto& v : m->inputs()) os << "  " << printable(deformer::onnx_value_text(v)) << "\n";
  os << "outputs:\n";
  for (const auto& v : m->outputs()) os << "  " << printable(deformer::onnx_value_text(v)) << "\n";
  os << "nodes: " << d.node_count << " (";
  bool first = true;
  for (const auto& [op, n] : d.ops) {
    os << (first ? "" : ", ") << op << " " << n;
    first = false;
  }
  os << ")\n";
  os << "parameters: " << d.parameters << " (" << d.initializers << " initializers)\n";
  return kExitOk;
}

// ONNX run: the model's single graph input gets the batch as [rows, columns]
// when its first dim is symbolic or equals rows; a declared [1, columns] or
// [columns] input is fed one row at a time. Output 0 is written, one row of
// its values per sample.
int run_onnx(const RunArgs& a, core::Bytes bytes) {
  auto m = deformer::load_onnx(bytes);
  if (!m) return fail(a.model, m.error(), kExitInvalid);
  // Feature count: the last declared dim when known; else whatever the input has.
  auto columns = deformer::onnx_row_columns(*m);
  if (!columns) return fail(a.model, columns.error(), kExitInvalid);
  // Read the input (with its own column count when the model does not fix it).
  auto file = core::MappedFile::open(a.input);
  if (!file) return fail_io(a.input, file.error());
  auto peek = read_input_array(file->bytes());
  if (!peek) return fail(a.input, peek.error(), kExitInvalid);
  if (peek->shape.size() != 2)
    return fail(a.input,
                core::make_error(codes::INPUT_SHAPE, "the input must be a 2-D float32 array"),
                kExitInvalid);
  const auto cols =
      *columns >= 0 ? static_cast<std::size_t>(*columns) : static_cast<std::size_t>(peek->shape[1]);
  std::vector<float> values;
  std::size_t rows = 0;
  if (int rc = load_input(a, cols, 1, values, rows); rc != kExitOk) return rc;
  std::size_t outputs = 0;
  auto out = deformer::run_onnx_rows(*m, values, rows, cols, &outputs);
  if (!out) return fail(a.model, out.error(), kExitInvalid);
  return write_outputs(a, "onnx", rows, cols, outputs, *out, a.clamp);
}

int run_run(const RunArgs& a) {
  return by_model_kind(a, run_nmn, run_onnx, run_own);
}

}  // namespace

void add_deformer_run_commands(CLI::App& deformer, int& exit_code) {
  auto ia = std::make_shared<RunArgs>();
  CLI::App* info_cmd = deformer.add_subcommand(
      "info",
      "Show what a deformer file holds: kind, mode, inputs and outputs (and what they stand for), "
      "the "
      "layers with their types and sizes, the parameter count and the file size. The kind is "
      "detected from the content; supported: charkit's own models (pose_model.json + .npz, from "
      "`deformer train`), Unreal ML Deformer networks (.nmn, global and local "
      "mode) and ONNX models (.onnx: recognised by the protobuf field tag they start with, or by "
      "the .onnx extension; see docs/deformer/onnx.md for the supported ops). A .nmn sidecar "
      "NAME.bmd_ue.json next to the file (bone, curve and morph-target names) is "
      "read and checked against the network.");
  info_cmd->add_option("model", ia->model, "Deformer file (pose_model.json, .nmn or .onnx)")
      ->required()
      ->type_name("FILE");
  info_cmd
      ->add_option("--sidecar", ia->sidecar,
                   "Sidecar JSON (default: NAME.bmd_ue.json beside FILE, if present)")
      ->type_name("FILE");
  info_cmd->add_flag("--json", ia->json, "Print the description as JSON");
  info_cmd->footer(
      "Exit status: 0 described, 1 invalid model or sidecar, 2 usage or I/O error.\n"
      "Format and rules: docs/deformer/pose_model.md, docs/deformer/nmn.md, "
      "docs/deformer/onnx.md.");
  info_cmd->callback([ia, &exit_code] { exit_code = run_info(*ia); });

  auto ra = std::make_shared<RunArgs>();
  CLI::App* run_cmd = deformer.add_subcommand(
      "run",
      "Run a deformer file on a batch: IN.npy is a 2-D float32 array with one row of raw, "
      "un-normalised "
      "input features per sample (for .nmn: 6 floats per bone, the first two rows of its local "
      "rotation matrix, then the curve values); the model applies its own normalisation and the "
      "raw outputs (morph weights) are written to OUT.npy as rows x outputs float32. An ONNX "
      "model (detected by content, or by the .onnx extension) must have one float32 input of "
      "shape [batch, features] or [features]; its first output is written. A charkit model "
      "(pose_model.json) takes its own features (axis-angle: 3 per bone, or the engine layout) and "
      "writes its morph weights (neural) or vertex offsets (linear, or --offsets).");
  run_cmd->add_option("model", ra->model, "Deformer file (pose_model.json, .nmn or .onnx)")
      ->required()
      ->type_name("FILE");
  run_cmd
      ->add_option("--input", ra->input,
                   "Input features: a 2-D float32 .npy, or a dataset .npz from `deformer "
                   "sample` (its features array)")
      ->required()
      ->type_name("IN.npy");
  run_cmd->add_option("-o,--output", ra->output, "Output file (.npy, float32)")
      ->required()
      ->type_name("OUT.npy");
  run_cmd->add_flag("--clamp", ra->clamp,
                    "Clamp the outputs: .nmn and ONNX to [0, 1]; a charkit model as it says "
                    "(default: raw network outputs)");
  run_cmd->add_flag("--offsets", ra->offsets,
                    "charkit models: write the 3V bind-space vertex offsets instead of the morph "
                    "weights (linear models always do)");
  run_cmd
      ->add_option("--sidecar", ra->sidecar,
                   "Sidecar JSON (default: MODEL.bmd_ue.json if present); local-mode networks with "
                   "groups need its \"groups\"")
      ->type_name("FILE");
  run_cmd->add_flag("--json", ra->json, "Print a JSON summary (rows, inputs, outputs)");
  run_cmd->footer(
      "Exit status: 0 written, 1 invalid model, sidecar or input array, 2 usage or I/O error.\n"
      "Example: charkit deformer run model.nmn --input poses.npy -o weights.npy\n"
      "Format and execution rules: docs/deformer/nmn.md, docs/deformer/onnx.md.");
  run_cmd->callback([ra, &exit_code] { exit_code = run_run(*ra); });
}

}  // namespace charkit::app
