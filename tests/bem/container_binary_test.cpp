// Binary container (§2): golden bytes written by hand from the spec, then one
// package per container rule, each expecting its error code.
#include <gtest/gtest.h>

#define ZSTD_STATIC_LINKING_ONLY  // ZSTD_getFrameHeader
#include <zstd.h>

#include <cstring>
#include <string>
#include <vector>

#include "charkit/bem/container.h"
#include "charkit/bem/validate.h"
#include "package_builder.h"

using namespace charkit;
using testkit::ByteVec;

namespace {

// Little-endian field writers for spelling out §2 structures in the test.
using testkit::u32le;
using testkit::u64le;

bool has(const core::Report& r, const char* code) {
  return r.has_code(code);
}

bem::ValidationResult check(const ByteVec& b) {
  return bem::validate_package(b);
}

// A layout with a given manifest and raw payloads (container checks only).
testkit::BinaryLayout layout(std::uint16_t minor, std::vector<ByteVec> payloads) {
  testkit::BinaryLayout l;
  l.minor = minor;
  l.manifest = "{}";
  for (auto& p : payloads) l.payloads.push_back({std::move(p), false});
  return l;
}

// The directory build_binary would write for l, for tests that bend one entry.
std::vector<testkit::DirectoryEntry> entries_of(const testkit::BinaryLayout& l) {
  std::vector<testkit::DirectoryEntry> d;
  std::uint64_t off = testkit::directory_offset(l) + 32ull * l.payloads.size();
  for (const auto& p : l.payloads) {
    d.push_back({0, 0, off, p.decoded.size(), p.decoded.size()});
    off += p.decoded.size();
  }
  return d;
}

// A binary file whose only payload has the given zstd-coded stored bytes.
ByteVec zstd_container(const ByteVec& stored, std::uint64_t decoded_size) {
  testkit::BinaryLayout l = layout(0, {stored});
  auto d = entries_of(l);
  d[0].codec = 1;
  d[0].decoded_size = decoded_size;
  return testkit::build_binary(l, d);
}

// Open and decode payload 0; the error code or "" on success.
std::string read_payload0(const ByteVec& file) {
  core::Report report;
  auto pkg = bem::open_binary(file, report);
  EXPECT_TRUE(pkg) << report.to_text("pkg");
  if (!pkg) return "OPEN";
  auto data = pkg->read_payload(0);
  if (!data) return data.error().code;
  return "";
}

ByteVec sample_data() {
  ByteVec d(300);
  for (std::size_t i = 0; i < d.size(); ++i) d[i] = static_cast<std::uint8_t>(i * 7 % 13);
  return d;
}

ByteVec compress_with(const ByteVec& data, bool content_size, bool checksum) {
  ZSTD_CCtx* c = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(c, ZSTD_c_contentSizeFlag, content_size ? 1 : 0);
  ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, checksum ? 1 : 0);
  ByteVec out(ZSTD_compressBound(data.size()));
  std::size_t n = ZSTD_compress2(c, out.data(), out.size(), data.data(), data.size());
  ZSTD_freeCCtx(c);
  EXPECT_FALSE(ZSTD_isError(n));
  out.resize(n);
  return out;
}

}  // namespace

// ---- golden bytes ---------------------------------------------------------

// A container with an empty directory, every byte written from §2's table.
TEST(BinaryContainerGolden, HeaderAndEmptyDirectoryByteByByte) {
  const ByteVec file = {
      0x42, 0x45, 0x4D, 0x00, 0x50, 0x4B, 0x47, 0x00,  // magic "BEM\0PKG\0"
      0x01, 0x00,                                      // major 1
      0x03, 0x00,                                      // minor 3
      0x28, 0x00, 0x00, 0x00,                          // header_size 40
      0x2A, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // file_size 42
      0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // manifest_size 2
      0x00, 0x00, 0x00, 0x00,                          // payload_count 0
      0x00, 0x00, 0x00, 0x00,                          // flags 0
      '{',  '}',                                       // manifest
  };
  ASSERT_EQ(file.size(), 42u);
  core::Report report;
  auto pkg = bem::open_binary(file, report);
  ASSERT_TRUE(pkg) << report.to_text("golden");
  EXPECT_FALSE(report.has_errors());
  EXPECT_EQ(pkg->kind(), bem::ContainerKind::kBinary);
  EXPECT_EQ(pkg->header().major, 1);
  EXPECT_EQ(pkg->header().minor, 3);
  EXPECT_EQ(pkg->header().header_size, 40u);
  EXPECT_EQ(pkg->header().file_size, 42u);
  EXPECT_EQ(pkg->header().manifest_size, 2u);
  EXPECT_EQ(pkg->declared_minor(), 3);
  EXPECT_EQ(pkg->manifest_text(), "{}");
  EXPECT_EQ(pkg->manifest_offset(), 40u);
  EXPECT_EQ(pkg->payload_count(), 0u);
}

