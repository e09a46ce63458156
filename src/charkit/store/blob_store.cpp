#include "charkit/store/blob_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <exception>
#include <system_error>
#include <vector>

#include "charkit/core/enum_names.h"
#include "charkit/core/sha256.h"
#include "charkit/store/detail/blob_backend.h"
#include "charkit/store/detail/s3_client.h"
#include "charkit/store/error_codes.h"

namespace charkit::store {
namespace fs = std::filesystem;
using core::Error;
using core::make_error;
using core::Result;
using core::Status;

namespace {

constexpr std::array<std::string_view, 4> kModelExts{"vrm", "glb", "gltf", "fbx"};
constexpr std::array<std::string_view, 5> kMotionExts{"bvh", "fbx", "gltf", "glb", "json"};
constexpr std::array<std::string_view, 2> kPackageExts{"bem", "zip"};
constexpr std::array<std::string_view, 1> kKeypointExts{"ndjson"};
constexpr std::array<Kind, 4> kAllKinds{Kind::model, Kind::motion, Kind::package, Kind::keypoints};

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

bool is_hex_lower(std::string_view s) {
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}
bool is_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

Error io_error(std::string what, int err) {
  return make_error(codes::STORE_IO, std::move(what) + ": " + std::strerror(err));
}

// fsync a directory so that a rename or link inside it survives a crash.
void sync_dir(const fs::path& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}

Result<std::optional<std::string>> find_in(const fs::path& root, std::string_view sha) {
  if (sha.size() != 64 || !is_hex_lower(sha))
    return make_error(codes::STORE_BAD_DIGEST, "not a lower-case SHA-256 hex digest");
  // Directory iteration reports most errors through `ec`, but increments may
  // still throw; no exception leaves the module.
  try {
    std::error_code ec;
    const std::string prefix(sha.substr(0, 2));
    const std::string stem = std::string(sha) + ".";
    for (Kind kind : kAllKinds) {
      const fs::path kdir = root / std::string(kind_name(kind));
      if (!fs::is_directory(kdir, ec)) continue;
      // {yyyy}/{mm}: a few hundred folders at most, so a scan is cheap.
      for (const auto& year : fs::directory_iterator(kdir, ec)) {
        if (!year.is_directory(ec)) continue;
        for (const auto& month : fs::directory_iterator(year.path(), ec)) {
          const fs::path pdir = month.path() / prefix;
          if (!fs::is_directory(pdir, ec)) continue;
          for (const auto& f : fs::directory_iterator(pdir, ec)) {
            const std::string name = f.path().filename().string();
            if (name.size() > stem.size() && name.compare(0, stem.size(), stem) == 0) {
              std::string key = fs::relative(f.path(), root, ec).generic_string();
              if (!ec && BlobStore::valid_key(key)) return std::optional<std::string>(key);
            }
          }
        }
      }
    }
  } catch (const std::exception& e) {
    return make_error(codes::STORE_IO, std::string("scan for an existing blob: ") + e.what());
  }
  return std::optional<std::string>();
}

// The host name as it goes into temporary file names: [A-Za-z0-9.-], at most 64.
std::string host_tag() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "host";
  std::string out;
  for (const char* p = buf; *p && out.size() < 64; ++p) {
    const char c = *p;
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '-';
    out.push_back(ok ? c : '_');
  }
  return out.empty() ? "host" : out;
}

bool process_alive(long pid) {
  if (pid <= 0 || pid > 0x3fffffff) return false;
  return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH;
}

// ---- the local folder --------------------------------------------------------

class LocalReader final : public detail::ReaderImpl {
 public:
  explicit LocalReader(int fd) : fd_(fd) {}
  ~LocalReader() override { ::close(fd_); }
  LocalReader(const LocalReader&) = delete;
  LocalReader& operator=(const LocalReader&) = delete;

