// AWS Signature Version 4 (AWS4-HMAC-SHA256) for HTTP requests: canonical
// request, string to sign, signing key, Authorization header. Every S3
// request of the blob store is signed here (libcurl's own signer takes the
// time from the clock, so it cannot be tested against AWS's published
// vectors; this one takes the time as an input). Contract: docs/store.md.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace charkit::store::sigv4 {

/// SHA-256 of the empty payload (lower-case hex).
inline constexpr std::string_view kEmptyPayloadSha256 =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
/// x-amz-content-sha256 value for a payload that is not hashed.
inline constexpr std::string_view kUnsignedPayload = "UNSIGNED-PAYLOAD";

struct Credentials {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;  ///< "" = none (else sent and signed as x-amz-security-token)
};

using Pairs = std::vector<std::pair<std::string, std::string>>;

/// What is signed. Names and values are given raw (not percent-encoded);
/// the signer encodes them with the SigV4 rules (RFC 3986 unreserved
/// characters kept, everything else %XX, '/' kept in the path). The path is
/// used as given: no "." / ".." removal and no double encoding (S3's rules).
struct Request {
  std::string method;        ///< "GET", "PUT", …
  std::string path = "/";    ///< "/bucket/key"
  Pairs query;               ///< any order; sorted for signing
  Pairs headers;             ///< every header to sign, any case; must hold host and x-amz-date
  std::string payload_hash;  ///< lower-case hex SHA-256 of the body, or kUnsignedPayload
};

struct Scope {
  std::string region = "us-east-1";
  std::string service = "s3";
};

/// Everything the signature is made of, for tests and diagnostics.
struct Signature {
  std::string canonical_request;
  std::string string_to_sign;
  std::string signed_headers;  ///< "host;x-amz-date"
  std::string signature;       ///< 64 lower-case hex digits
  std::string authorization;   ///< the Authorization header value
};

/// "20150830T123600Z" (UTC, whole seconds).
std::string amz_date(std::chrono::system_clock::time_point t);

/// RFC 3986 percent-encoding of the SigV4 rules: A–Z a–z 0–9 - . _ ~ stay,
/// every other byte becomes %XX (upper-case hex); '/' stays when keep_slash.
std::string uri_encode(std::string_view s, bool keep_slash);

/// The query string as signed and as sent: encoded names and values,
/// sorted by name then value, "name=value" joined by '&'.
std::string canonical_query(const Pairs& query);

std::string canonical_request(const Request& request);
std::string string_to_sign(std::string_view amz_date, const Scope& scope,
                           std::string_view canonical_request);
/// HMAC chain "AWS4"+secret → date (YYYYMMDD) → region → service → "aws4_request".
std::array<std::uint8_t, 32> signing_key(std::string_view secret_access_key, std::string_view date8,
                                         const Scope& scope);

/// Signs `request` at time `amz_date` ("YYYYMMDDTHHMMSSZ"; it must match the
/// request's x-amz-date header).
Signature sign(const Request& request, const Credentials& credentials, std::string_view amz_date,
               const Scope& scope);

}  // namespace charkit::store::sigv4
