// §7 meshes, draws and materials; 1.4 static meshes and resource rules.
// Each test breaks one rule of the valid baseline, or shows a valid use.
#include <gtest/gtest.h>

#include "charkit/core/json.h"
#include "mesh_test_util.h"

using namespace charkit;
using rules_test::attrs;
using rules_test::mesh0;
using rules_test::with_skin12;
using rules_test::with_skin32;
using testkit::ByteVec;
using testkit::Json;
using testkit::TestPackage;

namespace {

Json& draw0(TestPackage& p) {
  return p.manifest["meshes"][0]["draws"][0];
}
}  // namespace

TEST(MeshRules, BaselineValidInEveryVersionAndContainer) {
  for (int m = 0; m <= 5; ++m) {
    TestPackage p = testkit::make_valid_package(m);
    for (auto form :
         {rules_test::Form::kBinary, rules_test::Form::kBinaryZstd, rules_test::Form::kZip}) {
      auto r = rules_test::validate(p, form);
      EXPECT_TRUE(r.valid()) << "minor " << m << "\n" << r.report.to_text("pkg");
    }
  }
}

TEST(MeshRules, VertexCount) {
  TestPackage p = testkit::make_valid_package(1);
  mesh0(p)["vertex_count"] = 0;
  EXPECT_REJECTS(p, "BEM_FIELD_RANGE");
  mesh0(p)["vertex_count"] = 1048577;
  EXPECT_REJECTS(p, "BEM_FIELD_RANGE");
  mesh0(p)["vertex_count"] = "3";
  EXPECT_REJECTS(p, "BEM_FIELD_TYPE");
  mesh0(p).erase("vertex_count");
  EXPECT_REJECTS(p, "BEM_FIELD_MISSING");
}

TEST(MeshRules, VertexCountMustMatchStreams) {
  TestPackage p = testkit::make_valid_package(1);
  mesh0(p)["vertex_count"] = 4;  // streams hold 3 vertices
  EXPECT_REJECTS(p, "BEM_PAYLOAD_SIZE");
}

TEST(MeshRules, IndexSize) {
  TestPackage p = testkit::make_valid_package(2);
  mesh0(p)["index_size"] = 3;
  EXPECT_REJECTS(p, "BEM_FIELD_RANGE");
  mesh0(p)["index_size"] = 1;
  EXPECT_REJECTS(p, "BEM_FIELD_RANGE");
  // 4-byte indices: payload count × 4.
  mesh0(p)["index_size"] = 4;
  EXPECT_REJECTS(p, "BEM_PAYLOAD_SIZE");
  p.payloads[3] = testkit::u32_bytes({0, 1, 2});
  EXPECT_ACCEPTS(p);
}

TEST(MeshRules, IndexSize4In10) {
  TestPackage p = testkit::make_valid_package(0);
  mesh0(p)["index_size"] = 4;
  p.payloads[3] = testkit::u32_bytes({0, 1, 2});
  EXPECT_ACCEPTS(p);
}

TEST(MeshRules, TooManyMeshes) {
  TestPackage p = testkit::make_valid_package(2);
  Json m = mesh0(p);
  for (int i = 0; i < 4096; ++i) p.manifest["meshes"].push_back(m);
  EXPECT_REJECTS(p, "BEM_ARRAY_SIZE");
}

TEST(MeshRules, StreamsExactlyThree) {
  TestPackage p = testkit::make_valid_package(1);
  mesh0(p)["streams"].erase(2);
  EXPECT_REJECTS(p, "BEM_ARRAY_SIZE");
  p = testkit::make_valid_package(1);
  mesh0(p)["streams"].push_back(Json{{"stride", 4}, {"payload", 2}});
  EXPECT_REJECTS(p, "BEM_ARRAY_SIZE");
  p = testkit::make_valid_package(1);
  mesh0(p)["streams"][1] = 8;
  EXPECT_REJECTS(p, "BEM_FIELD_TYPE");
}

TEST(MeshRules, StreamStride) {
  TestPackage p = testkit::make_valid_package(1);
  mesh0(p)["streams"][0]["stride"] = 0;
  EXPECT_REJECTS(p, "BEM_FIELD_RANGE");
  mesh0(p)["streams"][0]["stride"] = 65;
  EXPECT_REJECTS(p, "BEM_FIELD_RANGE");
  mesh0(p)["streams"][0].erase("payload");
  EXPECT_REJECTS(p, "BEM_FIELD_MISSING");
}

