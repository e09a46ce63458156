// ZIP container (§14): a hand-written STORED archive, then one archive per
// ZIP rule; collection bundles.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "charkit/bem/container.h"
#include "charkit/bem/detail/context.h"
#include "charkit/bem/validate.h"
#include "charkit/core/json.h"
#include "package_builder.h"

using namespace charkit;
using testkit::ByteVec;
using testkit::ZipEntry;

namespace {

using testkit::payload_name;
using testkit::u16le;
using testkit::u32le;

// CRC-32 (ISO 3309, reflected 0xEDB88320), written out so the golden archive
// does not depend on zlib.
std::uint32_t crc32_of(const ByteVec& d) {
  std::uint32_t c = 0xFFFFFFFFu;
  for (std::uint8_t byte : d) {
    c ^= byte;
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
  }
  return ~c;
}

ByteVec to_bytes(const std::string& s) {
  return ByteVec(s.begin(), s.end());
}

// Entries of a package: manifest.json (+format_version) and numbered payloads.
std::vector<ZipEntry> entries_of(const testkit::TestPackage& p, bool with_version = true) {
  testkit::Json m = p.manifest;
  if (with_version) m["format_version"] = "1." + std::to_string(p.minor);
  std::vector<ZipEntry> e;
  e.push_back({"manifest.json", to_bytes(m.dump())});
  for (std::size_t i = 0; i < p.payloads.size(); ++i) e.push_back({payload_name(i), p.payloads[i]});
  return e;
}

bem::ValidationResult check_zip(const ByteVec& b) {
  return bem::validate_package(b);
}

bool any_message_contains(const core::Report& r, const std::string& text) {
  return std::any_of(r.issues().begin(), r.issues().end(), [&](const core::Issue& i) {
    return i.message.find(text) != std::string::npos;
  });
}

std::unique_ptr<bem::Package> open(const ByteVec& b, core::Report& report) {
  return bem::Package::open(b, report);
}

}  // namespace

// ---- golden bytes ---------------------------------------------------------

