// The S3 backend of BlobStore (blob_backend.h): objects PREFIX/{key} in a
// bucket of an S3-compatible service, through s3::Client. Contract:
// docs/store.md ("S3-compatible storage").
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <mutex>
#include <vector>

#include "charkit/core/sha256.h"
#include "charkit/store/detail/blob_backend.h"
#include "charkit/store/detail/s3_client.h"
#include "charkit/store/error_codes.h"

namespace charkit::store::detail {
namespace {

namespace fs = std::filesystem;
using core::make_error;
using core::Result;
using core::Status;

constexpr int kMaxListPages = 100;           // pages of ListMultipartUploads read at open
constexpr std::size_t kMaxIndexBytes = 256;  // an index object holds one key
constexpr std::uint64_t kMaxParts = 10'000;  // S3's limit per multipart upload

bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool printable(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c > ' ' && c < 127; });
}

// "2026-12-01T15:19:49.000Z" (ISO 8601, UTC) → time point; nullopt when not of that shape.
std::optional<std::chrono::system_clock::time_point> parse_iso8601(std::string_view s) {
  if (s.size() < 20 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':')
    return std::nullopt;
  auto num = [&](std::size_t at, std::size_t n) -> int {
    const std::string_view d = s.substr(at, n);
    if (!all_digits(d)) return -1;
    int v = 0;
    for (char c : d) v = v * 10 + (c - '0');
    return v;
  };
  std::tm tm{};
  tm.tm_year = num(0, 4) - 1900;
  tm.tm_mon = num(5, 2) - 1;
  tm.tm_mday = num(8, 2);
  tm.tm_hour = num(11, 2);
  tm.tm_min = num(14, 2);
  tm.tm_sec = num(17, 2);
  if (tm.tm_year < 0 || tm.tm_mon < 0 || tm.tm_mon > 11 || tm.tm_mday < 1 || tm.tm_mday > 31 ||
      tm.tm_hour < 0 || tm.tm_hour > 23 || tm.tm_min < 0 || tm.tm_min > 59 || tm.tm_sec < 0 ||
      tm.tm_sec > 60 || s.back() != 'Z')
    return std::nullopt;
  return std::chrono::system_clock::from_time_t(::timegm(&tm));
}

core::Error response_error(std::string what) {
  return make_error(codes::STORE_S3_RESPONSE, std::move(what));
}

// ---- reading -----------------------------------------------------------------

class S3Reader final : public ReaderImpl {
 public:
  S3Reader(std::shared_ptr<const s3::Client> client, std::string object_key, std::uint64_t size,
           std::size_t window)
      : client_(std::move(client)),
        object_key_(std::move(object_key)),
        size_(size),
        window_(std::max<std::size_t>(window, 1)) {}

  Result<std::size_t> read_at(std::uint64_t offset, std::span<std::uint8_t> out) const override {
    {
      std::lock_guard lock(mutex_);
      if (offset >= cache_offset_ && offset - cache_offset_ + out.size() <= cache_.size()) {
        std::memcpy(out.data(), cache_.data() + (offset - cache_offset_), out.size());
        return out.size();
      }
    }
    if (out.size() >= window_) return fetch(offset, out);
    // Read ahead: one ranged GET of a window, kept for the reads that follow.
    std::vector<std::uint8_t> buf(
        static_cast<std::size_t>(std::min<std::uint64_t>(window_, size_ - offset)));
    auto got = fetch(offset, buf);
    if (!got) return std::move(got).error();
    buf.resize(*got);
    const std::size_t n = std::min(out.size(), *got);
    std::memcpy(out.data(), buf.data(), n);
    std::lock_guard lock(mutex_);
    cache_ = std::move(buf);
    cache_offset_ = offset;
    return n;
  }

