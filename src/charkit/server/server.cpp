// The HTTP server (server.h): Beast sessions on an Asio thread pool, one
// per connection (request reading, upload bodies read and handed to an
// UploadSink (upload_sink.cpp), WebSocket upgrades, blob replies), the accept loop, and the
// server's start and stop. The REST routes are in routes.cpp; what both share is in
// detail/server_impl.h.
#include "charkit/server/server.h"

#include "charkit/core/error_codes.h"
#include "charkit/server/detail/server_impl.h"
#include "charkit/server/detail/upload_sink.h"
#include "charkit/server/error_codes.h"

namespace charkit::server {

std::string resolved_db_url(const ServerOptions& o) {
  if (!o.db_url.empty()) return o.db_url;
  return "sqlite:" + (o.data_dir / "charkit.sqlite3").string();
}

std::filesystem::path resolved_blob_root(const ServerOptions& o) {
  return o.blob_root.empty() ? o.data_dir / "blobs" : o.blob_root;
}

// ---- one connection -----------------------------------------------------------

/// What Server::stop needs of a connection, plain or TLS.
class SessionBase {
 public:
  virtual ~SessionBase() = default;
  /// On the session's strand: close now (uploads in flight are discarded).
  virtual void shutdown() = 0;
  virtual net::any_io_executor executor() = 0;
};

/// One HTTP connection, plain or TLS (--tls-cert: the handshake comes first,
/// a close sends close_notify), through one AnyStream.
class Session final : public SessionBase, public std::enable_shared_from_this<Session> {
 public:
  // The read buffer holds what the parser has not consumed yet: a request
  // line and header, a chunk-size line, or a chunked body's whole trailer
  // section. Bounding it by the header limit bounds trailers the same way
  // (Beast's own header limit does not cover them).
  Session(Server::Impl& srv, AnyStream&& stream, std::shared_ptr<void> slot, std::string client)
      : srv_(srv),
        stream_(std::move(stream)),
        executor_(stream_.get_executor()),
        buffer_(srv.options.max_header_bytes),
        slot_(std::move(slot)),
        client_(std::move(client)) {}
  ~Session() override {
    std::lock_guard lock(srv_.sessions_mutex);
    srv_.sessions.erase(this);
  }

  void run() {
    {
      std::lock_guard lock(srv_.sessions_mutex);
      srv_.sessions[this] = this->weak_from_this();
    }
    net::dispatch(stream_.get_executor(), [self = this->shared_from_this()] { self->begin(); });
  }

  /// Called by Server::stop on the session's strand.
  void shutdown() override {
    if (handed_off_) return;  // the socket now belongs to a WebSocket session
    closed_ = true;
    if (!in_pool_) discard_upload();  // else the pool's completion discards it
    beast::error_code ec;
    lowest().socket().shutdown(tcp::socket::shutdown_both, ec);
    lowest().close();
  }
  net::any_io_executor executor() override { return executor_; }

 private:
  beast::tcp_stream& lowest() { return beast::get_lowest_layer(stream_); }

  void begin() {
    if (stream_.tls()) {
      lowest().expires_after(srv_.options.read_timeout);
      stream_.async_handshake(
          AnyStream::Done([self = this->shared_from_this()](beast::error_code ec) {
            if (ec) return self->close_now();
            self->read_header();
          }));
    } else {
      read_header();
    }
  }
  /// Runs `work` on the server's blocking pool — file, database and
  /// object-storage calls never run on an I/O thread — then `then(result)`
  /// back on this session's strand. Nothing else runs for the session in
  /// between (no read is pending), so `work` may use the session's members.
  /// The io_context counts the pending completion as work, so a stopping
  /// server waits for it.
  template <class Work, class Then>
  void offload(Work work, Then then) {
    in_pool_ = true;
    auto back = net::prefer(stream_.get_executor(), net::execution::outstanding_work.tracked);
    net::post(*srv_.blocking, [self = this->shared_from_this(), work = std::move(work),
                               then = std::move(then), back = std::move(back)]() mutable {
      auto result = work();
      net::post(back, [self = std::move(self), result = std::move(result),
                       then = std::move(then)]() mutable {
        self->in_pool_ = false;
        then(std::move(result));
      });
    });
  }

  void read_header() {
    if (srv_.stopping || closed_) return close();
    header_parser_.emplace();
    header_parser_->header_limit(srv_.options.max_header_bytes);
    // Back to the header limit after an upload widened it (never below what
    // the buffer holds: bytes of a pipelined request may wait there).
    buffer_.max_size(std::max<std::size_t>(srv_.options.max_header_bytes, buffer_.size()));
    if (buffer_.capacity() > srv_.options.max_header_bytes) buffer_.shrink_to_fit();
    header_parser_->body_limit(std::numeric_limits<std::uint64_t>::max());
    // One deadline for the whole request line and header: a client that
    // trickles header bytes, or holds the connection idle, is cut off, not
    // re-armed per read.
    lowest().expires_after(std::min(srv_.options.read_timeout, srv_.options.header_timeout));
    http::async_read_header(stream_, buffer_, *header_parser_,
                            [self = this->shared_from_this()](beast::error_code ec, std::size_t) {
                              self->on_header(ec);
                            });
  }

