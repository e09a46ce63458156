// Internal: the storage behind a BlobStore (a local folder or an S3 bucket).
// BlobStore, Upload and BlobReader (blob_store.h) keep the public API; the
// upload's temporary file, hashing and key are common, and a Backend only
// publishes, finds, reads and removes. Backends are immutable after open
// and safe to use from several threads.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "charkit/core/result.h"
#include "charkit/store/blob_store.h"

namespace charkit::store::detail {

class ReaderImpl {
 public:
  virtual ~ReaderImpl() = default;
  /// `out` is already clipped to the blob's size; returns the bytes read.
  virtual core::Result<std::size_t> read_at(std::uint64_t offset,
                                            std::span<std::uint8_t> out) const = 0;
};

struct LocalBlobAccess {
  static LocalBlob make(std::filesystem::path path, bool temporary) {
    return LocalBlob(std::move(path), temporary);
  }
};

class Backend {
 public:
  virtual ~Backend() = default;

  /// fsync the temporary file before publish (local folders).
  virtual bool sync_before_publish() const = 0;
  virtual core::Result<std::optional<std::string>> find(std::string_view sha256) const = 0;
  /// Publishes the finished temporary file `tmp` (open as `fd`) under
  /// blob.key, or reuses identical content already stored: sets blob.key
  /// (when reusing another key) and blob.reused.
  virtual core::Status publish(const std::filesystem::path& tmp, int fd,
                               StoredBlob& blob) const = 0;
  struct Opened {
    std::unique_ptr<ReaderImpl> reader;
    std::uint64_t size = 0;
  };
  /// `key` is a valid key.
  virtual core::Result<Opened> open(std::string_view key) const = 0;
  virtual core::Status remove(std::string_view key) const = 0;
  virtual core::Result<LocalBlob> local_file(std::string_view key) const = 0;
  virtual bool is_s3() const = 0;
};

/// "{tag}-{host}-{pid}-XXXXXX" in `dir` (mkstemp); returns the fd and path.
core::Result<std::pair<int, std::filesystem::path>> make_temp_file(const std::filesystem::path& dir,
                                                                   std::string_view tag);

/// Removes the temporary files of `dir` that nobody writes any more: those
/// of this host whose process is gone, those of other hosts (and unnamed
/// ones of older versions) last modified more than 24 hours before `now`.
void remove_stale_temp_files(const std::filesystem::path& dir,
                             std::chrono::system_clock::time_point now);

inline constexpr std::chrono::hours kStaleAfter{24};

/// Opens the S3 backend (docs/store.md); options.tmp_dir is set.
core::Result<std::shared_ptr<const Backend>> open_s3_backend(std::string_view url,
                                                             const BlobStoreOptions& options);

}  // namespace charkit::store::detail
