// Content-addressed blob store: every stored file lives at
//   {kind}/{yyyy}/{mm}/{sha256[0:2]}/{sha256}.{ext}
// (the model and motion format contract §3) under a local folder or under a
// prefix of an S3-compatible bucket (s3://BUCKET/PREFIX?endpoint=URL&region=R).
// Uploads stream into a local temporary file while hashing; on commit a
// byte-identical blob is reused, else the file is published (a no-replace
// link() locally, a PUT or multipart upload on S3). The original file name
// never becomes a path (the catalogue keeps it in assets.original_name).
// Contract: docs/store.md.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "charkit/core/bytes.h"
#include "charkit/core/result.h"

namespace charkit::store {

/// What a stored file is; the first folder of its path.
enum class Kind { model, motion, package, keypoints };

/// "models", "motions", "packages", "keypoints" (the folder and the API name).
std::string_view kind_name(Kind kind);
std::optional<Kind> parse_kind(std::string_view name);

/// The extensions a kind accepts (lower case, no dot; the model and motion
/// format contract §1–§3): models vrm glb gltf fbx; motions bvh fbx gltf glb
/// json; packages bem zip; keypoints ndjson (written by preprocessing).
std::span<const std::string_view> allowed_extensions(Kind kind);
/// Case-insensitive; `ext` without the dot.
bool extension_allowed(Kind kind, std::string_view ext);
/// The extension of a client file name, lower case, without the dot
/// ("" when there is none). Only the part after the last '.' of the last
/// path component counts.
std::string extension_of(std::string_view file_name);

/// Whether a storage error may pass if the work is tried again later: the
/// service could not be reached (STORE_S3_NETWORK) or answered 500, 502, 503
/// or 504 (STORE_S3_HTTP) after the client's own retries. Local-disk
/// errors, refusals and bad answers are not. Jobs that meet one go back to
/// the queue (docs/server.md §Jobs).
bool is_transient(const core::Error& e);

inline constexpr std::uint64_t kDefaultMaxUploadBytes = 512ull * 1024 * 1024;

inline constexpr std::uint64_t kDefaultS3MultipartThreshold = 16ull * 1024 * 1024;

struct BlobStoreOptions {
  /// Uploads larger than this fail with STORE_TOO_LARGE and leave nothing.
  /// On S3 it also bounds local_file() downloads.
  std::uint64_t max_bytes = kDefaultMaxUploadBytes;
  /// Clock for the {yyyy}/{mm} folders (UTC) and for the age of stale
  /// temporary files and multipart uploads; the system clock when empty.
  /// (S3 requests are always signed with the system clock.)
  std::function<std::chrono::system_clock::time_point()> now;
  /// Folder of the temporary files (uploads in progress, S3 downloads for
  /// local_file). "" = ${root}/tmp for a local store (it must be on the
  /// root's file system: uploads are published with link()), and
  /// ${TMPDIR:-/tmp}/charkit-blobs for S3.
  std::filesystem::path tmp_dir;

