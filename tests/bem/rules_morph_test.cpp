// §10 (BEM 1.3): parameters, mesh deformations and frame payloads. Each
// rule-breaking package starts from a valid package with one slider and one
// channel and breaks exactly one rule.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>

#include <gtest/gtest.h>

#include "charkit/core/json.h"
#include "morph_test_support.h"

using namespace charkit;
using namespace charkit::morphtest;
using testkit::TestPackage;

namespace {

Json& param(TestPackage& p) {
  return p.manifest["parameters"][0];
}
Json& channel(TestPackage& p) {
  return p.manifest["mesh_deformations"][0];
}
Json& frames(TestPackage& p) {
  return channel(p)["frames"];
}

/// The rule fires in the direct pass run and in the whole validator.
void expect_rule(const TestPackage& p, const std::string& code) {
  auto o = run_passes(p);
  EXPECT_TRUE(o.has(code)) << "direct passes, want " << code << "\n" << o.report.to_text("pkg");
  auto r = validate(p);
  EXPECT_TRUE(r.report.has_code(code)) << "validator, want " << code << "\n"
                                       << r.report.to_text("pkg");
  EXPECT_FALSE(r.valid());
}

/// No errors in the direct pass run and the whole validator accepts it.
void expect_valid(const TestPackage& p, bool skip = false) {
  auto o = run_passes(p, skip);
  EXPECT_FALSE(o.errors()) << o.report.to_text("pkg");
  auto r = validate(p, skip);
  EXPECT_TRUE(r.valid()) << r.report.to_text("pkg");
}

}  // namespace

// ---- valid packages ----------------------------------------------------

TEST(MorphValid, BaselineWithMorph13And15) {
  for (int minor : {3, 5}) {
    SCOPED_TRACE(minor);
    expect_valid(with_morph(minor));
  }
}

TEST(MorphValid, ZipAndZstdForms) {
  auto p = with_morph(3);
  auto o = run_passes(p, false, true);
  EXPECT_FALSE(o.errors()) << o.report.to_text("pkg");
  EXPECT_TRUE(validate_zip(p).valid()) << validate_zip(p).report.to_text("pkg");
  auto bytes = p.binary(/*zstd=*/true);
  auto r = bem::validate_package(bytes);
  EXPECT_TRUE(r.valid()) << r.report.to_text("pkg");
}

TEST(MorphValid, ExplicitTargets14) {
  auto p = with_morph(testkit::make_valid_package_v14());
  expect_valid(p);
}

TEST(MorphValid, RecordsCapabilitiesAndVersion) {
  auto o = run_passes(with_morph(3));
  EXPECT_TRUE(o.used_capabilities.count("body-parameters"));
  EXPECT_TRUE(o.used_capabilities.count("mesh-position-deltas"));
  EXPECT_EQ(o.needed_minor, 3);
}

TEST(MorphValid, NeutralInTheMiddleAndCoarseStep) {
  auto p = with_morph(3);
  param(p) = Json{{"id", "body"},   {"name", "Body"}, {"min", 100}, {"max", 900},
                  {"neutral", 500}, {"default", 300}, {"step", 100}};
  p.payloads.push_back(deformation_payload({{1, -0.05f, 0, 0}}));
  frames(p) = Json::array(
      {Json{{"value", 100}, {"payload", 5}, {"count", 2}, {"encoding", "sparse-position-f32"}},
       Json{{"value", 500}, {"neutral", true}},
       Json{{"value", 900}, {"payload", 6}, {"count", 1}, {"encoding", "sparse-position-f32"}}});
  expect_valid(p);
}

TEST(MorphValid, ZeroCountFrame) {
  auto p = with_morph(3);
  p.payloads[kFramePayload] = deformation_payload({});
  frames(p)[1]["count"] = 0;
  expect_valid(p);
}

TEST(MorphValid, ParametersOnlyAndEmptyDeformations) {
  auto p = with_morph(3);
  p.manifest["mesh_deformations"] = Json::array();
  p.payloads.pop_back();
  expect_valid(p);
}

TEST(MorphValid, AvailableWhenOnOptionGroup) {
  auto p = with_morph(3);
  param(p)["available_when"] = Json{{"eq", Json::array({"outfit", "a"})}};
  expect_valid(p);
}

