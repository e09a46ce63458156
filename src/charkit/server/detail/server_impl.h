// Internal to the server module: what the connection code (server.cpp)
// and the REST routes (routes.cpp) share: the Beast/Asio aliases, the
// reply helpers, and Server::Impl, the running server's state.
#pragma once

#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include <boost/asio.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "charkit/bem/load.h"
#include "charkit/core/ascii.h"
#include "charkit/core/json.h"
#include "charkit/core/json_text.h"
#include "charkit/core/mapped_file.h"
#include "charkit/core/utf8.h"
#include "charkit/server/detail/auth.h"
#include "charkit/server/detail/console.h"
#include "charkit/server/detail/http_glue.h"
#include "charkit/server/detail/metrics.h"
#include "charkit/server/detail/multipart.h"
#include "charkit/server/detail/page.h"
#include "charkit/server/detail/route_table.h"
#include "charkit/server/detail/ws.h"
#include "charkit/server/server.h"
#include "charkit/server/worker.h"
#include "charkit/store/blob_store.h"
#include "charkit/store/catalogue.h"
#include "charkit/store/content_lock.h"
#include "charkit/store/error_codes.h"
#include "charkit/store/jobs.h"
#include "charkit/store/tokens.h"

namespace charkit::server {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using core::Json;

inline std::string_view sv(beast::string_view s) {
  return {s.data(), s.size()};
}
inline beast::string_view bsv(std::string_view s) {
  return {s.data(), s.size()};
}

using StringResponse = http::response<http::string_body>;
/// A stored blob (or a byte range of it) to send: the header, then the body
/// read from `reader` on the blocking pool (Session::send_blob).
struct BlobReply {
  http::response<http::empty_body> head;
  std::shared_ptr<store::BlobReader> reader;
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
};
using Reply = std::variant<StringResponse, BlobReply>;

inline StringResponse json_reply(http::status status, const Json& body) {
  StringResponse res{status, 11};
  res.set(http::field::content_type, "application/json");
  res.set(http::field::cache_control, "no-store");
  res.body() = core::dump_json(body) + "\n";
  res.prepare_payload();
  return res;
}

/// An error answer: a declared code (error_codes.h), or the code of an error
/// a call returned; never a literal.
inline StringResponse error_reply(http::status status, const std::string& code,
                                  std::string_view message, Json detail = nullptr) {
  return json_reply(status, Json{{"error", code}, {"message", message}, {"detail", detail}});
}
StringResponse error_reply(http::status status, const char* code, std::string_view message,
                           Json detail = nullptr) = delete;

/// The HTTP status of a store/catalogue error.
inline http::status status_of(const core::Error& e) {
  if (e.code == store::codes::STORE_TOO_LARGE) return http::status::payload_too_large;
  if (e.code == store::codes::STORE_KIND_EXTENSION) return http::status::unprocessable_entity;
  if (e.code == store::codes::STORE_NOT_FOUND) return http::status::not_found;
  if (e.code == store::codes::STORE_BUSY) return http::status::service_unavailable;
  return http::status::internal_server_error;
}

inline StringResponse store_error_reply(const core::Error& e) {
  Json detail = nullptr;
  if (!e.location.empty()) detail = Json{{"location", e.location.to_string()}};
  return error_reply(status_of(e), e.code, e.message, detail);
}

inline std::string_view content_type_of(std::string_view ext) {
  if (ext == "ndjson") return "application/x-ndjson";
  if (ext == "json") return "application/json";
  if (ext == "gltf") return "model/gltf+json";
  if (ext == "glb" || ext == "vrm") return "model/gltf-binary";
  if (ext == "zip") return "application/zip";
  if (ext == "bvh") return "text/plain; charset=utf-8";
  return "application/octet-stream";
}

class SessionBase;

class ExportCache;       // package_views.cpp
class DriverPlayground;  // detail/drivers_playground.h

/// A stored package opened for a view: its local file (an S3 object's
/// downloaded copy), mapped, and when asked its validation and model.
struct OpenedPackage {
  std::optional<store::LocalBlob> local;
  core::MappedFile file;
  bem::LoadedPackage loaded;
};

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
  std::map<SessionBase*, std::weak_ptr<SessionBase>> sessions;
  std::mutex log_mutex;

