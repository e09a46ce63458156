// Engine networks imported as pose models: an exported `.nmn` comes back
// with the export's weights, hand-built `.nmn` and ONNX chains compute what
// a hand-written forward pass computes, and the errors (input count, local
// mode, unknown morph names, layers outside an MLP chain).
#include "charkit/deformer/engine_import.h"

#include <gtest/gtest.h>

#include <onnx/onnx_pb.h>
#include "onnx_builder.h"

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "charkit/core/json.h"
#include "charkit/deformer/deformer_file.h"
#include "charkit/deformer/detail/prng.h"
#include "charkit/deformer/nmn_export.h"

namespace charkit::deformer {
namespace {

using testkit::add_io;
using testkit::add_node;

core::Bytes bytes_of(const std::string& s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

InputSpec one_bone() {
  InputSpec s;
  s.bones.push_back({"a", {}});
  return s;
}

// A rig with `vertices` vertices and the given morph targets (deltas k+1 at
// every float, so each target is recognisable).
scene::Rig rig_with_morphs(std::size_t vertices, const std::vector<std::string>& names) {
  scene::Rig r;
  r.mesh_name = "body";
  r.positions.assign(3 * vertices, 0.0F);
  r.skeleton.joint_names = {"a", "b"};
  r.skeleton.parents = {-1, 0};
  r.skeleton.local_transforms.resize(2);
  for (std::size_t k = 0; k < names.size(); ++k)
    r.morph_targets.push_back(
        {names[k], std::vector<float>(3 * vertices, static_cast<float>(k + 1))});
  return r;
}

NmnLayer layer(NmnLayerType t, std::uint32_t in, std::uint32_t out) {
  NmnLayer l;
  l.type = t;
  l.in = in;
  l.out = out;
  return l;
}

// Global network, 1 bone (6 inputs), 2 outputs:
// Sequence[Linear 6->3, ReLU, Linear 3->2, TanH]; mean 0.5, std 2.
NmnNetwork relu_tanh_network() {
  NmnNetwork n;
  n.mode = NmnMode::kGlobal;
  n.num_morphs = 2;
  n.num_bones = 1;
  n.input_mean.assign(6, 0.5F);
  n.input_std.assign(6, 2.0F);
  n.runtime_name = "NNERuntimeBasicCpu";
  NmnLayer l1 = layer(NmnLayerType::kLinear, 6, 3);
  Rng rng(3);
  for (int i = 0; i < 18; ++i) l1.weights.push_back(static_cast<float>(rng.uniform(-1, 1)));
  l1.biases = {0.1F, -0.2F, 0.3F};
  NmnLayer l2 = layer(NmnLayerType::kLinear, 3, 2);
  l2.weights = {1, -1, 0.5F, 2, -0.25F, 0.75F};
  l2.biases = {0.05F, -0.1F};
  n.main.root = layer(NmnLayerType::kSequence, 6, 2);
  n.main.root.children = {l1, layer(NmnLayerType::kRelu, 3, 3), l2,
                          layer(NmnLayerType::kTanh, 2, 2)};
  n.main.input_size = 6;
  n.main.output_size = 2;
  return n;
}

// Forward pass of relu_tanh_network written out here, in double.
std::vector<double> relu_tanh_by_hand(const NmnNetwork& n, const std::vector<float>& raw) {
  const auto& l1 = n.main.root.children[0];
  const auto& l2 = n.main.root.children[2];
  std::vector<double> h(3), y(2);
  for (int o = 0; o < 3; ++o) {
    double s = l1.biases[o];
    for (int i = 0; i < 6; ++i) s += (raw[i] - 0.5) / 2.0 * l1.weights[i * 3 + o];
    h[o] = std::max(s, 0.0);
  }
  for (int o = 0; o < 2; ++o) {
    double s = l2.biases[o];
    for (int i = 0; i < 3; ++i) s += h[i] * l2.weights[i * 2 + o];
    y[o] = std::tanh(s);
  }
  return y;
}

// The one sniffer of the deformer file kinds (deformer/deformer_file.h): by
// content first (the .nmn magic, an ONNX field tag), then by name.
TEST(DeformerFile, KindByContentThenByName) {
  const std::vector<std::uint8_t> nmn{0x04, 0x13, 0x4A, 0x23, 0, 0, 0, 0};  // kNmnMagic, LE
  const std::vector<std::uint8_t> onnx{0x08, 0x07, 0x12, 0x00};             // ir_version 7
  const std::vector<std::uint8_t> json_text{'{', '}'};
  const std::vector<std::uint8_t> text{'h', 'i'};
  EXPECT_EQ(detect_deformer_file(nmn), DeformerFileKind::kNmn);
  EXPECT_EQ(detect_deformer_file(nmn, "x.onnx"), DeformerFileKind::kNmn);  // content wins
  EXPECT_EQ(detect_deformer_file(onnx), DeformerFileKind::kOnnx);
  EXPECT_EQ(detect_deformer_file(json_text), DeformerFileKind::kUnknown);  // no name: content only
  EXPECT_EQ(detect_deformer_file(json_text, "dir/pose_model.json"), DeformerFileKind::kPoseModel);
  EXPECT_EQ(detect_deformer_file(text, "net.onnx"), DeformerFileKind::kOnnx);
  EXPECT_EQ(detect_deformer_file(text, "net.bin"), DeformerFileKind::kUnknown);
  EXPECT_EQ(deformer_file_kind_name(DeformerFileKind::kPoseModel), "pose-model");
  // A BEM package starts with 0x42, opset_import's tag, whose length runs
  // past the bytes: not ONNX. Nor is a model cut short in a field.
  const std::vector<std::uint8_t> bem{'B', 'E', 'M', 0, 'P', 'K', 'G', 0, 1, 0, 5, 0};
  EXPECT_EQ(detect_deformer_file(bem, "package.bem"), DeformerFileKind::kUnknown);
  const std::vector<std::uint8_t> cut{0x08, 0x07, 0x3a, 0x10, 0x0a};  // graph of 16 bytes, 1 there
  EXPECT_EQ(detect_deformer_file(cut), DeformerFileKind::kUnknown);
  const std::vector<std::uint8_t> graph{0x08, 0x07, 0x3a, 0x02, 0x0a, 0x00};
  EXPECT_EQ(detect_deformer_file(graph), DeformerFileKind::kOnnx);
}

TEST(EngineImport, ExportedNmnGivesTheExportModelsWeights) {
  // Export a small network, then import it against a rig that holds the
  // exported morphs as morph targets (as after loading NAME.morphs.npz).
  Dataset d;
  d.spec.bones.push_back({"a", {}});
  d.spec.bones.push_back({"b", {}});
  d.sample_count = 30;
  d.vertex_count = 4;
  d.features.assign(30 * 6, 0.0F);
  d.deltas.assign(30 * 12, 0.0F);
  Rng rng(8);
  for (std::size_t i = 1; i < 30; ++i)
    for (std::size_t j = 0; j < 6; ++j)
      d.features[i * 6 + j] = static_cast<float>(rng.uniform(-0.7, 0.7));
  for (std::size_t i = 0; i < 30; ++i)
    for (std::size_t k = 0; k < 12; ++k)
      d.deltas[i * 12 + k] = static_cast<float>(
          0.2 * std::sin(d.features[i * 6 + k % 6] * (1.0 + static_cast<double>(k % 3))));
  scene::Rig rig = rig_with_morphs(4, {});
  NmnExportOptions o;
  o.hidden = {8};
  o.morphs = 3;
  o.iterations = 200;
  o.batch_size = 16;
  auto e = export_nmn(rig, d, o);
  ASSERT_TRUE(e) << e.error().to_string();
  for (std::size_t k = 0; k < e->model.morph_count(); ++k) {
    const auto first = e->model.morphs.begin() + static_cast<std::ptrdiff_t>(k * 12);
    rig.morph_targets.push_back({e->model.morph_names[k], std::vector<float>(first, first + 12)});
  }
  // An unrelated target first: matching is by name, not position.
  rig.morph_targets.insert(rig.morph_targets.begin(), {"smile", std::vector<float>(12, 9.0F)});
  auto bytes = write_nmn(e->network);
  ASSERT_TRUE(bytes);
  EngineImportOptions io;
  io.clamp = WeightClamp::kNone;
  auto m = import_engine_network(*bytes, "body.nmn", e->sidecar, rig, d.spec, io);
  ASSERT_TRUE(m) << m.error().to_string();
  EXPECT_EQ(m->layout, FeatureLayout::kEngine);
  // The export records its outputs' training ranges; the network as written
  // stays within them (no warning), one whose weights were damaged (every
  // weight x50) does not, and the import says so.
  ASSERT_EQ(e->sidecar.output_ranges.size(), e->network.output_count());
  EXPECT_FALSE(m->hyper->contains("warnings")) << m->hyper->dump();
  NmnNetwork damaged = e->network;
  std::function<void(NmnLayer&)> scale = [&](NmnLayer& layer) {
    for (float& w : layer.weights) w *= 50.0F;
    for (NmnLayer& child : layer.children) scale(child);
  };
  scale(damaged.main.root);
  auto damaged_bytes = write_nmn(damaged);
  ASSERT_TRUE(damaged_bytes);
  auto dm = import_engine_network(*damaged_bytes, "body.nmn", e->sidecar, rig, d.spec, io);
  ASSERT_TRUE(dm) << dm.error().to_string();
  ASSERT_TRUE(dm->hyper->contains("warnings"));
  EXPECT_EQ((*dm->hyper)["warnings"][0]["code"], "IMPORT_OUTPUT_RANGE") << dm->hyper->dump();
  EXPECT_EQ(m->kind, ModelKind::kNeural);
  EXPECT_TRUE(m->fixed_first_morph);
  EXPECT_EQ(m->morph_names, e->model.morph_names);
  EXPECT_EQ(m->morphs, e->model.morphs);
  EXPECT_EQ(m->mlp.hidden_activation, Activation::kELU);
  EXPECT_EQ(m->mlp.output_activation, Activation::kELU);

  PoseModel reference = e->model;
  reference.clamp = WeightClamp::kNone;
  PoseModelEvaluator got(*m), want(reference);
  std::vector<float> wg(4), ww(4), og(12), ow(12);
  auto rows = engine_features_of(rig, d);
  ASSERT_TRUE(rows);
  for (std::size_t r = 0; r < 30; ++r) {
    const std::span<const float> row(rows->data() + r * 12, 12);
    ASSERT_TRUE(got.weights(row, wg));
    ASSERT_TRUE(want.weights(row, ww));
    for (std::size_t k = 0; k < 4; ++k) EXPECT_NEAR(wg[k], ww[k], 1e-6) << r << " " << k;
    ASSERT_TRUE(got.offsets(row, og));
    ASSERT_TRUE(want.offsets(row, ow));
    for (std::size_t k = 0; k < 12; ++k) EXPECT_NEAR(og[k], ow[k], 1e-6);
  }
  EXPECT_EQ(e->model.morph_count(), 4u);

  // The export's sidecar records learned-basis coefficients: by default
  // they are not clamped; a sidecar that does not say gets [0, 1].
  EXPECT_EQ(e->sidecar.outputs, NmnOutputs::kBasisCoefficients);
  auto as_exported = import_engine_network(*bytes, "body.nmn", e->sidecar, rig, d.spec);
  ASSERT_TRUE(as_exported);
  EXPECT_EQ(as_exported->clamp, WeightClamp::kNone);
  EXPECT_EQ(as_exported->hyper->value("outputs", ""), "basisCoefficients");
  NmnSidecar unsaid = e->sidecar;
  unsaid.outputs = NmnOutputs::kUnknown;
  auto clamped = import_engine_network(*bytes, "body.nmn", unsaid, rig, d.spec);
  ASSERT_TRUE(clamped);
  EXPECT_EQ(clamped->clamp, WeightClamp::kUnit);

  // Unknown morph names in the sidecar.
  NmnSidecar side = e->sidecar;
  side.morph_targets[2] = "frown";
  auto bad = import_engine_network(*bytes, "body.nmn", side, rig, d.spec, io);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, "IMPORT_MORPHS");
  EXPECT_NE(bad.error().message.find("\"frown\""), std::string::npos);

  // Sidecar bone names that differ from the spec.
  side = e->sidecar;
  side.bones[1] = "c";
  bad = import_engine_network(*bytes, "body.nmn", side, rig, d.spec, io);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, "IMPORT_INPUTS");

