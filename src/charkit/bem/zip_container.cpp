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

namespace charkit::bem {
namespace {

using core::Location;

// §2/§11: payload directory entries are at most 16384 (1.2+), so a payload
// number above 16383 can never be referenced.
constexpr std::uint32_t kMaxPayloadNumber = 16383;
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

/// §14: the payload number of a file name "0001.bin" (four digits, padded) or
/// "1.bin" (decimal without leading zeros). nullopt for any other name.
std::optional<std::uint32_t> payload_number(std::string_view file) {
  if (file.size() < 5 || file.substr(file.size() - 4) != ".bin") return std::nullopt;
  std::string_view digits = file.substr(0, file.size() - 4);
  if (digits.empty() || digits.size() > 5) return std::nullopt;
  for (char c : digits)
    if (c < '0' || c > '9') return std::nullopt;
  bool padded = digits.size() == 4;
  if (!padded && digits.size() > 1 && digits[0] == '0') return std::nullopt;
  std::uint32_t v = 0;
  for (char c : digits) v = v * 10 + static_cast<std::uint32_t>(c - '0');
  return v;
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

class ZipPackage final : public Package {
 public:
  ContainerKind kind() const override { return kind_; }
  core::Result<Bytes> read_payload_into(std::uint32_t id, PayloadBuffer& scratch) const override;
  core::Result<PayloadData> read_member(std::size_t i) const override;

  /// Read entry e completely into a buffer of its declared size (bounded by
  /// the caller), checking that it ends there and that its CRC matches.
  core::Status read_entry(const Entry& e, std::span<std::uint8_t> buf) const;

  ContainerKind kind_ = ContainerKind::kZip;
  ZipHandle zip_;
  std::vector<Entry> payload_entries_;  ///< parallel to payloads_ (absent: unused)
  std::vector<Entry> member_entries_;   ///< parallel to members_
  mutable std::mutex mutex_;            ///< libzip handles are not thread-safe

  friend std::unique_ptr<Package> bem::open_zip(Bytes file, core::Report& report);
};

core::Status ZipPackage::read_entry(const Entry& e, std::span<std::uint8_t> buf) const {
  std::lock_guard<std::mutex> lock(mutex_);
  Location loc;
  loc.member = e.name;
  auto fail = [&](const char* code, std::string msg) {
    return core::make_error(code, e.name + ": " + msg, loc);
  };
  std::unique_ptr<zip_file_t, FileCloser> f(zip_fopen_index(zip_.get(), e.index, 0));
  if (!f) {
    zip_error_t* ze = zip_get_error(zip_.get());
    return fail("BEM_ZIP_READ", std::string("cannot open the entry: ") + zip_error_strerror(ze));
  }
  std::uint64_t got = 0;
  while (got < e.size) {
    zip_int64_t n = zip_fread(f.get(), buf.data() + got, e.size - got);
    if (n < 0) {
      bool crc = zip_error_code_zip(zip_file_get_error(f.get())) == ZIP_ER_CRC;
      return fail(crc ? "BEM_ZIP_CRC" : "BEM_ZIP_READ",
                  std::string("entry data is corrupt: ") + zip_file_strerror(f.get()));
    }
    if (n == 0) break;
    got += static_cast<std::uint64_t>(n);
  }
  if (got != e.size)
    return fail("BEM_ZIP_READ", "entry holds " + std::to_string(got) +
                                    " bytes but the central directory declares " +
                                    std::to_string(e.size));
  // Reading past the end makes libzip verify the size and the CRC-32.
  std::uint8_t extra = 0;
  zip_int64_t n = zip_fread(f.get(), &extra, 1);
  if (n > 0)
    return fail("BEM_ZIP_READ", "entry holds more bytes than the " + std::to_string(e.size) +
                                    " its central directory record declares");
  if (n < 0) {
    bool crc = zip_error_code_zip(zip_file_get_error(f.get())) == ZIP_ER_CRC;
    return fail(crc ? "BEM_ZIP_CRC" : "BEM_ZIP_READ",
                std::string(crc ? "CRC-32 mismatch: " : "entry data is corrupt: ") +
                    zip_file_strerror(f.get()));
  }
  return core::Ok{};
}

core::Result<Bytes> ZipPackage::read_payload_into(std::uint32_t id, PayloadBuffer& scratch) const {
  if (id >= payloads_.size() || !payloads_[id].present)
    return core::make_error("BEM_ZIP_MISSING_PAYLOAD",
                            "ZIP package is missing payload " + std::to_string(id));
  const Entry& e = payload_entries_[id];
  if (e.size < 1 || e.size > kMaxPayloadSize) {
    Location loc;
    loc.member = e.name;
    return core::make_error(
        "BEM_PAYLOAD_DECODED_SIZE",
        e.name + ": payload is " + std::to_string(e.size) + " bytes, allowed 1..536870912", loc);
  }
  auto out = scratch.get(static_cast<std::size_t>(e.size));
  auto st = read_entry(e, out);
  if (!st) return std::move(st).error();
  return Bytes(out);
}

core::Result<PayloadData> ZipPackage::read_member(std::size_t i) const {
  if (kind_ != ContainerKind::kCollection || i >= member_entries_.size())
    return core::make_error("BEM_NOT_COLLECTION", "not a member of this collection bundle");
  const Entry& e = member_entries_[i];
  if (e.size > kMaxFileSize) {
    Location loc;
    loc.member = e.name;
    return core::make_error(
        "BEM_FILE_TOO_LARGE",
        e.name + ": member is " + std::to_string(e.size) + " bytes, a BEM package is at most 2 GiB",
        loc);
  }
  PayloadBuffer buf;
  auto out = buf.get(static_cast<std::size_t>(e.size));
  auto st = read_entry(e, out);
  if (!st) return std::move(st).error();
  return PayloadData(std::move(buf), out);
}

}  // namespace

std::unique_ptr<Package> open_zip(Bytes file, core::Report& report) {
  auto err = [&](const char* code, const std::string& member, std::string msg) {
    Location loc;
    loc.member = member;
    report.error(code, "§14", loc, std::move(msg));
  };
  // §2 applies to the distributed file whatever its container: at most 2 GiB.
  if (file.size() > kMaxFileSize) {
    err("BEM_FILE_TOO_LARGE", "",
        "file is " + std::to_string(file.size()) + " bytes; a BEM package is at most 2 GiB");
    return nullptr;
  }

  // Read straight from the caller's bytes; libzip neither copies nor frees them.
  zip_error_t zerr;
  zip_error_init(&zerr);
  zip_source_t* src = zip_source_buffer_create(file.data(), file.size(), 0, &zerr);
  if (!src) {
    err("BEM_ZIP_OPEN", "",
        std::string("cannot read the ZIP archive: ") + zip_error_strerror(&zerr));
    zip_error_fini(&zerr);
    return nullptr;
  }
  ZipHandle zip(zip_open_from_source(src, ZIP_RDONLY, &zerr));
  if (!zip) {
    zip_source_free(src);
    err("BEM_ZIP_OPEN", "",
        std::string("not a readable ZIP archive (corrupt or truncated): ") +
            zip_error_strerror(&zerr));
    zip_error_fini(&zerr);
    return nullptr;
  }
  zip_error_fini(&zerr);

  auto pkg = std::make_unique<ZipPackage>();
  pkg->file_ = file;
  pkg->zip_ = std::move(zip);
  zip_t* za = pkg->zip_.get();

  // ---- the central directory ----------------------------------------
  zip_int64_t count = zip_get_num_entries(za, 0);
  std::vector<Entry> entries;
  bool ok = true;
  bool backslash = false;
  std::set<std::string> names;
  for (zip_int64_t i = 0; i < count; ++i) {
    zip_uint64_t idx = static_cast<zip_uint64_t>(i);
    zip_stat_t st;
    zip_stat_init(&st);
    const char* raw_name = zip_get_name(za, idx, ZIP_FL_ENC_GUESS);
    if (!raw_name || zip_stat_index(za, idx, ZIP_FL_ENC_GUESS, &st) != 0) {
      err("BEM_ZIP_OPEN", "",
          "central directory entry " + std::to_string(i) +
              " cannot be read: " + zip_error_strerror(zip_get_error(za)));
      return nullptr;
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
      err("BEM_ZIP_DUPLICATE_ENTRY", e.name,
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
      err("BEM_ZIP_ENCRYPTED", e.name,
          e.name + ": entry is encrypted; BEM ZIP packages must not use encryption");
      ok = false;
    } else if (e.method != ZIP_CM_STORE && e.method != ZIP_CM_DEFLATE) {
      err("BEM_ZIP_METHOD", e.name,
          e.name + ": compression " + method_name(e.method) +
              " is not supported; use STORED (0) or DEFLATE (8)");
      ok = false;
    } else if (e.comp_size > file.size() || (e.method == ZIP_CM_STORE && e.comp_size != e.size) ||
               (e.method == ZIP_CM_DEFLATE && e.size / kMaxDeflateRatio > e.comp_size + 1024)) {
      // Declared sizes that the data cannot have: corrupt, and a bound on
      // every later allocation.
      err("BEM_ZIP_ENTRY_SIZE", e.name,
          e.name + ": declared sizes (" + std::to_string(e.comp_size) + " stored, " +
              std::to_string(e.size) + " uncompressed) are impossible for " +
              method_name(e.method) + " in a " + std::to_string(file.size()) + "-byte archive");
      ok = false;
    }
    entries.push_back(std::move(e));
  }
  if (backslash)
    report.warning("BEM_ZIP_BACKSLASH", "§14", {},
                   "entry names use '\\' as folder separator; ZIP requires '/' (read as '/')");

  // ---- §14.3: the effective root --------------------------------------
  auto find_file = [&](const std::string& name) -> const Entry* {
    for (const auto& e : entries)
      if (e.name == name && !e.directory) return &e;
    return nullptr;
  };
  std::string root;
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
      err("BEM_ZIP_NO_MANIFEST", "",
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
    report.info("BEM_ZIP_BEM_MEMBERS_IGNORED", "§14", Location{std::nullopt, {}, manifest->name},
                "the ZIP holds manifest.json and " + std::to_string(bem_members.size()) +
                    " .bem file(s) such as \"" + bem_members.front()->name +
                    "\"; the manifest wins: read as a single package, the .bem files are ignored");

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
        report.warning("BEM_ZIP_PAYLOAD_NAME", "§14", Location{std::nullopt, {}, e.name},
                       e.name +
                           ": not a payload file name (expected payloads/NNNN.bin with a "
                           "four-digit number, or payloads/N.bin); the file is ignored");
      continue;
    }
    if (*number > kMaxPayloadNumber) {
      err("BEM_ZIP_PAYLOAD_NUMBER", e.name,
          e.name + ": payload number " + std::to_string(*number) + " is above the highest " +
              "possible payload ID " + std::to_string(kMaxPayloadNumber));
      ok = false;
      continue;
    }
    auto [it, inserted] = by_number.emplace(*number, &e);
    if (!inserted) {
      err("BEM_ZIP_DUPLICATE_PAYLOAD", e.name,
          "\"" + it->second->name + "\" and \"" + e.name + "\" both name payload " +
              std::to_string(*number) + "; each payload number must appear once");
      ok = false;
    }
  }

  // The manifest itself: 1 byte .. 4 MiB, checked before allocating.
  if (manifest->size < 1 || manifest->size > kMaxManifestSize) {
    err("BEM_MANIFEST_SIZE", manifest->name,
        manifest->name + " is " + std::to_string(manifest->size) + " bytes, allowed 1..4194304");
    return nullptr;
  }
  if (!ok) return nullptr;
  pkg->manifest_owned_.resize(static_cast<std::size_t>(manifest->size));
  auto text = pkg->read_entry(
      *manifest, std::span(reinterpret_cast<std::uint8_t*>(pkg->manifest_owned_.data()),
                           pkg->manifest_owned_.size()));
  if (!text) {
    const core::Error& e = text.error();
    report.error(e.code, "§14", e.location, e.message);
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
      err("BEM_PAYLOAD_DECODED_SIZE", e->name,
          e->name + ": payload " + std::to_string(n) + " is " + std::to_string(e->size) +
              " bytes, allowed 1..536870912");
    }
  }
  // §14.2: numbers run from 0 without gaps.
  std::vector<std::uint32_t> gaps;
  for (std::uint32_t n = 0; n < table; ++n)
    if (!pkg->payloads_[n].present) gaps.push_back(n);
  if (!gaps.empty()) {
    std::string list;
    for (std::size_t i = 0; i < gaps.size() && i < 8; ++i)
      list += (i ? ", " : "") + std::to_string(gaps[i]);
    if (gaps.size() > 8) list += ", …";
    report.warning("BEM_ZIP_PAYLOAD_GAP", "§14", {},
                   "payload numbers are not contiguous from 0: no file for " + list +
                       " (a manifest reference to one of them is an error)");
  }
  return pkg;
}

}  // namespace charkit::bem
