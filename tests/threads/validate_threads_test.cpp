// The payload pass on several threads (ValidateOptions::threads) gives the
// report of one thread: the same issues in the same order, the same counts
// and truncation, the decode budget running out at the same payload. This
// program also runs under ThreadSanitizer (scripts/test, the tsan preset).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "charkit/bem/container.h"
#include "charkit/bem/validate.h"
#include "charkit/core/json.h"
#include "charkit/core/parallel.h"
#include "package_builder.h"

using namespace charkit;
using testkit::ByteVec;
using testkit::Json;
using testkit::TestPackage;

namespace {

/// Bytes that zstd compresses well (a pattern) or not at all (noise).
ByteVec filler(std::size_t n, bool noise, std::uint32_t seed) {
  ByteVec b(n);
  std::mt19937 rng(seed);
  for (std::size_t i = 0; i < n; ++i)
    b[i] = noise ? static_cast<std::uint8_t>(rng()) : static_cast<std::uint8_t>((i * 7) % 251);
  return b;
}

/// A 1.2 package with faults in several payloads: a 12-byte skin stream
/// whose weights do not sum to one (payload 2), an index out of range
/// (payload 3), and eight unreferenced payloads of 1 KiB .. 384 KiB, half
/// of them noise (zstd gains nothing: an info each when stored as zstd).
TestPackage faulty_package() {
  TestPackage p = testkit::make_valid_package(2);
  Json& mesh = p.manifest["meshes"][0];
  mesh["streams"][2]["stride"] = 12;
  mesh["attributes"][2] = Json::array({12, 4, 4, 2, 0});
  mesh["attributes"].push_back(Json::array({13, 6, 4, 2, 8}));
  ByteVec skin;
  for (int v = 0; v < 3; ++v) {
    ByteVec w = testkit::u16_bytes({1000, 0, 0, 0});
    skin.insert(skin.end(), w.begin(), w.end());
    skin.insert(skin.end(), {0, 0, 0, 0});
  }
  p.payloads[2] = skin;
  p.payloads[3] = testkit::u16_bytes({0, 1, 3});
  const std::size_t kib[8] = {1, 3, 16, 40, 100, 160, 256, 384};
  for (std::uint32_t k = 0; k < 8; ++k) p.payloads.push_back(filler(kib[k] * 1024, k % 2 == 1, k));
  return p;
}

/// The binary form with zstd payloads, and the frame of `broken` given a
/// content size one larger than its payload (BEM_ZSTD_SIZE, found before
/// decoding).
ByteVec binary_with_bad_frame(const TestPackage& p, std::uint32_t broken) {
  testkit::BinaryLayout l;
  l.minor = static_cast<std::uint16_t>(p.minor);
  l.manifest = p.manifest.dump();
  for (const auto& d : p.payloads) l.payloads.push_back({d, true});
  ByteVec file = testkit::build_binary(l);
  bem::DirectoryEntry e;
  EXPECT_TRUE(bem::decode_directory_entry(
      file, testkit::directory_offset(l) + std::uint64_t{broken} * bem::kDirectoryEntrySize, e));
  // Frame header (RFC 8878 §3.1.1.1): magic, descriptor, [window], FCS.
  std::uint8_t* frame = file.data() + e.offset;
  const std::uint8_t fhd = frame[4];
  const bool single = (fhd >> 5) & 1;
  const int fcs_flag = fhd >> 6;
  const std::size_t fcs_at = 5 + (single ? 0 : 1) + std::size_t{(fhd & 3) == 3 ? 4u : (fhd & 3u)};
  EXPECT_NE(fcs_flag == 0 && !single, true) << "the frame has no content size";
  frame[fcs_at] = static_cast<std::uint8_t>(frame[fcs_at] + 1);
  return file;
}

/// The ZIP form with one payload's stored bytes changed (BEM_ZIP_CRC, found
/// while decoding).
ByteVec zip_with_bad_crc(const TestPackage& p, std::uint32_t broken) {
  ByteVec file = p.zip();
  const ByteVec& data = p.payloads[broken];
  auto at = std::search(file.begin(), file.end(), data.begin(), data.end());
  EXPECT_NE(at, file.end());
  at[static_cast<std::ptrdiff_t>(data.size() / 2)] ^= 0x5A;
  return file;
}

struct Case {
  std::string name;
  ByteVec bytes;
  std::uint64_t budget = 0;
  std::size_t max_issues = 200;
};

std::vector<Case> corpus() {
  std::vector<Case> cases;
  for (int m = 0; m <= 5; ++m) {
    TestPackage p = testkit::make_valid_package(m);
    cases.push_back({"valid 1." + std::to_string(m), p.binary()});
    cases.push_back({"valid 1." + std::to_string(m) + " zstd", p.binary(true)});
    cases.push_back({"valid 1." + std::to_string(m) + " zip", p.zip()});
  }
  const TestPackage f = faulty_package();
  cases.push_back({"faulty", f.binary()});
  cases.push_back({"faulty zstd", f.binary(true)});
  cases.push_back({"faulty zip deflate", f.zip(true)});
  cases.push_back({"faulty bad frame", binary_with_bad_frame(f, 9)});
  cases.push_back({"faulty bad crc", zip_with_bad_crc(f, 7)});
  cases.push_back({"faulty, 3 issues kept", f.binary(true), 0, 3});
  // The budget runs out part way: at payload 8, 9 or 10 of 13.
  std::uint64_t before = 0;
  for (std::size_t i = 0; i < f.payloads.size(); ++i) {
    if (i >= 8 && i <= 10)
      cases.push_back({"faulty, budget ends at payload " + std::to_string(i), f.binary(true),
                       before + f.payloads[i].size() - 1});
    before += f.payloads[i].size();
  }
  for (const auto& e :
       std::filesystem::directory_iterator(std::string(CHARKIT_TEST_DATA) + "/examples")) {
    if (e.path().extension() != ".bem" && e.path().extension() != ".zip") continue;
    std::ifstream in(e.path(), std::ios::binary);
    cases.push_back(
        {e.path().filename().string(), ByteVec{std::istreambuf_iterator<char>(in), {}}});
  }
  return cases;
}

bem::ValidationResult validate(const Case& c, unsigned threads, core::Executor* ex = nullptr) {
  bem::ValidateOptions o;
  o.threads = threads;
  o.executor = ex;
  o.max_decoded_bytes = c.budget;
  o.max_issues = c.max_issues;
  return bem::validate_package(c.bytes, o);
}

void expect_same(const bem::ValidationResult& one, const bem::ValidationResult& many) {
  EXPECT_EQ(many.report.to_text("pkg"), one.report.to_text("pkg"));
  EXPECT_EQ(many.report.to_json_issues(), one.report.to_json_issues());
  EXPECT_EQ(many.report.num_errors(), one.report.num_errors());
  EXPECT_EQ(many.report.num_warnings(), one.report.num_warnings());
  EXPECT_EQ(many.report.num_infos(), one.report.num_infos());
  EXPECT_EQ(many.report.truncated(), one.report.truncated());
  EXPECT_EQ(many.valid(), one.valid());
  EXPECT_EQ(many.summary.decoded_bytes, one.summary.decoded_bytes);
  EXPECT_EQ(many.summary.budget_exceeded, one.summary.budget_exceeded);
}

}  // namespace

