#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "charkit/core/json.h"
#include "charkit/deformer/dataset.h"

using namespace charkit::deformer;
namespace fs = std::filesystem;

namespace {
InputSpec spec_one_bone_one_curve() {
  InputSpec s;
  BoneInput b{"spine_01", {}};
  b.axes[1].enabled = false;
  b.axes[2] = {true, -20.0, 35.5};
  s.bones = {b};
  s.curves = {{"smile", 0.0, 1.0}};
  return s;
}

Dataset small_dataset() {
  DatasetBuilder builder(spec_one_bone_one_curve(), FeatureLayout::kAxisAngle, "body");
  const std::vector<float> f0(4, 0.0F), d0(6, 0.0F);
  const std::vector<float> f1 = {0.1F, 0.0F, -0.2F, 0.5F}, d1 = {1, 2, 3, -4, -5, -6.5F};
  EXPECT_TRUE(builder.add_sample(f0, d0, "rest").ok());
  EXPECT_TRUE(builder.add_sample(f1, d1, "pose_1").ok());
  return std::move(builder).take();
}
}  // namespace

TEST(Dataset, BuilderChecksVertexCountAndShapes) {
  DatasetBuilder b(spec_one_bone_one_curve());
  const std::vector<float> f(4, 0.0F);
  ASSERT_TRUE(b.add_sample(f, std::vector<float>(9, 0.0F)).ok());
  auto st = b.add_sample(f, std::vector<float>(12, 0.0F));
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, "DATASET_VERTEX_COUNT");
  EXPECT_NE(st.error().message.find("sample 1"), std::string::npos);
  EXPECT_EQ(b.add_sample(f, std::vector<float>(8, 0.0F)).error().code, "DATASET_SHAPE");
  EXPECT_EQ(b.add_sample(std::vector<float>(3), std::vector<float>(9)).error().code,
            "DATASET_SHAPE");
  std::vector<float> bad(9, 0.0F);
  bad[4] = INFINITY;
  EXPECT_EQ(b.add_sample(f, bad).error().code, "DATASET_NOT_FINITE");
  EXPECT_EQ(b.dataset().sample_count, 1U);  // failed samples leave nothing behind
  EXPECT_EQ(b.dataset().deltas.size(), 9U);
}

TEST(Dataset, EncodeDecodeRoundTrip) {
  const Dataset d = small_dataset();
  auto files = encode_dataset(d);
  ASSERT_TRUE(files.ok()) << files.error().to_string();
  // The sidecar carries what the arrays do not.
  auto j = charkit::core::parse_json_strict(files->json);
  ASSERT_TRUE(j.ok());
  EXPECT_EQ((*j)["format"], "charkit.dataset");
  EXPECT_EQ((*j)["layout"], "axis_angle");
  EXPECT_EQ((*j)["vertex_count"], 2);
  EXPECT_EQ((*j)["feature_count"], 4);
  EXPECT_EQ((*j)["inputs"]["bones"][0]["axes"][2]["max_deg"], 35.5);
  EXPECT_EQ((*j)["inputs"]["bones"][0]["axes"][1]["enabled"], false);
  // The arrays: features (2, 4) and deltas (2, 2, 3), float32.
  auto members = read_npz(files->npz);
  ASSERT_TRUE(members.ok());
  ASSERT_EQ(members->size(), 2U);
  EXPECT_EQ((*members)[0].name, "features");
  EXPECT_EQ((*members)[0].array.shape, (std::vector<std::uint64_t>{2, 4}));
  EXPECT_EQ((*members)[1].name, "deltas");
  EXPECT_EQ((*members)[1].array.shape, (std::vector<std::uint64_t>{2, 2, 3}));
  auto back = decode_dataset(files->npz, files->json);
  ASSERT_TRUE(back.ok()) << back.error().to_string();
  EXPECT_EQ(back->features, d.features);
  EXPECT_EQ(back->deltas, d.deltas);
  EXPECT_EQ(back->sample_names, d.sample_names);
  EXPECT_EQ(back->mesh_name, "body");
  EXPECT_EQ(back->vertex_count, 2U);
  ASSERT_EQ(back->spec.bones.size(), 1U);
  EXPECT_EQ(back->spec.bones[0].name, "spine_01");
  EXPECT_FALSE(back->spec.bones[0].axes[1].enabled);
  EXPECT_EQ(back->spec.bones[0].axes[2].min_deg, -20.0);
  EXPECT_EQ(back->spec.curves[0].name, "smile");
}