  Result<std::size_t> read_at(std::uint64_t offset, std::span<std::uint8_t> out) const override {
    std::size_t got = 0;
    while (got < out.size()) {
      ssize_t n =
          ::pread(fd_, out.data() + got, out.size() - got, static_cast<off_t>(offset + got));
      if (n < 0) {
        if (errno == EINTR) continue;
        return io_error("read", errno);
      }
      if (n == 0) break;
      got += static_cast<std::size_t>(n);
    }
    return got;
  }

 private:
  int fd_;
};

class LocalBackend final : public detail::Backend {
 public:
  explicit LocalBackend(fs::path root) : root_(std::move(root)) {}

  bool sync_before_publish() const override { return true; }
  bool is_s3() const override { return false; }

  Result<std::optional<std::string>> find(std::string_view sha) const override {
    return find_in(root_, sha);
  }

  Status publish(const fs::path& tmp, int /*fd*/, StoredBlob& blob) const override {
    // Identical content stored before (any month, kind or extension): reuse it.
    auto existing = find_in(root_, blob.sha256);
    if (!existing) return std::move(existing).error();
    if (existing->has_value()) {
      blob.key = **existing;
      blob.reused = true;
      return core::Ok{};
    }
    const fs::path target = root_ / blob.key;
    // link() never replaces: when two identical uploads race, exactly one
    // publishes and the other finds EEXIST and reuses that file. A
    // concurrent remove() tidies empty {xx}, {mm} and {yyyy} folders, so any
    // folder on the way may vanish while this creates the next one down or
    // links the file: ENOENT from either step means "create the path again".
    // Each rmdir needs an empty folder, so a try fails only when another
    // blob of the same folders was removed in between; the bound is far
    // beyond what contention reaches (stress test: 5,000 mixed operations).
    constexpr int kTries = 64;
    int link_rc = -1;
    int link_errno = 0;
    for (int attempt = 0; attempt < kTries; ++attempt) {
      std::error_code ec;
      fs::create_directories(target.parent_path(), ec);
      if (ec == std::errc::no_such_file_or_directory) continue;
      if (ec)
        return make_error(codes::STORE_IO,
                          "create " + target.parent_path().string() + ": " + ec.message());
      link_rc = ::link(tmp.c_str(), target.c_str());
      link_errno = link_rc == 0 ? 0 : errno;
      if (link_rc == 0 || link_errno != ENOENT) break;
    }
    if (link_rc != 0 && link_errno == 0) link_errno = ENOENT;  // every try lost to a removal
    if (link_rc != 0) {
      const int err = link_errno;
      if (err == EXDEV)
        return make_error(codes::STORE_IO, "publish " + blob.key +
                                               ": the temporary folder must be on the store's file "
                                               "system (BlobStoreOptions::tmp_dir)");
      if (err != EEXIST) return io_error("publish " + blob.key, err);
      blob.reused = true;
    } else {
      sync_dir(target.parent_path());
    }
    return core::Ok{};
  }

  Result<Opened> open(std::string_view key) const override {
    const fs::path p = root_ / std::string(key);
    int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      if (errno == ENOENT) return make_error(codes::STORE_NOT_FOUND, "no blob " + std::string(key));
      return io_error("open " + std::string(key), errno);
    }
    struct stat sb {};
    if (::fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
      ::close(fd);
      return make_error(codes::STORE_IO, "not a regular file: " + std::string(key));
    }
    Opened o;
    o.reader = std::make_unique<LocalReader>(fd);
    o.size = static_cast<std::uint64_t>(sb.st_size);
    return o;
  }

  Status remove(std::string_view key) const override {
    fs::path p = root_ / std::string(key);
    if (::unlink(p.c_str()) != 0 && errno != ENOENT)
      return io_error("remove " + std::string(key), errno);
    // Tidy the now-empty {xx}, {mm} and {yyyy} folders; rmdir fails harmlessly when not empty.
    p = p.parent_path();
    for (int i = 0; i < 3; ++i, p = p.parent_path())
      if (::rmdir(p.c_str()) != 0) break;
    return core::Ok{};
  }