// A STORED archive written field by field from PKWARE's APPNOTE: local file
// headers, central directory, end of central directory record.
TEST(ZipContainerGolden, StoredArchiveByteByByte) {
  testkit::TestPackage p = testkit::make_valid_package(2);
  std::vector<std::pair<std::string, ByteVec>> files;
  testkit::Json m = p.manifest;
  m["format_version"] = "1.2";
  files.push_back({"manifest.json", to_bytes(m.dump())});
  for (std::size_t i = 0; i < p.payloads.size(); ++i)
    files.push_back({payload_name(i), p.payloads[i]});

  ByteVec zip, central;
  std::vector<std::uint32_t> offsets;
  for (const auto& [name, data] : files) {
    offsets.push_back(static_cast<std::uint32_t>(zip.size()));
    zip.insert(zip.end(), {0x50, 0x4B, 0x03, 0x04});      // local file header signature
    zip.insert(zip.end(), {0x14, 0x00});                  // version needed: 2.0
    zip.insert(zip.end(), {0x00, 0x00});                  // general purpose flags
    zip.insert(zip.end(), {0x00, 0x00});                  // method 0: STORED
    zip.insert(zip.end(), {0x00, 0x00});                  // time 00:00:00
    zip.insert(zip.end(), {0x21, 0x00});                  // date 1980-01-01
    u32le(zip, crc32_of(data));                           // CRC-32
    u32le(zip, static_cast<std::uint32_t>(data.size()));  // compressed size
    u32le(zip, static_cast<std::uint32_t>(data.size()));  // uncompressed size
    u16le(zip, static_cast<std::uint16_t>(name.size()));  // file name length
    zip.insert(zip.end(), {0x00, 0x00});                  // extra field length
    zip.insert(zip.end(), name.begin(), name.end());
    zip.insert(zip.end(), data.begin(), data.end());
  }
  for (std::size_t i = 0; i < files.size(); ++i) {
    const auto& [name, data] = files[i];
    central.insert(central.end(), {0x50, 0x4B, 0x01, 0x02});  // central header signature
    central.insert(central.end(), {0x14, 0x03});              // made by: 2.0, UNIX
    central.insert(central.end(), {0x14, 0x00});              // version needed: 2.0
    central.insert(central.end(), {0x00, 0x00});              // flags
    central.insert(central.end(), {0x00, 0x00});              // STORED
    central.insert(central.end(), {0x00, 0x00, 0x21, 0x00});  // time, date
    u32le(central, crc32_of(data));
    u32le(central, static_cast<std::uint32_t>(data.size()));
    u32le(central, static_cast<std::uint32_t>(data.size()));
    u16le(central, static_cast<std::uint16_t>(name.size()));
    central.insert(central.end(), {0x00, 0x00});              // extra length
    central.insert(central.end(), {0x00, 0x00});              // comment length
    central.insert(central.end(), {0x00, 0x00});              // disk number start
    central.insert(central.end(), {0x00, 0x00});              // internal attributes
    central.insert(central.end(), {0x00, 0x00, 0xA4, 0x81});  // external: -rw-r--r--
    u32le(central, offsets[i]);                               // local header offset
    central.insert(central.end(), name.begin(), name.end());
  }
  std::uint32_t cd_offset = static_cast<std::uint32_t>(zip.size());
  zip.insert(zip.end(), central.begin(), central.end());
  zip.insert(zip.end(), {0x50, 0x4B, 0x05, 0x06});       // end of central directory
  zip.insert(zip.end(), {0x00, 0x00, 0x00, 0x00});       // this disk, disk with the CD
  u16le(zip, static_cast<std::uint16_t>(files.size()));  // entries on this disk
  u16le(zip, static_cast<std::uint16_t>(files.size()));  // entries in total
  u32le(zip, static_cast<std::uint32_t>(central.size()));
  u32le(zip, cd_offset);
  zip.insert(zip.end(), {0x00, 0x00});  // comment length

  auto r = check_zip(zip);
  EXPECT_TRUE(r.valid()) << r.report.to_text("golden.zip");
  EXPECT_EQ(r.summary.kind, bem::ContainerKind::kZip);
  EXPECT_EQ(r.summary.declared_minor, 2);

  core::Report report;
  auto pkg = bem::open_zip(zip, report);
  ASSERT_TRUE(pkg) << report.to_text("golden.zip");
  EXPECT_EQ(pkg->kind(), bem::ContainerKind::kZip);
  EXPECT_EQ(pkg->manifest_member(), "manifest.json");
  EXPECT_EQ(pkg->manifest_text(), m.dump());
  ASSERT_EQ(pkg->payload_count(), 5u);
  for (std::uint32_t i = 0; i < 5; ++i) {
    const auto& info = pkg->payloads()[i];
    EXPECT_TRUE(info.present);
    EXPECT_EQ(info.codec, bem::Codec::kZipStored);
    EXPECT_EQ(info.member, payload_name(i));
    EXPECT_EQ(info.decoded_size, p.payloads[i].size());
    auto data = pkg->read_payload(i);
    ASSERT_TRUE(data) << data.error().to_string();
    EXPECT_TRUE(std::equal(data->bytes().begin(), data->bytes().end(), p.payloads[i].begin(),
                           p.payloads[i].end()));
  }
}

// ---- layouts that are valid ----------------------------------------------

TEST(ZipContainer, DeflateEntries) {
  for (int minor = 0; minor <= 5; ++minor) {
    auto p = testkit::make_valid_package(minor);
    ByteVec b = p.zip(/*deflate=*/true);
    auto r = check_zip(b);
    EXPECT_TRUE(r.valid()) << "1." << minor << "\n" << r.report.to_text("deflate.zip");
    core::Report report;
    auto pkg = open(b, report);
    ASSERT_TRUE(pkg);
    EXPECT_EQ(pkg->payloads()[0].codec, bem::Codec::kZipDeflate);
    auto data = pkg->read_payload(4);
    ASSERT_TRUE(data);
    EXPECT_EQ(data->size(), 64u);
  }
}

