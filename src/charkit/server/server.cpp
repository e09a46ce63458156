// The HTTP server (server.h): Beast sessions on an Asio thread pool, the
// REST routes of docs/api.md, uploads streamed into the blob store.
#include "charkit/server/server.h"

#include <array>
#include <atomic>
#include <cstdio>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <variant>
#include <vector>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "charkit/core/json.h"
#include "charkit/server/http_glue.h"
#include "charkit/server/metrics.h"
#include "charkit/server/multipart.h"
#include "charkit/server/page.h"
#include "charkit/server/worker.h"
#include "charkit/server/ws.h"
#include "charkit/store/catalogue.h"
#include "charkit/store/jobs.h"

namespace charkit::server {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using core::Json;

std::string_view sv(beast::string_view s) {
  return {s.data(), s.size()};
}
beast::string_view bsv(std::string_view s) {
  return {s.data(), s.size()};
}

/// A Beast body that streams a byte range of a stored blob (pread, 64 KiB at a time).
struct BlobBody {
  struct value_type {
    std::shared_ptr<store::BlobReader> reader;
    std::uint64_t offset = 0;
    std::uint64_t length = 0;
  };
  static std::uint64_t size(const value_type& v) { return v.length; }

  class writer {
   public:
    using const_buffers_type = net::const_buffer;
    template <bool isRequest, class Fields>
    writer(http::header<isRequest, Fields>& /*h*/, const value_type& b) : body_(b) {}
    void init(beast::error_code& ec) {
      pos_ = body_.offset;
      remain_ = body_.length;
      ec = {};
    }
    boost::optional<std::pair<const_buffers_type, bool>> get(beast::error_code& ec) {
      if (remain_ == 0) {
        ec = {};
        return boost::none;
      }
      std::size_t want = remain_ < buf_.size() ? static_cast<std::size_t>(remain_) : buf_.size();
      auto r = body_.reader->read_at(pos_, std::span<std::uint8_t>(buf_.data(), want));
      if (!r || *r == 0) {
        ec = make_error_code(beast::errc::io_error);
        return boost::none;
      }
      pos_ += *r;
      remain_ -= *r;
      ec = {};
      return {{net::const_buffer(buf_.data(), *r), remain_ > 0}};
    }

   private:
    const value_type& body_;
    std::uint64_t pos_ = 0;
    std::uint64_t remain_ = 0;
    std::array<std::uint8_t, 64 * 1024> buf_{};
  };
};

using StringResponse = http::response<http::string_body>;
using BlobResponse = http::response<BlobBody>;
using Reply = std::variant<StringResponse, BlobResponse>;

StringResponse json_reply(http::status status, const Json& body) {
  StringResponse res{status, 11};
  res.set(http::field::content_type, "application/json");
  res.set(http::field::cache_control, "no-store");
  res.body() = body.dump() + "\n";
  res.prepare_payload();
  return res;
}

StringResponse error_reply(http::status status, std::string_view code, std::string_view message,
                           Json detail = nullptr) {
  return json_reply(status, Json{{"error", code}, {"message", message}, {"detail", detail}});
}

/// The HTTP status of a store/catalogue error.
http::status status_of(const core::Error& e) {
  if (e.code == "STORE_TOO_LARGE") return http::status::payload_too_large;
  if (e.code == "STORE_KIND_EXTENSION") return http::status::unprocessable_entity;
  if (e.code == "STORE_NOT_FOUND") return http::status::not_found;
  return http::status::internal_server_error;
}

StringResponse store_error_reply(const core::Error& e) {
  Json detail = nullptr;
  if (!e.location.empty()) detail = Json{{"location", e.location.to_string()}};
  return error_reply(status_of(e), e.code, e.message, detail);
}

std::string_view content_type_of(std::string_view ext) {
  if (ext == "ndjson") return "application/x-ndjson";
  if (ext == "json") return "application/json";
  if (ext == "gltf") return "model/gltf+json";
  if (ext == "glb" || ext == "vrm") return "model/gltf-binary";
  if (ext == "zip") return "application/zip";
  if (ext == "bvh") return "text/plain; charset=utf-8";
  return "application/octet-stream";
}

}  // namespace

std::string resolved_db_url(const ServerOptions& o) {
  if (!o.db_url.empty()) return o.db_url;
  return "sqlite:" + (o.data_dir / "charkit.sqlite3").string();
}

std::filesystem::path resolved_blob_root(const ServerOptions& o) {
  return o.blob_root.empty() ? o.data_dir / "blobs" : o.blob_root;
}

class Session;

struct Server::Impl {
  ServerOptions options;
  std::unique_ptr<store::Catalogue> catalogue;
  std::optional<store::BlobStore> blobs;
  std::unique_ptr<store::JobQueue> queue;
  std::unique_ptr<WorkerPool> workers;
  // Declared before the io_context: handlers it destroys may still unregister sessions.
  Metrics metrics;
  ws::Hub hub{metrics};
  std::mutex sessions_mutex;
  std::map<Session*, std::weak_ptr<Session>> sessions;
  std::mutex log_mutex;

  net::io_context ioc;
  std::optional<net::executor_work_guard<net::io_context::executor_type>> guard;
  std::optional<tcp::acceptor> acceptor;
  std::vector<std::thread> threads;
  std::atomic<bool> stopping{false};
  std::atomic<std::uint16_t> port{0};
  bool started = false;

  void log(std::string_view line) {
    if (options.quiet) return;
    if (options.log) {
      options.log(line);
      return;
    }
    std::lock_guard lock(log_mutex);
    std::fprintf(stderr, "%.*s\n", static_cast<int>(line.size()), line.data());
  }

  void do_accept();

