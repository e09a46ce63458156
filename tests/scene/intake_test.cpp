// Model intake (docs/model.md). The expected facts of the files in
// tests/data/models come from reading their JSON chunks with a separate
// Python script (json + struct, not our code) and from their README; the GLBs
// of the error cases are written byte by byte here after glTF 2.0 §4.4; the
// zips are built with libzip and the FBX files with Assimp's exporter.
#include <gtest/gtest.h>
#include <zip.h>

#include <assimp/scene.h>
#include <assimp/Exporter.hpp>
#include <assimp/Importer.hpp>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "charkit/scene/intake.h"

#include "test_data.h"

namespace charkit::scene {
namespace {

using Buf = std::vector<std::uint8_t>;

using testkit::kModels;

void put_u32(Buf& b, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) b.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}
void put_text(Buf& b, std::string_view s) {
  b.insert(b.end(), s.begin(), s.end());
}

// A GLB written out field by field (glTF 2.0 §4.4): "glTF", version, total
// length; chunk = length, type, data. Lengths can be overridden to make the
// broken cases; the JSON is padded with spaces and the BIN with zeros to 4.
struct GlbSpec {
  std::string json;
  Buf bin;
  bool with_bin = true;
  std::uint32_t version = 2;
  std::optional<std::uint32_t> total_length;
  std::optional<std::uint32_t> json_length;
  std::optional<std::uint32_t> bin_length;
  std::uint32_t json_type = 0x4E4F534A;
};

Buf make_glb(GlbSpec s) {
  while (s.json.size() % 4) s.json += ' ';
  while (s.bin.size() % 4) s.bin.push_back(0);
  const std::uint32_t natural =
      static_cast<std::uint32_t>(12 + 8 + s.json.size() + (s.with_bin ? 8 + s.bin.size() : 0));
  Buf b;
  put_text(b, "glTF");
  put_u32(b, s.version);
  put_u32(b, s.total_length.value_or(natural));
  put_u32(b, s.json_length.value_or(static_cast<std::uint32_t>(s.json.size())));
  put_u32(b, s.json_type);
  put_text(b, s.json);
  if (s.with_bin) {
    put_u32(b, s.bin_length.value_or(static_cast<std::uint32_t>(s.bin.size())));
    put_text(b, "BIN");
    b.push_back(0);
    b.insert(b.end(), s.bin.begin(), s.bin.end());
  }
  return b;
}

// One triangle: 3 float VEC3 positions in a 36-byte buffer.
const char* const kTriangle =
    R"({"asset":{"version":"2.0","generator":"hand"},"buffers":[{"byteLength":36}],)"
    R"("bufferViews":[{"buffer":0,"byteLength":36}],)"
    R"("accessors":[{"bufferView":0,"componentType":5126,"count":3,"type":"VEC3"}],)"
    R"("meshes":[{"primitives":[{"attributes":{"POSITION":0}}]}],"nodes":[{"mesh":0}]})";

GlbSpec triangle_spec(std::string json = kTriangle) {
  GlbSpec s;
  s.json = std::move(json);
  s.bin.assign(36, 0);
  return s;
}

void expect_same_info(const ModelInfo& a, const ModelInfo& b) {
  EXPECT_EQ(a.format, b.format);
  EXPECT_EQ(a.container, b.container);
  EXPECT_EQ(a.gltf_version, b.gltf_version);
  EXPECT_EQ(a.generator, b.generator);
  EXPECT_EQ(a.vrm.has_value(), b.vrm.has_value());
  if (a.vrm && b.vrm) {
    EXPECT_EQ(a.vrm->version, b.vrm->version);
    EXPECT_EQ(a.vrm->humanoid_bones, b.vrm->humanoid_bones);
    EXPECT_EQ(a.vrm->missing_bones, b.vrm->missing_bones);
  }
  EXPECT_EQ(a.skins, b.skins);
  EXPECT_EQ(a.joints, b.joints);
  EXPECT_EQ(a.nodes, b.nodes);
  EXPECT_EQ(a.meshes, b.meshes);
  EXPECT_EQ(a.primitives, b.primitives);
  EXPECT_EQ(a.vertices, b.vertices);
  EXPECT_EQ(a.triangles, b.triangles);
  EXPECT_EQ(a.materials, b.materials);
  EXPECT_EQ(a.images, b.images);
  EXPECT_EQ(a.animations, b.animations);
  EXPECT_EQ(a.morph_targets, b.morph_targets);
  ASSERT_EQ(a.warnings.size(), b.warnings.size());
  for (std::size_t i = 0; i < a.warnings.size(); ++i)
    EXPECT_EQ(a.warnings[i].code, b.warnings[i].code);
}

// inspect_model on the bytes; every case also checks that
// inspect_and_load_model gives the same answer or the same located error,
// and keeps a document exactly for GLB and glTF JSON.
core::Result<ModelInfo> inspect(const Buf& b, std::string name = {}) {
  IntakeOptions o;
  o.name = std::move(name);
  const core::Bytes bytes(b.data(), b.size());
  auto r = inspect_model(bytes, o);
  auto loaded = inspect_and_load_model(bytes, o);
  EXPECT_EQ(r.ok(), loaded.ok()) << (r ? loaded.error().to_string() : r.error().to_string());
  if (r && loaded) {
    expect_same_info(*r, loaded->info);
    EXPECT_EQ(loaded->document.has_value(),
              r->container == ModelContainer::kGlb || r->container == ModelContainer::kGltfJson);
  } else if (!r && !loaded) {
    EXPECT_EQ(r.error().code, loaded.error().code);
    EXPECT_EQ(r.error().location.offset, loaded.error().location.offset);
    EXPECT_EQ(r.error().location.pointer, loaded.error().location.pointer);
  }
  return r;
}

void expect_error(const core::Result<ModelInfo>& r, const std::string& code,
                  std::optional<std::uint64_t> offset, const std::string& pointer = {}) {
  ASSERT_FALSE(r.ok()) << "expected " << code;
  EXPECT_EQ(r.error().code, code) << r.error().to_string();
  EXPECT_EQ(r.error().location.offset, offset) << r.error().to_string();
  EXPECT_EQ(r.error().location.pointer, pointer) << r.error().to_string();
  EXPECT_FALSE(r.error().message.empty());
}

bool has_warning(const ModelInfo& m, const std::string& code) {
  for (const auto& w : m.warnings)
    if (w.code == code) return true;
  return false;
}

// --- the real files ---------------------------------------------------------

TEST(IntakeFiles, CesiumManIsSkinnedGltf) {
  auto r = inspect_model_file(kModels + "CesiumMan.glb");
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_EQ(r->format, ModelFormat::kGltf);
  EXPECT_EQ(r->container, ModelContainer::kGlb);
  EXPECT_EQ(r->gltf_version, "2.0");
  EXPECT_EQ(r->generator, "COLLADA2GLTF");
  EXPECT_FALSE(r->vrm.has_value());
  EXPECT_TRUE(r->skinned);
  EXPECT_EQ(r->skins, 1u);
  EXPECT_EQ(r->joints, 19u);
  EXPECT_EQ(r->nodes, 22u);
  EXPECT_EQ(r->meshes, 1u);
  EXPECT_EQ(r->primitives, 1u);
  EXPECT_EQ(r->vertices, 3273u);
  EXPECT_EQ(r->triangles, 4672u);
  EXPECT_EQ(r->materials, 1u);
  EXPECT_EQ(r->textures, 1u);
  EXPECT_EQ(r->images, 1u);
  EXPECT_EQ(r->animations, 1u);
  EXPECT_EQ(r->morph_targets, 0u);
  EXPECT_TRUE(r->warnings.empty());
}

TEST(IntakeFiles, RiggedFigureAndRiggedSimple) {
  auto f = inspect_model_file(kModels + "RiggedFigure.glb");
  ASSERT_TRUE(f.ok()) << f.error().to_string();
  EXPECT_EQ(f->joints, 19u);
  EXPECT_EQ(f->vertices, 370u);
  EXPECT_EQ(f->triangles, 256u);
  EXPECT_EQ(f->textures, 0u);
  EXPECT_EQ(f->animations, 1u);
  auto s = inspect_model_file(kModels + "RiggedSimple.glb");
  ASSERT_TRUE(s.ok()) << s.error().to_string();
  EXPECT_EQ(s->format, ModelFormat::kGltf);
  EXPECT_TRUE(s->skinned);
  EXPECT_EQ(s->joints, 2u);
  EXPECT_EQ(s->nodes, 5u);
  EXPECT_EQ(s->vertices, 96u);
  EXPECT_EQ(s->triangles, 188u);
}

TEST(IntakeFiles, GodetteIsVrm0) {
  auto r = inspect_model_file(kModels + "Godette_vrm_v4.vrm");
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_EQ(r->format, ModelFormat::kVrm);
  EXPECT_EQ(r->container, ModelContainer::kGlb);
  ASSERT_TRUE(r->vrm.has_value());
  EXPECT_EQ(r->vrm->version, "0.x");
  EXPECT_EQ(r->vrm->spec_version, "0.0");
  EXPECT_EQ(r->vrm->exporter_version, "saturday06_blender_vrm_exporter_experimental_1.10.0");
  EXPECT_EQ(r->vrm->title, "Low-Poly Godette");
  EXPECT_EQ(r->vrm->author, "SirRichard94");
  EXPECT_EQ(r->vrm->model_version, "0.21");
  EXPECT_EQ(r->vrm->humanoid_bones, 45u);
  EXPECT_TRUE(r->vrm->missing_bones.empty());
  EXPECT_TRUE(r->skinned);
  EXPECT_EQ(r->joints, 68u);
  EXPECT_EQ(r->nodes, 71u);
  EXPECT_EQ(r->meshes, 2u);
  EXPECT_EQ(r->primitives, 4u);
  EXPECT_EQ(r->vertices, 8067u);
  EXPECT_EQ(r->triangles, 3439u);
  EXPECT_EQ(r->materials, 4u);
  EXPECT_EQ(r->textures, 5u);
  EXPECT_EQ(r->images, 5u);
  EXPECT_EQ(r->animations, 0u);
  EXPECT_EQ(r->morph_targets, 15u);
  EXPECT_TRUE(r->warnings.empty());
}

TEST(IntakeFiles, SphereIsVrm0WithUniVrmExporter) {
  auto r = inspect_model_file(kModels + "sphere.vrm");
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  ASSERT_TRUE(r->vrm.has_value());
  EXPECT_EQ(r->vrm->version, "0.x");
  EXPECT_EQ(r->vrm->exporter_version, "UniVRM-0.53.0");
  EXPECT_EQ(r->vrm->title, "sphere");
  EXPECT_EQ(r->vrm->author, "FMS_Cat");
  EXPECT_EQ(r->vrm->humanoid_bones, 22u);
  EXPECT_TRUE(r->vrm->missing_bones.empty());
  EXPECT_EQ(r->generator, "UniGLTF-1.28");
  EXPECT_EQ(r->joints, 22u);
  EXPECT_EQ(r->nodes, 31u);
  EXPECT_EQ(r->vertices, 1984u);
  EXPECT_EQ(r->triangles, 960u);
}

TEST(IntakeFiles, DebugRobotIsUnskinnedVrm1) {
  auto r = inspect_model_file(kModels + "debug_robot.vrm");
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_EQ(r->format, ModelFormat::kVrm);
  ASSERT_TRUE(r->vrm.has_value());
  EXPECT_EQ(r->vrm->version, "1.0");
  EXPECT_EQ(r->vrm->spec_version, "1.0");
  EXPECT_EQ(r->vrm->title, "VRM Animation Debug Robot");
  EXPECT_EQ(r->vrm->author, "@saturday06");
  EXPECT_EQ(r->vrm->model_version, "1");
  EXPECT_EQ(r->vrm->humanoid_bones, 53u);
  EXPECT_TRUE(r->vrm->missing_bones.empty());
  EXPECT_FALSE(r->skinned);
  EXPECT_EQ(r->skins, 0u);
  EXPECT_EQ(r->joints, 0u);
  EXPECT_EQ(r->nodes, 77u);
  EXPECT_EQ(r->meshes, 1u);
  EXPECT_EQ(r->primitives, 3u);
  EXPECT_EQ(r->vertices, 72u);
  EXPECT_EQ(r->triangles, 36u);
  EXPECT_EQ(r->materials, 3u);
  EXPECT_EQ(r->textures, 3u);
}

TEST(IntakeFiles, DetectionIgnoresTheName) {
  // A GLB renamed .fbx is still a GLB; the name only adds a warning.
  std::ifstream in(kModels + "RiggedSimple.glb", std::ios::binary);
  Buf b((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto r = inspect(b, "character.fbx");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->container, ModelContainer::kGlb);
  EXPECT_TRUE(has_warning(*r, "NAME_MISMATCH"));
  auto v = inspect(b, "avatar.vrm");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->format, ModelFormat::kGltf);
  EXPECT_TRUE(has_warning(*v, "VRM_EXTENSION_MISSING"));
}

TEST(IntakeFiles, OnePassAgreesOnEverySampleModel) {
  // inspect() compares inspect_model with inspect_and_load_model; the
  // document kept is the file's (same node count as the survey found).
  for (const char* name : {"CesiumMan.glb", "RiggedFigure.glb", "RiggedSimple.glb",
                           "Godette_vrm_v4.vrm", "sphere.vrm", "debug_robot.vrm"}) {
    SCOPED_TRACE(name);
    std::ifstream in(kModels + name, std::ios::binary);
    Buf b((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ASSERT_FALSE(b.empty());
    auto r = inspect(b, name);
    ASSERT_TRUE(r.ok()) << r.error().to_string();
    auto loaded = inspect_and_load_model(core::Bytes(b.data(), b.size()));
    ASSERT_TRUE(loaded.ok());
    ASSERT_TRUE(loaded->document);
    EXPECT_EQ(loaded->document->asset().nodes.size(), r->nodes);
  }
}

TEST(IntakeFiles, MissingFileIsAnIoError) {
  auto r = inspect_model_file(kModels + "no-such-file.glb");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code.rfind("IO_", 0), 0u) << r.error().code;
}

// --- hand-built GLBs -----------------------------------------------------

TEST(IntakeGlb, HandBuiltTriangle) {
  auto r = inspect(make_glb(triangle_spec()));
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_EQ(r->container, ModelContainer::kGlb);
  EXPECT_EQ(r->generator, "hand");
  EXPECT_EQ(r->meshes, 1u);
  EXPECT_EQ(r->vertices, 3u);
  EXPECT_EQ(r->triangles, 1u);
  EXPECT_FALSE(r->skinned);
}

TEST(IntakeGlb, TruncatedHeader) {
  Buf b;
  put_text(b, "glTF");
  put_u32(b, 2);
  expect_error(inspect(b), "GLB_TRUNCATED", 8);
}

TEST(IntakeGlb, DeclaredLengthPastTheEnd) {
  Buf b = make_glb(triangle_spec());
  b.resize(b.size() - 4);  // the header still declares the full length
  expect_error(inspect(b), "GLB_TRUNCATED", 8);
}

TEST(IntakeGlb, WrongVersion) {
  auto s = triangle_spec();
  s.version = 1;
  expect_error(inspect(make_glb(s)), "GLB_VERSION", 4);
}

TEST(IntakeGlb, JsonChunkLengthPastTheEnd) {
  auto s = triangle_spec();
  s.json_length = 100000;
  expect_error(inspect(make_glb(s)), "GLB_CHUNK_LENGTH", 12);
}

TEST(IntakeGlb, BinChunkLengthPastTheEnd) {
  auto s = triangle_spec();
  s.bin_length = 40;  // 36 bytes follow
  const Buf b = make_glb(s);
  const std::uint64_t bin_header = 20 + ((std::string(kTriangle).size() + 3) / 4 * 4);
  expect_error(inspect(b), "GLB_CHUNK_LENGTH", bin_header);
}

TEST(IntakeGlb, FirstChunkMustBeJson) {
  auto s = triangle_spec();
  s.json_type = 0x004E4942;
  expect_error(inspect(make_glb(s)), "GLB_CHUNK_TYPE", 16);
}

TEST(IntakeGlb, ChunkHeaderCutShort) {
  auto s = triangle_spec();
  s.with_bin = false;
  Buf b = make_glb(s);
  put_u32(b, 36);  // 4 bytes of a chunk header, then the end
  for (int i = 0; i < 4; ++i)
    b[8 + static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(b.size() >> (8 * i));
  expect_error(inspect(b), "GLB_TRUNCATED", b.size() - 4);
}

TEST(IntakeGlb, JsonSyntaxErrorOffsetIsInTheFile) {
  auto r = inspect(make_glb(triangle_spec(R"({"asset": })")));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "JSON_SYNTAX");
  ASSERT_TRUE(r.error().location.offset.has_value());
  EXPECT_GE(*r.error().location.offset, 20u);  // the JSON chunk data starts at byte 20
  EXPECT_LE(*r.error().location.offset, 32u);
}

TEST(IntakeGlb, JsonThatIsNotAnObject) {
  expect_error(inspect(make_glb(triangle_spec("[1,2]"))), "GLTF_NOT_OBJECT", std::nullopt, "");
}

TEST(IntakeGlb, AssetAndVersion) {
  expect_error(inspect(make_glb(triangle_spec(R"({"meshes":[]})"))), "GLTF_ASSET", std::nullopt,
               "/asset");
  expect_error(inspect(make_glb(triangle_spec(R"({"asset":{"version":"1.0"}})"))), "GLTF_VERSION",
               std::nullopt, "/asset/version");
}

TEST(IntakeGlb, AccessorIndexOutOfRange) {
  std::string j = kTriangle;
  j.replace(j.find(R"("POSITION":0)"), 12, R"("POSITION":7)");
  expect_error(inspect(make_glb(triangle_spec(j))), "GLTF_INDEX", std::nullopt,
               "/meshes/0/primitives/0/attributes/POSITION");
}

TEST(IntakeGlb, BufferLongerThanBinChunk) {
  auto s = triangle_spec();
  s.bin.assign(32, 0);  // the JSON says 36
  expect_error(inspect(make_glb(s)), "GLTF_LENGTH", std::nullopt, "/buffers/0/byteLength");
}

TEST(IntakeGlb, BufferWithoutBinChunk) {
  auto s = triangle_spec();
  s.with_bin = false;
  expect_error(inspect(make_glb(s)), "GLB_BIN_MISSING", std::nullopt, "/buffers/0");
}

TEST(IntakeGlb, AccessorPastItsBufferView) {
  std::string j = kTriangle;
  j.replace(j.find(R"("count":3)"), 9, R"("count":4)");
  expect_error(inspect(make_glb(triangle_spec(j))), "GLTF_LENGTH", std::nullopt, "/accessors/0");
}

TEST(IntakeGlb, SkinJointOutOfRange) {
  std::string j = kTriangle;
  j.insert(j.size() - 1, R"(,"skins":[{"joints":[0,3]}])");
  expect_error(inspect(make_glb(triangle_spec(j))), "GLTF_INDEX", std::nullopt,
               "/skins/0/joints/1");
}

TEST(IntakeGlb, TriangleStripAndSkin) {
  // 5 indices as a strip (mode 5) = 3 triangles; one skin over node 0.
  std::string j =
      R"({"asset":{"version":"2.0"},"buffers":[{"byteLength":48}],)"
      R"("bufferViews":[{"buffer":0,"byteLength":36},{"buffer":0,"byteOffset":36,"byteLength":10}],)"
      R"("accessors":[{"bufferView":0,"componentType":5126,"count":3,"type":"VEC3"},)"
      R"({"bufferView":1,"componentType":5123,"count":5,"type":"SCALAR"}],)"
      R"("meshes":[{"primitives":[{"attributes":{"POSITION":0},"indices":1,"mode":5,)"
      R"("targets":[{"POSITION":0},{"POSITION":0}]}]}],)"
      R"("nodes":[{"mesh":0,"skin":0},{}],"skins":[{"joints":[1,1]}]})";
  GlbSpec s;
  s.json = j;
  s.bin.assign(48, 0);
  auto r = inspect(make_glb(s));
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_EQ(r->triangles, 3u);
  EXPECT_EQ(r->morph_targets, 2u);
  EXPECT_TRUE(r->skinned);
  EXPECT_EQ(r->joints, 1u);  // distinct nodes
}

// --- VRM detection ----------------------------------------------------------

std::string vrm0_json(const std::string& bones) {
  return R"({"asset":{"version":"2.0"},"extensionsUsed":["VRM"],"nodes":[{},{}],)"
         R"("extensions":{"VRM":{"specVersion":"0.0","exporterVersion":"test-1",)"
         R"("meta":{"title":"T","author":"A","version":"3"},"humanoid":{"humanBones":)" +
         bones + "}}}}";
}

TEST(IntakeVrm, Vrm0MissingBonesInSpecOrder) {
  GlbSpec s;
  s.json = vrm0_json(R"([{"bone":"hips","node":0},{"bone":"head","node":1}])");
  s.with_bin = false;
  auto r = inspect(make_glb(s));
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  ASSERT_TRUE(r->vrm.has_value());
  EXPECT_EQ(r->vrm->version, "0.x");
  EXPECT_EQ(r->vrm->exporter_version, "test-1");
  EXPECT_EQ(r->vrm->title, "T");
  EXPECT_EQ(r->vrm->author, "A");
  EXPECT_EQ(r->vrm->model_version, "3");
  EXPECT_EQ(r->vrm->humanoid_bones, 2u);
  // VRM 0.x requires 17 bones (chest and neck included); 2 are present.
  ASSERT_EQ(r->vrm->missing_bones.size(), 15u);
  EXPECT_EQ(r->vrm->missing_bones.front(), "leftUpperLeg");
  EXPECT_NE(std::find(r->vrm->missing_bones.begin(), r->vrm->missing_bones.end(), "chest"),
            r->vrm->missing_bones.end());
  EXPECT_TRUE(has_warning(*r, "VRM_REQUIRED_BONES_MISSING"));
}

TEST(IntakeVrm, Vrm0BoneNodeOutOfRange) {
  GlbSpec s;
  s.json = vrm0_json(R"([{"bone":"hips","node":5}])");
  s.with_bin = false;
  expect_error(inspect(make_glb(s)), "GLTF_INDEX", std::nullopt,
               "/extensions/VRM/humanoid/humanBones/0/node");
}

TEST(IntakeVrm, Vrm1ObjectBonesAndAuthors) {
  GlbSpec s;
  s.json =
      R"({"asset":{"version":"2.0"},"nodes":[{}],"extensions":{"VRMC_vrm":{"specVersion":"1.0",)"
      R"("meta":{"name":"N","authors":["a","b"]},"humanoid":{"humanBones":{"hips":{"node":0},)"
      R"("chest":{"node":0}}}}}})";
  s.with_bin = false;
  auto r = inspect(make_glb(s), "x.vrm");
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_EQ(r->format, ModelFormat::kVrm);
  EXPECT_EQ(r->vrm->version, "1.0");
  EXPECT_EQ(r->vrm->author, "a, b");
  EXPECT_EQ(r->vrm->humanoid_bones, 2u);
  // VRM 1.0 requires 15 bones and chest is not one of them: 14 missing.
  EXPECT_EQ(r->vrm->missing_bones.size(), 14u);
  EXPECT_TRUE(has_warning(*r, "VRM_NOT_IN_EXTENSIONS_USED"));
  EXPECT_FALSE(has_warning(*r, "VRM_EXTENSION_MISSING"));
}

TEST(IntakeVrm, Vrm1BonesMustBeAnObject) {
  GlbSpec s;
  s.json =
      R"({"asset":{"version":"2.0"},"extensions":{"VRMC_vrm":{"humanoid":{"humanBones":[]}}}})";
  s.with_bin = false;
  expect_error(inspect(make_glb(s)), "VRM_TYPE", std::nullopt,
               "/extensions/VRMC_vrm/humanoid/humanBones");
}

TEST(IntakeVrm, RequiredBoneLists) {
  EXPECT_EQ(required_humanoid_bones("0.x").size(), 17u);
  EXPECT_EQ(required_humanoid_bones("1.0").size(), 15u);
}

// --- glTF JSON and unknown input ----------------------------------------

TEST(IntakeText, GltfJsonOnItsOwn) {
  Buf b;
  put_text(b, "  {\"asset\":{\"version\":\"2.0\"},\"meshes\":[]}\n");
  auto r = inspect(b, "scene.gltf");
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_EQ(r->container, ModelContainer::kGltfJson);
  EXPECT_TRUE(r->warnings.empty());
}

TEST(IntakeText, UnknownBytes) {
  Buf b;
  put_text(b, "hello, this is not a model");
  expect_error(inspect(b), "MODEL_FORMAT_UNKNOWN", 0);
  expect_error(inspect(Buf{}), "MODEL_FORMAT_UNKNOWN", 0);
}

TEST(IntakeText, FbxBinaryHeaderOnly) {
  Buf b;
  put_text(b, std::string_view("Kaydara FBX Binary  \0\x1A\0", 23));
  put_u32(b, 7400);
  IntakeOptions o;
  o.use_assimp = false;
  auto r = inspect_model(core::Bytes(b.data(), b.size()), o);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_EQ(r->format, ModelFormat::kFbx);
  EXPECT_EQ(r->container, ModelContainer::kFbxBinary);
  EXPECT_EQ(r->fbx_version, 7400u);
  // With Assimp the same 27 bytes are not a readable scene.
  auto full = inspect(b);
  ASSERT_FALSE(full.ok());
  EXPECT_EQ(full.error().code, "FBX_IMPORT");
  b.resize(25);
  expect_error(inspect(b), "FBX_HEADER", 25);
}

TEST(IntakeText, FbxAsciiHeaderOnly) {
  Buf b;
  put_text(b, "; FBX 7.3.0 project file\n; ----\n\nFBXHeaderExtension:  {\n}\n");
  IntakeOptions o;
  o.use_assimp = false;
  auto r = inspect_model(core::Bytes(b.data(), b.size()), o);
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_EQ(r->container, ModelContainer::kFbxAscii);
  EXPECT_EQ(r->fbx_version, 7300u);
}

// --- glTF in a zip --------------------------------------------------------

class IntakeZip : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = std::filesystem::temp_directory_path() /
            ("charkit_intake_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
             "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".zip");
    std::filesystem::remove(path_);
  }
  void TearDown() override { std::filesystem::remove(path_); }

  Buf make_zip(const std::vector<std::pair<std::string, std::string>>& files) {
    int err = 0;
    zip_t* z = zip_open(path_.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err);
    EXPECT_NE(z, nullptr);
    if (!z) return {};
    for (const auto& [name, data] : files) {
      zip_source_t* src = zip_source_buffer(z, data.data(), data.size(), 0);
      EXPECT_GE(zip_file_add(z, name.c_str(), src, ZIP_FL_ENC_UTF_8), 0);
    }
    EXPECT_EQ(zip_close(z), 0);
    std::ifstream in(path_, std::ios::binary);
    return Buf((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }

  static std::string gltf(const std::string& buffer_uri,
                          const std::string& image_uri = "tex/skin.png") {
    return R"({"asset":{"version":"2.0"},"buffers":[{"byteLength":36,"uri":")" + buffer_uri +
           R"("}],"bufferViews":[{"buffer":0,"byteLength":36}],)"
           R"("accessors":[{"bufferView":0,"componentType":5126,"count":3,"type":"VEC3"}],)"
           R"("meshes":[{"primitives":[{"attributes":{"POSITION":0}}]}],"nodes":[{"mesh":0}],)"
           R"("images":[{"uri":")" +
           image_uri + R"("}],"textures":[{"source":0}]})";
  }
  std::filesystem::path path_;
};