// The corpus holds what it is meant to: every fault is found by one thread.
TEST(ValidateThreads, TheCorpusHasItsFaults) {
  auto cases = corpus();
  auto find = [&](const std::string& name) {
    auto it =
        std::find_if(cases.begin(), cases.end(), [&](const Case& c) { return c.name == name; });
    EXPECT_NE(it, cases.end()) << name;
    return validate(*it, 1);
  };
  auto faulty = find("faulty zstd");
  for (const char* code : {"BEM_INDEX_RANGE", "BEM_SKIN_WEIGHT_SUM", "BEM_PAYLOAD_UNREFERENCED",
                           "BEM_PAYLOAD_ZSTD_NO_GAIN"})
    EXPECT_TRUE(faulty.report.has_code(code)) << code << "\n" << faulty.report.to_text("pkg");
  EXPECT_TRUE(find("faulty bad frame").report.has_code("BEM_ZSTD_SIZE"));
  EXPECT_TRUE(find("faulty bad crc").report.has_code("BEM_ZIP_CRC"));
  EXPECT_TRUE(find("faulty, 3 issues kept").report.truncated());
  auto budget = find("faulty, budget ends at payload 9");
  EXPECT_TRUE(budget.summary.budget_exceeded);
  EXPECT_TRUE(budget.report.has_code("BEM_DECODE_BUDGET"));
  // Nothing after payload 9 was decoded: payloads 10.. are not reported.
  EXPECT_EQ(budget.report.to_text("pkg").find("payload 10 "), std::string::npos)
      << budget.report.to_text("pkg");
  EXPECT_TRUE(find("example-1.5.bem").valid());
}