TEST(ZipContainer, Zip64EntriesAndEndRecords) {
  auto p = testkit::make_valid_package(3);
  auto entries = entries_of(p);
  for (auto& e : entries) e.zip64 = true;
  auto r = check_zip(testkit::build_zip(entries));
  EXPECT_TRUE(r.valid()) << r.report.to_text("zip64-entries.zip");
  auto r2 = check_zip(testkit::build_zip(entries_of(p), {/*zip64_end=*/true}));
  EXPECT_TRUE(r2.valid()) << r2.report.to_text("zip64-end.zip");
  auto both = entries_of(p);
  for (auto& e : both) {
    e.zip64 = true;
    e.method = 8;
  }
  auto r3 = check_zip(testkit::build_zip(both, {true}));
  EXPECT_TRUE(r3.valid()) << r3.report.to_text("zip64-both.zip");
}

TEST(ZipContainer, SingleTopLevelFolderIsTheRoot) {
  auto p = testkit::make_valid_package(1);
  ByteVec b = p.zip(false, true, "My Package/");
  auto r = check_zip(b);
  EXPECT_TRUE(r.valid()) << r.report.to_text("folder.zip");
  core::Report report;
  auto pkg = open(b, report);
  ASSERT_TRUE(pkg);
  EXPECT_EQ(pkg->manifest_member(), "My Package/manifest.json");
  EXPECT_EQ(pkg->payload_count(), 5u);
  // With explicit directory entries and macOS metadata next to it.
  auto entries = entries_of(p);
  for (auto& e : entries) e.name = "pkg/" + e.name;
  entries.insert(entries.begin(), ZipEntry{"pkg/", {}});
  entries.push_back({"pkg/payloads/", {}});
  entries.push_back({"__MACOSX/pkg/._manifest.json", {1, 2, 3}});
  auto r2 = check_zip(testkit::build_zip(entries));
  EXPECT_TRUE(r2.valid()) << r2.report.to_text("folder2.zip");
}

TEST(ZipContainer, TwoTopLevelFoldersHaveNoManifest) {
  auto p = testkit::make_valid_package(1);
  auto entries = entries_of(p);
  for (auto& e : entries) e.name = "a/" + e.name;
  entries.push_back({"b/readme.txt", to_bytes("hello")});
  auto r = check_zip(testkit::build_zip(entries));
  EXPECT_FALSE(r.valid());
  EXPECT_TRUE(r.report.has_code("BEM_ZIP_NO_MANIFEST"));
  // One folder plus a file at the root: the folder is not unwrapped either.
  auto entries2 = entries_of(p);
  for (auto& e : entries2) e.name = "a/" + e.name;
  entries2.push_back({"readme.txt", to_bytes("hello")});
  EXPECT_TRUE(check_zip(testkit::build_zip(entries2)).report.has_code("BEM_ZIP_NO_MANIFEST"));
  // A manifest two levels down is not found.
  auto deep = entries_of(p);
  for (auto& e : deep) e.name = "a/b/" + e.name;
  EXPECT_TRUE(check_zip(testkit::build_zip(deep)).report.has_code("BEM_ZIP_NO_MANIFEST"));
}

TEST(ZipContainer, NoManifestAtAll) {
  auto r = check_zip(testkit::build_zip({{"readme.txt", to_bytes("hello")}}));
  EXPECT_FALSE(r.valid());
  EXPECT_TRUE(r.report.has_code("BEM_ZIP_NO_MANIFEST"));
}