  net::io_context ioc;
  std::optional<net::executor_work_guard<net::io_context::executor_type>> guard;
  /// The acceptor, its back-off timer and stop()'s close run on this strand:
  /// an accept completion re-arms the acceptor while stop() closes it, and
  /// the two must not touch the acceptor at once with several I/O threads.
  net::strand<net::io_context::executor_type> accept_strand{net::make_strand(ioc)};
  std::optional<tcp::acceptor> acceptor;
  std::optional<net::steady_timer> accept_timer;
  std::chrono::milliseconds accept_backoff{10};
  /// Database, file and object-storage work of the HTTP and WebSocket
  /// sessions: never on the I/O threads, so a slow disk or query cannot
  /// stall other connections (docs/server.md §Threads).
  std::optional<net::thread_pool> blocking;
  /// Open client connections (HTTP sessions and WebSocket sessions).
  std::atomic<std::size_t> open_connections{0};
  std::optional<ConsoleFiles> console;  ///< the web console (options.console_dir), read by create()
  /// GLB exports of package selections (package_views.cpp), made on first use.
  std::shared_ptr<ExportCache> export_cache_;
  std::mutex export_cache_mutex;
  ExportCache& export_cache();
  AccessPolicy access;  ///< Host and Origin allow-lists (start())
  AuthCache auth_cache;
  bool tls = false;
  std::optional<net::ssl::context> ssl_ctx;  ///< set with --tls-cert

  /// The token decision for a secret from the catalogue (blocking: on the pool).
  core::Result<AuthCache::Decision> lookup_auth(const std::string& secret) {
    store::TokenStore tokens(*catalogue);
    return auth_cache.lookup(tokens, secret);
  }

  /// Open connections per client (connection_key()), for the per-client cap.
  std::mutex clients_mutex;
  std::map<std::string, std::size_t> client_connections;

  /// Who a connection counts against: an IPv4 address, or the /64 prefix of
  /// an IPv6 one (one host usually holds a whole /64); v4-mapped IPv6 as IPv4.
  static std::string connection_key(const net::ip::address& a) {
    if (a.is_v6()) {
      const auto v6 = a.to_v6();
      if (v6.is_v4_mapped()) return net::ip::make_address_v4(net::ip::v4_mapped, v6).to_string();
      auto bytes = v6.to_bytes();
      for (std::size_t i = 8; i < bytes.size(); ++i) bytes[i] = 0;
      return net::ip::address_v6(bytes).to_string() + "/64";
    }
    return a.to_string();
  }

  /// A token held for a connection's life: counts it in open_connections
  /// and against its client. nullptr when the client already holds
  /// options.max_connections_per_client connections.
  std::shared_ptr<void> connection_slot(const std::string& client) {
    {
      std::lock_guard lock(clients_mutex);
      std::size_t& n = client_connections[client];
      if (options.max_connections_per_client && n >= options.max_connections_per_client)
        return nullptr;
      ++n;
    }
    open_connections.fetch_add(1);
    metrics.connections.fetch_add(1);
    // A non-null token (its value is never used) so that "no slot" can be nullptr.
    return std::shared_ptr<void>(reinterpret_cast<void*>(1), [this, client](void*) {
      {
        std::lock_guard lock(clients_mutex);
        auto it = client_connections.find(client);
        if (it != client_connections.end() && --it->second == 0) client_connections.erase(it);
      }
      open_connections.fetch_sub(1);
      metrics.connections.fetch_sub(1);
    });
  }
  std::vector<Server::Warning> start_warnings;  ///< start()'s (Server::warnings)
  std::vector<std::thread> threads;
  std::atomic<bool> stopping{false};
  std::atomic<std::uint16_t> port{0};
  bool started = false;

  /// One log line; request targets and messages in it may quote client
  /// bytes, so it is made valid UTF-8 without control characters first.
  void log(std::string_view raw) {
    if (options.quiet) return;
    const std::string line = core::printable(raw);
    if (options.log) {
      options.log(line);
      return;
    }
    std::lock_guard lock(log_mutex);
    std::fprintf(stderr, "%s\n", line.c_str());
  }