  Result<LocalBlob> local_file(std::string_view key) const override {
    fs::path p = root_ / std::string(key);
    struct stat sb {};
    if (::stat(p.c_str(), &sb) != 0) {
      if (errno == ENOENT) return make_error(codes::STORE_NOT_FOUND, "no blob " + std::string(key));
      return io_error("stat " + std::string(key), errno);
    }
    if (!S_ISREG(sb.st_mode))
      return make_error(codes::STORE_IO, "not a regular file: " + std::string(key));
    return detail::LocalBlobAccess::make(std::move(p), false);
  }

 private:
  fs::path root_;
};

std::string month_key(Kind kind, std::chrono::system_clock::time_point when, const std::string& sha,
                      const std::string& ext) {
  const std::time_t t = std::chrono::system_clock::to_time_t(when);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char ym[32];  // room for any int year GCC sees at -O1
  std::snprintf(ym, sizeof ym, "%04d/%02d", tm.tm_year + 1900, tm.tm_mon + 1);
  return std::string(kind_name(kind)) + "/" + ym + "/" + sha.substr(0, 2) + "/" + sha + "." + ext;
}

}  // namespace

// ---- temporary files ------------------------------------------------------------

namespace detail {

Result<std::pair<int, fs::path>> make_temp_file(const fs::path& dir, std::string_view tag) {
  static const std::string host = host_tag();
  std::string tmpl =
      (dir / (std::string(tag) + "-" + host + "-" + std::to_string(::getpid()) + "-XXXXXX"))
          .string();
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  int fd = ::mkostemp(buf.data(), O_CLOEXEC);
  if (fd < 0) return io_error("create a temporary file in " + dir.string(), errno);
  return std::pair<int, fs::path>(fd, fs::path(buf.data()));
}

void remove_stale_temp_files(const fs::path& dir, std::chrono::system_clock::time_point now) {
  const std::string host = host_tag();
  std::error_code ec;
  fs::directory_iterator it(dir, ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::string_view rest(name);
    if (rest.substr(0, 7) == "upload-")
      rest.remove_prefix(7);
    else if (rest.substr(0, 9) == "download-")
      rest.remove_prefix(9);
    else
      continue;  // not ours
    struct stat sb {};
    if (::lstat(it->path().c_str(), &sb) != 0 || !S_ISREG(sb.st_mode)) continue;
    bool stale = false;
    // {host}-{pid}-XXXXXX (mkstemp's six characters have no '-').
    if (rest.size() > 7 && rest[rest.size() - 7] == '-') {
      const std::string_view host_pid = rest.substr(0, rest.size() - 7);
      const auto dash = host_pid.rfind('-');
      const std::string_view pid_text =
          dash == std::string_view::npos ? std::string_view() : host_pid.substr(dash + 1);
      if (dash != std::string_view::npos && host_pid.substr(0, dash) == host &&
          is_digits(pid_text) && pid_text.size() <= 10) {
        // This host's file: stale exactly when its process is gone.
        stale = !process_alive(std::stol(std::string(pid_text)));
      } else {
        const auto mtime = std::chrono::system_clock::from_time_t(sb.st_mtime);
        stale = now - mtime > kStaleAfter;
      }
    } else {  // "upload-XXXXXX" of older versions: by age
      const auto mtime = std::chrono::system_clock::from_time_t(sb.st_mtime);
      stale = now - mtime > kStaleAfter;
    }
    if (stale) ::unlink(it->path().c_str());
  }
}

}  // namespace detail

namespace {
constexpr core::EnumNames<Kind, 4> kKindNames{{{{Kind::model, "models"},
                                                {Kind::motion, "motions"},
                                                {Kind::package, "packages"},
                                                {Kind::keypoints, "keypoints"}}}};
static_assert(kKindNames.entries.size() == std::size(kAllKinds), "every Kind has a name");
}  // namespace

std::string_view kind_name(Kind kind) {
  return kKindNames.name(kind);
}

std::optional<Kind> parse_kind(std::string_view name) {
  return kKindNames.parse(name);
}