TEST(MeshRules, StreamPayloadMissing) {
  TestPackage p = testkit::make_valid_package(3);
  mesh0(p)["streams"][1]["payload"] = 40;
  EXPECT_REJECTS(p, "BEM_PAYLOAD_ID");
}

TEST(MeshRules, WiderStreamsValid) {
  // Stream 0: position + normal (24 B); stream 1: uv0 (Float16×2) + colour (UNorm8×4).
  for (int minor : {0, 1, 5}) {
    TestPackage p = testkit::make_valid_package(minor);
    mesh0(p)["streams"][0]["stride"] = 24;
    mesh0(p)["streams"][1]["stride"] = 8;
    attrs(p) = Json::array({Json::array({0, 0, 3, 0, 0}), Json::array({1, 0, 3, 0, 12}),
                            Json::array({4, 1, 2, 1, 0}), Json::array({3, 2, 4, 1, 4}),
                            Json::array({13, 6, 4, 2, 0})});
    p.payloads[0] = ByteVec(72, 0);
    p.payloads[1] = ByteVec(24, 0);
    EXPECT_ACCEPTS(p);
  }
}

TEST(MeshRules, AttributeShape) {
  TestPackage p = testkit::make_valid_package(1);
  attrs(p)[1] = Json::array({4, 0, 2, 1});
  EXPECT_REJECTS(p, "BEM_ATTRIBUTE_SHAPE");
  attrs(p)[1] = Json{{"semantic", 4}};
  EXPECT_REJECTS(p, "BEM_ATTRIBUTE_SHAPE");
  attrs(p)[1] = Json::array({4, 0, 2, 1, -1});
  EXPECT_REJECTS(p, "BEM_FIELD_TYPE");
}

TEST(MeshRules, AttributeCount) {
  TestPackage p = testkit::make_valid_package(1);
  for (int i = 0; i < 14; ++i) attrs(p).push_back(Json::array({1, 0, 3, 0, 12}));
  EXPECT_REJECTS(p, "BEM_ARRAY_SIZE");  // 17 attributes
}

TEST(MeshRules, AttributeSemantic) {
  TestPackage p = testkit::make_valid_package(1);
  attrs(p)[1][0] = 14;
  EXPECT_REJECTS(p, "BEM_ATTRIBUTE_SEMANTIC");
  attrs(p)[1][0] = 0;
  EXPECT_REJECTS(p, "BEM_ATTRIBUTE_DUPLICATE");
}

TEST(MeshRules, AttributeFormatAndDimension) {
  TestPackage p = testkit::make_valid_package(1);
  attrs(p)[1][1] = 12;
  EXPECT_REJECTS(p, "BEM_ATTRIBUTE_FORMAT");
  p = testkit::make_valid_package(1);
  attrs(p)[1][2] = 0;
  EXPECT_REJECTS(p, "BEM_ATTRIBUTE_DIMENSION");
  attrs(p)[1][2] = 5;
  EXPECT_REJECTS(p, "BEM_ATTRIBUTE_DIMENSION");
}

TEST(MeshRules, AttributeStream) {
  TestPackage p = testkit::make_valid_package(1);
  attrs(p)[1][3] = 3;
  EXPECT_REJECTS(p, "BEM_ATTRIBUTE_STREAM");
}

TEST(MeshRules, AttributeOffsetPacked) {
  TestPackage p = testkit::make_valid_package(1);
  mesh0(p)["streams"][0]["stride"] = 24;
  p.payloads[0] = ByteVec(72, 0);
  attrs(p).insert(attrs(p).begin() + 1, Json::array({1, 0, 3, 0, 16}));  // should be 12
  EXPECT_REJECTS(p, "BEM_ATTRIBUTE_OFFSET");
}

TEST(MeshRules, AttributeStrideSum) {
  TestPackage p = testkit::make_valid_package(1);
  attrs(p)[0][2] = 2;  // position Float32×2 = 8 bytes, stride 12
  EXPECT_REJECTS(p, "BEM_ATTRIBUTE_STRIDE");
  p = testkit::make_valid_package(1);
  attrs(p).erase(1);  // stream 1 has no attributes but stride 8
  EXPECT_REJECTS(p, "BEM_ATTRIBUTE_STRIDE");
}

