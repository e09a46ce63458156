// Internal to the server module: an upload's body on its way into the blob
// store, apart from the connection that carries it. The session (server.cpp)
// reads the socket and hands the body over in large pieces; this class
// judges the file name and extension, reads a multipart/form-data body, writes
// the store upload and records the result. It knows nothing of sockets or
// strands, so each step is a plain call a test or a reader can follow.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include "charkit/server/detail/server_impl.h"

namespace charkit::server {

class UploadSink {
 public:
  /// The answer to a refused step; the connection closes after it (the rest
  /// of the body is not read).
  using Refusal = StringResponse;

  /// Judges the request head of `POST /api/{models,motions}`: the file name
  /// (`?filename=`, or a multipart file part's own), its extension, the
  /// Content-Type's multipart boundary, the declared length against the
  /// store's limit. Calls nothing that blocks.
  static std::variant<std::unique_ptr<UploadSink>, Refusal> open(
      Server::Impl& srv, store::Kind kind, const Target& target,
      const http::request<http::empty_body>& head, std::optional<std::uint64_t> content_length,
      bool chunked);

  UploadSink(const UploadSink&) = delete;
  UploadSink& operator=(const UploadSink&) = delete;

  /// The most body bytes the request may carry (the store's limit, plus a
  /// bounded margin for multipart framing).
  std::uint64_t body_max() const { return body_max_; }
  /// A plain body's store upload starts before the body is read; a multipart
  /// body's when its file part's header has arrived (inside write()).
  bool starts_with_body() const { return !reader_.has_value(); }
  /// The store upload has begun (for a multipart body: the file part's
  /// header has been read and accepted).
  bool file_begun() const { return upload_.has_value(); }

  // The calls below block (temporary files, object storage): the session
  // makes them on the server's blocking pool, one at a time.

  /// Begins the store upload of a plain body.
  std::optional<Refusal> begin();
  /// The body's next bytes.
  std::optional<Refusal> write(core::Bytes bytes);
  /// The body has ended: publishes the blob and records it. The reply, and
  /// whether the connection closes after it (`keep_alive` false, or a refusal).
  std::pair<StringResponse, bool> commit(bool keep_alive);
  /// Drops the upload (its temporary file, or the object storage's parts).
  void abort();

  /// 413 with the store's limit.
  StringResponse too_large_reply() const;

 private:
  UploadSink(Server::Impl& srv, store::Kind kind) : srv_(srv), kind_(kind) {}

  std::optional<Refusal> extension_refusal(const std::string& ext) const;
  /// The multipart file part's header is complete: name, extension, store upload.
  core::Status file_part_begins(std::string_view part_name);
  /// A multipart body was refused: the callback's reply, else 400 with the reader's error.
  StringResponse multipart_refusal(const core::Error& e);

  Server::Impl& srv_;
  store::Kind kind_;
  std::string file_name_;
  std::string ext_;          ///< of a ?filename= name
  bool query_name_ = false;  ///< the file name came from ?filename=
  std::uint64_t body_max_ = 0;
  std::optional<MultipartReader> reader_;  ///< set for a multipart/form-data body
  std::optional<store::Upload> upload_;
  std::optional<StringResponse> refusal_;  ///< a reader callback's HTTP answer
};

}  // namespace charkit::server