std::span<const std::string_view> allowed_extensions(Kind kind) {
  switch (kind) {
    case Kind::model:
      return kModelExts;
    case Kind::motion:
      return kMotionExts;
    case Kind::package:
      return kPackageExts;
    case Kind::keypoints:
      return kKeypointExts;
  }
  return {};
}

bool extension_allowed(Kind kind, std::string_view ext) {
  const std::string e = lower(ext);
  for (std::string_view a : allowed_extensions(kind))
    if (a == e) return true;
  return false;
}

bool is_transient(const core::Error& e) {
  if (e.code == codes::STORE_S3_NETWORK) return true;
  if (e.code != codes::STORE_S3_HTTP) return false;
  // s3::Client::http_error writes "<what>: HTTP <status>[ <Code>: <Message>]".
  const auto at = e.message.find(": HTTP ");
  if (at == std::string::npos) return false;
  const std::string_view status = std::string_view(e.message).substr(at + 7, 3);
  return status == "500" || status == "502" || status == "503" || status == "504";
}

std::string extension_of(std::string_view file_name) {
  const auto slash = file_name.find_last_of("/\\");
  if (slash != std::string_view::npos) file_name.remove_prefix(slash + 1);
  const auto dot = file_name.rfind('.');
  if (dot == std::string_view::npos || dot == 0) return {};
  return lower(file_name.substr(dot + 1));
}

// ---------------------------------------------------------------- BlobReader

BlobReader::BlobReader() = default;
BlobReader::BlobReader(BlobReader&& other) noexcept = default;
BlobReader& BlobReader::operator=(BlobReader&& other) noexcept = default;
BlobReader::~BlobReader() = default;

Result<std::size_t> BlobReader::read_at(std::uint64_t offset, std::span<std::uint8_t> out) const {
  if (!impl_) return make_error(codes::STORE_IO, "blob is not open");
  if (offset >= size_ || out.empty()) return std::size_t{0};
  const std::size_t want =
      static_cast<std::size_t>(std::min<std::uint64_t>(out.size(), size_ - offset));
  return impl_->read_at(offset, out.first(want));
}

// ---------------------------------------------------------------- LocalBlob

LocalBlob::LocalBlob(LocalBlob&& other) noexcept
    : path_(std::move(other.path_)), temporary_(other.temporary_) {
  other.path_.clear();
  other.temporary_ = false;
}
LocalBlob& LocalBlob::operator=(LocalBlob&& other) noexcept {
  if (this != &other) {
    if (temporary_ && !path_.empty()) ::unlink(path_.c_str());
    path_ = std::move(other.path_);
    temporary_ = other.temporary_;
    other.path_.clear();
    other.temporary_ = false;
  }
  return *this;
}
LocalBlob::~LocalBlob() {
  if (temporary_ && !path_.empty()) ::unlink(path_.c_str());
}

// ---------------------------------------------------------------- Upload

struct Upload::State {
  std::shared_ptr<const detail::Backend> backend;
  Kind kind = Kind::model;
  std::string ext;
  fs::path tmp;
  int fd = -1;
  core::Sha256 hasher;
  std::uint64_t written = 0;
  std::uint64_t max_bytes = 0;
  std::chrono::system_clock::time_point started;
  std::string digest;  ///< set once hashing ended (digest() or commit())

  void drop() {
    if (fd >= 0) {
      ::close(fd);
      fd = -1;
    }
    if (!tmp.empty()) {
      ::unlink(tmp.c_str());
      tmp.clear();
    }
  }
};

Upload::Upload(std::unique_ptr<State> state) : s_(std::move(state)) {}
Upload::Upload(Upload&& other) noexcept = default;
Upload& Upload::operator=(Upload&& other) noexcept {
  if (this != &other) {
    abort();
    s_ = std::move(other.s_);
  }
  return *this;
}
Upload::~Upload() {
  abort();
}

void Upload::abort() {
  if (s_) {
    s_->drop();
    s_.reset();
  }
}

bool Upload::open() const {
  return s_ && s_->fd >= 0;
}
std::uint64_t Upload::bytes_written() const {
  return s_ ? s_->written : 0;
}