  void on_header(beast::error_code ec) {
    if (srv_.stopping || ec == http::error::end_of_stream || ec == net::error::eof) return close();
    start_ = std::chrono::steady_clock::now();
    if (ec == http::error::header_limit || ec == http::error::buffer_overflow)
      return send(
          error_reply(http::status::request_header_fields_too_large, codes::HEADER_TOO_LARGE,
                      "request line and header fields exceed " +
                          std::to_string(srv_.options.max_header_bytes) + " bytes"),
          true);
    if (ec) {
      if (ec == beast::error::timeout || ec == net::error::operation_aborted ||
          ec == net::error::connection_reset)
        return close();
      if (ec == http::error::bad_transfer_encoding)  // e.g. two Transfer-Encoding fields
        return send(error_reply(http::status::bad_request, codes::BAD_TRANSFER_ENCODING,
                                "Transfer-Encoding must be exactly 'chunked': " + ec.message()),
                    true);
      return send(error_reply(http::status::bad_request, codes::HTTP_BAD_REQUEST, ec.message()),
                  true);
    }
    auto& req = header_parser_->get();
    method_ = std::string(req.method_string());
    target_text_ = std::string(req.target());
    // RFC 9112 §6.3: a request whose Transfer-Encoding is anything but
    // exactly `chunked` has no reliable length (its body would be read as the
    // next request, which a proxy in front may frame differently): 400 and close.
    if (auto te = transfer_encoding_refusal(req)) return send(std::move(*te), true);
    auto target = parse_target(sv(req.target()));
    if (!target)
      return send(
          error_reply(http::status::bad_request, target.error().code, target.error().message),
          true);
    target_ = std::move(*target);
    // Who is talking (docs/server.md §Access control): the Host must name
    // this server (DNS rebinding), a browser's Origin must be this server or
    // an allowed CORS origin (cross-site forms and WebSockets).
    // RFC 9112 §3.2: a request with more than one Host field is answered
    // 400 (which one a proxy in front used is unknown).
    if (req.count(http::field::host) > 1)
      return send(error_reply(http::status::bad_request, codes::DUPLICATE_HOST,
                              "the request has more than one Host header field"),
                  true);
    const std::string_view host = sv(req[http::field::host]);
    if (!host_allowed(srv_.access, host))
      return send(error_reply(http::status::forbidden, codes::HOST_FORBIDDEN,
                              "the Host header does not name this server (add it with "
                              "--allowed-host)"),
                  true);
    const std::string_view origin = sv(req[http::field::origin]);
    const OriginCheck oc = check_origin(srv_.access, origin, host, srv_.tls);
    if (oc == OriginCheck::forbidden)
      return send(error_reply(http::status::forbidden, codes::ORIGIN_FORBIDDEN,
                              "requests from " + core::quote_excerpt(origin, 100) +
                                  " are not allowed (see --cors-origin)"),
                  true);
    cors_origin_ = oc == OriginCheck::cors ? std::string(origin) : std::string();
    if (req.method() == http::verb::options) return send(preflight_reply(), !req.keep_alive());
    route_ = match_route(method_, target_, srv_.console.has_value());
    authorize();
  }

  /// The answer to a CORS preflight (OPTIONS): what an allowed origin may send.
  StringResponse preflight_reply() const {
    StringResponse res{http::status::no_content, 11};
    if (!cors_origin_.empty()) {
      res.set(http::field::access_control_allow_methods, "GET, POST, DELETE, OPTIONS");
      res.set(http::field::access_control_allow_headers, "Authorization, Content-Type, Range");
      res.set(http::field::access_control_max_age, "600");
    }
    res.set(http::field::allow, "GET, POST, DELETE, OPTIONS");
    res.prepare_payload();
    return res;
  }

  /// Checks the request's token against the access its route needs, then
  /// route(). A cached decision answers at once; else the catalogue is asked
  /// on the blocking pool.
  void authorize() {
    token_id_.reset();
    const Access need = route_.access;
    if (need == Access::open || (need == Access::read && srv_.options.public_read) ||
        (need == Access::metrics && srv_.options.public_metrics))
      return route();
    const auto& req = header_parser_->get();
    std::string secret =
        request_secret(sv(req[http::field::authorization]), sv(req[http::field::cookie]));
    if (auto d = srv_.auth_cache.find(secret)) return decide(*d);
    offload([this, secret = std::move(secret)] { return srv_.lookup_auth(secret); },
            [this](core::Result<AuthCache::Decision> d) {
              if (closed_) return;
              if (!d) return send(store_error_reply(d.error()), true);
              decide(*d);
            });
  }

