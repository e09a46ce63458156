// BEM writer (docs/bem/writer.md): binary layout against bytes built by hand
// from §2, version choice (§1) at every boundary, deduplication and
// renumbering, determinism, limits, round trips binary ⇄ ZIP, folders.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "charkit/bem/container.h"
#include "charkit/bem/folder.h"
#include "charkit/bem/validate.h"
#include "charkit/bem/writer.h"
#include "charkit/core/json.h"
#include "mesh_test_util.h"
#include "morph_test_support.h"
#include "package_builder.h"

namespace charkit {
namespace {

using bem::PackageContent;
using bem::WriteOptions;
using core::Json;
using testkit::ByteVec;
using testkit::TestPackage;

PackageContent content_of(const TestPackage& p) {
  return PackageContent{p.manifest, p.payloads, {}};
}

void put(ByteVec& b, std::uint64_t v, int n) {
  for (int i = 0; i < n; ++i) b.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}

std::uint16_t header_minor(const ByteVec& f) {
  return static_cast<std::uint16_t>(f.at(10) | f.at(11) << 8);
}

/// Read a written package back with the reader: manifest and decoded payloads.
PackageContent read_back(const ByteVec& bytes) {
  auto c = bem::read_package_content(bytes);
  EXPECT_TRUE(c.ok()) << (c.ok() ? "" : c.error().to_string());
  return c.ok() ? std::move(*c) : PackageContent{};
}

// ---- §2 layout, built by hand -----------------------------------------------

TEST(Writer, BinaryMatchesHandBuiltLayout) {
  TestPackage p = testkit::make_valid_package(1);
  PackageContent c = content_of(p);
  c.manifest_text = p.manifest.dump();  // kept byte for byte: nothing to renumber
  WriteOptions o;
  o.zstd_level = 3;
  auto w = bem::write_binary(c, o);
  ASSERT_TRUE(w.ok()) << w.error().to_string();

  // §2 by hand: header, manifest, directory, payloads in id order; a payload
  // is a zstd frame only where that frame is smaller than its bytes.
  const std::string& m = c.manifest_text;
  std::vector<ByteVec> stored;
  std::vector<bool> zstd;
  for (const auto& raw : p.payloads) {
    ByteVec frame = testkit::zstd_frame(raw, 3);
    zstd.push_back(frame.size() < raw.size());
    stored.push_back(zstd.back() ? frame : raw);
  }
  const std::uint64_t dir = 40 + m.size();
  std::uint64_t size = dir + 32 * p.payloads.size();
  for (const auto& s : stored) size += s.size();
  ByteVec expected = {'B', 'E', 'M', 0, 'P', 'K', 'G', 0};
  put(expected, 1, 2);                  // major
  put(expected, 1, 2);                  // minor: the content needs 1.1
  put(expected, 40, 4);                 // header_size
  put(expected, size, 8);               // file_size
  put(expected, m.size(), 8);           // manifest_size
  put(expected, p.payloads.size(), 4);  // payload_count
  put(expected, 0, 4);                  // flags
  expected.insert(expected.end(), m.begin(), m.end());
  std::uint64_t offset = dir + 32 * p.payloads.size();
  for (std::size_t i = 0; i < stored.size(); ++i) {
    put(expected, zstd[i] ? 1 : 0, 4);
    put(expected, 0, 4);
    put(expected, offset, 8);
    put(expected, stored[i].size(), 8);
    put(expected, p.payloads[i].size(), 8);
    offset += stored[i].size();
  }
  for (const auto& s : stored) expected.insert(expected.end(), s.begin(), s.end());
  EXPECT_EQ(w->bytes, expected);
  // The 4×4 texture of one grey value (payload 4) compresses; the 36 bytes
  // of positions (payload 0) do not become smaller as a frame.
  EXPECT_TRUE(zstd[4]);
  EXPECT_EQ(w->stats.compressed + w->stats.uncompressed, 5u);
  EXPECT_EQ(w->stats.minor, 1);
}

TEST(Writer, IncompressiblePayloadStaysRaw) {
  TestPackage p = testkit::make_valid_package(1);
  // A texture of bytes without repetition: no zstd frame can be smaller.
  ByteVec noise(64);
  std::uint32_t x = 0x12345678u;
  for (auto& b : noise) {
    x = x * 1664525u + 1013904223u;
    b = static_cast<std::uint8_t>(x >> 24);
  }
  p.payloads[4] = noise;
  auto w = bem::write_binary(content_of(p));
  ASSERT_TRUE(w.ok()) << w.error().to_string();
  core::Report rep;
  auto pkg = bem::Package::open(w->bytes, rep);
  ASSERT_TRUE(pkg);
  EXPECT_EQ(pkg->payloads()[4].codec, bem::Codec::kRaw);
  EXPECT_EQ(pkg->payloads()[4].stored_size, 64u);
}

// ---- §1 version choice ----------------------------------------------------

TestPackage with_root_offset(TestPackage p) {
  p.manifest["required_capabilities"].push_back("root-offset-v1");
  p.manifest["root_offset"] =
      Json{{"path", "Bip001"}, {"translation", Json::array({0.0, 0.04, 0.0})}};
  return p;
}

/// Draw 0 binds `n` textures at once (§11: 32 before 1.2, 64 from 1.2).
TestPackage with_bindings(TestPackage p, int n) {
  Json& textures = p.manifest["textures"];
  Json& bound = p.manifest["meshes"][0]["draws"][0]["textures"];
  const Json first = textures[0];
  for (int i = 1; i < n; ++i) {
    Json t = first;
    t["original_name"] = "T_actor_example_extra_" + std::to_string(i);
    textures.push_back(std::move(t));
    bound.push_back(i);
  }
  return p;
}

struct VersionCase {
  const char* name;
  TestPackage package;
  int minor;
};

TEST(Writer, WritesTheLowestVersionThatExpressesTheContent) {
  std::vector<VersionCase> cases = {
      {"1.0 appearances", testkit::make_valid_package(0), 0},
      {"1.1 option groups (built as 1.5)", testkit::make_valid_package(5), 1},
      {"1.2 32-byte skin", rules_test::with_skin32(5), 2},
      {"1.3 morph parameters", morphtest::with_morph(5), 3},
      {"1.4 explicit target", testkit::make_valid_package_v14(), 4},
      {"1.5 root offset", with_root_offset(testkit::make_valid_package(5)), 5},
      // 33 bindings in one selection need 1.2's limit of 64; 1.1
      // content otherwise (its ZIP used to be written as 1.1, which refuses it).
      {"1.2 by 33 texture bindings", with_bindings(testkit::make_valid_package(5), 33), 2},
      {"1.1 with 32 texture bindings", with_bindings(testkit::make_valid_package(5), 32), 1},
  };
  for (const auto& vc : cases) {
    SCOPED_TRACE(vc.name);
    auto bin = bem::write_binary(content_of(vc.package));
    ASSERT_TRUE(bin.ok()) << bin.error().to_string();
    EXPECT_EQ(header_minor(bin->bytes), vc.minor);
    EXPECT_EQ(bin->stats.minor, vc.minor);
    EXPECT_TRUE(bem::validate_package(bin->bytes).valid());

    WriteOptions hint;
    hint.format_version = true;
    auto zip = bem::write_zip(content_of(vc.package), hint);
    ASSERT_TRUE(zip.ok()) << zip.error().to_string();
    PackageContent back = read_back(zip->bytes);
    EXPECT_EQ(back.manifest.value("format_version", ""), "1." + std::to_string(vc.minor));
    EXPECT_TRUE(bem::validate_package(zip->bytes).valid());
  }
}

TEST(Writer, ForcedMinorMayBeHigherButNotLower) {
  PackageContent c = content_of(testkit::make_valid_package(1));
  WriteOptions o;
  o.minor = 3;
  auto up = bem::write_binary(c, o);
  ASSERT_TRUE(up.ok()) << up.error().to_string();
  EXPECT_EQ(header_minor(up->bytes), 3);
  EXPECT_EQ(up->stats.needed_minor, 1);

  // A §11 limit is named as the reason.
  o.minor = 1;
  auto low = bem::write_binary(content_of(with_bindings(testkit::make_valid_package(5), 33)), o);
  ASSERT_FALSE(low.ok());
  EXPECT_EQ(low.error().code, "BEM_WRITE_VERSION_TOO_LOW");
  EXPECT_NE(low.error().message.find("33 texture bindings"), std::string::npos)
      << low.error().message;

  PackageContent morph = content_of(morphtest::with_morph(5));
  o.minor = 2;
  auto down = bem::write_binary(morph, o);
  ASSERT_FALSE(down.ok());
  EXPECT_EQ(down.error().code, "BEM_WRITE_VERSION_TOO_LOW");
}

TEST(Writer, InvalidContentIsRefusedWithTheReport) {
  TestPackage p = testkit::make_valid_package(1);
  p.manifest["meshes"][0]["vertex_count"] = 4;  // streams hold 3 vertices
  core::Report report;
  auto w = bem::write_binary(content_of(p), {}, &report);
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.error().code, "BEM_WRITE_INVALID");
  EXPECT_TRUE(report.has_errors());
  EXPECT_NE(w.error().message.find(report.issues().front().code), std::string::npos);
}

// ---- §2 identical payloads share one id -----------------------------------

TEST(Writer, IdenticalPayloadsAreStoredOnceAndIdsRenumbered) {
  TestPackage p = testkit::make_valid_package(1);
  // Payloads: 0 pos, 1 uv, 2 skin, 3 indices, 4 texture, then
  // 5 = copy of 3 (indices of a second draw), 6 unreferenced, 7 = copy of 4
  // (a second texture).
  p.payloads.push_back(p.payloads[3]);
  p.payloads.push_back(ByteVec{1, 2, 3});
  p.payloads.push_back(p.payloads[4]);
  Json& m = p.manifest;
  Json draw = m["meshes"][0]["draws"][0];
  draw["indices"] = 5;
  draw["textures"] = Json::array({1});
  m["meshes"][0]["draws"].push_back(draw);
  Json tex = m["textures"][0];
  tex["payload"] = 7;
  tex["original_name"] = "T_actor_example_body_02_d";
  m["textures"].push_back(tex);

  core::Report report;
  auto w = bem::write_binary(content_of(p), {}, &report);
  ASSERT_TRUE(w.ok()) << w.error().to_string();
  EXPECT_EQ(w->stats.payloads_in, 8u);
  EXPECT_EQ(w->stats.payloads_out, 5u);
  EXPECT_EQ(w->stats.deduplicated, 2u);
  EXPECT_EQ(w->stats.unreferenced, 1u);
  EXPECT_TRUE(report.has_code("BEM_WRITE_UNREFERENCED_DROPPED"));

  PackageContent back = read_back(w->bytes);
  ASSERT_EQ(back.payloads.size(), 5u);
  // Original ids 0..4 keep their numbers; 5 → 3 and 7 → 4 (same bytes).
  const Json& bm = back.manifest;
  EXPECT_EQ(bm["meshes"][0]["streams"][0]["payload"], 0);
  EXPECT_EQ(bm["meshes"][0]["streams"][1]["payload"], 1);
  EXPECT_EQ(bm["meshes"][0]["streams"][2]["payload"], 2);
  EXPECT_EQ(bm["meshes"][0]["draws"][0]["indices"], 3);
  EXPECT_EQ(bm["meshes"][0]["draws"][1]["indices"], 3);
  EXPECT_EQ(bm["textures"][0]["payload"], 4);
  EXPECT_EQ(bm["textures"][1]["payload"], 4);
  for (std::size_t i = 0; i < 5; ++i) EXPECT_EQ(back.payloads[i], p.payloads[i]) << i;
  // Everything else in the manifest is unchanged.
  Json expected = m;
  expected["meshes"][0]["draws"][1]["indices"] = 3;
  expected["textures"][1]["payload"] = 4;
  EXPECT_EQ(bm, expected);
}

TEST(Writer, RenumbersCompactlyInOriginalOrder) {
  TestPackage p = testkit::make_valid_package(1);
  // Move every payload up by 2 ids, leaving 0 and 1 unused.
  p.payloads.insert(p.payloads.begin(), {ByteVec{9}, ByteVec{8}});
  for (auto& s : p.manifest["meshes"][0]["streams"]) s["payload"] = s["payload"].get<int>() + 2;
  p.manifest["meshes"][0]["draws"][0]["indices"] = 5;
  p.manifest["textures"][0]["payload"] = 6;
  auto w = bem::write_binary(content_of(p));
  ASSERT_TRUE(w.ok()) << w.error().to_string();
  PackageContent back = read_back(w->bytes);
  EXPECT_EQ(back.manifest, testkit::make_valid_package(1).manifest);
  EXPECT_EQ(back.payloads, testkit::make_valid_package(1).payloads);
}

TEST(Writer, FindsEveryPayloadReference) {
  TestPackage p = with_root_offset(morphtest::with_morph(5));
  p.manifest["drivers"] = Json::array({Json{{"sound", Json{{"payload", 6}}}}});
  p.manifest["appearances"] = Json::array({Json{{"preview", 7}}});
  auto refs = bem::find_payload_refs(p.manifest);
  std::vector<std::pair<std::string, std::uint32_t>> got;
  for (const auto& r : refs) got.emplace_back(r.pointer, r.id);
  std::vector<std::pair<std::string, std::uint32_t>> expected = {
      {"/meshes/0/streams/0/payload", 0},
      {"/meshes/0/streams/1/payload", 1},
      {"/meshes/0/streams/2/payload", 2},
      {"/meshes/0/draws/0/indices", 3},
      {"/textures/0/payload", 4},
      {"/appearances/0/preview", 7},
      {"/mesh_deformations/0/frames/1/payload", 5},
      {"/drivers/0/sound/payload", 6}};
  EXPECT_EQ(got, expected);
}

// ---- determinism ------------------------------------------------------------

TEST(Writer, SameBytesForAnyThreadCount) {
  TestPackage p = morphtest::with_morph(5);
  for (int i = 0; i < 20; ++i) {  // more payloads than threads
    ByteVec extra(1000 + 37 * static_cast<std::size_t>(i), static_cast<std::uint8_t>(i));
    p.payloads.push_back(extra);
  }
  WriteOptions o;
  o.keep_unreferenced = true;
  std::vector<ByteVec> bins, zips;
  core::ThreadPool pool(3);
  for (unsigned t : {1u, 2u, 4u, 0u}) {
    o.threads = t;
    o.executor = t == 0 ? &pool : nullptr;
    auto b = bem::write_binary(content_of(p), o);
    auto z = bem::write_zip(content_of(p), o);
    ASSERT_TRUE(b.ok() && z.ok());
    bins.push_back(b->bytes);
    zips.push_back(z->bytes);
  }
  EXPECT_EQ(bins[0], bins[1]);
  EXPECT_EQ(bins[0], bins[2]);
  EXPECT_EQ(zips[0], zips[1]);
  EXPECT_EQ(zips[0], zips[2]);
  EXPECT_EQ(bins[0], bins[3]);
  EXPECT_EQ(zips[0], zips[3]);
}

// ---- limits -----------------------------------------------------------------

TEST(Writer, PayloadOverTheLimitIsRefused) {
  TestPackage p = testkit::make_valid_package(1);
  p.payloads[4] = ByteVec((512u << 20) + 1, 0);
  auto w = bem::write_binary(content_of(p));
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.error().code, "BEM_WRITE_PAYLOAD_SIZE");
}