TEST(ValidateThreads, ReportsEqualOneThreadsWhateverTheThreadCount) {
  core::ThreadPool pool(4);
  for (const Case& c : corpus()) {
    SCOPED_TRACE(c.name);
    const bem::ValidationResult one = validate(c, 1);
    for (unsigned threads : {2u, 3u, 8u, 0u}) {
      SCOPED_TRACE("threads " + std::to_string(threads));
      expect_same(one, validate(c, threads));
    }
    SCOPED_TRACE("a pool of 4, threads 0");
    expect_same(one, validate(c, 0, &pool));
  }
}

// The same package many times over, so the pieces really interleave.
TEST(ValidateThreads, RepeatedRunsAgree) {
  const Case c{"faulty zstd", faulty_package().binary(true)};
  const std::string one = validate(c, 1).report.to_text("pkg");
  for (int run = 0; run < 20; ++run) ASSERT_EQ(validate(c, 4).report.to_text("pkg"), one) << run;
}

// Progress comes on the calling thread only, from 0 to the payload count,
// never going back.
TEST(ValidateThreads, ProgressOnTheCallingThreadInOrder) {
  const ByteVec bytes = faulty_package().binary(true);
  std::mutex m;
  std::vector<std::pair<std::size_t, std::size_t>> calls;
  std::vector<std::thread::id> callers;
  bem::ValidateOptions o;
  o.threads = 3;
  o.progress = [&](std::size_t done, std::size_t total) {
    std::lock_guard lock(m);
    calls.emplace_back(done, total);
    callers.push_back(std::this_thread::get_id());
  };
  bem::validate_package(bytes, o);
  ASSERT_GE(calls.size(), 2u);
  EXPECT_EQ(calls.front(), std::make_pair(std::size_t{0}, std::size_t{13}));
  EXPECT_EQ(calls.back(), std::make_pair(std::size_t{13}, std::size_t{13}));
  for (std::size_t i = 1; i < calls.size(); ++i) EXPECT_LE(calls[i - 1].first, calls[i].first);
  for (auto id : callers) EXPECT_EQ(id, std::this_thread::get_id());
}

// A cancel flag raised before the pass stops it on every thread count.
TEST(ValidateThreads, CancelStopsEveryPiece) {
  const ByteVec bytes = faulty_package().binary(true);
  std::atomic<bool> cancel{true};
  for (unsigned threads : {1u, 4u}) {
    bem::ValidateOptions o;
    o.threads = threads;
    o.cancel = &cancel;
    auto r = bem::validate_package(bytes, o);
    EXPECT_TRUE(r.report.has_code("BEM_CANCELLED")) << r.report.to_text("pkg");
    EXPECT_FALSE(r.valid());
  }
}