  void decide(const AuthCache::Decision& d) {
    token_id_ = d.scope ? d.token_id : std::nullopt;
    const bool required = d.tokens_exist || srv_.options.auth == AuthMode::required;
    if (!required) return route();
    if (!d.scope) {
      auto res = error_reply(http::status::unauthorized, codes::UNAUTHENTICATED,
                             "this server needs an API token: send 'Authorization: Bearer "
                             "TOKEN' or log in at /login");
      res.set(http::field::www_authenticate, "Bearer realm=\"charkit\"");
      return send(std::move(res), true);
    }
    const store::Scope need = route_.access == Access::admin   ? store::Scope::admin
                              : route_.access == Access::write ? store::Scope::write
                                                               : store::Scope::read;
    if (!store::scope_allows(*d.scope, need))
      return send(error_reply(http::status::forbidden, codes::FORBIDDEN,
                              "this needs a token with the '" +
                                  std::string(store::scope_name(need)) + "' scope; this one has '" +
                                  std::string(store::scope_name(*d.scope)) + "'"),
                  true);
    route();
  }

  /// The request is allowed: an upload streams into the store, anything
  /// else has its (small) body read and is answered.
  void route() {
    if (route_.kind == RouteKind::upload) return begin_upload(*route_.record_kind);
    if (header_parser_->content_length() &&
        *header_parser_->content_length() > srv_.options.max_request_body)
      return send(error_reply(http::status::payload_too_large, codes::BODY_TOO_LARGE,
                              "request bodies here are limited to " +
                                  std::to_string(srv_.options.max_request_body) + " bytes"),
                  true);
    body_parser_.emplace(std::move(*header_parser_));
    body_parser_->body_limit(srv_.options.max_request_body);
    lowest().expires_after(srv_.options.read_timeout);
    http::async_read(
        stream_, buffer_, *body_parser_,
        [self = this->shared_from_this()](beast::error_code e, std::size_t) { self->on_body(e); });
  }

  void on_body(beast::error_code ec) {
    if (ec == http::error::body_limit)
      return send(error_reply(http::status::payload_too_large, codes::BODY_TOO_LARGE,
                              "request body too large"),
                  true);
    if (auto refusal = framing_refusal(ec)) return send(std::move(*refusal), true);
    if (ec) return close();
    auto req = std::make_shared<http::request<http::string_body>>(body_parser_->release());
    srv_.metrics.request_bytes.fetch_add(req->body().size());
    if (route_.kind == RouteKind::websocket) return websocket_route(std::move(req));
    const bool keep = req->keep_alive();
    offload([this, req] { return srv_.handle_safely(*req, target_, route_); },
            [this, keep](Reply reply) {
              if (closed_) return;
              send_reply(std::move(reply), !keep);
            });
  }

  /// 400 for a Transfer-Encoding other than exactly one `chunked`.
  static std::optional<StringResponse> transfer_encoding_refusal(
      const http::request<http::empty_body>& req) {
    const auto n = req.count(http::field::transfer_encoding);
    if (n == 0) return std::nullopt;
    std::string_view value = n == 1 ? sv(req[http::field::transfer_encoding]) : std::string_view();
    while (!value.empty() && (value.front() == ' ' || value.front() == '\t'))
      value.remove_prefix(1);
    while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
    if (core::ascii_iequals(value, "chunked")) return std::nullopt;
    return error_reply(http::status::bad_request, codes::BAD_TRANSFER_ENCODING,
                       "Transfer-Encoding must be exactly 'chunked' (no other codings are "
                       "accepted); the connection is closed");
  }

  /// The answer to a read that failed on the message's framing: 431 when the
  /// header fields or a chunked body's trailer exceed the header limit, 400
  /// for malformed chunk framing; nullopt for errors of the connection itself
  /// (the client left, a timeout, shutdown), which get no answer.
  std::optional<StringResponse> framing_refusal(beast::error_code ec) const {
    if (!ec) return std::nullopt;
    if (ec == http::error::buffer_overflow || ec == http::error::header_limit)
      return error_reply(http::status::request_header_fields_too_large, codes::HEADER_TOO_LARGE,
                         "header fields or chunked trailer fields exceed " +
                             std::to_string(srv_.options.max_header_bytes) + " bytes");
    if (ec.category() != make_error_code(http::error::bad_chunk).category()) return std::nullopt;
    if (ec == http::error::end_of_stream || ec == http::error::partial_message ||
        ec == http::error::need_more || ec == http::error::need_buffer)
      return std::nullopt;
    return error_reply(http::status::bad_request, codes::HTTP_BAD_FRAMING,
                       "malformed message framing: " + ec.message());
  }

