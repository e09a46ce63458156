// The trained deformer: linear and neural training on datasets whose answer
// is known, the learned basis, clamping, the held-out split, the file pair
// round trip, errors, and end to end: a glTF rig, 200
// sampled poses, Delta Mush targets, linear and neural models whose held-out
// error is below the uncorrected skinning error.
#include "charkit/deformer/pose_model.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "charkit/core/json.h"
#include "charkit/deformer/detail/prng.h"
#include "charkit/deformer/targets.h"
#include "charkit/scene/rig.h"

namespace charkit::deformer {
namespace {

InputSpec two_bones() {
  InputSpec s;
  s.bones.push_back({"a", {}});
  s.bones.push_back({"b", {}});
  return s;
}

// Deltas = features * W for a known W (6 features, 4 vertices); sample 0 is
// the rest pose.
Dataset linear_dataset(std::size_t n, std::vector<float>& w) {
  Dataset d;
  d.spec = two_bones();
  d.vertex_count = 4;
  d.sample_count = n;
  Rng rng(11);
  w.resize(6 * 12);
  for (float& x : w) x = static_cast<float>(rng.uniform(-1, 1));
  d.features.assign(n * 6, 0.0F);
  d.deltas.assign(n * 12, 0.0F);
  for (std::size_t i = 1; i < n; ++i)
    for (std::size_t f = 0; f < 6; ++f)
      d.features[i * 6 + f] = static_cast<float>(rng.uniform(-1, 1));
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t o = 0; o < 12; ++o) {
      double s = 0;
      for (std::size_t f = 0; f < 6; ++f) s += d.features[i * 6 + f] * double{w[f * 12 + o]};
      d.deltas[i * 12 + o] = static_cast<float>(s);
    }
  return d;
}

TEST(PoseModel, LinearRecoversAKnownMapAndRestIsZero) {
  std::vector<float> w;
  const Dataset d = linear_dataset(60, w);
  PoseModelOptions o;
  o.ridge.lambda = 1e-9;
  auto m = train_pose_model(d, o);
  ASSERT_TRUE(m) << m.error().to_string();
  EXPECT_EQ(m->kind, ModelKind::kLinear);
  for (std::size_t i = 0; i < w.size(); ++i) EXPECT_NEAR(m->linear.weights()[i], w[i], 1e-4) << i;
  EXPECT_EQ(m->stats.train.samples + m->stats.holdout.samples, 60u);
  EXPECT_EQ(m->stats.holdout.samples, 6u);  // round(0.1 * 59)
  EXPECT_LT(m->stats.holdout.mean, 1e-4);
  EXPECT_GT(m->stats.uncorrected_holdout.mean, 0.1);
  ASSERT_EQ(m->stats.holdout_per_bone.size(), 2u);
  PoseModelEvaluator ev(*m);
  std::vector<float> zero(6, 0.0F), out(12, 1.0F);
  ASSERT_TRUE(ev.offsets(zero, out));
  for (float x : out) EXPECT_EQ(x, 0.0F);  // no bias: rest gives exactly zero
  std::vector<float> wrong(5);
  EXPECT_FALSE(ev.offsets(wrong, out));
}

TEST(PoseModel, SplitIsSeededAndKeepsTheRestPose) {
  std::vector<float> w;
  const Dataset d = linear_dataset(30, w);
  PoseModelOptions o;
  o.holdout = 0.5;
  auto a = train_pose_model(d, o);
  auto b = train_pose_model(d, o);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->linear.weights().size(), b->linear.weights().size());
  EXPECT_TRUE(std::equal(a->linear.weights().begin(), a->linear.weights().end(),
                         b->linear.weights().begin()));
  EXPECT_EQ(a->stats.holdout.samples, 15u);  // round(0.5 * 29) = 15 (half away from zero)
  o.holdout = 0.95;
  auto bad = train_pose_model(d, o);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, "MODEL_OPTIONS");
}

// Deltas lie in a 2-D subspace: two fixed shapes weighted by smooth
// functions of the features. The learned basis then needs 2 components.
Dataset low_rank_dataset(std::size_t n, std::vector<float>& shapes) {
  Dataset d;
  d.spec = two_bones();
  d.vertex_count = 5;
  d.sample_count = n;
  Rng rng(3);
  shapes.resize(2 * 15);
  for (float& x : shapes) x = static_cast<float>(rng.uniform(-1, 1));
  d.features.assign(n * 6, 0.0F);
  d.deltas.assign(n * 15, 0.0F);
  for (std::size_t i = 1; i < n; ++i)
    for (std::size_t f = 0; f < 6; ++f)
      d.features[i * 6 + f] = static_cast<float>(rng.uniform(-1, 1));
  for (std::size_t i = 0; i < n; ++i) {
    const float* x = &d.features[i * 6];
    const double w0 = std::tanh(x[0] + 0.5 * x[3]), w1 = x[1] * x[1] + 0.3 * x[4];
    for (std::size_t k = 0; k < 15; ++k)
      d.deltas[i * 15 + k] = static_cast<float>(w0 * shapes[k] + w1 * shapes[15 + k]);
  }
  return d;
}