// The 1.1 baseline package with its header and directory spelled out field
// by field (not through build_binary); it validates and Package exposes the
// values written.
TEST(BinaryContainerGolden, CompletePackageByteByByte) {
  testkit::TestPackage p = testkit::make_valid_package(1);
  const std::string manifest = p.manifest.dump();
  const std::uint64_t payload_count = p.payloads.size();  // 5
  const std::uint64_t dir_offset = 40 + manifest.size();
  const std::uint64_t data_offset = dir_offset + 32 * payload_count;
  std::uint64_t total = data_offset;
  for (const auto& d : p.payloads) total += d.size();

  ByteVec b;
  const std::uint8_t magic[8] = {0x42, 0x45, 0x4D, 0x00, 0x50, 0x4B, 0x47, 0x00};
  b.insert(b.end(), magic, magic + 8);
  b.insert(b.end(), {0x01, 0x00});              // major = 1
  b.insert(b.end(), {0x01, 0x00});              // minor = 1
  b.insert(b.end(), {0x28, 0x00, 0x00, 0x00});  // header_size = 40
  u64le(b, total);                              // file_size
  u64le(b, manifest.size());                    // manifest_size
  u32le(b, static_cast<std::uint32_t>(payload_count));
  b.insert(b.end(), {0x00, 0x00, 0x00, 0x00});  // flags = 0
  ASSERT_EQ(b.size(), 40u);
  b.insert(b.end(), manifest.begin(), manifest.end());
  std::uint64_t off = data_offset;
  for (const auto& d : p.payloads) {
    b.insert(b.end(), {0x00, 0x00, 0x00, 0x00});  // codec 0 = raw
    b.insert(b.end(), {0x00, 0x00, 0x00, 0x00});  // reserved
    u64le(b, off);                                // offset
    u64le(b, d.size());                           // stored_size
    u64le(b, d.size());                           // decoded_size
    off += d.size();
  }
  ASSERT_EQ(b.size(), data_offset);
  for (const auto& d : p.payloads) b.insert(b.end(), d.begin(), d.end());
  ASSERT_EQ(b.size(), total);

  auto r = check(b);
  EXPECT_TRUE(r.valid()) << r.report.to_text("golden");
  EXPECT_EQ(r.summary.kind, bem::ContainerKind::kBinary);
  EXPECT_EQ(r.summary.declared_minor, 1);
  EXPECT_EQ(r.summary.payload_count, 5u);

  core::Report report;
  auto pkg = bem::open_binary(b, report);
  ASSERT_TRUE(pkg);
  EXPECT_EQ(pkg->header().file_size, total);
  EXPECT_EQ(pkg->header().payload_count, 5u);
  ASSERT_EQ(pkg->payloads().size(), 5u);
  EXPECT_EQ(pkg->payloads()[0].offset, data_offset);
  EXPECT_EQ(pkg->payloads()[0].entry_offset, dir_offset);
  EXPECT_EQ(pkg->payloads()[4].entry_offset, dir_offset + 4 * 32);
  EXPECT_EQ(pkg->payloads()[4].decoded_size, 64u);
  EXPECT_EQ(pkg->payloads()[1].codec, bem::Codec::kRaw);
  auto data = pkg->read_payload(3);
  ASSERT_TRUE(data);
  EXPECT_EQ(data->size(), 6u);
  EXPECT_EQ(std::memcmp(data->bytes().data(), p.payloads[3].data(), 6), 0);
}