TEST_F(IntakeZip, ResolvesRelativeUris) {
  auto b = make_zip({{"model/scene.gltf", gltf("buf%20a.bin")},
                     {"model/buf a.bin", std::string(36, '\0')},
                     {"model/tex/skin.png", "png"}});
  auto r = inspect(b, "model.zip");
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_EQ(r->format, ModelFormat::kGltf);
  EXPECT_EQ(r->container, ModelContainer::kZip);
  EXPECT_EQ(r->zip_gltf_entry, "model/scene.gltf");
  EXPECT_EQ(r->vertices, 3u);
  EXPECT_EQ(r->textures, 1u);
  EXPECT_EQ(r->images, 1u);
  EXPECT_TRUE(r->warnings.empty());
}

TEST_F(IntakeZip, RejectsParentAndAbsolutePaths) {
  auto up = inspect(
      make_zip({{"model/scene.gltf", gltf("../buf.bin")}, {"buf.bin", std::string(36, '\0')}}));
  expect_error(up, "GLTF_URI_UNSAFE", std::nullopt, "/buffers/0/uri");
  EXPECT_EQ(up.error().location.member, "model/scene.gltf");
  auto abs = inspect(make_zip({{"scene.gltf", gltf("/etc/passwd")}}));
  expect_error(abs, "GLTF_URI_UNSAFE", std::nullopt, "/buffers/0/uri");
  auto scheme = inspect(make_zip({{"scene.gltf", gltf("file:///etc/passwd")}}));
  expect_error(scheme, "GLTF_URI_UNSAFE", std::nullopt, "/buffers/0/uri");
}

