// ZIP container (§14): a single package (manifest.json + numbered payload
// files) or a collection bundle (one or more .bem members). Read with libzip
// straight from the caller's bytes: nothing is extracted to disk, entry names
// are only compared, never used as file-system paths, and every size is
// bounded before anything is allocated.
#include <zip.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "charkit/bem/container.h"
#include "charkit/bem/detail/payload_name.h"
#include "charkit/bem/error_codes.h"

namespace charkit::bem {
namespace {

using core::Location;

// §2/§11: payload directory entries are at most 16384 (1.2+), so a payload
// number above 16383 can never be referenced.
using detail::kMaxPayloadNumber;
using detail::payload_number;
// DEFLATE cannot expand better than about 1032:1; a declared size above this
// bound is a lie, rejected before allocating.
constexpr std::uint64_t kMaxDeflateRatio = 1032;

struct ZipCloser {
  void operator()(zip_t* z) const {
    if (z) zip_discard(z);
  }
};
using ZipHandle = std::unique_ptr<zip_t, ZipCloser>;

struct FileCloser {
  void operator()(zip_file_t* f) const {
    if (f) zip_fclose(f);
  }
};

/// One archive entry as seen through the central directory.
struct Entry {
  zip_uint64_t index = 0;
  std::string name;  ///< as stored ('\\' normalised to '/'), valid UTF-8
  std::uint64_t size = 0;
  std::uint64_t comp_size = 0;
  std::uint16_t method = 0;
  bool encrypted = false;
  bool directory = false;
};

bool ends_with_ci(std::string_view s, std::string_view suffix) {
  if (s.size() < suffix.size()) return false;
  for (std::size_t i = 0; i < suffix.size(); ++i) {
    char c = s[s.size() - suffix.size() + i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != suffix[i]) return false;
  }
  return true;
}

/// macOS Finder metadata that archivers add next to the real content.
bool is_os_metadata(std::string_view name) {
  if (name.rfind("__MACOSX/", 0) == 0) return true;
  auto slash = name.rfind('/');
  std::string_view base = slash == std::string_view::npos ? name : name.substr(slash + 1);
  return base == ".DS_Store";
}

std::string method_name(std::uint16_t m) {
  switch (m) {
    case 0:
      return "STORED";
    case 8:
      return "DEFLATE";
    case 9:
      return "DEFLATE64";
    case 12:
      return "BZIP2";
    case 14:
      return "LZMA";
    case 93:
      return "ZSTD";
    case 95:
      return "XZ";
    case 98:
      return "PPMd";
    case 99:
      return "AES-encrypted";
  }
  return "method " + std::to_string(m);
}

// ---- where each entry's bytes lie ------------------------------------------
//
// libzip does not tell where an entry's local header and data are, and it
// happily reads several central directory records that point at the same
// local data (a 500 KB archive can so declare 40 × 512 MiB). The central
// directory is therefore read here a second time, only for the local header
// offsets and the compressed sizes (APPNOTE 4.3.12, 4.3.14-16, 4.5.3).

struct Span {
  std::uint64_t begin = 0;  ///< local header
  std::uint64_t end = 0;    ///< one past the entry's data
};

std::uint16_t le16(Bytes b, std::uint64_t at) {
  return static_cast<std::uint16_t>(b[at] | (b[at + 1] << 8));
}
std::uint32_t le32(Bytes b, std::uint64_t at) {
  return static_cast<std::uint32_t>(le16(b, at)) |
         (static_cast<std::uint32_t>(le16(b, at + 2)) << 16);
}
std::uint64_t le64(Bytes b, std::uint64_t at) {
  return static_cast<std::uint64_t>(le32(b, at)) |
         (static_cast<std::uint64_t>(le32(b, at + 4)) << 32);
}
bool fits(Bytes b, std::uint64_t at, std::uint64_t n) {
  return at <= b.size() && n <= b.size() - at;
}

/// Reads the central directory whose end record is at `eocd`; false when it
/// is not a consistent one.
bool read_central_directory_at(Bytes f, std::uint64_t eocd, std::vector<Span>& out) {
  out.clear();
  std::uint64_t count = le16(f, eocd + 10);
  std::uint64_t cd_size = le32(f, eocd + 12);
  std::uint64_t cd_offset = le32(f, eocd + 16);
  if (count == 0xFFFF || cd_size == 0xFFFFFFFFu || cd_offset == 0xFFFFFFFFu) {
    // Zip64 end of central directory locator right before the end record.
    if (eocd < 20 || le32(f, eocd - 20) != 0x07064b50) return false;
    std::uint64_t z = le64(f, eocd - 12);
    if (!fits(f, z, 56) || le32(f, z) != 0x06064b50) return false;
    count = le64(f, z + 32);
    cd_size = le64(f, z + 40);
    cd_offset = le64(f, z + 48);
  }
  if (!fits(f, cd_offset, cd_size) || count > cd_size / 46) return false;
  out.reserve(static_cast<std::size_t>(count));
  std::uint64_t at = cd_offset;
  const std::uint64_t cd_end = cd_offset + cd_size;
  for (std::uint64_t i = 0; i < count; ++i) {
    if (at > cd_end || cd_end - at < 46 || le32(f, at) != 0x02014b50) return false;
    std::uint64_t comp = le32(f, at + 20);
    const std::uint64_t size = le32(f, at + 24);
    const std::uint64_t name_len = le16(f, at + 28);
    const std::uint64_t extra_len = le16(f, at + 30);
    const std::uint64_t comment_len = le16(f, at + 32);
    std::uint64_t local = le32(f, at + 42);
    const std::uint64_t next = at + 46 + name_len + extra_len + comment_len;
    if (next > cd_end) return false;
    // Zip64 extended information: the 64-bit values, in this order, of the
    // fields that hold 0xFFFFFFFF.
    for (std::uint64_t x = at + 46 + name_len; x + 4 <= at + 46 + name_len + extra_len;) {
      const std::uint16_t id = le16(f, x);
      const std::uint64_t len = le16(f, x + 2);
      if (x + 4 + len > at + 46 + name_len + extra_len) return false;
      if (id == 0x0001) {
        std::uint64_t y = x + 4;
        const std::uint64_t y_end = y + len;
        auto take = [&](std::uint64_t& v) {
          if (y + 8 > y_end) return false;
          v = le64(f, y);
          y += 8;
          return true;
        };
        std::uint64_t ignored = 0;
        if (size == 0xFFFFFFFFu && !take(ignored)) return false;
        if (comp == 0xFFFFFFFFu && !take(comp)) return false;
        if (local == 0xFFFFFFFFu && !take(local)) return false;
      }
      x += 4 + len;
    }
    // The local header tells where the data starts (its own name and extra
    // field may differ in length from the central record's).
    Span s;
    s.begin = local;
    std::uint64_t data = local + 30;
    if (fits(f, local, 30) && le32(f, local) == 0x04034b50)
      data += std::uint64_t{le16(f, local + 26)} + le16(f, local + 28);
    s.end = data + comp;
    out.push_back(s);
    at = next;
  }
  return true;
}

/// Local spans of every central directory record, in libzip's index order;
/// false when no end record leads to `expected` records.
bool read_central_directory(Bytes f, std::uint64_t expected, std::vector<Span>& out) {
  if (f.size() < 22) return false;
  // The end record is within the last 22 + 65535 bytes (its comment); try
  // candidates from the end, as libzip does.
  const std::uint64_t lowest = f.size() > 22 + 65535 ? f.size() - 22 - 65535 : 0;
  for (std::uint64_t at = f.size() - 22 + 1; at-- > lowest;) {
    if (le32(f, at) != 0x06054b50) continue;
    if (read_central_directory_at(f, at, out) && out.size() == expected) return true;
  }
  return false;
}

class ZipPackage final : public Package {
 public:
  ContainerKind kind() const override { return kind_; }
  core::Status prepare_payload(std::uint32_t id) const override;
  core::Result<Bytes> decode_prepared(std::uint32_t id, PayloadBuffer& scratch) const override;
  /// Payload id's entry, present and of an allowed size.
  core::Result<const Entry*> payload_entry(std::uint32_t id) const;
  core::Result<PayloadData> read_member(std::size_t i) const override;