TEST(MeshRules, FormatElementSizes) {
  // format -> element bytes 4,2,1,1,2,2,1,1,2,2,4,4 (§7): uv with each format,
  // dimension 4, stream 1 stride = 4 × size.
  const int sizes[12] = {4, 2, 1, 1, 2, 2, 1, 1, 2, 2, 4, 4};
  for (int f = 0; f < 12; ++f) {
    TestPackage p = testkit::make_valid_package(2);
    attrs(p)[1] = Json::array({4, f, 4, 1, 0});
    mesh0(p)["streams"][1]["stride"] = 4 * sizes[f];
    p.payloads[1] = ByteVec(static_cast<std::size_t>(12 * sizes[f]), 0);
    EXPECT_ACCEPTS(p);
    mesh0(p)["streams"][1]["stride"] = 4 * sizes[f] + 1;
    p.payloads[1] = ByteVec(static_cast<std::size_t>(3 * (4 * sizes[f] + 1)), 0);
    EXPECT_REJECTS(p, "BEM_ATTRIBUTE_STRIDE");
  }
}

// ---- skin stream (§7) ----------------------------------------------------

TEST(MeshRules, Skin12Valid) {
  for (int minor : {0, 1, 2, 5}) EXPECT_ACCEPTS(with_skin12(minor));
}

TEST(MeshRules, Skin32ValidFrom12) {
  for (int minor : {2, 3, 4, 5}) EXPECT_ACCEPTS(with_skin32(minor));
  EXPECT_ACCEPTS(with_skin32(5, {0.5f, 0.25f, 0.25f, 0}));
}

TEST(MeshRules, Skin32Needs12) {
  for (int minor : {0, 1}) EXPECT_REJECTS(with_skin32(minor), "BEM_VERSION_TOO_LOW");
}

TEST(MeshRules, SkinLayoutWrongDeclaration) {
  TestPackage p = with_skin12(1);
  attrs(p)[2] = Json::array({12, 0, 2, 2, 0});  // Float32×2 weights: 8 bytes, not a BEM layout
  EXPECT_REJECTS(p, "BEM_SKIN_LAYOUT");
  p = testkit::make_valid_package(1);
  attrs(p)[2] = Json::array({13, 2, 4, 2, 0});  // UNorm8 indices instead of UInt8
  EXPECT_REJECTS(p, "BEM_SKIN_LAYOUT");
}

TEST(MeshRules, SkinLayoutWrongOrder) {
  TestPackage p = with_skin12(1);
  attrs(p)[2] = Json::array({13, 6, 4, 2, 0});
  attrs(p)[3] = Json::array({12, 4, 4, 2, 4});
  EXPECT_REJECTS(p, "BEM_SKIN_LAYOUT");
}

TEST(MeshRules, SkinStrideNotInTable) {
  TestPackage p = testkit::make_valid_package(1);
  mesh0(p)["streams"][2]["stride"] = 8;
  attrs(p)[2] = Json::array({13, 6, 4, 2, 0});
  attrs(p).push_back(Json::array({12, 4, 2, 2, 4}));
  p.payloads[2] = ByteVec(24, 0);
  EXPECT_REJECTS(p, "BEM_SKIN_LAYOUT");
}

TEST(MeshRules, SkinAttributeOutsideStream2) {
  TestPackage p = testkit::make_valid_package(1);
  mesh0(p)["streams"][1]["stride"] = 12;
  attrs(p).insert(attrs(p).begin() + 2, Json::array({12, 2, 4, 1, 8}));
  p.payloads[1] = ByteVec(36, 0);
  EXPECT_REJECTS(p, "BEM_SKIN_LAYOUT");
}

TEST(MeshRules, SkinStreamMissingDeclaration) {
  TestPackage p = testkit::make_valid_package(1);
  attrs(p).erase(2);
  EXPECT_REJECTS(p, "BEM_SKIN_LAYOUT");
}

TEST(MeshRules, BlendIndicesLastOfAllAttributes) {  // Q23
  TestPackage p = testkit::make_valid_package(2);
  Json uv = attrs(p)[1];
  attrs(p).erase(1);
  attrs(p).push_back(uv);  // stream 2 declared before stream 1
  EXPECT_REJECTS(p, "BEM_SKIN_BLEND_INDICES_LAST");
}