TEST_F(IntakeZip, MissingAndShortBuffer) {
  expect_error(inspect(make_zip({{"scene.gltf", gltf("buf.bin")}})), "GLTF_URI_MISSING",
               std::nullopt, "/buffers/0/uri");
  expect_error(
      inspect(make_zip({{"scene.gltf", gltf("buf.bin")}, {"buf.bin", std::string(20, '\0')}})),
      "GLTF_LENGTH", std::nullopt, "/buffers/0/byteLength");
}

TEST_F(IntakeZip, MissingImageIsAWarning) {
  auto r = inspect(make_zip({{"scene.gltf", gltf("buf.bin")}, {"buf.bin", std::string(36, '\0')}}));
  ASSERT_TRUE(r.ok()) << r.error().to_string();
  EXPECT_TRUE(has_warning(*r, "IMAGE_MISSING"));
}

TEST_F(IntakeZip, NoneOrSeveralGltf) {
  auto none = inspect(make_zip({{"readme.txt", "hi"}}));
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().code, "ZIP_NO_GLTF");
  auto two = inspect(make_zip({{"a.gltf", gltf("b.bin")}, {"b/c.GLTF", gltf("b.bin")}}));
  ASSERT_FALSE(two.ok());
  EXPECT_EQ(two.error().code, "ZIP_MANY_GLTF");
}