TEST(MorphValid, SharedFramePayloadAcrossChannels) {
  auto p = with_morph(3);
  Json second = body_parameter();
  second["id"] = "chest";
  p.manifest["parameters"].push_back(second);
  Json ch = channel(p);
  ch["parameter"] = "chest";
  p.manifest["mesh_deformations"].push_back(ch);
  expect_valid(p);
}

// ---- parameters --------------------------------------------------------

TEST(MorphParameters, VersionTooLow) {
  for (int minor : {1, 2}) {
    auto p = with_morph(minor);
    expect_rule(p, "BEM_VERSION_TOO_LOW");
  }
}

// The field and its capability need the same version: one line says so.
TEST(MorphParameters, VersionTooLowReportedOncePerField) {
  auto p = with_morph(2);
  auto bytes = p.binary();
  auto r = bem::validate_package(bytes);
  std::map<std::string, int> per_pointer;
  for (const auto& issue : r.report.issues())
    if (issue.code == "BEM_VERSION_TOO_LOW") ++per_pointer[issue.location.pointer];
  EXPECT_EQ(per_pointer["/parameters"], 1) << r.report.to_text("pkg");
  EXPECT_EQ(per_pointer["/mesh_deformations"], 1) << r.report.to_text("pkg");
}

TEST(MorphParameters, DeformationsAloneVersionTooLow) {
  auto p = with_morph(2);
  p.manifest.erase("parameters");
  auto o = run_passes(p);
  EXPECT_TRUE(o.has("BEM_VERSION_TOO_LOW"));
}

TEST(MorphParameters, NotAnArray) {
  auto p = with_morph(3);
  p.manifest["parameters"] = Json::object();
  expect_rule(p, "BEM_FIELD_TYPE");
}

TEST(MorphParameters, MoreThan64) {
  auto p = with_morph(3);
  for (int i = 1; i <= 64; ++i) {
    Json q = body_parameter();
    q["id"] = "p" + std::to_string(i);
    p.manifest["parameters"].push_back(q);
  }
  expect_rule(p, "BEM_ARRAY_SIZE");
}

TEST(MorphParameters, Exactly64Allowed) {
  auto p = with_morph(3);
  for (int i = 1; i < 64; ++i) {
    Json q = body_parameter();
    q["id"] = "p" + std::to_string(i);
    p.manifest["parameters"].push_back(q);
  }
  expect_valid(p);
}

TEST(MorphParameters, DuplicateId) {
  auto p = with_morph(3);
  p.manifest["parameters"].push_back(body_parameter());
  expect_rule(p, "BEM_PARAMETER_DUPLICATE");
}

TEST(MorphParameters, BadStableId) {
  auto p = with_morph(3);
  param(p)["id"] = "-body";
  expect_rule(p, "BEM_STABLE_ID");
}

TEST(MorphParameters, MissingName) {
  auto p = with_morph(3);
  param(p).erase("name");
  expect_rule(p, "BEM_FIELD_MISSING");
}

TEST(MorphParameters, MissingStep) {
  auto p = with_morph(3);
  param(p).erase("step");
  expect_rule(p, "BEM_FIELD_MISSING");
}

TEST(MorphParameters, MinNotBelowMax) {
  auto p = with_morph(3);
  param(p)["min"] = 1000;
  expect_rule(p, "BEM_PARAMETER_RANGE");
}

TEST(MorphParameters, MaxAbove1000) {
  auto p = with_morph(3);
  param(p)["max"] = 1001;
  expect_rule(p, "BEM_FIELD_RANGE");
}

TEST(MorphParameters, StepZero) {
  auto p = with_morph(3);
  param(p)["step"] = 0;
  expect_rule(p, "BEM_FIELD_RANGE");
}

TEST(MorphParameters, FractionalTick) {
  auto p = with_morph(3);
  param(p)["default"] = 0.5;
  expect_rule(p, "BEM_FIELD_TYPE");
}

TEST(MorphParameters, NegativeTick) {
  auto p = with_morph(3);
  param(p)["min"] = -1;
  expect_rule(p, "BEM_FIELD_TYPE");
}