 private:
  Result<std::size_t> fetch(std::uint64_t offset, std::span<std::uint8_t> out) const {
    const std::uint64_t last = offset + out.size() - 1;
    s3::Call c;
    c.method = "GET";
    c.key = object_key_;
    c.headers.emplace_back("range", "bytes=" + std::to_string(offset) + "-" + std::to_string(last));
    c.into = out;
    c.use_into = true;
    auto r = client_->send(c);
    if (!r) return std::move(r).error();
    const std::string what = "GET " + object_key_ + " (bytes " + std::to_string(offset) + "-" +
                             std::to_string(last) + ")";
    if (r->status == 404) return make_error(codes::STORE_NOT_FOUND, "no blob " + object_key_);
    if (r->status == 416) return std::size_t{0};  // shorter than HEAD said
    if (r->status == 206) {
      const std::string expect = "bytes " + std::to_string(offset) + "-";
      if (r->overflow || r->content_range.compare(0, expect.size(), expect) != 0)
        return response_error(what + ": the answer is not the range asked for (Content-Range '" +
                              r->content_range.substr(0, 100) + "')");
      return static_cast<std::size_t>(r->received);
    }
    // A server that ignores Range sends the whole object: its start is right.
    if (r->status == 200 && offset == 0) return static_cast<std::size_t>(r->received);
    if (r->status == 200) return response_error(what + ": the server ignored the Range header");
    return s3::Client::http_error(*r, what);
  }

  std::shared_ptr<const s3::Client> client_;
  std::string object_key_;
  std::uint64_t size_;
  std::size_t window_;
  mutable std::mutex mutex_;
  mutable std::vector<std::uint8_t> cache_;
  mutable std::uint64_t cache_offset_ = 0;
};

// ---- the backend -------------------------------------------------------------

class S3Backend final : public Backend {
 public:
  S3Backend(std::shared_ptr<const s3::Client> client, const BlobStoreOptions& o)
      : client_(std::move(client)),
        tmp_dir_(o.tmp_dir),
        max_bytes_(o.max_bytes),
        threshold_(o.s3_multipart_threshold),
        part_size_(std::max<std::uint64_t>(o.s3_part_size, 1)),
        read_ahead_(o.s3_read_ahead) {}

  bool sync_before_publish() const override { return false; }
  bool is_s3() const override { return true; }

  Result<std::optional<std::string>> find(std::string_view sha) const override {
    // The index object names the key; it counts only when that object exists.
    auto indexed = read_index(sha);
    if (!indexed) return std::move(indexed).error();
    if (!indexed->has_value()) return std::optional<std::string>();
    auto head = head_object(**indexed);
    if (!head) return std::move(head).error();
    if (!head->has_value()) return std::optional<std::string>();
    return *indexed;
  }

  Status publish(const fs::path& /*tmp*/, int fd, StoredBlob& blob) const override {
    // The same content this month: the final key is there already.
    auto head = head_object(blob.key);
    if (!head) return std::move(head).error();
    if (head->has_value()) {
      blob.reused = true;
      return core::Ok{};
    }
    // Another month, kind or extension.
    auto existing = find(blob.sha256);
    if (!existing) return std::move(existing).error();
    if (existing->has_value()) {
      blob.key = **existing;
      blob.reused = true;
      return core::Ok{};
    }
    // The index first: a crash between the two PUTs leaves an index entry
    // whose object is missing, which find() ignores, never a blob that
    // find() cannot see. Two identical uploads racing both get here and both
    // write the same bytes under the same key: still one object.
    if (auto s = write_index(blob.sha256, blob.key); !s) return s;
    const std::string object = client_->object_key(blob.key);
    Status put = blob.size <= threshold_ ? put_single(fd, blob.size, object, blob.sha256)
                                         : put_multipart(fd, blob.size, object);
    // The object did not arrive: take the index entry back when it still
    // names this key and no object is there (best effort; the storage may be
    // out, and a later upload of the same content writes the same entry).
    if (!put) {
      auto arrived = head_object(blob.key);
      if (arrived && !arrived->has_value()) {
        auto indexed = read_index(blob.sha256);
        if (indexed && indexed->has_value() && **indexed == blob.key) {
          s3::Call d;
          d.method = "DELETE";
          d.key = index_key(blob.sha256);
          (void)client_->send(d);
        }
      }
    }
    return put;
  }

  Result<Opened> open(std::string_view key) const override {
    auto head = head_object(key);
    if (!head) return std::move(head).error();
    if (!head->has_value())
      return make_error(codes::STORE_NOT_FOUND, "no blob " + std::string(key));
    Opened o;
    o.size = **head;
    o.reader = std::make_unique<S3Reader>(client_, client_->object_key(key), o.size, read_ahead_);
    return o;
  }

