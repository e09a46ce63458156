// Request-parsing glue of the HTTP server that is ours rather than Beast's:
// query strings, percent-decoding, the single-range `Range` header, the
// client's file name and the target path. Pure functions over untrusted
// text: bounded, never throwing. Contract: docs/api.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "charkit/core/result.h"

namespace charkit::server {

/// Longest client file name kept (bytes, after cleaning).
inline constexpr std::size_t kMaxFileNameBytes = 255;
/// Most query parameters accepted in one target.
inline constexpr std::size_t kMaxQueryParams = 32;

/// Percent-decoding; `plus_is_space` for query components. Errors:
/// HTTP_BAD_ESCAPE (a '%' not followed by two hex digits), HTTP_NUL (a
/// decoded NUL byte).
core::Result<std::string> percent_decode(std::string_view text, bool plus_is_space);

/// `a=1&b=x%20y`: decoded (name, value) pairs in order; a name without '='
/// has an empty value, empty components are skipped. Errors: those of
/// percent_decode, HTTP_TOO_MANY_PARAMS.
using QueryParams = std::vector<std::pair<std::string, std::string>>;
core::Result<QueryParams> parse_query(std::string_view query);
/// The value of the first parameter called `name`.
std::optional<std::string> query_value(const QueryParams& params, std::string_view name);

/// The target split into its path segments and its query, both
/// percent-decoded ("/api/motions/3?x=1" → {"api","motions","3"},
/// {{"x","1"}}). This is the one parse of a request's target: routing,
/// access control and every handler read these fields, never the raw text,
/// so that no two of them can see different values for one parameter.
/// Empty segments ("//") are dropped. Errors: HTTP_BAD_TARGET (not
/// origin-form: no leading '/', or a raw space or control byte),
/// HTTP_BAD_ESCAPE, HTTP_NUL, HTTP_BAD_PATH (a decoded segment that is "."
/// or ".." or holds '/' or '\'), HTTP_TOO_MANY_PARAMS.
struct Target {
  std::vector<std::string> segments;
  QueryParams params;
};
core::Result<Target> parse_target(std::string_view target);

/// A decimal id in 1..2^53: nullopt for anything else ("01" is accepted,
/// "+1", "1e3", "" and overflow are not).
std::optional<std::int64_t> parse_id(std::string_view text);

/// 64 lower-case hex digits?
bool is_sha256_hex(std::string_view text);

/// The outcome of a `Range` header against a resource of `size` bytes.
struct ByteRange {
  enum class Kind {
    kNone,           ///< no header, or a form we ignore (several ranges, other units): send 200
    kSatisfiable,    ///< send 206 with first..last
    kUnsatisfiable,  ///< send 416 with `Content-Range: bytes */size`
  };
  Kind kind = Kind::kNone;
  std::uint64_t first = 0;
  std::uint64_t last = 0;  ///< inclusive
};
/// `bytes=a-b`, `bytes=a-`, `bytes=-n` (RFC 9110 §14.1.2); whitespace around
/// the spec is allowed. A syntactically invalid header is ignored (kNone),
/// as RFC 9110 says; a range starting at or past the end, or a zero-length
/// suffix, is kUnsatisfiable.
ByteRange parse_range(std::string_view header, std::uint64_t size);

/// What we keep of a client's file name (for assets.original_name and the
/// extension): the last component after any '/' or '\\', control bytes and
/// invalid UTF-8 dropped, spaces trimmed, "." and ".." emptied, at most
/// kMaxFileNameBytes bytes (cut at a UTF-8 boundary). "" when nothing is left.
/// It is never used as a path.
std::string clean_file_name(std::string_view name);

}  // namespace charkit::server
