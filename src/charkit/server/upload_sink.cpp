#include "charkit/server/detail/upload_sink.h"
#include "charkit/core/json.h"

namespace charkit::server {

std::variant<std::unique_ptr<UploadSink>, UploadSink::Refusal> UploadSink::open(
    Server::Impl& srv, store::Kind kind, const Target& target,
    const http::request<http::empty_body>& head, std::optional<std::uint64_t> content_length,
    bool chunked) {
  std::unique_ptr<UploadSink> sink(new UploadSink(srv, kind));
  auto raw = query_value(target.params, "filename");
  const std::string_view content_type = sv(head[http::field::content_type]);
  const bool multipart = is_multipart_form_data(content_type);
  std::string boundary;
  if (multipart) {
    auto b = multipart_boundary(content_type);
    if (!b) return error_reply(http::status::bad_request, b.error().code, b.error().message);
    boundary = std::move(*b);
  }
  // A ?filename= query names the file; in a multipart body the file part's
  // own filename is used when there is none.
  sink->query_name_ = raw && !raw->empty();
  if (!sink->query_name_ && !multipart)
    return error_reply(http::status::bad_request, codes::MISSING_FILENAME,
                       "POST /api/" + std::string(store::kind_name(kind)) +
                           " needs ?filename=NAME (the extension picks the format)");
  if (sink->query_name_) {
    sink->file_name_ = clean_file_name(*raw);
    sink->ext_ = store::extension_of(sink->file_name_);
    if (auto refusal = sink->extension_refusal(sink->ext_)) return std::move(*refusal);
  }
  const std::uint64_t max = srv.blobs->max_bytes();
  // A multipart body carries framing besides the file: allow a bounded margin.
  sink->body_max_ = multipart ? max + kMultipartOverheadBytes : max;
  if (content_length && *content_length > sink->body_max_)
    return error_reply(http::status::payload_too_large, codes::UPLOAD_TOO_LARGE,
                       "uploads are limited to " + std::to_string(max) + " bytes",
                       Json{{"limit", max}, {"contentLength", *content_length}});
  if ((!content_length && !chunked) || (content_length && *content_length == 0))
    return error_reply(http::status::bad_request, codes::EMPTY_BODY,
                       "the request body must hold the file");
  if (multipart) {
    // The store upload begins when the file part's header has arrived (its
    // extension may come from there). The callbacks run inside write().
    UploadSink* self = sink.get();  // the sink is not moved: it lives behind the pointer
    MultipartReader::Events ev;
    ev.on_file_begin = [self](std::string_view name) { return self->file_part_begins(name); };
    ev.on_file_data = [self](std::string_view bytes) -> core::Status {
      auto w = self->upload_->write(
          core::Bytes(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()));
      if (!w) {
        self->refusal_ = w.error().code == store::codes::STORE_TOO_LARGE
                             ? self->too_large_reply()
                             : store_error_reply(w.error());
        return std::move(w).error();
      }
      return core::Ok{};
    };
    sink->reader_.emplace(std::move(boundary), std::move(ev));
  }
  return sink;
}

std::optional<UploadSink::Refusal> UploadSink::extension_refusal(const std::string& ext) const {
  if (store::extension_allowed(kind_, ext)) return std::nullopt;
  Json allowed = Json::array();
  for (auto e : store::allowed_extensions(kind_)) allowed.push_back(e);
  return error_reply(http::status::unprocessable_entity, codes::UNSUPPORTED_EXTENSION,
                     core::quote_excerpt(ext) + " files are not accepted as " +
                         std::string(store::kind_name(kind_)),
                     Json{{"extension", ext}, {"allowed", allowed}});
}

StringResponse UploadSink::too_large_reply() const {
  const std::uint64_t max = srv_.blobs->max_bytes();
  return error_reply(http::status::payload_too_large, codes::UPLOAD_TOO_LARGE,
                     "uploads are limited to " + std::to_string(max) + " bytes",
                     Json{{"limit", max}});
}

std::optional<UploadSink::Refusal> UploadSink::begin() {
  auto up = srv_.blobs->begin_upload(kind_, ext_);
  if (!up) return store_error_reply(up.error());
  upload_.emplace(std::move(*up));
  return std::nullopt;
}

core::Status UploadSink::file_part_begins(std::string_view part_name) {
  if (!query_name_) {
    file_name_ = clean_file_name(part_name);
    if (file_name_.empty()) {
      refusal_ = error_reply(http::status::bad_request, codes::MISSING_FILENAME,
                             "the file part has no filename and the target no ?filename=");
      return core::make_error(codes::MISSING_FILENAME, "no file name");
    }
  }
  std::string ext = store::extension_of(file_name_);
  if (auto refusal = extension_refusal(ext)) {
    refusal_ = std::move(*refusal);
    return core::make_error(codes::UNSUPPORTED_EXTENSION, "extension not accepted");
  }
  auto up = srv_.blobs->begin_upload(kind_, ext);
  if (!up) {
    refusal_ = store_error_reply(up.error());
    return std::move(up).error();
  }
  upload_.emplace(std::move(*up));
  return core::Ok{};
}

StringResponse UploadSink::multipart_refusal(const core::Error& e) {
  if (refusal_) {
    auto r = std::move(*refusal_);
    refusal_.reset();
    return r;
  }
  Json detail = nullptr;
  if (e.location.offset) detail = Json{{"offset", *e.location.offset}};
  return error_reply(http::status::bad_request, e.code, e.message, detail);
}

std::optional<UploadSink::Refusal> UploadSink::write(core::Bytes bytes) {
  if (reader_) {
    auto s =
        reader_->feed(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
    if (!s) {
      abort();
      return multipart_refusal(s.error());
    }
    return std::nullopt;
  }
  auto w = upload_->write(bytes);
  if (!w) {
    abort();
    return w.error().code == store::codes::STORE_TOO_LARGE ? too_large_reply()
                                                           : store_error_reply(w.error());
  }
  return std::nullopt;
}

std::pair<StringResponse, bool> UploadSink::commit(bool keep_alive) {
  if (reader_) {
    auto s = reader_->finish();
    if (!s) {
      abort();
      return {multipart_refusal(s.error()), true};
    }
    if (reader_->file_bytes() == 0) {
      abort();
      return {error_reply(http::status::bad_request, codes::EMPTY_BODY, "the file part is empty"),
              true};
    }
  }
  if (!upload_ || upload_->bytes_written() == 0) {  // a chunked body with no data
    abort();
    return {error_reply(http::status::bad_request, codes::EMPTY_BODY,
                        "the request body must hold the file"),
            true};
  }
  // The content's lock is held from publishing the blob to recording it, so
  // a deletion of the same bytes cannot remove the blob in between.
  auto lock = store::lock_content(*srv_.catalogue, {upload_->digest()});
  if (!lock) {
    abort();
    return {store_error_reply(lock.error()), true};
  }
  auto blob = upload_->commit();
  upload_.reset();
  if (!blob) return {store_error_reply(blob.error()), true};
  try {
    return {srv_.finish_upload(kind_, *blob, file_name_), !keep_alive};
  } catch (const std::exception& e) {
    return {srv_.internal_error(e), true};
  }
}

void UploadSink::abort() {
  if (upload_) upload_->abort();
  upload_.reset();
}

}  // namespace charkit::server