  /// Read entry e completely, checking that it ends at its declared size and
  /// that its CRC matches: into `fixed` (its declared size) or, when
  /// `growing` is set, into that buffer enlarged as data arrives (never
  /// ahead of it). The cancel flag is polled every few MiB.
  core::Result<std::span<std::uint8_t>> read_entry(const Entry& e, std::span<std::uint8_t> fixed,
                                                   PayloadBuffer* growing = nullptr) const;

  ContainerKind kind_ = ContainerKind::kZip;
  ZipHandle zip_;
  std::vector<Entry> payload_entries_;  ///< parallel to payloads_ (absent: unused)
  std::vector<Entry> member_entries_;   ///< parallel to members_
  mutable std::mutex mutex_;            ///< libzip handles are not thread-safe

  friend std::unique_ptr<Package> bem::open_zip(Bytes file, core::Report& report,
                                                DecodeControl* control);
};

core::Result<std::span<std::uint8_t>> ZipPackage::read_entry(const Entry& e,
                                                             std::span<std::uint8_t> fixed,
                                                             PayloadBuffer* growing) const {
  std::lock_guard<std::mutex> lock(mutex_);
  Location loc;
  loc.member = e.name;
  auto fail = [&](core::ErrorCode code, std::string msg) {
    return core::make_error(code, e.name + ": " + msg, loc);
  };
  std::unique_ptr<zip_file_t, FileCloser> f(zip_fopen_index(zip_.get(), e.index, 0));
  if (!f) {
    zip_error_t* ze = zip_get_error(zip_.get());
    return fail(codes::BEM_ZIP_READ,
                std::string("cannot open the entry: ") + zip_error_strerror(ze));
  }
  // Decoded in slices: the cancel flag is polled between them, and a growing
  // buffer doubles only once the bytes already decoded fill it.
  constexpr std::uint64_t kSlice = 4u << 20;
  std::span<std::uint8_t> buf = fixed;
  auto located = [&](core::Error err) {
    err.message = e.name + ": " + err.message;
    err.location = loc;
    return err;
  };
  if (growing) {
    auto first = growing->get(static_cast<std::size_t>(std::min(e.size, kSlice)));
    if (!first) return located(std::move(first).error());
    buf = *first;
  }
  std::uint64_t got = 0;
  while (got < e.size) {
    if (control_)
      if (auto p = control_->poll(); !p) {
        core::Error err = std::move(p).error();
        err.location = loc;
        return err;
      }
    if (growing && got == buf.size()) {
      const std::uint64_t want = std::min(e.size, std::max<std::uint64_t>(2 * got, kSlice));
      auto more = growing->grow(static_cast<std::size_t>(want), static_cast<std::size_t>(got));
      if (!more) return located(std::move(more).error());
      buf = *more;
    }
    const std::uint64_t n_want = std::min(kSlice, buf.size() - got);
    zip_int64_t n = zip_fread(f.get(), buf.data() + got, n_want);
    if (n < 0) {
      bool crc = zip_error_code_zip(zip_file_get_error(f.get())) == ZIP_ER_CRC;
      return fail(crc ? codes::BEM_ZIP_CRC : codes::BEM_ZIP_READ,
                  std::string("entry data is corrupt: ") + zip_file_strerror(f.get()));
    }
    if (n == 0) break;
    got += static_cast<std::uint64_t>(n);
  }
  if (got != e.size)
    return fail(codes::BEM_ZIP_READ, "entry holds " + std::to_string(got) +
                                         " bytes but the central directory declares " +
                                         std::to_string(e.size));
  // Reading past the end makes libzip verify the size and the CRC-32.
  std::uint8_t extra = 0;
  zip_int64_t n = zip_fread(f.get(), &extra, 1);
  if (n > 0)
    return fail(codes::BEM_ZIP_READ, "entry holds more bytes than the " + std::to_string(e.size) +
                                         " its central directory record declares");
  if (n < 0) {
    bool crc = zip_error_code_zip(zip_file_get_error(f.get())) == ZIP_ER_CRC;
    return fail(crc ? codes::BEM_ZIP_CRC : codes::BEM_ZIP_READ,
                std::string(crc ? "CRC-32 mismatch: " : "entry data is corrupt: ") +
                    zip_file_strerror(f.get()));
  }
  return buf.first(static_cast<std::size_t>(got));
}

/// Counts an entry's declared size against the package's decode budget.
core::Status charge_entry(DecodeControl* control, const Entry& e) {
  if (!control) return core::Ok{};
  auto st = control->charge(e.size, e.name);
  if (!st) {
    core::Error err = std::move(st).error();
    err.location.member = e.name;
    return err;
  }
  return core::Ok{};
}

core::Result<const Entry*> ZipPackage::payload_entry(std::uint32_t id) const {
  if (id >= payloads_.size() || !payloads_[id].present)
    return core::make_error(codes::BEM_ZIP_MISSING_PAYLOAD,
                            "ZIP package is missing payload " + std::to_string(id));
  const Entry& e = payload_entries_[id];
  if (e.size < 1 || e.size > kMaxPayloadSize) {
    Location loc;
    loc.member = e.name;
    return core::make_error(
        codes::BEM_PAYLOAD_DECODED_SIZE,
        e.name + ": payload is " + std::to_string(e.size) + " bytes, allowed 1..536870912", loc);
  }
  return &e;
}

core::Status ZipPackage::prepare_payload(std::uint32_t id) const {
  auto e = payload_entry(id);
  if (!e) return std::move(e).error();
  return charge_entry(control_, **e);
}

core::Result<Bytes> ZipPackage::decode_prepared(std::uint32_t id, PayloadBuffer& scratch) const {
  auto entry = payload_entry(id);
  if (!entry) return std::move(entry).error();
  const Entry& e = **entry;
  auto out = scratch.get(static_cast<std::size_t>(e.size));
  if (!out) {
    core::Error err = std::move(out).error();
    err.message = e.name + ": " + err.message;
    err.location.member = e.name;
    return err;
  }
  auto st = read_entry(e, *out);
  if (!st) return std::move(st).error();
  return Bytes(*st);
}

core::Result<PayloadData> ZipPackage::read_member(std::size_t i) const {
  if (kind_ != ContainerKind::kCollection || i >= member_entries_.size())
    return core::make_error(codes::BEM_NOT_COLLECTION, "not a member of this collection bundle");
  const Entry& e = member_entries_[i];
  if (e.size > kMaxFileSize) {
    Location loc;
    loc.member = e.name;
    return core::make_error(
        codes::BEM_FILE_TOO_LARGE,
        e.name + ": member is " + std::to_string(e.size) + " bytes, a BEM package is at most 2 GiB",
        loc);
  }
  // The declared size only bounds the read: the buffer grows with the bytes
  // actually decoded (a 2 MB member may declare 2 GiB).
  if (auto c = charge_entry(control_, e); !c) return std::move(c).error();
  PayloadBuffer buf(control_);
  auto st = read_entry(e, {}, &buf);
  if (!st) return std::move(st).error();
  Bytes view = *st;
  return PayloadData(std::move(buf), view);
}

/// The ZIP layer's errors: §14, naming the entry.
struct ZipIssues {
  core::Report& report;
  void error(core::ErrorCode code, const std::string& member, std::string message) const {
    Location loc;
    loc.member = member;
    report.error(code, "§14", loc, std::move(message));
  }
};

/// The central directory's entries, each checked on its own (§14: STORED or
/// DEFLATE, not encrypted, sizes the data can have, no name twice). Nothing
/// when a record cannot be read at all; `ok` turns false on any other error,
/// `backslash` true when a name used '\\' as its separator.
std::optional<std::vector<Entry>> read_entries(zip_t* za, Bytes file, const ZipIssues& issues,
                                               bool& ok, bool& backslash) {
  zip_int64_t count = zip_get_num_entries(za, 0);
  std::vector<Entry> entries;
  std::set<std::string> names;
  for (zip_int64_t i = 0; i < count; ++i) {
    zip_uint64_t idx = static_cast<zip_uint64_t>(i);
    zip_stat_t st;
    zip_stat_init(&st);
    const char* raw_name = zip_get_name(za, idx, ZIP_FL_ENC_GUESS);
    if (!raw_name || zip_stat_index(za, idx, ZIP_FL_ENC_GUESS, &st) != 0) {
      issues.error(codes::BEM_ZIP_OPEN, "",
                   "central directory entry " + std::to_string(i) +
                       " cannot be read: " + zip_error_strerror(zip_get_error(za)));
      return std::nullopt;
    }
    Entry e;
    e.index = idx;
    e.name = raw_name;
    // Some Windows archivers write '\' separators; APPNOTE wants '/'.
    if (e.name.find('\\') != std::string::npos) {
      backslash = true;
      std::replace(e.name.begin(), e.name.end(), '\\', '/');
    }
    e.size = (st.valid & ZIP_STAT_SIZE) ? st.size : 0;
    e.comp_size = (st.valid & ZIP_STAT_COMP_SIZE) ? st.comp_size : 0;
    e.method = static_cast<std::uint16_t>((st.valid & ZIP_STAT_COMP_METHOD) ? st.comp_method : 0);
    e.encrypted = (st.valid & ZIP_STAT_ENCRYPTION_METHOD) && st.encryption_method != ZIP_EM_NONE;
    e.directory = !e.name.empty() && e.name.back() == '/';
    if (e.name.empty()) continue;
    if (!names.insert(e.name).second) {
      issues.error(codes::BEM_ZIP_DUPLICATE_ENTRY, e.name,
                   "the archive holds two entries named \"" + e.name +
                       "\"; a reader cannot tell which "
                       "one is meant");
      ok = false;
    }
    if (e.directory || is_os_metadata(e.name)) {
      entries.push_back(std::move(e));
      continue;
    }
    // §14: entries are STORED or DEFLATE; encrypted entries are rejected.
    if (e.encrypted || e.method == 99) {
      issues.error(codes::BEM_ZIP_ENCRYPTED, e.name,
                   e.name + ": entry is encrypted; BEM ZIP packages must not use encryption");
      ok = false;
    } else if (e.method != ZIP_CM_STORE && e.method != ZIP_CM_DEFLATE) {
      issues.error(codes::BEM_ZIP_METHOD, e.name,
                   e.name + ": compression " + method_name(e.method) +
                       " is not supported; use STORED (0) or DEFLATE (8)");
      ok = false;
    } else if (e.comp_size > file.size() || (e.method == ZIP_CM_STORE && e.comp_size != e.size) ||
               (e.method == ZIP_CM_DEFLATE && e.size / kMaxDeflateRatio > e.comp_size + 1024)) {
      // Declared sizes that the data cannot have: corrupt, and a bound on
      // every later allocation.
      issues.error(codes::BEM_ZIP_ENTRY_SIZE, e.name,
                   e.name + ": declared sizes (" + std::to_string(e.comp_size) + " stored, " +
                       std::to_string(e.size) + " uncompressed) are impossible for " +
                       method_name(e.method) + " in a " + std::to_string(file.size()) +
                       "-byte archive");
      ok = false;
    }
    entries.push_back(std::move(e));
  }
  return entries;
}

/// Every entry's local bytes are its own: sorted by where their local
/// headers start, no entry's data reaches into the next one's (entries of a
/// ZIP never share data; an archive whose do is crafted). False, reported,
/// when they overlap or the central directory cannot be read record by record.
bool local_data_disjoint(zip_t* za, Bytes file, const ZipIssues& issues) {
  const zip_int64_t count = zip_get_num_entries(za, 0);
  std::vector<Span> spans;
  if (!read_central_directory(file, static_cast<std::uint64_t>(std::max<zip_int64_t>(count, 0)),
                              spans)) {
    issues.error(codes::BEM_ZIP_OPEN, "", "the central directory cannot be read record by record");
    return false;
  }
  // Entries sorted by where their local header starts; each must end
  // before the next one begins.
  std::vector<std::size_t> order(spans.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return spans[a].begin != spans[b].begin ? spans[a].begin < spans[b].begin : a < b;
  });
  auto name_of = [&](std::size_t i) {
    const char* n = zip_get_name(za, i, ZIP_FL_ENC_GUESS);
    return std::string(n ? n : "");
  };
  std::size_t reported = 0, overlaps = 0;
  std::size_t reach = 0;  // the entry reaching furthest so far
  for (std::size_t k = 1; k < order.size(); ++k) {
    const std::size_t prev = order[reach], cur = order[k];
    if (spans[cur].begin < spans[prev].end) {
      ++overlaps;
      if (reported++ < 8)
        issues.error(codes::BEM_ZIP_OVERLAP, name_of(cur),
                     name_of(cur) + ": its local data (bytes " + std::to_string(spans[cur].begin) +
                         ".." + std::to_string(spans[cur].end) + ") overlap those of \"" +
                         name_of(prev) + "\" (bytes " + std::to_string(spans[prev].begin) + ".." +
                         std::to_string(spans[prev].end) +
                         "); entries of a ZIP never share data, this archive is crafted");
    }
    if (spans[cur].end > spans[prev].end) reach = k;
  }
  if (overlaps > reported)
    issues.error(codes::BEM_ZIP_OVERLAP, "",
                 std::to_string(overlaps - reported) + " more entries overlap others");
  return overlaps == 0;
}

/// §14.3: manifest.json at the root; else, when the archive holds exactly
/// one top-level folder and nothing else (OS metadata aside), that folder's
/// manifest.json, with `root` set to the folder ("name/"). Null: neither.
const Entry* find_manifest(const std::vector<Entry>& entries, std::string& root) {
  auto find_file = [&](const std::string& name) -> const Entry* {
    for (const auto& e : entries)
      if (e.name == name && !e.directory) return &e;
    return nullptr;
  };
  const Entry* manifest = find_file("manifest.json");
  if (!manifest) {
    // Exactly one top-level folder and nothing else (OS metadata aside):
    // treat it as the root.
    std::set<std::string> top;
    bool root_files = false;
    for (const auto& e : entries) {
      if (is_os_metadata(e.name)) continue;
      auto slash = e.name.find('/');
      if (slash == std::string::npos) {
        root_files = true;
        continue;
      }
      top.insert(e.name.substr(0, slash + 1));
    }
    if (!root_files && top.size() == 1) {
      manifest = find_file(*top.begin() + "manifest.json");
      if (manifest) root = *top.begin();
    }
  }

  return manifest;
}

/// The payload files by number (§14.2, docs/bem/zip.md); `ok` turns false
/// on a number out of range or given twice.
std::map<std::uint32_t, const Entry*> number_payloads(const std::vector<Entry>& entries,
                                                      const Entry* manifest,
                                                      const std::string& root, core::Report& report,
                                                      const ZipIssues& issues, bool& ok) {
  // Payload files by number: <root>payloads/NNNN.bin, <root>payloads/N.bin,
  // or directly in the root (§14.2, docs/bem/zip.md).
  std::map<std::uint32_t, const Entry*> by_number;
  for (const auto& e : entries) {
    if (e.directory || is_os_metadata(e.name) || &e == manifest) continue;
    if (e.name.compare(0, root.size(), root) != 0) continue;
    std::string_view rel = std::string_view(e.name).substr(root.size());
    std::string_view base;
    bool in_payloads = rel.rfind("payloads/", 0) == 0;
    if (in_payloads)
      base = rel.substr(9);
    else if (rel.find('/') == std::string_view::npos)
      base = rel;
    else
      continue;
    auto number = base.find('/') == std::string_view::npos ? payload_number(base) : std::nullopt;
    if (!number) {
      if (in_payloads)
        report.warning(codes::BEM_ZIP_PAYLOAD_NAME, "§14", Location{std::nullopt, {}, e.name},
                       e.name +
                           ": not a payload file name (expected payloads/NNNN.bin with a "
                           "four-digit number, or payloads/N.bin); the file is ignored");
      continue;
    }
    if (*number > kMaxPayloadNumber) {
      issues.error(codes::BEM_ZIP_PAYLOAD_NUMBER, e.name,
                   e.name + ": payload number " + std::to_string(*number) +
                       " is above the highest " + "possible payload ID " +
                       std::to_string(kMaxPayloadNumber));
      ok = false;
      continue;
    }
    auto [it, inserted] = by_number.emplace(*number, &e);
    if (!inserted) {
      issues.error(codes::BEM_ZIP_DUPLICATE_PAYLOAD, e.name,
                   "\"" + it->second->name + "\" and \"" + e.name + "\" both name payload " +
                       std::to_string(*number) + "; each payload number must appear once");
      ok = false;
    }
  }

  return by_number;
}

/// §14.2: payload numbers run from 0 without gaps; a warning lists the
/// missing ones (a manifest reference to one is an error later).
void warn_payload_gaps(const std::vector<PayloadInfo>& payloads, core::Report& report) {
  std::vector<std::uint32_t> gaps;
  for (std::size_t n = 0; n < payloads.size(); ++n)
    if (!payloads[n].present) gaps.push_back(static_cast<std::uint32_t>(n));
  if (!gaps.empty()) {
    std::string list;
    for (std::size_t i = 0; i < gaps.size() && i < 8; ++i)
      list += (i ? ", " : "") + std::to_string(gaps[i]);
    if (gaps.size() > 8) list += ", …";
    report.warning(codes::BEM_ZIP_PAYLOAD_GAP, "§14", {},
                   "payload numbers are not contiguous from 0: no file for " + list +
                       " (a manifest reference to one of them is an error)");
  }
}

}  // namespace