// ---- bone palette --------------------------------------------------------

TEST(MeshRules, BonesCount) {
  TestPackage p = testkit::make_valid_package(1);
  mesh0(p)["bones"] = Json::array();
  EXPECT_REJECTS(p, "BEM_ARRAY_SIZE");
  Json b = Json{{"component", 0}, {"index", 0}, {"name", "Bip001_Pelvis"}};
  mesh0(p)["bones"] = Json::array();
  for (int i = 0; i < 257; ++i) mesh0(p)["bones"].push_back(b);
  EXPECT_REJECTS(p, "BEM_ARRAY_SIZE");
  mesh0(p)["bones"].erase(256);
  EXPECT_ACCEPTS(p);
  mesh0(p).erase("bones");
  EXPECT_REJECTS(p, "BEM_FIELD_MISSING");
}

TEST(MeshRules, BoneDonorComponent) {
  TestPackage p = testkit::make_valid_package(1);
  mesh0(p)["bones"][0]["component"] = 2;
  EXPECT_REJECTS(p, "BEM_BONE_COMPONENT");
}

TEST(MeshRules, BoneIndex) {
  TestPackage p = testkit::make_valid_package(1);
  mesh0(p)["bones"][0]["index"] = 2;  // component 0 has 2 bone names
  EXPECT_REJECTS(p, "BEM_BONE_INDEX");
}

TEST(MeshRules, BoneName) {
  TestPackage p = testkit::make_valid_package(0);
  mesh0(p)["bones"][0]["name"] = "Bip001_Spine";
  EXPECT_REJECTS(p, "BEM_BONE_NAME");
  mesh0(p)["bones"][0]["index"] = 1;
  EXPECT_ACCEPTS(p);
}

TEST(MeshRules, BonesFromAnotherComponent) {
  TestPackage p = testkit::make_valid_package(2);
  mesh0(p)["bones"].push_back(Json{{"component", 1}, {"index", 0}, {"name", "Bip001_Head"}});
  EXPECT_ACCEPTS(p);
}

// ---- draws: 1.0 mesh-level index stream -----------------------------------

TEST(DrawRules, V10MeshIndicesRequired) {
  TestPackage p = testkit::make_valid_package(0);
  mesh0(p).erase("indices");
  EXPECT_REJECTS(p, "BEM_FIELD_MISSING");
  p = testkit::make_valid_package(0);
  mesh0(p).erase("index_count");
  EXPECT_REJECTS(p, "BEM_FIELD_MISSING");
}

TEST(DrawRules, V10IndexCountMultipleOf3) {
  TestPackage p = testkit::make_valid_package(0);
  mesh0(p)["index_count"] = 4;
  p.payloads[3] = testkit::u16_bytes({0, 1, 2, 0});
  EXPECT_REJECTS(p, "BEM_DRAW_COUNT");
}

TEST(DrawRules, V10IndexPayloadSize) {
  TestPackage p = testkit::make_valid_package(0);
  p.payloads[3] = testkit::u16_bytes({0, 1, 2, 0, 1, 2});
  EXPECT_REJECTS(p, "BEM_PAYLOAD_SIZE");
}

TEST(DrawRules, V10TwoDrawsCoverStream) {
  TestPackage p = testkit::make_valid_package(0);
  p.payloads[3] = testkit::u16_bytes({0, 1, 2, 2, 1, 0});
  mesh0(p)["index_count"] = 6;
  Json d = draw0(p);
  d["start"] = 3;
  mesh0(p)["draws"].push_back(d);
  EXPECT_ACCEPTS(p);
  mesh0(p)["draws"][1]["start"] = 6;  // gap 3..6
  EXPECT_REJECTS(p, "BEM_DRAW_COVERAGE");
  mesh0(p)["draws"][1]["start"] = 0;  // overlap
  EXPECT_REJECTS(p, "BEM_DRAW_COVERAGE");
}

TEST(DrawRules, V10DrawsDoNotCoverAll) {
  TestPackage p = testkit::make_valid_package(0);
  p.payloads[3] = testkit::u16_bytes({0, 1, 2, 2, 1, 0});
  mesh0(p)["index_count"] = 6;
  EXPECT_REJECTS(p, "BEM_DRAW_COVERAGE");
}