TEST(MorphParameters, MaxNotOnStepGrid) {
  auto p = with_morph(3);
  param(p)["step"] = 3;  // 1000 is not 0 + 3k
  expect_rule(p, "BEM_PARAMETER_STEP");
}

TEST(MorphParameters, NeutralNotOnStepGrid) {
  auto p = with_morph(3);
  param(p)["step"] = 10;
  param(p)["neutral"] = 5;
  expect_rule(p, "BEM_PARAMETER_STEP");
}

TEST(MorphParameters, DefaultNotOnStepGrid) {
  auto p = with_morph(3);
  param(p)["step"] = 10;
  param(p)["default"] = 15;
  expect_rule(p, "BEM_PARAMETER_STEP");
}

TEST(MorphParameters, DefaultOutsideRange) {  // Q14
  auto p = with_morph(3);
  param(p)["min"] = 0;
  param(p)["max"] = 500;
  param(p)["default"] = 600;
  frames(p)[1]["value"] = 500;
  expect_rule(p, "BEM_PARAMETER_VALUE_RANGE");
}

TEST(MorphParameters, NeutralOutsideRange) {  // Q14
  auto p = with_morph(3);
  param(p)["min"] = 100;
  param(p)["neutral"] = 0;
  expect_rule(p, "BEM_PARAMETER_VALUE_RANGE");
}

TEST(MorphParameters, AvailableWhenNamesSlider) {
  auto p = with_morph(3);
  Json q = body_parameter();
  q["id"] = "chest";
  q["available_when"] = Json{{"not", Json{{"eq", Json::array({"body", "0"})}}}};
  p.manifest["parameters"].push_back(q);
  expect_rule(p, "BEM_PARAMETER_CONDITION");
}

// ---- mesh_deformations -------------------------------------------------

TEST(MorphChannels, NotAnArray) {
  auto p = with_morph(3);
  p.manifest["mesh_deformations"] = 7;
  expect_rule(p, "BEM_FIELD_TYPE");
}

TEST(MorphChannels, MoreThan4096) {
  auto p = with_morph(3);
  Json list = Json::array();
  for (int i = 0; i < 4097; ++i) list.push_back(channel(p));
  p.manifest["mesh_deformations"] = list;
  auto o = run_passes(p);
  EXPECT_TRUE(o.has("BEM_ARRAY_SIZE")) << o.report.to_text("pkg");
}

TEST(MorphChannels, MeshOutOfRange) {
  auto p = with_morph(3);
  channel(p)["mesh"] = 1;
  expect_rule(p, "BEM_DEFORMATION_MESH");
}

TEST(MorphChannels, UnknownParameter) {
  auto p = with_morph(3);
  channel(p)["parameter"] = "chest";
  expect_rule(p, "BEM_DEFORMATION_PARAMETER");
}

TEST(MorphChannels, DuplicateMeshParameterPair) {
  auto p = with_morph(3);
  p.manifest["mesh_deformations"].push_back(channel(p));
  expect_rule(p, "BEM_DEFORMATION_DUPLICATE");
}

TEST(MorphChannels, MeshWithoutFloat3Position) {
  auto p = with_morph(3);
  // Position as Float16×4 (8 bytes per vertex) instead of Float32×3.
  p.manifest["meshes"][0]["attributes"][0] = Json::array({0, 1, 4, 0, 0});
  p.manifest["meshes"][0]["streams"][0]["stride"] = 8;
  p.payloads[0] = ByteVec(24, 0);
  expect_rule(p, "BEM_DEFORMATION_POSITION");
}

TEST(MorphChannels, MissingFrames) {
  auto p = with_morph(3);
  channel(p).erase("frames");
  expect_rule(p, "BEM_FIELD_MISSING");
}

TEST(MorphFrames, OnlyOneFrame) {
  auto p = with_morph(3);
  frames(p).erase(1);
  expect_rule(p, "BEM_ARRAY_SIZE");
}

TEST(MorphFrames, MoreThan64Frames) {
  auto p = with_morph(3);
  Json f = Json::array({Json{{"value", 0}, {"neutral", true}}});
  for (int v = 1; v <= 64; ++v)
    f.push_back(
        Json{{"value", v}, {"payload", 5}, {"count", 2}, {"encoding", "sparse-position-f32"}});
  param(p)["max"] = 64;
  frames(p) = f;
  expect_rule(p, "BEM_ARRAY_SIZE");
}