std::unique_ptr<Package> open_zip(Bytes file, core::Report& report, DecodeControl* control) {
  const ZipIssues issues{report};
  // §2 applies to the distributed file whatever its container: at most 2 GiB.
  if (file.size() > kMaxFileSize) {
    issues.error(
        codes::BEM_FILE_TOO_LARGE, "",
        "file is " + std::to_string(file.size()) + " bytes; a BEM package is at most 2 GiB");
    return nullptr;
  }

  // Read straight from the caller's bytes; libzip neither copies nor frees them.
  zip_error_t zerr;
  zip_error_init(&zerr);
  zip_source_t* src = zip_source_buffer_create(file.data(), file.size(), 0, &zerr);
  if (!src) {
    issues.error(codes::BEM_ZIP_OPEN, "",
                 std::string("cannot read the ZIP archive: ") + zip_error_strerror(&zerr));
    zip_error_fini(&zerr);
    return nullptr;
  }
  ZipHandle zip(zip_open_from_source(src, ZIP_RDONLY, &zerr));
  if (!zip) {
    zip_source_free(src);
    issues.error(codes::BEM_ZIP_OPEN, "",
                 std::string("not a readable ZIP archive (corrupt or truncated): ") +
                     zip_error_strerror(&zerr));
    zip_error_fini(&zerr);
    return nullptr;
  }
  zip_error_fini(&zerr);

  auto pkg = std::make_unique<ZipPackage>();
  pkg->file_ = file;
  pkg->control_ = control;
  pkg->zip_ = std::move(zip);
  zip_t* za = pkg->zip_.get();

  // ---- the central directory, entry by entry, then as a whole ----------
  bool ok = true;
  bool backslash = false;
  auto read = read_entries(za, file, issues, ok, backslash);
  if (!read) return nullptr;
  const std::vector<Entry>& entries = *read;
  if (!local_data_disjoint(za, file, issues)) return nullptr;
  if (backslash)
    report.warning(codes::BEM_ZIP_BACKSLASH, "§14", {},
                   "entry names use '\\' as folder separator; ZIP requires '/' (read as '/')");

  // ---- §14.3: the effective root --------------------------------------
  std::string root;
  const Entry* manifest = find_manifest(entries, root);

  std::vector<const Entry*> bem_members;
  for (const auto& e : entries)
    if (!e.directory && !is_os_metadata(e.name) && ends_with_ci(e.name, ".bem"))
      bem_members.push_back(&e);

  // ---- collection bundle ----------------------------------------------
  if (!manifest) {
    if (bem_members.empty()) {
      std::string hint;
      for (const auto& e : entries)
        if (!e.directory && (e.name == "manifest.json" || ends_with_ci(e.name, "/manifest.json"))) {
          hint = " (found \"" + e.name +
                 "\", which is not at the root or inside a single "
                 "top-level folder)";
          break;
        }
      issues.error(
          codes::BEM_ZIP_NO_MANIFEST, "",
          "the ZIP has no manifest.json at its root" + hint +
              " and no .bem members, so it is neither a BEM package nor a collection bundle");
      return nullptr;
    }
    if (!ok) return nullptr;
    pkg->kind_ = ContainerKind::kCollection;
    for (const Entry* e : bem_members) {
      pkg->members_.push_back(CollectionMember{e->name, 0, e->comp_size, e->size});
      pkg->member_entries_.push_back(*e);
    }
    return pkg;
  }

  // ---- single package ---------------------------------------------------
  pkg->manifest_member_ = manifest->name;
  if (!bem_members.empty())
    report.info(codes::BEM_ZIP_BEM_MEMBERS_IGNORED, "§14",
                Location{std::nullopt, {}, manifest->name},
                "the ZIP holds manifest.json and " + std::to_string(bem_members.size()) +
                    " .bem file(s) such as \"" + bem_members.front()->name +
                    "\"; the manifest wins: read as a single package, the .bem files are ignored");

  std::map<std::uint32_t, const Entry*> by_number =
      number_payloads(entries, manifest, root, report, issues, ok);

  // The manifest itself: 1 byte .. 4 MiB, checked before allocating.
  if (manifest->size < 1 || manifest->size > kMaxManifestSize) {
    issues.error(
        codes::BEM_MANIFEST_SIZE, manifest->name,
        manifest->name + " is " + std::to_string(manifest->size) + " bytes, allowed 1..4194304");
    return nullptr;
  }
  if (!ok) return nullptr;
  if (auto c = charge_entry(control, *manifest); !c) {
    const core::Error& e = c.error();
    report.add({e.code, core::Severity::kError, "§14", e.location, e.message});
    return nullptr;
  }
  pkg->manifest_owned_.resize(static_cast<std::size_t>(manifest->size));
  auto text = pkg->read_entry(
      *manifest, std::span(reinterpret_cast<std::uint8_t*>(pkg->manifest_owned_.data()),
                           pkg->manifest_owned_.size()));
  if (!text) {
    const core::Error& e = text.error();
    report.add({e.code, core::Severity::kError, "§14", e.location, e.message});
    return nullptr;
  }
  pkg->manifest_text_ = pkg->manifest_owned_;

  // payloads_[n] for n in 0..max; numbers without a file stay present=false
  // so a reference to one reports "ZIP package is missing payload n".
  std::uint32_t table = by_number.empty() ? 0 : by_number.rbegin()->first + 1;
  pkg->payloads_.resize(table);
  pkg->payload_entries_.resize(table);
  for (std::uint32_t n = 0; n < table; ++n) pkg->payloads_[n].present = false;
  for (const auto& [n, e] : by_number) {
    PayloadInfo& p = pkg->payloads_[n];
    p.present = true;
    p.codec = e->method == ZIP_CM_DEFLATE ? Codec::kZipDeflate : Codec::kZipStored;
    p.stored_size = e->comp_size;
    p.decoded_size = e->size;
    p.member = e->name;
    pkg->payload_entries_[n] = *e;
    // §2: every payload is 1 byte .. 512 MiB.
    if (e->size < 1 || e->size > kMaxPayloadSize) {
      issues.error(codes::BEM_PAYLOAD_DECODED_SIZE, e->name,
                   e->name + ": payload " + std::to_string(n) + " is " + std::to_string(e->size) +
                       " bytes, allowed 1..536870912");
    }
  }
  warn_payload_gaps(pkg->payloads_, report);
  return pkg;
}

}  // namespace charkit::bem