  // Wrong input count: three bones = 18 inputs against the file's 12.
  InputSpec three = d.spec;
  three.bones.push_back({"c", {}});
  bad = import_engine_network(*bytes, "body.nmn", std::nullopt, rig, three, io);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, "IMPORT_INPUTS");
  EXPECT_NE(bad.error().message.find("12 inputs"), std::string::npos);
  EXPECT_NE(bad.error().message.find("18 inputs"), std::string::npos);

  // Training-range clamping cannot be imported.
  io.clamp = WeightClamp::kTrainingRange;
  bad = import_engine_network(*bytes, "body.nmn", e->sidecar, rig, d.spec, io);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, "IMPORT_OPTIONS");
}

// The import's default clamp follows what the sidecar says the outputs are.
TEST(EngineImport, DefaultClampFollowsTheSidecarsOutputs) {
  NmnSidecar basis;
  basis.outputs = NmnOutputs::kBasisCoefficients;
  NmnSidecar weights;
  weights.outputs = NmnOutputs::kMorphWeights;
  const NmnSidecar unknown;
  EXPECT_EQ(engine_import_clamp(std::nullopt, basis), WeightClamp::kNone);
  EXPECT_EQ(engine_import_clamp(std::nullopt, weights), WeightClamp::kUnit);
  EXPECT_EQ(engine_import_clamp(std::nullopt, unknown), WeightClamp::kUnit);
  EXPECT_EQ(engine_import_clamp(std::nullopt, std::nullopt), WeightClamp::kUnit);
  // Asked for, a clamp is used whatever the sidecar says.
  EXPECT_EQ(engine_import_clamp(WeightClamp::kUnit, basis), WeightClamp::kUnit);
  EXPECT_EQ(engine_import_clamp(WeightClamp::kNone, weights), WeightClamp::kNone);
}