TEST(MorphFrames, NotStrictlyIncreasing) {
  auto p = with_morph(3);
  Json mid = frames(p)[1];
  mid["value"] = 500;
  frames(p).push_back(mid);  // 0, 1000, 500
  expect_rule(p, "BEM_FRAME_ORDER");
}

TEST(MorphFrames, RepeatedValue) {
  auto p = with_morph(3);
  frames(p).push_back(frames(p)[1]);  // 0, 1000, 1000
  expect_rule(p, "BEM_FRAME_ORDER");
}

TEST(MorphFrames, DoesNotCoverMax) {
  auto p = with_morph(3);
  frames(p)[1]["value"] = 900;
  expect_rule(p, "BEM_FRAME_COVER");
}

TEST(MorphFrames, DoesNotCoverMin) {
  auto p = with_morph(3);
  param(p)["neutral"] = 1000;
  param(p)["default"] = 1000;
  frames(p) = Json::array(
      {Json{{"value", 10}, {"payload", 5}, {"count", 2}, {"encoding", "sparse-position-f32"}},
       Json{{"value", 1000}, {"neutral", true}}});
  expect_rule(p, "BEM_FRAME_COVER");
}

TEST(MorphFrames, ValueOffStepGrid) {
  auto p = with_morph(3);
  param(p)["step"] = 10;
  Json mid = frames(p)[1];
  mid["value"] = 505;
  frames(p).insert(frames(p).begin() + 1, mid);
  expect_rule(p, "BEM_FRAME_STEP");
}

TEST(MorphFrames, NoNeutralFrame) {
  auto p = with_morph(3);
  frames(p)[0] =
      Json{{"value", 0}, {"payload", 5}, {"count", 2}, {"encoding", "sparse-position-f32"}};
  expect_rule(p, "BEM_FRAME_NEUTRAL_COUNT");
}

TEST(MorphFrames, TwoNeutralFrames) {
  auto p = with_morph(3);
  frames(p)[1] = Json{{"value", 1000}, {"neutral", true}};
  expect_rule(p, "BEM_FRAME_NEUTRAL_COUNT");
}

TEST(MorphFrames, NeutralFrameAtWrongValue) {
  auto p = with_morph(3);
  param(p)["neutral"] = 1000;
  expect_rule(p, "BEM_FRAME_NEUTRAL");
}

TEST(MorphFrames, NeutralFalse) {
  auto p = with_morph(3);
  frames(p)[0]["neutral"] = false;
  expect_rule(p, "BEM_FRAME_NEUTRAL");
}

TEST(MorphFrames, NeutralNotBoolean) {
  auto p = with_morph(3);
  frames(p)[0]["neutral"] = 1;
  expect_rule(p, "BEM_FIELD_TYPE");
}

TEST(MorphFrames, NeutralFrameWithPayload) {
  auto p = with_morph(3);
  frames(p)[0]["payload"] = 5;
  expect_rule(p, "BEM_FRAME_FIELDS");
}

TEST(MorphFrames, DataFrameExtraField) {  // Q9: "exactly" wins over §3 metadata
  auto p = with_morph(3);
  frames(p)[1]["note"] = "hello";
  expect_rule(p, "BEM_FRAME_FIELDS");
}

TEST(MorphFrames, DataFrameMissingEncoding) {
  auto p = with_morph(3);
  frames(p)[1].erase("encoding");
  expect_rule(p, "BEM_FIELD_MISSING");
}

TEST(MorphFrames, DataFrameMissingCount) {
  auto p = with_morph(3);
  frames(p)[1].erase("count");
  expect_rule(p, "BEM_FIELD_MISSING");
}

TEST(MorphFrames, DataFrameMissingPayload) {
  auto p = with_morph(3);
  frames(p)[1].erase("payload");
  expect_rule(p, "BEM_FIELD_MISSING");
}

TEST(MorphFrames, WrongEncoding) {
  auto p = with_morph(3);
  frames(p)[1]["encoding"] = "dense-position-f32";
  expect_rule(p, "BEM_FRAME_ENCODING");
}

TEST(MorphFrames, CountAboveVertexCount) {
  auto p = with_morph(3);
  frames(p)[1]["count"] = 4;
  expect_rule(p, "BEM_FRAME_COUNT");
}

