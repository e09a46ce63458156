// BEM writer (§1 version choice, §2 binary container, §14 ZIP container).
// Plan of a write: collect the manifest's payload references, fold
// byte-identical payloads into one id and drop unreferenced ones, renumber
// in original id order, compress every payload once (in parallel; each
// payload on its own, so the bytes do not depend on the thread count), lay
// out a candidate, let the validator say which version the content needs,
// then write that version and validate the result.
#include "charkit/bem/writer.h"

#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <unordered_map>

#include "charkit/bem/container.h"
#include "charkit/bem/detail/context.h"
#include "charkit/bem/error_codes.h"
#include "charkit/core/json.h"

namespace charkit::bem {
namespace {

using core::Json;
using core::json_pointer_join;
using core::Location;
using core::make_error;

constexpr std::uint32_t kMaxPayloadsV10 = 4096;   // §11: directory entries, 1.0/1.1
constexpr std::uint32_t kMaxPayloadsV12 = 16384;  // §11: directory entries, 1.2+

// ---- payload references ---------------------------------------------------

/// A payload id: a UInt32 integer. A manifest built in code may hold it as
/// a signed integer; its text form is the same.
std::optional<std::uint32_t> payload_id(const Json& j) {
  if (j.is_number_integer() && !j.is_number_unsigned()) {
    auto v = j.get<Json::number_integer_t>();
    if (v < 0 || v > 0xFFFFFFFFll) return std::nullopt;
    return static_cast<std::uint32_t>(v);
  }
  return core::json_uint32(j);
}

template <typename J, typename F>
void visit_id(J& parent, const char* key, const std::string& base, F& fn) {
  if (!parent.is_object()) return;
  auto it = parent.find(key);
  if (it == parent.end()) return;
  if (auto id = payload_id(*it)) fn(*it, json_pointer_join(base, key), *id);
}

template <typename J, typename F>
void visit_array(J& parent, const char* key, const std::string& base, F&& each) {
  if (!parent.is_object()) return;
  auto it = parent.find(key);
  if (it == parent.end() || !it->is_array()) return;
  std::string ptr = json_pointer_join(base, key);
  for (std::size_t i = 0; i < it->size(); ++i) each((*it)[i], json_pointer_join(ptr, i));
}

// The places of §5, §7, §8, §10 and §13 that hold a payload id.
template <typename J, typename F>
void walk_refs(J& m, F& fn) {
  visit_array(m, "meshes", "", [&](auto& mesh, const std::string& mp) {
    visit_array(mesh, "streams", mp,
                [&](auto& s, const std::string& sp) { visit_id(s, "payload", sp, fn); });
    visit_id(mesh, "indices", mp, fn);  // 1.0: one index stream per mesh
    visit_array(mesh, "draws", mp,
                [&](auto& d, const std::string& dp) { visit_id(d, "indices", dp, fn); });
  });
  visit_array(m, "textures", "",
              [&](auto& t, const std::string& tp) { visit_id(t, "payload", tp, fn); });
  visit_array(m, "appearances", "",
              [&](auto& a, const std::string& ap) { visit_id(a, "preview", ap, fn); });
  visit_array(m, "mesh_deformations", "", [&](auto& ch, const std::string& cp) {
    visit_array(ch, "frames", cp,
                [&](auto& f, const std::string& fp) { visit_id(f, "payload", fp, fn); });
  });
  visit_array(m, "drivers", "", [&](auto& d, const std::string& dp) {
    if (!d.is_object()) return;
    auto it = d.find("sound");
    if (it != d.end()) visit_id(*it, "payload", json_pointer_join(dp, "sound"), fn);
  });
}

// ---- compression ----------------------------------------------------------

/// One payload as stored: `stored` empty means the decoded bytes as they are.
struct Encoded {
  std::vector<std::uint8_t> stored;
  std::uint32_t crc = 0;  ///< ZIP: CRC-32 of the decoded bytes
};

/// Run work(state, i) for i in [0, n) as up to `options.threads` pieces on
/// the options' executor; each piece gets its own state from make_state()
/// and takes the next item until none is left. Items are independent, so
/// the results do not depend on how they are spread.
template <typename MakeState, typename Work>
void parallel_for(std::size_t n, const WriteOptions& options, MakeState make_state, Work work) {
  core::Executor& ex = options.executor != nullptr ? *options.executor
                       : options.threads == 1      ? core::serial_executor()
                                                   : core::default_executor();
  const std::size_t threads = options.threads == 0 ? ex.concurrency() : options.threads;
  const std::size_t pieces = std::min<std::size_t>(threads, std::max<std::size_t>(n, 1));
  std::atomic<std::size_t> next{0};
  ex.parallel_for(0, pieces, 1, [&](std::size_t b, std::size_t e) {
    for (std::size_t piece = b; piece < e; ++piece) {
      auto state = make_state();
      for (std::size_t i = next++; i < n; i = next++) work(state, i);
    }
  });
}

struct CCtxDeleter {
  void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
};

/// §2: one frame, content size set, no dictionary, no checksum; kept only
/// when strictly smaller than the raw bytes. (The output buffer has the
/// full bound: zstd refuses some frames that would fit a tighter buffer.)
void zstd_encode(ZSTD_CCtx* cctx, int level, core::Bytes raw, Encoded& out) {
  if (raw.size() < 2) return;
  ZSTD_CCtx_reset(cctx, ZSTD_reset_session_and_parameters);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, level);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 1);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 0);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_dictIDFlag, 0);
  out.stored.resize(ZSTD_compressBound(raw.size()));
  std::size_t r =
      ZSTD_compress2(cctx, out.stored.data(), out.stored.size(), raw.data(), raw.size());
  if (ZSTD_isError(r) || r >= raw.size()) {
    out.stored.clear();
    out.stored.shrink_to_fit();
    return;
  }
  out.stored.resize(r);
  out.stored.shrink_to_fit();
}

