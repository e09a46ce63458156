// Internal: the checked ONNX graph shared by onnx.cpp (load) and
// the executor (onnx_run.cpp, onnx_ops_*.cpp). Not part of the public API.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "charkit/deformer/onnx.h"

namespace charkit::deformer {

enum class Op {
  kGemm,
  kMatMul,
  kAdd,
  kSub,
  kMul,
  kDiv,
  kRelu,
  kElu,
  kSigmoid,
  kTanh,
  kLeakyRelu,
  kClip,
  kConstant,
  kIdentity,
  kReshape,
  kFlatten,
  kTranspose,
  kConcat,
  kUnsqueeze,
  kSqueeze,
  // Element-wise, one input.
  kNeg,
  kAbs,
  kSign,
  kExp,
  kLog,
  kSqrt,
  kReciprocal,
  kFloor,
  kCeil,
  kRound,
  kErf,
  kSin,
  kCos,
  kTan,
  kAsin,
  kAcos,
  kAtan,
  kSinh,
  kCosh,
  kAsinh,
  kAcosh,
  kAtanh,
  kSoftplus,
  kSoftsign,
  kSelu,
  kCelu,
  kHardSigmoid,
  kHardSwish,
  kThresholdedRelu,
  kGelu,
  kMish,
  kNot,
  // Element-wise, two or more inputs with broadcasting.
  kPow,
  kPRelu,
  kMax,
  kMin,
  kSum,
  kMean,
  kEqual,
  kLess,
  kGreater,
  kLessOrEqual,
  kGreaterOrEqual,
  kAnd,
  kOr,
  kXor,
  kWhere,
  // Shapes and data movement.
  kShape,
  kSize,
  kGather,
  kCast,
  kConstantOfShape,
  kExpand,
  kSlice,
  kRange,
  kTile,
  kDropout,
  // Reductions and normalisation.
  kReduceMean,
  kReduceSum,
  kReduceMax,
  kReduceMin,
  kReduceProd,
  kReduceL1,
  kReduceL2,
  kReduceSumSquare,
  kReduceLogSumExp,
  kSoftmax,
  kLogSoftmax,
  kBatchNormalization,
  kLayerNormalization,
  kArgMax,
  kArgMin,
  kCumSum,
  kPad,
  kSplit,  // the one op with several outputs
};

// One node with its attributes read once at load time.
struct Node {
  Op op = Op::kIdentity;
  std::size_t index = 0;
  std::string name;
  std::string type;
  std::vector<int> in;  // value ids; -1 = absent optional input
  int out = -1;
  std::int64_t max_elements =
      kOnnxMaxElements;        // per output tensor (OnnxModel::set_element_limits)
  std::vector<int> more_outs;  // Split: value ids of outputs 1..n-1
  float alpha = 1.0f, beta = 1.0f;
  bool trans_a = false, trans_b = false;
  std::int64_t axis = 0;
  bool has_axis = false;
  bool allowzero = false;
  bool legacy = false, legacy_broadcast = false;  // opset < 7 Add/Sub/Mul/Div
  float clip_min = 0, clip_max = 0;
  float gamma = 1.0f, epsilon = 1e-5f;
  bool keepdims = true, noop_empty_axes = false;  // reductions
  bool legacy_softmax = false;                    // opset < 13: input coerced to 2-D at axis
  bool gelu_tanh = false;                         // Gelu approximate="tanh"
  std::int32_t to = 1;                            // Cast target element type
  std::int64_t start = 0, end = 0;                // Shape (opset 15)
  bool has_end = false;
  OnnxTensor value;  // ConstantOfShape fill (one element)
  bool has_ints = false;
  std::vector<std::int64_t> ints;           // perm, axes (opset < 13) or shape (opset < 5)
  bool select_last = false;                 // ArgMax / ArgMin
  bool exclusive = false, reverse = false;  // CumSum
  std::int32_t pad_mode = 0;                // Pad: 0 constant, 1 reflect, 2 edge
  float pad_value = 0.0f;                   // Pad's constant before opset 11
  std::int64_t num_outputs = 0;             // Split (opset 18)
  bool has_slice_attrs = false;
  std::vector<std::int64_t> starts, ends;  // Slice before opset 10 (axes in `ints`)
};

// Scratch of the kernels, kept with the graph so runs reuse it.
struct Scratch {
  std::vector<std::int64_t> s1, s2, s3, s4;
  std::vector<double> acc;
  std::vector<std::int64_t> map;  // Pad: source index per output index, per dim
  OnnxTensor t1, t2;
};

struct OnnxGraph {
  std::vector<OnnxValueInfo> inputs, outputs;
  OnnxDescription desc;
  std::vector<std::string> names;  // value id -> name
  std::vector<OnnxTensor> consts;  // value id -> initializer / Constant data
  std::vector<std::uint8_t> is_const;
  std::vector<int> input_ids, output_ids;
  std::vector<Node> nodes;
  std::int64_t max_total = kOnnxDefaultTotalElements;  // all node outputs of one run
  // Run state, reused between calls.
  std::vector<OnnxTensor> work;        // value id -> node output buffer
  std::vector<const OnnxTensor*> ref;  // value id -> where its data is in this run
  Scratch scratch;
  std::vector<const OnnxTensor*> list;  // Concat's inputs
  std::vector<OnnxTensor*> split_outs;  // Split's outputs
};

namespace onnx_detail {
std::string node_label(const Node& n);
core::Error node_error(const Node& n, core::ErrorCode code, const std::string& msg);
// Element count of a shape; false when a dim is negative or the product of
// its non-zero dims exceeds kOnnxMaxElements (so no partial product overflows).
bool checked_numel(std::span<const std::int64_t> shape, std::int64_t& n,
                   std::int64_t limit = kOnnxMaxElements);
}  // namespace onnx_detail

}  // namespace charkit::deformer