  // ---- routes (run on an HTTP thread, synchronous store calls) ----
  Json asset_json(std::int64_t asset_id);
  Json model_json(const store::Model& m);
  Json motion_json(const store::Motion& m);
  Json package_json(const store::Package& p);
  Reply handle(const http::request<http::string_body>& req, const Target& target);
  Reply handle_list(store::Kind kind, const QueryParams& params);
  Reply handle_get(store::Kind kind, std::int64_t id);
  Reply handle_delete(store::Kind kind, std::int64_t id);
  Reply handle_asset(const store::Asset& asset, const http::request<http::string_body>& req);
  StringResponse handle_metrics();
  /// The keypoint frames of a done motion (shared while streamed), or the HTTP refusal.
  std::variant<std::shared_ptr<const ws::MotionFrames>, StringResponse> stream_frames(
      std::int64_t motion_id);
  /// After an upload committed: asset row, record, job. 201 created, 200 existing.
  StringResponse finish_upload(store::Kind kind, const store::StoredBlob& blob,
                               const std::string& original_name);
};

// ---- one connection -----------------------------------------------------------

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(Server::Impl& srv, tcp::socket socket) : srv_(srv), stream_(std::move(socket)) {}
  ~Session() {
    std::lock_guard lock(srv_.sessions_mutex);
    srv_.sessions.erase(this);
  }

  void run() {
    {
      std::lock_guard lock(srv_.sessions_mutex);
      srv_.sessions[this] = weak_from_this();
    }
    net::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->read_header(); });
  }

  /// Called by Server::stop on the session's strand.
  void shutdown() {
    if (handed_off_) return;  // the socket now belongs to a WebSocket session
    if (upload_) upload_->abort();
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
    stream_.close();
  }
  beast::tcp_stream& stream() { return stream_; }

 private:
  void read_header() {
    if (srv_.stopping) return close();
    header_parser_.emplace();
    header_parser_->header_limit(srv_.options.max_header_bytes);
    header_parser_->body_limit(std::numeric_limits<std::uint64_t>::max());
    stream_.expires_after(srv_.options.read_timeout);
    http::async_read_header(
        stream_, buffer_, *header_parser_,
        [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_header(ec); });
  }

  void on_header(beast::error_code ec) {
    if (srv_.stopping || ec == http::error::end_of_stream || ec == net::error::eof) return close();
    start_ = std::chrono::steady_clock::now();
    if (ec == http::error::header_limit)
      return send(error_reply(http::status::request_header_fields_too_large, "HEADER_TOO_LARGE",
                              "request line and header fields exceed " +
                                  std::to_string(srv_.options.max_header_bytes) + " bytes"),
                  true);
    if (ec) {
      if (ec == beast::error::timeout || ec == net::error::operation_aborted ||
          ec == net::error::connection_reset)
        return close();
      return send(error_reply(http::status::bad_request, "HTTP_BAD_REQUEST", ec.message()), true);
    }
    auto& req = header_parser_->get();
    method_ = std::string(req.method_string());
    target_text_ = std::string(req.target());
    auto target = parse_target(sv(req.target()));
    if (!target)
      return send(
          error_reply(http::status::bad_request, target.error().code, target.error().message),
          true);
    target_ = std::move(*target);
    const auto& seg = target_.segments;
    if (req.method() == http::verb::post && seg.size() == 2 && seg[0] == "api") {
      auto kind = store::parse_kind(seg[1]);
      if (kind && *kind != store::Kind::keypoints) return begin_upload(*kind);
    }
    if (header_parser_->content_length() &&
        *header_parser_->content_length() > srv_.options.max_request_body)
      return send(error_reply(http::status::payload_too_large, "BODY_TOO_LARGE",
                              "request bodies here are limited to " +
                                  std::to_string(srv_.options.max_request_body) + " bytes"),
                  true);
    body_parser_.emplace(std::move(*header_parser_));
    body_parser_->body_limit(srv_.options.max_request_body);
    stream_.expires_after(srv_.options.read_timeout);
    http::async_read(
        stream_, buffer_, *body_parser_,
        [self = shared_from_this()](beast::error_code e, std::size_t) { self->on_body(e); });
  }

  void on_body(beast::error_code ec) {
    if (ec == http::error::body_limit)
      return send(
          error_reply(http::status::payload_too_large, "BODY_TOO_LARGE", "request body too large"),
          true);
    if (ec) return close();
    auto req = body_parser_->release();
    srv_.metrics.request_bytes.fetch_add(req.body().size());
    const auto& seg = target_.segments;
    if (seg.size() >= 3 && seg[0] == "api" &&
        ((seg.size() == 4 && seg[1] == "motions" && seg[3] == "stream") ||
         (seg.size() == 3 && seg[1] == "live")))
      return websocket_route(std::move(req));
    bool keep = req.keep_alive();
    Reply reply = srv_.handle(req, target_);
    std::visit([&](auto& r) { send(std::move(r), !keep); }, reply);
  }

  // ---- WebSocket routes: checked here, then the socket moves to a ws::WsSession ----
  void websocket_route(http::request<http::string_body>&& req) {
    if (req.method() != http::verb::get) {
      auto res = error_reply(http::status::method_not_allowed, "METHOD_NOT_ALLOWED",
                             "allowed here: GET (a WebSocket upgrade)");
      res.set(http::field::allow, "GET");
      return send(std::move(res), true);
    }
    if (!beast::iequals(req[http::field::upgrade], "websocket")) {
      auto res = error_reply(http::status::upgrade_required, "UPGRADE_REQUIRED",
                             "this route is a WebSocket: send Upgrade: websocket");
      res.set(http::field::upgrade, "websocket");
      res.set(http::field::connection, "Upgrade");
      return send(std::move(res), true);
    }
    const auto& seg = target_.segments;
    if (seg[1] == "motions") {
      auto id = parse_id(seg[2]);
      if (!id)
        return send(
            error_reply(http::status::bad_request, "BAD_ID", "'" + seg[2] + "' is not a record id"),
            true);
      auto frames = srv_.stream_frames(*id);
      if (auto* refusal = std::get_if<StringResponse>(&frames))
        return send(std::move(*refusal), true);
      handed_off_ = true;
      ws::start_motion_stream(srv_.hub, std::move(stream_), std::move(req),
                              std::get<0>(std::move(frames)), *id);
      return;
    }
    if (!ws::valid_channel_name(seg[2]))
      return send(error_reply(http::status::bad_request, "BAD_CHANNEL",
                              "a channel name is 1.." + std::to_string(ws::kMaxChannelName) +
                                  " characters of A-Z a-z 0-9 _ -"),
                  true);
    auto params = parse_query(target_.query);
    std::optional<std::string> role;
    if (params) role = query_value(*params, "role");
    if (!role || (*role != "publish" && *role != "view"))
      return send(error_reply(http::status::bad_request, "BAD_ROLE",
                              "a live connection needs ?role=publish or ?role=view"),
                  true);
    handed_off_ = true;
    ws::start_live(srv_.hub, std::move(stream_), std::move(req), seg[2],
                   *role == "publish" ? ws::LiveRole::publish : ws::LiveRole::view);
  }

  // ---- uploads: streamed into the blob store ----

  /// 422 when the extension is not on the kind's list.
  std::optional<StringResponse> extension_refusal(const std::string& ext) const {
    if (store::extension_allowed(kind_, ext)) return std::nullopt;
    Json allowed = Json::array();
    for (auto e : store::allowed_extensions(kind_)) allowed.push_back(e);
    return error_reply(
        http::status::unprocessable_entity, "UNSUPPORTED_EXTENSION",
        "'" + ext + "' files are not accepted as " + std::string(store::kind_name(kind_)),
        Json{{"extension", ext}, {"allowed", allowed}});
  }

  StringResponse too_large_reply() const {
    const std::uint64_t max = srv_.blobs->max_bytes();
    return error_reply(http::status::payload_too_large, "UPLOAD_TOO_LARGE",
                       "uploads are limited to " + std::to_string(max) + " bytes",
                       Json{{"limit", max}});
  }

  void begin_upload(store::Kind kind) {
    kind_ = kind;
    reader_.reset();
    refusal_.reset();
    auto params = parse_query(target_.query);
    if (!params)
      return send(
          error_reply(http::status::bad_request, params.error().code, params.error().message),
          true);
    auto raw = query_value(*params, "filename");
    const std::string_view content_type = sv(header_parser_->get()[http::field::content_type]);
    const bool multipart = is_multipart_form_data(content_type);
    std::string boundary;
    if (multipart) {
      auto b = multipart_boundary(content_type);
      if (!b)
        return send(error_reply(http::status::bad_request, b.error().code, b.error().message),
                    true);
      boundary = std::move(*b);
    }
    // A ?filename= query names the file; in a multipart body the file part's
    // own filename is used when there is none.
    query_name_ = raw && !raw->empty();
    if (!query_name_ && !multipart)
      return send(error_reply(http::status::bad_request, "MISSING_FILENAME",
                              "POST /api/" + std::string(store::kind_name(kind)) +
                                  " needs ?filename=NAME (the extension picks the format)"),
                  true);
    std::string ext;
    if (query_name_) {
      file_name_ = clean_file_name(*raw);
      ext = store::extension_of(file_name_);
      if (auto refusal = extension_refusal(ext)) return send(std::move(*refusal), true);
    }
    auto length = header_parser_->content_length();
    const std::uint64_t max = srv_.blobs->max_bytes();
    // A multipart body carries framing besides the file: allow a bounded margin.
    const std::uint64_t body_max = multipart ? max + kMultipartOverheadBytes : max;
    if (length && *length > body_max)
      return send(error_reply(http::status::payload_too_large, "UPLOAD_TOO_LARGE",
                              "uploads are limited to " + std::to_string(max) + " bytes",
                              Json{{"limit", max}, {"contentLength", *length}}),
                  true);
    if ((!length && !header_parser_->chunked()) || (length && *length == 0))
      return send(error_reply(http::status::bad_request, "EMPTY_BODY",
                              "the request body must hold the file"),
                  true);
    if (multipart) {
      // The store upload begins when the file part's headers have arrived
      // (its extension may come from there).
      MultipartReader::Events ev;
      ev.on_file_begin = [this](std::string_view name) { return multipart_file_begin(name); };
      ev.on_file_data = [this](std::string_view bytes) -> core::Status {
        auto w = upload_->write(
            core::Bytes(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()));
        if (!w) {
          refusal_ = w.error().code == "STORE_TOO_LARGE" ? too_large_reply()
                                                         : store_error_reply(w.error());
          return std::move(w).error();
        }
        return core::Ok{};
      };
      reader_.emplace(std::move(boundary), std::move(ev));
    } else {
      auto up = srv_.blobs->begin_upload(kind, ext);
      if (!up) return send(store_error_reply(up.error()), true);
      upload_.emplace(std::move(*up));
    }
    upload_gauge_.emplace(srv_.metrics.uploads_in_flight);
    bool expect_continue =
        beast::iequals(header_parser_->get()[http::field::expect], "100-continue");
    upload_parser_.emplace(std::move(*header_parser_));
    upload_parser_->body_limit(body_max);
    if (expect_continue) {
      auto res = std::make_shared<http::response<http::empty_body>>(http::status::continue_, 11);
      http::async_write(stream_, *res,
                        [self = shared_from_this(), res](beast::error_code ec, std::size_t) {
                          if (ec) return self->close();
                          self->read_chunk();
                        });
      return;
    }
    read_chunk();
  }

  void read_chunk() {
    if (srv_.stopping) return close();
    if (upload_parser_->is_done()) return commit_upload();
    auto& body = upload_parser_->get().body();
    body.data = chunk_.data();
    body.size = chunk_.size();
    body.more = true;
    stream_.expires_after(srv_.options.read_timeout);
    // read_some: the bytes are handed on as they arrive (a multipart file part
    // begins its store upload at once), not when 64 KiB have gathered.
    http::async_read_some(
        stream_, buffer_, *upload_parser_,
        [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_chunk(ec); });
  }

  /// The multipart file part's headers are complete: name, extension, store upload.
  core::Status multipart_file_begin(std::string_view part_name) {
    if (!query_name_) {
      file_name_ = clean_file_name(part_name);
      if (file_name_.empty()) {
        refusal_ = error_reply(http::status::bad_request, "MISSING_FILENAME",
                               "the file part has no filename and the target no ?filename=");
        return core::make_error("MISSING_FILENAME", "no file name");
      }
    }
    std::string ext = store::extension_of(file_name_);
    if (auto refusal = extension_refusal(ext)) {
      refusal_ = std::move(*refusal);
      return core::make_error("UNSUPPORTED_EXTENSION", "extension not accepted");
    }
    auto up = srv_.blobs->begin_upload(kind_, ext);
    if (!up) {
      refusal_ = store_error_reply(up.error());
      return std::move(up).error();
    }
    upload_.emplace(std::move(*up));
    return core::Ok{};
  }

  /// A multipart body was refused: the callback's reply, else 400 with the reader's error.
  void refuse_multipart(const core::Error& e) {
    if (upload_) upload_->abort();
    upload_.reset();
    if (refusal_) {
      auto r = std::move(*refusal_);
      refusal_.reset();
      return send(std::move(r), true);
    }
    Json detail = nullptr;
    if (e.location.offset) detail = Json{{"offset", *e.location.offset}};
    send(error_reply(http::status::bad_request, e.code, e.message, detail), true);
  }

  void on_chunk(beast::error_code ec) {
    if (ec == http::error::need_buffer) ec = {};
    if (ec == http::error::body_limit) {
      if (upload_) upload_->abort();
      return send(too_large_reply(), true);
    }
    if (ec) {  // the client went away, a timeout, or shutdown: nothing is kept
      if (upload_) upload_->abort();
      srv_.log(method_ + " " + target_text_ + " aborted: " + ec.message());
      return close();
    }
    std::size_t n = chunk_.size() - upload_parser_->get().body().size;
    srv_.metrics.request_bytes.fetch_add(n);
    if (n > 0) {
      if (reader_) {
        auto s = reader_->feed(std::string_view(reinterpret_cast<const char*>(chunk_.data()), n));
        if (!s) return refuse_multipart(s.error());
      } else {
        auto w = upload_->write(core::Bytes(chunk_.data(), n));
        if (!w) {
          upload_->abort();
          return send(store_error_reply(w.error()), true);
        }
      }
    }
    read_chunk();
  }

  void commit_upload() {
    bool keep = upload_parser_->get().keep_alive();
    if (reader_) {
      auto s = reader_->finish();
      if (!s) return refuse_multipart(s.error());
      const bool empty = reader_->file_bytes() == 0;
      reader_.reset();
      if (empty) {
        if (upload_) upload_->abort();
        upload_.reset();
        upload_gauge_.reset();
        return send(error_reply(http::status::bad_request, "EMPTY_BODY", "the file part is empty"),
                    true);
      }
    }
    auto blob = upload_->commit();
    upload_.reset();
    upload_gauge_.reset();
    if (!blob) return send(store_error_reply(blob.error()), true);
    send(srv_.finish_upload(kind_, *blob, file_name_), !keep);
  }

  // ---- responses ----
  template <class Body>
  void send(http::response<Body>&& res, bool close_after) {
    res.set(http::field::server, "charkit");
    res.keep_alive(!close_after);
    auto sp = std::make_shared<http::response<Body>>(std::move(res));
    unsigned status = sp->result_int();
    std::uint64_t bytes = sp->payload_size() ? *sp->payload_size() : 0;
    stream_.expires_after(std::chrono::seconds(300));
    http::async_write(stream_, *sp,
                      [self = shared_from_this(), sp, close_after, status, bytes](
                          beast::error_code ec, std::size_t) {
                        self->log_request(status, bytes, ec);
                        if (ec || close_after) return self->close();
                        self->read_header();
                      });
  }

  void log_request(unsigned status, std::uint64_t bytes, beast::error_code ec) {
    srv_.metrics.count_request(method_, status);
    if (!ec) srv_.metrics.response_bytes.fetch_add(bytes);
    auto ms = std::chrono::duration_cast<std::chrono::microseconds>(
                  std::chrono::steady_clock::now() - start_)
                  .count();
    std::string line = (method_.empty() ? std::string("-") : method_) + " " +
                       (target_text_.empty() ? std::string("-") : target_text_) + " " +
                       std::to_string(status) + " " + std::to_string(bytes) + "B " +
                       std::to_string(static_cast<double>(ms) / 1000.0) + "ms";
    if (ec) line += " (write: " + ec.message() + ")";
    srv_.log(line);
  }

  void close() {
    upload_gauge_.reset();
    if (handed_off_) return;
    if (upload_) upload_->abort();
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
    stream_.close();
  }

  Server::Impl& srv_;
  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::empty_body>> header_parser_;
  std::optional<http::request_parser<http::string_body>> body_parser_;
  std::optional<http::request_parser<http::buffer_body>> upload_parser_;
  std::optional<store::Upload> upload_;
  std::optional<GaugeToken> upload_gauge_;
  std::optional<MultipartReader> reader_;  ///< set for a multipart/form-data upload
  std::optional<StringResponse> refusal_;  ///< a reader callback's HTTP answer
  bool query_name_ = false;                ///< the file name came from ?filename=
  bool handed_off_ = false;
  std::array<std::uint8_t, 64 * 1024> chunk_{};
  store::Kind kind_ = store::Kind::model;
  std::string file_name_;
  Target target_;
  std::string method_;
  std::string target_text_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

