// The step list engine networks are reduced to before they become an MLP
// (engine_import.cpp), shared with the ONNX graph reader
// (engine_import_onnx.cpp, built only with ONNX; disabled/ holds its
// stand-in).
#pragma once

#include <string>
#include <vector>

#include "charkit/core/bytes.h"
#include "charkit/core/result.h"
#include "charkit/deformer/error_codes.h"
#include "charkit/deformer/mlp.h"

namespace charkit::deformer::detail {

/// One step of a chain: a dense layer, or an activation (label names the
/// layer or node for messages).
struct EngineStep {
  bool dense = false;
  DenseLayer layer;
  Activation act = Activation::kIdentity;
  std::string label;
};

/// IMPORT_UNSUPPORTED with this message.
inline core::Error unsupported(std::string msg) {
  return core::make_error(codes::IMPORT_UNSUPPORTED, std::move(msg));
}

/// The steps of an .onnx file's graph, which must be one chain from its one
/// input (named in input_name) to its one output. Errors:
/// IMPORT_UNSUPPORTED naming the node; ONNX_DISABLED in a build without ONNX.
core::Result<std::vector<EngineStep>> onnx_steps(core::Bytes bytes, std::string& input_name);

}  // namespace charkit::deformer::detail