TEST(DrawRules, V10FirstDrawStartsAtZero) {
  TestPackage p = testkit::make_valid_package(0);
  draw0(p)["start"] = 3;
  EXPECT_REJECTS(p, "BEM_DRAW_COVERAGE");
}

TEST(DrawRules, V10DrawCount) {
  TestPackage p = testkit::make_valid_package(0);
  draw0(p)["count"] = 0;
  EXPECT_REJECTS(p, "BEM_DRAW_COUNT");
  draw0(p)["count"] = 2;
  EXPECT_REJECTS(p, "BEM_DRAW_COUNT");
  draw0(p).erase("count");
  EXPECT_REJECTS(p, "BEM_FIELD_MISSING");
}

TEST(DrawRules, V10DrawConditionNeeds11) {
  TestPackage p = testkit::make_valid_package(0);
  draw0(p)["when"] = true;
  EXPECT_REJECTS(p, "BEM_VERSION_TOO_LOW");
}

TEST(DrawRules, V10PerDrawIndicesNeed11) {
  TestPackage p = testkit::make_valid_package(0);
  draw0(p)["indices"] = 3;
  EXPECT_REJECTS(p, "BEM_VERSION_TOO_LOW");
}

// ---- draws: 1.1+ per-draw index payloads ------------------------------------

TEST(DrawRules, MeshLevelIndicesOnlyIn10) {
  for (int minor : {1, 3, 5}) {
    TestPackage p = testkit::make_valid_package(minor);
    mesh0(p)["indices"] = 3;
    mesh0(p)["index_count"] = 3;
    EXPECT_REJECTS(p, "BEM_VERSION_TOO_HIGH");
  }
}

TEST(DrawRules, DrawIndicesRequired) {
  TestPackage p = testkit::make_valid_package(1);
  draw0(p).erase("indices");
  EXPECT_REJECTS(p, "BEM_FIELD_MISSING");
}

TEST(DrawRules, DrawIndexPayload) {
  TestPackage p = testkit::make_valid_package(2);
  draw0(p)["count"] = 6;  // payload holds 3 indices
  EXPECT_REJECTS(p, "BEM_PAYLOAD_SIZE");
  p = testkit::make_valid_package(2);
  draw0(p)["indices"] = 99;
  EXPECT_REJECTS(p, "BEM_PAYLOAD_ID");
  draw0(p)["count"] = 4;
  EXPECT_REJECTS(p, "BEM_DRAW_COUNT");
}

TEST(DrawRules, DrawsShareIndexPayload) {
  TestPackage p = testkit::make_valid_package(1);
  Json d = draw0(p);
  d["when"] = Json{{"eq", Json::array({"outfit", "b"})}};
  mesh0(p)["draws"].push_back(d);
  draw0(p)["when"] = Json{{"eq", Json::array({"outfit", "a"})}};
  EXPECT_ACCEPTS(p);
}

TEST(DrawRules, MissingWhenMeansAlways) {  // Q10
  TestPackage p = testkit::make_valid_package(1);
  draw0(p).erase("when");
  EXPECT_ACCEPTS(p);
}

TEST(DrawRules, DrawsNonEmpty) {
  TestPackage p = testkit::make_valid_package(1);
  mesh0(p)["draws"] = Json::array();
  EXPECT_REJECTS(p, "BEM_ARRAY_SIZE");
  mesh0(p).erase("draws");
  EXPECT_REJECTS(p, "BEM_FIELD_MISSING");
}

TEST(DrawRules, DrawCandidateLimits) {
  // §11: 512 draw candidates per mesh in 1.1, 4096 from 1.2.
  TestPackage p = testkit::make_valid_package(1);
  Json d = draw0(p);
  for (int i = 0; i < 512; ++i) mesh0(p)["draws"].push_back(d);  // 513
  EXPECT_REJECTS(p, "BEM_VERSION_TOO_LOW");
  p.minor = 2;
  {
    auto r = rules_test::validate(p);
    EXPECT_FALSE(r.report.has_code("BEM_VERSION_TOO_LOW")) << r.report.to_text("pkg");
    EXPECT_FALSE(r.report.has_code("BEM_ARRAY_SIZE")) << r.report.to_text("pkg");
  }
  for (int i = 0; i < 4096 - 513 + 1; ++i) mesh0(p)["draws"].push_back(d);  // 4097
  EXPECT_REJECTS(p, "BEM_ARRAY_SIZE");
}