TEST(Dataset, DecodeRejectsInconsistentSidecars) {
  const Dataset d = small_dataset();
  auto files = encode_dataset(d);
  ASSERT_TRUE(files.ok());
  auto edit = [&](auto&& fn) {
    auto j = charkit::core::parse_json_strict(files->json);
    fn(*j);
    return decode_dataset(files->npz, j->dump());
  };
  auto r = edit([](charkit::core::Json& j) { j["feature_count"] = 5; });
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "DATASET_JSON");
  EXPECT_EQ(r.error().location.pointer, "/feature_count");
  r = edit([](charkit::core::Json& j) { j["vertex_count"] = 3; });
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "DATASET_ARRAY");
  r = edit([](charkit::core::Json& j) { j["extra"] = 1; });
  EXPECT_EQ(r.error().code, "DATASET_JSON");
  r = edit([](charkit::core::Json& j) { j["version"] = 2; });
  EXPECT_EQ(r.error().location.pointer, "/version");
  r = edit([](charkit::core::Json& j) { j["inputs"]["bones"][0]["axes"][0]["min_deg"] = 500; });
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "POSE_SPEC_RANGE");
  EXPECT_EQ(r.error().location.pointer, "/inputs/bones/0/axes/0");
  // An npz without the deltas member.
  const std::vector<NpzMember> only = {{"features", NpyArray::from_f32({2, 4}, d.features)}};
  auto npz = write_npz(only);
  ASSERT_TRUE(npz.ok());
  EXPECT_EQ(decode_dataset(*npz, files->json).error().code, "DATASET_ARRAY");
}

TEST(Dataset, SaveAndLoadFiles) {
  const fs::path dir =
      fs::temp_directory_path() / ("charkit_dataset_test_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const Dataset d = small_dataset();
  ASSERT_TRUE(save_dataset(d, dir / "train.npz").ok());
  EXPECT_TRUE(fs::exists(dir / "train.json"));
  auto back = load_dataset(dir / "train.npz");
  ASSERT_TRUE(back.ok()) << back.error().to_string();
  EXPECT_EQ(back->deltas, d.deltas);
  auto missing = load_dataset(dir / "nothing.npz");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, "IO_OPEN");  // the I/O family: exit 2 in the CLI
  EXPECT_NE(missing.error().message.find("nothing.npz"), std::string::npos)
      << missing.error().message;  // the file asked for, not its sidecar
  // Without its sidecar the .npz is named with what is missing.
  fs::remove(dir / "train.json");
  auto no_sidecar = load_dataset(dir / "train.npz");
  ASSERT_FALSE(no_sidecar.ok());
  EXPECT_NE(no_sidecar.error().message.find("train.json"), std::string::npos);
  EXPECT_NE(no_sidecar.error().message.find("deformer sample"), std::string::npos);
  // Named .json, the dataset and its description would be one file: refused
  // before anything is written, and on reading.
  auto one_file = save_dataset(d, dir / "train2.json");
  ASSERT_FALSE(one_file.ok());
  EXPECT_EQ(one_file.error().code, "IO_WRITE");
  EXPECT_NE(one_file.error().message.find("train2.json"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir / "train2.json"));
  EXPECT_EQ(load_dataset(dir / "train2.json").error().code, "IO_OPEN");
  fs::remove_all(dir);
}