TEST(PoseModel, LearnedBasisSpansTheDeltasAndTheNetworkFitsThem) {
  std::vector<float> shapes;
  const Dataset d = low_rank_dataset(300, shapes);
  PoseModelOptions o;
  o.kind = ModelKind::kNeural;
  o.basis_size = 8;
  o.mlp.hidden = {32, 32};
  o.mlp.iterations = 1500;
  o.mlp.batch_size = 64;
  o.mlp.adam.learning_rate = 3e-3;
  std::size_t calls = 0;
  auto m = train_pose_model(d, o, [&](std::size_t, std::size_t, double) { ++calls; });
  ASSERT_TRUE(m) << m.error().to_string();
  EXPECT_GE(calls, 1u);
  // Rank 2 after centring (the mean is a third direction): 2 components.
  EXPECT_EQ(m->predicted_weights(), 2u);
  EXPECT_TRUE(m->fixed_first_morph);
  EXPECT_EQ(m->morph_names[0], "mean");
  // Each training delta is reproduced exactly by the basis and its weights:
  // the projection of delta - mean on the components gives back the delta.
  const std::size_t width = 15;
  for (std::size_t i = 0; i < 20; ++i) {
    std::vector<double> r(width);
    for (std::size_t k = 0; k < width; ++k) r[k] = d.deltas[i * width + k] - m->morphs[k];
    for (std::size_t c = 1; c < m->morph_count(); ++c) {
      double dot = 0, nn = 0;
      for (std::size_t k = 0; k < width; ++k) {
        dot += r[k] * m->morphs[c * width + k];
        nn += double{m->morphs[c * width + k]} * m->morphs[c * width + k];
      }
      for (std::size_t k = 0; k < width; ++k) r[k] -= dot / nn * m->morphs[c * width + k];
    }
    for (std::size_t k = 0; k < width; ++k) EXPECT_NEAR(r[k], 0.0, 1e-4) << i << " " << k;
  }
  // The network: held-out error well below doing nothing.
  EXPECT_LT(m->stats.holdout.mean, 0.25 * m->stats.uncorrected_holdout.mean)
      << m->stats.holdout.mean << " vs " << m->stats.uncorrected_holdout.mean;
  // Weights: morph 0 is 1; the others inside the training range.
  PoseModelEvaluator ev(*m);
  std::vector<float> wts(m->morph_count());
  std::vector<float> far(6, 50.0F);
  ASSERT_TRUE(ev.weights(far, wts));
  EXPECT_EQ(wts[0], 1.0F);
  for (std::size_t k = 1; k < wts.size(); ++k) {
    EXPECT_GE(wts[k], m->weight_min[k - 1]);
    EXPECT_LE(wts[k], m->weight_max[k - 1]);
  }
}

// Early stopping: its samples come out of the training set (the held-out
// ones stay as they were), the step count it chooses is recorded, and the
// model is that many steps on all training samples, bit for bit.
TEST(PoseModel, EarlyStoppingChoosesTheStepsAndTrainsOnAllSamples) {
  std::vector<float> shapes;
  const Dataset d = low_rank_dataset(100, shapes);
  PoseModelOptions o;
  o.kind = ModelKind::kNeural;
  o.basis_size = 4;
  o.mlp.hidden = {16};
  o.mlp.iterations = 3000;
  o.mlp.batch_size = 32;
  o.mlp.validation_every = 25;
  o.mlp.patience = 3;
  o.validation = 0.2;
  auto m = train_pose_model(d, o);
  ASSERT_TRUE(m) << m.error().to_string();
  const core::Json& h = *m->hyper;
  EXPECT_EQ(h["validation_samples"].get<std::size_t>(), 18u);  // round(0.2 * (100 - 1 - 10))
  const auto steps = h["iterations"].get<std::size_t>();
  const auto stopped = h["stopped_after"].get<std::size_t>();
  EXPECT_EQ(h["max_iterations"].get<std::size_t>(), 3000u);
  EXPECT_EQ(steps % 25, 0u);
  EXPECT_GT(steps, 0u);
  EXPECT_TRUE(stopped == 3000 || stopped == steps + 3 * 25) << steps << " " << stopped;
  EXPECT_GT(h["validation_error"].get<double>(), 0.0);
  PoseModelOptions plain = o;
  plain.validation = 0.0;
  plain.mlp.iterations = steps;
  auto ref = train_pose_model(d, plain);
  ASSERT_TRUE(ref);
  EXPECT_EQ(m->stats.train.samples, 90u);  // all training samples, validation ones included
  EXPECT_EQ(m->stats.holdout.samples, ref->stats.holdout.samples);
  for (std::size_t l = 0; l < m->mlp.layers.size(); ++l) {
    EXPECT_EQ(m->mlp.layers[l].weights, ref->mlp.layers[l].weights) << l;
    EXPECT_EQ(m->mlp.layers[l].biases, ref->mlp.layers[l].biases) << l;
  }
  EXPECT_EQ(m->morphs, ref->morphs);
  EXPECT_FALSE(ref->hyper->contains("stopped_after"));
  // Refused: a fraction outside [0, 0.9], a linear model, a caller's own check.
  PoseModelOptions bad = o;
  bad.validation = 0.95;
  EXPECT_EQ(train_pose_model(d, bad).error().code, "MODEL_OPTIONS");
  bad = o;
  bad.kind = ModelKind::kLinear;
  EXPECT_EQ(train_pose_model(d, bad).error().code, "MODEL_OPTIONS");
  bad = o;
  bad.mlp.validation = [](const Mlp&) { return 0.0; };
  EXPECT_EQ(train_pose_model(d, bad).error().code, "MODEL_OPTIONS");
}

