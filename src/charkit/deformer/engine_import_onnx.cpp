// The ONNX side of engine-network import (docs/deformer/nmn.md, "Import as a
// pose model"): an .onnx graph read into the step list engine_import.cpp
// turns into an MLP. Built with ONNX only; its stand-in is
// disabled/engine_import_onnx.cpp.
#include <onnx/onnx_pb.h>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "charkit/deformer/detail/engine_steps.h"
#include "charkit/deformer/error_codes.h"
#include "charkit/deformer/onnx.h"

namespace charkit::deformer::detail {

namespace {

using Step = EngineStep;

std::string node_label(const onnx::NodeProto& n, int index) {
  return "node " + std::to_string(index) + (n.name().empty() ? "" : " \"" + n.name() + "\"") +
         " (" + n.op_type() + ")";
}

const onnx::AttributeProto* attribute(const onnx::NodeProto& n, std::string_view name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

core::Result<OnnxTensor> tensor_of(const onnx::TensorProto& t) {
  return parse_onnx_tensor(core::as_bytes(t.SerializeAsString()));
}

}  // namespace

core::Result<std::vector<EngineStep>> onnx_steps(core::Bytes bytes, std::string& input_name) {
  onnx::ModelProto model;
  if (bytes.size() > kOnnxMaxBytes ||
      !model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return make_error(codes::ONNX_PARSE, "not a valid ModelProto");
  const onnx::GraphProto& g = model.graph();
  std::map<std::string, OnnxTensor> consts;
  for (const auto& t : g.initializer()) {
    auto v = tensor_of(t);
    if (!v) return std::move(v).error();
    consts[t.name()] = std::move(*v);
  }
  std::vector<std::string> inputs;
  for (const auto& vi : g.input())
    if (!consts.count(vi.name())) inputs.push_back(vi.name());
  if (inputs.size() != 1 || g.output_size() != 1)
    return unsupported("the graph has " + std::to_string(inputs.size()) + " inputs and " +
                       std::to_string(g.output_size()) + " outputs; an MLP has one of each");
  input_name = inputs[0];
  std::string cur = inputs[0];
  std::vector<Step> steps;
  bool bias_open = false;  // the last step is a MatMul/Gemm an Add may add a bias to
  for (int i = 0; i < g.node_size(); ++i) {
    const onnx::NodeProto& n = g.node(i);
    const std::string label = node_label(n, i);
    const std::string& op = n.op_type();
    if (!n.domain().empty() && n.domain() != "ai.onnx")
      return unsupported(label + " is of domain \"" + n.domain() + "\"");
    if (n.output_size() != 1) return unsupported(label + " does not have one output");
    if (op == "Constant") {
      const auto* a = attribute(n, "value");
      if (!a || !a->has_t()) return unsupported(label + " holds no tensor value");
      auto v = tensor_of(a->t());
      if (!v) return std::move(v).error();
      consts[n.output(0)] = std::move(*v);
      continue;
    }
    // Every other node continues the chain: one of its inputs is `cur`,
    // the others constants.
    auto constant = [&](int k) -> const OnnxTensor* {
      if (k >= n.input_size()) return nullptr;
      auto it = consts.find(n.input(k));
      return it == consts.end() || it->second.type != OnnxType::kFloat ? nullptr : &it->second;
    };
    const bool first_is_cur = n.input_size() > 0 && n.input(0) == cur;
    if (op == "Identity" || op == "Flatten" || op == "Relu" || op == "Tanh" || op == "Elu") {
      if (!first_is_cur || n.input_size() != 1)
        return unsupported(label + " does not continue the chain from \"" + cur + "\"");
      if (op == "Flatten") {
        const auto* a = attribute(n, "axis");
        if (a && a->i() != 1)
          return unsupported(label + " flattens at axis " + std::to_string(a->i()));
      } else if (op != "Identity") {
        Step s;
        s.label = label;
        s.act = op == "Relu" ? Activation::kReLU
                             : (op == "Tanh" ? Activation::kTanh : Activation::kELU);
        if (op == "Elu") {
          const auto* a = attribute(n, "alpha");
          if (a && a->f() != 1.0F)
            return unsupported(label + " has alpha " + std::to_string(a->f()) +
                               "; a pose model's ELU has alpha 1");
        }
        steps.push_back(std::move(s));
        bias_open = false;
      }
    } else if (op == "Gemm" || op == "MatMul") {
      const OnnxTensor* w = constant(1);
      if (!first_is_cur || !w || w->shape.size() != 2)
        return unsupported(label + " is not the chain's value times a constant 2-D weight");
      bool trans_b = false;
      float alpha = 1.0F, beta = 1.0F;
      if (op == "Gemm") {
        if (const auto* a = attribute(n, "transA"); a && a->i() != 0)
          return unsupported(label + " transposes its input");
        if (const auto* a = attribute(n, "transB")) trans_b = a->i() != 0;
        if (const auto* a = attribute(n, "alpha")) alpha = a->f();
        if (const auto* a = attribute(n, "beta")) beta = a->f();
      } else if (n.input_size() != 2) {
        return unsupported(label + " does not have two inputs");
      }
      const auto rows = static_cast<std::size_t>(w->shape[0]);
      const auto cols = static_cast<std::size_t>(w->shape[1]);
      Step s;
      s.dense = true;
      s.label = label;
      s.layer.inputs = trans_b ? cols : rows;
      s.layer.outputs = trans_b ? rows : cols;
      s.layer.weights.resize(rows * cols);
      for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t c = 0; c < cols; ++c) {
          const float v = alpha * w->f[r * cols + c];
          if (trans_b)
            s.layer.weights[c * rows + r] = v;
          else
            s.layer.weights[r * cols + c] = v;
        }
      s.layer.biases.assign(s.layer.outputs, 0.0F);
      if (op == "Gemm" && n.input_size() > 2 && !n.input(2).empty()) {
        const OnnxTensor* c = constant(2);
        const std::size_t out = s.layer.outputs;
        if (!c || (c->f.size() != out && c->f.size() != 1) ||
            (c->shape.size() == 2 && c->shape[0] != 1))
          return unsupported(label + " has a bias that is not a constant of " +
                             std::to_string(out) + " values");
        for (std::size_t o = 0; o < out; ++o)
          s.layer.biases[o] = beta * c->f[c->f.size() == 1 ? 0 : o];
      }
      steps.push_back(std::move(s));
      bias_open = true;
    } else if (op == "Add") {
      if (n.input_size() != 2 || !bias_open)
        return unsupported(label + " is not a bias added after a MatMul or Gemm");
      const int other = n.input(0) == cur ? 1 : (n.input(1) == cur ? 0 : -1);
      const OnnxTensor* c = other < 0 ? nullptr : constant(other);
      DenseLayer& l = steps.back().layer;
      if (!c || (c->f.size() != l.outputs && c->f.size() != 1) || (c->shape.size() > 2) ||
          (c->shape.size() == 2 && c->shape[0] != 1))
        return unsupported(label + " does not add a constant bias of " + std::to_string(l.outputs) +
                           " values to the chain");
      for (std::size_t o = 0; o < l.outputs; ++o) l.biases[o] += c->f[c->f.size() == 1 ? 0 : o];
      bias_open = false;
    } else {
      return unsupported(label +
                         " is not part of an MLP chain (Gemm, MatMul, Add, Relu, Elu, "
                         "Tanh, Identity, Flatten)");
    }
    cur = n.output(0);
  }
  if (cur != g.output(0).name())
    return unsupported("the chain ends at \"" + cur + "\", not at the graph output \"" +
                       g.output(0).name() + "\"");
  return steps;
}

}  // namespace charkit::deformer::detail
