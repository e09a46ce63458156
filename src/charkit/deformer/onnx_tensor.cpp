// The parts of deformer/onnx.h that need no protobuf: tensors, element type
// names, the content sniffer and OnnxModel's accessors. Built with or
// without CHARKIT_WITH_ONNX (loading and running: onnx.cpp, onnx_run.cpp,
// or disabled/onnx.cpp).
#include <algorithm>
#include <limits>
#include <utility>

#include "charkit/deformer/detail/onnx_graph.h"
#include "charkit/deformer/onnx.h"

namespace charkit::deformer {

std::int64_t OnnxTensor::numel() const {
  // A zero dim anywhere makes the tensor empty, even after huge dims (which a
  // file may declare for an empty tensor); the product saturates otherwise.
  for (auto d : shape)
    if (d == 0) return 0;
  std::int64_t n = 1;
  for (auto d : shape)
    if (__builtin_mul_overflow(n, d, &n)) return std::numeric_limits<std::int64_t>::max();
  return n;
}

OnnxTensor OnnxTensor::from_f32(std::vector<std::int64_t> shape, std::vector<float> data) {
  OnnxTensor t;
  t.type = OnnxType::kFloat;
  t.shape = std::move(shape);
  t.f = std::move(data);
  return t;
}

OnnxTensor OnnxTensor::from_i64(std::vector<std::int64_t> shape, std::vector<std::int64_t> data) {
  OnnxTensor t;
  t.type = OnnxType::kInt64;
  t.shape = std::move(shape);
  t.i = std::move(data);
  return t;
}

const char* onnx_type_name(std::int32_t t) {
  switch (t) {
    case 0:
      return "undeclared";
    case 1:
      return "float32";
    case 2:
      return "uint8";
    case 3:
      return "int8";
    case 4:
      return "uint16";
    case 5:
      return "int16";
    case 6:
      return "int32";
    case 7:
      return "int64";
    case 8:
      return "string";
    case 9:
      return "bool";
    case 10:
      return "float16";
    case 11:
      return "float64";
    case 16:
      return "bfloat16";
    default:
      return "other";
  }
}

bool looks_like_onnx(core::Bytes b) {
  // Walk the top-level fields of a ModelProto (onnx.proto): every one a
  // known field with its wire type, each length inside the file, the last
  // ending exactly at the end. A first byte alone would take other binary
  // files for ONNX ("BEM\0..." starts with 0x42, opset_import's tag).
  std::size_t pos = 0;
  auto varint = [&](std::uint64_t& v) {
    v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos >= b.size()) return false;
      const std::uint8_t c = b[pos++];
      v |= std::uint64_t{c & 0x7Fu} << shift;
      if ((c & 0x80) == 0) return true;
    }
    return false;
  };
  if (b.size() < 2) return false;
  while (pos < b.size()) {
    std::uint64_t tag = 0;
    if (!varint(tag)) return false;
    const std::uint64_t field = tag >> 3;
    const std::uint64_t wire = tag & 7;
    const bool is_varint = field == 1 || field == 5;  // ir_version, model_version
    const bool is_bytes = (field >= 2 && field <= 4) || (field >= 6 && field <= 8) || field == 14 ||
                          field == 20 || field == 25;
    std::uint64_t v = 0;
    if (is_varint && wire == 0) {
      if (!varint(v)) return false;
    } else if (is_bytes && wire == 2) {
      if (!varint(v) || v > b.size() - pos) return false;
      pos += static_cast<std::size_t>(v);
    } else {
      return false;
    }
  }
  return true;
}

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

void OnnxModel::set_element_limits(std::int64_t per_tensor, std::int64_t total) {
  per_tensor = std::clamp<std::int64_t>(per_tensor, 1, kOnnxMaxElements);
  g_->max_total = std::max<std::int64_t>(total, 1);
  for (Node& n : g_->nodes) n.max_elements = per_tensor;
}

}  // namespace charkit::deformer