void Server::Impl::do_accept() {
  acceptor->async_accept(net::make_strand(ioc), [this](beast::error_code ec, tcp::socket socket) {
    if (stopping) return;
    if (!ec) {
      // Keypoint frames are small writes at a fixed rate: without TCP_NODELAY,
      // Nagle's algorithm holds a frame until the previous one is ACKed, and a
      // client's delayed ACK (40 ms on Linux) shows as more than a frame of drift.
      beast::error_code ignored;
      socket.set_option(tcp::no_delay(true), ignored);
      std::make_shared<Session>(*this, std::move(socket))->run();
    }
    do_accept();
  });
}

// ---- JSON of the records ----------------------------------------------------------

Json Server::Impl::asset_json(std::int64_t asset_id) {
  auto a = catalogue->get_asset(asset_id);
  if (!a || !*a) return nullptr;
  const store::Asset& x = **a;
  return Json{{"id", x.id},
              {"sha256", x.sha256},
              {"size", x.size},
              {"ext", x.ext},
              {"originalName", x.original_name},
              {"createdAt", x.created_at},
              {"refcount", x.refcount},
              {"url", "/api/assets/" + x.sha256}};
}

namespace {
Json common_fields(std::string_view kind, std::int64_t id, const Json& asset) {
  Json j = Json::object();
  j["id"] = id;
  j["kind"] = kind;
  j["sha256"] = asset.is_object() ? asset["sha256"] : Json(nullptr);
  j["size"] = asset.is_object() ? asset["size"] : Json(nullptr);
  j["originalName"] = asset.is_object() ? asset["originalName"] : Json(nullptr);
  j["url"] = "/api/" + std::string(kind) + "/" + std::to_string(id);
  j["contentUrl"] = asset.is_object() ? asset["url"] : Json(nullptr);
  return j;
}
}  // namespace