TEST(ZipContainer, UnpaddedAndRootLevelPayloadNames) {
  auto p = testkit::make_valid_package(2);
  auto entries = entries_of(p);
  entries[1].name = "payloads/0.bin";  // unpadded
  entries[2].name = "0001.bin";        // padded, at the root
  entries[3].name = "2.bin";           // unpadded, at the root
  entries.push_back({"preview.png", {0x89, 'P', 'N', 'G'}});
  ByteVec b = testkit::build_zip(entries);
  auto r = check_zip(b);
  EXPECT_TRUE(r.valid()) << r.report.to_text("names.zip");
  core::Report report;
  auto pkg = open(b, report);
  ASSERT_TRUE(pkg);
  ASSERT_EQ(pkg->payload_count(), 5u);
  EXPECT_EQ(pkg->payloads()[0].member, "payloads/0.bin");
  EXPECT_EQ(pkg->payloads()[1].member, "0001.bin");
  EXPECT_EQ(pkg->payloads()[2].member, "2.bin");
  EXPECT_EQ(pkg->payloads()[3].member, "payloads/0003.bin");
}

TEST(ZipContainer, UnrecognisedPayloadNameWarns) {
  auto p = testkit::make_valid_package(1);
  auto entries = entries_of(p);
  entries.push_back({"payloads/007.bin", {1}});  // neither 4-digit nor unpadded
  auto r = check_zip(testkit::build_zip(entries));
  EXPECT_TRUE(r.valid()) << r.report.to_text("x.zip");
  EXPECT_TRUE(r.report.has_code("BEM_ZIP_PAYLOAD_NAME"));
}

TEST(ZipContainer, DuplicatePayloadNumbers) {
  auto p = testkit::make_valid_package(1);
  auto entries = entries_of(p);
  entries.push_back({"payloads/3.bin", p.payloads[3]});
  auto r = check_zip(testkit::build_zip(entries));
  EXPECT_FALSE(r.valid());
  EXPECT_TRUE(r.report.has_code("BEM_ZIP_DUPLICATE_PAYLOAD"));
  auto root = entries_of(p);
  root.push_back({"0004.bin", p.payloads[4]});
  EXPECT_TRUE(check_zip(testkit::build_zip(root)).report.has_code("BEM_ZIP_DUPLICATE_PAYLOAD"));
}

TEST(ZipContainer, DuplicateEntryNames) {
  auto p = testkit::make_valid_package(1);
  auto entries = entries_of(p);
  entries.push_back(entries[0]);
  auto r = check_zip(testkit::build_zip(entries));
  EXPECT_FALSE(r.valid());
  EXPECT_TRUE(r.report.has_code("BEM_ZIP_DUPLICATE_ENTRY"));
}

TEST(ZipContainer, MissingPayloadMessage) {
  auto p = testkit::make_valid_package(1);
  auto entries = entries_of(p);
  entries.erase(entries.begin() + 4);  // payloads/0003.bin: the draw's indices
  ByteVec b = testkit::build_zip(entries);
  core::Report report;
  auto pkg = open(b, report);
  ASSERT_TRUE(pkg);
  ASSERT_EQ(pkg->payload_count(), 5u);
  EXPECT_FALSE(pkg->payloads()[3].present);
  EXPECT_TRUE(report.has_code("BEM_ZIP_PAYLOAD_GAP"));
  auto read = pkg->read_payload(3);
  ASSERT_FALSE(read);
  EXPECT_NE(read.error().message.find("ZIP package is missing payload 3"), std::string::npos);

  // The shared payload hook reports it with the exact text.
  core::Report r2;
  bem::ValidateOptions options;
  bem::Context ctx(p.manifest, *pkg, r2, options, 1, true);
  EXPECT_FALSE(ctx.use_payload(3, 6, 6, bem::PayloadUse{bem::PayloadRole::kIndices, "/x"}));
  EXPECT_TRUE(any_message_contains(r2, "ZIP package is missing payload 3"));
  // A number past the last file too.
  EXPECT_FALSE(ctx.use_payload(9, 1, 1, bem::PayloadUse{}));
  EXPECT_TRUE(any_message_contains(r2, "ZIP package is missing payload 9"));

  // And the whole validator, once the manifest passes reference payloads.
  auto r = check_zip(b);
  EXPECT_FALSE(r.valid());
  EXPECT_TRUE(any_message_contains(r.report, "ZIP package is missing payload 3"))
      << r.report.to_text("missing.zip");
}