TEST(EngineImport, HandBuiltNmnWithoutSidecarUsesTheRigsMorphsInOrder) {
  const NmnNetwork n = relu_tanh_network();
  auto bytes = write_nmn(n);
  ASSERT_TRUE(bytes) << bytes.error().to_string();
  const scene::Rig rig = rig_with_morphs(2, {"m0", "m1"});
  EngineImportOptions io;
  io.clamp = WeightClamp::kNone;
  auto m = import_engine_network(*bytes, "x.nmn", std::nullopt, rig, one_bone(), io);
  ASSERT_TRUE(m) << m.error().to_string();
  EXPECT_FALSE(m->fixed_first_morph);
  EXPECT_EQ(m->basis, NeuralBasis::kMorphTargets);
  EXPECT_EQ(m->morph_names, (std::vector<std::string>{"m0", "m1"}));
  EXPECT_EQ(m->mlp.hidden_activation, Activation::kReLU);
  EXPECT_EQ(m->mlp.output_activation, Activation::kTanh);
  PoseModelEvaluator ev(*m);
  std::vector<float> w(2), off(6);
  for (int probe = 0; probe < 3; ++probe) {
    std::vector<float> raw(6);
    for (int i = 0; i < 6; ++i) raw[i] = static_cast<float>(std::cos(1.1 * i + probe) * 1.5);
    const auto want = relu_tanh_by_hand(n, raw);
    ASSERT_TRUE(ev.weights(raw, w));
    EXPECT_NEAR(w[0], want[0], 1e-6);
    EXPECT_NEAR(w[1], want[1], 1e-6);
    // Offsets: weight 0 times 1 plus weight 1 times 2 at every float.
    ASSERT_TRUE(ev.offsets(raw, off));
    EXPECT_NEAR(off[0], want[0] + 2 * want[1], 1e-5);
  }
  // Counts must match without a sidecar.
  auto bad = import_engine_network(*bytes, "x.nmn", std::nullopt,
                                   rig_with_morphs(2, {"m0", "m1", "m2"}), one_bone(), io);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, "IMPORT_MORPHS");
}