Json Server::Impl::model_json(const store::Model& m) {
  Json j = common_fields("models", m.id, asset_json(m.asset_id));
  j["format"] = m.format;
  j["intakeState"] = store::state_name(m.intake_state);
  j["error"] = m.error.empty() ? Json(nullptr) : Json(m.error);
  j["vrmVersion"] = m.vrm_version.empty() ? Json(nullptr) : Json(m.vrm_version);
  j["skinned"] = m.skinned;
  j["humanoidBones"] = m.humanoid_bones;
  j["name"] = m.name;
  j["createdAt"] = m.created_at;
  j["updatedAt"] = m.updated_at;
  return j;
}

Json Server::Impl::motion_json(const store::Motion& m) {
  Json j = common_fields("motions", m.id, asset_json(m.asset_id));
  j["format"] = m.format;
  j["preprocessState"] = store::state_name(m.preprocess_state);
  j["error"] = m.error.empty() ? Json(nullptr) : Json(m.error);
  j["fps"] = m.fps;
  j["frames"] = m.frames;
  j["durationS"] = m.duration_s;
  Json kp = nullptr;
  if (m.keypoints_asset_id) kp = asset_json(*m.keypoints_asset_id);
  j["keypointsSha256"] = kp.is_object() ? kp["sha256"] : Json(nullptr);
  j["keypointsUrl"] = m.preprocess_state == store::PreprocessState::done
                          ? Json("/api/motions/" + std::to_string(m.id) + "/keypoints.ndjson")
                          : Json(nullptr);
  j["createdAt"] = m.created_at;
  j["updatedAt"] = m.updated_at;
  return j;
}

