// ONNX models (`.onnx`): load a ModelProto (Debian's libonnx protobuf
// classes), check its graph and execute it on the CPU for the small operator
// set that pose-driven deformer networks use (docs/deformer/onnx.md).
//
// The header is free of protobuf types so that users (CLI, a later pybind11
// wrapper) need not see them. No global state: a model owns its graph and its
// scratch buffers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "charkit/core/bytes.h"
#include "charkit/core/result.h"

namespace charkit::deformer {

/// Largest model file load_onnx() accepts.
inline constexpr std::size_t kOnnxMaxBytes = std::size_t{1} << 30;
/// Largest element count of any one tensor the executor makes: bounds what a
/// hostile graph (e.g. a broadcast of [n,1] against [1,n]) can allocate.
inline constexpr std::int64_t kOnnxMaxElements = std::int64_t{1} << 26;
/// Default bound on the elements of all node outputs of one run together
/// (OnnxModel::set_element_limits): a graph cannot fill memory by making
/// many tensors each within kOnnxMaxElements.
inline constexpr std::int64_t kOnnxDefaultTotalElements = std::int64_t{1} << 28;
/// Highest tensor rank the executor handles.
inline constexpr std::size_t kOnnxMaxRank = 12;

/// Element types the executor handles, by their ONNX TensorProto.DataType code.
enum class OnnxType : std::int32_t { kFloat = 1, kInt64 = 7, kBool = 9 };

/// A dense tensor: float32 data in `f`, or int64 data in `i` (row-major).
/// Bool tensors keep 0 / 1 in `i`.
struct OnnxTensor {
  OnnxType type = OnnxType::kFloat;
  std::vector<std::int64_t> shape;
  std::vector<float> f;
  std::vector<std::int64_t> i;

  std::int64_t numel() const;
  static OnnxTensor from_f32(std::vector<std::int64_t> shape, std::vector<float> data);
  static OnnxTensor from_i64(std::vector<std::int64_t> shape, std::vector<std::int64_t> data);
};

/// One dimension of a declared input or output shape: a number, a symbol
/// ("batch") or unknown (value -1, symbol "").
struct OnnxDim {
  std::int64_t value = -1;
  std::string symbol;
};

/// A graph input or output as the file declares it.
struct OnnxValueInfo {
  std::string name;
  std::int32_t elem_type =
      0;                   ///< TensorProto.DataType code (1 float, 7 int64, 9 bool, 0 undeclared)
  bool has_shape = false;  ///< false: rank unknown
  std::vector<OnnxDim> shape;
};

/// What `deformer info` prints.
struct OnnxDescription {
  std::int64_t ir_version = 0;
  std::int64_t opset = 0;  ///< of the default ("" / "ai.onnx") domain
  std::string producer;    ///< producer_name and version
  std::string graph_name;
  std::size_t node_count = 0;
  std::map<std::string, std::size_t> ops;  ///< op type -> node count
  std::uint64_t parameters = 0;            ///< elements of initializers and Constant tensors
  std::size_t initializers = 0;
};

struct OnnxGraph;  // the checked graph (onnx.cpp)

/// A loaded model with its executor. Moveable, not copyable; run() reuses
/// scratch buffers, so one model must not run on two threads at once.
class OnnxModel {
 public:
  OnnxModel();
  OnnxModel(OnnxModel&&) noexcept;
  OnnxModel& operator=(OnnxModel&&) noexcept;
  ~OnnxModel();

  const std::vector<OnnxValueInfo>& inputs() const;
  const std::vector<OnnxValueInfo>& outputs() const;
  const OnnxDescription& description() const;

  /// Runs the graph: one tensor per inputs() entry, in that order; returns
  /// one per outputs() entry. Shapes are checked against the declared ones
  /// (symbolic dims match anything). After the first call with given input
  /// shapes, intermediate buffers are reused without allocating.
  core::Result<std::vector<OnnxTensor>> run(std::span<const OnnxTensor> inputs);

  /// Lowers the bounds run() enforces: the elements of any one tensor a node
  /// makes (at most kOnnxMaxElements, the default) and of all node outputs
  /// of one run together (default kOnnxDefaultTotalElements); Gemm and
  /// MatMul may do at most 4096 x per_tensor multiply-adds. Beyond them a
  /// run fails with ONNX_SHAPE. For untrusted models in tight memory (the
  /// fuzz target runs with 2^18 / 2^21).
  void set_element_limits(std::int64_t per_tensor, std::int64_t total);

 private:
  friend core::Result<OnnxModel> load_onnx(core::Bytes bytes);
  std::unique_ptr<OnnxGraph> g_;
};

/// Parses and checks a serialized ModelProto: size ≤ kOnnxMaxBytes, no
/// external data, supported ops only (error names the node and op), every
/// node input defined before use (topological order), initializer data
/// matching declared dims.
core::Result<OnnxModel> load_onnx(core::Bytes bytes);

/// Parses a serialized TensorProto (the conformance suite's input_N.pb /
/// output_N.pb) into a float32, int64 or bool tensor.
core::Result<OnnxTensor> parse_onnx_tensor(core::Bytes bytes);

/// The name of a TensorProto.DataType code: "float32", "int64", "bool",
/// "float64", ...; "undeclared" for 0 and "other" for unknown codes.
const char* onnx_type_name(std::int32_t elem_type);

/// True when the bytes look like a serialized ModelProto: its top-level
/// fields are known ModelProto fields with their wire types, lengths inside
/// the bytes, ending exactly at the end (a cheap walk over a few fields;
/// the graph is not parsed).
bool looks_like_onnx(core::Bytes bytes);

/// A declared input or output as text: "x: float32 [batch, 3]".
std::string onnx_value_text(const OnnxValueInfo& value);

/// Rows through a model with one float32 graph input of rank 1 or 2
/// (`deformer run`, the C API): the columns the input declares (its last
/// dimension), or -1 when it does not fix them. Errors: ONNX_RUN_INPUTS (not
/// exactly one input, or one of another type or rank; the message gives it).
core::Result<std::int64_t> onnx_row_columns(const OnnxModel& model);

/// Runs `rows` rows of `columns` floats (row-major in `values`) through the
/// model. The batch goes in at once as [rows, columns] when the input's
/// first dimension is symbolic, unknown or equal to rows (an input of
/// unknown shape gets [columns] for a single row); a declared [1, columns]
/// or [columns] input is fed one row at a time. Returns output 0, one row of
/// `*outputs` values per input row. Errors: onnx_row_columns()'s,
/// ONNX_RUN_INPUTS (a fixed batch size other than 1 or rows),
/// ONNX_RUN_OUTPUTS (output 0 not float32 with one row per sample), run()'s.
core::Result<std::vector<float>> run_onnx_rows(OnnxModel& model, std::span<const float> values,
                                               std::size_t rows, std::size_t columns,
                                               std::size_t* outputs);

}  // namespace charkit::deformer