TEST(ZipContainer, EncryptedEntry) {
  auto p = testkit::make_valid_package(1);
  auto entries = entries_of(p);
  entries[2].flags = 1;  // general purpose bit 0: encrypted
  auto r = check_zip(testkit::build_zip(entries));
  EXPECT_FALSE(r.valid());
  EXPECT_TRUE(r.report.has_code("BEM_ZIP_ENCRYPTED"));
  auto m = entries_of(p);
  m[0].flags = 1;
  EXPECT_TRUE(check_zip(testkit::build_zip(m)).report.has_code("BEM_ZIP_ENCRYPTED"));
}

TEST(ZipContainer, UnsupportedMethods) {
  auto p = testkit::make_valid_package(1);
  for (int m : {12, 14, 93, 9}) {
    auto method = static_cast<std::uint16_t>(m);
    auto entries = entries_of(p);
    entries[1].method = method;
    auto r = check_zip(testkit::build_zip(entries));
    EXPECT_FALSE(r.valid()) << method;
    EXPECT_TRUE(r.report.has_code("BEM_ZIP_METHOD")) << method << r.report.to_text("m.zip");
  }
}

TEST(ZipContainer, TruncatedArchive) {
  ByteVec b = testkit::make_valid_package(1).zip();
  for (std::size_t keep :
       {b.size() - 1, b.size() - 30, b.size() / 2, std::size_t{30}, std::size_t{4}}) {
    ByteVec cut(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(keep));
    auto r = check_zip(cut);
    EXPECT_FALSE(r.valid()) << keep;
    EXPECT_TRUE(r.report.has_code("BEM_ZIP_OPEN")) << keep << r.report.to_text("cut.zip");
  }
}

TEST(ZipContainer, CrcMismatch) {
  auto p = testkit::make_valid_package(1);
  // Manifest: read while opening.
  auto entries = entries_of(p);
  ByteVec b = testkit::build_zip(entries);
  auto at = std::search(b.begin(), b.end(), entries[0].data.begin(), entries[0].data.end());
  ASSERT_NE(at, b.end());
  *(at + 1) = ' ';  // '{"schema"...' -> '{ schema"...': same size, different CRC
  auto r = check_zip(b);
  EXPECT_FALSE(r.valid());
  EXPECT_TRUE(r.report.has_code("BEM_ZIP_CRC")) << r.report.to_text("crc.zip");

  // A payload: reported when it is read.
  ByteVec b2 = testkit::build_zip(entries);
  ByteVec texture = p.payloads[4];
  auto t = std::search(b2.begin(), b2.end(), texture.begin(), texture.end());
  ASSERT_NE(t, b2.end());
  *t ^= 0x01;
  core::Report report;
  auto pkg = open(b2, report);
  ASSERT_TRUE(pkg) << report.to_text("crc2.zip");
  auto read = pkg->read_payload(4);
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().code, "BEM_ZIP_CRC");
  EXPECT_EQ(read.error().location.member, "payloads/0004.bin");
  EXPECT_TRUE(pkg->read_payload(3));
}

TEST(ZipContainer, EmptyAndOversizedEntries) {
  auto p = testkit::make_valid_package(1);
  auto entries = entries_of(p);
  entries[0].data.clear();  // empty manifest.json
  EXPECT_TRUE(check_zip(testkit::build_zip(entries)).report.has_code("BEM_MANIFEST_SIZE"));
  auto empty_payload = entries_of(p);
  empty_payload[2].data.clear();
  EXPECT_TRUE(
      check_zip(testkit::build_zip(empty_payload)).report.has_code("BEM_PAYLOAD_DECODED_SIZE"));
  // A manifest above 4 MiB (DEFLATE keeps the archive small).
  auto big = entries_of(p);
  big[0].data.assign((4u << 20) + 1, ' ');
  big[0].method = 8;
  EXPECT_TRUE(check_zip(testkit::build_zip(big)).report.has_code("BEM_MANIFEST_SIZE"));
}