Json Server::Impl::package_json(const store::Package& p) {
  Json j = common_fields("packages", p.id, asset_json(p.asset_id));
  j["container"] = p.container;
  j["bemVersion"] = p.bem_version.empty() ? Json(nullptr) : Json(p.bem_version);
  j["validity"] = store::validity_name(p.validity);
  j["reportUrl"] = p.report_json.empty()
                       ? Json(nullptr)
                       : Json("/api/packages/" + std::to_string(p.id) + "/report");
  j["createdAt"] = p.created_at;
  j["updatedAt"] = p.updated_at;
  return j;
}

// ---- uploads, after the body ---------------------------------------------------------

StringResponse Server::Impl::finish_upload(store::Kind kind, const store::StoredBlob& blob,
                                           const std::string& original_name) {
  auto asset = catalogue->put_asset(
      store::NewAsset{blob.sha256, kind, blob.ext, blob.size, original_name, blob.key});
  if (!asset) return store_error_reply(asset.error());
  std::int64_t aid = asset->record.id;
  Json body;
  bool created = false;
  std::string_view job_kind;
  std::int64_t id = 0;
  switch (kind) {
    case store::Kind::model: {
      store::Model f;
      f.format = blob.ext;
      auto r = catalogue->add_model(aid, f);
      if (!r) return store_error_reply(r.error());
      created = r->created;
      id = r->record.id;
      job_kind = kJobModelIntake;
      body = model_json(r->record);
      break;
    }
    case store::Kind::motion: {
      store::Motion f;
      f.format = blob.ext;
      auto r = catalogue->add_motion(aid, f);
      if (!r) return store_error_reply(r.error());
      created = r->created;
      id = r->record.id;
      job_kind = kJobMotionPreprocess;
      body = motion_json(r->record);
      break;
    }
    case store::Kind::package: {
      store::Package f;
      f.container = blob.ext;
      auto r = catalogue->add_package(aid, f);
      if (!r) return store_error_reply(r.error());
      created = r->created;
      id = r->record.id;
      job_kind = kJobPackageValidate;
      body = package_json(r->record);
      break;
    }
    case store::Kind::keypoints:
      return error_reply(http::status::method_not_allowed, "METHOD_NOT_ALLOWED",
                         "keypoints are written by preprocessing");
  }
  if (created) {
    auto job = queue->enqueue(job_kind, job_payload(id));
    if (!job) return store_error_reply(job.error());
    if (workers) workers->notify();
  }
  body["created"] = created;
  auto res = json_reply(created ? http::status::created : http::status::ok, body);
  res.set(http::field::location, body["url"].get<std::string>());
  return res;
}