  // ---- WebSocket routes: checked here, then the socket moves to a ws::WsSession ----
  void websocket_route(std::shared_ptr<http::request<http::string_body>> req) {
    if (req->method() != http::verb::get) {
      auto res = error_reply(http::status::method_not_allowed, codes::METHOD_NOT_ALLOWED,
                             "allowed here: GET (a WebSocket upgrade)");
      res.set(http::field::allow, "GET");
      return send(std::move(res), true);
    }
    if (!beast::iequals((*req)[http::field::upgrade], "websocket")) {
      auto res = error_reply(http::status::upgrade_required, codes::UPGRADE_REQUIRED,
                             "this route is a WebSocket: send Upgrade: websocket");
      res.set(http::field::upgrade, "websocket");
      res.set(http::field::connection, "Upgrade");
      return send(std::move(res), true);
    }
    const auto& seg = target_.segments;
    if (route_.id == RouteId::package_drivers) {
      auto id = parse_id(seg[2]);
      if (!id)
        return send(error_reply(http::status::bad_request, codes::BAD_ID,
                                core::quote_excerpt(seg[2]) + " is not a record id"),
                    true);
      using Opened = std::variant<std::shared_ptr<DriverPlayground>, StringResponse>;
      offload(
          [this, id = *id, params = target_.params]() -> Opened {
            try {
              return srv_.open_drivers(id, params);
            } catch (const std::exception& e) {
              return srv_.internal_error(e);
            }
          },
          [this, req](Opened opened) {
            if (closed_) return;
            if (auto* refusal = std::get_if<StringResponse>(&opened))
              return send(std::move(*refusal), true);
            handed_off_ = true;
            ws::start_drivers(srv_.hub, std::move(stream_), std::move(*req),
                              std::get<0>(std::move(opened)), slot_);
          });
      return;
    }
    if (route_.id == RouteId::motion_stream) {
      auto id = parse_id(seg[2]);
      if (!id)
        return send(error_reply(http::status::bad_request, codes::BAD_ID,
                                core::quote_excerpt(seg[2]) + " is not a record id"),
                    true);
      using Opened = std::variant<std::shared_ptr<const ws::FrameSource>, StringResponse>;
      offload(
          [this, id = *id]() -> Opened {
            try {
              return srv_.open_stream(id);
            } catch (const std::exception& e) {
              return srv_.internal_error(e);
            }
          },
          [this, req, id = *id](Opened opened) {
            if (closed_) return;
            if (auto* refusal = std::get_if<StringResponse>(&opened))
              return send(std::move(*refusal), true);
            handed_off_ = true;
            ws::start_motion_stream(srv_.hub, std::move(stream_), std::move(*req),
                                    std::get<0>(std::move(opened)), id, slot_);
          });
      return;
    }
    if (!ws::valid_channel_name(seg[2]))
      return send(error_reply(http::status::bad_request, codes::BAD_CHANNEL,
                              "a channel name is 1.." + std::to_string(ws::kMaxChannelName) +
                                  " characters of A-Z a-z 0-9 _ -"),
                  true);
    const auto role = live_role(target_.params);
    if (!role)
      return send(error_reply(http::status::bad_request, codes::BAD_ROLE,
                              "a live connection needs ?role=publish or ?role=view"),
                  true);
    handed_off_ = true;
    // Per-owner channel limits count a token's connections together (its
    // sessions included); without a token, the client's address.
    std::string owner = token_id_ ? "token:" + std::to_string(*token_id_) : "client:" + client_;
    ws::start_live(srv_.hub, std::move(stream_), std::move(*req), seg[2],
                   *role == LiveRoleRequest::publish ? ws::LiveRole::publish : ws::LiveRole::view,
                   std::move(owner), slot_);
  }

  // ---- uploads: the socket side; the body goes to an UploadSink on the pool ----

  void begin_upload(store::Kind kind) {
    std::optional<std::uint64_t> length;
    if (auto declared = header_parser_->content_length()) length = *declared;
    auto opened = UploadSink::open(srv_, kind, target_, header_parser_->get(), length,
                                   header_parser_->chunked());
    if (auto* refusal = std::get_if<UploadSink::Refusal>(&opened))
      return send(std::move(*refusal), true);
    upload_ = std::get<std::unique_ptr<UploadSink>>(std::move(opened));
    if (!upload_->starts_with_body()) return start_upload_body();
    offload([this] { return upload_->begin(); },
            [this](std::optional<UploadSink::Refusal> refusal) {
              if (refusal) {
                upload_.reset();
                return send(std::move(*refusal), true);
              }
              if (closed_) return discard_upload();
              start_upload_body();
            });
  }

  void start_upload_body() {
    upload_gauge_.emplace(srv_.metrics.uploads_in_flight);
    upload_started_ = std::chrono::steady_clock::now();
    upload_bytes_ = 0;
    chunk_fill_ = 0;
    if (!io_buf_) io_buf_ = std::make_unique<std::array<std::uint8_t, kIoChunk>>();
    bool expect_continue =
        beast::iequals(header_parser_->get()[http::field::expect], "100-continue");
    upload_parser_.emplace(std::move(*header_parser_));
    upload_parser_->body_limit(upload_->body_max());
    // Beast reads at most the buffer's free capacity (and no less than 512
    // bytes) per read: without room made here an upload arrives 512 bytes a
    // read. A body of known length has no trailer section for the buffer to
    // bound, so it may take 64 KiB (Beast's most per read); a chunked body
    // keeps the header limit, which bounds its trailer.
    if (!upload_parser_->chunked())
      buffer_.max_size(std::max<std::size_t>(buffer_.max_size(), kSocketRead));
    buffer_.reserve(std::min<std::size_t>(buffer_.max_size(), kSocketRead));
    if (expect_continue) {
      auto res = std::make_shared<http::response<http::empty_body>>(http::status::continue_, 11);
      http::async_write(stream_, *res,
                        [self = this->shared_from_this(), res](beast::error_code ec, std::size_t) {
                          if (ec) return self->close();
                          self->read_chunk();
                        });
      return;
    }
    read_chunk();
  }

