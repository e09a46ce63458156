// ONNX loading and execution: the ONNX backend conformance cases copied into
// tests/data/onnx/ (upstream's expected outputs, not ours), PyTorch exports
// made by pytorch-exported/make_cases.py (PyTorch's outputs) and one-node
// cases made by numpy-node/make_cases.py (numpy's outputs) - each a
// model.onnx with test_data_set_*/input_N.pb and output_N.pb TensorProtos -
// and small models built here with the protobuf API for the error paths.
#include "charkit/deformer/onnx.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "onnx_builder.h"

namespace charkit::deformer {
namespace {

using testkit::add_io;
using testkit::add_node;

namespace fs = std::filesystem;

std::vector<std::uint8_t> read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

core::Bytes bytes_of(const std::string& s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

// Every case directory (one holding model.onnx) under tests/data/onnx/.
std::vector<std::string> case_dirs() {
  std::vector<std::string> out;
  std::error_code ec;
  // pytorch-exported: networks exported by Debian's PyTorch 1.13 with outputs
  // PyTorch computed (tests/data/onnx/pytorch-exported/make_cases.py);
  // numpy-node: one node per case, outputs computed by numpy.
  for (const char* suite : {"node", "pytorch-converted", "pytorch-exported", "numpy-node"}) {
    fs::path root = fs::path(CHARKIT_TEST_DATA) / "onnx" / suite;
    for (const auto& e : fs::directory_iterator(root, ec))
      if (fs::is_regular_file(e.path() / "model.onnx")) out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(OnnxConformance, CasesFound) {
  // Both suites copied (98 operator cases and 8 PyTorch models), the 16
  // exports and the 100 numpy-referenced node cases made here.
  EXPECT_GE(case_dirs().size(), 222u);
}

class OnnxCase : public ::testing::TestWithParam<std::string> {};

void expect_close(const OnnxTensor& want, const OnnxTensor& got, const std::string& what) {
  ASSERT_EQ(static_cast<int>(want.type), static_cast<int>(got.type)) << what;
  ASSERT_EQ(want.shape, got.shape) << what;
  if (want.type != OnnxType::kFloat) {  // int64 and bool: exact
    EXPECT_EQ(want.i, got.i) << what;
    return;
  }
  ASSERT_EQ(want.f.size(), got.f.size()) << what;
  std::size_t bad = 0;
  for (std::size_t k = 0; k < want.f.size(); ++k) {
    const double w = want.f[k], g = got.f[k];
    if (!(std::abs(w - g) <= 1e-6 + 1e-5 * std::abs(w))) {
      if (++bad <= 5) ADD_FAILURE() << what << " element " << k << ": want " << w << " got " << g;
    }
  }
  EXPECT_EQ(bad, 0u) << what;
}

TEST_P(OnnxCase, MatchesReference) {
  const fs::path dir = GetParam();
  const auto model_bytes = read_all(dir / "model.onnx");
  auto model = load_onnx(model_bytes);
  ASSERT_TRUE(model.ok()) << model.error().to_string();
  int sets = 0;
  for (int s = 0;; ++s) {
    const fs::path set = dir / ("test_data_set_" + std::to_string(s));
    if (!fs::is_directory(set)) break;
    ++sets;
    std::vector<OnnxTensor> inputs, want;
    for (std::size_t k = 0; fs::exists(set / ("input_" + std::to_string(k) + ".pb")); ++k) {
      auto t = parse_onnx_tensor(read_all(set / ("input_" + std::to_string(k) + ".pb")));
      ASSERT_TRUE(t.ok()) << t.error().to_string();
      inputs.push_back(std::move(*t));
    }
    for (std::size_t k = 0; fs::exists(set / ("output_" + std::to_string(k) + ".pb")); ++k) {
      auto t = parse_onnx_tensor(read_all(set / ("output_" + std::to_string(k) + ".pb")));
      ASSERT_TRUE(t.ok()) << t.error().to_string();
      want.push_back(std::move(*t));
    }
    // Twice: the second run reuses the planned buffers and must agree.
    for (int pass = 0; pass < 2; ++pass) {
      auto got = model->run(inputs);
      ASSERT_TRUE(got.ok()) << got.error().to_string();
      ASSERT_EQ(got->size(), want.size());
      for (std::size_t k = 0; k < want.size(); ++k)
        expect_close(want[k], (*got)[k], set.filename().string() + " output " + std::to_string(k));
    }
  }
  EXPECT_GT(sets, 0);
}

std::string case_name(const ::testing::TestParamInfo<std::string>& info) {
  fs::path p(info.param);
  std::string s = p.parent_path().filename().string() + "_" + p.filename().string();
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

INSTANTIATE_TEST_SUITE_P(Onnx, OnnxCase, ::testing::ValuesIn(case_dirs()), case_name);

// ---- Hand-built models -------------------------------------------------

onnx::ModelProto base_model(std::int64_t opset = 13) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* o = m.add_opset_import();
  o->set_domain("");
  o->set_version(opset);
  m.mutable_graph()->set_name("g");
  return m;
}

TEST(OnnxModel, GemmReluByHand) {
  // y = relu(x W^T + b), x [1,2], W [2,2] (transB), b [2]:
  // x = (1, -2), W rows (1, 1) and (2, 0.5), b = (0.5, 0):
  // row 0: 1 - 2 + 0.5 = -0.5 -> 0; row 1: 2 - 1 + 0 = 1.
  auto m = base_model();
  auto* g = m.mutable_graph();
  add_io(g->add_input(), "x", {1, 2});
  add_io(g->add_output(), "y", {1, 2});
  auto* w = g->add_initializer();
  w->set_name("W");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(2);
  w->add_dims(2);
  for (float f : {1.0f, 1.0f, 2.0f, 0.5f}) w->add_float_data(f);
  auto* b = g->add_initializer();
  b->set_name("b");
  b->set_data_type(onnx::TensorProto::FLOAT);
  b->add_dims(2);
  const float bv[2] = {0.5f, 0.0f};
  b->set_raw_data(std::string(reinterpret_cast<const char*>(bv), sizeof bv));
  auto* gemm = add_node(g, "Gemm", {"x", "W", "b"}, "h");
  auto* tb = gemm->add_attribute();
  tb->set_name("transB");
  tb->set_type(onnx::AttributeProto::INT);
  tb->set_i(1);
  add_node(g, "Relu", {"h"}, "y");
  auto model = load_onnx(bytes_of(m.SerializeAsString()));
  ASSERT_TRUE(model.ok()) << model.error().to_string();
  EXPECT_EQ(model->inputs().size(), 1u);
  EXPECT_EQ(model->description().parameters, 6u);
  EXPECT_EQ(model->description().ops.at("Gemm"), 1u);
  EXPECT_EQ(model->description().opset, 13);
  OnnxTensor x = OnnxTensor::from_f32({1, 2}, {1, -2});
  auto y = model->run({&x, 1});
  ASSERT_TRUE(y.ok()) << y.error().to_string();
  ASSERT_EQ((*y)[0].f.size(), 2u);
  EXPECT_FLOAT_EQ((*y)[0].f[0], 0.0f);
  EXPECT_FLOAT_EQ((*y)[0].f[1], 1.0f);
  // A wrongly shaped input is refused with the input named.
  OnnxTensor bad = OnnxTensor::from_f32({1, 3}, {1, 2, 3});
  auto e = model->run({&bad, 1});
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().message.find("'x'"), std::string::npos);
}

TEST(OnnxModel, UnsupportedOpNamesTheNode) {
  auto m = base_model();
  auto* g = m.mutable_graph();
  add_io(g->add_input(), "x", {2});
  add_io(g->add_output(), "y", {2});
  add_node(g, "Relu", {"x"}, "h");
  add_node(g, "Conv", {"h"}, "y", "my_conv");
  auto model = load_onnx(bytes_of(m.SerializeAsString()));
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.error().code, "ONNX_UNSUPPORTED_OP");
  EXPECT_NE(model.error().message.find("node 1 'my_conv'"), std::string::npos)
      << model.error().message;
  EXPECT_NE(model.error().message.find("Conv"), std::string::npos);
}

TEST(OnnxModel, BadInitializerSize) {
  auto m = base_model();
  auto* g = m.mutable_graph();
  add_io(g->add_input(), "x", {3});
  add_io(g->add_output(), "y", {3});
  auto* w = g->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(3);
  w->set_raw_data(std::string(8, '\0'));  // 2 floats for 3 declared
  add_node(g, "Add", {"x", "w"}, "y");
  auto model = load_onnx(bytes_of(m.SerializeAsString()));
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.error().code, "ONNX_INITIALIZER");
  EXPECT_NE(model.error().message.find("'w'"), std::string::npos);
  EXPECT_EQ(model.error().location.pointer, "/graph/initializer/0");
  // Typed field with too many values is refused too.
  w->clear_raw_data();
  for (int k = 0; k < 4; ++k) w->add_float_data(1.0f);
  EXPECT_FALSE(load_onnx(bytes_of(m.SerializeAsString())).ok());
  // Dims whose product overflows are refused before anything is allocated.
  w->clear_float_data();
  w->add_dims(std::int64_t{1} << 40);
  w->add_dims(std::int64_t{1} << 40);
  EXPECT_FALSE(load_onnx(bytes_of(m.SerializeAsString())).ok());
  // An empty tensor whose other dims multiply past the bound (found by
  // onnx_fuzz: the element count overflowed before reaching the 0).
  w->clear_dims();
  w->add_dims(std::int64_t{1} << 61);
  w->add_dims(9);
  w->add_dims(0);
  auto empty = load_onnx(bytes_of(m.SerializeAsString()));
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().code, "ONNX_INITIALIZER");
}

TEST(OnnxModel, CycleIsRefused) {
  // a = Relu(b); b = Relu(a): each consumes the other's output.
  auto m = base_model();
  auto* g = m.mutable_graph();
  add_io(g->add_input(), "x", {2});
  add_io(g->add_output(), "b", {2});
  add_node(g, "Add", {"x", "b"}, "a", "first");
  add_node(g, "Relu", {"a"}, "b");
  auto model = load_onnx(bytes_of(m.SerializeAsString()));
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.error().code, "ONNX_GRAPH_ORDER");
  EXPECT_NE(model.error().message.find("'first'"), std::string::npos);
}

