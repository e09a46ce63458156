// `charkit deformer export-nmn`, `import` and `bake`: the engine bridge of
// the pose-driven deformer (docs/deformer/workflow.md, nmn.md, bake.md).
// export-nmn writes a model trained in the engine's layout as it is, or
// retrains a dataset in that layout, as the `.nmn` + sidecar + morph
// targets; import turns an engine network (`.nmn` or `.onnx`) into a
// charkit pose model. The work is in charkit::deformer.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "charkit/core/json.h"
#include "charkit/core/mapped_file.h"
#include "charkit/deformer/bake.h"
#include "charkit/deformer/dataset.h"
#include "charkit/deformer/engine_import.h"
#include "charkit/deformer/nmn_export.h"
#include "charkit/deformer/nmn_sidecar.h"
#include "charkit/deformer/pose_model.h"
#include "charkit/scene/rig.h"
#include "cli_errors.h"
#include "commands.h"
#include "deformer_common.h"
#include "printable.h"

namespace charkit::app {
namespace {

using core::Json;

// ------------------------------------------------------------ export-nmn ----

struct ExportArgs {
  std::string source;  ///< DATASET.npz (retrain) or MODEL.json (written as it is)
  std::string rig;
  std::string output;
  std::string model_output;        ///< --pose-model
  std::string model_output_alias;  ///< --model, the former name of --pose-model
  std::string hidden = "128,128";
  std::size_t morphs = 128;
  std::size_t iterations = 5000;
  std::size_t batch = 128;
  double learning_rate = 1e-3;
  std::uint64_t seed = 777;
  bool quiet = false;
  bool json = false;
  /// The retraining options the user gave (a trained model takes none).
  std::vector<std::string> training_options_given;
};

bool is_pose_model_path(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext == ".json";
}

/// Writes the export's three files and prints what was written.
int finish_export(const ExportArgs& a, const deformer::NmnExport& e, bool retrained) {
  if (auto st = deformer::save_nmn_export(e, a.output); !st)
    return report_error(a.output, st.error(), kExitUsage);
  if (!a.model_output.empty())
    if (auto st = deformer::save_pose_model(e.model, a.model_output); !st)
      return report_error(a.model_output, st.error(), kExitUsage);
  const std::string sidecar = deformer::nmn_sidecar_path(a.output);
  const std::string morphs = deformer::nmn_morphs_path(a.output).string();
  const deformer::PoseModelStats& s = e.model.stats;
  if (a.json) {
    Json doc{{"nmn", a.output},
             {"sidecar", sidecar},
             {"morphsFile", morphs},
             {"retrained", retrained},
             {"inputs", e.network.input_count()},
             {"outputs", e.network.output_count()},
             {"bones", e.network.num_bones},
             {"curves", e.network.num_curves},
             {"numMorphs", e.network.num_morphs},
             {"reimportMaxAbsDiff", e.reimport_max_abs_diff},
             {"trainError", {{"mean", s.train.mean}, {"max", s.train.max}}},
             {"uncorrectedError",
              {{"mean", s.uncorrected_train.mean}, {"max", s.uncorrected_train.max}}}};
    if (!a.model_output.empty()) doc["model"] = a.model_output;
    print_json(std::move(doc));
    return kExitOk;
  }
  std::cout << "wrote " << printable(a.output) << ": global-mode network, "
            << e.network.input_count() << " inputs (" << e.network.num_bones << " bones x 6 + "
            << e.network.num_curves << " curves) -> " << e.network.num_morphs << " morph weights"
            << (retrained ? ", Linear+ELU on every layer (retrained)"
                          : ", the trained model's own network")
            << "\n"
            << "      " << printable(sidecar) << ": bone, curve and morph names\n"
            << "      " << printable(morphs) << ": the " << e.network.num_morphs + 1
            << " morph targets (morph 0 = the mean delta, weight 1)\n";
  if (!a.model_output.empty())
    std::cout << "      " << printable(a.model_output)
              << ": the same network as a charkit pose model (eval, bake, run)\n";
  std::cout << "re-read check: max |network - file| = " << e.reimport_max_abs_diff << " (limit "
            << deformer::kNmnExportTolerance << ")\n";
  if (s.train.samples > 0)
    std::cout << "training error: mean " << s.train.mean << ", max " << s.train.max
              << " (uncorrected: mean " << s.uncorrected_train.mean << ")\n";
  std::cout << "The engine's editor looks for <Intermediate>/<ClassName>/<ClassName>.nmn.\n";
  return kExitOk;
}

/// A trained pose model written as it is: no retraining, no rig.
int export_trained_model(const ExportArgs& a) {
  if (!a.rig.empty())
    return report_error(a.rig,
                        usage_error("a trained model is written as it is and needs no rig; give "
                                    "a RIG only with a DATASET to retrain"),
                        kExitUsage);
  if (!a.training_options_given.empty())
    return report_error(a.training_options_given.front(),
                        usage_error(a.training_options_given.front() +
                                    " is a retraining option; a trained model is written as it "
                                    "is (export a DATASET with its RIG to retrain)"),
                        kExitUsage);
  if (!a.model_output.empty())
    return report_error(a.model_output,
                        usage_error("--pose-model saves a retrained network; the model given "
                                    "is already one"),
                        kExitUsage);
  auto m = deformer::load_pose_model(a.source);
  if (!m) return report_error(a.source, m.error(), load_exit(m.error()));
  auto e = deformer::export_model_nmn(*m, {});
  if (!e) return report_error(a.source, e.error(), kExitInvalid);
  return finish_export(a, *e, false);
}

int run_export(ExportArgs a) {
  if (!a.model_output_alias.empty()) {
    if (!a.model_output.empty())
      return report_error(
          a.model_output_alias,
          usage_error("--model is the former name of --pose-model: give one of them"), kExitUsage);
    a.model_output = a.model_output_alias;
  }
  if (is_pose_model_path(a.source)) return export_trained_model(a);
  if (a.rig.empty())
    return report_error(a.source,
                        usage_error("retraining a dataset needs the RIG it was sampled from (the "
                                    "rest rotations): charkit deformer export-nmn DATASET RIG -o "
                                    "NAME.nmn"),
                        kExitUsage);
  auto d = deformer::load_dataset(a.source);
  if (!d) return report_error(a.source, d.error(), load_exit(d.error()));
  scene::RigOptions ro;
  ro.mesh_name = d->mesh_name;
  auto rig = scene::load_rig_file(a.rig, ro);
  if (!rig) return report_error(a.rig, rig.error(), load_exit(rig.error()));
  deformer::NmnExportOptions o;
  if (!parse_widths(a.hidden, o.hidden))
    return report_error(a.hidden, usage_error("--hidden is a list of widths, e.g. 128,128"),
                        kExitUsage);
  o.morphs = a.morphs;
  o.iterations = a.iterations;
  o.batch_size = a.batch;
  o.learning_rate = a.learning_rate;
  o.seed = a.seed;
  o.progress = training_progress(a.quiet);
  auto e = deformer::export_nmn(*rig, *d, o);
  if (!e) return report_error(a.source, e.error(), kExitInvalid);
  return finish_export(a, *e, true);
}

// ---------------------------------------------------------------- import ----

struct ImportArgs {
  std::string network;
  std::string rig;
  std::string mesh;
  std::string output;
  std::string spec;
  std::string bones;
  std::string axes = "xyz";
  double range = 45.0;
  std::string sidecar;
  std::string morphs;
  std::string clamp = "auto";
  bool json = false;
};

int run_import(const ImportArgs& a) {
  auto file = core::MappedFile::open(a.network);
  if (!file) return report_error(a.network, file.error(), kExitUsage);
  scene::RigOptions ro;
  ro.mesh_name = a.mesh;
  auto rig = scene::load_rig_file(a.rig, ro);
  if (!rig) return report_error(a.rig, rig.error(), load_exit(rig.error()));
  // The sidecar: --sidecar, else NETWORK.bmd_ue.json when present.
  std::optional<deformer::NmnSidecar> sidecar;
  std::string sidecar_path = a.sidecar.empty() ? deformer::nmn_sidecar_path(a.network) : a.sidecar;
  std::error_code ec;
  if (!a.sidecar.empty() || std::filesystem::is_regular_file(sidecar_path, ec)) {
    auto bytes = deformer::read_file_bytes(sidecar_path, std::size_t{64} << 20);
    if (!bytes) return report_error(sidecar_path, bytes.error(), kExitUsage);
    auto s = deformer::read_nmn_sidecar(core::as_chars(core::Bytes(*bytes)));
    if (!s) return report_error(sidecar_path, s.error(), kExitInvalid);
    sidecar = std::move(*s);
  }
  // The morph targets the network drives: --morphs, else NETWORK.morphs.npz
  // when present (what export-nmn writes beside the .nmn), put onto the mesh.
  std::string morphs_path =
      a.morphs.empty() ? deformer::nmn_morphs_path(a.network).string() : a.morphs;
  std::size_t morphs_added = 0;
  std::string missing_morphs;  // looked for beside the network, not there
  if (!a.morphs.empty() || std::filesystem::is_regular_file(morphs_path, ec)) {
    auto bytes = deformer::read_file_bytes(morphs_path, std::size_t{4} << 30);
    if (!bytes) return report_error(morphs_path, bytes.error(), kExitUsage);
    auto targets = deformer::read_nmn_morphs(core::Bytes(*bytes), rig->vertex_count());
    if (!targets) return report_error(morphs_path, targets.error(), load_exit(targets.error()));
    morphs_added = targets->size();
    const std::size_t replaced = deformer::add_morph_targets(*rig, std::move(*targets));
    detail(morphs_path, std::to_string(morphs_added) + " morph targets (" +
                            std::to_string(replaced) + " replace the mesh's own)");
  } else {
    missing_morphs = morphs_path;
    morphs_path.clear();
  }
  // The inputs: --spec / --bones, else the sidecar's bones and curves.
  deformer::InputSpec spec;
  if (a.spec.empty() && a.bones.empty() && sidecar) {
    for (const std::string& b : sidecar->bones) spec.bones.push_back({b, {}});
    for (const std::string& c : sidecar->curves) spec.curves.push_back({c, 0.0, 1.0});
  } else {
    auto s = input_spec_from(a.spec, a.bones, a.axes, a.range, *rig);
    if (!s) return report_error(a.spec.empty() ? a.network : a.spec, s.error(), kExitUsage);
    spec = std::move(*s);
  }
  deformer::EngineImportOptions o;
  o.missing_morphs_file = missing_morphs;
  if (a.clamp == "unit")
    o.clamp = deformer::WeightClamp::kUnit;
  else if (a.clamp == "none")
    o.clamp = deformer::WeightClamp::kNone;
  else if (a.clamp != "auto")
    return report_error(a.clamp, usage_error("--clamp is auto, unit or none"), kExitUsage);
  auto m = deformer::import_engine_network(file->bytes(), a.network, sidecar, *rig, spec, o);
  if (!m) return report_error(a.network, m.error(), kExitInvalid);
  if (m->hyper->contains("warnings"))
    for (const Json& w : (*m->hyper)["warnings"])
      report_warning(a.network, w.value("code", ""), w.value("message", ""));
  if (auto st = deformer::save_pose_model(*m, a.output); !st)
    return report_error(a.output, st.error(), kExitUsage);
  if (a.json) {
    Json doc{{"model", a.output},
             {"network", a.network},
             {"inputs", m->feature_count()},
             {"morphs", m->morph_names},
             {"clamp", deformer::clamp_name(m->clamp)},
             {"outputs", m->hyper->value("outputs", "unknown")},
             {"sidecar", sidecar ? Json(sidecar_path) : Json(nullptr)},
             {"morphTargets", morphs_path.empty() ? Json(nullptr) : Json(morphs_path)}};
    print_json(std::move(doc));
    return kExitOk;
  }
  std::cout << "wrote " << printable(a.output) << " (+ .npz): " << printable(a.network) << " as a "
            << "charkit pose model, " << m->feature_count() << " inputs (" << spec.bones.size()
            << " bones x 6 + " << spec.curves.size() << " curves) -> " << m->morph_count()
            << " morph targets "
            << (morphs_path.empty() ? std::string("of the mesh") : "from " + printable(morphs_path))
            << (m->fixed_first_morph ? " (morph 0 fixed at 1)" : "") << ", weights clamped "
            << deformer::clamp_name(m->clamp)
            << (m->hyper->value("outputs", "") == "basisCoefficients"
                    ? " (the sidecar says the outputs are learned-basis coefficients)"
                    : "")
            << "\n";
  return kExitOk;
}

// ------------------------------------------------------------------ bake ----

struct BakeArgs {
  std::string model;
  std::string rig;
  std::string output;
  std::string library_out;
  std::string poses;
  std::size_t sample = 0;
  std::uint64_t seed = 777;
  std::string prefix;
  float epsilon = 0.0F;
  bool json = false;
};

int run_bake(const BakeArgs& a) {
  auto m = deformer::load_pose_model(a.model);
  if (!m) return report_error(a.model, m.error(), load_exit(m.error()));
  auto file = core::MappedFile::open(a.rig);
  if (!file) return report_error(a.rig, file.error(), kExitUsage);
  scene::RigOptions ro;
  ro.mesh_name = m->mesh_name;
  auto rig = scene::load_rig(file->bytes(), ro);
  if (!rig) return report_error(a.rig, rig.error(), load_exit(rig.error()));
  // The pose library: a file, or sampled poses (without the rest pose,
  // whose shape key would be all zero).
  std::vector<deformer::PoseLibraryEntry> poses;
  if (!a.poses.empty()) {
    if (a.sample > 0)
      return report_error(a.poses, usage_error("give --poses or --sample, not both"), kExitUsage);
    auto bytes = deformer::read_file_bytes(a.poses, std::size_t{64} << 20);
    if (!bytes) return report_error(a.poses, bytes.error(), kExitUsage);
    auto lib = deformer::read_pose_library(core::as_chars(core::Bytes(*bytes)), m->spec);
    if (!lib) return report_error(a.poses, lib.error(), kExitInvalid);
    poses = std::move(*lib);
  } else if (a.sample > 0) {
    deformer::SampleOptions so;
    so.random_poses = a.sample;
    so.seed = a.seed;
    auto sampled = deformer::sample_poses(m->spec, so);
    if (!sampled) return report_error(a.model, sampled.error(), kExitUsage);
    const int digits = static_cast<int>(std::to_string(a.sample).size());
    for (std::size_t i = 1; i < sampled->size(); ++i) {
      std::string n = std::to_string(i);
      n.insert(0, static_cast<std::size_t>(std::max(0, digits - static_cast<int>(n.size()))), '0');
      poses.push_back({"pose_" + n, std::move((*sampled)[i])});
    }
  } else {
    return report_error(a.model,
                        usage_error("give the poses to bake: --poses LIBRARY.json or --sample N"),
                        kExitUsage);
  }
  deformer::BakeOptions o;
  o.prefix = a.prefix;
  o.epsilon = a.epsilon;
  const std::string ext = std::filesystem::path(a.output).extension().string();
  o.glb = ext != ".gltf";
  auto r = deformer::bake_shape_keys(file->bytes(), *rig, *m, poses, o);
  if (!r) return report_error(a.rig, r.error(), kExitInvalid);
  const std::string library =
      a.library_out.empty()
          ? std::filesystem::path(a.output).replace_extension(".poses.json").string()
          : a.library_out;
  if (auto st = deformer::write_file_bytes(a.output, r->gltf); !st)
    return report_error(a.output, st.error(), kExitUsage);
  const auto* lj = reinterpret_cast<const std::uint8_t*>(r->pose_library_json.data());
  if (auto st = deformer::write_file_bytes(library, std::span(lj, r->pose_library_json.size()));
      !st)
    return report_error(library, st.error(), kExitUsage);
  if (a.json) {
    Json doc{{"output", a.output},
             {"poseLibrary", library},
             {"shapeKeys", r->shape_keys},
             {"vertices", rig->vertex_count()}};
    print_json(std::move(doc));
    return kExitOk;
  }
  std::cout << "wrote " << printable(a.output) << ": " << r->shape_keys.size()
            << " relative shape keys on mesh \"" << printable(rig->mesh_name) << "\" ("
            << rig->vertex_count() << " vertices), everything else of " << printable(a.rig)
            << " kept\n"
            << "      " << printable(library) << ": the pose of each shape key\n";
  return kExitOk;
}

}  // namespace

void add_deformer_bridge_commands(CLI::App& deformer, int& exit_code) {
  auto ea = std::make_shared<ExportArgs>();
  CLI::App* ex = deformer.add_subcommand(
      "export-nmn",
      "Export to Unreal's ML Deformer (Neural Morph Model, global mode). The engine runs its own "
      "network in its own input layout (6 floats per bone: the first two rows of the bone's "
      "local rotation matrix). A trained MODEL.json in that layout (a neural model trained on an "
      "engine-layout dataset, learned basis, no clamp) is written as it is: the network you "
      "evaluated is the one that ships. A DATASET.npz is retrained the engine's way: engine "
      "features from the RIG's rest rotations, one averaged input std for the bones and one for "
      "the curves, Linear+ELU on every layer, outputs = weights of a learned basis (the mean "
      "delta, always 1, plus the top principal components). The file is written, read back and "
      "run: it must match the network within 1e-5. Writes NAME.nmn, NAME.bmd_ue.json (names) "
      "and NAME.morphs.npz (the morph targets the weights drive).");
  ex->add_option("source", ea->source,
                 "A trained pose model (written as it is) or a dataset from `deformer sample` "
                 "(retrained)")
      ->required()
      ->type_name("MODEL.json|DATASET.npz");
  ex->add_option("rig", ea->rig, "With a DATASET: the rig it was sampled from (rest rotations)")
      ->type_name("RIG");
  ex->add_option("-o,--output", ea->output, "Network file to write")
      ->required()
      ->type_name("NAME.nmn");
  ex->add_option("--pose-model", ea->model_output,
                 "Also save the retrained network as a charkit pose model (for eval, bake, run)")
      ->type_name("NAME.json");
  // The option's former name, hidden and kept for one release.
  ex->add_option("--model", ea->model_output_alias, "Former name of --pose-model")->group("");
  std::vector<CLI::Option*> retraining;
  retraining.push_back(ex->add_option("--hidden", ea->hidden, "Retraining: hidden layer widths")
                           ->capture_default_str());
  retraining.push_back(ex->add_option("--morphs", ea->morphs,
                                      "Retraining: network outputs, principal components of the "
                                      "deltas")
                           ->capture_default_str());
  retraining.push_back(ex->add_option("--iterations", ea->iterations, "Retraining: Adam steps")
                           ->capture_default_str());
  retraining.push_back(
      ex->add_option("--batch", ea->batch, "Retraining: samples per step")->capture_default_str());
  retraining.push_back(ex->add_option("--lr", ea->learning_rate, "Retraining: learning rate (> 0)")
                           ->check(positive_number())
                           ->capture_default_str());
  retraining.push_back(
      ex->add_option("--seed", ea->seed, "Retraining: initialisation and batch seed")
          ->capture_default_str());
  ex->add_flag("-q,--quiet", ea->quiet, "No progress line");
  ex->add_flag("--json", ea->json, "Print a JSON summary");
  ex->footer(
      "Exit status: 0 written, 1 invalid model, dataset or rig, or the check failed, 2 usage or "
      "I/O error.\nExamples: charkit deformer export-nmn arm_model.json -o MLD_Arm.nmn\n"
      "          charkit deformer export-nmn arm.npz hero.glb -o MLD_Arm.nmn\n"
      "Layout: docs/deformer/nmn.md.");
  ex->preparse_callback([ea](std::size_t) { ea->training_options_given.clear(); });
  ex->callback([ea, retraining, &exit_code] {
    for (CLI::Option* o : retraining)
      if (o->count() > 0) ea->training_options_given.push_back(o->get_name());
    exit_code = run_export(*ea);
  });

  auto ia = std::make_shared<ImportArgs>();
  CLI::App* im = deformer.add_subcommand(
      "import",
      "Import an engine network (.nmn in global mode, or an ONNX MLP) as a charkit pose model, to "
      "evaluate, bake and run it like a trained one. Its inputs are the engine layout (6 floats "
      "per bone + curves) of the bones given by --spec or --bones, else by the sidecar "
      "(NETWORK.bmd_ue.json); the counts must agree. Its outputs weigh morph targets: those of "
      "--morphs (default NETWORK.morphs.npz, as export-nmn writes it, when present) put onto the "
      "rig's mesh, and the mesh's own; those the sidecar names, else the mesh's first ones in "
      "order. Weights of morph targets are clamped to [0, 1]; outputs the sidecar records as "
      "learned-basis coefficients (charkit's export-nmn) are not (--clamp auto).");
  im->add_option("network", ia->network, "Engine network")->required()->type_name("NET.nmn|.onnx");
  im->add_option("rig", ia->rig, "Rig with the morph targets")->required()->type_name("RIG");
  im->add_option("-o,--output", ia->output, "Pose model file to write")
      ->required()
      ->type_name("NAME.json");
  im->add_option("--mesh", ia->mesh, "Mesh (or node) name; default: the first skinned mesh");
  im->add_option("--spec", ia->spec, "Input spec JSON")->type_name("SPEC.json");
  im->add_option("--bones", ia->bones, "Input bones, comma-separated (instead of --spec)");
  im->add_option("--sidecar", ia->sidecar, "Sidecar (default: NETWORK.bmd_ue.json if present)")
      ->type_name("FILE");
  im->add_option("--morphs", ia->morphs,
                 "Morph targets to put on the mesh (default: NETWORK.morphs.npz if present)")
      ->type_name("NAME.morphs.npz");
  im->add_option("--clamp", ia->clamp,
                 "auto (none for learned-basis coefficients, else unit), unit ([0, 1]) or none")
      ->capture_default_str();
  im->add_flag("--json", ia->json, "Print a JSON summary");
  im->footer(
      "Exit status: 0 written, 1 invalid or mismatched network, sidecar or rig, 2 usage or I/O "
      "error.\nExample: charkit deformer import MLD_Arm.nmn hero.glb -o arm_engine.json");
  im->callback([ia, &exit_code] { exit_code = run_import(*ia); });

  auto ba = std::make_shared<BakeArgs>();
  CLI::App* bake = deformer.add_subcommand(
      "bake",
      "Bake a pose model into relative shape keys: for each pose of a pose library (--poses FILE, "
      "or "
      "--sample N seeded poses) the model's bind-space correction becomes one morph target of "
      "the rig's mesh, added to a copy of the rig's glTF/GLB with everything else kept "
      "(materials, animations, existing morph targets). A pose-library JSON records each shape "
      "key's pose (bone rotations as quaternions and XYZ Euler angles, curve values), so a "
      "runtime can drive the keys.");
  bake->add_option("model", ba->model, "Pose model from `deformer train` or `import`")
      ->required()
      ->type_name("POSE_MODEL.json");
  bake->add_option("rig", ba->rig, "The rig's glTF/GLB file")->required()->type_name("RIG");
  bake->add_option("-o,--output", ba->output, "Baked file (.glb, or .gltf for JSON)")
      ->required()
      ->type_name("OUT.glb");
  bake->add_option("--poses", ba->poses, "Pose library to bake (the JSON bake writes)")
      ->type_name("LIBRARY.json");
  bake->add_option("--sample", ba->sample, "Bake N seeded random poses instead");
  bake->add_option("--seed", ba->seed, "Seed of --sample")->capture_default_str();
  bake->add_option("--library", ba->library_out, "Pose library to write (default OUT.poses.json)")
      ->type_name("FILE");
  bake->add_option("--prefix", ba->prefix, "Shape key name = prefix + pose name");
  bake->add_option("--epsilon", ba->epsilon, "Offsets with |d| <= epsilon are written as 0")
      ->capture_default_str();
  bake->add_flag("--json", ba->json, "Print a JSON summary");
  bake->footer(
      "Exit status: 0 written, 1 invalid model, rig or pose library, 2 usage or I/O error.\n"
      "Example: charkit deformer bake arm_model.json hero.glb --sample 8 -o hero_baked.glb\n"
      "Format: docs/deformer/bake.md.");
  bake->callback([ba, &exit_code] { exit_code = run_bake(*ba); });
}

}  // namespace charkit::app