// ---- the other routes ------------------------------------------------------------

Reply Server::Impl::handle_list(store::Kind kind, const QueryParams& params) {
  store::ListQuery q;
  if (auto v = query_value(params, "limit")) {
    auto n = parse_id(*v);
    if (!n)
      return error_reply(http::status::bad_request, "BAD_PARAMETER",
                         "limit must be a positive integer", Json{{"parameter", "limit"}});
    q.limit = std::min<std::int64_t>(*n, 1000);
  }
  if (auto v = query_value(params, "after")) {
    auto n = *v == "0" ? std::optional<std::int64_t>(0) : parse_id(*v);
    if (!n)
      return error_reply(http::status::bad_request, "BAD_PARAMETER", "after must be a record id",
                         Json{{"parameter", "after"}});
    q.after_id = *n;
  }
  if (auto v = query_value(params, "format")) q.format = *v;
  if (auto v = query_value(params, "state")) q.state = *v;
  Json items = Json::array();
  std::int64_t total = 0, next = 0;
  auto fill = [&](auto page, auto&& to_json) -> std::optional<StringResponse> {
    if (!page) return store_error_reply(page.error());
    for (const auto& r : page->items) items.push_back(to_json(r));
    total = page->total;
    next = page->next_after_id;
    return std::nullopt;
  };
  std::optional<StringResponse> err;
  if (kind == store::Kind::model)
    err = fill(catalogue->list_models(q), [&](const store::Model& m) { return model_json(m); });
  else if (kind == store::Kind::motion)
    err = fill(catalogue->list_motions(q), [&](const store::Motion& m) { return motion_json(m); });
  else
    err =
        fill(catalogue->list_packages(q), [&](const store::Package& p) { return package_json(p); });
  if (err) return std::move(*err);
  return json_reply(http::status::ok, Json{{"items", std::move(items)},
                                           {"total", total},
                                           {"nextAfter", next ? Json(next) : Json(nullptr)}});
}

Reply Server::Impl::handle_get(store::Kind kind, std::int64_t id) {
  auto not_found = [&] {
    return error_reply(
        http::status::not_found, "NOT_FOUND",
        std::string(store::kind_name(kind)) + " " + std::to_string(id) + " does not exist");
  };
  if (kind == store::Kind::model) {
    auto r = catalogue->get_model(id);
    if (!r) return store_error_reply(r.error());
    if (!*r) return not_found();
    return json_reply(http::status::ok, model_json(**r));
  }
  if (kind == store::Kind::motion) {
    auto r = catalogue->get_motion(id);
    if (!r) return store_error_reply(r.error());
    if (!*r) return not_found();
    return json_reply(http::status::ok, motion_json(**r));
  }
  auto r = catalogue->get_package(id);
  if (!r) return store_error_reply(r.error());
  if (!*r) return not_found();
  return json_reply(http::status::ok, package_json(**r));
}

Reply Server::Impl::handle_delete(store::Kind kind, std::int64_t id) {
  core::Result<store::Removed> r = kind == store::Kind::model    ? catalogue->delete_model(id)
                                   : kind == store::Kind::motion ? catalogue->delete_motion(id)
                                                                 : catalogue->delete_package(id);
  if (!r) return store_error_reply(r.error());
  if (!r->found)
    return error_reply(
        http::status::not_found, "NOT_FOUND",
        std::string(store::kind_name(kind)) + " " + std::to_string(id) + " does not exist");
  Json removed = Json::array();
  for (const auto& a : r->orphans) {
    (void)blobs->remove(a.storage_key);
    removed.push_back(a.sha256);
  }
  return json_reply(
      http::status::ok,
      Json{{"deleted", id}, {"kind", store::kind_name(kind)}, {"removedBlobs", removed}});
}

Reply Server::Impl::handle_asset(const store::Asset& asset,
                                 const http::request<http::string_body>& req) {
  auto reader = blobs->open_blob(asset.storage_key);
  if (!reader) return store_error_reply(reader.error());
  auto shared = std::make_shared<store::BlobReader>(std::move(*reader));
  const std::uint64_t size = shared->size();
  ByteRange range;
  if (auto h = req.find(http::field::range); h != req.end())
    range = parse_range(sv(h->value()), size);
  if (range.kind == ByteRange::Kind::kUnsatisfiable) {
    auto res = error_reply(http::status::range_not_satisfiable, "RANGE_NOT_SATISFIABLE",
                           "the range lies outside the " + std::to_string(size) + "-byte content");
    res.set(http::field::content_range, "bytes */" + std::to_string(size));
    return res;
  }
  BlobResponse res;
  res.version(11);
  res.set(http::field::content_type, bsv(content_type_of(asset.ext)));
  res.set(http::field::accept_ranges, "bytes");
  res.set(http::field::etag, "\"" + asset.sha256 + "\"");
  res.set(http::field::cache_control, "public, max-age=31536000, immutable");
  res.body().reader = shared;
  if (range.kind == ByteRange::Kind::kSatisfiable) {
    res.result(http::status::partial_content);
    res.body().offset = range.first;
    res.body().length = range.last - range.first + 1;
    res.set(http::field::content_range, "bytes " + std::to_string(range.first) + "-" +
                                            std::to_string(range.last) + "/" +
                                            std::to_string(size));
  } else {
    res.result(http::status::ok);
    res.body().offset = 0;
    res.body().length = size;
  }
  res.prepare_payload();
  return res;
}