TEST(OnnxModel, MissingInputIsRefused) {
  auto m = base_model();
  auto* g = m.mutable_graph();
  add_io(g->add_input(), "x", {2});
  add_io(g->add_output(), "y", {2});
  add_node(g, "Mul", {"x", "nowhere"}, "y");
  auto model = load_onnx(bytes_of(m.SerializeAsString()));
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.error().code, "ONNX_MISSING_VALUE");
  EXPECT_NE(model.error().message.find("'nowhere'"), std::string::npos);
  // A graph output nobody produces.
  auto m2 = base_model();
  add_io(m2.mutable_graph()->add_input(), "x", {2});
  add_io(m2.mutable_graph()->add_output(), "z", {2});
  EXPECT_FALSE(load_onnx(bytes_of(m2.SerializeAsString())).ok());
}

TEST(OnnxModel, ExternalDataAndGarbageRefused) {
  auto m = base_model();
  auto* g = m.mutable_graph();
  add_io(g->add_input(), "x", {2});
  add_io(g->add_output(), "y", {2});
  auto* w = g->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(2);
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* kv = w->add_external_data();
  kv->set_key("location");
  kv->set_value("weights.bin");
  add_node(g, "Add", {"x", "w"}, "y");
  auto model = load_onnx(bytes_of(m.SerializeAsString()));
  ASSERT_FALSE(model.ok());
  EXPECT_NE(model.error().message.find("external"), std::string::npos);
  const std::string junk = "\x08\xff\xff\xff";
  EXPECT_FALSE(load_onnx(bytes_of(junk)).ok());
}