  Status remove(std::string_view key) const override {
    s3::Call c;
    c.method = "DELETE";
    c.key = client_->object_key(key);
    auto r = client_->send(c);
    if (!r) return std::move(r).error();
    if ((r->status < 200 || r->status >= 300) && r->status != 404)
      return s3::Client::http_error(*r, "DELETE " + c.key);
    // The index entry goes too when it names this key (not when a newer
    // upload of the same content in another month owns it).
    const std::string sha(key.substr(key.rfind('/') + 1, 64));
    auto indexed = read_index(sha);
    if (!indexed) return std::move(indexed).error();
    if (indexed->has_value() && **indexed == key) {
      s3::Call d;
      d.method = "DELETE";
      d.key = index_key(sha);
      auto dr = client_->send(d);
      if (!dr) return std::move(dr).error();
      if ((dr->status < 200 || dr->status >= 300) && dr->status != 404)
        return s3::Client::http_error(*dr, "DELETE " + d.key);
    }
    return core::Ok{};
  }

  Result<LocalBlob> local_file(std::string_view key) const override {
    auto tmp = make_temp_file(tmp_dir_, "download");
    if (!tmp) return std::move(tmp).error();
    // Owns the file until it is handed over (removed on every error path).
    LocalBlob file = LocalBlobAccess::make(tmp->second, true);
    const int fd = tmp->first;
    s3::Call c;
    c.method = "GET";
    c.key = client_->object_key(key);
    c.into_fd = fd;
    c.max_file_bytes = max_bytes_;
    auto r = client_->send(c);
    const int close_rc = ::close(fd);
    if (!r) return std::move(r).error();
    if (r->status == 404) return make_error(codes::STORE_NOT_FOUND, "no blob " + std::string(key));
    if (r->status != 200) return s3::Client::http_error(*r, "GET " + c.key);
    if (r->overflow)
      return make_error(codes::STORE_TOO_LARGE, "GET " + c.key +
                                                    ": the blob exceeds the limit of " +
                                                    std::to_string(max_bytes_) + " bytes");
    if (r->content_length && *r->content_length != r->received)
      return response_error("GET " + c.key + ": " + std::to_string(r->received) + " of " +
                            std::to_string(*r->content_length) + " bytes arrived");
    if (close_rc != 0) return make_error(codes::STORE_IO, "write " + file.path().string());
    return file;
  }

  /// Aborts the multipart uploads of our keys under the prefix that began
  /// more than kStaleAfter before `now`. Services without the listing (501,
  /// 405) or without the permission (AccessDenied) are skipped; anything
  /// else that fails (network, no such bucket, bad credentials) is an error:
  /// it is the first request, so a wrong configuration shows at open.
  Status abort_stale_uploads(std::chrono::system_clock::time_point now) const {
    std::string key_marker, id_marker;
    for (int page = 0; page < kMaxListPages; ++page) {
      s3::Call c;
      c.query.emplace_back("uploads", "");
      if (!client_->location().prefix.empty())
        c.query.emplace_back("prefix", client_->location().prefix + "/");
      if (!key_marker.empty()) c.query.emplace_back("key-marker", key_marker);
      if (!id_marker.empty()) c.query.emplace_back("upload-id-marker", id_marker);
      auto r = client_->send(c);
      if (!r) return std::move(r).error();
      if (r->status == 501 || r->status == 405) return core::Ok{};
      if (r->status == 403 && s3::Client::error_code(*r) == "AccessDenied") return core::Ok{};
      if (r->status != 200)
        return s3::Client::http_error(
            *r, "list the multipart uploads of bucket " + client_->location().bucket);
      auto doc = xml::parse(r->body);
      if (!doc) return std::move(doc).error();
      if (doc->name != "ListMultipartUploadsResult")
        return response_error("ListMultipartUploads answered <" + doc->name.substr(0, 64) + ">");
      for (const xml::Node* u : doc->all("Upload")) {
        const std::string key = u->child_text("Key");
        const std::string id = u->child_text("UploadId");
        const auto initiated = parse_iso8601(u->child_text("Initiated"));
        auto store = store_key(key);
        if (!store || !BlobStore::valid_key(*store) || id.empty() || !initiated) continue;
        if (now - *initiated <= kStaleAfter) continue;
        abort_upload(key, id);
      }
      if (doc->child_text("IsTruncated") != "true") break;
      key_marker = doc->child_text("NextKeyMarker");
      id_marker = doc->child_text("NextUploadIdMarker");
      if (key_marker.empty() && id_marker.empty()) break;
    }
    return core::Ok{};
  }

