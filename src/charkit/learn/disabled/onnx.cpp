// Built instead of ../onnx.cpp, ../onnx_run.cpp and ../onnx_ops_*.cpp when
// CHARKIT_WITH_ONNX=OFF: loading a model is a clear error and protobuf and
// libonnx are not linked. Tensors, type names and the sniffer
// (../onnx_tensor.cpp) stay.
#include "charkit/learn/onnx.h"
#include "charkit/learn/detail/onnx_graph.h"

namespace charkit::learn {

namespace {
core::Error disabled() {
  return core::make_error("ONNX_DISABLED",
                          "this charkit was built without ONNX support (CHARKIT_WITH_ONNX=OFF)");
}
}  // namespace

// No OnnxModel can be made without load_onnx, so the accessors are never
// reached through a valid object; they keep the class complete.
OnnxModel::OnnxModel() = default;
OnnxModel::OnnxModel(OnnxModel&&) noexcept = default;
OnnxModel& OnnxModel::operator=(OnnxModel&&) noexcept = default;
OnnxModel::~OnnxModel() = default;
const std::vector<OnnxValueInfo>& OnnxModel::inputs() const {
  return g_->inputs;
}
const std::vector<OnnxValueInfo>& OnnxModel::outputs() const {
  return g_->outputs;
}
const OnnxDescription& OnnxModel::description() const {
  return g_->desc;
}
void OnnxModel::set_element_limits(std::int64_t, std::int64_t) {}
core::Result<std::vector<OnnxTensor>> OnnxModel::run(std::span<const OnnxTensor>) {
  return disabled();
}

core::Result<OnnxModel> load_onnx(core::Bytes) {
  return disabled();
}
core::Result<OnnxTensor> parse_onnx_tensor(core::Bytes) {
  return disabled();
}

}  // namespace charkit::learn