TEST(OnnxModel, LegacyOpsetVariants) {
  // Opset 6: Clip bounds as attributes, Add with broadcast=1 and axis=0
  // (B [2] aligned with A's first dim), Unsqueeze axes as attribute.
  auto m = base_model(6);
  auto* g = m.mutable_graph();
  add_io(g->add_input(), "x", {2, 2});
  add_io(g->add_output(), "y", {1, 2, 2});
  auto* b = g->add_initializer();
  b->set_name("b");
  b->set_data_type(onnx::TensorProto::FLOAT);
  b->add_dims(2);
  b->add_float_data(10.0f);
  b->add_float_data(20.0f);
  auto* add = add_node(g, "Add", {"x", "b"}, "s");
  auto* a1 = add->add_attribute();
  a1->set_name("broadcast");
  a1->set_type(onnx::AttributeProto::INT);
  a1->set_i(1);
  auto* a2 = add->add_attribute();
  a2->set_name("axis");
  a2->set_type(onnx::AttributeProto::INT);
  a2->set_i(0);
  auto* clip = add_node(g, "Clip", {"s"}, "c");
  auto* mn = clip->add_attribute();
  mn->set_name("min");
  mn->set_type(onnx::AttributeProto::FLOAT);
  mn->set_f(11.0f);
  auto* mx = clip->add_attribute();
  mx->set_name("max");
  mx->set_type(onnx::AttributeProto::FLOAT);
  mx->set_f(21.5f);
  auto* un = add_node(g, "Unsqueeze", {"c"}, "y");
  auto* ax = un->add_attribute();
  ax->set_name("axes");
  ax->set_type(onnx::AttributeProto::INTS);
  ax->add_ints(0);
  auto model = load_onnx(bytes_of(m.SerializeAsString()));
  ASSERT_TRUE(model.ok()) << model.error().to_string();
  // x = [[0, 2], [1, 3]]: + [[10, 10], [20, 20]] = [[10, 12], [21, 23]],
  // clipped to [11, 21.5]: [[11, 12], [21, 21.5]].
  OnnxTensor x = OnnxTensor::from_f32({2, 2}, {0, 2, 1, 3});
  auto y = model->run({&x, 1});
  ASSERT_TRUE(y.ok()) << y.error().to_string();
  EXPECT_EQ((*y)[0].shape, (std::vector<std::int64_t>{1, 2, 2}));
  EXPECT_EQ((*y)[0].f, (std::vector<float>{11, 12, 21, 21.5f}));
}