std::uint32_t crc32_of(core::Bytes b) {
  uLong crc = crc32(0L, Z_NULL, 0);
  std::size_t pos = 0;
  while (pos < b.size()) {
    auto n = static_cast<uInt>(std::min<std::size_t>(b.size() - pos, 1u << 30));
    crc = crc32(crc, b.data() + pos, n);
    pos += n;
  }
  return static_cast<std::uint32_t>(crc);
}

/// Raw DEFLATE (ZIP method 8), kept only when strictly smaller.
void deflate_encode(int level, core::Bytes raw, Encoded& out) {
  out.crc = crc32_of(raw);
  if (raw.size() < 2) return;
  z_stream zs{};
  if (deflateInit2(&zs, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) return;
  out.stored.resize(raw.size() - 1);
  zs.next_in = const_cast<Bytef*>(raw.data());
  zs.avail_in = static_cast<uInt>(raw.size());  // ≤ 512 MiB (§2), checked before
  zs.next_out = out.stored.data();
  zs.avail_out = static_cast<uInt>(out.stored.size());
  int rc = deflate(&zs, Z_FINISH);
  std::size_t produced = zs.total_out;
  deflateEnd(&zs);
  if (rc != Z_STREAM_END) {
    out.stored.clear();
    out.stored.shrink_to_fit();
    return;
  }
  out.stored.resize(produced);
  out.stored.shrink_to_fit();
}

// ---- containers -----------------------------------------------------------

/// What the container writers need: the rewritten manifest and the payloads
/// to store, in their new id order.
struct Prepared {
  Json manifest;                      ///< ids renumbered, format_version removed
  bool manifest_changed = false;      ///< differs from the caller's manifest
  std::vector<core::Bytes> payloads;  ///< new id → decoded bytes
  WriteStats stats;
  std::vector<core::Issue> notes;  ///< writer warnings
};

core::Result<Prepared> prepare(const PackageContent& content, const WriteOptions& options) {
  if (!content.manifest.is_object())
    return make_error(codes::BEM_WRITE_MANIFEST, "the manifest must be a JSON object");
  const std::size_t n = content.payloads.size();
  Prepared p;
  p.stats.payloads_in = n;

  std::vector<bool> referenced(n, false);
  std::optional<core::Error> bad;
  auto mark = [&](const Json&, const std::string& ptr, std::uint32_t id) {
    if (id >= n || content.payloads[id].empty()) {
      if (!bad)
        bad = core::error_at_pointer(codes::BEM_WRITE_MISSING_PAYLOAD,
                                     "the manifest references payload " + std::to_string(id) +
                                         ", which the package does not hold",
                                     ptr);
      return;
    }
    referenced[id] = true;
  };
  walk_refs(content.manifest, mark);
  if (bad) return *bad;

  // §2: byte-identical payloads share one id; the lowest original id wins.
  std::vector<std::uint32_t> canonical(n);
  std::unordered_map<std::size_t, std::vector<std::uint32_t>> by_hash;
  for (std::uint32_t i = 0; i < n; ++i) {
    canonical[i] = i;
    if (!referenced[i] && !options.keep_unreferenced) continue;
    const auto& bytes = content.payloads[i];
    if (bytes.empty() || bytes.size() > kMaxPayloadSize)
      return make_error(codes::BEM_WRITE_PAYLOAD_SIZE, "payload " + std::to_string(i) + " is " +
                                                           std::to_string(bytes.size()) +
                                                           " bytes; §2 allows 1 byte .. 512 MiB");
    std::string_view view(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    auto& bucket = by_hash[std::hash<std::string_view>{}(view)];
    for (std::uint32_t j : bucket)
      if (content.payloads[j] == bytes) {
        canonical[i] = j;
        break;
      }
    if (canonical[i] == i) bucket.push_back(i);
  }
  // New ids follow the original order, so a package without duplicates or
  // unused payloads keeps its ids.
  std::vector<std::uint32_t> new_id(n, 0);
  std::uint32_t next = 0;
  for (std::uint32_t i = 0; i < n; ++i) {
    bool kept = referenced[i] || options.keep_unreferenced;
    if (!kept) {
      ++p.stats.unreferenced;
      continue;
    }
    if (canonical[i] != i) {
      ++p.stats.deduplicated;
      continue;
    }
    new_id[i] = next++;
    p.payloads.push_back(content.payloads[i]);
    p.stats.payload_bytes += content.payloads[i].size();
  }
  for (std::uint32_t i = 0; i < n; ++i)
    if (canonical[i] != i) new_id[i] = new_id[canonical[i]];
  if (p.payloads.size() > kMaxPayloadsV12)
    return make_error(codes::BEM_WRITE_PAYLOAD_COUNT,
                      std::to_string(p.payloads.size()) +
                          " distinct payloads; §11 allows at most 16384 directory entries");
  if (p.stats.unreferenced)
    p.notes.push_back({codes::BEM_WRITE_UNREFERENCED_DROPPED,
                       core::Severity::kWarning,
                       "§2",
                       {},
                       std::to_string(p.stats.unreferenced) +
                           " payload(s) that nothing in the manifest references were dropped"});
  if (p.stats.deduplicated)
    p.notes.push_back({codes::BEM_WRITE_DEDUPLICATED,
                       core::Severity::kInfo,
                       "§2",
                       {},
                       std::to_string(p.stats.deduplicated) +
                           " payload id(s) held bytes identical to another payload and now "
                           "share its id"});
  p.stats.payloads_out = p.payloads.size();

  p.manifest = content.manifest;
  auto renumber = [&](Json& v, const std::string&, std::uint32_t id) {
    v = static_cast<Json::number_unsigned_t>(new_id[id]);
  };
  walk_refs(p.manifest, renumber);
  p.manifest.erase("format_version");
  p.manifest_changed = p.manifest != content.manifest;
  return p;
}

core::Result<std::string> manifest_text(const Json& manifest, bool changed,
                                        const PackageContent& content) {
  std::string text;
  if (!changed && !content.manifest_text.empty()) {
    text = content.manifest_text;
  } else {
    try {
      text = manifest.dump(-1, ' ', false, Json::error_handler_t::strict);
    } catch (const std::exception& e) {
      return make_error(codes::BEM_WRITE_MANIFEST,
                        std::string("manifest cannot be written: ") + e.what());
    }
  }
  if (text.empty() || text.size() > kMaxManifestSize)
    return make_error(codes::BEM_WRITE_MANIFEST_SIZE, "manifest is " + std::to_string(text.size()) +
                                                          " bytes; §2 allows 1 byte .. 4 MiB");
  return text;
}

std::string file_too_large(std::uint64_t size) {
  return "the package would be " + std::to_string(size) + " bytes; §2 allows at most 2 GiB";
}

/// §2 layout: header, manifest, directory, payloads contiguous in id order.
core::Result<std::vector<std::uint8_t>> assemble_binary(const std::string& manifest, int minor,
                                                        const std::vector<core::Bytes>& payloads,
                                                        const std::vector<Encoded>& enc) {
  const std::uint64_t count = payloads.size();
  std::uint64_t offset = kHeaderSize + manifest.size() + count * kDirectoryEntrySize;
  std::uint64_t size = offset;
  for (std::size_t i = 0; i < payloads.size(); ++i)
    size += enc[i].stored.empty() ? payloads[i].size() : enc[i].stored.size();
  if (size > kMaxFileSize) return make_error(codes::BEM_WRITE_FILE_TOO_LARGE, file_too_large(size));
  core::ByteWriter w;
  w.write_bytes(core::Bytes(kMagic, 8));
  w.write<std::uint16_t>(1);
  w.write(static_cast<std::uint16_t>(minor));
  w.write<std::uint32_t>(kHeaderSize);
  w.write<std::uint64_t>(size);
  w.write<std::uint64_t>(manifest.size());
  w.write(static_cast<std::uint32_t>(count));
  w.write<std::uint32_t>(0);  // flags
  w.write_string(manifest);
  for (std::size_t i = 0; i < payloads.size(); ++i) {
    bool zstd = !enc[i].stored.empty();
    std::uint64_t stored = zstd ? enc[i].stored.size() : payloads[i].size();
    w.write<std::uint32_t>(zstd ? 1 : 0);
    w.write<std::uint32_t>(0);  // reserved
    w.write<std::uint64_t>(offset);
    w.write<std::uint64_t>(stored);
    w.write<std::uint64_t>(payloads[i].size());
    offset += stored;
  }
  for (std::size_t i = 0; i < payloads.size(); ++i)
    w.write_bytes(enc[i].stored.empty() ? payloads[i] : core::Bytes(enc[i].stored));
  return std::move(w).take();
}

/// A ZIP entry ready to be laid out.
struct ZipItem {
  std::string name;
  core::Bytes data;  ///< bytes as stored
  std::uint64_t size = 0;
  std::uint32_t crc = 0;
  std::uint16_t method = 0;
};

// PKZip 2.0 by hand: libzip 1.7 converts timestamps with localtime(), so its
// bytes would depend on the time zone, and it cannot take data we already
// deflated to decide "DEFLATE only when smaller". Every package is ≤ 2 GiB
// (§14 keeps §2's limit), so Zip64 is never needed.
constexpr std::uint16_t kDosTime = 0;       // 00:00:00
constexpr std::uint16_t kDosDate = 0x0021;  // 1980-01-01

core::Result<std::vector<std::uint8_t>> assemble_zip(const std::vector<ZipItem>& items) {
  std::uint64_t size = 22;
  for (const auto& it : items) size += 30 + 46 + 2 * it.name.size() + it.data.size();
  if (size > kMaxFileSize) return make_error(codes::BEM_WRITE_FILE_TOO_LARGE, file_too_large(size));
  if (items.size() > 0xFFFF)
    return make_error(codes::BEM_WRITE_PAYLOAD_COUNT, "too many ZIP entries for PKZip 2.0");
  core::ByteWriter w;
  std::vector<std::uint32_t> local(items.size());
  auto common = [&](const ZipItem& it) {
    w.write<std::uint16_t>(it.method == 8 ? 20 : 10);  // version needed
    w.write<std::uint16_t>(0);                         // flags: not encrypted, sizes known
    w.write(it.method);
    w.write(kDosTime);
    w.write(kDosDate);
    w.write(it.crc);
    w.write(static_cast<std::uint32_t>(it.data.size()));
    w.write(static_cast<std::uint32_t>(it.size));
    w.write(static_cast<std::uint16_t>(it.name.size()));
    w.write<std::uint16_t>(0);  // extra field length
  };
  for (std::size_t i = 0; i < items.size(); ++i) {
    local[i] = static_cast<std::uint32_t>(w.size());
    w.write<std::uint32_t>(0x04034b50);
    common(items[i]);
    w.write_string(items[i].name);
    w.write_bytes(items[i].data);
  }
  const auto cd_start = static_cast<std::uint32_t>(w.size());
  for (std::size_t i = 0; i < items.size(); ++i) {
    w.write<std::uint32_t>(0x02014b50);
    w.write<std::uint16_t>(20);  // made by: MS-DOS, spec 2.0
    common(items[i]);
    w.write<std::uint16_t>(0);  // comment length
    w.write<std::uint16_t>(0);  // disk number
    w.write<std::uint16_t>(0);  // internal attributes
    w.write<std::uint32_t>(0);  // external attributes
    w.write(local[i]);
    w.write_string(items[i].name);
  }
  const auto cd_size = static_cast<std::uint32_t>(w.size() - cd_start);
  w.write<std::uint32_t>(0x06054b50);
  w.write<std::uint16_t>(0);
  w.write<std::uint16_t>(0);
  w.write(static_cast<std::uint16_t>(items.size()));
  w.write(static_cast<std::uint16_t>(items.size()));
  w.write(cd_size);
  w.write(cd_start);
  w.write<std::uint16_t>(0);  // comment length
  return std::move(w).take();
}

std::string payload_member_name(std::size_t id) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "payloads/%04zu.bin", id);  // §14: four digits, more from 10000
  return buf;
}