TEST(EngineImport, LayersOutsideAnMlpChainAreRefused) {
  NmnNetwork n = relu_tanh_network();
  n.main.root.children[3] = layer(NmnLayerType::kGelu, 2, 2);
  auto bytes = write_nmn(n);
  ASSERT_TRUE(bytes) << bytes.error().to_string();
  auto m = import_engine_network(*bytes, "x.nmn", std::nullopt, rig_with_morphs(2, {"p", "q"}),
                                 one_bone(), {});
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().code, "IMPORT_UNSUPPORTED");
  EXPECT_NE(m.error().message.find("GELU"), std::string::npos);

  // Different activations between layers.
  n = relu_tanh_network();
  NmnLayer l3 = layer(NmnLayerType::kLinear, 2, 2);
  l3.weights = {1, 0, 0, 1};
  l3.biases = {0, 0};
  n.main.root.children.push_back(l3);  // ... Linear, TanH, Linear: ReLU then TanH between
  bytes = write_nmn(n);
  ASSERT_TRUE(bytes) << bytes.error().to_string();
  m = import_engine_network(*bytes, "x.nmn", std::nullopt, rig_with_morphs(2, {"p", "q"}),
                            one_bone(), {});
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().code, "IMPORT_UNSUPPORTED");
}

// Local network: 2 bones (12 inputs), no curves, one small network per bone
// as MultiLinear layers: Sequence[MultiLinear 2x(6->2), ELU, MultiLinear
// 2x(2->1)], 1 morph per bone; optionally a group model over both bones.
NmnNetwork local_network(bool with_group) {
  NmnNetwork n;
  n.mode = NmnMode::kLocal;
  n.num_morphs_per_bone = 1;
  n.num_bones = 2;
  n.num_floats_per_curve = 6;
  for (int i = 0; i < 12; ++i) {
    n.input_mean.push_back(0.05F * static_cast<float>(i));
    n.input_std.push_back(1.0F + 0.1F * static_cast<float>(i));
  }
  n.runtime_name = "NNERuntimeBasicCpu";
  NmnLayer a = layer(NmnLayerType::kMultiLinear, 12, 4);
  a.blocks = 2;
  a.rows = 6;
  a.cols = 2;
  for (int i = 0; i < 24; ++i) a.weights.push_back(0.03F * static_cast<float>(i % 7) - 0.1F);
  a.biases = {0.1F, -0.2F, 0.05F, 0.0F};
  NmnLayer b = layer(NmnLayerType::kMultiLinear, 4, 2);
  b.blocks = 2;
  b.rows = 2;
  b.cols = 1;
  b.weights = {0.7F, -0.4F, 0.25F, 0.9F};
  b.biases = {0.01F, -0.02F};
  n.main.root = layer(NmnLayerType::kSequence, 12, 2);
  n.main.root.children = {a, layer(NmnLayerType::kElu, 4, 4), b};
  n.main.input_size = 12;
  n.main.output_size = 2;
  if (with_group) {
    n.num_groups = 1;
    n.num_items_per_group = 2;
    NmnModel g;
    g.root = layer(NmnLayerType::kLinear, 12, 1);
    g.root.weights.assign(12, 0.5F);
    g.root.biases = {0.0F};
    g.input_size = 12;
    g.output_size = 1;
    n.group = g;
  }
  return n;
}