TEST(Writer, EmptyReferencedPayloadIsRefused) {
  TestPackage p = testkit::make_valid_package(1);
  p.payloads[3].clear();
  auto w = bem::write_zip(content_of(p));
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.error().code, "BEM_WRITE_MISSING_PAYLOAD");
  EXPECT_EQ(w.error().location.pointer, "/meshes/0/draws/0/indices");
}

TEST(Writer, ManifestOverFourMiBIsRefused) {
  TestPackage p = testkit::make_valid_package(1);
  p.manifest["notes"] = std::string(4u << 20, 'x');
  auto w = bem::write_binary(content_of(p));
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.error().code, "BEM_WRITE_MANIFEST_SIZE");
  auto z = bem::write_zip(content_of(p));
  ASSERT_FALSE(z.ok());
  EXPECT_EQ(z.error().code, "BEM_WRITE_MANIFEST_SIZE");
}

TEST(Writer, ReferenceToAMissingPayloadIsRefused) {
  TestPackage p = testkit::make_valid_package(1);
  p.manifest["textures"][0]["payload"] = 9;
  auto w = bem::write_binary(content_of(p));
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.error().code, "BEM_WRITE_MISSING_PAYLOAD");
  EXPECT_EQ(w.error().location.pointer, "/textures/0/payload");
}