/// §1 version choice and final check, shared by both containers.
/// `build(minor)` lays the package out for a version (nullopt: the
/// container's own default: binary 1.0 or 1.5 by structure, ZIP no hint).
template <typename Build>
core::Result<WrittenPackage> choose_and_write(Prepared& p, const WriteOptions& options,
                                              core::Report* report, Build build) {
  if (options.minor && (*options.minor < 0 || *options.minor > kMaxMinor))
    return make_error(codes::BEM_WRITE_VERSION, "version 1." + std::to_string(*options.minor) +
                                                    " does not exist (1.0 .. 1.5)");
  auto candidate = build(std::nullopt);
  if (!candidate) return std::move(candidate).error();
  ValidationResult checked = validate_package(*candidate, options.validate);
  const int needed = checked.summary.needed_minor;
  const int target = options.minor.value_or(needed);
  auto finish = [&](core::Report& r) {
    if (!report) return;
    core::Report out(r.max_issues());
    for (auto& n : p.notes) out.add(n);
    out.merge(r);
    *report = std::move(out);
  };
  if (target < needed) {
    finish(checked.report);
    std::string why;  // a §11 per-selection limit, when that is what needs the version
    if (checked.summary.proof) lowest_minor_for_worst_cases(*checked.summary.proof, target, &why);
    return make_error(codes::BEM_WRITE_VERSION_TOO_LOW,
                      "the content needs BEM 1." + std::to_string(needed) +
                          (why.empty() ? "" : " (" + why + ")") + "; it cannot be written as 1." +
                          std::to_string(target));
  }
  std::vector<std::uint8_t> bytes = std::move(*candidate);
  if (target != checked.summary.effective_minor || options.format_version || options.minor) {
    auto again = build(target);
    if (!again) return std::move(again).error();
    if (*again != bytes) {
      bytes = std::move(*again);
      checked = validate_package(bytes, options.validate);
    }
  }
  finish(checked.report);
  if (!checked.valid()) {
    for (const auto& issue : checked.report.issues())
      if (issue.severity == core::Severity::kError)
        return make_error(codes::BEM_WRITE_INVALID,
                          "the content is not a valid BEM 1." + std::to_string(target) +
                              " package: " + issue.code + ": " + issue.message,
                          issue.location);
    return make_error(codes::BEM_WRITE_INVALID, "the content is not a valid BEM package");
  }
  p.stats.needed_minor = needed;
  p.stats.minor = target;
  p.stats.file_bytes = bytes.size();
  return WrittenPackage{std::move(bytes), p.stats};
}

}  // namespace

