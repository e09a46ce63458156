// Payload content checks (§7 indices and skin streams) and payload integrity
// as the payload pass reports it (§2, Q5).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "charkit/core/json.h"
#include "mesh_test_util.h"

using namespace charkit;
using rules_test::attrs;
using rules_test::Form;
using rules_test::mesh0;
using rules_test::with_skin12;
using rules_test::with_skin32;
using testkit::ByteVec;
using testkit::Json;
using testkit::TestPackage;

namespace {

void expect_in_all_forms(const TestPackage& p, const std::string& code) {
  for (auto form : {Form::kBinary, Form::kBinaryZstd, Form::kZip}) {
    auto r = rules_test::validate(p, form);
    EXPECT_TRUE(r.report.has_code(code)) << code << "\n" << r.report.to_text("pkg");
    EXPECT_FALSE(r.valid());
  }
}

}  // namespace

TEST(PayloadRules, BaselineValidWithoutContentIssues) {
  for (int m = 0; m <= 5; ++m)
    for (auto form : {Form::kBinary, Form::kBinaryZstd, Form::kZip}) {
      auto r = rules_test::validate(testkit::make_valid_package(m), form);
      EXPECT_TRUE(r.valid()) << r.report.to_text("pkg");
      EXPECT_FALSE(r.report.has_code("BEM_PAYLOAD_UNREFERENCED")) << r.report.to_text("pkg");
    }
}

// ---- indices -------------------------------------------------------------

TEST(PayloadRules, IndexOutOfRange16) {
  for (int minor : {0, 1, 5}) {
    TestPackage p = testkit::make_valid_package(minor);
    p.payloads[3] = testkit::u16_bytes({0, 1, 3});  // 3 vertices
    expect_in_all_forms(p, "BEM_INDEX_RANGE");
  }
}

TEST(PayloadRules, IndexOutOfRange32) {
  TestPackage p = testkit::make_valid_package(2);
  mesh0(p)["index_size"] = 4;
  p.payloads[3] = testkit::u32_bytes({0, 1, 2});
  EXPECT_ACCEPTS(p);
  p.payloads[3] = testkit::u32_bytes({0, 0x10000, 2});
  expect_in_all_forms(p, "BEM_INDEX_RANGE");
}

TEST(PayloadRules, IndexRangeDependsOnEachMesh) {
  // Two meshes share one index payload: fine for the 3-vertex mesh, not for a 2-vertex one.
  TestPackage p = testkit::make_valid_package(1);
  Json m = mesh0(p);
  m["vertex_count"] = 2;
  m["streams"][0]["payload"] = 5;
  m["streams"][1]["payload"] = 6;
  m["streams"][2]["payload"] = 7;
  p.manifest["meshes"].push_back(m);
  p.payloads.push_back(ByteVec(24, 0));
  p.payloads.push_back(ByteVec(16, 0));
  p.payloads.push_back(ByteVec(8, 0));
  p.manifest["component_rules"][1]["candidates"][0] =
      Json{{"when", true}, {"operation", "replace"}, {"mesh", 1}};
  auto r = rules_test::validate(p);
  EXPECT_TRUE(r.report.has_code("BEM_INDEX_RANGE")) << r.report.to_text("pkg");
  EXPECT_EQ(rules_test::count_code(r, "BEM_INDEX_RANGE"), 1u);
}

TEST(PayloadRules, ManyBadIndicesOneIssue) {
  TestPackage p = testkit::make_valid_package(1);
  std::vector<std::uint16_t> idx(3000, 7);
  p.payloads[3] = testkit::u16_bytes(idx);
  p.manifest["meshes"][0]["draws"][0]["count"] = 3000;
  auto r = rules_test::validate(p);
  EXPECT_EQ(rules_test::count_code(r, "BEM_INDEX_RANGE"), 1u) << r.report.to_text("pkg");
}

// ---- skin streams --------------------------------------------------------

TEST(PayloadRules, RigidSkinIndex) {
  TestPackage p = testkit::make_valid_package(1);
  p.payloads[2] = ByteVec{0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0};  // palette has 1 bone
  expect_in_all_forms(p, "BEM_SKIN_INDEX");
}

TEST(PayloadRules, RigidSkinIgnoresUnusedIndexBytes) {
  TestPackage p = testkit::make_valid_package(1);
  p.payloads[2] =
      ByteVec{0, 200, 200, 200, 0, 9, 9, 9, 0, 1, 2, 3};  // only the first index is used
  EXPECT_ACCEPTS(p);
}