TEST(MorphFrames, PayloadIdMissing) {
  auto p = with_morph(3);
  frames(p)[1]["payload"] = 42;
  expect_rule(p, "BEM_PAYLOAD_ID");
}

TEST(MorphFrames, PayloadIdMissingInZip) {
  auto p = with_morph(3);
  frames(p)[1]["payload"] = 42;
  auto o = run_passes(p, false, true);
  EXPECT_TRUE(o.has("BEM_ZIP_MISSING_PAYLOAD")) << o.report.to_text("pkg");
}

TEST(MorphFrames, PayloadTooSmallForCount) {
  auto p = with_morph(3);
  p.payloads[kFramePayload] = ByteVec(20, 0);
  expect_rule(p, "BEM_PAYLOAD_SIZE");
}

// ---- frame payload bytes (§10 table) -----------------------------------

TEST(MorphPayload, DescriptorLengthZero) {
  auto p = with_morph(3);
  auto& b = p.payloads[kFramePayload];
  b[0] = b[1] = b[2] = b[3] = 0;
  expect_rule(p, "BEM_DEFORMATION_HEADER");
}

TEST(MorphPayload, DescriptorLengthTooLarge) {
  auto p = with_morph(3);
  std::string desc = R"({"count":2,"encoding":"sparse-position-f32"})";
  desc += std::string(4100 - desc.size(), ' ');  // J = 4100 > 4096
  p.payloads[kFramePayload] = deformation_payload({{0, 0.1f, 0, 0}, {2, 0, 0.1f, 0}}, desc);
  // The payload is then longer than 4 + 4096 + 32, which the directory check reports;
  // the content check reports J itself.
  auto o = run_passes(p);
  EXPECT_TRUE(o.has("BEM_PAYLOAD_SIZE")) << o.report.to_text("pkg");
  bem::PayloadUse use{bem::PayloadRole::kDeformation, "/x", 3, 0, 0, 0, 2};
  core::Report report;
  auto bytes = p.binary();
  auto pkg = bem::Package::open(bytes, report);
  ASSERT_TRUE(pkg);
  Json m = Json::object();
  bem::ValidateOptions options;
  bem::Context ctx(m, *pkg, report, options, 3, true);
  bem::check_deformation_payload(ctx, 5, p.payloads[kFramePayload], use);
  EXPECT_TRUE(report.has_code("BEM_DEFORMATION_HEADER")) << report.to_text("pkg");
}

TEST(MorphPayload, DescriptorNotJson) {
  auto p = with_morph(3);
  p.payloads[kFramePayload] =
      deformation_payload({{0, 0.1f, 0, 0}, {2, 0, 0.1f, 0}}, R"({"count":2,"encoding":)");
  expect_rule(p, "BEM_DEFORMATION_JSON");
}

TEST(MorphPayload, DescriptorExtraKey) {
  auto p = with_morph(3);
  p.payloads[kFramePayload] =
      deformation_payload({{0, 0.1f, 0, 0}, {2, 0, 0.1f, 0}},
                          R"({"count":2,"encoding":"sparse-position-f32","unit":"m"})");
  expect_rule(p, "BEM_DEFORMATION_JSON");
}

TEST(MorphPayload, DescriptorDuplicateKey) {
  auto p = with_morph(3);
  p.payloads[kFramePayload] =
      deformation_payload({{0, 0.1f, 0, 0}, {2, 0, 0.1f, 0}},
                          R"({"count":2,"count":2,"encoding":"sparse-position-f32"})");
  expect_rule(p, "BEM_DEFORMATION_JSON");
}

TEST(MorphPayload, DescriptorWrongEncoding) {
  auto p = with_morph(3);
  p.payloads[kFramePayload] =
      deformation_payload({{0, 0.1f, 0, 0}, {2, 0, 0.1f, 0}}, R"({"count":2,"encoding":"dense"})");
  expect_rule(p, "BEM_DEFORMATION_JSON");
}

