// Built instead of ../onnx.cpp, ../onnx_run.cpp and ../onnx_ops_*.cpp when
// CHARKIT_WITH_ONNX=OFF: loading a model is a clear error and protobuf and
// libonnx are not linked. Tensors, type names, the sniffer
// and OnnxModel's accessors (../onnx_tensor.cpp) stay.
#include "charkit/deformer/onnx.h"

#include "charkit/deformer/error_codes.h"

namespace charkit::deformer {

namespace {
core::Error disabled() {
  return core::make_error(codes::ONNX_DISABLED,
                          "this charkit was built without ONNX support (CHARKIT_WITH_ONNX=OFF)");
}
}  // namespace

// No OnnxModel can be loaded, so run() is never reached through a valid
// object; the accessors are in ../onnx_tensor.cpp.
core::Result<std::vector<OnnxTensor>> OnnxModel::run(std::span<const OnnxTensor>) {
  return disabled();
}

core::Result<OnnxModel> load_onnx(core::Bytes) {
  return disabled();
}
core::Result<OnnxTensor> parse_onnx_tensor(core::Bytes) {
  return disabled();
}

}  // namespace charkit::deformer