// ---- round trips ---------------------------------------------------------------

ByteVec read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return ByteVec((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::vector<std::pair<std::string, ByteVec>> corpus() {
  std::vector<std::pair<std::string, ByteVec>> files;
  for (const auto& e : std::filesystem::directory_iterator(CHARKIT_TEST_DATA "/examples")) {
    auto ext = e.path().extension();
    if (ext == ".bem" || ext == ".zip")
      files.emplace_back(e.path().filename(), read_file(e.path()));
  }
  for (int m = 0; m <= 5; ++m) {
    auto p = testkit::make_valid_package(m);
    files.emplace_back("make_valid_package(" + std::to_string(m) + ")", p.binary(true));
    files.emplace_back("make_valid_package(" + std::to_string(m) + ").zip", p.zip());
  }
  files.emplace_back("make_valid_package_v14()", testkit::make_valid_package_v14().binary());
  return files;
}

TEST(Writer, CorpusSurvivesBinaryZipBinary) {
  auto files = corpus();
  ASSERT_GE(files.size(), 17u);
  for (const auto& [name, bytes] : files) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(bem::validate_package(bytes).valid());
    PackageContent in = read_back(bytes);
    WriteOptions o;
    auto bin = bem::write_binary(in, o);
    ASSERT_TRUE(bin.ok()) << bin.error().to_string();
    o.format_version = true;
    auto zip = bem::write_zip(read_back(bin->bytes), o);
    ASSERT_TRUE(zip.ok()) << zip.error().to_string();
    o.format_version = false;
    auto bin2 = bem::write_binary(read_back(zip->bytes), o);
    ASSERT_TRUE(bin2.ok()) << bin2.error().to_string();

    for (const ByteVec* out : {&bin->bytes, &zip->bytes, &bin2->bytes}) {
      auto r = bem::validate_package(*out);
      EXPECT_TRUE(r.valid()) << r.report.to_text(name);
      PackageContent c = read_back(*out);
      Json expected = in.manifest;
      expected.erase("format_version");
      c.manifest.erase("format_version");
      EXPECT_EQ(c.manifest, expected);
      EXPECT_EQ(c.payloads, in.payloads);
    }
    // A binary written from a ZIP never carries the hint; the header
    // holds the version, and the binary → ZIP → binary trip is exact.
    EXPECT_FALSE(read_back(bin2->bytes).manifest.contains("format_version"));
    EXPECT_EQ(bin->bytes, bin2->bytes);
  }
}

// ---- folders -----------------------------------------------------------------

class Folder : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("charkit_writer_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(Folder, UnpackThenReadBackValidates) {
  TestPackage p = morphtest::with_morph(5);
  ByteVec bin = p.binary(true);
  auto st = bem::unpack_package(bin, dir_.string());
  ASSERT_TRUE(st.ok()) << st.error().to_string();
  EXPECT_EQ(st->payloads, p.payloads.size());
  // manifest.json byte for byte as stored; payloads decoded.
  std::string text = p.manifest.dump();
  EXPECT_EQ(read_file(dir_ / "manifest.json"), ByteVec(text.begin(), text.end()));
  EXPECT_EQ(read_file(dir_ / "payloads" / "0005.bin"), p.payloads[5]);

  auto zip = bem::read_package_folder(dir_.string());
  ASSERT_TRUE(zip.ok()) << zip.error().to_string();
  auto r = bem::validate_package(*zip);
  EXPECT_TRUE(r.valid()) << r.report.to_text("folder");
  PackageContent back = read_back(*zip);
  EXPECT_EQ(back.manifest, p.manifest);
  EXPECT_EQ(back.payloads, p.payloads);
}

TEST_F(Folder, UnpackRefusesANonEmptyFolderUnlessForced) {
  ByteVec bin = testkit::make_valid_package(1).binary();
  std::filesystem::create_directories(dir_ / "payloads");
  std::ofstream(dir_ / "payloads" / "0009.bin") << "stale";
  auto st = bem::unpack_package(bin, dir_.string());
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, "BEM_UNPACK_NOT_EMPTY");
  bem::UnpackOptions force;
  force.force = true;
  ASSERT_TRUE(bem::unpack_package(bin, dir_.string(), force).ok());
  EXPECT_FALSE(std::filesystem::exists(dir_ / "payloads" / "0009.bin"));
  auto zip = bem::read_package_folder(dir_.string());
  ASSERT_TRUE(zip.ok());
  EXPECT_TRUE(bem::validate_package(*zip).valid());
}