TEST(BinaryContainerGolden, ZstdPayloadsDecodeToTheirBytes) {
  testkit::TestPackage p = testkit::make_valid_package(2);
  ByteVec file = p.binary(/*zstd=*/true);
  core::Report report;
  auto pkg = bem::open_binary(file, report);
  ASSERT_TRUE(pkg) << report.to_text("pkg");
  for (std::uint32_t i = 0; i < p.payloads.size(); ++i) {
    EXPECT_EQ(pkg->payloads()[i].codec, bem::Codec::kZstd);
    auto data = pkg->read_payload(i);
    ASSERT_TRUE(data) << data.error().to_string();
    ASSERT_EQ(data->size(), p.payloads[i].size());
    EXPECT_EQ(std::memcmp(data->bytes().data(), p.payloads[i].data(), data->size()), 0);
  }
}

// ---- header ---------------------------------------------------------------

TEST(BinaryContainer, Truncated) {
  ByteVec b = testkit::make_valid_package(0).binary();
  b.resize(39);
  EXPECT_TRUE(has(check(b).report, "BEM_HEADER_TRUNCATED"));
  ByteVec magic_only = {0x42, 0x45, 0x4D, 0x00, 0x50, 0x4B, 0x47, 0x00};
  EXPECT_TRUE(has(check(magic_only).report, "BEM_HEADER_TRUNCATED"));
}

TEST(BinaryContainer, Magic) {
  ByteVec b = testkit::make_valid_package(0).binary();
  b[7] = 0x01;  // "BEM\0PKG\1": not the magic, not a ZIP
  auto r = check(b);
  EXPECT_FALSE(r.valid());
  EXPECT_TRUE(has(r.report, "BEM_CONTAINER_UNKNOWN"));
  core::Report report;
  EXPECT_FALSE(bem::open_binary(b, report));
  EXPECT_TRUE(has(report, "BEM_HEADER_MAGIC"));
}

TEST(BinaryContainer, Major) {
  auto l = layout(0, {{1}});
  l.major = 2;
  EXPECT_TRUE(has(check(testkit::build_binary(l)).report, "BEM_HEADER_MAJOR"));
  l.major = 0;
  EXPECT_TRUE(has(check(testkit::build_binary(l)).report, "BEM_HEADER_MAJOR"));
}

TEST(BinaryContainer, MinorSixIsUnknown) {
  auto p = testkit::make_valid_package(5);
  p.minor = 6;
  auto r = check(p.binary());
  EXPECT_FALSE(r.valid());
  EXPECT_TRUE(has(r.report, "BEM_HEADER_MINOR"));
  p.minor = 5;
  EXPECT_FALSE(has(check(p.binary()).report, "BEM_HEADER_MINOR"));
}

TEST(BinaryContainer, HeaderSize) {
  auto l = layout(0, {{1}});
  l.header_size = 48;
  EXPECT_TRUE(has(check(testkit::build_binary(l)).report, "BEM_HEADER_SIZE"));
}

TEST(BinaryContainer, FileSize) {
  auto l = layout(0, {{1}});
  l.file_size = 1000;
  EXPECT_TRUE(has(check(testkit::build_binary(l)).report, "BEM_FILE_SIZE"));
  // A valid file cut short: the header's file_size no longer matches.
  ByteVec b = testkit::make_valid_package(1).binary();
  b.pop_back();
  EXPECT_TRUE(has(check(b).report, "BEM_FILE_SIZE"));
}

TEST(BinaryContainer, ManifestSizeZeroAndTooLarge) {
  auto l = layout(0, {});
  l.manifest = "";
  EXPECT_TRUE(has(check(testkit::build_binary(l)).report, "BEM_MANIFEST_SIZE"));
  auto big = layout(0, {});
  big.manifest = std::string((4u << 20) + 1, ' ');
  auto r = check(testkit::build_binary(big));
  EXPECT_TRUE(has(r.report, "BEM_MANIFEST_SIZE"));
  // Exactly 4 MiB is allowed by the container (the JSON is then checked).
  auto edge = layout(0, {});
  edge.manifest = "{}" + std::string((4u << 20) - 2, ' ');
  core::Report report;
  EXPECT_TRUE(bem::open_binary(testkit::build_binary(edge), report)) << report.to_text("edge");
}