TEST(PoseModel, MorphTargetWeightsAndUnitClamp) {
  std::vector<float> shapes;
  const Dataset d = low_rank_dataset(200, shapes);
  PoseModelOptions o;
  o.kind = ModelKind::kNeural;
  o.basis = NeuralBasis::kMorphTargets;
  o.morphs.names = {"s0", "s1"};
  o.morphs.deltas = shapes;
  o.clamp = WeightClamp::kUnit;
  o.mlp.hidden = {16};
  o.mlp.iterations = 300;
  auto m = train_pose_model(d, o);
  ASSERT_TRUE(m) << m.error().to_string();
  EXPECT_FALSE(m->fixed_first_morph);
  EXPECT_EQ(m->morph_count(), 2u);
  PoseModelEvaluator ev(*m);
  std::vector<float> wts(2);
  for (float v : {-30.0F, 30.0F}) {
    std::vector<float> x(6, v);
    ASSERT_TRUE(ev.weights(x, wts));
    for (float w : wts) {
      EXPECT_GE(w, 0.0F);
      EXPECT_LE(w, 1.0F);
    }
  }
  o.morphs.deltas.pop_back();
  auto bad = train_pose_model(d, o);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, "MODEL_OPTIONS");
}

// The correction is zero at the rest pose by construction, not by fitting:
// a barely trained network (50 steps) predicts far from zero there, yet
// both bases give offsets of zero (to float rounding) at rest, and the
// model still moves the mesh elsewhere; the file round trip keeps it.
TEST(PoseModel, NeuralCorrectionIsZeroAtTheRestPose) {
  std::vector<float> shapes;
  const Dataset d = low_rank_dataset(120, shapes);
  for (NeuralBasis basis : {NeuralBasis::kLearned, NeuralBasis::kMorphTargets}) {
    SCOPED_TRACE(basis == NeuralBasis::kLearned ? "learned" : "morph targets");
    PoseModelOptions o;
    o.kind = ModelKind::kNeural;
    o.basis = basis;
    o.basis_size = 4;
    o.morphs.names = {"s0", "s1"};
    o.morphs.deltas = shapes;
    o.mlp.hidden = {16};
    o.mlp.iterations = 50;
    auto m = train_pose_model(d, o);
    ASSERT_TRUE(m) << m.error().to_string();
    PoseModelEvaluator ev(*m);
    std::vector<float> at_rest(15), moved(15);
    ASSERT_TRUE(ev.offsets(std::vector<float>(6, 0.0F), at_rest));
    for (float v : at_rest) EXPECT_NEAR(v, 0.0F, 1e-6F);
    ASSERT_TRUE(ev.offsets(std::span(d.features).subspan(6, 6), moved));
    double size = 0;
    for (float v : moved) size += std::abs(v);
    EXPECT_GT(size, 1e-3);
    auto files = encode_pose_model(*m);
    ASSERT_TRUE(files) << files.error().to_string();
    auto back = decode_pose_model(files->json, files->npz);
    ASSERT_TRUE(back) << back.error().to_string();
    PoseModelEvaluator ev2(*back);
    ASSERT_TRUE(ev2.offsets(std::vector<float>(6, 0.0F), at_rest));
    for (float v : at_rest) EXPECT_NEAR(v, 0.0F, 1e-6F);
  }
}