Reply Server::Impl::handle(const http::request<http::string_body>& req, const Target& target) {
  const auto& seg = target.segments;
  const auto method = req.method();
  auto params = parse_query(target.query);
  if (!params)
    return error_reply(http::status::bad_request, params.error().code, params.error().message);
  auto not_allowed = [](std::string_view allow) {
    auto res = error_reply(http::status::method_not_allowed, "METHOD_NOT_ALLOWED",
                           "allowed here: " + std::string(allow));
    res.set(http::field::allow, bsv(allow));
    return res;
  };
  auto not_found = [&] {
    return error_reply(http::status::not_found, "NOT_FOUND",
                       "no route for " + std::string(req.target()));
  };

  if (seg.empty()) {
    if (method != http::verb::get) return not_allowed("GET");
    StringResponse res{http::status::ok, 11};
    res.set(http::field::content_type, "text/html; charset=utf-8");
    res.body() = std::string(index_html());
    res.prepare_payload();
    return res;
  }
  if (seg.size() == 1 && seg[0] == "healthz") {
    if (method != http::verb::get) return not_allowed("GET");
    auto v = catalogue->schema_version();
    if (!v) return store_error_reply(v.error());
    return json_reply(
        http::status::ok,
        Json{{"status", "ok"}, {"database", catalogue->backend()}, {"schemaVersion", *v}});
  }
  if (seg.size() == 1 && seg[0] == "metrics") {
    if (method != http::verb::get) return not_allowed("GET");
    return handle_metrics();
  }
  if (seg[0] != "api" || seg.size() < 2) return not_found();

  if (seg[1] == "assets") {
    if (seg.size() != 3) return not_found();
    if (method != http::verb::get) return not_allowed("GET");
    if (!is_sha256_hex(seg[2]))
      return error_reply(http::status::bad_request, "BAD_SHA256",
                         "an asset is named by 64 lower-case hex digits");
    auto a = catalogue->find_asset(seg[2]);
    if (!a) return store_error_reply(a.error());
    if (!*a) return error_reply(http::status::not_found, "NOT_FOUND", "no asset with this sha256");
    return handle_asset(**a, req);
  }

  auto kind = store::parse_kind(seg[1]);
  if (!kind || *kind == store::Kind::keypoints) return not_found();
  if (seg.size() == 2) {
    if (method == http::verb::get) return handle_list(*kind, *params);
    return not_allowed("GET, POST");
  }
  auto id = parse_id(seg[2]);
  if (!id)
    return error_reply(http::status::bad_request, "BAD_ID", "'" + seg[2] + "' is not a record id");
  if (seg.size() == 3) {
    if (method == http::verb::get) return handle_get(*kind, *id);
    if (method == http::verb::delete_) return handle_delete(*kind, *id);
    return not_allowed("GET, DELETE");
  }
  if (seg.size() != 4) return not_found();
  if (*kind == store::Kind::motion && seg[3] == "keypoints.ndjson") {
    if (method != http::verb::get) return not_allowed("GET");
    auto m = catalogue->get_motion(*id);
    if (!m) return store_error_reply(m.error());
    if (!*m) return error_reply(http::status::not_found, "NOT_FOUND", "no such motion");
    if ((*m)->preprocess_state != store::PreprocessState::done || !(*m)->keypoints_asset_id)
      return error_reply(http::status::conflict, "NOT_READY",
                         "the motion's keypoints are not ready",
                         Json{{"preprocessState", store::state_name((*m)->preprocess_state)},
                              {"error", (*m)->error}});
    auto a = catalogue->get_asset(*(*m)->keypoints_asset_id);
    if (!a) return store_error_reply(a.error());
    if (!*a) return error_reply(http::status::not_found, "NOT_FOUND", "keypoint asset missing");
    return handle_asset(**a, req);
  }
  if (*kind == store::Kind::package && seg[3] == "report") {
    if (method != http::verb::get) return not_allowed("GET");
    auto p = catalogue->get_package(*id);
    if (!p) return store_error_reply(p.error());
    if (!*p) return error_reply(http::status::not_found, "NOT_FOUND", "no such package");
    if ((*p)->report_json.empty())
      return error_reply(http::status::conflict, "NOT_READY", "the package is not validated yet",
                         Json{{"validity", store::validity_name((*p)->validity)}});
    StringResponse res{http::status::ok, 11};
    res.set(http::field::content_type, "application/json");
    res.body() = (*p)->report_json + "\n";
    res.prepare_payload();
    return res;
  }
  return not_found();
}

StringResponse Server::Impl::handle_metrics() {
  std::vector<std::pair<std::string, std::int64_t>> jobs;
  for (auto st : {store::JobState::pending, store::JobState::running, store::JobState::done,
                  store::JobState::failed}) {
    auto n = queue->count(st);
    jobs.emplace_back(std::string(store::job_state_name(st)), n ? *n : -1);
  }
  StringResponse res{http::status::ok, 11};
  res.set(http::field::content_type, "text/plain; version=0.0.4; charset=utf-8");
  res.set(http::field::cache_control, "no-store");
  res.body() = metrics.render(jobs);
  res.prepare_payload();
  return res;
}