TEST(BinaryContainer, Flags) {
  auto l = layout(0, {{1}});
  l.flags = 1;
  EXPECT_TRUE(has(check(testkit::build_binary(l)).report, "BEM_HEADER_FLAGS"));
}

// §11: 4096 directory entries in 1.0/1.1, 16384 from 1.2.
TEST(BinaryContainer, PayloadCountPerVersion) {
  std::vector<ByteVec> many(4097, ByteVec{7});
  auto l11 = layout(1, many);
  EXPECT_TRUE(has(check(testkit::build_binary(l11)).report, "BEM_PAYLOAD_COUNT"));
  auto l12 = layout(2, many);
  core::Report report;
  EXPECT_TRUE(bem::open_binary(testkit::build_binary(l12), report)) << report.to_text("1.2");
  EXPECT_FALSE(has(report, "BEM_PAYLOAD_COUNT"));
  auto l10 = layout(0, std::vector<ByteVec>(4096, ByteVec{7}));
  core::Report r10;
  EXPECT_TRUE(bem::open_binary(testkit::build_binary(l10), r10)) << r10.to_text("1.0");
  // 16385 entries exceed even 1.2+ (header only: count checked before the directory).
  auto l15 = layout(5, {});
  l15.payload_count = 16385;
  EXPECT_TRUE(has(check(testkit::build_binary(l15)).report, "BEM_PAYLOAD_COUNT"));
}

TEST(BinaryContainer, DirectoryTruncated) {
  auto l = layout(0, {});
  l.payload_count = 3;  // three entries announced, none written
  EXPECT_TRUE(has(check(testkit::build_binary(l)).report, "BEM_DIRECTORY_TRUNCATED"));
  // The manifest itself running past the end of the file.
  auto m = layout(0, {});
  m.manifest_size = 100;
  EXPECT_TRUE(has(check(testkit::build_binary(m)).report, "BEM_DIRECTORY_TRUNCATED"));
}

// ---- directory entries ----------------------------------------------------

TEST(BinaryContainer, Codec) {
  auto l = layout(0, {{1, 2, 3}});
  auto d = entries_of(l);
  d[0].codec = 2;
  EXPECT_TRUE(has(check(testkit::build_binary(l, d)).report, "BEM_PAYLOAD_CODEC"));
}

TEST(BinaryContainer, Reserved) {
  auto l = layout(0, {{1, 2, 3}});
  auto d = entries_of(l);
  d[0].reserved = 1;
  EXPECT_TRUE(has(check(testkit::build_binary(l, d)).report, "BEM_PAYLOAD_RESERVED"));
}

TEST(BinaryContainer, DecodedSizeZeroAndTooLarge) {
  auto l = layout(0, {{1, 2, 3}});
  auto d = entries_of(l);
  d[0].codec = 1;
  d[0].decoded_size = 0;
  EXPECT_TRUE(has(check(testkit::build_binary(l, d)).report, "BEM_PAYLOAD_DECODED_SIZE"));
  d[0].decoded_size = (512ull << 20) + 1;
  EXPECT_TRUE(has(check(testkit::build_binary(l, d)).report, "BEM_PAYLOAD_DECODED_SIZE"));
}

TEST(BinaryContainer, StoredSizeZero) {
  auto l = layout(0, {{1, 2, 3}});
  auto d = entries_of(l);
  d[0].codec = 1;
  d[0].stored_size = 0;
  auto r = check(testkit::build_binary(l, d));
  EXPECT_TRUE(has(r.report, "BEM_PAYLOAD_STORED_SIZE"));
}

TEST(BinaryContainer, RawSizesDiffer) {
  auto l = layout(0, {{1, 2, 3}});
  auto d = entries_of(l);
  d[0].decoded_size = 4;
  EXPECT_TRUE(has(check(testkit::build_binary(l, d)).report, "BEM_PAYLOAD_RAW_SIZE"));
}