TEST(PayloadRules, Skin12Valid) {
  EXPECT_ACCEPTS(with_skin12(0, {65535, 0, 0, 0}, {0, 0, 0, 0}));
  EXPECT_ACCEPTS(with_skin12(1, {32768, 32767, 0, 0}, {0, 0, 0, 0}));
  EXPECT_ACCEPTS(with_skin12(1, {64880, 0, 0, 0}, {0, 0, 0, 0}));    // 1 - 1 %
  EXPECT_ACCEPTS(with_skin12(1, {65535, 655, 0, 0}, {0, 0, 0, 0}));  // 66190 = 1 + 1 %
}

TEST(PayloadRules, Skin12WeightSum) {
  expect_in_all_forms(with_skin12(1, {64879, 0, 0, 0}, {0, 0, 0, 0}), "BEM_SKIN_WEIGHT_SUM");
  EXPECT_REJECTS(with_skin12(1, {65535, 656, 0, 0}, {0, 0, 0, 0}), "BEM_SKIN_WEIGHT_SUM");
  EXPECT_REJECTS(with_skin12(1, {0, 0, 0, 0}, {0, 0, 0, 0}), "BEM_SKIN_WEIGHT_SUM");
  EXPECT_REJECTS(with_skin12(1, {65535, 65535, 0, 0}, {0, 0, 0, 0}), "BEM_SKIN_WEIGHT_SUM");
}

TEST(PayloadRules, Skin12Index) {
  expect_in_all_forms(with_skin12(1, {65535, 0, 0, 0}, {1, 0, 0, 0}), "BEM_SKIN_INDEX");
  // An index in a zero-weight slot still has to be in the palette (docs/bem/mesh.md).
  EXPECT_REJECTS(with_skin12(1, {65535, 0, 0, 0}, {0, 0, 0, 5}), "BEM_SKIN_INDEX");
}

TEST(PayloadRules, Skin32Valid) {
  EXPECT_ACCEPTS(with_skin32(2, {1, 0, 0, 0}, {0, 0, 0, 0}));
  EXPECT_ACCEPTS(with_skin32(5, {0.4f, 0.3f, 0.2f, 0.105f}, {0, 0, 0, 0}));
}

TEST(PayloadRules, Skin32WeightSum) {
  expect_in_all_forms(with_skin32(2, {0.5f, 0.4f, 0, 0}, {0, 0, 0, 0}), "BEM_SKIN_WEIGHT_SUM");
  EXPECT_REJECTS(with_skin32(2, {1.0f, 0.02f, 0, 0}, {0, 0, 0, 0}), "BEM_SKIN_WEIGHT_SUM");
}

TEST(PayloadRules, Skin32WeightValues) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  expect_in_all_forms(with_skin32(2, {nan, 0, 0, 0}, {0, 0, 0, 0}), "BEM_SKIN_WEIGHT_VALUE");
  EXPECT_REJECTS(with_skin32(3, {1.5f, -0.5f, 0, 0}, {0, 0, 0, 0}), "BEM_SKIN_WEIGHT_VALUE");
  EXPECT_REJECTS(with_skin32(3, {inf, 0, 0, 0}, {0, 0, 0, 0}), "BEM_SKIN_WEIGHT_VALUE");
}

TEST(PayloadRules, Skin32Index) {
  expect_in_all_forms(with_skin32(2, {1, 0, 0, 0}, {1, 0, 0, 0}), "BEM_SKIN_INDEX");
  EXPECT_REJECTS(with_skin32(2, {1, 0, 0, 0}, {0, 0, 0, 0xFFFFFFFFu}), "BEM_SKIN_INDEX");
}

TEST(PayloadRules, LargerPaletteAcceptsHigherIndices) {
  TestPackage p = with_skin12(2, {65535, 0, 0, 0}, {1, 0, 0, 0});
  mesh0(p)["bones"].push_back(Json{{"component", 0}, {"index", 1}, {"name", "Bip001_Spine"}});
  EXPECT_ACCEPTS(p);
}

// ---- integrity and writer duties (Q5) --------------------------------------

TEST(PayloadRules, UnreferencedPayloadIsAWarning) {
  for (int minor : {0, 2, 5}) {
    TestPackage p = testkit::make_valid_package(minor);
    p.payloads.push_back(ByteVec{1, 2, 3});
    for (auto form : {Form::kBinary, Form::kZip}) {
      auto r = rules_test::validate(p, form);
      EXPECT_TRUE(r.valid()) << r.report.to_text("pkg");
      EXPECT_TRUE(r.report.has_code("BEM_PAYLOAD_UNREFERENCED")) << r.report.to_text("pkg");
    }
  }
}