 private:
  /// The store key of an object key (PREFIX/ removed); nullopt when outside the prefix.
  std::optional<std::string> store_key(std::string_view object_key) const {
    const std::string& p = client_->location().prefix;
    if (p.empty()) return std::string(object_key);
    if (object_key.size() <= p.size() + 1 || object_key.compare(0, p.size(), p) != 0 ||
        object_key[p.size()] != '/')
      return std::nullopt;
    return std::string(object_key.substr(p.size() + 1));
  }

  /// Size of the object, nullopt when there is none.
  Result<std::optional<std::uint64_t>> head_object(std::string_view key) const {
    s3::Call c;
    c.method = "HEAD";
    c.key = client_->object_key(key);
    auto r = client_->send(c);
    if (!r) return std::move(r).error();
    if (r->status == 404) return std::optional<std::uint64_t>();
    if (r->status != 200) return s3::Client::http_error(*r, "HEAD " + c.key);
    if (!r->content_length)
      return response_error("HEAD " + c.key + ": the answer has no Content-Length");
    return std::optional<std::uint64_t>(*r->content_length);
  }

  /// PREFIX/sha256/{xx}/{sha256}: an object whose body is the key of the blob with that digest.
  std::string index_key(std::string_view sha) const {
    return client_->object_key("sha256/" + std::string(sha.substr(0, 2)) + "/" + std::string(sha));
  }

  /// The key the index names for `sha` (nullopt: no entry, or one that is not a key of this sha).
  Result<std::optional<std::string>> read_index(std::string_view sha) const {
    std::array<std::uint8_t, kMaxIndexBytes> buf{};
    s3::Call c;
    c.method = "GET";
    c.key = index_key(sha);
    c.into = buf;
    c.use_into = true;
    auto r = client_->send(c);
    if (!r) return std::move(r).error();
    if (r->status == 404) return std::optional<std::string>();
    if (r->status != 200) return s3::Client::http_error(*r, "GET " + c.key);
    const std::string key(reinterpret_cast<const char*>(buf.data()),
                          static_cast<std::size_t>(r->received));
    const auto slash = key.rfind('/');
    if (r->overflow || !BlobStore::valid_key(key) || key.compare(slash + 1, 64, sha) != 0)
      return std::optional<std::string>();  // damaged: as if there were none
    return std::optional<std::string>(key);
  }

  Status write_index(const std::string& sha, const std::string& key) const {
    s3::Call c;
    c.method = "PUT";
    c.key = index_key(sha);
    c.headers.emplace_back("content-type", "text/plain");
    c.payload_hash = core::to_hex(core::sha256(core::as_bytes(key)));
    c.body.memory = key;
    auto r = client_->send(c);
    if (!r) return std::move(r).error();
    if (r->status != 200) return s3::Client::http_error(*r, "PUT " + c.key);
    return core::Ok{};
  }

  Status put_single(int fd, std::uint64_t size, const std::string& object,
                    const std::string& sha256) const {
    s3::Call c;
    c.method = "PUT";
    c.key = object;
    c.payload_hash = sha256;
    c.body.fd = fd;
    c.body.offset = 0;
    c.body.length = size;
    auto r = client_->send(c);
    if (!r) return std::move(r).error();
    if (r->status != 200) return s3::Client::http_error(*r, "PUT " + object);
    return core::Ok{};
  }

  void abort_upload(const std::string& object, const std::string& upload_id) const {
    s3::Call c;
    c.method = "DELETE";
    c.key = object;
    c.query.emplace_back("uploadId", upload_id);
    (void)client_->send(c);  // best effort: a leftover is aborted by the next open after 24 h
  }