TEST(BinaryContainer, Gap) {
  auto l = layout(0, {{1, 2, 3}, {4, 5}});
  auto d = entries_of(l);
  d[1].offset += 1;
  d[1].stored_size = d[1].decoded_size = 1;
  EXPECT_TRUE(has(check(testkit::build_binary(l, d)).report, "BEM_PAYLOAD_GAP"));
  // The first payload must follow the directory at once.
  auto first = entries_of(l);
  first[0].offset += 1;
  first[0].stored_size = first[0].decoded_size = 2;
  EXPECT_TRUE(has(check(testkit::build_binary(l, first)).report, "BEM_PAYLOAD_GAP"));
}

TEST(BinaryContainer, Overlap) {
  auto l = layout(0, {{1, 2, 3}, {4, 5}});
  auto d = entries_of(l);
  d[1].offset -= 1;
  d[1].stored_size = d[1].decoded_size = 3;
  EXPECT_TRUE(has(check(testkit::build_binary(l, d)).report, "BEM_PAYLOAD_OVERLAP"));
}

TEST(BinaryContainer, OutOfRange) {
  auto l = layout(0, {{1, 2, 3}});
  auto d = entries_of(l);
  d[0].stored_size = d[0].decoded_size = 4;  // one byte more than the file holds
  auto r = check(testkit::build_binary(l, d));
  EXPECT_TRUE(has(r.report, "BEM_PAYLOAD_OUT_OF_RANGE"));
  // An offset far past the end (and sizes that would overflow 64 bits).
  auto far = entries_of(l);
  far[0].offset = ~0ull - 1;
  far[0].stored_size = far[0].decoded_size = 3;
  EXPECT_TRUE(has(check(testkit::build_binary(l, far)).report, "BEM_PAYLOAD_OUT_OF_RANGE"));
}

TEST(BinaryContainer, TrailingBytes) {
  auto p = testkit::make_valid_package(0);
  testkit::BinaryLayout l;
  l.manifest = p.manifest.dump();
  for (const auto& d : p.payloads) l.payloads.push_back({d, false});
  l.trailing = {0};
  auto r = check(testkit::build_binary(l));
  EXPECT_FALSE(r.valid());
  EXPECT_TRUE(has(r.report, "BEM_TRAILING_BYTES"));
  l.trailing.clear();
  EXPECT_TRUE(check(testkit::build_binary(l)).valid());
}

TEST(BinaryContainer, NotAPackageAtAll) {
  EXPECT_TRUE(has(check(ByteVec{}).report, "BEM_CONTAINER_UNKNOWN"));
  EXPECT_TRUE(has(check(ByteVec{'h', 'e', 'l', 'l', 'o'}).report, "BEM_CONTAINER_UNKNOWN"));
}

// ---- zstd payloads (§2: one standalone frame, no dictionary, exact content size)

TEST(BinaryZstd, PlainFrameDecodes) {
  ByteVec data = sample_data();
  EXPECT_EQ(read_payload0(zstd_container(testkit::zstd_frame(data), data.size())), "");
}

// docs/bem/zip.md Q22: a content checksum is allowed and verified.
TEST(BinaryZstd, FrameWithChecksumIsAccepted) {
  ByteVec data = sample_data();
  ByteVec frame = compress_with(data, true, true);
  EXPECT_EQ(read_payload0(zstd_container(frame, data.size())), "");
  frame.back() ^= 0xFF;  // the checksum no longer matches
  EXPECT_EQ(read_payload0(zstd_container(frame, data.size())), "BEM_ZSTD_DATA");
}

TEST(BinaryZstd, NotAFrame) {
  ByteVec junk = {'n', 'o', 't', ' ', 'z', 's', 't', 'd'};
  EXPECT_EQ(read_payload0(zstd_container(junk, 100)), "BEM_ZSTD_FRAME");
  EXPECT_EQ(read_payload0(zstd_container({0x28, 0xB5}, 100)), "BEM_ZSTD_FRAME");
}

// docs/bem/zip.md Q22: a skippable frame before the data frame is rejected.
TEST(BinaryZstd, SkippableFrameFirst) {
  ByteVec data = sample_data();
  ByteVec stored = {0x50, 0x2A, 0x4D, 0x18, 0x04, 0x00, 0x00, 0x00, 'n', 'o', 't', 'e'};
  ByteVec frame = testkit::zstd_frame(data);
  stored.insert(stored.end(), frame.begin(), frame.end());
  EXPECT_EQ(read_payload0(zstd_container(stored, data.size())), "BEM_ZSTD_FRAME");
}