// A referenced payload whose size is wrong, or one behind a mesh
// the walk stopped at, is not "unreferenced": with a manifest error the
// references are not all known, so the warning is not given.
TEST(PayloadRules, NoUnreferencedWarningWhenTheManifestHasErrors) {
  for (int minor : {0, 5}) {
    TestPackage p = testkit::make_valid_package(minor);
    mesh0(p)["streams"][0]["stride"] = 16;   // payload 0 now has the wrong size
    p.manifest["textures"][0]["width"] = 8;  // payload 4 too
    for (auto form : {Form::kBinary, Form::kZip}) {
      auto r = rules_test::validate(p, form);
      EXPECT_TRUE(r.report.has_code("BEM_PAYLOAD_SIZE")) << r.report.to_text("pkg");
      EXPECT_FALSE(r.report.has_code("BEM_PAYLOAD_UNREFERENCED")) << r.report.to_text("pkg");
    }
    TestPackage q = testkit::make_valid_package(minor);
    q.manifest["meshes"][0] = 7;  // the walk cannot reach this mesh's payloads
    auto r = rules_test::validate(q, Form::kBinary);
    EXPECT_FALSE(r.valid());
    EXPECT_FALSE(r.report.has_code("BEM_PAYLOAD_UNREFERENCED")) << r.report.to_text("pkg");
  }
}

TEST(PayloadRules, ZstdWithoutGainIsInfo) {
  auto r = rules_test::validate(testkit::make_valid_package(1), Form::kBinaryZstd);
  EXPECT_TRUE(r.valid()) << r.report.to_text("pkg");
  EXPECT_TRUE(r.report.has_code("BEM_PAYLOAD_ZSTD_NO_GAIN"));
}

TEST(PayloadRules, CorruptZstdReportedOnceAtItsOffset) {
  TestPackage p = testkit::make_valid_package(1);
  p.payloads[4] = ByteVec(4096, 0x42);
  p.manifest["textures"][0]["width"] = 32;
  p.manifest["textures"][0]["height"] = 32;
  ByteVec bytes = p.binary(true);
  // Payload 4 (the last one): break its zstd magic number.
  std::uint64_t dir = 40 + p.manifest.dump().size();
  std::uint64_t off = 0;
  for (int k = 0; k < 8; ++k) off |= std::uint64_t{bytes[dir + 4 * 32 + 8 + k]} << (8 * k);
  bytes[off] ^= 0xFF;
  auto r = bem::validate_package(bytes);
  EXPECT_FALSE(r.valid()) << r.report.to_text("pkg");
  std::size_t zstd_issues = 0;
  for (const auto& i : r.report.issues())
    if (i.code.rfind("BEM_ZSTD", 0) == 0) {
      ++zstd_issues;
      ASSERT_TRUE(i.location.offset.has_value());
      EXPECT_EQ(*i.location.offset, off);
    }
  EXPECT_EQ(zstd_issues, 1u) << r.report.to_text("pkg");
}

TEST(PayloadRules, ContentChecksCanBeSkipped) {
  TestPackage p = testkit::make_valid_package(1);
  p.payloads[3] = testkit::u16_bytes({0, 1, 3});
  bem::ValidateOptions o;
  o.check_payloads = false;
  auto r = rules_test::validate(p, Form::kBinary, o);
  EXPECT_TRUE(r.valid()) << r.report.to_text("pkg");
}