core::Status declare_used_capabilities(PackageContent& content) {
  auto prepared = prepare(content, WriteOptions{});
  if (!prepared) return std::move(prepared).error();
  Prepared& p = *prepared;
  auto text = manifest_text(p.manifest, true, content);
  if (!text) return std::move(text).error();
  // Laid out as the newest version, stored raw: every capability is
  // expressible and nothing is compressed only to be thrown away.
  std::vector<Encoded> raw(p.payloads.size());
  auto bytes = assemble_binary(*text, kMaxMinor, p.payloads, raw);
  if (!bytes) return std::move(bytes).error();
  ValidateOptions vo;
  vo.check_payloads = false;
  const ValidationResult checked = validate_package(*bytes, vo);
  Json& caps = content.manifest["required_capabilities"];
  if (!caps.is_array()) caps = Json::array();
  for (const std::string& cap : known_capabilities())
    if (checked.summary.used_capabilities.count(cap) &&
        std::find(caps.begin(), caps.end(), Json(cap)) == caps.end())
      caps.push_back(cap);
  content.manifest_text.clear();
  return core::Ok{};
}

std::vector<PayloadRef> find_payload_refs(const core::Json& manifest) {
  std::vector<PayloadRef> refs;
  auto add = [&](const Json&, const std::string& ptr, std::uint32_t id) {
    refs.push_back({ptr, id});
  };
  walk_refs(manifest, add);
  return refs;
}

