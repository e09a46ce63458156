// A trained pose-driven deformer: linear (ridge, per-vertex offsets) or
// neural (an MLP predicting morph weights over a basis of morph targets),
// with its training statistics and its own file pair pose_model.json +
// pose_model.npz (docs/deformer/pose_model.md).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "charkit/core/json_fwd.h"
#include "charkit/core/result.h"
#include "charkit/deformer/dataset.h"
#include "charkit/deformer/mlp.h"
#include "charkit/deformer/pose.h"
#include "charkit/deformer/ridge.h"

namespace charkit::deformer {

enum class ModelKind { kLinear, kNeural };
/// What the neural model's outputs weigh.
enum class NeuralBasis {
  /// Morph 0 = the mean training delta, always weight 1; then the top-k
  /// principal components of the centred deltas, scaled so that their
  /// training weights have unit variance.
  kLearned,
  /// The morph targets given in PoseModelOptions::morphs; each sample's
  /// weights found by least squares against its delta.
  kMorphTargets,
};
/// Clamping of predicted weights (the fixed morph 0 is never clamped).
enum class WeightClamp { kNone, kUnit, kTrainingRange };

/// What a dataset's deltas, and so the model's offsets, are. The model does
/// not depend on it; it is recorded (hyper "targets") so that whoever
/// applies the offsets knows where they go.
enum class DeltaTargets {
  /// Added to the bind mesh before skinning: the correction skinning misses
  /// (`deformer sample`, the engine's convention). Zero means plain skinning.
  kBindCorrection,
  /// Added to the rest mesh, no skinning: the whole deformation from the
  /// rest pose (the Blender pose-deformer description's linear model).
  kRestDeformation,
};

const char* model_kind_name(ModelKind k);
const char* clamp_name(WeightClamp c);
/// "bind-correction", "rest-deformation".
const char* targets_name(DeltaTargets t);

struct MorphBasisInput {
  std::vector<std::string> names;
  std::vector<float> deltas;  ///< names.size() x 3V, bind space
};

struct PoseModelOptions {
  ModelKind kind = ModelKind::kLinear;
  RidgeOptions ridge;
  MlpOptions mlp;
  NeuralBasis basis = NeuralBasis::kLearned;
  std::size_t basis_size = 16;  ///< principal components (kLearned), at most samples - 1
  MorphBasisInput morphs;       ///< kMorphTargets
  /// Default kTrainingRange: the engine's per-morph min/max; kUnit is the
  /// [0, 1] of the Blender pose-deformer description (meant for morph-target
  /// weights).
  WeightClamp clamp = WeightClamp::kTrainingRange;
  /// Fraction of the samples other than sample 0 (the rest pose, always
  /// trained on) held out for the held-out error; chosen by a seeded shuffle.
  double holdout = 0.1;
  std::uint64_t split_seed = 777;
  /// Early stopping (neural). This fraction of the training samples other
  /// than the rest pose, drawn after the held-out ones from the same seeded
  /// shuffle, is set aside; the network trains on the others and is checked
  /// on them every mlp.validation_every steps, stopping after mlp.patience
  /// checks without a lower mean error. The network is then trained again
  /// on all training samples for the step count of the lowest error, so the
  /// held-out samples never choose anything and no training sample is lost.
  /// 0: no early stopping, mlp.iterations steps. In [0, 0.9].
  double validation = 0.0;
  /// Recorded in the model's hyper["targets"].
  DeltaTargets targets = DeltaTargets::kBindCorrection;
};

struct ErrorStats {
  std::size_t samples = 0;
  double mean = 0.0;  ///< mean vertex distance (scene units) over samples and vertices
  double max = 0.0;   ///< largest vertex distance
};

struct PoseModelStats {
  ErrorStats train, holdout;
  /// Error of predicting no correction (= the deltas' own size): the
  /// uncorrected skinning error the model is meant to remove.
  ErrorStats uncorrected_train, uncorrected_holdout;
  /// Per input bone: the held-out samples' mean error, each sample weighted
  /// by how far that bone is turned in it (docs/deformer/pose_model.md).
  std::vector<double> holdout_per_bone;
  double seconds = 0.0;
  double final_loss = 0.0;  ///< neural: training MSE of the weights
};

struct PoseModel {
  InputSpec spec;
  FeatureLayout layout = FeatureLayout::kAxisAngle;
  std::string mesh_name;
  std::size_t vertex_count = 0;
  ModelKind kind = ModelKind::kLinear;
  LinearModel linear;  ///< kLinear: features -> 3V offsets
  Mlp mlp;             ///< kNeural: features -> weights of morphs[first_free..]
  NeuralBasis basis = NeuralBasis::kLearned;
  std::vector<std::string> morph_names;
  std::vector<float> morphs;       ///< morph_names.size() x 3V
  bool fixed_first_morph = false;  ///< morph 0 always has weight 1 (kLearned)
  WeightClamp clamp = WeightClamp::kNone;
  std::vector<float> weight_min, weight_max;            ///< per predicted weight (training range)
  core::JsonBox hyper = core::JsonBox::empty_object();  ///< the options it was trained with
  PoseModelStats stats;

