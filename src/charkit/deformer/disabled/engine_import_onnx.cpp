// Stand-in for ../engine_import_onnx.cpp in a build without ONNX
// (CHARKIT_WITH_ONNX=OFF; docs/building.md, "Optional dependencies").
#include "charkit/deformer/detail/engine_steps.h"

namespace charkit::deformer::detail {

core::Result<std::vector<EngineStep>> onnx_steps(core::Bytes /*bytes*/,
                                                 std::string& /*input_name*/) {
  return core::make_error(codes::ONNX_DISABLED,
                          "this charkit was built without ONNX support (CHARKIT_WITH_ONNX=OFF)");
}

}  // namespace charkit::deformer::detail