TEST(OnnxModel, HugeBroadcastIsRefused) {
  // [n,1] + [1,n] with n = 2^14 gives 2^28 elements, above kOnnxMaxElements.
  auto m = base_model();
  auto* g = m.mutable_graph();
  add_io(g->add_input(), "a", {16384, 1});
  add_io(g->add_input(), "b", {1, 16384});
  add_io(g->add_output(), "y", {16384, 16384});
  add_node(g, "Add", {"a", "b"}, "y");
  auto model = load_onnx(bytes_of(m.SerializeAsString()));
  ASSERT_TRUE(model.ok());
  std::vector<OnnxTensor> in{OnnxTensor::from_f32({16384, 1}, std::vector<float>(16384)),
                             OnnxTensor::from_f32({1, 16384}, std::vector<float>(16384))};
  auto y = model->run(in);
  ASSERT_FALSE(y.ok());
  EXPECT_EQ(y.error().code, "ONNX_SHAPE");
}

TEST(OnnxModel, LayerNormalizationWithoutBias) {
  // X [2,2,3], axis 1: each of the 2 rows of 6 values normalised, times a
  // Scale of the normalised dims' shape [2,3]; no B (the optional third
  // input left out: the fuzzer found its broadcast strides left unset).
  auto m = base_model(17);
  auto* g = m.mutable_graph();
  add_io(g->add_input(), "x", {2, 2, 3});
  add_io(g->add_output(), "y", {2, 2, 3});
  const float scale[6] = {1.0f, 2.0f, 3.0f, 0.5f, -1.0f, 0.0f};
  auto* s = g->add_initializer();
  s->set_name("s");
  s->set_data_type(onnx::TensorProto::FLOAT);
  s->add_dims(2);
  s->add_dims(3);
  for (float f : scale) s->add_float_data(f);
  auto* ln = add_node(g, "LayerNormalization", {"x", "s"}, "y");
  auto* axis = ln->add_attribute();
  axis->set_name("axis");
  axis->set_type(onnx::AttributeProto::INT);
  axis->set_i(1);
  auto model = load_onnx(bytes_of(m.SerializeAsString()));
  ASSERT_TRUE(model.ok()) << model.error().to_string();
  const std::vector<float> xv = {1, 2, 3, 4, 5, 6, -3, 0, 9, 2, 2, 2};
  OnnxTensor x = OnnxTensor::from_f32({2, 2, 3}, xv);
  auto y = model->run({&x, 1});
  ASSERT_TRUE(y.ok()) << y.error().to_string();
  ASSERT_EQ((*y)[0].f.size(), 12u);
  for (std::size_t row = 0; row < 2; ++row) {
    double mean = 0.0, var = 0.0;
    for (std::size_t k = 0; k < 6; ++k) mean += xv[row * 6 + k];
    mean /= 6.0;
    for (std::size_t k = 0; k < 6; ++k) var += (xv[row * 6 + k] - mean) * (xv[row * 6 + k] - mean);
    var /= 6.0;
    for (std::size_t k = 0; k < 6; ++k) {
      const double want = (xv[row * 6 + k] - mean) / std::sqrt(var + 1e-5) * scale[k];
      EXPECT_NEAR((*y)[0].f[row * 6 + k], want, 1e-5) << row << "," << k;
    }
  }
}