  std::size_t feature_count() const {
    return layout == FeatureLayout::kEngine ? spec.engine_feature_count() : spec.feature_count();
  }
  std::size_t morph_count() const { return morph_names.size(); }
  /// Weights the network predicts (morphs without the fixed one).
  std::size_t predicted_weights() const { return morph_count() - (fixed_first_morph ? 1 : 0); }
};

/// Sizes agree, values finite. Errors: MODEL_SHAPE, MODEL_NOT_FINITE.
core::Status validate(const PoseModel& model);

/// Progress of training: (iteration done, of total, current loss).
using TrainProgress = std::function<void(std::size_t, std::size_t, double)>;

/// {"samples", "mean", "max"}.
core::Json error_stats_json(const ErrorStats& e);
/// The statistics as `deformer train --json` and the C API give them:
/// {"train", "holdout", "uncorrectedTrain", "uncorrectedHoldout" (each
/// error_stats_json), "holdoutPerBone": {bone: error}, "seconds"}.
core::Json stats_json(const PoseModel& model);

/// Train on a dataset. Errors: MODEL_OPTIONS (holdout outside [0, 0.9],
/// basis size 0, morph basis shape), MODEL_DATASET (too few samples), and
/// the ridge / MLP errors.
core::Result<PoseModel> train_pose_model(const Dataset& dataset, const PoseModelOptions& options,
                                         const TrainProgress& progress = {});

/// Errors of a model on some samples of a dataset (all when rows is empty).
core::Result<ErrorStats> evaluate_error(const PoseModel& model, const Dataset& dataset,
                                        std::span<const std::size_t> rows = {});

/// Runs a model on one pose; owns its scratch, so no call allocates.
class PoseModelEvaluator {
 public:
  /// The model must outlive the evaluator and pass validate().
  explicit PoseModelEvaluator(const PoseModel& model);
  /// Morph weights for features (neural; all morph_count() of them, the
  /// fixed morph 0 included, clamped as the model says). False on a size
  /// mismatch or for a linear model.
  [[nodiscard]] bool weights(std::span<const float> features, std::span<float> out);
  /// Bind-space offsets (3V) for features. False on a size mismatch.
  [[nodiscard]] bool offsets(std::span<const float> features, std::span<float> out);
  /// weights() of `rows` rows at once: features [rows][feature_count], out
  /// [rows][morph_count]. The network runs on blocks of rows
  /// (MlpEvaluator::evaluate_batch); every row gets the same bits as
  /// weights() on it alone. False (out unspecified) on a size mismatch.
  [[nodiscard]] bool weights(std::span<const float> features, std::size_t rows,
                             std::span<float> out);
  /// offsets() of `rows` rows at once (out [rows][3V]), the same bits as row
  /// by row.
  [[nodiscard]] bool offsets(std::span<const float> features, std::size_t rows,
                             std::span<float> out);

 private:
  /// Rows of the network run together by the batch calls.
  static constexpr std::size_t kRowsPerRun = 256;
  /// Clamps the raw network outputs of one row into its morph weights.
  void place_weights(std::span<const float> raw, std::span<float> out) const;
  /// out = Σ_k w[k]·morph k, one row.
  void combine_morphs(std::span<const float> w, std::span<float> out) const;

  const PoseModel* m_;
  MlpEvaluator mlp_;
  std::vector<float> raw_, w_;
  std::vector<float> batch_raw_, batch_w_;  ///< kRowsPerRun rows each, on first use
};

struct PoseModelFiles {
  std::string json;
  std::vector<std::uint8_t> npz;
};
core::Result<PoseModelFiles> encode_pose_model(const PoseModel& model);
/// Errors: MODEL_JSON (pointer), MODEL_ARRAY (missing or mis-shaped array),
/// MODEL_FORMAT (not a charkit pose model, or a newer version), validate()'s,
/// read_npz's.
core::Result<PoseModel> decode_pose_model(std::string_view json, core::Bytes npz,
                                          const NpyLimits& limits = {});
/// NAME.json and NAME.npz (json_path with the extension replaced).
core::Status save_pose_model(const PoseModel& model, const std::filesystem::path& json_path);
core::Result<PoseModel> load_pose_model(const std::filesystem::path& json_path,
                                        const NpyLimits& limits = {});

}  // namespace charkit::deformer
