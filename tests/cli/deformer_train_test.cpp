// The training workflow through the `charkit` program: deformer sample →
// train → eval → info / run on RiggedSimple.glb (Khronos sample model, its
// licence beside it in tests/data/models/).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "charkit/core/json.h"
#include "cli_support.h"

namespace charkit::clitest {
namespace {

using nlohmann::json;

const std::string kRig = std::string(CHARKIT_TEST_DATA) + "/models/RiggedSimple.glb";

json parse(const RunResult& r) {
  try {
    return json::parse(r.out);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not JSON: " << e.what() << "\n" << r.out;
    return json::object();
  }
}

class DeformerTrainCli : public ScratchDir {};

// model inspect shows a node without a name as "#N": that name is taken
// wherever a joint or mesh is asked for, and means the same joint.
TEST_F(DeformerTrainCli, InspectorNodeNamesAreAccepted) {
  auto inspect = run_charkit("model inspect " + quote(kRig) + " --json");
  ASSERT_EQ(inspect.exit_code, 0);
  EXPECT_EQ(parse(inspect)["details"]["skins"][0]["joints"], json::array({"#2", "#3"}));
  const std::string sample = "deformer sample " + quote(kRig) + " --poses 20 --seed 4 --json ";
  auto by_name = run_charkit(sample + "--bones joint_3 -o " + quote(dir_ / "a.npz"));
  auto by_node = run_charkit(sample + "--bones '#3' --mesh '#1' -o " + quote(dir_ / "b.npz") +
                             " --write-spec " + quote(dir_ / "spec.json"));
  ASSERT_EQ(by_name.exit_code, 0) << by_name.out;
  ASSERT_EQ(by_node.exit_code, 0) << by_node.out;
  EXPECT_EQ(parse(by_node)["lbsError"], parse(by_name)["lbsError"]);
  // The spec names the joint by the rig's name for it.
  EXPECT_EQ(json::parse(read_text(dir_ / "spec.json"))["bones"][0]["name"], "joint_3");
  // A spec written by hand with "#3" works too.
  {
    json hand = json::parse(read_text(dir_ / "spec.json"));
    hand["bones"][0]["name"] = "#3";
    std::ofstream(dir_ / "hand.json") << hand.dump();
  }
  auto hand = run_charkit("deformer sample " + quote(kRig) + " --spec " +
                              quote(dir_ / "hand.json") + " --poses 10 -o " + quote(dir_ / "c.npz"),
                          true);
  EXPECT_EQ(hand.exit_code, 0) << hand.out;
  // A node that is not a joint, or not a skinned mesh, is still refused.
  EXPECT_NE(run_charkit(sample + "--bones '#1' -o " + quote(dir_ / "d.npz")).exit_code, 0);
  EXPECT_NE(
      run_charkit(sample + "--bones joint_3 --mesh '#0' -o " + quote(dir_ / "e.npz")).exit_code, 0);
}

TEST_F(DeformerTrainCli, SampleTrainEvalInfoRun) {
  const auto ds = dir_ / "arm.npz";
  auto s = run_charkit("deformer sample " + quote(kRig) +
                       " --bones joint_3 --range 60 --poses 120 --seed 4 --json -o " + quote(ds) +
                       " --write-spec " + quote(dir_ / "spec.json"));
  ASSERT_EQ(s.exit_code, 0) << s.out;
  json sj = parse(s);
  EXPECT_EQ(sj["samples"], 121);  // the rest pose + 120
  EXPECT_EQ(sj["features"], 3);   // one bone, axis-angle
  EXPECT_EQ(sj["vertices"], 96);  // RiggedSimple's mesh
  EXPECT_GT(sj["lbsError"]["mean"].get<double>(), 0.0);
  ASSERT_TRUE(std::filesystem::exists(dir_ / "arm.json"));
  // The spec written is the one used: three enabled axes at ±60 degrees.
  json spec = json::parse(read_text(dir_ / "spec.json"));
  ASSERT_EQ(spec["bones"].size(), 1u);
  EXPECT_EQ(spec["bones"][0]["name"], "joint_3");
  EXPECT_EQ(spec["bones"][0]["axes"][1]["min_deg"], -60.0);

  // A second dataset from the written spec and another seed, for eval.
  const auto ds2 = dir_ / "check.npz";
  auto s2 = run_charkit("deformer sample " + quote(kRig) + " --spec " + quote(dir_ / "spec.json") +
                        " --poses 40 --seed 99 -o " + quote(ds2));
  ASSERT_EQ(s2.exit_code, 0) << s2.out;

  auto tl = run_charkit("deformer train " + quote(ds) + " --json -o " + quote(dir_ / "lin.json"));
  ASSERT_EQ(tl.exit_code, 0) << tl.out;
  json lj = parse(tl);
  EXPECT_EQ(lj["kind"], "linear");
  EXPECT_EQ(lj["stats"]["holdout"]["samples"], 12);  // 10% of the 120 non-rest samples
  EXPECT_LT(lj["stats"]["holdout"]["mean"].get<double>(),
            lj["stats"]["uncorrectedHoldout"]["mean"].get<double>());
  EXPECT_TRUE(lj["stats"]["holdoutPerBone"].contains("joint_3"));
  EXPECT_TRUE(std::filesystem::exists(dir_ / "lin.npz"));

  auto tn = run_charkit("deformer train " + quote(ds) +
                            " --kind neural --hidden 16,16 --iterations 300 --basis-size 6 "
                            "--json -o " +
                            quote(dir_ / "net.json"),
                        /*keep_stderr=*/false);
  ASSERT_EQ(tn.exit_code, 0) << tn.out;
  json nj = parse(tn);
  EXPECT_EQ(nj["kind"], "neural");
  EXPECT_EQ(nj["morphs"], 7);  // mean delta + 6 components
  // Early stopping is off by default; asked for, the model records the
  // steps it chose, and the text summary says so.
  EXPECT_FALSE(json::parse(read_text(dir_ / "net.json"))["hyper"].contains("stopped_after"));
  auto text = run_charkit("deformer train " + quote(ds) +
                          " --kind neural --hidden 8 --iterations 200 --validation 0.1 "
                          "--check-every 20 --patience 2 -q -o " +
                          quote(dir_ / "es.json"));
  ASSERT_EQ(text.exit_code, 0) << text.out;
  EXPECT_NE(text.out.find("early stopping: lowest validation error"), std::string::npos)
      << text.out;
  json es = json::parse(read_text(dir_ / "es.json"));
  EXPECT_EQ(es["hyper"]["validation"], 0.1);
  EXPECT_EQ(es["hyper"]["validation_samples"], 11);  // round(0.1 * (120 - 12))
  EXPECT_EQ(es["hyper"]["max_iterations"], 200);
  EXPECT_LE(es["hyper"]["iterations"].get<int>(), es["hyper"]["stopped_after"].get<int>());
  auto lin_es = run_charkit(
      "deformer train " + quote(ds) + " --validation 0.2 -o " + quote(dir_ / "lin2.json"),
      /*keep_stderr=*/true);
  EXPECT_EQ(lin_es.exit_code, 2) << lin_es.out;
  // A model named like the dataset would replace its description: refused,
  // the dataset still loads.
  auto over = run_charkit("deformer train " + quote(ds) + " -o " + quote(dir_ / "arm.json"),
                          /*keep_stderr=*/true);
  EXPECT_EQ(over.exit_code, 2) << over.out;
  EXPECT_NE(over.out.find("written over the dataset's arm.json"), std::string::npos) << over.out;
  EXPECT_EQ(
      run_charkit("deformer train " + quote(ds) + " -o " + quote(dir_ / "lin3.json")).exit_code, 0);
  EXPECT_NE(lin_es.out.find("is for --kind neural"), std::string::npos) << lin_es.out;

  // eval on the unseen dataset: the model is better than no correction.
  for (const char* m : {"lin.json", "net.json"}) {
    auto e = run_charkit("deformer eval " + quote(dir_ / m) + " " + quote(ds2) + " --json");
    ASSERT_EQ(e.exit_code, 0) << m << e.out;
    json ej = parse(e);
    EXPECT_EQ(ej["error"]["samples"], 41);
    EXPECT_LT(ej["error"]["mean"].get<double>(), ej["uncorrected"]["mean"].get<double>()) << m;
  }

  auto info = run_charkit("deformer info " + quote(dir_ / "net.json") + " --json");
  ASSERT_EQ(info.exit_code, 0) << info.out;
  json ij = parse(info);
  EXPECT_EQ(ij["kind"], "charkit");
  EXPECT_EQ(ij["inputs"], 3);
  EXPECT_EQ(ij["outputs"], 7);
  ASSERT_EQ(ij["layers"].size(), 3u);  // 3 -> 16 -> 16 -> 6
  EXPECT_EQ(ij["layers"][0]["outputs"], 16);
  EXPECT_EQ(ij["layers"][2]["outputs"], 6);
  // 3*16+16 + 16*16+16 + 16*6+6
  EXPECT_EQ(ij["parameters"], 3 * 16 + 16 + 16 * 16 + 16 + 16 * 6 + 6);
}

// A hand-made .npy of float32 rows (NumPy format 1.0).
std::vector<std::uint8_t> npy_rows(std::size_t rows, std::size_t cols,
                                   const std::vector<float>& v) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" +
                       std::to_string(rows) + ", " + std::to_string(cols) + "), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::vector<std::uint8_t> b = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
  b.push_back(static_cast<std::uint8_t>(header.size() & 0xFF));
  b.push_back(static_cast<std::uint8_t>(header.size() >> 8));
  b.insert(b.end(), header.begin(), header.end());
  const auto* p = reinterpret_cast<const std::uint8_t*>(v.data());
  b.insert(b.end(), p, p + v.size() * sizeof(float));
  return b;
}

std::vector<float> read_npy_f32(const std::filesystem::path& p, std::size_t& rows,
                                std::size_t& cols) {
  std::string s = read_text(p);
  const std::size_t hl = static_cast<unsigned char>(s[8]) |
                         (static_cast<std::size_t>(static_cast<unsigned char>(s[9])) << 8);
  const std::string header = s.substr(10, hl);
  const auto open = header.find('(');
  std::sscanf(header.c_str() + open, "(%zu, %zu)", &rows, &cols);
  std::vector<float> v(rows * cols);
  std::memcpy(v.data(), s.data() + 10 + hl, v.size() * sizeof(float));
  return v;
}

TEST_F(DeformerTrainCli, RunOwnModelRestGivesZeroOffsets) {
  const auto ds = dir_ / "d.npz";
  ASSERT_EQ(run_charkit("deformer sample " + quote(kRig) + " --bones joint_2,joint_3 --axes xz " +
                        "--poses 60 -o " + quote(ds))
                .exit_code,
            0);
  ASSERT_EQ(
      run_charkit("deformer train " + quote(ds) + " -q -o " + quote(dir_ / "m.json")).exit_code, 0);
  // Row 0: the rest pose; row 1: a turned pose.
  const auto in = write("in.npy", npy_rows(2, 6, {0, 0, 0, 0, 0, 0, 0.4f, 0, 0, 0, 0, -0.3f}));
  auto r = run_charkit("deformer run " + quote(dir_ / "m.json") + " --input " + quote(in) + " -o " +
                       quote(dir_ / "out.npy") + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  std::size_t rows = 0, cols = 0;
  auto out = read_npy_f32(dir_ / "out.npy", rows, cols);
  ASSERT_EQ(rows, 2u);
  ASSERT_EQ(cols, 3u * 96u);
  double rest = 0, turned = 0;
  for (std::size_t c = 0; c < cols; ++c) {
    rest = std::max(rest, static_cast<double>(std::fabs(out[c])));
    turned = std::max(turned, static_cast<double>(std::fabs(out[cols + c])));
  }
  EXPECT_EQ(rest, 0.0);  // no bias: the rest pose gives exactly zero
  EXPECT_GT(turned, 1e-4);
  // Wrong feature count: a clear error, exit 1.
  const auto bad = write("bad.npy", npy_rows(1, 3, {0, 0, 0}));
  auto e = run_charkit("deformer run " + quote(dir_ / "m.json") + " --input " + quote(bad) +
                           " -o " + quote(dir_ / "x.npy"),
                       true);
  EXPECT_EQ(e.exit_code, 1);
  EXPECT_NE(e.out.find("INPUT_SHAPE"), std::string::npos) << e.out;
  EXPECT_NE(e.out.find("takes 6"), std::string::npos) << e.out;
  // The dataset .npz itself is an input (its features array), and
  // the text mode says what it wrote.
  auto z = run_charkit("deformer run " + quote(dir_ / "m.json") + " --input " + quote(ds) + " -o " +
                           quote(dir_ / "z.npy"),
                       true);
  ASSERT_EQ(z.exit_code, 0) << z.out;
  // The dataset holds the rest pose and the 60 sampled poses.
  EXPECT_NE(z.out.find("61 rows"), std::string::npos) << z.out;
  std::size_t zr = 0, zc = 0;
  read_npy_f32(dir_ / "z.npy", zr, zc);
  EXPECT_EQ(zr, 61u);
  EXPECT_EQ(zc, 3u * 96u);
}

TEST_F(DeformerTrainCli, ClearErrors) {
  // No input bones: usage (2).
  auto a = run_charkit("deformer sample " + quote(kRig) + " -o " + quote(dir_ / "a.npz"), true);
  EXPECT_EQ(a.exit_code, 2);
  EXPECT_NE(a.out.find("--bones"), std::string::npos) << a.out;
  // A bone the skeleton lacks: invalid (1), named.
  auto b = run_charkit(
      "deformer sample " + quote(kRig) + " --bones no_such_bone -o " + quote(dir_ / "b.npz"), true);
  EXPECT_EQ(b.exit_code, 1);
  EXPECT_NE(b.out.find("no_such_bone"), std::string::npos) << b.out;
  EXPECT_FALSE(std::filesystem::exists(dir_ / "b.npz"));
  // Unknown model kind and a missing dataset.
  auto c = run_charkit(
      "deformer train " + quote(dir_ / "missing.npz") + " -o " + quote(dir_ / "m.json"), true);
  // A missing file is an I/O error (exit 2), named as given.
  EXPECT_EQ(c.exit_code, 2);
  EXPECT_NE(c.out.find("cannot read " + (dir_ / "missing.npz").string()), std::string::npos)
      << c.out;
  ASSERT_EQ(run_charkit("deformer sample " + quote(kRig) + " --bones joint_3 --poses 20 -o " +
                        quote(dir_ / "d.npz"))
                .exit_code,
            0);
  auto d = run_charkit(
      "deformer train " + quote(dir_ / "d.npz") + " --model forest -o " + quote(dir_ / "m.json"),
      true);
  EXPECT_EQ(d.exit_code, 2);
  EXPECT_NE(d.out.find("linear or neural"), std::string::npos) << d.out;
  // --model is --kind's hidden former name: refused beside it, absent from help.
  auto both = run_charkit("deformer train " + quote(dir_ / "d.npz") +
                              " --kind neural --model linear -o " + quote(dir_ / "m.json"),
                          true);
  EXPECT_EQ(both.exit_code, 2) << both.out;
  EXPECT_NE(both.out.find("former name of --kind"), std::string::npos) << both.out;
  auto help = run_charkit("deformer train --help", true);
  EXPECT_NE(help.out.find("--kind"), std::string::npos) << help.out;
  EXPECT_EQ(help.out.find("--model"), std::string::npos) << help.out;
  auto completion = run_charkit("completion bash", true);
  EXPECT_NE(completion.out.find("--kind"), std::string::npos);
  EXPECT_EQ(completion.out.find("--model"), std::string::npos);
  // A model named .npz would have its description written over its weights
  // (and a dataset named .json over its arrays): refused before any work.
  auto one = run_charkit(
      "deformer train " + quote(dir_ / "d.npz") + " -o " + quote(dir_ / "model.npz"), true);
  EXPECT_EQ(one.exit_code, 2);
  EXPECT_NE(one.out.find("IO_WRITE"), std::string::npos) << one.out;
  EXPECT_NE(one.out.find("does not end in .npz"), std::string::npos) << one.out;
  EXPECT_FALSE(std::filesystem::exists(dir_ / "model.npz"));
  auto two = run_charkit("deformer sample " + quote(kRig) + " --bones joint_3 --poses 20 -o " +
                             quote(dir_ / "d2.json"),
                         true);
  EXPECT_EQ(two.exit_code, 2);
  EXPECT_NE(two.out.find("does not end in .json"), std::string::npos) << two.out;
  EXPECT_FALSE(std::filesystem::exists(dir_ / "d2.json"));
  // A learning rate that is not > 0: usage (2), the option named.
  for (const char* lr : {"0", "-0.1", "nan"}) {
    auto bad = run_charkit("deformer train " + quote(dir_ / "d.npz") + " --kind neural --lr " + lr +
                               " -o " + quote(dir_ / "lr.json"),
                           true);
    EXPECT_EQ(bad.exit_code, 2) << lr;
    EXPECT_NE(bad.out.find("--lr: must be a number greater than 0"), std::string::npos) << bad.out;
    EXPECT_FALSE(std::filesystem::exists(dir_ / "lr.json"));
  }
  // eval with a dataset of other inputs: refused with both shapes named.
  ASSERT_EQ(run_charkit("deformer train " + quote(dir_ / "d.npz") + " -o " + quote(dir_ / "m.json"))
                .exit_code,
            0);
  ASSERT_EQ(run_charkit("deformer sample " + quote(kRig) + " --bones joint_2,joint_3 --poses 20 " +
                        "-o " + quote(dir_ / "two.npz"))
                .exit_code,
            0);
  auto e =
      run_charkit("deformer eval " + quote(dir_ / "m.json") + " " + quote(dir_ / "two.npz"), true);
  EXPECT_EQ(e.exit_code, 1);
  EXPECT_NE(e.out.find("EVAL_MISMATCH"), std::string::npos) << e.out;
}

// --threads: two runs with the same count write the same model bytes; a
// count out of range is a usage error.
TEST_F(DeformerTrainCli, ThreadsGiveTheSameModelForTheSameCount) {
  const auto ds = dir_ / "d.npz";
  ASSERT_EQ(run_charkit("deformer sample " + quote(kRig) + " --bones joint_3 --range 50 " +
                        "--poses 60 -o " + quote(ds))
                .exit_code,
            0);
  const std::string train = "deformer train " + quote(ds) +
                            " --kind neural --hidden 24,24 --iterations 200 --basis-size 4 -q ";
  for (const char* name : {"a", "b"}) {
    auto r = run_charkit(train + "--threads 2 -o " + quote(dir_ / (std::string(name) + ".json")));
    ASSERT_EQ(r.exit_code, 0) << r.out;
  }
  EXPECT_EQ(read_text(dir_ / "a.npz"), read_text(dir_ / "b.npz"));
  EXPECT_FALSE(read_text(dir_ / "a.npz").empty());
  auto bad = run_charkit(train + "--threads 65 -o " + quote(dir_ / "c.json"), true);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.out.find("--threads"), std::string::npos) << bad.out;
  EXPECT_FALSE(std::filesystem::exists(dir_ / "c.json"));
}

TEST_F(DeformerTrainCli, BakeExportImportAndAction) {
  const auto ds = dir_ / "d.npz";
  ASSERT_EQ(run_charkit("deformer sample " + quote(kRig) + " --bones joint_3 --range 50 " +
                        "--poses 40 -o " + quote(ds))
                .exit_code,
            0);
  ASSERT_EQ(
      run_charkit("deformer train " + quote(ds) + " -q -o " + quote(dir_ / "m.json")).exit_code, 0);

  // bake: 3 sampled poses -> 3 shape keys and a pose library naming them.
  auto b = run_charkit("deformer bake " + quote(dir_ / "m.json") + " " + quote(kRig) +
                       " --sample 3 --json -o " + quote(dir_ / "baked.glb"));
  ASSERT_EQ(b.exit_code, 0) << b.out;
  json bj = parse(b);
  ASSERT_EQ(bj["shapeKeys"].size(), 3u);
  EXPECT_EQ(bj["shapeKeys"][0], "pose_1");
  json lib = json::parse(read_text(dir_ / "baked.poses.json"));
  ASSERT_EQ(lib["poses"].size(), 3u);
  EXPECT_EQ(lib["poses"][2]["shape_key"], "pose_3");
  auto info = run_charkit("model inspect " + quote(dir_ / "baked.glb") + " --json");
  ASSERT_EQ(info.exit_code, 0) << info.out;
  // Baking the library again gives the same file.
  auto b2 =
      run_charkit("deformer bake " + quote(dir_ / "m.json") + " " + quote(kRig) + " --poses " +
                  quote(dir_ / "baked.poses.json") + " -o " + quote(dir_ / "again.glb"));
  ASSERT_EQ(b2.exit_code, 0) << b2.out;
  EXPECT_EQ(read_text(dir_ / "again.glb"), read_text(dir_ / "baked.glb"));
  // No poses: usage error.
  EXPECT_EQ(run_charkit("deformer bake " + quote(dir_ / "m.json") + " " + quote(kRig) + " -o " +
                        quote(dir_ / "x.glb"))
                .exit_code,
            2);

  // export-nmn: written, re-read within 1e-5, sidecar and morphs beside it.
  auto e = run_charkit("deformer export-nmn " + quote(ds) + " " + quote(kRig) +
                       " --hidden 8,8 --morphs 4 --iterations 100 -q --json -o " +
                       quote(dir_ / "net.nmn") + " --pose-model " + quote(dir_ / "engine.json"));
  ASSERT_EQ(e.exit_code, 0) << e.out;
  json ej = parse(e);
  EXPECT_EQ(ej["inputs"], 6);  // one bone x 6
  EXPECT_EQ(ej["numMorphs"], 4);
  EXPECT_LE(ej["reimportMaxAbsDiff"].get<double>(), 1e-5);
  EXPECT_TRUE(std::filesystem::exists(dir_ / "net.bmd_ue.json"));
  EXPECT_TRUE(std::filesystem::exists(dir_ / "net.morphs.npz"));
  auto ni = run_charkit("deformer info " + quote(dir_ / "net.nmn") + " --json");
  ASSERT_EQ(ni.exit_code, 0) << ni.out;
  auto mi = run_charkit("deformer info " + quote(dir_ / "engine.json") + " --json");
  ASSERT_EQ(mi.exit_code, 0) << mi.out;
  EXPECT_EQ(parse(mi)["layout"], "engine");
  EXPECT_EQ(ej["retrained"], true);

  // A trained engine-layout model is written as it is: the saved model of the
  // export gives the very same network file, with no retraining and no rig.
  auto as_is = run_charkit("deformer export-nmn " + quote(dir_ / "engine.json") + " --json -o " +
                           quote(dir_ / "as_is.nmn"));
  ASSERT_EQ(as_is.exit_code, 0) << as_is.out;
  EXPECT_EQ(parse(as_is)["retrained"], false);
  EXPECT_LE(parse(as_is)["reimportMaxAbsDiff"].get<double>(), 1e-5);
  EXPECT_EQ(read_text(dir_ / "as_is.nmn"), read_text(dir_ / "net.nmn"));
  EXPECT_EQ(read_text(dir_ / "as_is.morphs.npz"), read_text(dir_ / "net.morphs.npz"));
  // ... and takes no retraining option, rig or --pose-model.
  for (const std::string& extra : {std::string("--hidden 8"), std::string("--seed 3"), quote(kRig),
                                   "--pose-model " + quote(dir_ / "x.json")}) {
    auto r = run_charkit("deformer export-nmn " + quote(dir_ / "engine.json") + " " + extra +
                             " -o " + quote(dir_ / "x.nmn"),
                         true);
    EXPECT_EQ(r.exit_code, 2) << extra << ": " << r.out;
    EXPECT_FALSE(std::filesystem::exists(dir_ / "x.nmn")) << extra;
  }
  // A model in the axis-angle layout cannot be written as it is: it says why.
  auto aa = run_charkit(
      "deformer export-nmn " + quote(dir_ / "m.json") + " -o " + quote(dir_ / "x.nmn"), true);
  EXPECT_EQ(aa.exit_code, 1) << aa.out;
  EXPECT_NE(aa.out.find("NMN_EXPORT_MODEL"), std::string::npos) << aa.out;
  EXPECT_NE(aa.out.find("linear model"), std::string::npos) << aa.out;
  // A dataset without its rig: usage error naming the form.
  auto norig =
      run_charkit("deformer export-nmn " + quote(ds) + " -o " + quote(dir_ / "x.nmn"), true);
  EXPECT_EQ(norig.exit_code, 2) << norig.out;
  EXPECT_NE(norig.out.find("DATASET RIG"), std::string::npos) << norig.out;

  // import: RiggedSimple has none of the morph targets the
  // sidecar names; they come from net.morphs.npz beside the .nmn, and the
  // imported model gives the exported one's offsets on every sample.
  auto im = run_charkit("deformer import " + quote(dir_ / "net.nmn") + " " + quote(kRig) +
                        " --json -o " + quote(dir_ / "imported.json"));
  ASSERT_EQ(im.exit_code, 0) << im.out;
  json ij = parse(im);
  EXPECT_EQ(ij["morphTargets"], (dir_ / "net.morphs.npz").string());
  ASSERT_EQ(ij["morphs"].size(), 5u);  // morph 0 (the mean) + 4
  EXPECT_EQ(ij["morphs"][0], "mean");
  // Engine-layout inputs (6 per bone): the rest pose's and three turned ones.
  const auto poses = write("engine_in.npy", npy_rows(4, 6, {1,    0,    0,     0,     1,    0,  //
                                                            0.9f, 0.2f, 0,     -0.2f, 0.9f, 0.1f,
                                                            0.7f, 0,    0.6f,  0,     1,    0,  //
                                                            1,    0.3f, -0.2f, 0.1f,  0.8f, 0.4f}));
  for (const char* model : {"engine.json", "imported.json"}) {
    auto r = run_charkit("deformer run " + quote(dir_ / model) + " --input " + quote(poses) +
                         " -o " + quote(dir_ / (std::string(model) + ".npy")));
    ASSERT_EQ(r.exit_code, 0) << model << ": " << r.out;
  }
  std::size_t r1 = 0, c1 = 0, r2 = 0, c2 = 0;
  auto exported = read_npy_f32(dir_ / "engine.json.npy", r1, c1);
  auto imported = read_npy_f32(dir_ / "imported.json.npy", r2, c2);
  ASSERT_EQ(r1, 4u);
  ASSERT_EQ(r1, r2);
  ASSERT_EQ(c1, c2);
  double worst = 0, largest = 0;
  for (std::size_t i = 0; i < exported.size(); ++i) {
    worst = std::max(worst, std::fabs(static_cast<double>(exported[i]) - imported[i]));
    largest = std::max(largest, std::fabs(static_cast<double>(exported[i])));
  }
  EXPECT_LE(worst, 1e-5) << "largest offset " << largest;
  EXPECT_GT(largest, 1e-4);  // the comparison is not between zeros

  // --morphs names the file; without one (none beside the network either)
  // the sidecar's names are not on the mesh: IMPORT_MORPHS.
  std::filesystem::rename(dir_ / "net.morphs.npz", dir_ / "elsewhere.npz");
  auto given =
      run_charkit("deformer import " + quote(dir_ / "net.nmn") + " " + quote(kRig) + " --morphs " +
                  quote(dir_ / "elsewhere.npz") + " -o " + quote(dir_ / "imported2.json"));
  EXPECT_EQ(given.exit_code, 0) << given.out;
  auto none = run_charkit("deformer import " + quote(dir_ / "net.nmn") + " " + quote(kRig) +
                              " -o " + quote(dir_ / "imported3.json"),
                          true);
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_NE(none.out.find("IMPORT_MORPHS"), std::string::npos) << none.out;
  // ... and the message names the file it looked for beside the network.
  EXPECT_NE(none.out.find((dir_ / "net.morphs.npz").string() + ", which export-nmn writes"),
            std::string::npos)
      << none.out;
  // Morphs for another mesh: their vertex count is named.
  auto other = run_charkit("deformer import " + quote(dir_ / "net.nmn") + " " +
                               quote(std::string(CHARKIT_TEST_DATA) + "/models/CesiumMan.glb") +
                               " --morphs " + quote(dir_ / "elsewhere.npz") + " -o " +
                               quote(dir_ / "imported4.json"),
                           true);
  EXPECT_EQ(other.exit_code, 1);
  EXPECT_NE(other.out.find("for 96 vertices"), std::string::npos) << other.out;

  // Action sampling from CesiumMan's walk: the rest pose + 5 frames.
  const std::string cesium = std::string(CHARKIT_TEST_DATA) + "/models/CesiumMan.glb";
  auto a = run_charkit("deformer sample " + quote(cesium) +
                       " --bones all --action --frames 5 --targets dqs --json -o " +
                       quote(dir_ / "walk.npz"));
  ASSERT_EQ(a.exit_code, 0) << a.out;
  EXPECT_EQ(parse(a)["samples"], 6);
  auto bad = run_charkit("deformer sample " + quote(cesium) +
                             " --bones all --action NoSuchAnimation -o " + quote(dir_ / "w.npz"),
                         true);
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.out.find("ACTION_ANIMATION"), std::string::npos) << bad.out;
}