  // S3 only.
  /// Uploads up to this size go in one PUT; larger ones as a multipart upload.
  std::uint64_t s3_multipart_threshold = kDefaultS3MultipartThreshold;
  /// Part size of multipart uploads (S3 wants at least 5 MiB but for the
  /// last part; raised when 10,000 parts would not hold the upload).
  std::uint64_t s3_part_size = kDefaultS3MultipartThreshold;
  /// BlobReader::read_at fetches at least this much per ranged GET and
  /// keeps it for the reads that follow.
  std::size_t s3_read_ahead = 1u << 20;
  /// Whole-request limit of a request without payload (payloads add their
  /// size at 256 KiB/s); a transfer stalled below 1 KiB/s is abandoned sooner.
  std::chrono::milliseconds s3_timeout{60'000};
  std::chrono::milliseconds s3_connect_timeout{10'000};
};

/// A file in the store. `key` is the path relative to the root
/// ("motions/2026/11/ab/ab…ef.bvh"); it is what the catalogue records.
struct StoredBlob {
  std::string sha256;  ///< 64 lower-case hex digits
  std::uint64_t size = 0;
  Kind kind = Kind::model;
  std::string ext;
  std::string key;
  bool reused = false;  ///< true: identical content was already stored, nothing new was written
};

namespace detail {
class Backend;
class ReaderImpl;
struct LocalBlobAccess;
}  // namespace detail

/// Random access to a stored file (pread locally, ranged GETs on S3; safe to
/// share between threads).
class BlobReader {
 public:
  BlobReader();
  BlobReader(BlobReader&& other) noexcept;
  BlobReader& operator=(BlobReader&& other) noexcept;
  BlobReader(const BlobReader&) = delete;
  BlobReader& operator=(const BlobReader&) = delete;
  ~BlobReader();

  std::uint64_t size() const { return size_; }
  /// Reads up to out.size() bytes at `offset`; returns the count (0 at or past the end).
  core::Result<std::size_t> read_at(std::uint64_t offset, std::span<std::uint8_t> out) const;

 private:
  friend class BlobStore;
  std::unique_ptr<detail::ReaderImpl> impl_;
  std::uint64_t size_ = 0;
};

/// A stored blob as a file on the local disk, for decoders that want a path
/// (Assimp, mmap). Local store: the stored file itself. S3: a downloaded
/// temporary copy, removed when this object is destroyed. Move-only.
class LocalBlob {
 public:
  LocalBlob(LocalBlob&& other) noexcept;
  LocalBlob& operator=(LocalBlob&& other) noexcept;
  LocalBlob(const LocalBlob&) = delete;
  LocalBlob& operator=(const LocalBlob&) = delete;
  ~LocalBlob();

  const std::filesystem::path& path() const { return path_; }
  /// True when path() is a temporary copy that goes with this object.
  bool temporary() const { return temporary_; }

 private:
  friend struct detail::LocalBlobAccess;
  LocalBlob(std::filesystem::path path, bool temporary)
      : path_(std::move(path)), temporary_(temporary) {}
  std::filesystem::path path_;
  bool temporary_ = false;
};

class BlobStore;

/// One upload in progress. Move-only; destroying an uncommitted upload
/// removes its temporary file.
class Upload {
 public:
  Upload(Upload&& other) noexcept;
  Upload& operator=(Upload&& other) noexcept;
  Upload(const Upload&) = delete;
  Upload& operator=(const Upload&) = delete;
  ~Upload();

  /// Appends bytes and hashes them. Past the size limit the upload is
  /// aborted (temporary file removed) and STORE_TOO_LARGE is returned; any
  /// later call fails with STORE_UPLOAD_CLOSED.
  core::Status write(core::Bytes data);
  /// The SHA-256 (64 lower-case hex digits) of the bytes written so far;
  /// ends the hashing, so write() fails afterwards. Lets a caller take the
  /// content's lock (store/content_lock.h) before commit() publishes it.
  const std::string& digest();
  /// fsync, then publish under the content address (or reuse the file that
  /// is already there). The upload is closed afterwards either way.
  core::Result<StoredBlob> commit();
  /// Drops the upload and its temporary file; safe to call twice.
  void abort();

  std::uint64_t bytes_written() const;
  bool open() const;

 private:
  friend class BlobStore;
  struct State;
  explicit Upload(std::unique_ptr<State> state);
  std::unique_ptr<State> s_;
};

/// Cheap to copy; copies share one backend (and its S3 connections) and may
/// be used from several threads at once.
class BlobStore {
 public:
  /// `location` is a folder (created with its tmp/ when missing) or an S3
  /// URL s3://BUCKET/PREFIX?endpoint=URL&region=R (credentials from
  /// AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN).
  /// Removes stale temporary files (docs/store.md) and, on S3, aborts
  /// multipart uploads under the prefix older than 24 hours.
  static core::Result<BlobStore> open(const std::filesystem::path& location,
                                      BlobStoreOptions options = {});

  /// STORE_KIND_EXTENSION when `ext` is not on the kind's whitelist.
  core::Result<Upload> begin_upload(Kind kind, std::string_view ext) const;
  /// Whole-buffer convenience over begin_upload/write/commit.
  core::Result<StoredBlob> put(Kind kind, std::string_view ext, core::Bytes data) const;

  /// The key of the stored file with this digest, in any kind, month or
  /// extension; nullopt when there is none.
  core::Result<std::optional<std::string>> find(std::string_view sha256) const;
  /// Opens a stored file; STORE_BAD_KEY for anything that is not a key this
  /// store writes (no "..", no absolute paths), STORE_NOT_FOUND when absent.
  core::Result<BlobReader> open_blob(std::string_view key) const;
  /// Removes a stored file (and empty folders above it); removing a missing file is not an error.
  core::Status remove(std::string_view key) const;
  /// The blob as a local file (see LocalBlob); STORE_BAD_KEY, STORE_NOT_FOUND.
  core::Result<LocalBlob> local_file(std::string_view key) const;

  /// True when `key` has the shape {kind}/{yyyy}/{mm}/{xx}/{sha256}.{ext}.
  static bool valid_key(std::string_view key);
  /// Local store only: where the key's file is (no check). Empty on S3; use
  /// local_file() for code that must work with both.
  std::filesystem::path path_of(std::string_view key) const;
  /// Local store: the absolute root folder; S3: empty.
  const std::filesystem::path& root() const { return root_; }
  /// The folder or the S3 URL, as opened (for messages).
  const std::string& location() const { return location_; }
  bool is_s3() const;
  /// Where uploads in progress are written.
  const std::filesystem::path& tmp_dir() const { return options_.tmp_dir; }
  /// Removes the temporary files of processes that are gone (this host's, by
  /// their pid) or, for other hosts' files, of a day ago, as open() does: a
  /// worker that takes over the job of a worker that died calls it, so the
  /// dead one's partial upload does not wait for the next start.
  void remove_stale_temp_files() const;
  std::uint64_t max_bytes() const { return options_.max_bytes; }

 private:
  BlobStore() = default;
  std::shared_ptr<const detail::Backend> backend_;
  BlobStoreOptions options_;
  std::filesystem::path root_;
  std::string location_;
};

}  // namespace charkit::store