// ---- materials -----------------------------------------------------------

TEST(DrawRules, MaterialComponent) {
  TestPackage p = testkit::make_valid_package(1);
  draw0(p)["material_component"] = 2;
  EXPECT_REJECTS(p, "BEM_MATERIAL_COMPONENT");
}

TEST(DrawRules, MaterialSlot) {
  TestPackage p = testkit::make_valid_package(0);
  draw0(p)["material_slot"] = 1;
  EXPECT_REJECTS(p, "BEM_MATERIAL_SLOT");
}

TEST(DrawRules, MaterialName) {
  TestPackage p = testkit::make_valid_package(3);
  draw0(p)["material_name"] = "M_actor_example_body_02";
  EXPECT_REJECTS(p, "BEM_MATERIAL_NAME");
  draw0(p).erase("material_name");
  EXPECT_REJECTS(p, "BEM_FIELD_MISSING");
}

TEST(DrawRules, MaterialFromAnotherComponent) {
  TestPackage p = testkit::make_valid_package(1);
  draw0(p)["material_component"] = 1;
  draw0(p)["material_name"] = "M_actor_example_hair_01";
  EXPECT_ACCEPTS(p);
}

// ---- 1.5 draw material overrides ------------------------------------------

TEST(DrawRules, MaterialOverridesNeed15) {
  for (int minor : {1, 4}) {
    TestPackage p = testkit::make_valid_package(minor);
    p.manifest["required_capabilities"].push_back("material-overrides-v1");
    draw0(p)["material_overrides"] = Json{{"floats", Json{{"_Alpha", 0.5}}}};
    EXPECT_REJECTS(p, "BEM_VERSION_TOO_LOW");
  }
}

TEST(DrawRules, MaterialOverridesValidIn15) {
  TestPackage p = testkit::make_valid_package(5);
  p.manifest["required_capabilities"].push_back("material-overrides-v1");
  draw0(p)["material_overrides"] = Json{{"floats", Json{{"_Alpha", 0.5}}}};
  EXPECT_ACCEPTS(p);
}

// ---- renderer kind and 1.4 static meshes -----------------------------------

TEST(MeshRules, RendererKindOnlyInExplicitForm) {
  for (int minor : {3, 5}) {
    TestPackage p = testkit::make_valid_package(minor);
    mesh0(p)["renderer_kind"] = "skinned";
    EXPECT_REJECTS(p, "BEM_RENDERER_KIND_LEGACY");
  }
}

TEST(MeshRules14, RendererKindRequired) {
  TestPackage p = testkit::make_valid_package_v14();
  mesh0(p).erase("renderer_kind");
  EXPECT_REJECTS(p, "BEM_FIELD_MISSING");
  mesh0(p)["renderer_kind"] = "dynamic";
  EXPECT_REJECTS(p, "BEM_RENDERER_KIND");
}

namespace {
/// 1.4 package where component 0 and mesh 0 are static (one stream: position).
TestPackage static_package() {
  TestPackage p = testkit::make_valid_package_v14();
  p.manifest["required_capabilities"].push_back("static-meshes");
  Json& c0 = p.manifest["target"]["components"][0];
  c0["renderer_kind"] = "static";
  c0["bone_names"] = Json::array();
  Json& m = mesh0(p);
  m["renderer_kind"] = "static";
  m["streams"] = Json::array({Json{{"stride", 12}, {"payload", 0}}});
  m["attributes"] = Json::array({Json::array({0, 0, 3, 0, 0})});
  m["bones"] = Json::array();
  p.payloads[1] = ByteVec(1, 0);  // keep the ids; unused payloads are only warnings
  p.payloads[2] = ByteVec(1, 0);
  return p;
}
}  // namespace

