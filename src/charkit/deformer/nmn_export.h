// Export of a trained pose-driven deformer to the Unreal ML Deformer
// "Neural Morph Model" network file (`.nmn`, global mode): the engine runs
// its own network in its own input layout. A neural model trained in that
// layout is written as it is (export_model_nmn: what was previewed is what
// ships); any other model is retrained on its dataset the way the engine's
// training scripts do it (export_nmn: engine features, averaged input std,
// Linear+ELU on every layer). Either way the file is written, read back and
// checked against the network (docs/deformer/nmn.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "charkit/core/result.h"
#include "charkit/deformer/dataset.h"
#include "charkit/deformer/nmn.h"
#include "charkit/deformer/nmn_sidecar.h"
#include "charkit/deformer/pose_model.h"
#include "charkit/scene/rig.h"

namespace charkit::deformer {

/// The runtime name the engine's `.nmn` loader expects (it ensures that the
/// name equals this and only then builds the model with that runtime).
inline constexpr const char* kNmnRuntimeName = "NNERuntimeBasicCpu";
/// Largest |trained MLP − re-read `.nmn`| accepted on a dataset row.
inline constexpr double kNmnExportTolerance = 1e-5;

struct NmnExportOptions {
  /// Hidden layer widths (the engine's global default: two of 128).
  std::vector<std::size_t> hidden = {128, 128};
  /// Learned basis size k: the mean delta (morph 0, weight 1) plus the top-k
  /// principal components; capped at samples - 1. The network has k outputs.
  std::size_t morphs = 128;
  std::size_t iterations = 5000;
  std::size_t batch_size = 128;
  double learning_rate = 1e-3;
  std::uint64_t seed = 777;
  /// Written into the `.nmn`; the engine only accepts kNmnRuntimeName.
  std::string runtime_name = kNmnRuntimeName;
  /// (steps done, total steps, mini-batch loss), as MlpOptions::progress.
  std::function<void(std::size_t, std::size_t, double)> progress;
};

struct NmnExport {
  /// Global mode; main model Sequence[Linear, ELU, Linear, ELU, …];
  /// NumMorphs = the network's outputs (k, without the mean-delta morph 0).
  NmnNetwork network;
  /// Bone, curve and morph names; morph_targets has k + 1 names ("mean",
  /// "pc1", …): morph 0 is the mean delta the network does not drive.
  NmnSidecar sidecar;
  /// The same network as a pose model: layout kEngine, kind kNeural, basis
  /// kLearned, morph 0 = mean delta fixed at 1, clamp kTrainingRange.
  PoseModel model;
  /// Max |trained MLP − NmnRunner(read_nmn(write_nmn(network)))| over every
  /// dataset row and output.
  double reimport_max_abs_diff = 0;
};

/// The dataset's features in the engine layout (6 floats per bone as
/// engine_pose_features gives them with the rig's rest local rotations, then
/// the curves). An axis-angle dataset has each pose's rotations rebuilt from
/// its rotation vectors; an engine-layout dataset is returned as is.
/// Errors: NMN_EXPORT_DATASET, NMN_EXPORT_SPEC (a spec bone the rig lacks).
core::Result<std::vector<float>> engine_features_of(const scene::Rig& rig, const Dataset& dataset);

/// The engine's input normalisation of an N x F engine feature matrix: the
/// mean per feature; one std for all bone floats (the average of their
/// population standard deviations, + 1e-5) and one for all curve floats
/// (likewise). Writes F values to mean and std.
void engine_input_normalisation(std::span<const float> features, std::size_t rows,
                                std::size_t bones, std::size_t curves, std::vector<float>& mean,
                                std::vector<float>& std);

/// Retrain in the engine layout (every sample trained on) and build the
/// `.nmn` with export_model_nmn; the model comes back unclamped, as the file
/// runs, and the sidecar records the training targets' ranges. Errors: NMN_EXPORT_DATASET
/// (invalid dataset, fewer than 2 samples, vertex count other than the
/// rig's, deltas that do not vary), NMN_EXPORT_SPEC, NMN_EXPORT_OPTIONS,
/// NMN_EXPORT_MISMATCH (the re-read file differs from the trained network by
/// more than kNmnExportTolerance), and the MLP / `.nmn` writer's errors.
core::Result<NmnExport> export_nmn(const scene::Rig& rig, const Dataset& dataset,
                                   const NmnExportOptions& options);

/// Whether a trained pose model can be written to an `.nmn` as it is, with
/// no retraining: a neural model in the engine layout whose outputs weigh a
/// learned basis (morph 0 = the mean delta, fixed at 1), unclamped (an
/// `.nmn` records no clamp), with activations the file has (ELU, ReLU, tanh
/// or none). Error: NMN_EXPORT_MODEL, saying which condition fails.
core::Status check_nmn_exportable(const PoseModel& model);

/// Why check_nmn_exportable refuses the model, in words ("it is a linear
/// model, ..."), or "" when the model's kind, layout, basis and clamp allow
/// it (validate() is not run): what a user interface shows before exporting.
std::string nmn_export_refusal(const PoseModel& model);

/// The `.nmn` export of a trained model as it is (check_nmn_exportable): its
/// network, input mean and std, morphs and names, written, read back and run
/// against the model on `check_rows` (row-major, feature_count() floats a
/// row; empty: 64 rows drawn around the model's input mean, seeded). The
/// sidecar's output ranges are the model's training weight ranges when it
/// holds them, else the range of its outputs over the check rows. Errors:
/// NMN_EXPORT_MODEL, NMN_EXPORT_DATASET (rows not a whole number of
/// feature rows), NMN_EXPORT_OPTIONS (runtime name), NMN_EXPORT_MISMATCH,
/// the writer's and reader's errors.
core::Result<NmnExport> export_model_nmn(const PoseModel& model, std::span<const float> check_rows,
                                         std::string_view runtime_name = kNmnRuntimeName);

/// "dir/NAME.nmn" -> "dir/NAME.morphs.npz".
std::filesystem::path nmn_morphs_path(const std::filesystem::path& nmn_path);

/// Writes NAME.nmn, NAME.bmd_ue.json (nmn_sidecar_path, with "model" set to
/// the `.nmn` file name) and NAME.morphs.npz: "morphs", float32 (1 + k) x V x 3,
/// the bind-space morph target deltas (morph 0 = mean delta), and "names",
/// uint8, the morph names in UTF-8 joined by '\n' (the engine asset needs
/// the morphs too; the `.nmn` holds only the network). Errors: NMN_EXPORT_SHAPE
/// (inconsistent export), NMN_WRITE, NPZ_*, IO_*.
core::Status save_nmn_export(const NmnExport& e, const std::filesystem::path& nmn_path);

/// Reads a NAME.morphs.npz as save_nmn_export writes it (or a tool writes in
/// that layout): the morph targets, named, for a mesh of `vertex_count`
/// vertices. Errors: NPZ_*/NPY_* (the archive), IMPORT_MORPHS (a member
/// missing or of another dtype or shape, a vertex count other than the
/// mesh's, as many names as morphs, an empty or repeated name).
core::Result<std::vector<scene::RigMorphTarget>> read_nmn_morphs(core::Bytes npz,
                                                                 std::size_t vertex_count);

/// Puts `targets` onto the rig's mesh: a target whose name the mesh already
/// has replaces that one's deltas, the others are appended in order.
/// Returns how many were replaced.
std::size_t add_morph_targets(scene::Rig& rig, std::vector<scene::RigMorphTarget> targets);

}  // namespace charkit::deformer