InputSpec two_bones() {
  InputSpec s;
  s.bones.push_back({"a", {}});
  s.bones.push_back({"b", {}});
  return s;
}

TEST(EngineImport, LocalModeRunsItsPerBoneNetworksLikeTheRunner) {
  const NmnNetwork n = local_network(false);
  auto bytes = write_nmn(n);
  ASSERT_TRUE(bytes) << bytes.error().to_string();
  EngineImportOptions io;
  io.clamp = WeightClamp::kNone;
  auto m = import_engine_network(*bytes, "local.nmn", std::nullopt, rig_with_morphs(2, {"p", "q"}),
                                 two_bones(), io);
  ASSERT_TRUE(m) << m.error().to_string();
  EXPECT_EQ((*m->hyper)["mode"], "local");
  EXPECT_FALSE(m->hyper->contains("warnings"));
  ASSERT_EQ(m->morph_count(), 2u);
  auto runner = NmnRunner::create(*read_nmn(*bytes));
  ASSERT_TRUE(runner) << runner.error().to_string();
  PoseModelEvaluator ev(*m);
  for (int row = 0; row < 5; ++row) {
    std::vector<float> x(12);
    for (int i = 0; i < 12; ++i) x[i] = std::sin(0.7F * static_cast<float>(row * 12 + i));
    std::vector<float> want(2), got(2);
    runner->run(x, want);
    ASSERT_TRUE(ev.weights(x, got));
    for (int k = 0; k < 2; ++k) EXPECT_NEAR(got[k], want[k], 1e-6) << "row " << row;
  }
}

