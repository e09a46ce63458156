// Test support: ZIP archives written record by record (APPNOTE 4.3), with
// zlib only for the DEFLATE data — including archives no honest writer makes
// (several central directory records sharing one entry's local data, sizes
// that lie). Header-only; link zlib.
#pragma once

#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace charkit::testkit::rawzip {

using ByteVec = std::vector<std::uint8_t>;
inline constexpr std::uint64_t kMiB = 1u << 20;

inline void put16(ByteVec& b, std::uint32_t v) {
  for (int i = 0; i < 2; ++i) b.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}
inline void put32(ByteVec& b, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) b.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}

/// Entry data as stored: the DEFLATE (or STORED) bytes, CRC and size of the data they decode to.
struct Stored {
  ByteVec bytes;
  std::uint32_t crc = 0;
  std::uint64_t size = 0;
  std::uint16_t method = 8;
};

/// Raw DEFLATE of `n` zero bytes, fed to zlib 1 MiB at a time.
inline Stored deflated_zeros(std::uint64_t n) {
  Stored s;
  s.size = n;
  z_stream z{};
  deflateInit2(&z, 9, Z_DEFLATED, -15, 9, Z_DEFAULT_STRATEGY);
  const ByteVec zeros(kMiB, 0);
  std::vector<std::uint8_t> out(1 << 16);
  std::uint64_t left = n;
  s.crc = static_cast<std::uint32_t>(crc32(0, nullptr, 0));
  int flush = Z_NO_FLUSH;
  while (flush != Z_FINISH) {
    const uInt chunk = static_cast<uInt>(std::min<std::uint64_t>(left, kMiB));
    left -= chunk;
    s.crc = static_cast<std::uint32_t>(crc32(s.crc, zeros.data(), chunk));
    z.next_in = const_cast<Bytef*>(zeros.data());
    z.avail_in = chunk;
    flush = left == 0 ? Z_FINISH : Z_NO_FLUSH;
    do {
      z.next_out = out.data();
      z.avail_out = static_cast<uInt>(out.size());
      deflate(&z, flush);
      s.bytes.insert(s.bytes.end(), out.data(), out.data() + (out.size() - z.avail_out));
    } while (z.avail_out == 0);
  }
  deflateEnd(&z);
  return s;
}

inline Stored stored(const ByteVec& data) {
  return Stored{data,
                static_cast<std::uint32_t>(crc32(0, data.data(), static_cast<uInt>(data.size()))),
                data.size(), 0};
}

/// A central directory record naming `name` whose data is the blob at `blob`.
struct Record {
  std::string name;
  std::size_t blob = 0;
  std::uint64_t declared_size = 0;  ///< 0: the blob's real size
};

/// An archive of `blobs` (one local header each, named after the first
/// record that uses it) and `records` in that order in the central directory
/// — several records may share one blob, which no honest writer does.
inline ByteVec write_zip(const std::vector<Stored>& blobs, const std::vector<Record>& records) {
  ByteVec zip, central;
  std::vector<std::uint32_t> offsets(blobs.size());
  auto size_of = [&](const Record& r) {
    return r.declared_size ? r.declared_size : blobs[r.blob].size;
  };
  for (std::size_t b = 0; b < blobs.size(); ++b) {
    const Record* first = nullptr;
    for (const auto& r : records)
      if (r.blob == b) {
        first = &r;
        break;
      }
    const std::string name = first ? first->name : "unused";
    const std::uint64_t size = first ? size_of(*first) : blobs[b].size;
    offsets[b] = static_cast<std::uint32_t>(zip.size());
    put32(zip, 0x04034b50);  // local file header
    put16(zip, 20);          // version needed
    put16(zip, 0);           // flags
    put16(zip, blobs[b].method);
    put16(zip, 0);       // time
    put16(zip, 0x0021);  // date 1980-01-01
    put32(zip, blobs[b].crc);
    put32(zip, static_cast<std::uint32_t>(blobs[b].bytes.size()));
    put32(zip, static_cast<std::uint32_t>(size));
    put16(zip, static_cast<std::uint32_t>(name.size()));
    put16(zip, 0);  // extra field length
    zip.insert(zip.end(), name.begin(), name.end());
    zip.insert(zip.end(), blobs[b].bytes.begin(), blobs[b].bytes.end());
  }
  for (const auto& r : records) {
    const Stored& b = blobs[r.blob];
    put32(central, 0x02014b50);  // central directory header
    put16(central, 0x0314);      // made by: UNIX, 2.0
    put16(central, 20);
    put16(central, 0);
    put16(central, b.method);
    put16(central, 0);
    put16(central, 0x0021);
    put32(central, b.crc);
    put32(central, static_cast<std::uint32_t>(b.bytes.size()));
    put32(central, static_cast<std::uint32_t>(size_of(r)));
    put16(central, static_cast<std::uint32_t>(r.name.size()));
    put16(central, 0);  // extra
    put16(central, 0);  // comment
    put16(central, 0);  // disk
    put16(central, 0);  // internal attributes
    put32(central, 0100644u << 16);
    put32(central, offsets[r.blob]);  // local header offset
    central.insert(central.end(), r.name.begin(), r.name.end());
  }
  const auto cd_offset = static_cast<std::uint32_t>(zip.size());
  zip.insert(zip.end(), central.begin(), central.end());
  put32(zip, 0x06054b50);  // end of central directory
  put32(zip, 0);           // disk numbers
  put16(zip, static_cast<std::uint32_t>(records.size()));
  put16(zip, static_cast<std::uint32_t>(records.size()));
  put32(zip, static_cast<std::uint32_t>(central.size()));
  put32(zip, cd_offset);
  put16(zip, 0);  // comment
  return zip;
}

}  // namespace charkit::testkit::rawzip
