// Import of engine networks (`.nmn` global mode, or `.onnx` MLP chains) as
// charkit pose models in the engine feature layout, so that they can be
// evaluated, previewed and baked like locally trained ones
// (docs/deformer/nmn.md, "Import as a pose model").
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "charkit/core/bytes.h"
#include "charkit/core/result.h"
#include "charkit/deformer/nmn_sidecar.h"
#include "charkit/deformer/pose.h"
#include "charkit/deformer/pose_model.h"
#include "charkit/scene/rig.h"

namespace charkit::deformer {

struct EngineImportOptions {
  /// Clamping of the imported weights. Unset (the default): by what the
  /// sidecar says the outputs are (engine_import_clamp). kTrainingRange is
  /// refused: the files hold no training range.
  std::optional<WeightClamp> clamp;
  /// The morph-target file the caller looked for beside the network
  /// (NAME.morphs.npz, nmn_morphs_path) and did not find; "" when it was
  /// found or not looked for. When a morph target the sidecar names is not
  /// on the mesh, IMPORT_MORPHS then names this file as the likely fix.
  std::string missing_morphs_file;
};

/// The clamp an import uses: `asked` when set, else none for outputs the
/// sidecar records as learned-basis coefficients (charkit's .nmn export:
/// they range well outside [0, 1]), else [0, 1] (weights of morph targets,
/// as in the importer of the Blender pose-deformer description).
WeightClamp engine_import_clamp(std::optional<WeightClamp> asked,
                                const std::optional<NmnSidecar>& sidecar);

/// A `.nmn` (global mode) or `.onnx` network whose layers form an MLP chain
/// becomes a PoseModel (layout kEngine, kind kNeural).
///
/// - Kind: from the content (the `.nmn` magic, else an ONNX ModelProto), the
///   file name only naming it in messages.
/// - `.nmn`: the main model must be Linear/CompressedLinear/MultiLinear
///   layers (MultiLinear, the per-bone networks of local mode, as one
///   block-diagonal dense layer) with one activation kind (ReLU, ELU or
///   TanH) between them and optionally after the last (Copy layers and
///   nested Sequences are fine). The input normalisation comes from the file.
///   Local mode: the main model runs; a group model does not, which the model's
///   hyper["warnings"] says ({"code": "IMPORT_GROUP_NOT_RUN", "message"});
///   local mode with curves (6 inputs per curve) is IMPORT_LOCAL_MODE.
/// - `.onnx`: one float input and one output; nodes Gemm, or MatMul followed
///   by Add of a constant bias, with Relu / Elu (alpha 1) / Tanh between them
///   and optionally after the last; Identity and Flatten pass through. The
///   weights come from initializers or Constant nodes. No normalisation.
///   The mapped MLP is checked against the ONNX executor on a few inputs.
/// - Inputs: bones × 6 + curves of spec must equal the network's input count
///   (IMPORT_INPUTS, naming both counts); with a sidecar its bone and curve
///   names must equal the spec's, in order.
/// - Outputs: weights of morph targets of the rig. With a sidecar naming
///   morph targets, by those names (one more name than outputs: the first
///   is morph 0 with weight fixed at 1, the engine's mean delta); else the
///   rig's morph targets in order, as many as the network has outputs
///   (IMPORT_MORPHS when a name is not a morph target of the rig or the
///   counts differ).
/// - Sanity (`.nmn` global mode with a sidecar's "outputRanges"): the
///   network runs on its typical inputs (the normalisation's mean, ± half a
///   standard deviation); an output further outside its recorded range than
///   twice the range's width is the warning IMPORT_OUTPUT_RANGE in
///   hyper["warnings"] (the model is still returned).
/// Other errors: IMPORT_FORMAT (neither kind), IMPORT_UNSUPPORTED (a layer or
/// node outside the MLP chain, naming it), IMPORT_OPTIONS, read_nmn's and
/// load_onnx's errors, SIDECAR_MISMATCH, MODEL_SHAPE.
core::Result<PoseModel> import_engine_network(core::Bytes network, std::string_view file_name,
                                              const std::optional<NmnSidecar>& sidecar,
                                              const scene::Rig& rig, const InputSpec& spec,
                                              const EngineImportOptions& options = {});

/// The main model of a `.nmn` as an MLP (normalisation included; a local-mode
/// group model is left out). Errors: IMPORT_LOCAL_MODE (local mode with
/// curves), IMPORT_UNSUPPORTED.
core::Result<Mlp> nmn_to_mlp(const NmnNetwork& network);

}  // namespace charkit::deformer