TEST(ZipContainer, ImpossibleDeclaredSizes) {
  auto p = testkit::make_valid_package(1);
  ByteVec b = testkit::build_zip(entries_of(p));
  // Patch the uncompressed size of the first central directory record (the
  // manifest, STORED) so that it differs from the compressed size.
  const std::uint8_t sig[4] = {0x50, 0x4B, 0x01, 0x02};
  auto cd = std::search(b.begin(), b.end(), sig, sig + 4);
  ASSERT_NE(cd, b.end());
  std::size_t pos = static_cast<std::size_t>(cd - b.begin()) + 24;
  b[pos + 2] = 0x40;  // + 4 MiB
  auto r = check_zip(b);
  EXPECT_FALSE(r.valid());
  EXPECT_TRUE(r.report.has_code("BEM_ZIP_ENTRY_SIZE")) << r.report.to_text("size.zip");
}

// ---- versions -------------------------------------------------------------

TEST(ZipContainer, FormatVersionLowerThanContent) {
  auto p = testkit::make_valid_package(3);
  p.manifest["required_capabilities"].push_back("body-parameters");
  p.manifest["parameters"] = testkit::Json::array({testkit::Json{{"id", "body"},
                                                                 {"name", "Body"},
                                                                 {"min", 0},
                                                                 {"max", 1000},
                                                                 {"neutral", 0},
                                                                 {"default", 0},
                                                                 {"step", 1}}});
  auto ok = check_zip(p.zip());
  EXPECT_TRUE(ok.valid()) << ok.report.to_text("1.3.zip");
  p.minor = 2;  // format_version "1.2"
  auto r = check_zip(p.zip());
  EXPECT_FALSE(r.valid());
  EXPECT_TRUE(r.report.has_code("BEM_VERSION_TOO_LOW")) << r.report.to_text("1.2.zip");
  // Without a hint the version is inferred from the content.
  auto inferred = check_zip(p.zip(false, /*with_format_version=*/false));
  EXPECT_TRUE(inferred.valid()) << inferred.report.to_text("noversion.zip");
  EXPECT_EQ(inferred.summary.declared_minor, std::nullopt);
  EXPECT_EQ(inferred.summary.needed_minor, 3);
  EXPECT_TRUE(inferred.report.has_code("BEM_VERSION_INFERRED"));
}

TEST(ZipContainer, BadFormatVersion) {
  auto p = testkit::make_valid_package(1);
  auto entries = entries_of(p, false);
  testkit::Json m = p.manifest;
  m["format_version"] = "1.6";
  entries[0].data = to_bytes(m.dump());
  EXPECT_TRUE(check_zip(testkit::build_zip(entries)).report.has_code("BEM_FORMAT_VERSION"));
}

TEST(ZipContainer, EveryBaselineWithoutFormatVersion) {
  for (int minor = 0; minor <= 5; ++minor) {
    auto r = check_zip(testkit::make_valid_package(minor).zip(false, false));
    EXPECT_TRUE(r.valid()) << "1." << minor << "\n" << r.report.to_text("x.zip");
  }
}

// ---- collection bundles -----------------------------------------------------

TEST(ZipCollection, TwoValidMembers) {
  ByteVec a = testkit::make_valid_package(0).binary();
  ByteVec c = testkit::make_valid_package(3).binary(true);
  ByteVec b =
      testkit::build_zip({{"a.bem", a}, {"sub/c.bem", c, 8}, {"readme.txt", to_bytes("hi")}});
  auto r = check_zip(b);
  EXPECT_TRUE(r.valid()) << r.report.to_text("bundle.zip");
  EXPECT_EQ(r.summary.kind, bem::ContainerKind::kCollection);
  ASSERT_EQ(r.summary.members.size(), 2u);
  EXPECT_EQ(r.summary.members[0].name, "a.bem");
  EXPECT_EQ(r.summary.members[1].name, "sub/c.bem");
  EXPECT_EQ(r.summary.members[1].effective_minor, 3);
  for (const auto& m : r.summary.members) EXPECT_FALSE(m.report.has_errors()) << m.name;

  core::Report report;
  auto pkg = open(b, report);
  ASSERT_TRUE(pkg);
  EXPECT_EQ(pkg->kind(), bem::ContainerKind::kCollection);
  ASSERT_EQ(pkg->members().size(), 2u);
  auto m0 = pkg->read_member(0);
  ASSERT_TRUE(m0);
  EXPECT_TRUE(std::equal(m0->bytes().begin(), m0->bytes().end(), a.begin(), a.end()));
  EXPECT_FALSE(pkg->read_member(2));
}

