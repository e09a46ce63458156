// The work validation may do on one package is bounded (docs/bem/zip.md
// §Budgets): ZIP entries whose local data overlap are refused before anything
// is decoded (a crafted 526 KB archive once made 40 entries of one 512 MiB
// DEFLATE stream), the bytes decoded across a package have a budget, a
// collection member's buffer grows with its real data rather than its
// declared size, and a cancel flag stops it. The archives are written here
// byte by byte (APPNOTE 4.3), with zlib only for the DEFLATE data.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <zlib.h>

#include <atomic>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "charkit/bem/container.h"
#include "charkit/bem/validate.h"
#include "charkit/core/json.h"
#include "package_builder.h"
#include "raw_zip.h"

using namespace charkit;

namespace {

using namespace testkit::rawzip;

using testkit::payload_name;

/// A valid package (manifest + its payloads, STORED) followed by `extra`
/// more payload files (unreferenced: warnings only, but each is decoded).
/// `shared`: the extra files all point at one blob; else one blob each.
ByteVec package_with_extra_payloads(const Stored& extra_blob, std::size_t extra, bool shared) {
  testkit::TestPackage p = testkit::make_valid_package(2);
  testkit::Json m = p.manifest;
  m["format_version"] = "1.2";
  const std::string text = m.dump();
  std::vector<Stored> blobs{stored(ByteVec(text.begin(), text.end()))};
  std::vector<Record> records{{"manifest.json", 0}};
  for (std::size_t i = 0; i < p.payloads.size(); ++i) {
    blobs.push_back(stored(p.payloads[i]));
    records.push_back({payload_name(i), blobs.size() - 1});
  }
  for (std::size_t k = 0; k < extra; ++k) {
    if (k == 0 || !shared) blobs.push_back(extra_blob);
    records.push_back({payload_name(p.payloads.size() + k), blobs.size() - 1});
  }
  return write_zip(blobs, records);
}

/// A ZIP package (the payloads of make_valid_package, STORED) whose
/// manifest text is `manifest`.
ByteVec zip_with_manifest(const std::string& manifest) {
  testkit::TestPackage p = testkit::make_valid_package(2);
  std::vector<Stored> blobs{stored(ByteVec(manifest.begin(), manifest.end()))};
  std::vector<Record> records{{"manifest.json", 0}};
  for (std::size_t i = 0; i < p.payloads.size(); ++i) {
    blobs.push_back(stored(p.payloads[i]));
    records.push_back({payload_name(i), blobs.size() - 1});
  }
  return write_zip(blobs, records);
}

long max_rss_kib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

}  // namespace

