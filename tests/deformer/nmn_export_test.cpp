// `.nmn` export of a model trained in the engine layout, as it is (its layers,
// and the files imported back giving its offsets), and by retraining: engine features from
// axis-angle datasets (checked against hand-computed rotation matrices and against targets built
// directly in the engine layout), the engine's averaged input std by hand,
// the written network's header and layers, its re-read outputs, the three
// saved files, and errors.
#include "charkit/deformer/nmn_export.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <numbers>
#include <string>
#include <vector>

#include "charkit/deformer/detail/prng.h"
#include "charkit/deformer/engine_import.h"
#include "charkit/deformer/npy.h"
#include "charkit/deformer/pose_model.h"
#include "charkit/deformer/targets.h"

namespace charkit::deformer {
namespace {

namespace fs = std::filesystem;

// A rig with joints "a" and "b" (rest rotations given) and `vertices` vertices;
// only names, rest rotations and the vertex count matter to the export.
scene::Rig two_joint_rig(std::size_t vertices, scene::Vec4 rest_a = {0, 0, 0, 1},
                         scene::Vec4 rest_b = {0, 0, 0, 1}) {
  scene::Rig r;
  r.positions.assign(3 * vertices, 0.0F);
  r.skeleton.joint_names = {"root", "a", "b"};
  r.skeleton.parents = {-1, 0, 1};
  r.skeleton.local_transforms.resize(3);
  r.skeleton.local_transforms[1].rotation = rest_a;
  r.skeleton.local_transforms[2].rotation = rest_b;
  return r;
}

// Two bones, one curve, axis-angle layout; row 0 is the rest pose; deltas a
// smooth non-linear function of the features.
Dataset synthetic(std::size_t n, std::size_t vertices) {
  Dataset d;
  d.spec.bones.push_back({"a", {}});
  d.spec.bones.push_back({"b", {}});
  d.spec.curves.push_back({"c", 0.0, 1.0});
  d.layout = FeatureLayout::kAxisAngle;
  d.sample_count = n;
  d.vertex_count = vertices;
  d.features.assign(n * 7, 0.0F);
  d.deltas.assign(n * 3 * vertices, 0.0F);
  Rng rng(5);
  for (std::size_t i = 1; i < n; ++i)
    for (std::size_t j = 0; j < 7; ++j)
      d.features[i * 7 + j] =
          static_cast<float>(j == 6 ? rng.uniform(0, 1) : rng.uniform(-0.8, 0.8));
  for (std::size_t i = 0; i < n; ++i) {
    const float* x = d.features.data() + i * 7;
    for (std::size_t v = 0; v < vertices; ++v)
      for (std::size_t c = 0; c < 3; ++c) {
        const double s =
            std::sin(x[(v + c) % 6] * (1.0 + static_cast<double>(v))) + 0.5 * x[6] * x[c] * x[c];
        d.deltas[(i * vertices + v) * 3 + c] = static_cast<float>(0.1 * s);
      }
  }
  return d;
}

NmnExportOptions quick() {
  NmnExportOptions o;
  o.hidden = {8};
  o.morphs = 4;
  o.iterations = 200;
  o.batch_size = 16;
  return o;
}

TEST(NmnExport, EngineNormalisationAveragesTheStdByHand) {
  // One bone, one curve, two rows:
  //   bone (1, 0, 0, 0, 1, 0), curve 0.5
  //   bone (0, 2, 0, 0, 1, 4), curve 1.5
  // Per-feature population stds: 0.5, 1, 0, 0, 0, 2 (mean 3.5 / 6) and 0.5.
  const std::vector<float> x = {1, 0, 0, 0, 1, 0, 0.5F, 0, 2, 0, 0, 1, 4, 1.5F};
  std::vector<float> mean, sd;
  engine_input_normalisation(x, 2, 1, 1, mean, sd);
  const std::vector<float> want_mean = {0.5F, 1, 0, 0, 1, 2, 1};
  ASSERT_EQ(mean.size(), 7u);
  ASSERT_EQ(sd.size(), 7u);
  for (std::size_t j = 0; j < 7; ++j) EXPECT_FLOAT_EQ(mean[j], want_mean[j]) << j;
  for (std::size_t j = 0; j < 6; ++j) EXPECT_FLOAT_EQ(sd[j], static_cast<float>(3.5 / 6 + 1e-5));
  EXPECT_FLOAT_EQ(sd[6], static_cast<float>(0.5 + 1e-5));
}

TEST(NmnExport, AxisAngleRowsBecomeEngineRowsWithTheRestRotation) {
  // Bone a: rest identity, pose 90 degrees about z: first two matrix rows
  // (cos -sin 0; sin cos 0) = (0 -1 0; 1 0 0).
  // Bone b: rest 90 degrees about z, pose 90 degrees about z: 180 degrees,
  // (-1 0 0; 0 -1 0). The curve passes through.
  const float h = static_cast<float>(std::sqrt(0.5));
  const scene::Rig rig = two_joint_rig(1, {0, 0, 0, 1}, {0, 0, h, h});
  Dataset d = synthetic(2, 1);
  const float q = static_cast<float>(std::numbers::pi / 2);
  const std::vector<float> row = {0, 0, q, 0, 0, q, 0.25F};
  std::copy(row.begin(), row.end(), d.features.begin() + 7);
  auto x = engine_features_of(rig, d);
  ASSERT_TRUE(x) << x.error().to_string();
  ASSERT_EQ(x->size(), 2u * 13u);
  // Row 0 (rest): a identity, b its rest rotation (90 degrees about z).
  const std::vector<float> want0 = {1, 0, 0, 0, 1, 0, 0, -1, 0, 1, 0, 0, 0};
  const std::vector<float> want1 = {0, -1, 0, 1, 0, 0, -1, 0, 0, 0, -1, 0, 0.25F};
  for (std::size_t j = 0; j < 13; ++j) {
    EXPECT_NEAR((*x)[j], want0[j], 1e-6) << j;
    EXPECT_NEAR((*x)[13 + j], want1[j], 1e-6) << j;
  }
  scene::Rig other = rig;
  other.skeleton.joint_names = {"root", "a", "x"};
  auto bad = engine_features_of(other, d);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, "NMN_EXPORT_SPEC");
}

TEST(NmnExport, WritesAGlobalEluNetworkThatRereadsWithinTolerance) {
  const float h = static_cast<float>(std::sqrt(0.5));
  const scene::Rig rig = two_joint_rig(5, {h, 0, 0, h}, {0, 0, 0, 1});
  const Dataset d = synthetic(40, 5);
  std::size_t calls = 0;
  NmnExportOptions o = quick();
  o.progress = [&](std::size_t, std::size_t, double) { ++calls; };
  auto e = export_nmn(rig, d, o);
  ASSERT_TRUE(e) << e.error().to_string();
  EXPECT_GT(calls, 0u);

  // Header: global mode, NumMorphs = the network's outputs (k = 4; the mean
  // delta morph 0 is not an output), 2 bones, 1 curve, 1 float per curve.
  const NmnNetwork& n = e->network;
  EXPECT_EQ(n.mode, NmnMode::kGlobal);
  EXPECT_EQ(n.num_morphs, 4u);
  EXPECT_EQ(n.num_morphs_per_bone, 0u);
  EXPECT_EQ(n.num_bones, 2u);
  EXPECT_EQ(n.num_curves, 1u);
  EXPECT_EQ(n.num_groups, 0u);
  EXPECT_EQ(n.num_floats_per_curve, 1u);
  EXPECT_EQ(n.runtime_name, "NNERuntimeBasicCpu");
  EXPECT_FALSE(n.group.has_value());
  // Layers: Sequence[Linear 13->8, ELU 8, Linear 8->4, ELU 4].
  ASSERT_EQ(n.main.root.type, NmnLayerType::kSequence);
  ASSERT_EQ(n.main.root.children.size(), 4u);
  const auto& c = n.main.root.children;
  EXPECT_EQ(c[0].type, NmnLayerType::kLinear);
  EXPECT_EQ(c[0].in, 13u);
  EXPECT_EQ(c[0].out, 8u);
  EXPECT_EQ(c[1].type, NmnLayerType::kElu);
  EXPECT_EQ(c[1].in, 8u);
  EXPECT_EQ(c[2].type, NmnLayerType::kLinear);
  EXPECT_EQ(c[2].in, 8u);
  EXPECT_EQ(c[2].out, 4u);
  EXPECT_EQ(c[3].type, NmnLayerType::kElu);
  EXPECT_EQ(c[3].in, 4u);
  EXPECT_EQ(n.main.input_size, 13u);
  EXPECT_EQ(n.main.output_size, 4u);

  // Normalisation: recomputed here from the engine rows, in double.
  auto x = engine_features_of(rig, d);
  ASSERT_TRUE(x);
  ASSERT_EQ(n.input_mean.size(), 13u);
  double bone_sd = 0.0;
  std::vector<double> sd(13, 0.0);
  for (std::size_t j = 0; j < 13; ++j) {
    double m = 0.0, v = 0.0;
    for (std::size_t r = 0; r < 40; ++r) m += (*x)[r * 13 + j];
    m /= 40;
    for (std::size_t r = 0; r < 40; ++r) v += ((*x)[r * 13 + j] - m) * ((*x)[r * 13 + j] - m);
    sd[j] = std::sqrt(v / 40);
    if (j < 12) bone_sd += sd[j] / 12;
    EXPECT_NEAR(n.input_mean[j], m, 1e-6) << j;
  }
  for (std::size_t j = 0; j < 12; ++j) EXPECT_NEAR(n.input_std[j], bone_sd + 1e-5, 1e-6) << j;
  EXPECT_NEAR(n.input_std[12], sd[12] + 1e-5, 1e-6);

  // The model: engine layout, learned basis with the fixed mean, ELU after every layer.
  const PoseModel& m = e->model;
  EXPECT_EQ(m.layout, FeatureLayout::kEngine);
  EXPECT_EQ(m.kind, ModelKind::kNeural);
  EXPECT_EQ(m.basis, NeuralBasis::kLearned);
  EXPECT_TRUE(m.fixed_first_morph);
  EXPECT_EQ(m.clamp, WeightClamp::kNone);  // as the file runs
  EXPECT_TRUE(m.weight_min.empty());
  EXPECT_EQ(m.mlp.hidden_activation, Activation::kELU);
  EXPECT_EQ(m.mlp.output_activation, Activation::kELU);
  EXPECT_EQ(m.morph_count(), 5u);
  EXPECT_EQ(m.mlp.input_std, n.input_std);

  // Sidecar names.
  EXPECT_EQ(e->sidecar.mode, NmnMode::kGlobal);
  EXPECT_EQ(e->sidecar.bones, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(e->sidecar.curves, (std::vector<std::string>{"c"}));
  EXPECT_EQ(e->sidecar.morph_targets,
            (std::vector<std::string>{"mean", "pc1", "pc2", "pc3", "pc4"}));
  EXPECT_EQ(e->sidecar.outputs, NmnOutputs::kBasisCoefficients);
  // The training targets' range per output (the unit-variance coefficients
  // of the principal components: each spans well beyond ±0.5).
  ASSERT_EQ(e->sidecar.output_ranges.size(), 4u);
  for (const auto& r : e->sidecar.output_ranges) {
    EXPECT_LT(r[0], -0.5F);
    EXPECT_GT(r[1], 0.5F);
  }

  // Bytes: re-read gives the same network, written again the same bytes.
  auto bytes = write_nmn(n);
  ASSERT_TRUE(bytes);
  auto back = read_nmn(*bytes);
  ASSERT_TRUE(back) << back.error().to_string();
  EXPECT_TRUE(*back == n);
  auto again = write_nmn(*back);
  ASSERT_TRUE(again);
  EXPECT_EQ(*again, *bytes);

  // Outputs: the file's network against the trained MLP on every row.
  EXPECT_LE(e->reimport_max_abs_diff, 1e-5);
  auto runner = NmnRunner::create(*back);
  ASSERT_TRUE(runner);
  MlpEvaluator ev(m.mlp);
  std::vector<float> a(4), b(4);
  for (std::size_t r = 0; r < 40; ++r) {
    const std::span<const float> row(x->data() + r * 13, 13);
    ASSERT_TRUE(ev.evaluate(row, a));
    runner->run(row, b);
    for (std::size_t k = 0; k < 4; ++k) EXPECT_NEAR(a[k], b[k], 1e-5) << r << " " << k;
  }
}

// The synthetic dataset with its rows in the engine layout.
Dataset engine_dataset(const scene::Rig& rig, std::size_t n) {
  Dataset d = synthetic(n, 5);
  auto x = engine_features_of(rig, d);
  EXPECT_TRUE(x);
  d.layout = FeatureLayout::kEngine;
  d.features = x ? *x : std::vector<float>{};
  return d;
}

PoseModelOptions quick_neural() {
  PoseModelOptions po;
  po.kind = ModelKind::kNeural;
  po.basis_size = 4;
  po.clamp = WeightClamp::kNone;
  po.mlp.hidden = {8};
  po.mlp.iterations = 200;
  po.mlp.batch_size = 16;
  return po;
}

// A neural model trained in the engine layout is written as it is: the
// file's layers are the model's own, and the files imported back with the
// default options give the model's offsets, on the poses it was trained on
// and on poses it never saw.
TEST(NmnExport, ATrainedEngineModelIsWrittenAsItIs) {
  const float h = static_cast<float>(std::sqrt(0.5));
  const scene::Rig rig = two_joint_rig(5, {h, 0, 0, h}, {0, 0, 0, 1});
  const Dataset d = engine_dataset(rig, 40);
  auto m = train_pose_model(d, quick_neural());
  ASSERT_TRUE(m) << m.error().to_string();
  ASSERT_TRUE(check_nmn_exportable(*m));
  auto e = export_model_nmn(*m, d.features);
  ASSERT_TRUE(e) << e.error().to_string();
  EXPECT_LE(e->reimport_max_abs_diff, 1e-5);

  // Sequence[Linear 13->8, ELU, Linear 8->4]: the model's identity output
  // adds no layer; weights, biases and normalisation are the model's bits.
  const NmnNetwork& n = e->network;
  EXPECT_EQ(n.num_morphs, 4u);
  ASSERT_EQ(n.main.root.children.size(), 3u);
  const auto& c = n.main.root.children;
  EXPECT_EQ(c[0].type, NmnLayerType::kLinear);
  EXPECT_EQ(c[1].type, NmnLayerType::kElu);
  EXPECT_EQ(c[2].type, NmnLayerType::kLinear);
  EXPECT_EQ(c[0].weights, m->mlp.layers[0].weights);
  EXPECT_EQ(c[2].biases, m->mlp.layers[1].biases);
  EXPECT_EQ(n.input_mean, m->mlp.input_mean);
  EXPECT_EQ(n.input_std, m->mlp.input_std);
  EXPECT_EQ(e->sidecar.outputs, NmnOutputs::kBasisCoefficients);
  ASSERT_EQ(e->sidecar.output_ranges.size(), 4u);  // the outputs' range over the rows
  // Without check rows: rows around the input mean; the same network.
  auto again = export_model_nmn(*m, {});
  ASSERT_TRUE(again) << again.error().to_string();
  EXPECT_TRUE(again->network == n);

  // Saved, then imported as `deformer import` does, with its default clamp.
  const fs::path dir =
      fs::temp_directory_path() / ("charkit_nmn_as_is_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  ASSERT_TRUE(save_nmn_export(*e, dir / "tube.nmn"));
  auto bytes = read_file_bytes(dir / "tube.nmn", 1 << 24);
  auto side_bytes = read_file_bytes(dir / "tube.bmd_ue.json", 1 << 20);
  auto npz = read_file_bytes(dir / "tube.morphs.npz", 1 << 24);
  ASSERT_TRUE(bytes && side_bytes && npz);
  auto side = read_nmn_sidecar(core::as_chars(*side_bytes));
  ASSERT_TRUE(side) << side.error().to_string();
  auto targets = read_nmn_morphs(*npz, 5);
  ASSERT_TRUE(targets) << targets.error().to_string();
  scene::Rig onto = rig;
  add_morph_targets(onto, *targets);
  auto imported = import_engine_network(*bytes, "tube.nmn", *side, onto, m->spec);
  ASSERT_TRUE(imported) << imported.error().to_string();
  EXPECT_EQ(imported->clamp, WeightClamp::kNone);

  // The first 40 rows are the training poses (the same seed), the rest new.
  const Dataset wide = engine_dataset(rig, 70);
  PoseModelEvaluator want(*m), got(*imported);
  std::vector<float> a(15), b(15);
  double scale = 0.0, worst = 0.0;
  for (std::size_t r = 0; r < 70; ++r) {
    const std::span<const float> row(wide.features.data() + r * 13, 13);
    ASSERT_TRUE(want.offsets(row, a));
    ASSERT_TRUE(got.offsets(row, b));
    for (std::size_t k = 0; k < 15; ++k) {
      scale = std::max(scale, static_cast<double>(std::abs(a[k])));
      worst = std::max(worst, static_cast<double>(std::abs(a[k] - b[k])));
    }
  }
  EXPECT_GT(scale, 1e-3);
  EXPECT_LE(worst, 1e-5 * scale);
  fs::remove_all(dir);
}

TEST(NmnExport, ModelsThatCannotBeWrittenAsTheyAreSaySo) {
  const scene::Rig rig = two_joint_rig(5);
  const Dataset d = engine_dataset(rig, 20);
  auto refused = [](const PoseModel& m, const std::string& words) {
    auto e = export_model_nmn(m, {});
    ASSERT_FALSE(e) << words;
    EXPECT_EQ(e.error().code, "NMN_EXPORT_MODEL");
    EXPECT_NE(e.error().message.find(words), std::string::npos) << e.error().message;
  };
  PoseModelOptions lin;
  auto linear = train_pose_model(d, lin);
  ASSERT_TRUE(linear);
  refused(*linear, "linear model");

  auto axis = train_pose_model(synthetic(20, 5), quick_neural());
  ASSERT_TRUE(axis);
  refused(*axis, "axis-angle layout");

  PoseModelOptions clamped = quick_neural();
  clamped.clamp = WeightClamp::kTrainingRange;
  auto c = train_pose_model(d, clamped);
  ASSERT_TRUE(c);
  refused(*c, "clamps its weights (training-range)");

  PoseModelOptions given = quick_neural();
  given.basis = NeuralBasis::kMorphTargets;
  given.morphs.names = {"m0", "m1"};
  for (std::size_t i = 0; i < 30; ++i)
    given.morphs.deltas.push_back(0.01F * static_cast<float>(i % 7));
  auto g = train_pose_model(d, given);
  ASSERT_TRUE(g) << g.error().to_string();
  refused(*g, "morph targets it was given");

  auto ok = train_pose_model(d, quick_neural());
  ASSERT_TRUE(ok);
  const std::vector<float> partial(20, 0.0F);  // not a whole number of 13-float rows
  auto e = export_model_nmn(*ok, partial);
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().code, "NMN_EXPORT_DATASET");
}

TEST(NmnExport, BasisIsCappedAtSamplesMinusOne) {
  const scene::Rig rig = two_joint_rig(5);
  NmnExportOptions o = quick();
  o.morphs = 100;
  auto e = export_nmn(rig, synthetic(6, 5), o);
  ASSERT_TRUE(e) << e.error().to_string();
  EXPECT_LE(e->network.num_morphs, 5u);
  EXPECT_EQ(e->network.num_morphs + 1, e->model.morph_count());
}

TEST(NmnExport, SavesNetworkSidecarAndMorphs) {
  const scene::Rig rig = two_joint_rig(5);
  auto e = export_nmn(rig, synthetic(30, 5), quick());
  ASSERT_TRUE(e) << e.error().to_string();
  const fs::path dir =
      fs::temp_directory_path() / ("charkit_nmn_export_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path nmn = dir / "body.nmn";
  ASSERT_TRUE(save_nmn_export(*e, nmn));
  ASSERT_TRUE(fs::exists(dir / "body.bmd_ue.json"));
  ASSERT_TRUE(fs::exists(dir / "body.morphs.npz"));
  EXPECT_EQ(nmn_morphs_path(nmn), dir / "body.morphs.npz");

  auto bytes = read_file_bytes(nmn, 1 << 24);
  ASSERT_TRUE(bytes);
  auto net = read_nmn(*bytes);
  ASSERT_TRUE(net) << net.error().to_string();
  EXPECT_TRUE(*net == e->network);

  auto side_bytes = read_file_bytes(dir / "body.bmd_ue.json", 1 << 20);
  ASSERT_TRUE(side_bytes);
  auto side = read_nmn_sidecar(core::as_chars(*side_bytes));
  ASSERT_TRUE(side) << side.error().to_string();
  EXPECT_EQ(side->model, "body.nmn");
  EXPECT_EQ(side->bones, e->sidecar.bones);
  EXPECT_EQ(side->morph_targets, e->sidecar.morph_targets);
  EXPECT_TRUE(check_nmn_sidecar(*side, *net));

  auto npz_bytes = read_file_bytes(dir / "body.morphs.npz", 1 << 24);
  ASSERT_TRUE(npz_bytes);
  auto npz = read_npz(*npz_bytes);
  ASSERT_TRUE(npz) << npz.error().to_string();
  ASSERT_EQ(npz->size(), 2u);
  EXPECT_EQ((*npz)[0].name, "morphs");
  EXPECT_EQ((*npz)[0].array.dtype, NpyDType::kF4);
  EXPECT_EQ((*npz)[0].array.shape, (std::vector<std::uint64_t>{5, 5, 3}));
  EXPECT_EQ((*npz)[0].array.to_f32(), e->model.morphs);
  EXPECT_EQ((*npz)[1].name, "names");
  const auto names = (*npz)[1].array.data;
  EXPECT_EQ(std::string(names.begin(), names.end()), "mean\npc1\npc2\npc3\npc4");

  // Read back as morph targets, and put onto a rig that has one of the names.
  auto targets = read_nmn_morphs(*npz_bytes, 5);
  ASSERT_TRUE(targets) << targets.error().to_string();
  ASSERT_EQ(targets->size(), 5u);
  EXPECT_EQ((*targets)[2].name, "pc2");
  EXPECT_EQ((*targets)[2].position_deltas,
            std::vector<float>(e->model.morphs.begin() + 30, e->model.morphs.begin() + 45));
  scene::Rig onto = rig;
  onto.morph_targets = {{"pc1", std::vector<float>(15, 9.0F)}, {"smile", std::vector<float>(15)}};
  EXPECT_EQ(add_morph_targets(onto, *targets), 1u);
  ASSERT_EQ(onto.morph_targets.size(), 6u);
  EXPECT_EQ(onto.morph_targets[0].name, "pc1");  // replaced in place
  EXPECT_EQ(onto.morph_targets[0].position_deltas, (*targets)[1].position_deltas);
  EXPECT_EQ(onto.morph_targets[1].name, "smile");
  EXPECT_EQ(onto.morph_targets[2].name, "mean");
  auto wrong_count = read_nmn_morphs(*npz_bytes, 6);
  ASSERT_FALSE(wrong_count);
  EXPECT_EQ(wrong_count.error().code, "IMPORT_MORPHS");
  EXPECT_NE(wrong_count.error().message.find("for 5 vertices; the mesh has 6"), std::string::npos);
  fs::remove_all(dir);
}

TEST(NmnExport, MorphsArchivesOfAnotherShapeAreRefused) {
  const std::vector<float> two(2 * 1 * 3, 0.5F);
  auto npz = [](std::vector<NpzMember> members) {
    auto b = write_npz(members);
    EXPECT_TRUE(b);
    return b ? *b : std::vector<std::uint8_t>{};
  };
  auto names = [](const std::string& s) {
    return NpyArray::from_u8({s.size()}, std::vector<std::uint8_t>(s.begin(), s.end()));
  };
  auto code_of = [](const std::vector<std::uint8_t>& bytes) {
    auto r = read_nmn_morphs(bytes, 1);
    return r ? std::string("ok") : r.error().code + ": " + r.error().message;
  };
  auto good = npz({{"morphs", NpyArray::from_f32({2, 1, 3}, two)}, {"names", names("a\nb")}});
  EXPECT_EQ(code_of(good), "ok");
  EXPECT_NE(code_of(npz({{"morphs", NpyArray::from_f32({2, 1, 3}, two)}})).find("no \"names\""),
            std::string::npos);
  EXPECT_NE(code_of(npz({{"morphs", NpyArray::from_f32({2, 3}, two)}, {"names", names("a\nb")}}))
                .find("shape (morphs, vertices, 3)"),
            std::string::npos);
  EXPECT_NE(code_of(npz({{"morphs", NpyArray::from_f32({2, 1, 3}, two)}, {"names", names("a")}}))
                .find("names 1 morphs and holds 2"),
            std::string::npos);
  EXPECT_NE(code_of(npz({{"morphs", NpyArray::from_f32({2, 1, 3}, two)}, {"names", names("a\na")}}))
                .find("given twice"),
            std::string::npos);
  EXPECT_NE(code_of(npz({{"morphs", NpyArray::from_f32({2, 1, 3}, two)}, {"names", names("a\n")}}))
                .find("empty name"),
            std::string::npos);
  std::vector<float> bad = two;
  bad[4] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_NE(code_of(npz({{"morphs", NpyArray::from_f32({2, 1, 3}, bad)}, {"names", names("a\nb")}}))
                .find("non-finite"),
            std::string::npos);
  const std::vector<std::uint8_t> junk = {'P', 'K', 3, 4, 0};
  EXPECT_NE(code_of(junk).rfind("NP", 0), std::string::npos) << code_of(junk);
}

TEST(NmnExport, RiggedSimpleDualQuaternionTargets) {
  auto rig = scene::load_rig_file(std::string(CHARKIT_TEST_DATA) + "/models/RiggedSimple.glb");
  ASSERT_TRUE(rig) << rig.error().to_string();
  InputSpec spec;
  spec.bones.push_back({"joint_3", {}});
  SampleOptions so;
  so.random_poses = 24;
  so.seed = 3;
  auto poses = sample_poses(spec, so);
  ASSERT_TRUE(poses);
  TargetOptions to;
  to.source = TargetSource::kDualQuaternion;
  auto t = build_targets(*rig, spec, *poses, to);
  ASSERT_TRUE(t) << t.error().to_string();
  // The same poses straight into the engine layout (targets.cpp's own path
  // with the rest rotations) agree with the export's rebuilt rows.
  TargetOptions te = to;
  te.layout = FeatureLayout::kEngine;
  auto te_built = build_targets(*rig, spec, *poses, te);
  ASSERT_TRUE(te_built);
  auto x = engine_features_of(*rig, t->dataset);
  ASSERT_TRUE(x) << x.error().to_string();
  ASSERT_EQ(x->size(), te_built->dataset.features.size());
  for (std::size_t i = 0; i < x->size(); ++i)
    EXPECT_NEAR((*x)[i], te_built->dataset.features[i], 2e-6) << i;

  NmnExportOptions o = quick();
  o.hidden = {16};
  o.morphs = 6;
  auto e = export_nmn(*rig, t->dataset, o);
  ASSERT_TRUE(e) << e.error().to_string();
  EXPECT_EQ(e->network.input_count(), 6u);
  EXPECT_EQ(e->network.num_morphs, 6u);
  EXPECT_LE(e->reimport_max_abs_diff, 1e-5);
  EXPECT_EQ(e->model.vertex_count, rig->vertex_count());
  EXPECT_LT(e->model.stats.train.mean, e->model.stats.uncorrected_train.mean);
  std::printf(
      "nmn export (RiggedSimple, 25 samples, 6 morphs): re-read max |diff| %.3g, "
      "train error %.5g vs uncorrected %.5g\n",
      e->reimport_max_abs_diff, e->model.stats.train.mean, e->model.stats.uncorrected_train.mean);
  // The engine-layout dataset exports to the same network.
  auto e2 = export_nmn(*rig, te_built->dataset, o);
  ASSERT_TRUE(e2) << e2.error().to_string();
  EXPECT_EQ(e2->network.num_morphs, e->network.num_morphs);
  for (std::size_t j = 0; j < 6; ++j)
    EXPECT_NEAR(e2->network.input_mean[j], e->network.input_mean[j], 1e-6);
}

TEST(NmnExport, Errors) {
  const scene::Rig rig = two_joint_rig(5);
  const Dataset d = synthetic(10, 5);
  NmnExportOptions o = quick();
  o.morphs = 0;
  auto e = export_nmn(rig, d, o);
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().code, "NMN_EXPORT_OPTIONS");

  e = export_nmn(two_joint_rig(4), d, quick());
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().code, "NMN_EXPORT_DATASET");

  e = export_nmn(rig, synthetic(1, 5), quick());
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().code, "NMN_EXPORT_DATASET");

  Dataset flat = d;
  std::fill(flat.deltas.begin(), flat.deltas.end(), 0.25F);
  e = export_nmn(rig, flat, quick());
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().code, "NMN_EXPORT_DATASET");

  Dataset broken = d;
  broken.features.pop_back();
  e = export_nmn(rig, broken, quick());
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().code, "NMN_EXPORT_DATASET");

  scene::Rig other = rig;
  other.skeleton.joint_names = {"root", "a", "z"};
  e = export_nmn(other, d, quick());
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().code, "NMN_EXPORT_SPEC");
  EXPECT_NE(e.error().message.find("\"b\""), std::string::npos);
}

}  // namespace
}  // namespace charkit::deformer
