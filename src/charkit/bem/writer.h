// BEM writer: an in-memory package (manifest + decoded payloads) to the
// binary container (§2) or the ZIP container (§14), and the reverse
// (read_package_content) for conversion. Contract: docs/bem/writer.md.
//
// Every write deduplicates byte-identical payloads (§2), drops unreferenced
// ones, picks the lowest version that expresses the content (§1) by asking
// the validator, refuses invalid content with the validator's report, and
// produces the same bytes for the same input whatever the thread count.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "charkit/bem/validate.h"
#include "charkit/core/bytes.h"
#include "charkit/core/json.h"
#include "charkit/core/parallel.h"
#include "charkit/core/report.h"
#include "charkit/core/result.h"

namespace charkit::bem {

/// A package in memory: the manifest and the decoded bytes of each payload,
/// indexed by the payload ids the manifest uses.
struct PackageContent {
  core::Json manifest;
  std::vector<std::vector<std::uint8_t>> payloads;
  /// Optional: the manifest's original UTF-8 text (as read). When the writer
  /// changes nothing in the manifest (no id renumbered, no format_version
  /// added or removed) this text is written byte for byte instead of a fresh
  /// compact dump. It must parse to `manifest`.
  std::string manifest_text;
};

/// One place where a manifest holds a payload id.
struct PayloadRef {
  std::string pointer;  ///< RFC 6901 JSON pointer to the integer
  std::uint32_t id = 0;
};

/// Every payload reference of a manifest, in document order: meshes[].streams[].payload,
/// meshes[].indices (1.0), meshes[].draws[].indices (1.1+), textures[].payload,
/// appearances[].preview, mesh_deformations[].frames[].payload,
/// drivers[].sound.payload. Values that are not UInt32 integers are skipped
/// (the validator reports them).
std::vector<PayloadRef> find_payload_refs(const core::Json& manifest);
/// The same walk over a mutable manifest: fn(value, pointer, id) may rewrite value.
void for_each_payload_ref(
    core::Json& manifest,
    const std::function<void(core::Json& value, const std::string& pointer, std::uint32_t id)>& fn);

/// §1: add to the manifest's required_capabilities every capability the
/// content uses and does not declare (found by laying the content out and
/// validating it, so the rule is the validator's), in the order of §1's
/// table. For content assembled from parts (bem pack, a project.json) whose
/// author should not have to list them. Errors: the writer's own (a
/// manifest that is not an object, a missing payload).
core::Status declare_used_capabilities(PackageContent& content);

struct WriteOptions {
  /// zstd level for binary payloads (1..22). 9: most of level 19's ratio on
  /// mesh and texture data at a fraction of its time.
  int zstd_level = 9;
  /// DEFLATE level for ZIP entries (1..9).
  int deflate_level = 6;
  /// Compression threads (at most this many payloads are compressed at
  /// once); 0 = the executor's concurrency. The bytes written do not depend
  /// on it.
  unsigned threads = 1;
  /// Where compression runs; null = core::default_executor() (the calling
  /// thread alone when threads is 1). Not owned.
  core::Executor* executor = nullptr;
  /// Write this minor instead of the lowest one the content needs; it may
  /// not be lower than needed.
  std::optional<int> minor;
  /// Keep payloads nothing references (default: dropped with a warning).
  bool keep_unreferenced = false;
  /// ZIP: write "format_version": "1.m" into the manifest (§14 hint). An
  /// existing format_version is always removed first.
  bool format_version = false;
  /// ZIP: DEFLATE entries only where that is smaller (default), or never.
  bool zip_deflate = true;
  /// Options for the validation of the written bytes (skip_validation …).
  ValidateOptions validate;
};

struct WriteStats {
  int minor = 0;                     ///< version written (binary header / ZIP hint or needed)
  int needed_minor = 0;              ///< lowest version the content needs
  std::size_t payloads_in = 0;       ///< payloads given
  std::size_t payloads_out = 0;      ///< payloads written
  std::size_t deduplicated = 0;      ///< ids that were folded into an identical payload
  std::size_t unreferenced = 0;      ///< payloads dropped because nothing references them
  std::size_t compressed = 0;        ///< zstd (binary) or DEFLATE (ZIP) payloads
  std::size_t uncompressed = 0;      ///< raw (binary) or STORED (ZIP) payloads
  std::uint64_t payload_bytes = 0;   ///< decoded bytes of the payloads written
  std::uint64_t file_bytes = 0;      ///< size of the written file
  std::uint64_t manifest_bytes = 0;  ///< size of the written manifest
};

struct WrittenPackage {
  std::vector<std::uint8_t> bytes;
  WriteStats stats;
};

/// Binary container (§2). On failure (limits, invalid content) no bytes are
/// produced; the error names the first problem. `report`, when given,
/// receives the writer's warnings and the validator's report of the written
/// bytes (or of the refused candidate).
core::Result<WrittenPackage> write_binary(const PackageContent& content,
                                          const WriteOptions& options = {},
                                          core::Report* report = nullptr);
/// ZIP container (§14): manifest.json, then payloads/0000.bin … in id order
/// (five digits from 10000), STORED or DEFLATE, fixed timestamps.
core::Result<WrittenPackage> write_zip(const PackageContent& content,
                                       const WriteOptions& options = {},
                                       core::Report* report = nullptr);

/// Read a single package (binary or ZIP) into memory with the existing
/// reader: strict manifest, every present payload decoded and checked (a
/// ZIP's missing numbers stay empty). Collection bundles are refused.
/// The package is not validated here; the writers do that.
core::Result<PackageContent> read_package_content(core::Bytes file);

/// A file for build_zip_archive.
struct ZipFileInput {
  std::string name;
  core::Bytes data;
};
/// A deterministic PKZip 2.0 archive (no Zip64: ≤ 2 GiB), all entries
/// STORED, in the given order, timestamps 1980-01-01 00:00.
core::Result<std::vector<std::uint8_t>> build_stored_zip(std::span<const ZipFileInput> files);

}  // namespace charkit::bem