// 8 entries pointing at one DEFLATE stream of 64 MiB of zeros: refused as
// crafted before a byte is decoded (it used to decode 512 MiB and pass).
TEST(DecodeBudget, OverlappingZipEntriesAreRefusedBeforeDecoding) {
  const ByteVec zip = package_with_extra_payloads(deflated_zeros(64 * kMiB), 8, /*shared=*/true);
  ASSERT_LT(zip.size(), 200'000u);
  bem::ValidateOptions o;
  o.max_decoded_bytes = 16 * kMiB;  // even a small budget is not what stops it
  auto r = bem::validate_package(zip, o);
  EXPECT_FALSE(r.valid());
  EXPECT_TRUE(r.report.has_code("BEM_ZIP_OVERLAP")) << r.report.to_text("overlap.zip");
  EXPECT_EQ(r.summary.decoded_bytes, 0u);
  EXPECT_FALSE(r.summary.budget_exceeded);
  core::Report report;
  EXPECT_FALSE(bem::Package::open(zip, report));
  EXPECT_TRUE(report.has_code("BEM_ZIP_OVERLAP"));
  // Unbounded, too (the CLI default): nothing decoded.
  auto unbounded = bem::validate_package(zip);
  EXPECT_TRUE(unbounded.report.has_code("BEM_ZIP_OVERLAP"));
  EXPECT_EQ(unbounded.summary.decoded_bytes, 0u);
}

// The same archive honestly written (one stream per entry) is valid, and
// decodes 8 × 8 MiB; a 20 MiB budget stops it at the third entry.
TEST(DecodeBudget, DecodedBytesOfAPackageAreBounded) {
  const ByteVec zip = package_with_extra_payloads(deflated_zeros(8 * kMiB), 8, /*shared=*/false);
  auto free_run = bem::validate_package(zip);
  EXPECT_TRUE(free_run.valid()) << free_run.report.to_text("honest.zip");
  EXPECT_TRUE(free_run.report.has_code("BEM_PAYLOAD_UNREFERENCED"));
  EXPECT_GE(free_run.summary.decoded_bytes, 64 * kMiB);
  EXPECT_FALSE(free_run.summary.budget_exceeded);

  bem::ValidateOptions o;
  o.max_decoded_bytes = 20 * kMiB;
  auto r = bem::validate_package(zip, o);
  EXPECT_FALSE(r.valid());
  EXPECT_TRUE(r.summary.budget_exceeded);
  EXPECT_TRUE(r.report.has_code("BEM_DECODE_BUDGET")) << r.report.to_text("budget.zip");
  EXPECT_LE(r.summary.decoded_bytes, 20 * kMiB);
  EXPECT_GE(r.summary.decoded_bytes, 16 * kMiB);
  // One budget issue, not one per remaining payload.
  std::size_t n = 0;
  for (const auto& i : r.report.issues()) n += i.code == "BEM_DECODE_BUDGET";
  EXPECT_EQ(n, 1u);
}

TEST(DecodeBudget, CancelledValidationStops) {
  const ByteVec zip = package_with_extra_payloads(deflated_zeros(8 * kMiB), 8, false);
  std::atomic<bool> cancel{true};
  bem::ValidateOptions o;
  o.cancel = &cancel;
  auto r = bem::validate_package(zip, o);
  EXPECT_FALSE(r.valid());
  EXPECT_TRUE(r.summary.cancelled);
  EXPECT_TRUE(r.report.has_code("BEM_CANCELLED")) << r.report.to_text("cancel.zip");
  EXPECT_EQ(r.summary.decoded_bytes, 0u);

  // A binary package with zstd payloads and a collection stop the same way.
  auto bin = bem::validate_package(testkit::make_valid_package(3).binary(true), o);
  EXPECT_TRUE(bin.summary.cancelled);
  EXPECT_TRUE(bin.report.has_code("BEM_CANCELLED")) << bin.report.to_text("cancel.bem");
  auto bundle = bem::validate_package(
      testkit::build_zip({{"a.bem", testkit::make_valid_package(1).binary()}}), o);
  EXPECT_TRUE(bundle.summary.cancelled);
  EXPECT_TRUE(bundle.report.has_code("BEM_CANCELLED"));
  EXPECT_FALSE(bundle.valid());
}

TEST(DecodeBudget, ZstdPayloadsCountToo) {
  const ByteVec bin = testkit::make_valid_package(3).binary(/*zstd=*/true);
  auto free_run = bem::validate_package(bin);
  ASSERT_TRUE(free_run.valid()) << free_run.report.to_text("zstd.bem");
  ASSERT_GT(free_run.summary.decoded_bytes, 0u);
  bem::ValidateOptions o;
  o.max_decoded_bytes = free_run.summary.decoded_bytes - 1;
  auto r = bem::validate_package(bin, o);
  EXPECT_TRUE(r.summary.budget_exceeded);
  EXPECT_TRUE(r.report.has_code("BEM_DECODE_BUDGET")) << r.report.to_text("zstd.bem");
  o.max_decoded_bytes = free_run.summary.decoded_bytes;
  EXPECT_TRUE(bem::validate_package(bin, o).valid());
}

// A 1 MiB collection member that declares 1 GiB: read, it is found short
// without a 1 GiB buffer ever existing; with a budget below the declaration
// it is refused before it is read.
TEST(DecodeBudget, CollectionMemberGrowsWithItsData) {
  ByteVec noise(kMiB);
  std::mt19937 rng(7);
  for (auto& b : noise) b = static_cast<std::uint8_t>(rng());
  Stored member;
  {
    // Incompressible data, DEFLATE "stored" blocks: about 1 MiB either way.
    z_stream z{};
    ASSERT_EQ(deflateInit2(&z, 0, Z_DEFLATED, -15, 9, Z_DEFAULT_STRATEGY), Z_OK);
    member.bytes.resize(deflateBound(&z, static_cast<uLong>(noise.size())));
    z.next_in = noise.data();
    z.avail_in = static_cast<uInt>(noise.size());
    z.next_out = member.bytes.data();
    z.avail_out = static_cast<uInt>(member.bytes.size());
    ASSERT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
    member.bytes.resize(z.total_out);
    deflateEnd(&z);
    member.crc =
        static_cast<std::uint32_t>(crc32(0, noise.data(), static_cast<uInt>(noise.size())));
    member.size = noise.size();
  }
  const std::uint64_t declared = 1024 * kMiB;  // still a DEFLATE ratio below 1032:1
  const ByteVec zip = write_zip({member}, {{"big.bem", 0, declared}});

  const long before = max_rss_kib();
  auto r = bem::validate_package(zip);
  const long grown_mib = (max_rss_kib() - before) / 1024;
  EXPECT_FALSE(r.valid());
  ASSERT_EQ(r.summary.members.size(), 1u);
  EXPECT_TRUE(r.summary.members[0].report.has_code("BEM_ZIP_READ"))
      << r.summary.members[0].report.to_text("big.bem");
  EXPECT_LT(grown_mib, 256) << "the member's buffer followed its declared size";

  bem::ValidateOptions o;
  o.max_decoded_bytes = 64 * kMiB;
  auto b = bem::validate_package(zip, o);
  EXPECT_TRUE(b.summary.budget_exceeded);
  EXPECT_TRUE(b.report.has_code("BEM_DECODE_BUDGET")) << b.report.to_text("big.zip");
  EXPECT_EQ(b.summary.decoded_bytes, 0u);
}

// ---- the memory budget ------------------------------------------------------

// A 100 KB archive whose one extra payload inflates to 96 MiB: under a
// 32 MiB memory budget it is refused before its buffer exists, and
// validation stops there. Without a budget it is valid and held whole.
TEST(MemoryBudget, APayloadThatCannotFitIsRefusedBeforeItsBufferExists) {
  const ByteVec zip = package_with_extra_payloads(deflated_zeros(96 * kMiB), 1, false);
  ASSERT_LT(zip.size(), 200'000u);
  bem::ValidateOptions o;
  o.max_memory_bytes = 32 * kMiB;
  const long before = max_rss_kib();
  auto r = bem::validate_package(zip, o);
  const long grown_mib = (max_rss_kib() - before) / 1024;
  EXPECT_FALSE(r.valid());
  EXPECT_TRUE(r.summary.memory_exceeded);
  EXPECT_FALSE(r.summary.budget_exceeded);
  EXPECT_TRUE(r.report.has_code("BEM_MEMORY_BUDGET")) << r.report.to_text("big.zip");
  EXPECT_LE(r.summary.peak_memory_bytes, 32 * kMiB);
  EXPECT_LT(grown_mib, 32) << "a 96 MiB buffer was mapped";
  for (const auto& i : r.report.issues()) {
    if (i.code == "BEM_MEMORY_BUDGET") {
      EXPECT_EQ(i.location.member, payload_name(testkit::make_valid_package(2).payloads.size()));
    }
  }

  auto free_run = bem::validate_package(zip);
  EXPECT_TRUE(free_run.valid()) << free_run.report.to_text("big.zip");
  EXPECT_FALSE(free_run.summary.memory_exceeded);
  EXPECT_GE(free_run.summary.peak_memory_bytes, 96 * kMiB);
}

// Several threads each hold a buffer; a payload that fits the budget once
// the others give theirs back waits for them instead of failing, so the
// report does not depend on the thread count, and the peak stays in budget.
TEST(MemoryBudget, ThreadsWaitForEachOthersBuffersRatherThanFail) {
  const ByteVec zip = package_with_extra_payloads(deflated_zeros(12 * kMiB), 6, false);
  auto free_run = bem::validate_package(zip);
  ASSERT_TRUE(free_run.valid()) << free_run.report.to_text("six.zip");
  bem::ValidateOptions o;
  o.threads = 4;
  o.max_memory_bytes = 20 * kMiB;  // one 12 MiB buffer at a time
  auto r = bem::validate_package(zip, o);
  EXPECT_TRUE(r.valid()) << r.report.to_text("six.zip");
  EXPECT_FALSE(r.summary.memory_exceeded);
  EXPECT_EQ(r.report.to_text("six.zip"), free_run.report.to_text("six.zip"));
  EXPECT_GE(r.summary.peak_memory_bytes, 12 * kMiB);
  EXPECT_LE(r.summary.peak_memory_bytes, 20 * kMiB);
}

// 400 000 empty objects are 1.2 MB of manifest text (a few KB as DEFLATE)
// and would hold about 38 MB once parsed: the parsed manifest counts, and
// a budget stops the parse at the value that would pass it.
TEST(MemoryBudget, TheParsedManifestCounts) {
  testkit::Json m = testkit::make_valid_package(2).manifest;
  m["format_version"] = "1.2";
  std::string text = m.dump();
  text.pop_back();
  text += R"(,"extensions_junk":[)";
  for (int i = 0; i < 400'000; ++i) text += i ? ",{}" : "{}";
  text += "]}";
  const ByteVec zip = zip_with_manifest(text);

  auto free_run = bem::validate_package(zip);
  EXPECT_FALSE(free_run.report.has_code("BEM_MEMORY_BUDGET"));
  EXPECT_GE(free_run.summary.peak_memory_bytes, 400'000u * core::kJsonBytesPerValue);

  bem::ValidateOptions o;
  o.max_memory_bytes = 16 * kMiB;
  auto r = bem::validate_package(zip, o);
  EXPECT_FALSE(r.valid());
  EXPECT_TRUE(r.summary.memory_exceeded);
  ASSERT_TRUE(r.report.has_code("BEM_MEMORY_BUDGET")) << r.report.to_text("junk.zip");
  for (const auto& i : r.report.issues()) {
    if (i.code == "BEM_MEMORY_BUDGET") {
      EXPECT_EQ(i.location.member, "manifest.json");
      EXPECT_EQ(i.location.pointer.rfind("/extensions_junk/", 0), 0u) << i.location.pointer;
    }
  }
  EXPECT_LE(r.summary.peak_memory_bytes, 16 * kMiB);
}

// A collection member's buffer is held too: a 1 MiB member under a budget
// of half that is refused while it is read.
TEST(MemoryBudget, CollectionMembersAreHeld) {
  const ByteVec member = testkit::make_valid_package(1).binary();
  ByteVec padded = member;
  padded.resize(member.size() + 2 * kMiB, 0);  // trailing bytes: read, then refused as junk
  const ByteVec bundle = testkit::build_zip({{"a.bem", padded, std::uint16_t{8}}});
  bem::ValidateOptions o;
  o.max_memory_bytes = kMiB;
  auto r = bem::validate_package(bundle, o);
  EXPECT_FALSE(r.valid());
  EXPECT_TRUE(r.summary.memory_exceeded);
  ASSERT_EQ(r.summary.members.size(), 1u);
  EXPECT_TRUE(r.summary.members[0].report.has_code("BEM_MEMORY_BUDGET"))
      << r.summary.members[0].report.to_text("a.bem");
  EXPECT_TRUE(r.report.has_code("BEM_MEMORY_BUDGET")) << r.report.to_text("bundle.zip");
}