TEST(EngineImport, LocalModeGroupModelIsNamedInAWarning) {
  auto bytes = write_nmn(local_network(true));
  ASSERT_TRUE(bytes) << bytes.error().to_string();
  auto m = import_engine_network(*bytes, "local.nmn", std::nullopt, rig_with_morphs(2, {"p", "q"}),
                                 two_bones(), {});
  ASSERT_TRUE(m) << m.error().to_string();
  ASSERT_TRUE(m->hyper->contains("warnings"));
  ASSERT_EQ((*m->hyper)["warnings"].size(), 1u);
  EXPECT_EQ((*m->hyper)["warnings"][0]["code"], "IMPORT_GROUP_NOT_RUN");
  EXPECT_EQ(m->morph_count(), 2u);  // the main model's outputs only
}

TEST(EngineImport, LocalModeWithCurvesIsRefusedWithAClearError) {
  NmnNetwork n;
  n.mode = NmnMode::kLocal;
  n.num_morphs = 0;
  n.num_morphs_per_bone = 1;
  n.num_bones = 1;
  n.num_curves = 1;
  n.num_floats_per_curve = 6;
  n.input_mean.assign(12, 0.0F);
  n.input_std.assign(12, 1.0F);
  n.runtime_name = "NNERuntimeBasicCpu";
  NmnLayer ml = layer(NmnLayerType::kMultiLinear, 12, 2);
  ml.blocks = 2;
  ml.rows = 6;
  ml.cols = 1;
  ml.weights.assign(12, 0.5F);
  ml.biases = {0, 0};
  n.main.root = layer(NmnLayerType::kSequence, 12, 2);
  n.main.root.children = {ml, layer(NmnLayerType::kElu, 2, 2)};
  n.main.input_size = 12;
  n.main.output_size = 2;
  auto bytes = write_nmn(n);
  ASSERT_TRUE(bytes) << bytes.error().to_string();
  InputSpec spec = one_bone();
  spec.curves.push_back({"c", 0.0, 1.0});
  auto m = import_engine_network(*bytes, "local.nmn", std::nullopt, rig_with_morphs(2, {"p", "q"}),
                                 spec, {});
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().code, "IMPORT_LOCAL_MODE");
  EXPECT_NE(m.error().message.find("deformer run"), std::string::npos);
}

TEST(EngineImport, NeitherKindIsRefused) {
  const std::string junk = "\xff\xfe not a network";
  auto m = import_engine_network(bytes_of(junk), "junk.bin", std::nullopt,
                                 rig_with_morphs(2, {"p"}), one_bone(), {});
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error().code, "IMPORT_FORMAT");
}

// ---- ONNX -----------------------------------------------------------------------

void add_init(onnx::GraphProto* g, const std::string& name, std::vector<std::int64_t> dims,
              const std::vector<float>& v) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (auto dim : dims) t->add_dims(dim);
  for (float f : v) t->add_float_data(f);
}