// One node `op` over the float input x [n]: loads, then runs on `x`.
struct OneNode {
  onnx::ModelProto m = base_model();
  onnx::NodeProto* node = nullptr;
  OneNode(const std::string& op, std::vector<std::string> in, std::int64_t n) {
    auto* g = m.mutable_graph();
    add_io(g->add_input(), "x", {n});
    auto* out = g->add_output();
    out->set_name("y");
    node = add_node(g, op, std::move(in), "y", "the_node");
  }
  void attr_i(const std::string& name, std::int64_t v) {
    auto* a = node->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  void init_i64(const std::string& name, std::vector<std::int64_t> v) {
    auto* t = m.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(static_cast<std::int64_t>(v.size()));
    for (auto x : v) t->add_int64_data(x);
  }
  core::Result<OnnxModel> load() const { return load_onnx(bytes_of(m.SerializeAsString())); }
};

TEST(OnnxModel, ErrorsOfTheWiderOpSet) {
  // Cast of NaN to int64 is an error naming the node, not undefined behaviour.
  {
    OneNode c("Cast", {"x"}, 2);
    c.attr_i("to", onnx::TensorProto::INT64);
    auto model = c.load();
    ASSERT_TRUE(model.ok()) << model.error().to_string();
    OnnxTensor x = OnnxTensor::from_f32({2}, {1.5f, std::nanf("")});
    auto y = model->run({&x, 1});
    ASSERT_FALSE(y.ok());
    EXPECT_EQ(y.error().code, "ONNX_VALUE");
    EXPECT_NE(y.error().message.find("'the_node'"), std::string::npos) << y.error().message;
    OnnxTensor fine = OnnxTensor::from_f32({2}, {-1.5f, 2.9f});
    auto z = model->run({&fine, 1});
    ASSERT_TRUE(z.ok()) << z.error().to_string();
    EXPECT_EQ((*z)[0].type, OnnxType::kInt64);
    EXPECT_EQ((*z)[0].i, (std::vector<std::int64_t>{-1, 2}));
  }
  // Cast to float64 is refused at load time.
  {
    OneNode c("Cast", {"x"}, 2);
    c.attr_i("to", onnx::TensorProto::DOUBLE);
    auto model = c.load();
    ASSERT_FALSE(model.ok());
    EXPECT_EQ(model.error().code, "ONNX_ATTRIBUTE");
    EXPECT_NE(model.error().message.find("float64"), std::string::npos);
  }
  // Gather with an index past the end.
  {
    OneNode c("Gather", {"x", "idx"}, 3);
    c.init_i64("idx", {0, 3});
    auto model = c.load();
    ASSERT_TRUE(model.ok()) << model.error().to_string();
    OnnxTensor x = OnnxTensor::from_f32({3}, {1, 2, 3});
    auto y = model->run({&x, 1});
    ASSERT_FALSE(y.ok());
    EXPECT_EQ(y.error().code, "ONNX_VALUE");
    EXPECT_NE(y.error().message.find("index 3"), std::string::npos);
  }
  // Slice with step 0.
  {
    OneNode c("Slice", {"x", "s", "e", "a", "t"}, 4);
    c.init_i64("s", {0});
    c.init_i64("e", {4});
    c.init_i64("a", {0});
    c.init_i64("t", {0});
    auto model = c.load();
    ASSERT_TRUE(model.ok());
    OnnxTensor x = OnnxTensor::from_f32({4}, {1, 2, 3, 4});
    auto y = model->run({&x, 1});
    ASSERT_FALSE(y.ok());
    EXPECT_NE(y.error().message.find("step 0"), std::string::npos);
  }
  // A Range too long for the executor's element bound.
  {
    auto m = base_model();
    auto* g = m.mutable_graph();
    auto* out = g->add_output();
    out->set_name("y");
    for (auto [name, v] : {std::pair{"s", 0.0f}, std::pair{"l", 1e12f}, std::pair{"d", 1.0f}}) {
      auto* t = g->add_initializer();
      t->set_name(name);
      t->set_data_type(onnx::TensorProto::FLOAT);
      t->add_float_data(v);
    }
    add_node(g, "Range", {"s", "l", "d"}, "y");
    auto model = load_onnx(bytes_of(m.SerializeAsString()));
    ASSERT_TRUE(model.ok()) << model.error().to_string();
    auto y = model->run({});
    ASSERT_FALSE(y.ok());
    EXPECT_EQ(y.error().code, "ONNX_SHAPE");
  }
  // Dropout's mask output and BatchNormalization in training mode are refused.
  {
    OneNode c("Dropout", {"x"}, 2);
    c.node->add_output("mask");
    auto model = c.load();
    ASSERT_FALSE(model.ok());
    EXPECT_NE(model.error().message.find("'mask'"), std::string::npos) << model.error().message;
  }
  {
    OneNode c("BatchNormalization", {"x", "x", "x", "x", "x"}, 2);
    c.attr_i("training_mode", 1);
    auto model = c.load();
    ASSERT_FALSE(model.ok());
    EXPECT_NE(model.error().message.find("training_mode"), std::string::npos);
  }
  // Integer division by zero.
  {
    auto m = base_model();
    auto* g = m.mutable_graph();
    auto* out = g->add_output();
    out->set_name("y");
    for (auto [name, v] : {std::pair{"a", std::int64_t{7}}, std::pair{"b", std::int64_t{0}}}) {
      auto* t = g->add_initializer();
      t->set_name(name);
      t->set_data_type(onnx::TensorProto::INT64);
      t->add_int64_data(v);
    }
    add_node(g, "Div", {"a", "b"}, "y");
    auto model = load_onnx(bytes_of(m.SerializeAsString()));
    ASSERT_TRUE(model.ok()) << model.error().to_string();
    auto y = model->run({});
    ASSERT_FALSE(y.ok());
    EXPECT_EQ(y.error().code, "ONNX_VALUE");
  }
  // Element limits: per tensor (a Tile past it), over the whole run (three
  // tensors of 500 against 1,200 together) and the work of a MatMul.
  {
    OneNode c("Tile", {"x", "r"}, 10);
    c.init_i64("r", {1000});
    auto model = c.load();
    ASSERT_TRUE(model.ok()) << model.error().to_string();
    model->set_element_limits(1000, 1200);
    OnnxTensor x = OnnxTensor::from_f32({10}, std::vector<float>(10, 1.0f));
    auto y = model->run({&x, 1});
    ASSERT_FALSE(y.ok());
    EXPECT_EQ(y.error().code, "ONNX_SHAPE");
    EXPECT_NE(y.error().message.find("1000 elements"), std::string::npos) << y.error().message;
  }
  {
    OneNode c("Tile", {"x", "r"}, 10);
    c.init_i64("r", {50});
    c.m.mutable_graph()->mutable_node(0)->set_output(0, "t");
    add_node(c.m.mutable_graph(), "Add", {"t", "t"}, "u");
    add_node(c.m.mutable_graph(), "Add", {"u", "u"}, "y", "third");
    auto model = c.load();
    ASSERT_TRUE(model.ok()) << model.error().to_string();
    OnnxTensor x = OnnxTensor::from_f32({10}, std::vector<float>(10, 1.0f));
    ASSERT_TRUE(model->run({&x, 1}).ok());  // the defaults allow it
    model->set_element_limits(1000, 1200);
    auto y = model->run({&x, 1});
    ASSERT_FALSE(y.ok());
    EXPECT_NE(y.error().message.find("'third'"), std::string::npos) << y.error().message;
    EXPECT_NE(y.error().message.find("together"), std::string::npos) << y.error().message;
    model->set_element_limits(1000, 1500);  // exactly enough
    EXPECT_TRUE(model->run({&x, 1}).ok());
  }
  {
    // [1, 65536] x [65536, 1]: one output, 65,536 multiply-adds; the bound is
    // 4,096 per allowed output element.
    OneNode c("MatMul", {"a", "b"}, 1);
    auto* g = c.m.mutable_graph();
    g->clear_input();
    add_io(g->add_input(), "a", {1, 65536});
    add_io(g->add_input(), "b", {65536, 1});
    auto model = c.load();
    ASSERT_TRUE(model.ok()) << model.error().to_string();
    std::vector<OnnxTensor> in{OnnxTensor::from_f32({1, 65536}, std::vector<float>(65536, 1.0f)),
                               OnnxTensor::from_f32({65536, 1}, std::vector<float>(65536, 2.0f))};
    model->set_element_limits(16, 100);  // 16 x 4096 = 65536: allowed
    auto ok = model->run(in);
    ASSERT_TRUE(ok.ok()) << ok.error().to_string();
    EXPECT_FLOAT_EQ((*ok)[0].f[0], 131072.0f);
    model->set_element_limits(15, 100);
    auto y = model->run(in);
    ASSERT_FALSE(y.ok());
    EXPECT_NE(y.error().message.find("multiply-adds"), std::string::npos) << y.error().message;
  }
  // Split sizes that do not add up to the axis.
  {
    auto m = base_model();
    auto* g = m.mutable_graph();
    add_io(g->add_input(), "x", {5});
    for (const char* o : {"p", "q"}) g->add_output()->set_name(o);
    auto* t = g->add_initializer();
    t->set_name("s");
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(2);
    t->add_int64_data(2);
    t->add_int64_data(2);
    auto* sp = add_node(g, "Split", {"x", "s"}, "p");
    sp->add_output("q");
    auto model = load_onnx(bytes_of(m.SerializeAsString()));
    ASSERT_TRUE(model.ok()) << model.error().to_string();
    OnnxTensor x = OnnxTensor::from_f32({5}, {1, 2, 3, 4, 5});
    auto y = model->run({&x, 1});
    ASSERT_FALSE(y.ok());
    EXPECT_NE(y.error().message.find("sum to 4"), std::string::npos) << y.error().message;
  }
  // Mixed float32 / int64 operands of Add.
  {
    OneNode c("Add", {"x", "k"}, 2);
    c.init_i64("k", {1, 2});
    auto model = c.load();
    ASSERT_TRUE(model.ok());
    OnnxTensor x = OnnxTensor::from_f32({2}, {1, 2});
    auto y = model->run({&x, 1});
    ASSERT_FALSE(y.ok());
    EXPECT_EQ(y.error().code, "ONNX_TYPE");
  }
}

}  // namespace
}  // namespace charkit::deformer