  void do_accept();
  /// An HTTP thread: runs the io_context; an exception that escapes a
  /// completion handler is logged and the thread goes on serving.
  void run_io() {
    for (;;) {
      try {
        ioc.run();
        return;
      } catch (const std::exception& e) {
        metrics.handler_exceptions.fetch_add(1);
        log(std::string("internal error in an I/O handler: ") + e.what());
      } catch (...) {
        metrics.handler_exceptions.fetch_add(1);
        log("internal error in an I/O handler (unknown exception)");
      }
    }
  }

  // ---- routes (run on an HTTP thread, synchronous store calls) ----
  Json asset_json(std::int64_t asset_id);
  Json model_json(const store::Model& m);
  Json motion_json(const store::Motion& m);
  Json package_json(const store::Package& p);
  /// The answer of an `answer` route (detail/route_table.h), its access
  /// already granted.
  Reply handle(const http::request<http::string_body>& req, const Target& target,
               const Route& route);
  /// A console file from memory: 304 when If-None-Match names its ETag; the
  /// page (index.html) with its Content-Security-Policy.
  StringResponse console_reply(const http::request<http::string_body>& req, const ConsoleFile& file,
                               bool page);
  /// handle(), with anything thrown answered 500 INTERNAL (the server lives on).
  Reply handle_safely(const http::request<http::string_body>& req, const Target& target,
                      const Route& route);
  /// 500 INTERNAL for an exception a handler let through; logged.
  StringResponse internal_error(const std::exception& e);
  Reply handle_list(store::Kind kind, const QueryParams& params);
  /// GET /api/packages/{id}/summary (bem inspect's JSON), /export.glb (a
  /// selection exported as `charkit bem export` does) and /textures/N.png
  /// (a texture's thumbnail); the last two cached.
  Reply handle_package_view(std::int64_t id, std::string_view view, const QueryParams& params);
  /// 409 NOT_READY / PACKAGE_INVALID unless the package validated.
  std::optional<StringResponse> refuse_unless_valid(const store::Package& pkg);
  /// The package file of `asset`, mapped, and with `load` its model (409
  /// PACKAGE_INVALID when it does not load). Blocking: on the pool.
  std::variant<std::unique_ptr<OpenedPackage>, StringResponse> open_package_file(
      const store::Asset& asset, bool load);
  /// GET /api/packages/{id}/drivers before the upgrade: the package's
  /// drivers playground for the selection of ?options=&parameters=, or the
  /// HTTP refusal (404, 409, 400 for a bad selection, 422 NO_DRIVERS).
  /// Blocking: on the pool.
  std::variant<std::shared_ptr<DriverPlayground>, StringResponse> open_drivers(
      std::int64_t package_id, const QueryParams& params);
  Reply handle_get(store::Kind kind, std::int64_t id);
  Reply handle_delete(store::Kind kind, std::int64_t id);
  Reply handle_asset(const store::Asset& asset, const http::request<http::string_body>& req);
  StringResponse handle_metrics();
  /// /api/session: GET who am I, POST log in (sets the cookie), DELETE log out.
  StringResponse handle_session(const http::request<http::string_body>& req);
  /// The keypoint frames of a done motion, opened for streaming (shared
  /// while streamed), or the HTTP refusal. Blocking: on the pool.
  /// A motion whose keypoints are ready, with their asset: 404 for no such
  /// motion (or a lost asset), 409 NOT_READY while it is being converted.
  struct ReadyKeypoints {
    store::Motion motion;
    store::Asset asset;
  };
  std::variant<ReadyKeypoints, StringResponse> ready_keypoints(std::int64_t motion_id);
  std::variant<std::shared_ptr<const ws::FrameSource>, StringResponse> open_stream(
      std::int64_t motion_id);
  /// After an upload committed: asset row, record, job. 201 created, 200 existing.
  StringResponse finish_upload(store::Kind kind, const store::StoredBlob& blob,
                               const std::string& original_name);
};

}  // namespace charkit::server