TEST_F(IntakeZip, TooManyEntries) {
  std::vector<std::pair<std::string, std::string>> files;
  for (int i = 0; i < 9; ++i) files.emplace_back("f" + std::to_string(i), "x");
  auto b = make_zip(files);
  IntakeOptions o;
  o.max_zip_entries = 8;
  auto r = inspect_model(core::Bytes(b.data(), b.size()), o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "ZIP_TOO_MANY_ENTRIES");
}

TEST_F(IntakeZip, DamagedArchive) {
  Buf b;
  put_text(b, "PK\x03\x04 not really a zip");
  auto r = inspect(b);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "ZIP_OPEN");
}

// --- FBX through Assimp's exporter ----------------------------------------

Buf export_fbx(const char* format_id) {
  Assimp::Importer importer;
  const aiScene* s = importer.ReadFile(kModels + "RiggedSimple.glb", 0);
  EXPECT_NE(s, nullptr) << importer.GetErrorString();
  if (!s) return {};
  Assimp::Exporter exporter;
  const aiExportDataBlob* blob = exporter.ExportToBlob(s, format_id);
  EXPECT_NE(blob, nullptr) << exporter.GetErrorString();
  if (!blob) return {};
  const auto* p = static_cast<const std::uint8_t*>(blob->data);
  return Buf(p, p + blob->size);
}