// On Godette's VRM the first skinned mesh is the 630-vertex face;
// a leg bone moves only the body, so sample must take the body, say so, and
// warn when the mesh given with --mesh is one the bones do not move.
TEST_F(DeformerTrainCli, SampleTakesTheMeshTheBonesMove) {
  const std::string vrm = std::string(CHARKIT_TEST_DATA) + "/models/Godette_vrm_v4.vrm";
  auto s = run_charkit("deformer sample " + quote(vrm) +
                       " --bones thigh.l_Armature --poses 3 --targets dqs --json -o " +
                       quote(dir_ / "leg.npz"));
  ASSERT_EQ(s.exit_code, 0) << s.out;
  json j = parse(s);
  EXPECT_EQ(j["mesh"], "BodyMesh");
  EXPECT_EQ(j["vertices"], 7437);
  EXPECT_GT(j["meshInfluence"].get<double>(), 100.0);
  EXPECT_FALSE(j.contains("warnings")) << j.dump();

  auto text = run_charkit("deformer sample " + quote(vrm) +
                              " --bones thigh.l_Armature --poses 3 --targets dqs -o " +
                              quote(dir_ / "leg2.npz"),
                          true);
  ASSERT_EQ(text.exit_code, 0) << text.out;
  EXPECT_NE(text.out.find("mesh \"BodyMesh\" (7437 vertices), the one the input bones move most"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("other skinned meshes: \"FaceMesh\""), std::string::npos) << text.out;

  auto face =
      run_charkit("deformer sample " + quote(vrm) +
                  " --mesh FaceMesh --bones thigh.l_Armature --poses 3 --targets dqs --json "
                  "-o " +
                  quote(dir_ / "face.npz"));
  ASSERT_EQ(face.exit_code, 0) << face.out;
  json f = parse(face);
  EXPECT_EQ(f["mesh"], "FaceMesh");
  EXPECT_EQ(f["meshInfluence"], 0.0);
  ASSERT_EQ(f["warnings"].size(), 1u) << f.dump();
  EXPECT_EQ(f["warnings"][0]["code"], "RIG_NOT_INFLUENCED");
  EXPECT_NE(f["warnings"][0]["message"].get<std::string>().find("\"BodyMesh\""), std::string::npos);

  auto wrong = run_charkit("deformer sample " + quote(vrm) +
                               " --mesh Bdy --bones thigh.l_Armature -o " + quote(dir_ / "w.npz"),
                           true);
  EXPECT_EQ(wrong.exit_code, 1) << wrong.out;
  EXPECT_NE(wrong.out.find("RIG_NO_SKINNED_MESH"), std::string::npos) << wrong.out;
  EXPECT_NE(wrong.out.find("\"FaceMesh\", \"BodyMesh\""), std::string::npos) << wrong.out;
}

// --bvh on a rig whose bones have other names, through --joint-map
// with VRM humanoid names (Godette's thigh.l_Armature is leftUpperLeg; the
// BVH is a Mixamo export).
TEST_F(DeformerTrainCli, SampleBvhThroughAJointMap) {
  const std::string vrm = std::string(CHARKIT_TEST_DATA) + "/models/Godette_vrm_v4.vrm";
  const std::string bvh = std::string(CHARKIT_TEST_DATA) + "/bvh/test_freebvh.bvh";
  auto plain = run_charkit("deformer sample " + quote(vrm) +
                               " --bones thigh.l_Armature,pelvis_Armature --bvh " + quote(bvh) +
                               " --frames 4 -o " + quote(dir_ / "a.npz"),
                           true);
  EXPECT_EQ(plain.exit_code, 1) << plain.out;
  EXPECT_NE(plain.out.find("ACTION_BONE"), std::string::npos) << plain.out;
  EXPECT_NE(plain.out.find("mixamorig:LeftUpLeg"), std::string::npos) << plain.out;

  std::ofstream(dir_ / "map.json")
      << R"({"leftUpperLeg": ["mixamorig:LeftUpLeg"], "hips": "mixamorig:Hips"})";
  auto mapped = run_charkit("deformer sample " + quote(vrm) +
                            " --bones thigh.l_Armature,pelvis_Armature --bvh " + quote(bvh) +
                            " --joint-map " + quote(dir_ / "map.json") +
                            " --frames 4 --targets dqs --json -o " + quote(dir_ / "b.npz"));
  ASSERT_EQ(mapped.exit_code, 0) << mapped.out;
  json j = parse(mapped);
  EXPECT_EQ(j["samples"], 5);  // rest + 4 frames
  EXPECT_EQ(j["mesh"], "BodyMesh");
  EXPECT_GT(j["lbsError"]["max"].get<double>(), 0.0);  // the frames do move the leg

  std::ofstream(dir_ / "bad.json") << R"({"leftUpperLeg": 7})";
  auto bad = run_charkit("deformer sample " + quote(vrm) + " --bones thigh.l_Armature --bvh " +
                             quote(bvh) + " --joint-map " + quote(dir_ / "bad.json") + " -o " +
                             quote(dir_ / "c.npz"),
                         true);
  EXPECT_EQ(bad.exit_code, 1) << bad.out;
  EXPECT_NE(bad.out.find("JOINT_MAP"), std::string::npos) << bad.out;
  EXPECT_NE(bad.out.find("/leftUpperLeg"), std::string::npos) << bad.out;
  auto alone =
      run_charkit("deformer sample " + quote(vrm) + " --bones thigh.l_Armature " + "--joint-map " +
                      quote(dir_ / "map.json") + " -o " + quote(dir_ / "d.npz"),
                  true);
  EXPECT_EQ(alone.exit_code, 2) << alone.out;
}

}  // namespace
}  // namespace charkit::clitest
