// `charkit deformer sample`, `train` and `eval`: the training workflow of the
// pose-driven deformer (docs/deformer/workflow.md).
//
//   rig.glb --sample--> dataset.npz + dataset.json --train--> model.json + model.npz
//                                                  --eval--> errors on any dataset
//
// The work is in charkit::deformer; this file maps options to calls, results to
// text (or JSON) and errors to exit codes.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "charkit/core/json.h"
#include "charkit/core/mapped_file.h"
#include "charkit/deformer/action.h"
#include "charkit/deformer/dataset.h"
#include "charkit/deformer/error_codes.h"
#include "charkit/deformer/pc2.h"
#include "charkit/deformer/pose.h"
#include "charkit/deformer/pose_model.h"
#include "charkit/deformer/targets.h"
#include "charkit/scene/error_codes.h"
#include "charkit/scene/intake.h"
#include "charkit/scene/model_inspect.h"
#include "charkit/scene/rig.h"
#include "cli_errors.h"
#include "commands.h"
#include "deformer_common.h"
#include "error_codes.h"
#include "printable.h"

namespace charkit::app {
namespace {

using core::Json;

// ---------------------------------------------------------------- sample ----

struct SampleArgs {
  std::string rig;
  std::string mesh;
  std::string spec;
  std::string bones;
  std::string axes = "xyz";
  double range = 45.0;
  std::size_t poses = 200;
  std::uint64_t seed = 777;
  std::string targets = "delta-mush";
  std::string cache;
  std::size_t smooth_iterations = 10;
  double smooth_step = 0.5;
  std::string layout = "axis-angle";
  bool from_action = false;  ///< --action given (glTF animation of the rig's file)
  std::string action;
  std::string bvh;
  std::string joint_map;
  double start = 0;
  double end = -1;
  std::size_t frames = 0;
  double fps = 30;
  std::string output;
  std::string write_spec;
  bool json = false;
};

int run_sample(const SampleArgs& a) {
  const auto t0 = std::chrono::steady_clock::now();
  if (auto json = deformer::companion_path(a.output, ".json", true); !json)
    return report_error(a.output, json.error(), kExitUsage);
  scene::RigOptions ro;
  ro.mesh_name = a.mesh;
  ro.intake.name = a.rig;
  auto rig_file = core::MappedFile::open(a.rig);
  if (!rig_file) return report_error(a.rig, rig_file.error(), load_exit(rig_file.error()));
  // The spec names the bones; `--bones all` takes the first skinned mesh's
  // joints. Then the mesh: the one named, else the one those bones move most.
  auto first = scene::load_rig(rig_file->bytes(), ro);
  if (!first) return report_error(a.rig, first.error(), load_exit(first.error()));
  auto spec = input_spec_from(a.spec, a.bones, a.axes, a.range, *first);
  *first = scene::Rig{};  // the chosen rig is loaded below
  if (!spec) return report_error(a.spec.empty() ? a.rig : a.spec, spec.error(), kExitUsage);
  std::vector<std::string> bone_names;
  for (const deformer::BoneInput& b : spec->bones) bone_names.push_back(b.name);
  auto choice = scene::load_rig_moved_most(rig_file->bytes(), bone_names, ro);
  if (!choice) return report_error(a.rig, choice.error(), load_exit(choice.error()));
  std::optional<scene::Rig> rig(std::move(choice->rig));
  const double mesh_influence = choice->influence;
  const std::string mesh_label =
      choice->candidates.empty() ? rig->mesh_name : choice->candidates[choice->chosen].label();
  {
    const auto& cands = choice->candidates;
    const std::string& label = mesh_label;
    std::string others;
    for (std::size_t i = 0; i < cands.size(); ++i)
      if (i != choice->chosen)
        others += (others.empty() ? "\"" : ", \"") + printable(cands[i].label()) + "\"";
    char moved[64];
    std::snprintf(moved, sizeof moved, "%.1f", choice->influence);
    if (choice->influence <= 0.0)
      report_warning(
          a.rig, scene::codes::RIG_NOT_INFLUENCED,
          "the input bones do not move mesh \"" + printable(label) +
              "\" (no skin weight on them or the joints below them)" +
              (others.empty() ? std::string() : "; other skinned meshes: " + others + " (--mesh)"));
    else if (a.mesh.empty() && cands.size() > 1)
      report_info(a.rig, "mesh \"" + printable(label) + "\" (" +
                             std::to_string(rig->vertex_count()) +
                             " vertices), the one the input bones move most (skin weight " + moved +
                             "); other skinned meshes: " + others + " (--mesh)");
  }

  deformer::FeatureLayout layout;
  if (a.layout == "axis-angle")
    layout = deformer::FeatureLayout::kAxisAngle;
  else if (a.layout == "engine")
    layout = deformer::FeatureLayout::kEngine;
  else
    return report_error(a.layout, usage_error("--layout is axis-angle or engine"), kExitUsage);

  // Poses: from an animation (--action: the rig file's glTF animation;
  // --bvh FILE), else seeded random poses.
  std::vector<deformer::Pose> poses;
  std::vector<std::string> names;
  std::optional<deformer::ActionSamples> action;
  if (!a.joint_map.empty() && a.bvh.empty())
    return report_error(a.joint_map, usage_error("--joint-map goes with --bvh"), kExitUsage);
  if (a.from_action || !a.bvh.empty()) {
    deformer::ActionOptions ao;
    ao.animation = a.action;
    ao.start_frame = a.start;
    ao.end_frame = a.end;
    ao.frames = a.frames;
    ao.fps = a.fps;
    core::Result<deformer::ActionSamples> s = core::make_error(codes::USAGE, "no action");
    if (!a.joint_map.empty()) {
      auto text = deformer::read_file_bytes(a.joint_map, std::size_t{1} << 20);
      if (!text) return report_error(a.joint_map, text.error(), load_exit(text.error()));
      auto map = deformer::parse_bvh_joint_map(core::as_chars(core::Bytes(*text)),
                                               vrm_humanoid_joints(rig_file->bytes()));
      if (!map) return report_error(a.joint_map, map.error(), kExitInvalid);
      ao.bvh_joints = std::move(*map);
    }
    const std::string& source = a.bvh.empty() ? a.rig : a.bvh;
    auto file = core::MappedFile::open(source);
    if (!file) return report_error(source, file.error(), kExitUsage);
    if (a.bvh.empty())
      s = deformer::sample_gltf_action(file->bytes(), *rig, *spec, ao);
    else
      s = deformer::sample_bvh_action(core::as_chars(file->bytes()), *spec, ao);
    if (!s) return report_error(source, s.error(), kExitInvalid);
    poses = s->poses;
    names = s->names;
    action = std::move(*s);
  } else {
    deformer::SampleOptions so;
    so.random_poses = a.poses;
    so.seed = a.seed;
    auto p = deformer::sample_poses(*spec, so);
    if (!p) return report_error(a.rig, p.error(), kExitUsage);
    poses = std::move(*p);
  }

  detail(a.rig, std::to_string(poses.size()) + " poses, " + std::to_string(spec->bones.size()) +
                    " input bones, targets " + a.targets);
  core::Result<deformer::BuiltTargets> built = core::make_error(codes::USAGE, "no targets");
  if (a.targets == "morph-animation") {
    if (!action || a.bvh.size() > 0)
      return report_error(a.rig,
                          usage_error("--targets morph-animation needs --action (a glTF "
                                      "animation of the rig's morph target weights)"),
                          kExitUsage);
    built = deformer::build_targets_from_morph_animation(*rig, *spec, *action, layout);
  } else if (a.targets == "pc2") {
    if (a.cache.empty())
      return report_error(a.rig, usage_error("--targets pc2 needs --cache FILE.pc2"), kExitUsage);
    auto cache = deformer::read_pc2_file(a.cache);
    if (!cache) return report_error(a.cache, cache.error(), kExitInvalid);
    built = deformer::build_targets_from_cache(*rig, *spec, poses, *cache, layout);
  } else if (a.targets == "delta-mush" || a.targets == "dqs") {
    deformer::TargetOptions to;
    to.source = a.targets == "dqs" ? deformer::TargetSource::kDualQuaternion
                                   : deformer::TargetSource::kDeltaMush;
    to.delta_mush.iterations = a.smooth_iterations;
    to.delta_mush.step = a.smooth_step;
    to.layout = layout;
    ProgressReporter progress(a.rig, "building targets (" + a.targets + ")", poses.size());
    to.progress = [&progress](std::size_t done, std::size_t) { progress.update(done); };
    built = deformer::build_targets(*rig, *spec, poses, to);
  } else {
    return report_error(
        a.targets, usage_error("--targets is delta-mush, dqs, pc2 or morph-animation"), kExitUsage);
  }
  if (!built) return report_error(a.rig, built.error(), kExitInvalid);
  if (!names.empty() && names.size() == built->dataset.sample_count)
    built->dataset.sample_names = names;

  if (auto st = deformer::save_dataset(built->dataset, a.output); !st)
    return report_error(a.output, st.error(), kExitUsage);
  if (!a.write_spec.empty()) {
    const std::string text = deformer::input_spec_json(*spec).dump(2) + "\n";
    if (auto st = deformer::write_file_bytes(
            a.write_spec,
            std::span(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()));
        !st)
      return report_error(a.write_spec, st.error(), kExitUsage);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const deformer::Dataset& d = built->dataset;
  if (a.json) {
    Json doc{{"dataset", a.output},
             {"samples", d.sample_count},
             {"features", d.feature_count()},
             {"vertices", d.vertex_count},
             {"mesh", mesh_label},
             {"meshInfluence", mesh_influence},
             {"bones", spec->bones.size()},
             {"curves", spec->curves.size()},
             {"layout", a.layout},
             {"targets", a.targets},
             {"lbsError", {{"mean", built->lbs.mean_error}, {"max", built->lbs.max_error}}},
             {"seconds", seconds}};
    print_json(std::move(doc));
  } else {
    std::cout << "wrote " << printable(a.output) << ": " << d.sample_count
              << " samples (rest pose + " << d.sample_count - 1 << "), " << d.feature_count()
              << " features (" << spec->bones.size() << " bones, " << spec->curves.size()
              << " curves, " << a.layout << " layout), " << d.vertex_count << " vertices\n"
              << "targets: " << a.targets << "; plain LBS is off by mean " << built->lbs.mean_error
              << ", max " << built->lbs.max_error << " (scene units)\n"
              << "time: " << seconds << " s\n";
  }
  return kExitOk;
}

// ----------------------------------------------------------------- train ----

struct TrainArgs {
  std::string dataset;
  std::string output;
  std::string model;        ///< --kind; empty: linear
  std::string model_alias;  ///< --model, the former name of --kind
  double lambda = 1e-3;
  std::string hidden = "128,128";
  std::string activation = "elu";
  std::size_t iterations = 2000;
  std::size_t batch = 128;
  double learning_rate = 1e-3;
  /// Chosen by bench/deformer_quality.sh (bench/RESULTS.md): of 0, 0.01,
  /// 0.1, 1, 3, 10 and 30, 1 gave the lowest held-out error over the test rigs.
  double weight_decay = 1.0;
  std::uint64_t seed = 777;
  std::string basis = "learned";
  std::size_t basis_size = 16;
  std::string morph_rig;
  std::string morph_names;
  std::string clamp = "range";
  double holdout = 0.1;
  std::uint64_t split_seed = 777;
  /// neural: early stopping's share of the training samples; unset: none
  /// (measured worse than weight decay alone on the test rigs,
  /// bench/RESULTS.md, "Early stopping").
  std::optional<double> validation;
  std::size_t patience = 10;
  std::size_t validation_every = 50;
  std::size_t threads = 1;
  bool quiet = false;
  bool json = false;
};

void print_stats(std::ostream& os, const deformer::PoseModel& m) {
  const deformer::PoseModelStats& s = m.stats;
  auto line = [&](const char* what, const deformer::ErrorStats& model,
                  const deformer::ErrorStats& none) {
    os << "  " << what << " (" << model.samples << " samples): mean " << model.mean << ", max "
       << model.max << "  (uncorrected: mean " << none.mean << ", max " << none.max << ")\n";
  };
  os << "vertex error, scene units:\n";
  line("train   ", s.train, s.uncorrected_train);
  if (s.holdout.samples > 0) line("held out", s.holdout, s.uncorrected_holdout);
  if (!s.holdout_per_bone.empty() && s.holdout.samples > 0) {
    os << "held-out error by bone (weighted by how far the bone turns):\n";
    for (std::size_t b = 0; b < m.spec.bones.size() && b < s.holdout_per_bone.size(); ++b)
      os << "  " << printable(m.spec.bones[b].name) << ": " << s.holdout_per_bone[b] << "\n";
  }
  if (const Json& h = *m.hyper; h.contains("stopped_after"))
    os << "early stopping: lowest validation error (mean " << h["validation_error"].get<double>()
       << " on " << h["validation_samples"].get<std::size_t>() << " samples) after "
       << h["iterations"].get<std::size_t>() << " steps, stopped after "
       << h["stopped_after"].get<std::size_t>() << " of " << h["max_iterations"].get<std::size_t>()
       << "; trained again on all training samples for " << h["iterations"].get<std::size_t>()
       << " steps\n";
  os << "training time: " << s.seconds << " s\n";
}

core::Result<deformer::MorphBasisInput> morphs_from_rig(const TrainArgs& a,
                                                        const deformer::Dataset& d) {
  if (a.morph_rig.empty())
    return usage_error("--basis morphs needs --morphs-from RIG (the mesh with the morph targets)");
  scene::RigOptions ro;
  ro.mesh_name = d.mesh_name;
  auto rig = scene::load_rig_file(a.morph_rig, ro);
  if (!rig) return std::move(rig).error();
  if (rig->vertex_count() != d.vertex_count)
    return core::make_error(deformer::codes::MODEL_OPTIONS,
                            "the rig's mesh has " + std::to_string(rig->vertex_count()) +
                                " vertices, the dataset " + std::to_string(d.vertex_count));
  std::vector<std::string> wanted = split_list(a.morph_names);
  deformer::MorphBasisInput out;
  for (const scene::RigMorphTarget& t : rig->morph_targets) {
    if (!wanted.empty() && std::find(wanted.begin(), wanted.end(), t.name) == wanted.end())
      continue;
    out.names.push_back(t.name);
    out.deltas.insert(out.deltas.end(), t.position_deltas.begin(), t.position_deltas.end());
  }
  for (const std::string& w : wanted)
    if (std::find(out.names.begin(), out.names.end(), w) == out.names.end())
      return core::make_error(deformer::codes::MODEL_OPTIONS,
                              "the rig's mesh has no morph target \"" + w + "\"");
  if (out.names.empty())
    return core::make_error(deformer::codes::MODEL_OPTIONS, "the rig's mesh has no morph targets");
  return out;
}

int run_train(const TrainArgs& a) {
  // The output's name is checked before the training, not after it.
  auto npz = deformer::companion_path(a.output, ".npz", true);
  if (!npz) return report_error(a.output, npz.error(), kExitUsage);
  // The model's pair must not land on the dataset's pair (NAME.npz +
  // NAME.json): `train d.npz -o d.json` would replace the dataset's
  // description with the model and lose the dataset.
  {
    auto same = [](const std::filesystem::path& x, const std::filesystem::path& y) {
      std::error_code e1, e2;
      const auto cx = std::filesystem::weakly_canonical(x, e1);
      const auto cy = std::filesystem::weakly_canonical(y, e2);
      return !e1 && !e2 && cx == cy;
    };
    const std::filesystem::path data(a.dataset);
    std::filesystem::path data_json = data;
    data_json.replace_extension(".json");
    for (const std::filesystem::path& mine : {std::filesystem::path(a.output), *npz})
      for (const std::filesystem::path& theirs : {data, data_json})
        if (same(mine, theirs))
          return report_error(a.output,
                              usage_error("the model would be written over the dataset's " +
                                          theirs.filename().string() + ": give -o another name"),
                              kExitUsage);
  }
  auto d = deformer::load_dataset(a.dataset);
  if (!d) return report_error(a.dataset, d.error(), load_exit(d.error()));

  deformer::PoseModelOptions o;
  if (!a.model_alias.empty() && !a.model.empty())
    return report_error(a.model_alias,
                        usage_error("--model is the former name of --kind: give one of them"),
                        kExitUsage);
  const std::string& kind = !a.model.empty() ? a.model : a.model_alias;
  if (kind.empty() || kind == "linear")
    o.kind = deformer::ModelKind::kLinear;
  else if (kind == "neural")
    o.kind = deformer::ModelKind::kNeural;
  else
    return report_error(kind, usage_error("--kind is linear or neural"), kExitUsage);
  o.ridge.lambda = a.lambda;
  if (!parse_widths(a.hidden, o.mlp.hidden))
    return report_error(a.hidden, usage_error("--hidden is a list of widths, e.g. 128,128"),
                        kExitUsage);
  if (a.activation == "elu")
    o.mlp.hidden_activation = deformer::Activation::kELU;
  else if (a.activation == "relu")
    o.mlp.hidden_activation = deformer::Activation::kReLU;
  else if (a.activation == "tanh")
    o.mlp.hidden_activation = deformer::Activation::kTanh;
  else
    return report_error(a.activation, usage_error("--activation is elu, relu or tanh"), kExitUsage);
  o.mlp.iterations = a.iterations;
  o.mlp.batch_size = a.batch;
  o.mlp.adam.learning_rate = a.learning_rate;
  o.mlp.weight_decay = a.weight_decay;
  o.mlp.seed = a.seed;
  o.mlp.threads = a.threads;
  o.basis_size = a.basis_size;
  if (a.basis == "learned") {
    o.basis = deformer::NeuralBasis::kLearned;
  } else if (a.basis == "morphs") {
    o.basis = deformer::NeuralBasis::kMorphTargets;
    if (o.kind == deformer::ModelKind::kNeural) {
      auto m = morphs_from_rig(a, *d);
      if (!m)
        return report_error(a.morph_rig.empty() ? a.dataset : a.morph_rig, m.error(), kExitUsage);
      o.morphs = std::move(*m);
    }
  } else {
    return report_error(a.basis, usage_error("--basis is learned or morphs"), kExitUsage);
  }
  if (a.clamp == "none")
    o.clamp = deformer::WeightClamp::kNone;
  else if (a.clamp == "unit")
    o.clamp = deformer::WeightClamp::kUnit;
  else if (a.clamp == "range")
    o.clamp = deformer::WeightClamp::kTrainingRange;
  else
    return report_error(a.clamp, usage_error("--clamp is none, unit or range"), kExitUsage);
  o.holdout = a.holdout;
  o.split_seed = a.split_seed;
  if (a.validation && o.kind != deformer::ModelKind::kNeural)
    return report_error("--validation",
                        usage_error("--validation (early stopping) is for --kind neural"),
                        kExitUsage);
  o.validation = a.validation.value_or(0.0);
  o.mlp.patience = a.patience;
  o.mlp.validation_every = a.validation_every;

  // Progress on stderr: one line, rewritten, for runs long enough to wait on.
  deformer::TrainProgress progress;
  if (o.kind == deformer::ModelKind::kNeural) progress = training_progress(a.quiet);
  auto model = deformer::train_pose_model(*d, o, progress);
  if (!model) return report_error(a.dataset, model.error(), kExitInvalid);
  if (auto st = deformer::save_pose_model(*model, a.output); !st)
    return report_error(a.output, st.error(), kExitUsage);

  if (a.json) {
    Json doc{{"model", a.output},
             {"kind", deformer::model_kind_name(model->kind)},
             {"features", model->feature_count()},
             {"vertices", model->vertex_count},
             {"morphs", model->morph_count()},
             {"stats", deformer::stats_json(*model)}};
    print_json(std::move(doc));
  } else {
    std::cout << "wrote " << printable(a.output)
              << " (+ .npz): " << deformer::model_kind_name(model->kind) << " model, "
              << model->feature_count() << " features -> " << model->vertex_count
              << " vertex offsets";
    if (model->kind == deformer::ModelKind::kNeural)
      std::cout << " via " << model->morph_count() << " morphs";
    std::cout << "\n";
    print_stats(std::cout, *model);
  }
  return kExitOk;
}

// ------------------------------------------------------------------ eval ----

struct EvalArgs {
  std::string model;
  std::string dataset;
  bool json = false;
};

int run_eval(const EvalArgs& a) {
  auto m = deformer::load_pose_model(a.model);
  if (!m) return report_error(a.model, m.error(), load_exit(m.error()));
  auto d = deformer::load_dataset(a.dataset);
  if (!d) return report_error(a.dataset, d.error(), load_exit(d.error()));
  if (d->layout != m->layout || d->feature_count() != m->feature_count() ||
      d->vertex_count != m->vertex_count)
    return report_error(a.dataset,
                        core::make_error(codes::EVAL_MISMATCH,
                                         "the dataset (" + std::to_string(d->feature_count()) +
                                             " features, " + std::to_string(d->vertex_count) +
                                             " vertices) does not fit the model (" +
                                             std::to_string(m->feature_count()) + " features, " +
                                             std::to_string(m->vertex_count) + " vertices)"),
                        kExitInvalid);
  for (std::size_t b = 0; b < m->spec.bones.size(); ++b)
    if (d->spec.bones[b].name != m->spec.bones[b].name)
      return report_error(a.dataset,
                          core::make_error(codes::EVAL_MISMATCH,
                                           "input bone " + std::to_string(b) + " is \"" +
                                               d->spec.bones[b].name + "\" in the dataset but \"" +
                                               m->spec.bones[b].name + "\" in the model"),
                          kExitInvalid);
  auto err = deformer::evaluate_error(*m, *d);
  if (!err) return report_error(a.dataset, err.error(), kExitInvalid);
  // The uncorrected error: the deltas' own size.
  deformer::PoseModel none = *m;
  none.kind = deformer::ModelKind::kLinear;
  auto zero =
      deformer::LinearModel::make(m->feature_count(), 3 * m->vertex_count,
                                  std::vector<float>(m->feature_count() * 3 * m->vertex_count));
  if (!zero) return report_error(a.model, zero.error(), kExitInvalid);
  none.linear = std::move(*zero);
  auto base = deformer::evaluate_error(none, *d);
  if (!base) return report_error(a.dataset, base.error(), kExitInvalid);
  if (a.json) {
    Json doc{{"model", a.model},
             {"dataset", a.dataset},
             {"error", deformer::error_stats_json(*err)},
             {"uncorrected", deformer::error_stats_json(*base)}};
    print_json(std::move(doc));
  } else {
    std::cout << printable(a.model) << " on " << printable(a.dataset) << " (" << err->samples
              << " samples): mean vertex error " << err->mean << ", max " << err->max
              << " (uncorrected: mean " << base->mean << ", max " << base->max << ")\n";
  }
  return kExitOk;
}

}  // namespace

void add_deformer_train_commands(CLI::App& deformer, int& exit_code) {
  auto sa = std::make_shared<SampleArgs>();
  CLI::App* sample = deformer.add_subcommand(
      "sample",
      "Step 1: make a training dataset from a rig. Poses are sampled (seeded, the same on every "
      "machine): the rest pose, then --poses random poses, each input bone turned uniformly "
      "within its range on its enabled axes. For each pose the mesh is deformed by a reference "
      "deformer (Delta Mush or dual-quaternion skinning on top of linear blend skinning) or "
      "taken from a point cache aligned with the poses (--targets pc2), and the correction "
      "plain LBS misses is stored in bind space. Writes DATASET.npz (numpy-readable) and "
      "DATASET.json.");
  sample->add_option("rig", sa->rig, "Skinned mesh: glTF, GLB or VRM")
      ->required()
      ->type_name("RIG");
  sample->add_option("--mesh", sa->mesh,
                     "Mesh (or node) name; default: the skinned mesh the input bones move most");
  sample->add_option("--bones", sa->bones, "Input bones, comma-separated joint names, or \"all\"")
      ->type_name("NAMES");
  sample
      ->add_option("--spec", sa->spec,
                   "Input spec JSON instead of --bones/--axes/--range (per-bone axes and ranges, "
                   "curves; the form --write-spec writes)")
      ->type_name("SPEC.json");
  sample->add_option("--axes", sa->axes, "Axes to turn with --bones")->capture_default_str();
  sample->add_option("--range", sa->range, "Training range with --bones: ±degrees")
      ->capture_default_str();
  sample->add_option("--poses", sa->poses, "Random poses after the rest pose")
      ->capture_default_str();
  sample
      ->add_option("--action", sa->action,
                   "Sample the poses from an animation of the rig's glTF file instead (name or "
                   "index; \"\" = the first): the rest pose, then frames --start..--end")
      ->expected(0, 1)
      ->type_name("ANIMATION");
  sample->add_option("--bvh", sa->bvh, "Sample the poses from a BVH motion (bones by name)")
      ->type_name("FILE.bvh");
  sample
      ->add_option("--joint-map", sa->joint_map,
                   "With --bvh: JSON object, input bone (rig joint or VRM humanoid name) -> BVH "
                   "joint names tried in order, e.g. {\"leftUpperLeg\": [\"LeftUpLeg\"]}; "
                   "unmapped bones match by their own name")
      ->type_name("FILE.json");
  sample->add_option("--start", sa->start, "Action: first frame")->capture_default_str();
  sample->add_option("--end", sa->end, "Action: last frame (-1: the last)")->capture_default_str();
  sample
      ->add_option("--frames", sa->frames,
                   "Action: samples evenly spaced from start to end (0: every frame)")
      ->capture_default_str();
  sample->add_option("--fps", sa->fps, "Action, glTF: frames per second")->capture_default_str();
  sample->add_option("--seed", sa->seed, "Sampling seed")->capture_default_str();
  sample
      ->add_option("--targets", sa->targets,
                   "Reference result: delta-mush, dqs (dual-quaternion skinning), pc2, or "
                   "morph-animation (with --action: the animated morph target weights)")
      ->capture_default_str()
      ->type_name("SOURCE");
  sample
      ->add_option("--cache", sa->cache, "With --targets pc2: the point cache, one sample per pose")
      ->type_name("FILE.pc2");
  sample->add_option("--smooth-iterations", sa->smooth_iterations, "Delta Mush passes")
      ->capture_default_str();
  sample->add_option("--smooth-step", sa->smooth_step, "Delta Mush step in (0, 1]")
      ->capture_default_str();
  sample
      ->add_option("--layout", sa->layout,
                   "Features: axis-angle (3 per bone, the charkit models) or engine (6 per "
                   "bone, the .nmn input layout)")
      ->capture_default_str()
      ->type_name("LAYOUT");
  sample->add_option("-o,--output", sa->output, "Dataset file to write")
      ->required()
      ->type_name("DATASET.npz");
  sample->add_option("--write-spec", sa->write_spec, "Also write the input spec used")
      ->type_name("SPEC.json");
  sample->add_flag("--json", sa->json, "Print a JSON summary");
  sample->footer(
      "Exit status: 0 written, 1 invalid rig or cache, 2 usage or I/O error.\n"
      "Example: charkit deformer sample hero.glb --bones upperarm_l,lowerarm_l --range 60 "
      "--poses 300 -o arm.npz\n"
      "From an animation: charkit deformer sample hero.glb --bones all --action Walk --frames 60 "
      "-o walk.npz\n"
      "Next: charkit deformer train arm.npz -o arm_model.json\n"
      "Formats: docs/deformer/datasets.md; workflow: docs/deformer/workflow.md.");
  sample->callback([sa, sample, &exit_code] {
    sa->from_action = sample->get_option("--action")->count() > 0;
    exit_code = run_sample(*sa);
  });

  auto ta = std::make_shared<TrainArgs>();
  CLI::App* train = deformer.add_subcommand(
      "train",
      "Step 2: train a pose model on a dataset. linear: ridge regression in closed form, "
      "per-vertex "
      "offsets, no bias (the rest pose gives exactly zero); neural: an MLP predicting morph "
      "weights (Adam, standardised inputs, seeded mini-batches) over a learned basis (the "
      "mean delta + the top principal components) or the mesh's own morph targets. A seeded "
      "share of the samples is held out; the train and held-out errors, the uncorrected error "
      "and a per-bone breakdown are printed. Writes NAME.json + NAME.npz.");
  train->add_option("dataset", ta->dataset, "Dataset from `deformer sample`")
      ->required()
      ->type_name("DATASET.npz");
  train
      ->add_option("-o,--output", ta->output,
                   "Pose model file to write (NAME.json; NAME.npz is written beside it)")
      ->required()
      ->type_name("POSE_MODEL.json");
  train->add_option("--kind", ta->model, "Pose model kind: linear or neural")
      ->default_str("linear");
  // The option's former name (a "model" is a character model), hidden
  // and kept for one release.
  train->add_option("--model", ta->model_alias, "Former name of --kind")->group("");
  train->add_option("--lambda", ta->lambda, "linear: ridge weight λ")->capture_default_str();
  train->add_option("--hidden", ta->hidden, "neural: hidden layer widths")->capture_default_str();
  train->add_option("--activation", ta->activation, "neural: elu, relu or tanh")
      ->capture_default_str();
  train->add_option("--iterations", ta->iterations, "neural: Adam steps")->capture_default_str();
  train->add_option("--batch", ta->batch, "neural: samples per step")->capture_default_str();
  train->add_option("--lr", ta->learning_rate, "neural: learning rate (> 0)")
      ->check(positive_number())
      ->capture_default_str();
  train
      ->add_option("--weight-decay", ta->weight_decay,
                   "neural: decoupled weight decay (AdamW; 0: none), below 1 / --lr")
      ->check(non_negative_number())
      ->capture_default_str();
  train->add_option("--seed", ta->seed, "neural: initialisation and batch seed")
      ->capture_default_str();
  train->add_option("--basis", ta->basis, "neural: learned or morphs")->capture_default_str();
  train->add_option("--basis-size", ta->basis_size, "neural, learned basis: components")
      ->capture_default_str();
  train
      ->add_option("--morphs-from", ta->morph_rig,
                   "neural, --basis morphs: the rig whose morph targets form the basis")
      ->type_name("RIG");
  train->add_option("--morph-names", ta->morph_names,
                    "neural, --basis morphs: which morph targets (default: all)");
  train
      ->add_option("--clamp", ta->clamp,
                   "neural: weight clamping: none, unit ([0,1]) or range (training min/max)")
      ->capture_default_str();
  train->add_option("--holdout", ta->holdout, "Share of samples held out, in [0, 0.9]")
      ->capture_default_str();
  train->add_option("--split-seed", ta->split_seed, "Seed of the held-out split")
      ->capture_default_str();
  train
      ->add_option("--validation", ta->validation,
                   "neural: share of the training samples that chooses when to stop, in [0, 0.9] "
                   "(early stopping; 0: none); the network is then trained on all of them")
      ->default_str("0");
  train
      ->add_option("--patience", ta->patience,
                   "neural: checks without a lower validation error before training stops")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  train
      ->add_option("--check-every", ta->validation_every,
                   "neural: steps between two checks of the validation error")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  train
      ->add_option("--threads", ta->threads,
                   "neural: threads each step is split over (0: one per core); the model is the "
                   "same bits for the same seed and thread count (on AVX-512 CPUs for every "
                   "thread count)")
      ->check(CLI::Range(std::size_t{0}, std::size_t{64}))
      ->capture_default_str()
      ->type_name("N");
  train->add_flag("-q,--quiet", ta->quiet, "No progress line");
  train->add_flag("--json", ta->json, "Print a JSON summary with the statistics");
  train->footer(
      "Exit status: 0 written, 1 invalid dataset or training failed, 2 usage or I/O error.\n"
      "Example: charkit deformer train arm.npz --kind neural --hidden 64,64 -o arm_model.json\n"
      "Next: charkit deformer eval, bake, or export-nmn. Format: docs/deformer/pose_model.md.");
  train->callback([ta, &exit_code] { exit_code = run_train(*ta); });

  auto ea = std::make_shared<EvalArgs>();
  CLI::App* eval = deformer.add_subcommand(
      "eval",
      "Measure a pose model on a dataset (e.g. one sampled with another seed): mean and max "
      "vertex error in scene units, and the uncorrected error for comparison.");
  eval->add_option("model", ea->model, "Pose model from `deformer train`")
      ->required()
      ->type_name("POSE_MODEL.json");
  eval->add_option("dataset", ea->dataset, "Dataset with the same inputs and mesh")
      ->required()
      ->type_name("DATASET.npz");
  eval->add_flag("--json", ea->json, "Print JSON");
  eval->footer("Exit status: 0 measured, 1 invalid or mismatched files, 2 usage or I/O error.");
  eval->callback([ea, &exit_code] { exit_code = run_eval(*ea); });
}

}  // namespace charkit::app