void for_each_payload_ref(
    core::Json& manifest,
    const std::function<void(core::Json&, const std::string&, std::uint32_t)>& fn) {
  auto f = [&](Json& v, const std::string& ptr, std::uint32_t id) { fn(v, ptr, id); };
  walk_refs(manifest, f);
}

core::Result<WrittenPackage> write_binary(const PackageContent& content,
                                          const WriteOptions& options, core::Report* report) {
  auto prepared = prepare(content, options);
  if (!prepared) return std::move(prepared).error();
  Prepared& p = *prepared;
  auto text = manifest_text(p.manifest, p.manifest_changed, content);
  if (!text) return std::move(text).error();
  p.stats.manifest_bytes = text->size();

  std::vector<Encoded> enc(p.payloads.size());
  const int level = std::clamp(options.zstd_level, 1, ZSTD_maxCLevel());
  parallel_for(
      p.payloads.size(), options,
      [] { return std::unique_ptr<ZSTD_CCtx, CCtxDeleter>(ZSTD_createCCtx()); },
      [&](auto& cctx, std::size_t i) { zstd_encode(cctx.get(), level, p.payloads[i], enc[i]); });
  for (const auto& e : enc) ++(e.stored.empty() ? p.stats.uncompressed : p.stats.compressed);

  // §11: 1.0 and 1.1 allow 4096 directory entries; the validator reports
  // more as "needs 1.2" once the candidate is laid out as 1.5.
  const bool v10_structure =
      (p.manifest.contains("appearances") || p.manifest.contains("default_appearance_id")) &&
      !p.manifest.contains("option_groups");
  auto build = [&](std::optional<int> minor) {
    int m = minor.value_or(v10_structure && p.payloads.size() <= kMaxPayloadsV10 ? 0 : kMaxMinor);
    return assemble_binary(*text, m, p.payloads, enc);
  };
  return choose_and_write(p, options, report, build);
}