const std::string& Upload::digest() {
  static const std::string kNone;
  if (!s_) return kNone;
  if (s_->digest.empty()) s_->digest = core::to_hex(s_->hasher.finish());
  return s_->digest;
}

Status Upload::write(core::Bytes data) {
  if (!open())
    return make_error(codes::STORE_UPLOAD_CLOSED, "the upload was already committed or aborted");
  if (!s_->digest.empty())
    return make_error(codes::STORE_UPLOAD_CLOSED, "the upload's digest was taken: no more bytes");
  if (data.size() > s_->max_bytes - s_->written) {
    const std::uint64_t limit = s_->max_bytes;
    abort();
    return core::error_at_offset(codes::STORE_TOO_LARGE,
                                 "upload exceeds the limit of " + std::to_string(limit) + " bytes",
                                 limit);
  }
  std::size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(s_->fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      abort();
      return io_error("write to temporary file", err);
    }
    done += static_cast<std::size_t>(n);
  }
  s_->hasher.update(data);
  s_->written += data.size();
  return core::Ok{};
}

Result<StoredBlob> Upload::commit() {
  if (!open())
    return make_error(codes::STORE_UPLOAD_CLOSED, "the upload was already committed or aborted");
  State& s = *s_;
  if (s.backend->sync_before_publish() && ::fsync(s.fd) != 0) {
    const int err = errno;
    abort();
    return io_error("fsync", err);
  }
  StoredBlob blob;
  blob.sha256 = digest();
  blob.size = s.written;
  blob.kind = s.kind;
  blob.ext = s.ext;
  blob.key = month_key(s.kind, s.started, blob.sha256, s.ext);
  auto published = s.backend->publish(s.tmp, s.fd, blob);
  abort();  // removes the temporary name
  if (!published) return std::move(published).error();
  return blob;
}

// ---------------------------------------------------------------- BlobStore

void BlobStore::remove_stale_temp_files() const {
  // open() always sets tmp_dir and now.
  detail::remove_stale_temp_files(options_.tmp_dir, options_.now());
}

Result<BlobStore> BlobStore::open(const fs::path& location, BlobStoreOptions options) {
  if (!options.now) options.now = [] { return std::chrono::system_clock::now(); };
  BlobStore store;
  store.location_ = location.native();
  std::error_code ec;
  if (s3::is_s3_url(location.native())) {
    if (options.tmp_dir.empty()) {
      const char* t = std::getenv("TMPDIR");
      options.tmp_dir = fs::path(t && *t ? t : "/tmp") / "charkit-blobs";
    }
    fs::create_directories(options.tmp_dir, ec);
    if (ec)
      return make_error(codes::STORE_IO,
                        "create " + options.tmp_dir.string() + ": " + ec.message());
    detail::remove_stale_temp_files(options.tmp_dir, options.now());
    auto backend = detail::open_s3_backend(location.native(), options);
    if (!backend) return std::move(backend).error();
    store.backend_ = std::move(*backend);
  } else {
    if (location.empty()) return make_error(codes::STORE_IO, "no blob folder given");
    fs::path abs = fs::absolute(location, ec);
    if (ec) abs = location;
    fs::create_directories(abs, ec);
    if (ec) return make_error(codes::STORE_IO, "create " + abs.string() + ": " + ec.message());
    if (options.tmp_dir.empty()) options.tmp_dir = abs / "tmp";
    fs::create_directories(options.tmp_dir, ec);
    if (ec)
      return make_error(codes::STORE_IO,
                        "create " + options.tmp_dir.string() + ": " + ec.message());
    detail::remove_stale_temp_files(options.tmp_dir, options.now());
    store.root_ = abs;
    store.backend_ = std::make_shared<LocalBackend>(abs);
  }
  store.options_ = std::move(options);
  return store;
}

bool BlobStore::is_s3() const {
  return backend_ && backend_->is_s3();
}

fs::path BlobStore::path_of(std::string_view key) const {
  if (root_.empty()) return {};
  return root_ / std::string(key);
}

