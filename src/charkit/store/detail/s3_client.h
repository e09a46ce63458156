// A small S3 client over libcurl for the blob store's S3 backend: path-style
// requests signed with our SigV4 signer (sigv4.h), bounded answers, timeouts
// and a pool of curl easy handles (one per call in flight; a handle is never
// shared by two threads). Internal to the store; contract: docs/store.md.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "charkit/core/result.h"
#include "charkit/store/detail/s3_xml.h"
#include "charkit/store/detail/sigv4.h"

namespace charkit::store::s3 {

/// Where the blobs are: s3://BUCKET/PREFIX?endpoint=URL&region=R.
struct Location {
  std::string bucket;
  std::string prefix;    ///< without leading or trailing '/'; "" = the bucket's root
  std::string endpoint;  ///< scheme://host[:port], no path, no trailing '/'
  std::string host;      ///< the Host header: host[:port] (port only when not the default)
  std::string region = "us-east-1";
};

/// Parses the URL (STORE_S3_URL on anything malformed). Endpoint default:
/// https://s3.REGION.amazonaws.com; region default us-east-1.
core::Result<Location> parse_url(std::string_view url);
/// True when `location` names S3 storage ("s3://…") rather than a folder.
bool is_s3_url(std::string_view location);

/// AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and the optional
/// AWS_SESSION_TOKEN; STORE_S3_CREDENTIALS when one of the first two is missing.
core::Result<sigv4::Credentials> credentials_from_env();

struct ClientOptions {
  std::chrono::milliseconds connect_timeout{10'000};
  /// Whole-request limit of a request without a payload; a payload adds
  /// its size at 256 KiB/s. A transfer that moves less than 1 KiB/s for
  /// min(this, 30 s) is abandoned too.
  std::chrono::milliseconds request_timeout{60'000};
  /// Largest answer body kept in memory (listings, XML results).
  std::size_t max_answer_bytes = 4u << 20;
  /// Attempts of a request that is safe to repeat (GET, HEAD, PUT, DELETE)
  /// after a network error or a 500/502/503/504 answer.
  int attempts = 3;
};

/// A request body: memory, or a range of an open file.
struct Body {
  std::string_view memory;
  int fd = -1;
  std::uint64_t offset = 0;
  std::uint64_t length = 0;  ///< with fd
  std::uint64_t size() const { return fd >= 0 ? length : memory.size(); }
};

struct Call {
  std::string method = "GET";
  std::string key;  ///< object key in the bucket ("" = the bucket itself)
  sigv4::Pairs query;
  sigv4::Pairs headers;  ///< sent and signed besides host, x-amz-date, x-amz-content-sha256
  std::string payload_hash = std::string(sigv4::kEmptyPayloadSha256);
  Body body;
  /// Successful (2xx) answer bodies go here instead of into Response::body
  /// when set: a buffer (at most its size is kept; more sets overflow) …
  std::span<std::uint8_t> into;
  bool use_into = false;
  /// … or a file (at most max_file_bytes, else overflow).
  int into_fd = -1;
  std::uint64_t max_file_bytes = 0;
  bool repeatable = true;  ///< may be sent again after a transient failure
};

struct Response {
  long status = 0;
  std::string body;  ///< bounded by ClientOptions::max_answer_bytes (error bodies: 64 KiB)
  std::uint64_t received = 0;  ///< bytes written to Call::into / into_fd
  bool overflow = false;       ///< more bytes came than Call::into / max_file_bytes hold
  std::optional<std::uint64_t> content_length;
  std::string etag;
  std::string content_range;
};

class Client {
 public:
  Client(Location location, sigv4::Credentials credentials, ClientOptions options);
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  /// Sends one request (retrying as ClientOptions::attempts says). Any
  /// HTTP status is a successful Result; transport failures, timeouts and
  /// oversized answers are STORE_S3_NETWORK / STORE_S3_RESPONSE errors.
  core::Result<Response> send(const Call& call) const;

  /// STORE_S3_HTTP: "<what>: HTTP <status> <Code>: <Message>" from an S3 error body.
  static core::Error http_error(const Response& response, std::string_view what);
  /// The <Code> of an S3 error body ("" when there is none).
  static std::string error_code(const Response& response);

  /// PREFIX/key (the key inside the bucket for a store key).
  std::string object_key(std::string_view key) const;
  const Location& location() const { return location_; }
  const ClientOptions& options() const { return options_; }

 private:
  core::Result<Response> send_once(const Call& call) const;
  void* acquire() const;
  void release(void* handle) const;

  Location location_;
  sigv4::Credentials credentials_;
  ClientOptions options_;
  mutable std::mutex pool_mutex_;
  mutable std::vector<void*> pool_;  // CURL* easy handles, idle
};

}  // namespace charkit::store::s3