  void read_chunk() {
    if (srv_.stopping || closed_) return close();
    if (upload_parser_->is_done()) return commit_upload();
    auto& body = upload_parser_->get().body();
    body.data = io_buf_->data() + chunk_fill_;
    body.size = io_buf_->size() - chunk_fill_;
    body.more = true;
    // Each read must arrive within the read timeout, and the body as a
    // whole at the minimum rate after a grace period: a client trickling
    // a byte every few seconds is cut off (docs/server.md §Limits).
    const auto now = std::chrono::steady_clock::now();
    auto deadline = now + srv_.options.read_timeout;
    if (srv_.options.min_upload_rate > 0) {
      const auto allowed =
          srv_.options.read_timeout +
          std::chrono::milliseconds(upload_bytes_ * 1000 / srv_.options.min_upload_rate);
      deadline = std::min(deadline, upload_started_ + allowed);
    }
    lowest().expires_at(deadline);
    // Each read takes what the socket has (at most kSocketRead; in a chunked
    // body, the header limit); on_chunk gathers reads into io_buf_ and hands
    // a full buffer (or the body's end) to the pool in one step.
    http::async_read_some(stream_, buffer_, *upload_parser_,
                          [self = this->shared_from_this()](beast::error_code ec, std::size_t) {
                            self->on_chunk(ec);
                          });
  }

  void on_chunk(beast::error_code ec) {
    if (ec == http::error::need_buffer) ec = {};
    if (ec == http::error::body_limit) {
      auto refusal = upload_->too_large_reply();
      discard_upload();
      return send(std::move(refusal), true);
    }
    if (auto refusal = framing_refusal(ec)) {  // bad chunk framing, trailer too large
      discard_upload();
      srv_.log(method_ + " " + target_text_ + " refused: " + ec.message());
      return send(std::move(*refusal), true);
    }
    if (ec) {  // the client went away, a timeout, or shutdown: nothing is kept
      discard_upload();
      srv_.log(method_ + " " + target_text_ + " aborted: " + ec.message());
      return close();
    }
    const std::size_t got = io_buf_->size() - chunk_fill_ - upload_parser_->get().body().size;
    srv_.metrics.request_bytes.fetch_add(got);
    upload_bytes_ += got;
    chunk_fill_ += got;
    // Hops to the pool cost far more than socket reads: gather reads until
    // the buffer is full or the body has ended (read_chunk then commits).
    // A multipart body goes on at once until its file part has begun, so
    // that the part's name and extension are judged (and a refusal sent)
    // as soon as they arrive.
    const bool gather = upload_->starts_with_body() || upload_->file_begun();
    if (chunk_fill_ == 0 || (gather && chunk_fill_ < io_buf_->size() && !upload_parser_->is_done()))
      return read_chunk();
    const std::size_t n = chunk_fill_;
    chunk_fill_ = 0;
    // The bytes go to the temporary file (and through the multipart reader) on the pool.
    offload([this, n] { return upload_->write(core::Bytes(io_buf_->data(), n)); },
            [this](std::optional<UploadSink::Refusal> refusal) {
              if (closed_) return discard_upload();
              if (refusal) {
                upload_.reset();
                return send(std::move(*refusal), true);
              }
              read_chunk();
            });
  }

  void commit_upload() {
    const bool keep = upload_parser_->get().keep_alive();
    offload([this, keep] { return upload_->commit(keep); },
            [this](std::pair<StringResponse, bool> outcome) {
              upload_.reset();
              upload_gauge_.reset();
              if (closed_) return;
              send(std::move(outcome.first), outcome.second);
            });
  }

  /// Drops the upload in progress; its temporary file is removed on the pool.
  void discard_upload() {
    upload_gauge_.reset();
    if (!upload_) return;
    net::post(*srv_.blocking, [u = std::move(upload_)] { u->abort(); });
  }

  // ---- responses ----
  void send_reply(Reply&& reply, bool close_after) {
    if (auto* s = std::get_if<StringResponse>(&reply)) return send(std::move(*s), close_after);
    send_blob(std::make_shared<BlobReply>(std::get<BlobReply>(std::move(reply))), close_after);
  }

  template <class Body>
  void send(http::response<Body>&& res, bool close_after) {
    res.set(http::field::server, "charkit");
    res.keep_alive(!close_after);
    add_cors(res);
    auto sp = std::make_shared<http::response<Body>>(std::move(res));
    unsigned status = sp->result_int();
    std::uint64_t bytes = sp->payload_size() ? *sp->payload_size() : 0;
    lowest().expires_after(std::chrono::seconds(300));
    http::async_write(stream_, *sp,
                      [self = this->shared_from_this(), sp, close_after, status, bytes](
                          beast::error_code ec, std::size_t) {
                        self->log_request(status, bytes, ec);
                        if (ec || close_after) return self->close();
                        self->read_header();
                      });
  }