TEST(IntakeFbx, BinaryAndAsciiExportOfRiggedSimple) {
  const Buf bin = export_fbx("fbx");
  const Buf ascii = export_fbx("fbxa");
  ASSERT_GE(bin.size(), 27u);
  ASSERT_FALSE(ascii.empty());
  // FBX binary: UInt32 version at byte 23, after the 21-byte magic and 1A 00.
  const std::uint32_t version = std::uint32_t{bin[23]} | std::uint32_t{bin[24]} << 8 |
                                std::uint32_t{bin[25]} << 16 | std::uint32_t{bin[26]} << 24;
  EXPECT_GE(version, 7000u);
  IntakeOptions header_only;
  header_only.use_assimp = false;
  auto hb = inspect_model(core::Bytes(bin.data(), bin.size()), header_only);
  ASSERT_TRUE(hb.ok()) << hb.error().to_string();
  EXPECT_EQ(hb->format, ModelFormat::kFbx);
  EXPECT_EQ(hb->container, ModelContainer::kFbxBinary);
  EXPECT_EQ(hb->fbx_version, version);

  // RiggedSimple: 1 mesh of 188 triangles skinned to 2 joints (its glTF JSON).
  auto ra = inspect(ascii, "x.fbx");
  ASSERT_TRUE(ra.ok()) << ra.error().to_string();
  EXPECT_EQ(ra->format, ModelFormat::kFbx);
  EXPECT_EQ(ra->container, ModelContainer::kFbxAscii);
  EXPECT_EQ(ra->fbx_version, version);  // same exporter, both forms
  EXPECT_EQ(ra->meshes, 1u);
  EXPECT_EQ(ra->triangles, 188u);
  EXPECT_TRUE(ra->skinned);
  EXPECT_EQ(ra->joints, 2u);
  EXPECT_GE(ra->vertices, 96u);
  EXPECT_TRUE(ra->warnings.empty());

  // Debian's Assimp 5.2 writes binary FBX that its own reader rejects
  // (assimp/assimp#4686: the end-of-node padding); either way the answer is
  // a report or FBX_IMPORT, never a crash.
  auto rb = inspect(bin);
  if (rb.ok()) {
    EXPECT_EQ(rb->meshes, 1u);
    EXPECT_EQ(rb->triangles, 188u);
    EXPECT_EQ(rb->joints, 2u);
  } else {
    EXPECT_EQ(rb.error().code, "FBX_IMPORT");
  }
}

TEST(IntakeFbx, CorruptFbxIsAnErrorNotACrash) {
  Buf bin = export_fbx("fbx");
  ASSERT_GT(bin.size(), 200u);
  bin.resize(bin.size() / 2);
  auto r = inspect(bin);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "FBX_IMPORT");
}

}  // namespace
}  // namespace charkit::scene