TEST_F(Folder, RootLevelAndUnpaddedPayloadNamesAreRead) {
  TestPackage p = testkit::make_valid_package(1);
  std::filesystem::create_directories(dir_);
  std::string text = p.manifest.dump();
  std::ofstream(dir_ / "manifest.json", std::ios::binary) << text;
  std::ofstream(dir_ / "readme.txt") << "ignored";
  for (std::size_t i = 0; i < p.payloads.size(); ++i) {
    std::ofstream out(dir_ / (std::to_string(i) + ".bin"), std::ios::binary);
    out.write(reinterpret_cast<const char*>(p.payloads[i].data()),
              static_cast<std::streamsize>(p.payloads[i].size()));
  }
  auto zip = bem::read_package_folder(dir_.string());
  ASSERT_TRUE(zip.ok()) << zip.error().to_string();
  EXPECT_TRUE(bem::validate_package(*zip).valid());
  EXPECT_EQ(read_back(*zip).payloads, p.payloads);
}

TEST_F(Folder, SymlinksAreRefused) {
  TestPackage p = testkit::make_valid_package(1);
  ASSERT_TRUE(bem::unpack_package(p.binary(), dir_.string()).ok());
  std::filesystem::remove(dir_ / "payloads" / "0004.bin");
  std::filesystem::create_symlink("/etc/hostname", dir_ / "payloads" / "0004.bin");
  auto zip = bem::read_package_folder(dir_.string());
  ASSERT_FALSE(zip.ok());
  EXPECT_EQ(zip.error().code, "BEM_FOLDER_SYMLINK");
}

TEST_F(Folder, MissingManifestIsAnError) {
  std::filesystem::create_directories(dir_);
  auto zip = bem::read_package_folder(dir_.string());
  ASSERT_FALSE(zip.ok());
  EXPECT_EQ(zip.error().code, "BEM_FOLDER_NO_MANIFEST");
}

}  // namespace
}  // namespace charkit