  /// A stored blob's bytes: the header, then the body read on the pool
  /// (kIoChunk at a time) and written as it comes.
  void send_blob(std::shared_ptr<BlobReply> blob, bool close_after) {
    auto& head = blob->head;
    head.set(http::field::server, "charkit");
    add_cors(head);
    head.keep_alive(!close_after);
    head.content_length(blob->length);
    lowest().expires_after(std::chrono::seconds(300));
    http::async_write(
        stream_, head,
        [self = this->shared_from_this(), blob, close_after](beast::error_code ec, std::size_t) {
          if (ec) {
            self->log_request(blob->head.result_int(), 0, ec);
            return self->close();
          }
          self->pump_blob(blob, 0, close_after);
        });
  }

  void pump_blob(std::shared_ptr<BlobReply> blob, std::uint64_t sent, bool close_after) {
    const unsigned status = blob->head.result_int();
    if (sent == blob->length) {
      log_request(status, sent, {});
      if (close_after) return close();
      return read_header();
    }
    if (!io_buf_) io_buf_ = std::make_unique<std::array<std::uint8_t, kIoChunk>>();
    const auto want =
        static_cast<std::size_t>(std::min<std::uint64_t>(kIoChunk, blob->length - sent));
    offload(
        [this, blob, sent, want] {
          return blob->reader->read_at(blob->offset + sent,
                                       std::span<std::uint8_t>(io_buf_->data(), want));
        },
        [this, blob, sent, close_after, status](core::Result<std::size_t> got) {
          if (closed_) return;
          if (!got || *got == 0) {  // the body was promised: all we can do is cut it short
            srv_.log(method_ + " " + target_text_ + " body read failed: " +
                     (got ? std::string("unexpected end") : got.error().to_string()));
            log_request(status, sent, make_error_code(beast::errc::io_error));
            return close();
          }
          lowest().expires_after(std::chrono::seconds(300));
          net::async_write(stream_, net::buffer(io_buf_->data(), *got),
                           [self = this->shared_from_this(), blob, sent, close_after, status](
                               beast::error_code ec, std::size_t n) {
                             if (ec) {
                               self->log_request(status, sent + n, ec);
                               return self->close();
                             }
                             self->pump_blob(blob, sent + n, close_after);
                           });
        });
  }

  /// An allowed cross-origin request's answer says so (and that it varies by Origin).
  template <class Fields>
  void add_cors(Fields& res) const {
    if (cors_origin_.empty()) return;
    res.set(http::field::access_control_allow_origin, cors_origin_);
    res.set(http::field::access_control_expose_headers, "Location, Content-Range, ETag");
    res.set(http::field::vary, "Origin");
  }

  void log_request(unsigned status, std::uint64_t bytes, beast::error_code ec) {
    srv_.metrics.count_request(method_, status);
    srv_.metrics.response_bytes.fetch_add(bytes);
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
    if (handed_off_ || close_started_) return;
    closed_ = true;
    close_started_ = true;
    if (!in_pool_) discard_upload();
    if (stream_.tls()) {
      // close_notify first (2 s at most), so the client sees a clean end.
      lowest().expires_after(std::chrono::seconds(2));
      stream_.async_shutdown(AnyStream::Done(
          [self = this->shared_from_this()](beast::error_code) { self->close_now(); }));
    } else {
      close_now();
    }
  }

  void close_now() {
    closed_ = true;
    if (!in_pool_) discard_upload();
    beast::error_code ec;
    lowest().socket().shutdown(tcp::socket::shutdown_send, ec);
    lowest().close();
  }

  /// Bytes an upload gathers before one hop to the pool, and a blob's bytes
  /// per read on the pool.
  static constexpr std::size_t kIoChunk = 256 * 1024;
  /// The most an upload's body takes from the socket per read.
  static constexpr std::size_t kSocketRead = 64 * 1024;