TEST(MorphPayload, DescriptorCountDiffersFromManifest) {
  auto p = with_morph(3);
  p.payloads[kFramePayload] = deformation_payload({{0, 0.1f, 0, 0}});
  // 1 record + descriptor count 1, but the manifest frame says 2; size fits 37..4132.
  p.payloads[kFramePayload].resize(p.payloads[kFramePayload].size() + 16, 0);
  expect_rule(p, "BEM_DEFORMATION_COUNT");
}

TEST(MorphPayload, TrailingByte) {
  auto p = with_morph(3);
  p.payloads[kFramePayload].push_back(0);
  expect_rule(p, "BEM_DEFORMATION_SIZE");
}

TEST(MorphPayload, MissingRecord) {
  auto p = with_morph(3);
  p.payloads[kFramePayload] =
      deformation_payload({{0, 0.1f, 0, 0}}, R"({"count":2,"encoding":"sparse-position-f32"})");
  p.payloads[kFramePayload].resize(p.payloads[kFramePayload].size() + 8, 0);
  expect_rule(p, "BEM_DEFORMATION_SIZE");
}

TEST(MorphPayload, VertexIndexOutOfRange) {
  auto p = with_morph(3);
  p.payloads[kFramePayload] = deformation_payload({{0, 0.1f, 0, 0}, {3, 0, 0.1f, 0}});
  expect_rule(p, "BEM_DEFORMATION_INDEX");
}

TEST(MorphPayload, DuplicateVertexIndex) {
  auto p = with_morph(3);
  p.payloads[kFramePayload] = deformation_payload({{2, 0.1f, 0, 0}, {2, 0, 0.1f, 0}});
  expect_rule(p, "BEM_DEFORMATION_DUPLICATE_INDEX");
}

TEST(MorphPayload, NaNDelta) {
  auto p = with_morph(3);
  float nan = std::numeric_limits<float>::quiet_NaN();
  p.payloads[kFramePayload] = deformation_payload({{0, 0.1f, 0, 0}, {2, 0, nan, 0}});
  expect_rule(p, "BEM_DEFORMATION_DELTA");
}

TEST(MorphPayload, InfiniteDelta) {
  auto p = with_morph(3);
  float inf = std::numeric_limits<float>::infinity();
  p.payloads[kFramePayload] = deformation_payload({{0, 0.1f, 0, 0}, {2, 0, 0, -inf}});
  expect_rule(p, "BEM_DEFORMATION_DELTA");
}

TEST(MorphPayload, ManyBadRecordsAreSummarised) {
  auto p = with_morph(3);
  p.manifest["meshes"][0]["vertex_count"] = 3;
  std::vector<Record> recs;
  for (std::uint32_t i = 0; i < 3; ++i) recs.push_back({i + 100, 0, 0, 0});
  p.payloads[kFramePayload] = deformation_payload(recs);
  frames(p)[1]["count"] = 3;
  auto o = run_passes(p);
  EXPECT_TRUE(o.has("BEM_DEFORMATION_INDEX"));
  EXPECT_FALSE(o.has("BEM_DEFORMATION_RECORDS"));  // 3 ≤ 5: no summary

  // A direct call with a large frame: at most 5 record issues plus a summary.
  std::vector<Record> many;
  for (std::uint32_t i = 0; i < 1000; ++i) many.push_back({i % 2, 0, 0, 0});
  ByteVec bytes = deformation_payload(many);
  core::Report report(1000);
  auto file = p.binary();
  auto pkg = bem::Package::open(file, report);
  ASSERT_TRUE(pkg);
  Json m = Json::object();
  bem::ValidateOptions options;
  bem::Context ctx(m, *pkg, report, options, 3, true);
  bem::PayloadUse use{bem::PayloadRole::kDeformation, "/x", 3, 0, 0, 0, 1000};
  bem::check_deformation_payload(ctx, 5, bytes, use);
  EXPECT_TRUE(report.has_code("BEM_DEFORMATION_DUPLICATE_INDEX"));
  EXPECT_TRUE(report.has_code("BEM_DEFORMATION_RECORDS"));
  EXPECT_EQ(report.num_errors(), 6u) << report.to_text("pkg");
}