TEST(MeshRules14, StaticMeshValid) {
  TestPackage p = static_package();
  EXPECT_ACCEPTS(p);
  // Two or three streams are fine too.
  mesh0(p)["streams"].push_back(Json{{"stride", 8}, {"payload", 1}});
  mesh0(p)["attributes"].push_back(Json::array({4, 0, 2, 1, 0}));
  p.payloads[1] = ByteVec(24, 0);
  EXPECT_ACCEPTS(p);
  // Bones may be omitted.
  mesh0(p).erase("bones");
  EXPECT_ACCEPTS(p);
}

TEST(MeshRules14, StaticMeshStreams) {
  TestPackage p = static_package();
  mesh0(p)["streams"] = Json::array();
  EXPECT_REJECTS(p, "BEM_ARRAY_SIZE");
  p = static_package();
  mesh0(p)["streams"][0]["stride"] = 0;
  EXPECT_REJECTS(p, "BEM_FIELD_RANGE");
  p = static_package();
  mesh0(p)["attributes"][0][3] = 1;  // only one stream
  EXPECT_REJECTS(p, "BEM_ATTRIBUTE_STREAM");
}

TEST(MeshRules14, StaticMeshNoSkinAttributes) {
  TestPackage p = static_package();
  mesh0(p)["streams"].push_back(Json{{"stride", 8}, {"payload", 1}});
  mesh0(p)["streams"].push_back(Json{{"stride", 4}, {"payload", 2}});
  mesh0(p)["attributes"].push_back(Json::array({4, 0, 2, 1, 0}));
  mesh0(p)["attributes"].push_back(Json::array({13, 6, 4, 2, 0}));
  p.payloads[1] = ByteVec(24, 0);
  p.payloads[2] = ByteVec(12, 0);
  EXPECT_REJECTS(p, "BEM_STATIC_SKIN_ATTRIBUTE");
}

TEST(MeshRules14, StaticMeshEmptyBones) {
  TestPackage p = static_package();
  mesh0(p)["bones"] = Json::array({Json{{"component", 1}, {"index", 0}, {"name", "Bip001_Head"}}});
  EXPECT_REJECTS(p, "BEM_STATIC_BONES");
}

TEST(MeshRules14, StaticMeshNeedsCapability) {
  TestPackage p = static_package();
  auto& caps = p.manifest["required_capabilities"];
  caps.erase(caps.size() - 1);
  EXPECT_REJECTS(p, "BEM_CAPABILITY_MISSING");
}

TEST(MeshRules14, RendererKindMismatch) {
  TestPackage p = static_package();
  mesh0(p)["renderer_kind"] = "skinned";  // replaces static component 0
  mesh0(p)["streams"] = testkit::make_valid_package_v14().manifest["meshes"][0]["streams"];
  mesh0(p)["attributes"] = testkit::make_valid_package_v14().manifest["meshes"][0]["attributes"];
  mesh0(p)["bones"] = Json::array({Json{{"component", 1}, {"index", 0}, {"name", "Bip001_Head"}}});
  p.payloads = testkit::make_valid_package_v14().payloads;
  EXPECT_REJECTS(p, "BEM_RENDERER_KIND_MISMATCH");
}

TEST(MeshRules14, BoneDonorMustBeSkinned) {
  TestPackage p = testkit::make_valid_package_v14();
  Json& c1 = p.manifest["target"]["components"][1];
  c1["renderer_kind"] = "static";
  c1["bone_names"] = Json::array();
  p.manifest["required_capabilities"].push_back("static-meshes");
  // Bone names of a static donor cannot be referenced at all; the donor-kind
  // rule is reported on its own.
  mesh0(p)["bones"][0]["component"] = 1;
  auto r = rules_test::validate(p);
  EXPECT_FALSE(r.valid());
  EXPECT_TRUE(r.report.has_code("BEM_BONE_DONOR_STATIC")) << r.report.to_text("pkg");
}

namespace {
/// 1.4 package with a second resource "ui" holding component 2 (kept).
TestPackage two_resource_package() {
  TestPackage p = testkit::make_valid_package_v14();
  Json& t = p.manifest["target"];
  t["resources"].push_back(Json{{"id", "ui"},
                                {"name", "chr_0013_aglina_uimodel"},
                                {"asset_path", "assets/characters/chr_0013_aglina_uimodel.prefab"},
                                {"platforms", Json::array({"windows-x64", "android-arm64"})},
                                {"lod", 0}});
  t["components"].push_back(Json{{"id", 2},
                                 {"mesh_name", "S_actor_example_body_01_lod0"},
                                 {"original_index_count", 300},
                                 {"bone_names", Json::array({"Bip001_Pelvis", "Bip001_Spine"})},
                                 {"materials", Json::array({"M_actor_example_body_01"})},
                                 {"resource", "ui"},
                                 {"renderer_kind", "skinned"},
                                 {"renderer_path", "Mesh_all/lod0/body"}});
  p.manifest["component_rules"].push_back(Json{
      {"target", 2}, {"candidates", Json::array({Json{{"when", true}, {"operation", "keep"}}})}});
  return p;
}
}  // namespace