TEST(BinaryZstd, TwoFrames) {
  ByteVec data = sample_data();
  ByteVec frame = testkit::zstd_frame(data);
  ByteVec stored = frame;
  stored.insert(stored.end(), frame.begin(), frame.end());
  EXPECT_EQ(read_payload0(zstd_container(stored, data.size())), "BEM_ZSTD_TRAILING");
  // A skippable frame after the data frame is a second frame too.
  ByteVec tail = frame;
  tail.insert(tail.end(), {0x50, 0x2A, 0x4D, 0x18, 0x00, 0x00, 0x00, 0x00});
  EXPECT_EQ(read_payload0(zstd_container(tail, data.size())), "BEM_ZSTD_TRAILING");
}

TEST(BinaryZstd, NoContentSize) {
  ByteVec data = sample_data();
  EXPECT_EQ(read_payload0(zstd_container(compress_with(data, false, false), data.size())),
            "BEM_ZSTD_SIZE");
}

TEST(BinaryZstd, WrongContentSize) {
  ByteVec data = sample_data();
  EXPECT_EQ(read_payload0(zstd_container(testkit::zstd_frame(data), data.size() + 1)),
            "BEM_ZSTD_SIZE");
  EXPECT_EQ(read_payload0(zstd_container(testkit::zstd_frame(data), data.size() - 1)),
            "BEM_ZSTD_SIZE");
}

TEST(BinaryZstd, DictionaryId) {
  ByteVec data = sample_data();
  ByteVec frame = testkit::zstd_frame(data);
  // Frame header descriptor at byte 4: set Dictionary_ID_flag = 1 (one byte)
  // and insert the ID after the descriptor (single-segment: no window byte).
  ASSERT_TRUE(frame[4] & 0x20) << "expected a single-segment frame";
  ASSERT_EQ(frame[4] & 0x03, 0);
  frame[4] |= 0x01;
  frame.insert(frame.begin() + 5, 0x07);
  EXPECT_EQ(read_payload0(zstd_container(frame, data.size())), "BEM_ZSTD_DICTIONARY");
}

TEST(BinaryZstd, CorruptData) {
  ByteVec data = sample_data();
  ByteVec frame = testkit::zstd_frame(data);
  // Block header right after the frame header: make its type 3 (reserved).
  ZSTD_frameHeader fh{};
  ASSERT_EQ(ZSTD_getFrameHeader(&fh, frame.data(), frame.size()), 0u);
  frame[fh.headerSize] |= 0x06;
  EXPECT_EQ(read_payload0(zstd_container(frame, data.size())), "BEM_ZSTD_DATA");
  // A frame cut short.
  ByteVec cut = testkit::zstd_frame(data);
  cut.resize(cut.size() - 3);
  EXPECT_EQ(read_payload0(zstd_container(cut, data.size())), "BEM_ZSTD_DATA");
}

// A tiny frame that claims 512 MiB is refused before any buffer is allocated.
TEST(BinaryZstd, HugeClaimRejectedCheaply) {
  ByteVec frame = {0x28, 0xB5, 0x2F, 0xFD,                          // magic
                   0xE0,                                            // FCS 8 bytes, single segment
                   0x00, 0x00, 0x00, 0x20, 0x00, 0x00, 0x00, 0x00,  // 512 MiB
                   0x09, 0x00, 0x00, 0x00};                         // last raw block of 1 byte
  EXPECT_EQ(read_payload0(zstd_container(frame, 512ull << 20)), "BEM_ZSTD_DATA");
}

// The validator reports a broken zstd payload of a whole package.
TEST(BinaryZstd, ValidatorReportsBrokenPayload) {
  auto p = testkit::make_valid_package(1);
  testkit::BinaryLayout l;
  l.minor = 1;
  l.manifest = p.manifest.dump();
  for (const auto& d : p.payloads) l.payloads.push_back({d, true});
  ByteVec good = testkit::build_binary(l);
  EXPECT_TRUE(check(good).valid()) << check(good).report.to_text("pkg");
  // Corrupt payload 4's frame (the texture): its last byte sits at the end of the file.
  ByteVec bad = good;
  bad[bad.size() - 2] ^= 0x5A;
  bad[bad.size() - 1] ^= 0xA5;
  auto r = check(bad);
  EXPECT_FALSE(r.valid()) << r.report.to_text("pkg");
}