TEST(PoseModel, FilesRoundTripExactly) {
  std::vector<float> shapes;
  const Dataset d = low_rank_dataset(80, shapes);
  for (ModelKind kind : {ModelKind::kLinear, ModelKind::kNeural}) {
    PoseModelOptions o;
    o.kind = kind;
    o.mlp.hidden = {8};
    o.mlp.iterations = 50;
    auto m = train_pose_model(d, o);
    ASSERT_TRUE(m) << m.error().to_string();
    const auto dir =
        std::filesystem::temp_directory_path() / ("charkit_pose_model_" + std::to_string(getpid()));
    std::filesystem::create_directories(dir);
    ASSERT_TRUE(save_pose_model(*m, dir / "pose_model.json"));
    ASSERT_TRUE(std::filesystem::exists(dir / "pose_model.npz"));
    // Named .npz, the model's description would overwrite its weights:
    // refused, and the files already there are left as they are.
    auto one_file = save_pose_model(*m, dir / "pose_model.npz");
    ASSERT_FALSE(one_file);
    EXPECT_EQ(one_file.error().code, "IO_WRITE");
    EXPECT_NE(one_file.error().message.find("pose_model.npz"), std::string::npos);
    EXPECT_EQ(load_pose_model(dir / "pose_model.npz").error().code, "IO_OPEN");
    auto back = load_pose_model(dir / "pose_model.json");
    ASSERT_TRUE(back) << back.error().to_string();
    auto f1 = encode_pose_model(*m);
    auto f2 = encode_pose_model(*back);
    ASSERT_TRUE(f1 && f2);
    EXPECT_EQ(f1->json, f2->json);
    EXPECT_EQ(f1->npz, f2->npz);
    PoseModelEvaluator e1(*m), e2(*back);
    std::vector<float> o1(15), o2(15);
    for (std::size_t i = 0; i < d.sample_count; ++i) {
      const auto row = std::span(d.features).subspan(i * 6, 6);
      ASSERT_TRUE(e1.offsets(row, o1));
      ASSERT_TRUE(e2.offsets(row, o2));
      ASSERT_EQ(o1, o2);
    }
    // Broken files are refused with a location.
    std::string json = f1->json;
    json.replace(json.find("charkit.pose_model"), 18, "something.else____");
    auto wrong = decode_pose_model(json, f1->npz);
    ASSERT_FALSE(wrong);
    EXPECT_EQ(wrong.error().code, "MODEL_FORMAT");
    auto no_npz = decode_pose_model(f1->json, std::vector<std::uint8_t>{1, 2, 3});
    ASSERT_FALSE(no_npz);
    std::filesystem::remove_all(dir);
  }
}

// The end-to-end check.
TEST(PoseModel, EndToEndRigDeltaMushLinearAndNeural) {
  auto rig = scene::load_rig_file(std::string(CHARKIT_TEST_DATA) + "/models/RiggedSimple.glb");
  ASSERT_TRUE(rig) << rig.error().to_string();
  InputSpec spec;
  spec.bones.push_back({"joint_3", {}});
  for (auto& a : spec.bones[0].axes) {
    a.min_deg = -60;
    a.max_deg = 60;
  }
  SampleOptions so;
  so.random_poses = 200;
  so.seed = 9;
  auto poses = sample_poses(spec, so);
  ASSERT_TRUE(poses);
  TargetOptions to;
  to.source = TargetSource::kDeltaMush;
  to.delta_mush.iterations = 10;
  auto t = build_targets(*rig, spec, *poses, to);
  ASSERT_TRUE(t) << t.error().to_string();
  PoseModelOptions lo;
  lo.holdout = 0.2;
  auto lin = train_pose_model(t->dataset, lo);
  ASSERT_TRUE(lin) << lin.error().to_string();
  EXPECT_EQ(lin->stats.holdout.samples, 40u);
  EXPECT_LT(lin->stats.holdout.mean, lin->stats.uncorrected_holdout.mean);
  PoseModelOptions no = lo;
  no.kind = ModelKind::kNeural;
  no.basis_size = 12;
  no.mlp.hidden = {32, 32};
  no.mlp.iterations = 800;
  auto net = train_pose_model(t->dataset, no);
  ASSERT_TRUE(net) << net.error().to_string();
  EXPECT_LT(net->stats.holdout.mean, net->stats.uncorrected_holdout.mean)
      << net->stats.holdout.mean << " vs " << net->stats.uncorrected_holdout.mean;
  std::printf(
      "end to end (RiggedSimple, 201 samples, 40 held out): uncorrected %.5g, linear %.5g, "
      "neural %.5g (mean vertex error)\n",
      lin->stats.uncorrected_holdout.mean, lin->stats.holdout.mean, net->stats.holdout.mean);
}

}  // namespace
}  // namespace charkit::deformer