  static Result<std::string> hash_range(int fd, std::uint64_t offset, std::uint64_t length) {
    core::Sha256 h;
    std::vector<std::uint8_t> buf(1 << 20);
    std::uint64_t done = 0;
    while (done < length) {
      const std::size_t want =
          static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), length - done));
      const ssize_t n = ::pread(fd, buf.data(), want, static_cast<off_t>(offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0)
        return make_error(codes::STORE_IO, std::string("read the temporary file: ") +
                                               (n < 0 ? std::strerror(errno) : "unexpected end"));
      h.update(std::span<const std::uint8_t>(buf.data(), static_cast<std::size_t>(n)));
      done += static_cast<std::uint64_t>(n);
    }
    return core::to_hex(h.finish());
  }

  Status put_multipart(int fd, std::uint64_t size, const std::string& object) const {
    const std::uint64_t part = std::max(part_size_, (size + kMaxParts - 1) / kMaxParts);
    s3::Call init;
    init.method = "POST";
    init.key = object;
    init.query.emplace_back("uploads", "");
    init.repeatable = false;  // a second try would start a second upload
    auto ir = client_->send(init);
    if (!ir) return std::move(ir).error();
    if (ir->status != 200)
      return s3::Client::http_error(*ir, "start a multipart upload of " + object);
    auto idoc = xml::parse(ir->body);
    if (!idoc) return std::move(idoc).error();
    const std::string upload_id =
        idoc->name == "InitiateMultipartUploadResult" ? idoc->child_text("UploadId") : "";
    if (upload_id.empty() || upload_id.size() > 1024 || !printable(upload_id))
      return response_error("start a multipart upload of " + object + ": no usable UploadId");

    auto fail = [&](core::Error e) -> Status {
      abort_upload(object, upload_id);
      return e;
    };
    std::string complete = "<CompleteMultipartUpload>";
    std::uint64_t number = 0;
    for (std::uint64_t offset = 0; offset < size; offset += part) {
      ++number;
      const std::uint64_t length = std::min(part, size - offset);
      auto hash = hash_range(fd, offset, length);
      if (!hash) return fail(std::move(hash).error());
      s3::Call c;
      c.method = "PUT";
      c.key = object;
      c.query.emplace_back("partNumber", std::to_string(number));
      c.query.emplace_back("uploadId", upload_id);
      c.payload_hash = *hash;
      c.body.fd = fd;
      c.body.offset = offset;
      c.body.length = length;
      auto r = client_->send(c);
      if (!r) return fail(std::move(r).error());
      const std::string what = "PUT " + object + " part " + std::to_string(number);
      if (r->status != 200) return fail(s3::Client::http_error(*r, what));
      if (r->etag.empty() || r->etag.size() > 1024 || !printable(r->etag))
        return fail(response_error(what + ": the answer has no usable ETag"));
      complete += "<Part><PartNumber>" + std::to_string(number) + "</PartNumber><ETag>" +
                  xml::escape(r->etag) + "</ETag></Part>";
    }
    complete += "</CompleteMultipartUpload>";
    s3::Call c;
    c.method = "POST";
    c.key = object;
    c.query.emplace_back("uploadId", upload_id);
    c.headers.emplace_back("content-type", "application/xml");
    c.payload_hash = core::to_hex(core::sha256(core::as_bytes(complete)));
    c.body.memory = complete;
    c.repeatable = false;
    auto r = client_->send(c);
    if (!r) return fail(std::move(r).error());
    const std::string what = "complete the multipart upload of " + object;
    if (r->status != 200) return fail(s3::Client::http_error(*r, what));
    // S3 may answer 200 and still fail: the body is then an <Error>.
    auto doc = xml::parse(r->body);
    if (!doc) return fail(std::move(doc).error());
    if (doc->name == "Error") return fail(s3::Client::http_error(*r, what));
    if (doc->name != "CompleteMultipartUploadResult")
      return fail(response_error(what + ": answered <" + doc->name.substr(0, 64) + ">"));
    return core::Ok{};
  }

  std::shared_ptr<const s3::Client> client_;
  fs::path tmp_dir_;
  std::uint64_t max_bytes_;
  std::uint64_t threshold_;
  std::uint64_t part_size_;
  std::size_t read_ahead_;
};

}  // namespace

Result<std::shared_ptr<const Backend>> open_s3_backend(std::string_view url,
                                                       const BlobStoreOptions& options) {
  auto location = s3::parse_url(url);
  if (!location) return std::move(location).error();
  auto credentials = s3::credentials_from_env();
  if (!credentials) return std::move(credentials).error();
  s3::ClientOptions co;
  co.connect_timeout = options.s3_connect_timeout;
  co.request_timeout = options.s3_timeout;
  auto client =
      std::make_shared<const s3::Client>(std::move(*location), std::move(*credentials), co);
  auto backend = std::make_shared<const S3Backend>(client, options);
  if (auto s = backend->abort_stale_uploads(options.now()); !s) return std::move(s).error();
  return std::shared_ptr<const Backend>(std::move(backend));
}

}  // namespace charkit::store::detail
