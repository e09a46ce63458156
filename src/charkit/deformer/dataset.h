// A training dataset: the input spec, the feature matrix (N x F), the target
// deltas (N x 3V, bind-space offsets from the rest mesh) and names. On disk:
// NAME.npz (arrays, numpy-readable) + NAME.json (everything else);
// docs/deformer/datasets.md gives both layouts.
#pragma once

#include <cstddef>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "charkit/core/bytes.h"
#include "charkit/core/json_fwd.h"
#include "charkit/core/result.h"
#include "charkit/deformer/npy.h"
#include "charkit/deformer/pose.h"

namespace charkit::deformer {

struct Dataset {
  InputSpec spec;
  FeatureLayout layout = FeatureLayout::kAxisAngle;
  std::string mesh_name;
  std::size_t sample_count = 0;
  std::size_t vertex_count = 0;
  std::vector<float> features;            ///< sample_count x feature_count(), row-major
  std::vector<float> deltas;              ///< sample_count x (3 * vertex_count), x y z per vertex
  std::vector<std::string> sample_names;  ///< empty, or one per sample

  std::size_t feature_count() const {
    return layout == FeatureLayout::kEngine ? spec.engine_feature_count() : spec.feature_count();
  }
};

/// The input spec as JSON ({"bones": [{"name", "axes": [{"enabled",
/// "min_deg", "max_deg"} x3]}], "curves": [{"name", "min", "max"}]}), as the
/// dataset and model files hold it (docs/deformer/datasets.md).
core::Json input_spec_json(const InputSpec& spec);
/// Parse it back; errors carry JSON pointers under `pointer`. Errors:
/// DATASET_JSON, and validate(InputSpec)'s.
core::Result<InputSpec> parse_input_spec(const core::Json& j, const std::string& pointer);

/// Sizes agree, spec valid, values finite. Errors: DATASET_SHAPE,
/// DATASET_NOT_FINITE and validate(InputSpec)'s.
core::Status validate(const Dataset& dataset);

/// Collects samples one by one; the first sample fixes the vertex count.
class DatasetBuilder {
 public:
  explicit DatasetBuilder(InputSpec spec, FeatureLayout layout = FeatureLayout::kAxisAngle,
                          std::string mesh_name = {});
  /// Errors: DATASET_SHAPE (feature count, deltas not a multiple of 3),
  /// DATASET_VERTEX_COUNT (the mesh's vertex count changed since sample 0 —
  /// e.g. a modifier that changes topology), DATASET_NOT_FINITE.
  core::Status add_sample(std::span<const float> features, std::span<const float> deltas,
                          std::string name = {});
  const Dataset& dataset() const { return d_; }
  Dataset take() && { return std::move(d_); }

 private:
  Dataset d_;
};

/// The two files of a dataset, in memory.
struct DatasetFiles {
  std::vector<std::uint8_t> npz;
  std::string json;
};

/// Errors: validate()'s, write_npz's.
core::Result<DatasetFiles> encode_dataset(const Dataset& dataset);
/// Errors: DATASET_JSON (pointer), DATASET_ARRAY (missing, wrong dtype or
/// shape), DATASET_SHAPE, and read_npz's.
core::Result<Dataset> decode_dataset(core::Bytes npz, std::string_view json,
                                     const NpyLimits& limits = {});

/// NAME.npz and NAME.json beside it (npz_path with the extension replaced).
core::Status save_dataset(const Dataset& dataset, const std::filesystem::path& npz_path);
core::Result<Dataset> load_dataset(const std::filesystem::path& npz_path,
                                   const NpyLimits& limits = {});

}  // namespace charkit::deformer