TEST(ZipCollection, OneInvalidMember) {
  ByteVec good = testkit::make_valid_package(1).binary();
  ByteVec bad = good;
  bad[36] = 1;  // flags != 0
  auto r = check_zip(testkit::build_zip({{"good.bem", good}, {"bad.bem", bad}}));
  EXPECT_FALSE(r.valid());
  ASSERT_EQ(r.summary.members.size(), 2u);
  EXPECT_FALSE(r.summary.members[0].report.has_errors());
  EXPECT_TRUE(r.summary.members[1].report.has_code("BEM_HEADER_FLAGS"))
      << r.summary.members[1].report.to_text("bad.bem");
}

// The extension says nothing: members are recognised by their bytes, so a
// ZIP-form package named .bem and an upper-case .BEM both work.
TEST(ZipCollection, MembersRecognisedByBytes) {
  ByteVec zip_member = testkit::make_valid_package(2).zip(true);
  ByteVec bin_member = testkit::make_valid_package(4).binary();
  auto r = check_zip(testkit::build_zip({{"zipped.bem", zip_member}, {"BIG.BEM", bin_member}}));
  EXPECT_TRUE(r.valid()) << r.report.to_text("bundle.zip");
  ASSERT_EQ(r.summary.members.size(), 2u);
  for (const auto& m : r.summary.members)
    EXPECT_FALSE(m.report.has_errors()) << m.report.to_text(m.name);
  // Not a package at all, despite the name.
  auto r2 = check_zip(testkit::build_zip({{"fake.bem", to_bytes("not a package")}}));
  EXPECT_FALSE(r2.valid());
  ASSERT_EQ(r2.summary.members.size(), 1u);
  EXPECT_TRUE(r2.summary.members[0].report.has_code("BEM_CONTAINER_UNKNOWN"));
}

TEST(ZipCollection, NestedCollectionIsRejected) {
  ByteVec inner = testkit::build_zip({{"a.bem", testkit::make_valid_package(1).binary()}});
  auto r = check_zip(testkit::build_zip({{"inner.bem", inner}}));
  EXPECT_FALSE(r.valid());
  ASSERT_EQ(r.summary.members.size(), 1u);
  EXPECT_TRUE(r.summary.members[0].report.has_code("BEM_COLLECTION_NESTED"));
}

TEST(ZipCollection, ManifestWinsOverBemMembers) {
  auto p = testkit::make_valid_package(1);
  auto entries = entries_of(p);
  entries.push_back({"extra.bem", testkit::make_valid_package(0).binary()});
  auto r = check_zip(testkit::build_zip(entries));
  EXPECT_TRUE(r.valid()) << r.report.to_text("both.zip");
  EXPECT_EQ(r.summary.kind, bem::ContainerKind::kZip);
  EXPECT_TRUE(r.summary.members.empty());
  EXPECT_TRUE(r.report.has_code("BEM_ZIP_BEM_MEMBERS_IGNORED"));
}

TEST(ZipCollection, BundleEntriesAreCheckedToo) {
  ByteVec a = testkit::make_valid_package(1).binary();
  std::vector<ZipEntry> e = {{"a.bem", a}};
  e[0].flags = 1;
  EXPECT_TRUE(check_zip(testkit::build_zip(e)).report.has_code("BEM_ZIP_ENCRYPTED"));
  std::vector<ZipEntry> m = {{"a.bem", a, 14}};
  EXPECT_TRUE(check_zip(testkit::build_zip(m)).report.has_code("BEM_ZIP_METHOD"));
}

