// What a deformer file is, judged from its content first: the one
// sniffer of deformer file kinds, used by `charkit deformer run` /
// `export-nmn` and by import_engine_network (docs/deformer/workflow.md).
#pragma once

#include <cstdint>
#include <string_view>

#include "charkit/core/bytes.h"

namespace charkit::deformer {

enum class DeformerFileKind : std::uint8_t {
  kNmn,        ///< Unreal's .nmn network (its magic, docs/deformer/nmn.md)
  kOnnx,       ///< an ONNX ModelProto
  kPoseModel,  ///< charkit's own pose_model.json (with its .npz beside it)
  kUnknown,
};

/// By content: the .nmn magic, then an ONNX ModelProto's leading field tag
/// (a guess that load_onnx confirms or refutes with a located error). Then,
/// only when `path` is given, by name: `.onnx`, and a `.json` that starts
/// with `{` (pose_model.json). An empty path judges by content alone.
DeformerFileKind detect_deformer_file(core::Bytes bytes, std::string_view path = {});

/// "nmn", "onnx", "pose-model", "unknown".
std::string_view deformer_file_kind_name(DeformerFileKind kind);

}  // namespace charkit::deformer
