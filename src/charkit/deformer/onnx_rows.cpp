// Rows of features through an ONNX model (deformer/onnx.h): the batching rule
// shared by `charkit deformer run` and the C API. Only OnnxModel's public
// interface is used, so this file is built with and without ONNX support.
#include <algorithm>
#include <string>

#include "charkit/deformer/error_codes.h"
#include "charkit/deformer/onnx.h"

namespace charkit::deformer {

std::string onnx_value_text(const OnnxValueInfo& v) {
  std::string s = v.name + ": " + onnx_type_name(v.elem_type);
  if (!v.has_shape) return s + " (shape unknown)";
  s += " [";
  for (std::size_t k = 0; k < v.shape.size(); ++k) {
    if (k) s += ", ";
    const auto& d = v.shape[k];
    s += !d.symbol.empty() ? d.symbol : d.value >= 0 ? std::to_string(d.value) : "?";
  }
  return s + "]";
}

core::Result<std::int64_t> onnx_row_columns(const OnnxModel& m) {
  if (m.inputs().size() != 1 || m.outputs().empty())
    return core::make_error(codes::ONNX_RUN_INPUTS,
                            "running rows needs a model with exactly one graph input (has " +
                                std::to_string(m.inputs().size()) + ")");
  const auto& in = m.inputs()[0];
  const bool typed_ok = in.elem_type == 0 || in.elem_type == 1;
  if (!typed_ok || (in.has_shape && in.shape.size() != 1 && in.shape.size() != 2))
    return core::make_error(
        codes::ONNX_RUN_INPUTS,
        "the model input must be float32 of rank 1 or 2, is " + onnx_value_text(in));
  if (in.has_shape && in.shape.back().symbol.empty()) return in.shape.back().value;
  return std::int64_t{-1};
}

core::Result<std::vector<float>> run_onnx_rows(OnnxModel& m, std::span<const float> values,
                                               std::size_t rows, std::size_t cols,
                                               std::size_t* outputs_out) {
  auto declared = onnx_row_columns(m);
  if (!declared) return std::move(declared).error();
  if (values.size() != rows * cols ||
      (*declared >= 0 && static_cast<std::size_t>(*declared) != cols))
    return core::make_error(codes::ONNX_RUN_INPUTS, "the rows have " + std::to_string(cols) +
                                                        " values, the model takes " +
                                                        std::to_string(*declared));
  const auto& info = m.inputs()[0];
  const auto columns = static_cast<std::int64_t>(cols);
  bool batch = false;
  if (!info.has_shape) {
    batch = true;
  } else if (info.shape.size() == 2) {
    const auto& d0 = info.shape[0];
    batch = !d0.symbol.empty() || d0.value < 0 || d0.value == static_cast<std::int64_t>(rows);
    if (!batch && d0.value != 1)
      return core::make_error(codes::ONNX_RUN_INPUTS,
                              "the model takes batches of exactly " + std::to_string(d0.value) +
                                  " rows, the input has " + std::to_string(rows));
  }
  std::vector<float> out;
  std::size_t outputs = 0;
  auto take = [&](const OnnxTensor& t, std::size_t per_row) -> bool {
    if (t.type != OnnxType::kFloat) return false;
    if (outputs == 0) outputs = per_row;
    if (per_row != outputs) return false;
    out.insert(out.end(), t.f.begin(), t.f.end());
    return true;
  };
  const auto bad_output = [] {
    return core::make_error(codes::ONNX_RUN_OUTPUTS,
                            "output 0 is not float32 with one row of values per sample");
  };
  std::vector<OnnxTensor> in(1);
  if (batch) {
    in[0] = OnnxTensor::from_f32({static_cast<std::int64_t>(rows), columns},
                                 std::vector<float>(values.begin(), values.end()));
    if (!info.has_shape && rows == 1) in[0].shape = {columns};
    auto r = m.run(in);
    if (!r) return std::move(r).error();
    const auto& t = (*r)[0];
    if (rows > 0 && (t.f.size() % rows != 0 || !take(t, t.f.size() / rows))) return bad_output();
  } else {
    in[0] = OnnxTensor::from_f32(info.shape.size() == 2 ? std::vector<std::int64_t>{1, columns}
                                                        : std::vector<std::int64_t>{columns},
                                 std::vector<float>(cols));
    for (std::size_t r = 0; r < rows; ++r) {
      std::copy_n(values.begin() + static_cast<std::ptrdiff_t>(r * cols), cols, in[0].f.begin());
      auto res = m.run(in);
      if (!res) return std::move(res).error();
      if (!take((*res)[0], (*res)[0].f.size())) return bad_output();
    }
  }
  if (outputs_out) *outputs_out = outputs;
  return out;
}

}  // namespace charkit::deformer
