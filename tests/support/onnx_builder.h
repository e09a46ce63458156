// Test helper: building small ONNX ModelProtos by hand with the protobuf
// classes (Debian's libonnx-dev, linked through charkit_deformer). Header-only,
// for the deformer tests (onnx_test, engine_import_test).
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <vector>

namespace charkit::testkit {

/// A float32 graph input or output with fixed dims.
inline void add_io(onnx::ValueInfoProto* v, const std::string& name,
                   const std::vector<std::int64_t>& dims) {
  v->set_name(name);
  auto* tt = v->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  for (auto d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
}

/// A node with one output.
inline onnx::NodeProto* add_node(onnx::GraphProto* g, const std::string& op,
                                 const std::vector<std::string>& in, const std::string& out,
                                 const std::string& name = "") {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(name);
  for (const auto& s : in) n->add_input(s);
  n->add_output(out);
  return n;
}

}  // namespace charkit::testkit
