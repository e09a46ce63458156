// ONNX loading: protobuf parse, graph check, node preparation
// (docs/deformer/onnx.md). Execution of the prepared nodes: onnx_run.cpp.
#include "charkit/deformer/onnx.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "charkit/deformer/detail/onnx_graph.h"
#include "charkit/deformer/error_codes.h"

namespace charkit::deformer {

using core::make_error;
using core::Result;
using core::Status;

namespace onnx_detail {

std::string node_label(const Node& n) {
  std::string s = "node " + std::to_string(n.index);
  if (!n.name.empty()) s += " '" + n.name + "'";
  return s + " (" + n.type + ")";
}

core::Error node_error(const Node& n, core::ErrorCode code, const std::string& msg) {
  return core::error_at_pointer(std::move(code), node_label(n) + ": " + msg,
                                "/graph/node/" + std::to_string(n.index));
}

bool checked_numel(std::span<const std::int64_t> shape, std::int64_t& n, std::int64_t limit) {
  // The product of the non-zero dims is bounded too, so that no product of
  // any subset of the dims (strides, outer / inner counts) can overflow,
  // even in an empty tensor.
  std::int64_t nonzero = 1;
  bool empty = false;
  for (auto d : shape) {
    if (d < 0) return false;
    if (d == 0) {
      empty = true;
      continue;
    }
    if (nonzero > limit / d) return false;
    nonzero *= d;
  }
  n = empty ? 0 : nonzero;
  return true;
}

}  // namespace onnx_detail

using namespace onnx_detail;

namespace {

// Fills `out` from a TensorProto; "" on success, else the reason.
std::string tensor_from_proto(const onnx::TensorProto& p, OnnxTensor& out) {
  if (p.data_location() == onnx::TensorProto::EXTERNAL || p.external_data_size() > 0)
    return "external data is not supported (the model must carry its weights)";
  if (p.has_segment()) return "segmented tensors are not supported";
  if (p.dims_size() > static_cast<int>(kOnnxMaxRank))
    return "rank " + std::to_string(p.dims_size()) + " exceeds " + std::to_string(kOnnxMaxRank);
  out.shape.assign(p.dims().begin(), p.dims().end());
  std::int64_t n = 0;
  if (!checked_numel(out.shape, n))
    return "dims are negative or hold more than " + std::to_string(kOnnxMaxElements) + " elements";
  const auto count = static_cast<std::size_t>(n);
  const std::string& raw = p.raw_data();
  if (p.data_type() == onnx::TensorProto::FLOAT) {
    out.type = OnnxType::kFloat;
    out.i.clear();
    if (!raw.empty() || p.float_data_size() == 0) {
      if (raw.size() != count * 4)
        return "raw_data has " + std::to_string(raw.size()) + " bytes, dims need " +
               std::to_string(count * 4);
      out.f.resize(count);
      if (count) std::memcpy(out.f.data(), raw.data(), count * 4);  // little-endian host
    } else {
      if (static_cast<std::size_t>(p.float_data_size()) != count)
        return "float_data has " + std::to_string(p.float_data_size()) + " values, dims need " +
               std::to_string(count);
      out.f.assign(p.float_data().begin(), p.float_data().end());
    }
    return {};
  }
  if (p.data_type() == onnx::TensorProto::INT64) {
    out.type = OnnxType::kInt64;
    out.f.clear();
    if (!raw.empty() || p.int64_data_size() == 0) {
      if (raw.size() != count * 8)
        return "raw_data has " + std::to_string(raw.size()) + " bytes, dims need " +
               std::to_string(count * 8);
      out.i.resize(count);
      if (count) std::memcpy(out.i.data(), raw.data(), count * 8);
    } else {
      if (static_cast<std::size_t>(p.int64_data_size()) != count)
        return "int64_data has " + std::to_string(p.int64_data_size()) + " values, dims need " +
               std::to_string(count);
      out.i.assign(p.int64_data().begin(), p.int64_data().end());
    }
    return {};
  }
  if (p.data_type() == onnx::TensorProto::INT32) {
    // Widened to int64: exporters write int32 for axes and indices (e.g.
    // PyTorch's CumSum axis); the values are all the ops need.
    out.type = OnnxType::kInt64;
    out.f.clear();
    out.i.resize(count);
    if (!raw.empty() || p.int32_data_size() == 0) {
      if (raw.size() != count * 4)
        return "raw_data has " + std::to_string(raw.size()) + " bytes, dims need " +
               std::to_string(count * 4);
      for (std::size_t k = 0; k < count; ++k) {
        std::int32_t v = 0;
        std::memcpy(&v, raw.data() + k * 4, 4);
        out.i[k] = v;
      }
    } else {
      if (static_cast<std::size_t>(p.int32_data_size()) != count)
        return "int32_data has " + std::to_string(p.int32_data_size()) + " values, dims need " +
               std::to_string(count);
      for (std::size_t k = 0; k < count; ++k) out.i[k] = p.int32_data(static_cast<int>(k));
    }
    return {};
  }
  if (p.data_type() == onnx::TensorProto::BOOL) {
    // One byte per value in raw_data, or int32_data; stored as 0 / 1.
    out.type = OnnxType::kBool;
    out.f.clear();
    if (!raw.empty() || p.int32_data_size() == 0) {
      if (raw.size() != count)
        return "raw_data has " + std::to_string(raw.size()) + " bytes, dims need " +
               std::to_string(count);
      out.i.resize(count);
      for (std::size_t k = 0; k < count; ++k) out.i[k] = raw[k] != 0 ? 1 : 0;
    } else {
      if (static_cast<std::size_t>(p.int32_data_size()) != count)
        return "int32_data has " + std::to_string(p.int32_data_size()) + " values, dims need " +
               std::to_string(count);
      out.i.resize(count);
      for (std::size_t k = 0; k < count; ++k) out.i[k] = p.int32_data(static_cast<int>(k)) != 0;
    }
    return {};
  }
  return std::string("element type ") + onnx_type_name(p.data_type()) +
         " is not supported (float32, int64, int32 and bool only)";
}

struct OpInfo {
  Op op;
  int min_in, max_in;
};

const std::unordered_map<std::string_view, OpInfo>& op_table() {
  static const std::unordered_map<std::string_view, OpInfo> t{
      {"Gemm", {Op::kGemm, 2, 3}},
      {"MatMul", {Op::kMatMul, 2, 2}},
      {"Add", {Op::kAdd, 2, 2}},
      {"Sub", {Op::kSub, 2, 2}},
      {"Mul", {Op::kMul, 2, 2}},
      {"Div", {Op::kDiv, 2, 2}},
      {"Relu", {Op::kRelu, 1, 1}},
      {"Elu", {Op::kElu, 1, 1}},
      {"Sigmoid", {Op::kSigmoid, 1, 1}},
      {"Tanh", {Op::kTanh, 1, 1}},
      {"LeakyRelu", {Op::kLeakyRelu, 1, 1}},
      {"Clip", {Op::kClip, 1, 3}},
      {"Constant", {Op::kConstant, 0, 0}},
      {"Identity", {Op::kIdentity, 1, 1}},
      {"Reshape", {Op::kReshape, 1, 2}},
      {"Flatten", {Op::kFlatten, 1, 1}},
      {"Transpose", {Op::kTranspose, 1, 1}},
      {"Concat", {Op::kConcat, 1, 1 << 16}},
      {"Unsqueeze", {Op::kUnsqueeze, 1, 2}},
      {"Squeeze", {Op::kSqueeze, 1, 2}},
      {"Neg", {Op::kNeg, 1, 1}},
      {"Abs", {Op::kAbs, 1, 1}},
      {"Sign", {Op::kSign, 1, 1}},
      {"Exp", {Op::kExp, 1, 1}},
      {"Log", {Op::kLog, 1, 1}},
      {"Sqrt", {Op::kSqrt, 1, 1}},
      {"Reciprocal", {Op::kReciprocal, 1, 1}},
      {"Floor", {Op::kFloor, 1, 1}},
      {"Ceil", {Op::kCeil, 1, 1}},
      {"Round", {Op::kRound, 1, 1}},
      {"Erf", {Op::kErf, 1, 1}},
      {"Sin", {Op::kSin, 1, 1}},
      {"Cos", {Op::kCos, 1, 1}},
      {"Tan", {Op::kTan, 1, 1}},
      {"Asin", {Op::kAsin, 1, 1}},
      {"Acos", {Op::kAcos, 1, 1}},
      {"Atan", {Op::kAtan, 1, 1}},
      {"Sinh", {Op::kSinh, 1, 1}},
      {"Cosh", {Op::kCosh, 1, 1}},
      {"Asinh", {Op::kAsinh, 1, 1}},
      {"Acosh", {Op::kAcosh, 1, 1}},
      {"Atanh", {Op::kAtanh, 1, 1}},
      {"Softplus", {Op::kSoftplus, 1, 1}},
      {"Softsign", {Op::kSoftsign, 1, 1}},
      {"Selu", {Op::kSelu, 1, 1}},
      {"Celu", {Op::kCelu, 1, 1}},
      {"HardSigmoid", {Op::kHardSigmoid, 1, 1}},
      {"HardSwish", {Op::kHardSwish, 1, 1}},
      {"ThresholdedRelu", {Op::kThresholdedRelu, 1, 1}},
      {"Gelu", {Op::kGelu, 1, 1}},
      {"Mish", {Op::kMish, 1, 1}},
      {"Not", {Op::kNot, 1, 1}},
      {"Pow", {Op::kPow, 2, 2}},
      {"PRelu", {Op::kPRelu, 2, 2}},
      {"Max", {Op::kMax, 1, 1 << 16}},
      {"Min", {Op::kMin, 1, 1 << 16}},
      {"Sum", {Op::kSum, 1, 1 << 16}},
      {"Mean", {Op::kMean, 1, 1 << 16}},
      {"Equal", {Op::kEqual, 2, 2}},
      {"Less", {Op::kLess, 2, 2}},
      {"Greater", {Op::kGreater, 2, 2}},
      {"LessOrEqual", {Op::kLessOrEqual, 2, 2}},
      {"GreaterOrEqual", {Op::kGreaterOrEqual, 2, 2}},
      {"And", {Op::kAnd, 2, 2}},
      {"Or", {Op::kOr, 2, 2}},
      {"Xor", {Op::kXor, 2, 2}},
      {"Where", {Op::kWhere, 3, 3}},
      {"Shape", {Op::kShape, 1, 1}},
      {"Size", {Op::kSize, 1, 1}},
      {"Gather", {Op::kGather, 2, 2}},
      {"Cast", {Op::kCast, 1, 1}},
      {"ConstantOfShape", {Op::kConstantOfShape, 1, 1}},
      {"Expand", {Op::kExpand, 2, 2}},
      {"Slice", {Op::kSlice, 1, 5}},
      {"Range", {Op::kRange, 3, 3}},
      {"Tile", {Op::kTile, 2, 2}},
      {"Dropout", {Op::kDropout, 1, 3}},
      {"ReduceMean", {Op::kReduceMean, 1, 2}},
      {"ReduceSum", {Op::kReduceSum, 1, 2}},
      {"ReduceMax", {Op::kReduceMax, 1, 2}},
      {"ReduceMin", {Op::kReduceMin, 1, 2}},
      {"ReduceProd", {Op::kReduceProd, 1, 2}},
      {"ReduceL1", {Op::kReduceL1, 1, 2}},
      {"ReduceL2", {Op::kReduceL2, 1, 2}},
      {"ReduceSumSquare", {Op::kReduceSumSquare, 1, 2}},
      {"ReduceLogSumExp", {Op::kReduceLogSumExp, 1, 2}},
      {"Softmax", {Op::kSoftmax, 1, 1}},
      {"LogSoftmax", {Op::kLogSoftmax, 1, 1}},
      {"BatchNormalization", {Op::kBatchNormalization, 5, 5}},
      {"LayerNormalization", {Op::kLayerNormalization, 2, 3}},
      {"ArgMax", {Op::kArgMax, 1, 1}},
      {"ArgMin", {Op::kArgMin, 1, 1}},
      {"CumSum", {Op::kCumSum, 2, 2}},
      {"Pad", {Op::kPad, 1, 4}},
      {"Split", {Op::kSplit, 1, 2}},
  };
  return t;
}

const onnx::AttributeProto* find_attr(const onnx::NodeProto& p, std::string_view name) {
  for (const auto& a : p.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

// One node's attributes, read by name and type (a missing one leaves the
// value as it is).
struct NodeAttributes {
  const onnx::NodeProto& p;
  Node& n;

  Status get_f(std::string_view name, float& v) const {
    const auto* a = find_attr(p, name);
    if (!a) return core::Ok{};
    if (a->type() != onnx::AttributeProto::FLOAT)
      return node_error(n, codes::ONNX_ATTRIBUTE,
                        "attribute " + std::string(name) + " must be a float");
    v = a->f();
    return core::Ok{};
  }
  Status get_i(std::string_view name, std::int64_t& v, bool* has = nullptr) const {
    const auto* a = find_attr(p, name);
    if (!a) return core::Ok{};
    if (a->type() != onnx::AttributeProto::INT)
      return node_error(n, codes::ONNX_ATTRIBUTE,
                        "attribute " + std::string(name) + " must be an int");
    v = a->i();
    if (has) *has = true;
    return core::Ok{};
  }
  /// A list of ints into n.ints (the one list an op reads as an attribute).
  Status get_ints(std::string_view name) const {
    const auto* a = find_attr(p, name);
    if (!a) return core::Ok{};
    if (a->type() != onnx::AttributeProto::INTS)
      return node_error(n, codes::ONNX_ATTRIBUTE,
                        "attribute " + std::string(name) + " must be a list of ints");
    if (a->ints_size() > static_cast<int>(kOnnxMaxRank) * 2)
      return node_error(n, codes::ONNX_ATTRIBUTE,
                        "attribute " + std::string(name) + " is too long");
    n.has_ints = true;
    n.ints.assign(a->ints().begin(), a->ints().end());
    return core::Ok{};
  }
};

/// A Constant's value, in any of its attribute forms, into consts[out_id].
Status read_constant(const onnx::NodeProto& p, Node& n, std::vector<OnnxTensor>& consts,
                     int out_id) {
  OnnxTensor& t = consts[static_cast<std::size_t>(out_id)];
  if (p.attribute_size() != 1)
    return node_error(n, codes::ONNX_ATTRIBUTE, "a Constant needs exactly one value attribute");
  const auto& a = p.attribute(0);
  if (a.name() == "value" && a.type() == onnx::AttributeProto::TENSOR) {
    std::string why = tensor_from_proto(a.t(), t);
    if (!why.empty()) return node_error(n, codes::ONNX_INITIALIZER, "value: " + why);
  } else if (a.name() == "value_float" && a.type() == onnx::AttributeProto::FLOAT) {
    t = OnnxTensor::from_f32({}, {a.f()});
  } else if (a.name() == "value_floats" && a.type() == onnx::AttributeProto::FLOATS) {
    t = OnnxTensor::from_f32({a.floats_size()}, {a.floats().begin(), a.floats().end()});
  } else if (a.name() == "value_int" && a.type() == onnx::AttributeProto::INT) {
    t = OnnxTensor::from_i64({}, {a.i()});
  } else if (a.name() == "value_ints" && a.type() == onnx::AttributeProto::INTS) {
    t = OnnxTensor::from_i64({a.ints_size()}, {a.ints().begin(), a.ints().end()});
  } else {
    return node_error(n, codes::ONNX_ATTRIBUTE,
                      "Constant attribute '" + a.name() +
                          "' is not supported (value, value_float(s), value_int(s))");
  }
  return core::Ok{};
}

/// A Cast's target type: an int, or before opset 6 a type name.
Status read_cast(const onnx::NodeProto& p, Node& n) {
  const auto* a = find_attr(p, "to");
  if (!a) return node_error(n, codes::ONNX_ATTRIBUTE, "attribute to is required");
  if (a->type() == onnx::AttributeProto::INT) {
    n.to = static_cast<std::int32_t>(a->i());
  } else if (a->type() == onnx::AttributeProto::STRING) {  // opset < 6: a type name
    n.to = a->s() == "FLOAT" ? 1 : a->s() == "INT64" ? 7 : a->s() == "BOOL" ? 9 : 0;
  } else {
    return node_error(n, codes::ONNX_ATTRIBUTE, "attribute to must be an int");
  }
  if (n.to != 1 && n.to != 7 && n.to != 9)
    return node_error(n, codes::ONNX_ATTRIBUTE,
                      std::string("cast to ") +
                          (a->type() == onnx::AttributeProto::STRING
                               ? a->s()
                               : onnx_type_name(static_cast<std::int32_t>(a->i()))) +
                          " is not supported (float32, int64 and bool only)");
  return core::Ok{};
}

Status read_constant_of_shape(const onnx::NodeProto& p, Node& n) {
  n.value = OnnxTensor::from_f32({}, {0.0f});
  const auto* a = find_attr(p, "value");
  if (!a) return core::Ok{};
  if (a->type() != onnx::AttributeProto::TENSOR)
    return node_error(n, codes::ONNX_ATTRIBUTE, "attribute value must be a tensor");
  std::string why = tensor_from_proto(a->t(), n.value);
  if (!why.empty()) return node_error(n, codes::ONNX_ATTRIBUTE, "value: " + why);
  if (n.value.numel() != 1)
    return node_error(n, codes::ONNX_ATTRIBUTE, "value must hold exactly one element");
  return core::Ok{};
}

/// Before opset 10: starts / ends / axes are attributes.
Status read_slice(const onnx::NodeProto& p, Node& n, const NodeAttributes& attrs) {
  if (auto st = attrs.get_ints("axes"); !st) return st;
  for (auto [name, dst] : {std::pair{"starts", &n.starts}, std::pair{"ends", &n.ends}}) {
    const auto* a = find_attr(p, name);
    if (!a) continue;
    if (a->type() != onnx::AttributeProto::INTS || a->ints_size() > static_cast<int>(kOnnxMaxRank))
      return node_error(n, codes::ONNX_ATTRIBUTE,
                        std::string("attribute ") + name + " must be a short list of ints");
    dst->assign(a->ints().begin(), a->ints().end());
    n.has_slice_attrs = true;
  }
  return core::Ok{};
}

Status read_pad(const onnx::NodeProto& p, Node& n, const NodeAttributes& attrs) {
  if (const auto* a = find_attr(p, "mode")) {
    if (a->type() != onnx::AttributeProto::STRING)
      return node_error(n, codes::ONNX_ATTRIBUTE, "attribute mode must be a string");
    if (a->s() == "constant")
      n.pad_mode = 0;
    else if (a->s() == "reflect")
      n.pad_mode = 1;
    else if (a->s() == "edge")
      n.pad_mode = 2;
    else
      return node_error(n, codes::ONNX_ATTRIBUTE,
                        "pad mode '" + a->s() + "' is not supported (constant, reflect, edge)");
  }
  if (auto st = attrs.get_f("value", n.pad_value); !st) return st;  // before opset 11
  return attrs.get_ints("pads");                                    // opset < 11
}

// Reads the attributes each op uses; unknown attributes are ignored (older
// opsets carry e.g. `consumed_inputs`, which changes nothing here).
Status read_attributes(const onnx::NodeProto& p, Node& n, std::int64_t opset,
                       std::vector<OnnxTensor>& consts, int out_id) {
  const NodeAttributes attrs{p, n};
  Status st = core::Ok{};
  std::int64_t tmp = 0;
  switch (n.op) {
    case Op::kGemm:
      n.alpha = 1.0f;
      n.beta = 1.0f;
      if (!(st = attrs.get_f("alpha", n.alpha))) return st;
      if (!(st = attrs.get_f("beta", n.beta))) return st;
      if (!(st = attrs.get_i("transA", tmp))) return st;
      n.trans_a = tmp != 0;
      tmp = 0;
      if (!(st = attrs.get_i("transB", tmp))) return st;
      n.trans_b = tmp != 0;
      return core::Ok{};
    case Op::kAdd:
    case Op::kSub:
    case Op::kMul:
    case Op::kDiv:
      // Opset < 7: no implicit broadcasting; `broadcast=1` lets B broadcast
      // onto A, aligned at `axis` (default: trailing dims).
      if (opset < 7) {
        n.legacy = true;
        if (!(st = attrs.get_i("broadcast", tmp))) return st;
        n.legacy_broadcast = tmp != 0;
        if (!(st = attrs.get_i("axis", n.axis, &n.has_axis))) return st;
      }
      return core::Ok{};
    case Op::kElu:
      n.alpha = 1.0f;
      return attrs.get_f("alpha", n.alpha);
    case Op::kLeakyRelu:
      n.alpha = 0.01f;
      return attrs.get_f("alpha", n.alpha);
    case Op::kClip:
      // Opset < 11: bounds are attributes; from 11 they are optional inputs.
      n.clip_min = -std::numeric_limits<float>::infinity();
      n.clip_max = std::numeric_limits<float>::infinity();
      if (!(st = attrs.get_f("min", n.clip_min))) return st;
      return attrs.get_f("max", n.clip_max);
    case Op::kFlatten:
      n.axis = 1;
      return attrs.get_i("axis", n.axis);
    case Op::kConcat:
      if (!(st = attrs.get_i("axis", n.axis, &n.has_axis))) return st;
      if (!n.has_axis && opset >= 4)
        return node_error(n, codes::ONNX_ATTRIBUTE, "attribute axis is required");
      if (!n.has_axis) n.axis = 1;  // opset 1-3 default
      return core::Ok{};
    case Op::kReshape:
      if (!(st = attrs.get_i("allowzero", tmp))) return st;
      n.allowzero = tmp != 0;
      return attrs.get_ints("shape");  // opset < 5
    case Op::kTranspose:
      return attrs.get_ints("perm");
    case Op::kSqueeze:
    case Op::kUnsqueeze:
      return attrs.get_ints("axes");  // opset < 13
    case Op::kConstant:
      return read_constant(p, n, consts, out_id);
    case Op::kSelu:
      n.alpha = 1.67326319217681884765625f;
      n.gamma = 1.05070102214813232421875f;
      if (!(st = attrs.get_f("alpha", n.alpha))) return st;
      return attrs.get_f("gamma", n.gamma);
    case Op::kCelu:
    case Op::kThresholdedRelu:
      n.alpha = 1.0f;
      return attrs.get_f("alpha", n.alpha);
    case Op::kHardSigmoid:
      n.alpha = 0.2f;
      n.beta = 0.5f;
      if (!(st = attrs.get_f("alpha", n.alpha))) return st;
      return attrs.get_f("beta", n.beta);
    case Op::kGelu: {
      const auto* a = find_attr(p, "approximate");
      if (!a) return core::Ok{};
      if (a->type() != onnx::AttributeProto::STRING || (a->s() != "none" && a->s() != "tanh"))
        return node_error(n, codes::ONNX_ATTRIBUTE,
                          "attribute approximate must be 'none' or 'tanh'");
      n.gelu_tanh = a->s() == "tanh";
      return core::Ok{};
    }
    case Op::kCast:
      return read_cast(p, n);
    case Op::kShape:
      if (!(st = attrs.get_i("start", n.start))) return st;
      return attrs.get_i("end", n.end, &n.has_end);
    case Op::kGather:
      n.axis = 0;
      return attrs.get_i("axis", n.axis);
    case Op::kConstantOfShape:
      return read_constant_of_shape(p, n);
    case Op::kSlice:
      return read_slice(p, n, attrs);
    case Op::kReduceMean:
    case Op::kReduceSum:
    case Op::kReduceMax:
    case Op::kReduceMin:
    case Op::kReduceProd:
    case Op::kReduceL1:
    case Op::kReduceL2:
    case Op::kReduceSumSquare:
    case Op::kReduceLogSumExp:
      tmp = 1;
      if (!(st = attrs.get_i("keepdims", tmp))) return st;
      n.keepdims = tmp != 0;
      tmp = 0;
      if (!(st = attrs.get_i("noop_with_empty_axes", tmp))) return st;
      n.noop_empty_axes = tmp != 0;
      return attrs.get_ints("axes");  // ReduceSum before 13, the others before 18
    case Op::kSoftmax:
    case Op::kLogSoftmax:
      // Before opset 13 the input is coerced to 2-D at axis (default 1);
      // from 13 the op runs along one axis (default -1).
      n.legacy_softmax = opset < 13;
      n.axis = n.legacy_softmax ? 1 : -1;
      return attrs.get_i("axis", n.axis);
    case Op::kBatchNormalization:
      n.epsilon = 1e-5f;
      if (!(st = attrs.get_f("epsilon", n.epsilon))) return st;
      tmp = 0;
      if (!(st = attrs.get_i("training_mode", tmp))) return st;
      if (tmp != 0)
        return node_error(n, codes::ONNX_ATTRIBUTE,
                          "training_mode=1 is not supported (inference statistics only)");
      tmp = 1;
      if (!(st = attrs.get_i("spatial", tmp))) return st;
      if (tmp != 1)
        return node_error(n, codes::ONNX_ATTRIBUTE,
                          "spatial=0 is not supported (per-channel only)");
      return core::Ok{};
    case Op::kArgMax:
    case Op::kArgMin:
      n.axis = 0;
      if (!(st = attrs.get_i("axis", n.axis))) return st;
      tmp = 1;
      if (!(st = attrs.get_i("keepdims", tmp))) return st;
      n.keepdims = tmp != 0;
      tmp = 0;
      if (!(st = attrs.get_i("select_last_index", tmp))) return st;
      n.select_last = tmp != 0;
      return core::Ok{};
    case Op::kCumSum:
      tmp = 0;
      if (!(st = attrs.get_i("exclusive", tmp))) return st;
      n.exclusive = tmp != 0;
      tmp = 0;
      if (!(st = attrs.get_i("reverse", tmp))) return st;
      n.reverse = tmp != 0;
      return core::Ok{};
    case Op::kPad:
      return read_pad(p, n, attrs);
    case Op::kSplit:
      n.axis = 0;
      if (!(st = attrs.get_i("axis", n.axis))) return st;
      if (!(st = attrs.get_i("num_outputs", n.num_outputs))) return st;
      return attrs.get_ints("split");  // opset < 13
    case Op::kLayerNormalization:
      n.axis = -1;
      n.epsilon = 1e-5f;
      if (!(st = attrs.get_i("axis", n.axis))) return st;
      return attrs.get_f("epsilon", n.epsilon);
    default:
      return core::Ok{};
  }
}

Result<OnnxValueInfo> value_info(const onnx::ValueInfoProto& v, const std::string& where) {
  OnnxValueInfo info;
  info.name = v.name();
  if (!v.has_type()) return info;
  if (!v.type().has_tensor_type())
    return core::error_at_pointer(codes::ONNX_TYPE,
                                  "'" + v.name() +
                                      "' is not a tensor (sequences, maps and "
                                      "optionals are not supported)",
                                  where);
  const auto& tt = v.type().tensor_type();
  info.elem_type = tt.elem_type();
  if (info.elem_type != 0 && info.elem_type != 1 && info.elem_type != 7 && info.elem_type != 9)
    return core::error_at_pointer(codes::ONNX_TYPE,
                                  "'" + v.name() + "' has element type " +
                                      onnx_type_name(info.elem_type) +
                                      " (float32, int64 and bool only)",
                                  where);
  if (tt.has_shape()) {
    info.has_shape = true;
    if (tt.shape().dim_size() > static_cast<int>(kOnnxMaxRank))
      return core::error_at_pointer(codes::ONNX_SHAPE, "'" + v.name() + "' has too many dimensions",
                                    where);
    for (const auto& d : tt.shape().dim()) {
      OnnxDim dim;
      if (d.has_dim_value()) dim.value = d.dim_value();
      if (d.has_dim_param()) dim.symbol = d.dim_param();
      info.shape.push_back(std::move(dim));
    }
  }
  return info;
}

}  // namespace

Result<OnnxTensor> parse_onnx_tensor(core::Bytes bytes) {
  if (bytes.size() > kOnnxMaxBytes)
    return make_error(codes::ONNX_TOO_LARGE, "tensor file larger than 1 GiB");
  onnx::TensorProto p;
  if (!p.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return make_error(codes::ONNX_PARSE, "not a valid TensorProto");
  OnnxTensor t;
  std::string why = tensor_from_proto(p, t);
  if (!why.empty()) return make_error(codes::ONNX_TENSOR, why);
  return t;
}

Result<OnnxModel> load_onnx(core::Bytes bytes) {
  if (bytes.size() > kOnnxMaxBytes)
    return make_error(codes::ONNX_TOO_LARGE, "model larger than 1 GiB");
  onnx::ModelProto m;
  // ParseFromArray keeps protobuf's default recursion limit (100).
  if (!m.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return core::error_at_offset(codes::ONNX_PARSE,
                                 "not a valid ONNX ModelProto (protobuf parse failed)", 0);
  auto g = std::make_unique<OnnxGraph>();
  OnnxDescription& d = g->desc;
  d.ir_version = m.ir_version();
  d.opset = 1;  // IR < 3 models carry no opset_import: opset 1
  for (const auto& o : m.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") d.opset = o.version();
  d.producer = m.producer_name();
  if (!m.producer_version().empty()) d.producer += " " + m.producer_version();
  if (!m.has_graph())
    return core::error_at_pointer(codes::ONNX_GRAPH, "the model has no graph", "/graph");
  const auto& gp = m.graph();
  d.graph_name = gp.name();
  d.node_count = static_cast<std::size_t>(gp.node_size());

  std::unordered_map<std::string, int> ids;
  auto define = [&](const std::string& name, const std::string& where) -> Result<int> {
    if (name.empty())
      return core::error_at_pointer(codes::ONNX_GRAPH, "a value has an empty name", where);
    auto [it, fresh] = ids.emplace(name, static_cast<int>(g->names.size()));
    if (!fresh)
      return core::error_at_pointer(codes::ONNX_GRAPH, "value '" + name + "' is defined twice",
                                    where);
    g->names.push_back(name);
    g->consts.emplace_back();
    g->is_const.push_back(0);
    return it->second;
  };

  // Initializers first: in IR < 4 they are also listed as graph inputs, as
  // defaults; here they are constants and not asked from the caller.
  for (int k = 0; k < gp.initializer_size(); ++k) {
    const auto& t = gp.initializer(k);
    std::string where = "/graph/initializer/" + std::to_string(k);
    auto id = define(t.name(), where);
    if (!id) return std::move(id).error();
    std::string why = tensor_from_proto(t, g->consts[static_cast<std::size_t>(*id)]);
    if (!why.empty())
      return core::error_at_pointer(codes::ONNX_INITIALIZER,
                                    "initializer '" + t.name() + "': " + why, where);
    g->is_const[static_cast<std::size_t>(*id)] = 1;
    d.parameters += static_cast<std::uint64_t>(g->consts[static_cast<std::size_t>(*id)].numel());
  }
  d.initializers = static_cast<std::size_t>(gp.initializer_size());
  if (gp.sparse_initializer_size() > 0)
    return core::error_at_pointer(codes::ONNX_INITIALIZER, "sparse initializers are not supported",
                                  "/graph/sparse_initializer/0");
  for (int k = 0; k < gp.input_size(); ++k) {
    const auto& v = gp.input(k);
    std::string where = "/graph/input/" + std::to_string(k);
    if (ids.count(v.name())) continue;  // an initializer's default
    auto info = value_info(v, where);
    if (!info) return std::move(info).error();
    auto id = define(v.name(), where);
    if (!id) return std::move(id).error();
    g->input_ids.push_back(*id);
    g->inputs.push_back(std::move(*info));
  }

  const auto& table = op_table();
  g->nodes.reserve(static_cast<std::size_t>(gp.node_size()));
  for (int k = 0; k < gp.node_size(); ++k) {
    const auto& p = gp.node(k);
    Node n;
    n.index = static_cast<std::size_t>(k);
    n.name = p.name();
    n.type = p.op_type();
    auto it = table.find(p.op_type());
    if ((!p.domain().empty() && p.domain() != "ai.onnx") || it == table.end()) {
      std::string dom = p.domain().empty() ? "" : " in domain '" + p.domain() + "'";
      return node_error(n, codes::ONNX_UNSUPPORTED_OP,
                        "op type '" + p.op_type() + "'" + dom +
                            " is not supported (see docs/deformer/onnx.md for the supported ops)");
    }
    n.op = it->second.op;
    // Optional inputs may be given as "" (absent); trailing ones may be left out.
    if (p.input_size() < it->second.min_in || p.input_size() > it->second.max_in)
      return node_error(n, codes::ONNX_NODE,
                        "has " + std::to_string(p.input_size()) + " inputs, the op takes " +
                            std::to_string(it->second.min_in) + " to " +
                            std::to_string(it->second.max_in));
    for (int j = 0; j < p.input_size(); ++j) {
      const std::string& in = p.input(j);
      if (in.empty()) {
        if (j < it->second.min_in)
          return node_error(n, codes::ONNX_NODE,
                            "required input " + std::to_string(j) + " is empty");
        n.in.push_back(-1);
        continue;
      }
      auto found = ids.find(in);
      if (found == ids.end()) {
        // Defined by a later node: the graph is not in topological order
        // (or has a cycle); defined nowhere: a missing value.
        bool later = false;
        for (int q = k; q < gp.node_size() && !later; ++q)
          for (const auto& o : gp.node(q).output()) later = later || o == in;
        if (later)
          return node_error(n, codes::ONNX_GRAPH_ORDER,
                            "input '" + in +
                                "' is produced by this or a later node: the graph has a cycle or "
                                "is not topologically sorted");
        return node_error(
            n, codes::ONNX_MISSING_VALUE,
            "input '" + in + "' is not a graph input, initializer or earlier node output");
      }
      n.in.push_back(found->second);
    }
    if (p.output_size() < 1 || p.output(0).empty())
      return node_error(n, codes::ONNX_NODE, "must have exactly one output");
    // Dropout's mask and the normalisations' saved statistics are optional
    // outputs; only the first output is computed, so the others must be unused ("").
    const bool optional_outputs =
        n.op == Op::kDropout || n.op == Op::kBatchNormalization || n.op == Op::kLayerNormalization;
    for (int j = 1; j < p.output_size() && n.op != Op::kSplit; ++j)
      if (!optional_outputs)
        return node_error(n, codes::ONNX_NODE, "must have exactly one output");
      else if (!p.output(j).empty())
        return node_error(n, codes::ONNX_NODE,
                          "output " + std::to_string(j) + " '" + p.output(j) +
                              "' is not supported: only the first output of " + p.op_type() +
                              " is computed");
    auto out = define(p.output(0), "/graph/node/" + std::to_string(k));
    if (!out) return node_error(n, codes::ONNX_GRAPH, out.error().message);
    n.out = *out;
    for (int j = 1; j < p.output_size() && n.op == Op::kSplit; ++j) {  // every part is named
      if (p.output(j).empty())
        return node_error(n, codes::ONNX_NODE, "output " + std::to_string(j) + " has no name");
      auto more = define(p.output(j), "/graph/node/" + std::to_string(k));
      if (!more) return node_error(n, codes::ONNX_GRAPH, more.error().message);
      n.more_outs.push_back(*more);
    }
    if (auto st = read_attributes(p, n, d.opset, g->consts, n.out); !st)
      return std::move(st).error();
    if (n.op == Op::kConstant) {
      g->is_const[static_cast<std::size_t>(n.out)] = 1;
      d.parameters +=
          static_cast<std::uint64_t>(g->consts[static_cast<std::size_t>(n.out)].numel());
    }
    ++d.ops[p.op_type()];
    g->nodes.push_back(std::move(n));
  }
  for (int k = 0; k < gp.output_size(); ++k) {
    const auto& v = gp.output(k);
    std::string where = "/graph/output/" + std::to_string(k);
    auto info = value_info(v, where);
    if (!info) return std::move(info).error();
    auto found = ids.find(v.name());
    if (found == ids.end())
      return core::error_at_pointer(codes::ONNX_MISSING_VALUE,
                                    "graph output '" + v.name() + "' is not produced by any node",
                                    where);
    g->output_ids.push_back(found->second);
    g->outputs.push_back(std::move(*info));
  }
  g->work.resize(g->names.size());
  g->ref.assign(g->names.size(), nullptr);
  OnnxModel model;
  model.g_ = std::move(g);
  return model;
}

}  // namespace charkit::deformer