TEST(MorphPayload, TruncatedBytesNeverCrash) {
  // Every prefix of a valid frame payload is reported, never crashes.
  auto p = with_morph(3);
  ByteVec full = p.payloads[kFramePayload];
  core::Report report(100000);
  auto file = p.binary();
  auto pkg = bem::Package::open(file, report);
  ASSERT_TRUE(pkg);
  Json m = Json::object();
  bem::ValidateOptions options;
  bem::Context ctx(m, *pkg, report, options, 3, true);
  bem::PayloadUse use{bem::PayloadRole::kDeformation, "/x", 3, 0, 0, 0, 2};
  for (std::size_t n = 0; n < full.size(); ++n) {
    std::size_t before = report.num_errors();
    bem::check_deformation_payload(ctx, 5, core::Bytes(full.data(), n), use);
    EXPECT_GT(report.num_errors(), before) << "prefix " << n;
  }
  std::size_t before = report.num_errors();
  bem::check_deformation_payload(ctx, 5, full, use);
  EXPECT_EQ(report.num_errors(), before);
}

TEST(MorphPayload, MillionRecordFrameIsCheckedQuickly) {
  // §7/§10 upper bound: 1,048,576 vertices, every one moved (16 MiB of records).
  const std::uint32_t n = 1048576;
  std::string desc = "{\"count\":" + std::to_string(n) + ",\"encoding\":\"sparse-position-f32\"}";
  ByteVec bytes = testkit::u32_bytes({static_cast<std::uint32_t>(desc.size())});
  bytes.insert(bytes.end(), desc.begin(), desc.end());
  std::size_t start = bytes.size();
  bytes.resize(start + 16ull * n, 0);
  for (std::uint32_t v = 0; v < n; ++v) {
    std::uint32_t idx = n - 1 - v;  // reverse order: uniqueness must not assume sorting
    std::memcpy(bytes.data() + start + 16ull * v, &idx, 4);
  }
  auto p = with_morph(3);
  core::Report report;
  auto file = p.binary();
  auto pkg = bem::Package::open(file, report);
  ASSERT_TRUE(pkg);
  Json m = Json::object();
  bem::ValidateOptions options;
  bem::Context ctx(m, *pkg, report, options, 3, true);
  bem::PayloadUse use{bem::PayloadRole::kDeformation, "/x", n, 0, 0, 0, n};
  bem::check_deformation_payload(ctx, 5, bytes, use);
  EXPECT_FALSE(report.has_errors()) << report.to_text("pkg");
  // One duplicate at the very end is still found.
  std::uint32_t dup = 0;
  std::memcpy(bytes.data() + start + 16ull * (n - 2), &dup, 4);
  bem::check_deformation_payload(ctx, 5, bytes, use);
  EXPECT_TRUE(report.has_code("BEM_DEFORMATION_DUPLICATE_INDEX"));
}

// ---- capabilities (reported by the final pass) -------------------------

TEST(MorphCapabilities, ParametersWithoutBodyParameters) {
  auto p = with_morph(3);
  auto& caps = p.manifest["required_capabilities"];
  caps.erase(std::find(caps.begin(), caps.end(), "body-parameters"));
  auto r = validate(p);
  EXPECT_TRUE(r.report.has_code("BEM_CAPABILITY_MISSING")) << r.report.to_text("pkg");
}

TEST(MorphCapabilities, DeformationsWithoutMeshPositionDeltas) {
  auto p = with_morph(3);
  auto& caps = p.manifest["required_capabilities"];
  caps.erase(std::find(caps.begin(), caps.end(), "mesh-position-deltas"));
  auto r = validate(p);
  EXPECT_TRUE(r.report.has_code("BEM_CAPABILITY_MISSING")) << r.report.to_text("pkg");
}

TEST(MorphCapabilities, DeclaredButUnusedIsFine) {
  auto p = testkit::make_valid_package(3);
  p.manifest["required_capabilities"].push_back("body-parameters");
  p.manifest["required_capabilities"].push_back("mesh-position-deltas");
  EXPECT_TRUE(validate(p).valid()) << validate(p).report.to_text("pkg");
}

TEST(MorphCapabilities, ZipWithoutVersionHintInfers13) {
  auto p = with_morph(3);
  auto bytes = p.zip(false, /*with_format_version=*/false);
  auto r = bem::validate_package(bytes);
  EXPECT_TRUE(r.valid()) << r.report.to_text("pkg");
  EXPECT_EQ(r.summary.needed_minor, 3);
}
