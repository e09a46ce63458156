// Internal: the checked ONNX graph shared by onnx.cpp (load) and
// onnx_run.cpp (execution). Not part of the public API.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "charkit/learn/onnx.h"

namespace charkit::learn {

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
};

// One node with its attributes read once at load time.
struct Node {
  Op op = Op::kIdentity;
  std::size_t index = 0;
  std::string name;
  std::string type;
  std::vector<int> in;  // value ids; -1 = absent optional input
  int out = -1;
  float alpha = 1.0f, beta = 1.0f;
  bool trans_a = false, trans_b = false;
  std::int64_t axis = 0;
  bool has_axis = false;
  bool allowzero = false;
  bool legacy = false, legacy_broadcast = false;  // opset < 7 Add/Sub/Mul/Div
  float clip_min = 0, clip_max = 0;
  bool has_ints = false;
  std::vector<std::int64_t> ints;  // perm, axes (opset < 13) or shape (opset < 5)
};

// Shape scratch of the kernels, kept with the graph so runs reuse it.
struct Scratch {
  std::vector<std::int64_t> s1, s2;
};

struct OnnxGraph {
  std::vector<OnnxValueInfo> inputs, outputs;
  OnnxDescription desc;
  std::vector<std::string> names;  // value id -> name
  std::vector<OnnxTensor> consts;  // value id -> initializer / Constant data
  std::vector<std::uint8_t> is_const;
  std::vector<int> input_ids, output_ids;
  std::vector<Node> nodes;
  // Run state, reused between calls.
  std::vector<OnnxTensor> work;        // value id -> node output buffer
  std::vector<const OnnxTensor*> ref;  // value id -> where its data is in this run
  Scratch scratch;
  std::vector<const OnnxTensor*> list;  // Concat's inputs
};

namespace onnx_detail {
std::string node_label(const Node& n);
core::Error node_error(const Node& n, std::string code, const std::string& msg);
// Element count of a shape; false when a dim is negative or it exceeds kOnnxMaxElements.
bool checked_numel(std::span<const std::int64_t> shape, std::int64_t& n);
}  // namespace onnx_detail

}  // namespace charkit::learn