// ---- stream_zstd_payload ----------------------------------------------------

namespace {

// Bytes that compress to a mix of block types: runs, a pattern, noise.
ByteVec mixed_data(std::size_t n, std::uint32_t seed) {
  ByteVec d(n);
  std::uint32_t x = seed * 2654435761u + 1;
  for (std::size_t i = 0; i < n; ++i) {
    x = x * 1664525u + 1013904223u;
    const std::size_t region = (i / 5000) % 3;
    d[i] = region == 0   ? 0x11
           : region == 1 ? static_cast<std::uint8_t>(i * 7 % 251)
                         : static_cast<std::uint8_t>(x >> 24);
  }
  return d;
}

struct Pieces {
  ByteVec bytes;
  std::vector<std::size_t> sizes;
};

charkit::core::Status stream(const ByteVec& frame, std::uint64_t size, std::size_t piece,
                             Pieces& got) {
  ByteVec buf(piece);
  return bem::stream_zstd_payload(frame, size, buf, [&](charkit::core::Bytes p) {
    got.sizes.push_back(p.size());
    got.bytes.insert(got.bytes.end(), p.begin(), p.end());
  });
}

}  // namespace

TEST(ZstdStream, PiecesAreTheWholeDecodeInOrder) {
  for (std::size_t n : {std::size_t{1}, std::size_t{95}, std::size_t{393215}, std::size_t{393216},
                        std::size_t{393217}, std::size_t{3 * 393216 + 17}}) {
    const ByteVec data = mixed_data(n, static_cast<std::uint32_t>(n));
    for (bool checksum : {false, true}) {
      const ByteVec frame = compress_with(data, true, checksum);
      ASSERT_TRUE(bem::check_zstd_frame(frame, n));
      for (std::size_t piece : {std::size_t{96}, std::size_t{393216}}) {
        Pieces got;
        auto st = stream(frame, n, piece, got);
        ASSERT_TRUE(st) << st.error().message << " n=" << n;
        EXPECT_EQ(got.bytes, data) << "n=" << n << " piece=" << piece;
        ASSERT_FALSE(got.sizes.empty());
        for (std::size_t i = 0; i + 1 < got.sizes.size(); ++i) ASSERT_EQ(got.sizes[i], piece);
        EXPECT_GE(got.sizes.back(), 1u);
        EXPECT_LE(got.sizes.back(), piece);
      }
    }
  }
}

TEST(ZstdStream, BrokenFramesFail) {
  const std::size_t n = 200000;
  const ByteVec data = mixed_data(n, 7);
  const ByteVec frame = compress_with(data, true, true);
  Pieces got;
  // The checksum does not match.
  ByteVec bad_sum = frame;
  bad_sum.back() ^= 0xFF;
  auto st = stream(bad_sum, n, 4096, got);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().code, "BEM_ZSTD_DATA");
  // Cut short.
  ByteVec cut(frame.begin(), frame.begin() + static_cast<std::ptrdiff_t>(frame.size() / 2));
  st = stream(cut, n, 4096, got);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().code, "BEM_ZSTD_DATA");
  // More bytes than the caller expects, and fewer.
  st = stream(frame, n - 1, 4096, got);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().code, "BEM_ZSTD_SIZE");
  st = stream(frame, n + 1, 4096, got);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().code, "BEM_ZSTD_SIZE");
  // A corrupt byte inside the blocks: an error, never more bytes than asked.
  for (std::size_t at = 20; at < frame.size(); at += frame.size() / 17) {
    ByteVec broken = frame;
    broken[at] ^= 0x5A;
    Pieces g;
    auto s = stream(broken, n, 4096, g);
    EXPECT_FALSE(s) << "a flipped byte at " << at << " went unnoticed despite the checksum";
    EXPECT_LE(g.bytes.size(), n);
  }
  // The decoder is usable again after an error.
  Pieces again;
  ASSERT_TRUE(stream(frame, n, 4096, again));
  EXPECT_EQ(again.bytes, data);
}