namespace {

// n vertices with a 12-byte skin stream (every vertex all on bone 0) and
// 3n 32-bit indices (index i is (i · step) mod n), one draw over them all.
TestPackage skinned_mesh(std::uint32_t n, std::uint32_t step) {
  TestPackage p = with_skin12(2);
  mesh0(p)["vertex_count"] = n;
  p.payloads[0] = ByteVec(std::size_t{n} * 12, 0);
  p.payloads[1] = ByteVec(std::size_t{n} * 8, 0);
  ByteVec skin;
  for (std::uint32_t v = 0; v < n; ++v)
    skin.insert(skin.end(), {0xFF, 0xFF, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
  p.payloads[2] = skin;
  std::vector<std::uint32_t> idx(std::size_t{n} * 3);
  for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = static_cast<std::uint32_t>((i * step) % n);
  mesh0(p)["index_size"] = 4;
  p.payloads[3] = testkit::u32_bytes(idx);
  p.manifest["meshes"][0]["draws"][0]["count"] = idx.size();
  return p;
}

}  // namespace

TEST(PayloadRules, LargeMeshScansCleanly) {
  // 60,000 vertices, 12-byte skin, 180,000 indices: a sanity check of the kernels.
  const std::uint32_t n = 60000;
  TestPackage p = skinned_mesh(n, 1);
  for (auto form : {Form::kBinary, Form::kBinaryZstd, Form::kZip}) {
    auto r = rules_test::validate(p, form);
    EXPECT_TRUE(r.valid()) << r.report.to_text("pkg");
  }
  // The last index (little-endian u32) becomes n, one past the last vertex.
  ByteVec& indices = p.payloads[3];
  for (std::size_t k = 0; k < 4; ++k)
    indices[indices.size() - 4 + k] = static_cast<std::uint8_t>(n >> (8 * k));
  EXPECT_REJECTS(p, "BEM_INDEX_RANGE");
}

TEST(PayloadRules, SharedBadPayloadReportedOnce) {
  // 50 draws share one bad index payload: one issue, not 50.
  TestPackage p = testkit::make_valid_package(2);
  p.payloads[3] = testkit::u16_bytes({0, 1, 9});
  Json d = p.manifest["meshes"][0]["draws"][0];
  for (int i = 0; i < 49; ++i) p.manifest["meshes"][0]["draws"].push_back(d);
  auto r = rules_test::validate(p);
  EXPECT_FALSE(r.valid());
  EXPECT_EQ(rules_test::count_code(r, "BEM_INDEX_RANGE"), 1u) << r.report.to_text("pkg");
}

namespace {

// The errors of a report as "CODE: message" lines, in order.
std::vector<std::string> error_lines(const bem::ValidationResult& r) {
  std::vector<std::string> out;
  for (const auto& i : r.report.issues())
    if (i.severity == core::Severity::kError) out.push_back(i.code + ": " + i.message);
  return out;
}

// 120,000 vertices with a 12-byte skin stream (1.44 MB) and 360,000 32-bit
// indices (1.44 MB): in a zstd binary package each is decoded in four
// pieces of 384 KiB with its checks run on each piece.
TestPackage big_skinned_mesh() {
  return skinned_mesh(120000, 7);
}

}  // namespace

// A zstd payload of a binary package is checked piece by piece as it is
// decoded; a finding anywhere in it (here in the last piece) gives the
// report the whole payload gives (the raw binary form decodes nothing).
TEST(PayloadRules, StreamedZstdPayloadsReportWhatWholeOnesDo) {
  const TestPackage clean = big_skinned_mesh();
  {
    auto r = rules_test::validate(clean, Form::kBinaryZstd);
    EXPECT_TRUE(r.valid()) << r.report.to_text("pkg");
  }
  struct Fault {
    const char* code;
    std::function<void(TestPackage&)> apply;
  };
  const std::size_t last = std::size_t{120000} - 1;
  const std::vector<Fault> faults = {
      {"BEM_INDEX_RANGE",
       [](TestPackage& p) {
         auto& b = p.payloads[3];
         b[b.size() - 4] = 0xC0;  // the last index: 0x1D4C0 = 120000, one past the last vertex
         b[b.size() - 3] = 0xD4;
         b[b.size() - 2] = 0x01;
       }},
      {"BEM_SKIN_WEIGHT_SUM",
       [last](TestPackage& p) {
         p.payloads[2][last * 12] = 0x00;  // weight 0 of the last vertex: 0x8000, sum 32768
         p.payloads[2][last * 12 + 1] = 0x80;
       }},
      {"BEM_SKIN_INDEX", [last](TestPackage& p) { p.payloads[2][last * 12 + 8] = 200; }},
      {"BEM_SKIN_INDEX", [](TestPackage& p) { p.payloads[2][5 * 12 + 9] = 77; }},
  };
  for (const auto& f : faults) {
    TestPackage p = clean;
    f.apply(p);
    auto whole = rules_test::validate(p, Form::kBinary);
    auto streamed = rules_test::validate(p, Form::kBinaryZstd);
    EXPECT_TRUE(streamed.report.has_code(f.code)) << f.code << streamed.report.to_text("pkg");
    EXPECT_FALSE(error_lines(streamed).empty());
    EXPECT_EQ(error_lines(streamed), error_lines(whole)) << f.code;
    bem::ValidateOptions two;
    two.threads = 2;
    EXPECT_EQ(error_lines(rules_test::validate(p, Form::kBinaryZstd, two)), error_lines(streamed));
  }
}