core::Result<WrittenPackage> write_zip(const PackageContent& content, const WriteOptions& options,
                                       core::Report* report) {
  auto prepared = prepare(content, options);
  if (!prepared) return std::move(prepared).error();
  Prepared& p = *prepared;

  std::vector<Encoded> enc(p.payloads.size());
  const int level = std::clamp(options.deflate_level, 1, 9);
  parallel_for(
      p.payloads.size(), options, [] { return 0; },
      [&](int&, std::size_t i) {
        if (options.zip_deflate)
          deflate_encode(level, p.payloads[i], enc[i]);
        else
          enc[i].crc = crc32_of(p.payloads[i]);
      });
  for (const auto& e : enc) ++(e.stored.empty() ? p.stats.uncompressed : p.stats.compressed);

  const bool hint = options.format_version || options.minor.has_value();
  auto build = [&](std::optional<int> minor) -> core::Result<std::vector<std::uint8_t>> {
    Json manifest = p.manifest;
    bool changed = p.manifest_changed;
    if (minor && hint) {
      // §14 hint; keep the key where the caller had it.
      std::string v = "1." + std::to_string(*minor);
      manifest = Json::object();
      bool placed = false;
      for (auto it = content.manifest.begin(); it != content.manifest.end(); ++it) {
        if (it.key() == "format_version") {
          manifest["format_version"] = v;
          placed = true;
        } else {
          manifest[it.key()] = p.manifest[it.key()];
        }
      }
      if (!placed) manifest["format_version"] = v;
      changed = manifest != content.manifest;
    }
    auto text = manifest_text(manifest, changed, content);
    if (!text) return std::move(text).error();
    p.stats.manifest_bytes = text->size();
    Encoded menc;
    deflate_encode(level, core::as_bytes(*text), menc);
    if (!options.zip_deflate) menc.stored.clear();
    std::vector<ZipItem> items;
    items.reserve(p.payloads.size() + 1);
    auto add = [&](std::string name, core::Bytes raw, const Encoded& e) {
      bool deflated = !e.stored.empty();
      items.push_back({std::move(name), deflated ? core::Bytes(e.stored) : raw, raw.size(), e.crc,
                       static_cast<std::uint16_t>(deflated ? 8 : 0)});
    };
    add("manifest.json", core::as_bytes(*text), menc);
    for (std::size_t i = 0; i < p.payloads.size(); ++i)
      add(payload_member_name(i), p.payloads[i], enc[i]);
    return assemble_zip(items);
  };
  return choose_and_write(p, options, report, build);
}