TEST(MeshRules14, TwoResourcesValid) {
  EXPECT_ACCEPTS(two_resource_package());
}

TEST(MeshRules14, DonorsInOneResource) {
  TestPackage p = two_resource_package();
  draw0(p)["material_component"] = 2;  // bones from world, material from ui
  EXPECT_REJECTS(p, "BEM_DONOR_RESOURCE");
}

TEST(MeshRules14, ReplacedComponentInDonorResource) {
  TestPackage p = two_resource_package();
  p.manifest["component_rules"][2]["candidates"] = Json::array(
      {Json{{"when", Json{{"eq", Json::array({"outfit", "a"})}}},
            {"operation", "replace"},
            {"mesh", 0}},
       Json{{"when", Json{{"eq", Json::array({"outfit", "b"})}}}, {"operation", "keep"}}});
  EXPECT_REJECTS(p, "BEM_REPLACE_RESOURCE");
}

// ---- untrusted input: wrong types anywhere in meshes/textures ----------------

TEST(MeshRules, WrongTypesNeverCrashAndAreRejected) {
  const std::vector<Json> bad = {nullptr, true, -1, 1.5, "x", Json::object(), 1099511627776ull};
  const std::vector<std::string> common = {"/meshes",
                                           "/meshes/0",
                                           "/meshes/0/vertex_count",
                                           "/meshes/0/index_size",
                                           "/meshes/0/streams",
                                           "/meshes/0/streams/0",
                                           "/meshes/0/streams/2/stride",
                                           "/meshes/0/streams/2/payload",
                                           "/meshes/0/attributes",
                                           "/meshes/0/attributes/0",
                                           "/meshes/0/attributes/2/0",
                                           "/meshes/0/attributes/2/4",
                                           "/meshes/0/bones",
                                           "/meshes/0/bones/0",
                                           "/meshes/0/bones/0/component",
                                           "/meshes/0/bones/0/index",
                                           "/meshes/0/bones/0/name",
                                           "/meshes/0/draws",
                                           "/meshes/0/draws/0",
                                           "/meshes/0/draws/0/count",
                                           "/meshes/0/draws/0/material_component",
                                           "/meshes/0/draws/0/material_slot",
                                           "/meshes/0/draws/0/material_name",
                                           "/meshes/0/draws/0/textures",
                                           "/meshes/0/draws/0/textures/0",
                                           "/textures",
                                           "/textures/0",
                                           "/textures/0/width",
                                           "/textures/0/height",
                                           "/textures/0/mips",
                                           "/textures/0/format",
                                           "/textures/0/srgb",
                                           "/textures/0/original_name",
                                           "/textures/0/payload"};
  for (int minor : {0, 1, 4}) {
    std::vector<std::string> ptrs = common;
    if (minor == 0) {
      for (const char* s :
           {"/meshes/0/indices", "/meshes/0/index_count", "/meshes/0/draws/0/start"})
        ptrs.push_back(s);
    } else {
      ptrs.push_back("/meshes/0/draws/0/indices");
    }
    for (const auto& ptr : ptrs)
      for (const auto& v : bad) {
        TestPackage p =
            minor == 4 ? testkit::make_valid_package_v14() : testkit::make_valid_package(minor);
        // srgb accepts exactly a boolean: true stays valid there.
        if (ptr == "/textures/0/srgb" && v.is_boolean()) continue;
        // Any string is a valid original_name.
        if (ptr == "/textures/0/original_name" && v.is_string()) continue;
        p.manifest[Json::json_pointer(ptr)] = v;
        auto r = rules_test::validate(p);
        EXPECT_FALSE(r.valid()) << "minor " << minor << " " << ptr << " = " << v.dump();
      }
  }
}