  Server::Impl& srv_;
  AnyStream stream_;
  // The connection's executor, kept apart from stream_: once the socket is
  // handed to a WebSocket session stream_ is empty, and Server::stop still
  // posts shutdown() here for every session it finds alive.
  net::any_io_executor executor_;
  beast::flat_buffer buffer_;
  std::shared_ptr<void> slot_;  ///< the server's connection count; moves to a WebSocket session
  std::string client_;          ///< connection_key() of the peer: per-client limits
  std::optional<std::int64_t> token_id_;  ///< the request's token, when it had a valid one
  std::optional<http::request_parser<http::empty_body>> header_parser_;
  std::optional<http::request_parser<http::string_body>> body_parser_;
  std::optional<http::request_parser<http::buffer_body>> upload_parser_;
  std::unique_ptr<UploadSink> upload_;  ///< the request's upload, from its head to its commit
  std::optional<GaugeToken> upload_gauge_;
  bool handed_off_ = false;
  bool in_pool_ = false;  ///< offloaded work is running: the pool owns the session's state
  bool closed_ = false;   ///< the socket was closed (shutdown, error): completions stop
  bool close_started_ = false;
  std::uint64_t upload_bytes_ = 0;
  std::chrono::steady_clock::time_point upload_started_;
  /// An upload's gathered body bytes, or a blob's bytes on their way out;
  /// allocated on the first upload or download of the connection.
  std::unique_ptr<std::array<std::uint8_t, kIoChunk>> io_buf_;
  std::size_t chunk_fill_ = 0;  ///< bytes of io_buf_ gathered and not yet handed on
  Target target_;
  std::string method_;
  std::string target_text_;
  std::string cors_origin_;  ///< the request's Origin when it is an allowed CORS origin
  Route route_;              ///< the request's route (detail/route_table.h)
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

namespace {

/// A 503 answer sent whole before any request is read, then the connection closed.
std::string fixed_503(std::string_view code, std::string_view message) {
  const std::string body = "{\"error\":\"" + std::string(code) + "\",\"message\":\"" +
                           std::string(message) + "\",\"detail\":null}\n";
  return "HTTP/1.1 503 Service Unavailable\r\nServer: charkit\r\nContent-Type: "
         "application/json\r\nRetry-After: 1\r\nConnection: close\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + body;
}

}  // namespace

void Server::Impl::do_accept() {
  acceptor->async_accept(net::make_strand(ioc), [this](beast::error_code ec, tcp::socket socket) {
    if (stopping) return;
    if (ec) {
      // Out of file descriptors (or kernel memory): accepting again at once
      // fails again at once and spins a core. Back off, 10 ms doubling to 1 s,
      // until a connection closes.
      // (errno values: Asio reports accept errors in the system category.)
      const int err = ec.value();
      if (err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM) {
        metrics.accept_backoffs.fetch_add(1);
        if (accept_backoff == std::chrono::milliseconds(10))
          log("accept: " + ec.message() + "; backing off");
        accept_timer->expires_after(accept_backoff);
        accept_backoff = std::min(accept_backoff * 2, std::chrono::milliseconds(1000));
        accept_timer->async_wait([this](beast::error_code e) {
          if (!e && !stopping) do_accept();
        });
        return;
      }
      return do_accept();
    }
    accept_backoff = std::chrono::milliseconds(10);
    // Over a cap: a fixed 503 and close, without reading the request.
    auto refuse = [this, &socket](const std::string& reply) {
      metrics.connections_refused.fetch_add(1);
      auto s = std::make_shared<tcp::socket>(std::move(socket));
      net::async_write(*s, net::buffer(reply), [s](beast::error_code, std::size_t) {
        beast::error_code ignored;
        s->shutdown(tcp::socket::shutdown_both, ignored);
        s->close(ignored);
      });
    };
    static const std::string k503 =
        fixed_503(codes::TOO_MANY_CONNECTIONS, "the server is at its connection limit");
    static const std::string k503_client =
        fixed_503(codes::TOO_MANY_CLIENT_CONNECTIONS,
                  "this client holds as many connections as one client may; close some first");
    if (open_connections.load() >= options.max_connections) {
      refuse(k503);
      return do_accept();
    }
    beast::error_code peer_ec;
    const auto peer = socket.remote_endpoint(peer_ec);
    if (peer_ec) {  // the client left already
      socket.close(peer_ec);
      return do_accept();
    }
    std::string client = connection_key(peer.address());
    auto slot = connection_slot(client);
    if (!slot) {
      refuse(k503_client);
      return do_accept();
    }
    // Keypoint frames are small writes at a fixed rate: without TCP_NODELAY,
    // Nagle's algorithm holds a frame until the previous one is ACKed, and a
    // client's delayed ACK (40 ms on Linux) shows as more than a frame of drift.
    beast::error_code ignored;
    socket.set_option(tcp::no_delay(true), ignored);
    beast::tcp_stream connection(std::move(socket));
    std::make_shared<Session>(
        *this,
        ssl_ctx ? AnyStream(std::move(connection), *ssl_ctx) : AnyStream(std::move(connection)),
        std::move(slot), std::move(client))
        ->run();
    do_accept();
  });
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
        core::codes::IO_CREATE,
        "cannot create " + impl.options.data_dir.string() + ": " + fec.message());
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
  if (!impl.options.console_dir.empty()) {
    auto console = load_console(impl.options.console_dir);
    if (!console) return std::move(console).error();
    impl.console.emplace(std::move(*console));
  }
  return s;
}

Server::~Server() {
  stop();
}

std::vector<Server::Warning> Server::warnings() const {
  return impl_ ? impl_->start_warnings : std::vector<Warning>{};
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
    return core::make_error(codes::SERVER_ADDRESS,
                            "'" + impl.options.address + "' is not an IP address: " + ec.message());
  // Open to anyone who can connect: only on loopback, unless told.
  bool open_network = false;
  if (!address.is_loopback() && impl.options.auth != AuthMode::required) {
    auto n = store::TokenStore(*impl.catalogue).count();
    if (!n) return std::move(n).error();
    open_network = *n == 0;
    if (open_network && !impl.options.insecure_open)
      return core::make_error(
          codes::SERVER_INSECURE,
          "refusing to listen on " + impl.options.address +
              " (not loopback) with no API token: anyone who can connect could upload and "
              "delete. Create one with `charkit token create --scope admin` (same --data/--db), "
              "or pass --insecure-open");
  }
  tcp::endpoint endpoint(address, impl.options.port);
  impl.acceptor.emplace(impl.accept_strand);
  impl.acceptor->open(endpoint.protocol(), ec);
  if (!ec) impl.acceptor->set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) impl.acceptor->bind(endpoint, ec);
  if (!ec) impl.acceptor->listen(net::socket_base::max_listen_connections, ec);
  if (ec)
    return core::make_error(codes::SERVER_LISTEN, "cannot listen on " + impl.options.address + ":" +
                                                      std::to_string(impl.options.port) + ": " +
                                                      ec.message());
  impl.port = impl.acceptor->local_endpoint().port();
  impl.tls = !impl.options.tls_cert.empty();
  if (impl.tls) {
    // TLS 1.2 and 1.3 only; the chain and key are PEM files.
    impl.ssl_ctx.emplace(net::ssl::context::tls_server);
    impl.ssl_ctx->set_options(net::ssl::context::default_workarounds | net::ssl::context::no_sslv2 |
                              net::ssl::context::no_sslv3 | net::ssl::context::no_tlsv1 |
                              net::ssl::context::no_tlsv1_1 | net::ssl::context::single_dh_use);
    impl.ssl_ctx->use_certificate_chain_file(impl.options.tls_cert.string(), ec);
    if (!ec)
      impl.ssl_ctx->use_private_key_file(impl.options.tls_key.string(), net::ssl::context::pem, ec);
    if (ec)
      return core::make_error(codes::SERVER_TLS, "cannot use " + impl.options.tls_cert.string() +
                                                     " / " + impl.options.tls_key.string() + ": " +
                                                     ec.message());
  }
  impl.access.hosts = default_allowed_hosts(impl.options.address, impl.port);
  if (!impl.options.allowed_hosts.empty()) {
    // A wildcard address accepts any Host until names are given.
    if (impl.access.hosts.empty())
      impl.access.hosts = default_allowed_hosts("127.0.0.1", impl.port);
    for (const auto& h : impl.options.allowed_hosts) {
      std::string lower = h;
      for (char& c : lower) c = core::ascii_lower(c);
      impl.access.hosts.push_back(std::move(lower));
    }
  }
  impl.access.cors_origins = impl.options.cors_origins;
  impl.start_warnings.clear();
  if (open_network)
    impl.start_warnings.push_back(
        {codes::SERVER_OPEN_NETWORK,
         "listening on " + impl.options.address +
             " with no API token (--insecure-open): anyone who can reach this address may upload "
             "and delete" +
             (impl.access.hosts.empty()
                  ? std::string(", and with no Host allow-list any web page a user of this "
                                "network visits can reach the server through DNS rebinding "
                                "(give the names it is reached by with --allowed-host)")
                  : std::string()) +
             ". Create a token with `charkit token create --scope admin` to close it"});
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
  impl.blocking.emplace(impl.options.blocking_threads ? impl.options.blocking_threads : 1);
  impl.hub.blocking = impl.blocking->get_executor();
  impl.accept_timer.emplace(impl.accept_strand);
  impl.guard.emplace(net::make_work_guard(impl.ioc));
  impl.do_accept();
  unsigned n = impl.options.http_threads ? impl.options.http_threads : 1;
  for (unsigned i = 0; i < n; ++i) impl.threads.emplace_back([&impl] { impl.run_io(); });
  impl.started = true;
  return impl.port.load();
}

void Server::stop() {
  if (!impl_ || !impl_->started) return;
  Impl& impl = *impl_;
  if (impl.stopping.exchange(true)) return;
  // Running jobs see the cancel flag now, while connections close.
  if (impl.workers) impl.workers->request_stop();
  net::post(impl.accept_strand, [&impl] {
    beast::error_code ec;
    impl.acceptor->close(ec);
    impl.accept_timer->cancel();
  });
  std::vector<std::shared_ptr<SessionBase>> live;
  {
    std::lock_guard lock(impl.sessions_mutex);
    for (auto& [p, w] : impl.sessions)
      if (auto s = w.lock()) live.push_back(std::move(s));
  }
  for (auto& s : live) net::post(s->executor(), [s] { s->shutdown(); });
  live.clear();
  ws::shutdown_all(impl.hub);
  impl.guard.reset();
  // The I/O threads return once every session has ended, including those
  // waiting on the blocking pool (their completions count as work); what is
  // left on the pool then (removing discarded uploads) runs to its end.
  for (auto& t : impl.threads)
    if (t.joinable()) t.join();
  impl.threads.clear();
  if (impl.blocking) impl.blocking->join();
  if (impl.workers) impl.workers->stop();
}

}  // namespace charkit::server