core::Result<std::vector<std::uint8_t>> build_stored_zip(std::span<const ZipFileInput> files) {
  std::vector<ZipItem> items;
  items.reserve(files.size());
  for (const auto& f : files) {
    if (f.data.size() > kMaxFileSize)
      return make_error(codes::BEM_WRITE_FILE_TOO_LARGE, file_too_large(f.data.size()));
    items.push_back({f.name, f.data, f.data.size(), crc32_of(f.data), 0});
  }
  return assemble_zip(items);
}

core::Result<PackageContent> read_package_content(core::Bytes file) {
  core::Report rep;
  auto pkg = Package::open(file, rep);
  auto first_error = [&]() -> core::Error {
    for (const auto& i : rep.issues())
      if (i.severity == core::Severity::kError) return core::Error{i.code, i.message, i.location};
    return make_error(codes::BEM_CONTAINER, "the package cannot be read");
  };
  if (!pkg || rep.has_errors()) return first_error();
  if (pkg->kind() == ContainerKind::kCollection)
    return make_error(codes::BEM_WRITE_COLLECTION,
                      "a collection bundle holds several packages; extract its .bem members first");
  auto manifest = core::parse_json_strict(pkg->manifest_text());
  if (!manifest) {
    core::Error e = std::move(manifest).error();
    e.code = manifest_json_code(e.code);
    e.message = "manifest: " + e.message;
    return e;
  }
  PackageContent content;
  content.manifest = std::move(*manifest);
  content.manifest_text = std::string(pkg->manifest_text());
  content.payloads.resize(pkg->payload_count());
  // Decoded sizes are bounded per payload (§2: 512 MiB) but not in total; a
  // zstd bomb in a 2 GiB file must not be able to exhaust memory.
  constexpr std::uint64_t kMaxDecodedTotal = 4ull << 30;
  std::uint64_t total = 0;
  for (std::uint32_t id = 0; id < pkg->payload_count(); ++id) {
    const PayloadInfo& info = pkg->payloads()[id];
    if (!info.present) continue;
    total += info.decoded_size;
    if (total > kMaxDecodedTotal)
      return make_error(codes::BEM_WRITE_TOO_MUCH_DATA,
                        "the payloads decode to more than 4 GiB; not read into memory");
    auto data = pkg->read_payload(id);
    if (!data) return std::move(data).error();
    content.payloads[id].assign(data->bytes().begin(), data->bytes().end());
  }
  return content;
}

}  // namespace charkit::bem