// x [1,6] -> Gemm(W1 [3,6] transposed, b1) -> Relu -> MatMul(W2 [3,2]) -> Add(b2) -> Tanh.
onnx::ModelProto onnx_chain(const std::vector<float>& w1, const std::vector<float>& w2) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* o = m.add_opset_import();
  o->set_domain("");
  o->set_version(13);
  auto* g = m.mutable_graph();
  g->set_name("mlp");
  add_io(g->add_input(), "x", {1, 6});
  add_io(g->add_output(), "y", {1, 2});
  add_init(g, "W1", {3, 6}, w1);
  add_init(g, "b1", {3}, {0.1F, -0.2F, 0.3F});
  add_init(g, "W2", {3, 2}, w2);
  add_init(g, "b2", {2}, {0.05F, -0.1F});
  auto* gemm = add_node(g, "Gemm", {"x", "W1", "b1"}, "h", "fc1");
  auto* tb = gemm->add_attribute();
  tb->set_name("transB");
  tb->set_type(onnx::AttributeProto::INT);
  tb->set_i(1);
  add_node(g, "Relu", {"h"}, "r");
  add_node(g, "MatMul", {"r", "W2"}, "z");
  add_node(g, "Add", {"z", "b2"}, "zb");
  add_node(g, "Tanh", {"zb"}, "y");
  return m;
}

TEST(EngineImport, OnnxChainMatchesAHandWrittenForwardPass) {
  Rng rng(4);
  std::vector<float> w1(18), w2 = {1, -1, 0.5F, 2, -0.25F, 0.75F};
  for (float& v : w1) v = static_cast<float>(rng.uniform(-1, 1));
  const std::string bytes = onnx_chain(w1, w2).SerializeAsString();
  EngineImportOptions io;
  io.clamp = WeightClamp::kNone;
  auto m = import_engine_network(bytes_of(bytes), "net.onnx", std::nullopt,
                                 rig_with_morphs(2, {"m0", "m1"}), one_bone(), io);
  ASSERT_TRUE(m) << m.error().to_string();
  EXPECT_EQ(m->mlp.hidden_activation, Activation::kReLU);
  EXPECT_EQ(m->mlp.output_activation, Activation::kTanh);
  PoseModelEvaluator ev(*m);
  std::vector<float> w(2);
  for (int probe = 0; probe < 3; ++probe) {
    std::vector<float> x(6);
    for (int i = 0; i < 6; ++i) x[i] = static_cast<float>(std::sin(0.9 * i - probe));
    // h = relu(x W1^T + b1); y = tanh(h W2 + b2).
    const double b1[3] = {0.1, -0.2, 0.3}, b2[2] = {0.05, -0.1};
    double h[3];
    for (int o = 0; o < 3; ++o) {
      double s = b1[o];
      for (int i = 0; i < 6; ++i) s += x[i] * double{w1[o * 6 + i]};
      h[o] = std::max(s, 0.0);
    }
    ASSERT_TRUE(ev.weights(x, w));
    for (int o = 0; o < 2; ++o) {
      double s = b2[o];
      for (int i = 0; i < 3; ++i) s += h[i] * double{w2[i * 2 + o]};
      EXPECT_NEAR(w[o], std::tanh(s), 1e-6) << probe << " " << o;
    }
  }
  // Input count against the spec: 2 bones = 12, the graph takes 6.
  InputSpec two = one_bone();
  two.bones.push_back({"b", {}});
  auto bad = import_engine_network(bytes_of(bytes), "net.onnx", std::nullopt,
                                   rig_with_morphs(2, {"m0", "m1"}), two, io);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, "IMPORT_INPUTS");
  EXPECT_NE(bad.error().message.find("takes 6 inputs"), std::string::npos);
  EXPECT_NE(bad.error().message.find("gives 12"), std::string::npos);
}

TEST(EngineImport, OnnxNodeOutsideTheChainIsNamed) {
  std::vector<float> w1(18, 0.1F), w2(6, 0.2F);
  onnx::ModelProto m = onnx_chain(w1, w2);
  m.mutable_graph()->mutable_node(4)->set_op_type("Sigmoid");
  m.mutable_graph()->mutable_node(4)->set_name("squash");
  auto r = import_engine_network(bytes_of(m.SerializeAsString()), "net.onnx", std::nullopt,
                                 rig_with_morphs(2, {"m0", "m1"}), one_bone(), {});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "IMPORT_UNSUPPORTED");
  EXPECT_NE(r.error().message.find("\"squash\" (Sigmoid)"), std::string::npos);
}

}  // namespace
}  // namespace charkit::deformer