Result<Upload> BlobStore::begin_upload(Kind kind, std::string_view ext) const {
  if (!backend_) return make_error(codes::STORE_IO, "the blob store is not open");
  if (!extension_allowed(kind, ext)) {
    std::string list;
    for (std::string_view a : allowed_extensions(kind))
      list += (list.empty() ? "" : ", ") + std::string(a);
    return make_error(codes::STORE_KIND_EXTENSION,
                      "extension '" + std::string(ext) + "' is not accepted for " +
                          std::string(kind_name(kind)) + " (allowed: " + list + ")");
  }
  auto st = std::make_unique<Upload::State>();
  st->backend = backend_;
  st->kind = kind;
  st->ext = lower(ext);
  st->max_bytes = options_.max_bytes;
  st->started = options_.now();
  auto tmp = detail::make_temp_file(options_.tmp_dir, "upload");
  if (!tmp) return std::move(tmp).error();
  st->fd = tmp->first;
  st->tmp = std::move(tmp->second);
  return Upload(std::move(st));
}

Result<StoredBlob> BlobStore::put(Kind kind, std::string_view ext, core::Bytes data) const {
  auto up = begin_upload(kind, ext);
  if (!up) return std::move(up).error();
  if (auto w = up->write(data); !w) return std::move(w).error();
  return up->commit();
}

Result<std::optional<std::string>> BlobStore::find(std::string_view sha256) const {
  if (!backend_) return make_error(codes::STORE_IO, "the blob store is not open");
  if (sha256.size() != 64 || !is_hex_lower(sha256))
    return make_error(codes::STORE_BAD_DIGEST, "not a lower-case SHA-256 hex digest");
  return backend_->find(sha256);
}

bool BlobStore::valid_key(std::string_view key) {
  // {kind}/{yyyy}/{mm}/{xx}/{sha256}.{ext}
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    const auto slash = key.find('/', start);
    parts.push_back(key.substr(start, slash == std::string_view::npos ? slash : slash - start));
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  if (parts.size() != 5) return false;
  const auto kind = parse_kind(parts[0]);
  if (!kind) return false;
  if (parts[1].size() != 4 || !is_digits(parts[1])) return false;
  if (parts[2].size() != 2 || !is_digits(parts[2])) return false;
  if (parts[3].size() != 2 || !is_hex_lower(parts[3])) return false;
  const std::string_view file = parts[4];
  if (file.size() < 66 || file[64] != '.') return false;
  const std::string_view sha = file.substr(0, 64);
  if (!is_hex_lower(sha) || sha.substr(0, 2) != parts[3]) return false;
  const std::string_view ext = file.substr(65);
  // The extension of any kind (content is shared across kinds), exactly as stored.
  for (Kind k : kAllKinds)
    for (std::string_view a : allowed_extensions(k))
      if (a == ext) return true;
  return false;
}

Result<BlobReader> BlobStore::open_blob(std::string_view key) const {
  if (!valid_key(key))
    return make_error(codes::STORE_BAD_KEY, "not a blob key: '" + std::string(key) + "'");
  if (!backend_) return make_error(codes::STORE_IO, "the blob store is not open");
  auto opened = backend_->open(key);
  if (!opened) return std::move(opened).error();
  BlobReader r;
  r.impl_ = std::move(opened->reader);
  r.size_ = opened->size;
  return r;
}

Status BlobStore::remove(std::string_view key) const {
  if (!valid_key(key))
    return make_error(codes::STORE_BAD_KEY, "not a blob key: '" + std::string(key) + "'");
  if (!backend_) return make_error(codes::STORE_IO, "the blob store is not open");
  return backend_->remove(key);
}

Result<LocalBlob> BlobStore::local_file(std::string_view key) const {
  if (!valid_key(key))
    return make_error(codes::STORE_BAD_KEY, "not a blob key: '" + std::string(key) + "'");
  if (!backend_) return make_error(codes::STORE_IO, "the blob store is not open");
  return backend_->local_file(key);
}

}  // namespace charkit::store
