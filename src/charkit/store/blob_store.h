// Content-addressed blob store: every stored file lives at
//   ${root}/{kind}/{yyyy}/{mm}/{sha256[0:2]}/{sha256}.{ext}
// (seed 002 §3). Uploads stream into ${root}/tmp/ while hashing, then are
// fsync'ed and published with an atomic no-replace link; a byte-identical
// upload reuses the file already stored. The original file name never
// becomes a path (the catalogue keeps it in assets.original_name).
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

/// The extensions a kind accepts (lower case, no dot), seed 002
/// model-formats §1–§3: models vrm glb gltf fbx; motions bvh fbx gltf glb
/// json; packages bem zip; keypoints ndjson (written by preprocessing).
std::span<const std::string_view> allowed_extensions(Kind kind);
/// Case-insensitive; `ext` without the dot.
bool extension_allowed(Kind kind, std::string_view ext);
/// The extension of a client file name, lower case, without the dot
/// ("" when there is none). Only the part after the last '.' of the last
/// path component counts.
std::string extension_of(std::string_view file_name);

inline constexpr std::uint64_t kDefaultMaxUploadBytes = 512ull * 1024 * 1024;

struct BlobStoreOptions {
  /// Uploads larger than this fail with STORE_TOO_LARGE and leave nothing.
  std::uint64_t max_bytes = kDefaultMaxUploadBytes;
  /// Clock for the {yyyy}/{mm} folders (UTC); the system clock when empty.
  std::function<std::chrono::system_clock::time_point()> now;
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

/// Random access to a stored file (pread; safe to share between threads).
class BlobReader {
 public:
  BlobReader() = default;
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
  int fd_ = -1;
  std::uint64_t size_ = 0;
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

class BlobStore {
 public:
  /// Creates ${root} and ${root}/tmp when missing.
  static core::Result<BlobStore> open(const std::filesystem::path& root,
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

  /// True when `key` has the shape {kind}/{yyyy}/{mm}/{xx}/{sha256}.{ext}.
  static bool valid_key(std::string_view key);
  std::filesystem::path path_of(std::string_view key) const { return root_ / std::string(key); }
  const std::filesystem::path& root() const { return root_; }
  std::uint64_t max_bytes() const { return options_.max_bytes; }

 private:
  BlobStore(std::filesystem::path root, BlobStoreOptions options)
      : root_(std::move(root)), options_(std::move(options)) {}
  std::filesystem::path root_;
  BlobStoreOptions options_;
};

}  // namespace charkit::store
