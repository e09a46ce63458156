// A streaming `multipart/form-data` reader for uploads (RFC 7578 over the
// RFC 2046 §5.1 framing), as an HTML form posts a file. Bytes are fed in
// chunks of any size; the one file part's content is handed on as it
// arrives and never held whole. Untrusted input: every buffer is bounded,
// errors are Results with stable codes and the byte offset in the body.
// Contract: docs/api.md §Uploads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "charkit/core/result.h"

namespace charkit::server {

/// RFC 2046: a boundary is 1..70 characters.
inline constexpr std::size_t kMaxBoundaryBytes = 70;
/// Header block of one part (its lines and the blank line).
inline constexpr std::size_t kMaxPartHeaderBytes = 8 * 1024;
/// Parts in one body (the file part and plain fields).
inline constexpr std::size_t kMaxParts = 16;
/// Bytes of all non-file parts together (they are read and dropped).
inline constexpr std::size_t kMaxFieldBytes = 64 * 1024;
/// Bytes before the first boundary (the preamble, ignored).
inline constexpr std::size_t kMaxPreambleBytes = 16 * 1024;
/// What a multipart body may add to the file's own size: part headers,
/// boundaries, fields, preamble and epilogue. Content-Length above
/// `max_upload + kMultipartOverheadBytes` is refused before reading.
inline constexpr std::uint64_t kMultipartOverheadBytes = 256 * 1024;

/// The boundary of a `multipart/form-data; boundary=…` Content-Type (the
/// parameter may be quoted). Errors: MULTIPART_NOT_FORM_DATA (another type),
/// MULTIPART_BAD_BOUNDARY (missing, empty, longer than 70, or characters
/// RFC 2046 does not allow).
core::Result<std::string> multipart_boundary(std::string_view content_type);

/// True when the Content-Type's media type is multipart/form-data.
bool is_multipart_form_data(std::string_view content_type);

/// The `filename` of a `Content-Disposition: form-data; name=…; filename=…`
/// value: `filename*=UTF-8''percent-encoded` (RFC 5987) wins over `filename`;
/// a quoted value ends at the next '"' (browsers percent-encode quotes, no
/// backslash escapes). nullopt: not a file part (no filename parameter).
/// Errors: MULTIPART_BAD_DISPOSITION (not form-data, unterminated quote,
/// malformed parameter).
core::Result<std::optional<std::string>> disposition_file_name(std::string_view value);

/// Incremental reader. Events: `on_file_begin(filename)` once, when the file
/// part's headers are complete (the raw name from Content-Disposition, not
/// cleaned), then `on_file_data(bytes)` for each piece of its content. An
/// error returned by a callback stops the reader and is returned by feed().
class MultipartReader {
 public:
  struct Events {
    std::function<core::Status(std::string_view filename)> on_file_begin;
    std::function<core::Status(std::string_view bytes)> on_file_data;
  };

  MultipartReader(std::string boundary, Events events);

  /// Consumes the next bytes of the body. Errors (and the reader then
  /// refuses further input): MULTIPART_BAD_DELIMITER (bytes after a boundary
  /// other than "--" or padding + CRLF), MULTIPART_HEADER_TOO_LARGE,
  /// MULTIPART_BAD_HEADER (a line without ':' or folded),
  /// MULTIPART_BAD_DISPOSITION, MULTIPART_TOO_MANY_PARTS,
  /// MULTIPART_TWO_FILES (a second file part), MULTIPART_FIELD_TOO_LARGE,
  /// MULTIPART_PREAMBLE_TOO_LARGE, or a callback's error.
  core::Status feed(std::string_view bytes);
  /// The body ended. Errors: MULTIPART_TRUNCATED (no closing boundary),
  /// MULTIPART_NO_FILE (no part had a filename).
  core::Status finish();

  bool has_file() const { return file_seen_; }
  /// Bytes of file content delivered so far.
  std::uint64_t file_bytes() const { return file_bytes_; }

 private:
  enum class State { preamble, after_delimiter, headers, body, epilogue, failed };
  core::Status step(bool& progressed);
  core::Status fail(core::ErrorCode code, std::string message);
  core::Status fail(core::Error error);  ///< another call's error, located here
  core::Status emit(std::string_view bytes);

  std::string delimiter_;  ///< "\r\n--" + boundary
  Events events_;
  State state_ = State::preamble;
  std::string buf_;             ///< bytes not yet consumed (bounded)
  std::uint64_t consumed_ = 0;  ///< body offset of buf_[0] (+2 for the virtual CRLF)
  std::size_t parts_ = 0;
  bool in_file_ = false;  ///< the current part is the file part
  bool file_seen_ = false;
  std::uint64_t file_bytes_ = 0;
  std::uint64_t field_bytes_ = 0;
  std::uint64_t preamble_bytes_ = 0;
  std::optional<core::Error> error_;  ///< set once the reader failed
};

}  // namespace charkit::server
