// The `*.bmd_ue.json` sidecar next to a `.nmn`: the names of the bones,
// curves and morph targets the network's inputs and outputs stand for (a
// `.nmn` holds only counts). Schema: docs/deformer/nmn.md, "Sidecar".
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "charkit/core/result.h"
#include "charkit/deformer/nmn.h"

namespace charkit::deformer {

inline constexpr std::string_view kNmnSidecarFormat = "charkit.bmd_ue";
inline constexpr std::uint32_t kNmnSidecarVersion = 1;

/// What the network's outputs are (the sidecar's "outputs"), which decides
/// whether an import may clamp them.
enum class NmnOutputs : std::uint8_t {
  kUnknown,            ///< not recorded (sidecars from elsewhere)
  kMorphWeights,       ///< weights of the mesh's morph targets, meant for [0, 1]
  kBasisCoefficients,  ///< coefficients of a learned basis (charkit's export): any range
};

/// "morphWeights", "basisCoefficients", "unknown".
std::string_view nmn_outputs_name(NmnOutputs outputs);

struct NmnSidecar {
  std::string model;  ///< file name of the `.nmn` ("" = not recorded)
  NmnMode mode = NmnMode::kGlobal;
  std::vector<std::string> bones;          ///< input order: 6 floats each
  std::vector<std::string> curves;         ///< input order after the bones
  std::vector<std::string> morph_targets;  ///< output order (morph 0 = mean delta, if used)
  /// Local mode with groups: for each group, its item indices (bone b = b,
  /// curve c = bones.size() + c); all groups the same length.
  std::vector<std::vector<std::uint32_t>> groups;
  NmnOutputs outputs = NmnOutputs::kUnknown;  ///< written only when known
  /// Per network output, the [min, max] its training targets spanned (the
  /// sidecar's "outputRanges"; empty when not recorded): an import warns
  /// when the network's outputs lie far outside them.
  std::vector<std::array<float, 2>> output_ranges;
  bool operator==(const NmnSidecar&) const = default;
};

/// Parse sidecar JSON (strict JSON). Errors: JSON_* from core, SIDECAR_SCHEMA
/// (location = JSON pointer).
core::Result<NmnSidecar> read_nmn_sidecar(std::string_view json_text);
/// Serialise (2-space indented JSON with a final newline).
std::string write_nmn_sidecar(const NmnSidecar& sidecar);
/// Checks the sidecar against a network: mode, bone and curve counts, input
/// count = bones*6 + curves*NumFloatsPerCurve, groups. Error: SIDECAR_MISMATCH.
core::Status check_nmn_sidecar(const NmnSidecar& sidecar, const NmnNetwork& network);
/// The groups flattened for NmnRunner::create.
std::vector<std::uint32_t> nmn_sidecar_group_items(const NmnSidecar& sidecar);
/// "dir/model.nmn" -> "dir/model.bmd_ue.json" (any other extension is replaced too).
std::string nmn_sidecar_path(std::string_view model_path);

}  // namespace charkit::deformer