TEST(ZipContainer, BackslashSeparatorsAreReadAsSlashes) {
  auto p = testkit::make_valid_package(1);
  auto entries = entries_of(p);
  for (auto& e : entries) std::replace(e.name.begin(), e.name.end(), '/', '\\');
  auto r = check_zip(testkit::build_zip(entries));
  EXPECT_TRUE(r.valid()) << r.report.to_text("win.zip");
  EXPECT_TRUE(r.report.has_code("BEM_ZIP_BACKSLASH"));
}

TEST(ZipContainer, PayloadNumberAboveTheDirectoryLimit) {
  auto p = testkit::make_valid_package(2);
  auto entries = entries_of(p);
  entries.push_back({"payloads/16384.bin", {1}});
  auto r = check_zip(testkit::build_zip(entries));
  EXPECT_FALSE(r.valid());
  EXPECT_TRUE(r.report.has_code("BEM_ZIP_PAYLOAD_NUMBER"));
  // 16383 is the highest possible ID: allowed (unreferenced, with a gap warning).
  auto edge = entries_of(p);
  edge.push_back({"payloads/16383.bin", {1}});
  auto r2 = check_zip(testkit::build_zip(edge));
  EXPECT_TRUE(r2.valid()) << r2.report.to_text("edge.zip");
  EXPECT_TRUE(r2.report.has_code("BEM_ZIP_PAYLOAD_GAP"));
}

TEST(ZipContainer, RootPayloadsInsideTheTopLevelFolder) {
  auto p = testkit::make_valid_package(5);
  auto entries = entries_of(p);
  for (std::size_t i = 1; i < entries.size(); ++i) entries[i].name = std::to_string(i - 1) + ".bin";
  for (auto& e : entries) e.name = "wrapped/" + e.name;
  auto r = check_zip(testkit::build_zip(entries));
  EXPECT_TRUE(r.valid()) << r.report.to_text("wrapped.zip");
}

TEST(ZipContainer, ExtensionIsIrrelevant) {
  // validate_package sees bytes only; the same ZIP bytes are a package
  // whatever the file was called, and a binary file is never taken for a ZIP.
  ByteVec zip = testkit::make_valid_package(3).zip();
  ByteVec bin = testkit::make_valid_package(3).binary();
  EXPECT_EQ(check_zip(zip).summary.kind, bem::ContainerKind::kZip);
  EXPECT_EQ(check_zip(bin).summary.kind, bem::ContainerKind::kBinary);
  EXPECT_TRUE(check_zip(zip).valid());
  EXPECT_TRUE(check_zip(bin).valid());
}

// §11: more than 4096 payload numbers need BEM 1.2, as a binary directory does.
TEST(ZipContainer, MoreThan4096PayloadsNeed12) {
  for (int minor : {1, 2}) {
    auto p = testkit::make_valid_package(minor);
    testkit::Json m = p.manifest;
    m["format_version"] = "1." + std::to_string(minor);
    std::string text = m.dump();
    std::vector<testkit::ZipEntry> entries;
    entries.push_back({"manifest.json", testkit::ByteVec(text.begin(), text.end())});
    for (std::size_t i = 0; i < p.payloads.size(); ++i)
      entries.push_back({"payloads/" + std::to_string(i) + ".bin", p.payloads[i]});
    entries.push_back({"payloads/4096.bin", {1, 2, 3}});  // unreferenced: a warning only
    auto r = bem::validate_package(testkit::build_zip(entries));
    EXPECT_EQ(r.report.has_code("BEM_VERSION_TOO_LOW"), minor == 1) << r.report.to_text("zip");
    EXPECT_EQ(r.valid(), minor == 2) << r.report.to_text("zip");
  }
}