std::variant<std::shared_ptr<const ws::MotionFrames>, StringResponse> Server::Impl::stream_frames(
    std::int64_t motion_id) {
  auto m = catalogue->get_motion(motion_id);
  if (!m) return store_error_reply(m.error());
  if (!*m) return error_reply(http::status::not_found, "NOT_FOUND", "no such motion");
  if ((*m)->preprocess_state != store::PreprocessState::done || !(*m)->keypoints_asset_id)
    return error_reply(http::status::conflict, "NOT_READY", "the motion's keypoints are not ready",
                       Json{{"preprocessState", store::state_name((*m)->preprocess_state)},
                            {"error", (*m)->error}});
  auto a = catalogue->get_asset(*(*m)->keypoints_asset_id);
  if (!a) return store_error_reply(a.error());
  if (!*a) return error_reply(http::status::not_found, "NOT_FOUND", "keypoint asset missing");
  const std::string sha = (*a)->sha256;
  {
    std::lock_guard lock(hub.mutex);
    if (auto it = hub.cache.find(sha); it != hub.cache.end()) {
      if (auto f = it->second.lock()) return f;
      hub.cache.erase(it);
    }
  }
  auto reader = blobs->open_blob((*a)->storage_key);
  if (!reader) return store_error_reply(reader.error());
  if (reader->size() > ws::kMaxNdjsonBytes)
    return error_reply(http::status::payload_too_large, "KEYPOINTS_TOO_LARGE",
                       "the keypoint file is too large to stream");
  std::string text(static_cast<std::size_t>(reader->size()), '\0');
  std::uint64_t done = 0;
  while (done < text.size()) {
    auto r = reader->read_at(
        done, std::span<std::uint8_t>(reinterpret_cast<std::uint8_t*>(text.data()) + done,
                                      text.size() - done));
    if (!r) return store_error_reply(r.error());
    if (*r == 0) break;
    done += *r;
  }
  text.resize(static_cast<std::size_t>(done));
  double fps = (*m)->fps > 0 ? (*m)->fps : 30.0;
  auto frames = ws::frames_from_ndjson(text, fps);
  if (!frames)
    return error_reply(http::status::internal_server_error, "KEYPOINTS_INVALID",
                       frames.error().message);
  std::lock_guard lock(hub.mutex);
  // Entries of motions nobody streams any more go when a new one is added.
  std::erase_if(hub.cache, [](const auto& kv) { return kv.second.expired(); });
  hub.cache[sha] = *frames;
  return *frames;
}

// ---- Server ------------------------------------------------------------------------

core::Result<std::unique_ptr<Server>> Server::create(ServerOptions options) {
  std::unique_ptr<Server> s(new Server());
  s->impl_ = std::make_unique<Impl>();
  Impl& impl = *s->impl_;
  impl.options = std::move(options);
  std::error_code fec;
  std::filesystem::create_directories(impl.options.data_dir, fec);
  if (fec)
    return core::make_error(
        "IO_CREATE", "cannot create " + impl.options.data_dir.string() + ": " + fec.message());
  store::BlobStoreOptions bo;
  bo.max_bytes = impl.options.max_upload_bytes;
  auto blobs = store::BlobStore::open(resolved_blob_root(impl.options), bo);
  if (!blobs) return std::move(blobs).error();
  impl.blobs.emplace(std::move(*blobs));
  store::CatalogueOptions co;
  co.pg_schema = impl.options.db_schema;
  auto cat = store::Catalogue::open(resolved_db_url(impl.options), co);
  if (!cat) return std::move(cat).error();
  impl.catalogue = std::move(*cat);
  impl.queue = std::make_unique<store::JobQueue>(*impl.catalogue);
  return s;
}

Server::~Server() {
  stop();
}

std::uint16_t Server::port() const {
  return impl_ ? impl_->port.load() : 0;
}

core::Result<std::uint16_t> Server::start() {
  Impl& impl = *impl_;
  if (impl.started) return impl.port.load();
  beast::error_code ec;
  auto address = net::ip::make_address(impl.options.address, ec);
  if (ec)
    return core::make_error("SERVER_ADDRESS",
                            "'" + impl.options.address + "' is not an IP address: " + ec.message());
  tcp::endpoint endpoint(address, impl.options.port);
  impl.acceptor.emplace(impl.ioc);
  impl.acceptor->open(endpoint.protocol(), ec);
  if (!ec) impl.acceptor->set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) impl.acceptor->bind(endpoint, ec);
  if (!ec) impl.acceptor->listen(net::socket_base::max_listen_connections, ec);
  if (ec)
    return core::make_error("SERVER_LISTEN", "cannot listen on " + impl.options.address + ":" +
                                                 std::to_string(impl.options.port) + ": " +
                                                 ec.message());
  impl.port = impl.acceptor->local_endpoint().port();
  if (impl.options.job_workers > 0) {
    WorkerPoolOptions wo;
    wo.db_url = resolved_db_url(impl.options);
    wo.blob_root = resolved_blob_root(impl.options);
    wo.max_upload_bytes = impl.options.max_upload_bytes;
    wo.threads = impl.options.job_workers;
    wo.lease = impl.options.job_lease;
    wo.budgets = impl.options.job_budgets;
    wo.pg_schema = impl.options.db_schema;
    wo.runner = impl.options.job_runner;
    wo.name = "serve";
    if (!impl.options.quiet) wo.log = [&impl](std::string_view l) { impl.log(l); };
    auto pool = WorkerPool::start(std::move(wo));
    if (!pool) return std::move(pool).error();
    impl.workers = std::move(*pool);
  }
  impl.guard.emplace(net::make_work_guard(impl.ioc));
  impl.do_accept();
  unsigned n = impl.options.http_threads ? impl.options.http_threads : 1;
  for (unsigned i = 0; i < n; ++i) impl.threads.emplace_back([&impl] { impl.ioc.run(); });
  impl.started = true;
  return impl.port.load();
}

void Server::stop() {
  if (!impl_ || !impl_->started) return;
  Impl& impl = *impl_;
  if (impl.stopping.exchange(true)) return;
  // Running jobs see the cancel flag now, while connections close.
  if (impl.workers) impl.workers->request_stop();
  net::post(impl.ioc, [&impl] {
    beast::error_code ec;
    impl.acceptor->close(ec);
  });
  std::vector<std::shared_ptr<Session>> live;
  {
    std::lock_guard lock(impl.sessions_mutex);
    for (auto& [p, w] : impl.sessions)
      if (auto s = w.lock()) live.push_back(std::move(s));
  }
  for (auto& s : live) net::post(s->stream().get_executor(), [s] { s->shutdown(); });
  live.clear();
  ws::shutdown_all(impl.hub);
  impl.guard.reset();
  for (auto& t : impl.threads)
    if (t.joinable()) t.join();
  impl.threads.clear();
  if (impl.workers) impl.workers->stop();
}

}  // namespace charkit::server
