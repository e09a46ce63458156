// The charkit HTTP server (`charkit serve`): REST API over the blob store
// and catalogue, uploads streamed into the store, background jobs, a small
// HTML page. HTTP/1.1 on Boost.Beast + Asio (kept out of this header).
// Routes, status codes, JSON shapes and limits: docs/api.md; start,
// configuration and shutdown: docs/server.md.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "charkit/core/result.h"
#include "charkit/server/worker.h"
#include "charkit/store/blob_store.h"

namespace charkit::server {

/// When API tokens are needed (docs/server.md §Access control).
enum class AuthMode {
  automatic,  ///< once a token has been created in the catalogue (even if revoked since)
  required,   ///< always (no token yet: only /healthz and the login page answer)
};

struct ServerOptions {
  std::string address = "127.0.0.1";  ///< IPv4 or IPv6 literal to bind
  std::uint16_t port = 8080;          ///< 0: any free port (start() returns it)
  std::filesystem::path data_dir = "charkit-data";
  /// Catalogue URL; "" = SQLite at data_dir/charkit.sqlite3.
  std::string db_url;
  /// PostgreSQL only: keep the tables in this schema (created when missing;
  /// tests use one schema each). "" = the connection's default.
  std::string db_schema;
  /// Blob store: a folder or an s3://BUCKET/PREFIX?… URL (docs/store.md); "" = data_dir/blobs.
  std::filesystem::path blob_root;
  unsigned http_threads = 4;
  /// Threads for the sessions' database, file and object-storage calls
  /// (never run on the HTTP threads).
  unsigned blocking_threads = 4;
  /// Open connections (HTTP and WebSocket) at most; past it a new one gets a
  /// 503 TOO_MANY_CONNECTIONS and is closed.
  std::size_t max_connections = 1024;
  /// Open connections from one client address (an IPv6 client: its /64) at
  /// most, so that one client cannot take every connection; past it a new
  /// one gets a 503 TOO_MANY_CLIENT_CONNECTIONS and is closed. 0: no cap.
  std::size_t max_connections_per_client = 64;
  unsigned job_workers = 2;  ///< 0: enqueue only (a `charkit worker` runs the jobs)
  /// How long a claimed job is held without a heartbeat before another
  /// worker may take it again (a worker that died mid-job); running jobs
  /// renew it every lease / 3.
  std::chrono::milliseconds job_lease{15'000};
  /// Per-job bounds: decoded bytes, joint-frames, output bytes, wall time
  /// (docs/server.md §Limits).
  JobBudgets job_budgets;
  JobRunner job_runner;  ///< replaces run_job in the worker threads when set (tests)
  std::uint64_t max_upload_bytes = store::kDefaultMaxUploadBytes;
  std::uint32_t max_header_bytes = 16 * 1024;  ///< request line + header fields
  std::uint64_t max_request_body = 64 * 1024;  ///< bodies of non-upload requests
  /// The whole request line + header; each body read; an upload's grace period.
  std::chrono::seconds read_timeout{30};
  /// A connection that has not sent a whole request line and header this
  /// long after it opened (or after its previous answer) is closed: idle
  /// and trickling connections do not hold their slots for read_timeout.
  std::chrono::seconds header_timeout{10};
  /// After the grace period an upload must have arrived at this average rate
  /// (bytes/s; 0: no minimum), else the connection is closed and nothing kept.
  std::uint64_t min_upload_rate = 4096;
  AuthMode auth = AuthMode::automatic;
  /// Listen on a non-loopback address although no token exists (anyone who
  /// can connect may then upload and delete). Without it start() refuses.
  bool insecure_open = false;
  /// How long a browser session (the console's login) lasts; logging out
  /// or revoking its token ends it sooner.
  std::chrono::hours session_lifetime{24 * 7};
  bool public_read = false;     ///< GET routes need no token
  bool public_metrics = false;  ///< /metrics needs no token
  /// Host header values accepted besides localhost names and the listen
  /// address ("name" or "name:port"), e.g. the name a proxy forwards.
  std::vector<std::string> allowed_hosts;
  /// Origins ("https://app.example") allowed to call the API from browsers
  /// on other sites (CORS); the server's own origin always may.
  std::vector<std::string> cors_origins;
  /// The built web console (index.html + assets/, from web/ by esbuild),
  /// read into memory by create(); empty: the plain built-in page at / only
  /// (docs/console.md §Serving).
  std::filesystem::path console_dir;
  /// Native TLS: PEM certificate chain and private key (both or neither).
  std::filesystem::path tls_cert;
  std::filesystem::path tls_key;
  /// One line per request and per job; stderr when empty.
  std::function<void(std::string_view)> log;
  bool quiet = false;  ///< no log lines at all
};

/// The catalogue URL and blob root the options resolve to.
std::string resolved_db_url(const ServerOptions& options);
std::filesystem::path resolved_blob_root(const ServerOptions& options);

class Server {
 public:
  /// Opens (and migrates) the catalogue and the blob store; binds nothing yet.
  static core::Result<std::unique_ptr<Server>> create(ServerOptions options);
  ~Server();  ///< stop()
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  /// Binds, listens and starts the HTTP threads and job workers; returns the bound port.
  core::Result<std::uint16_t> start();
  /// Graceful shutdown: stop accepting, close every HTTP connection (uploads
  /// in flight are discarded: no file, no row), send every WebSocket client a
  /// close frame 1001 "going away" (the socket is dropped if the close
  /// handshake has not finished within 2 s), cancel the running jobs (they go
  /// back to `pending`, see WorkerPool::stop), join all threads. Safe to call twice.
  void stop();
  /// The port start() bound (0 before).
  std::uint16_t port() const;
  /// What start() found unsafe but was told to allow (each a code and a
  /// sentence), for the operator to see: SERVER_OPEN_NETWORK when
  /// --insecure-open listens on a non-loopback address with no API token.
  struct Warning {
    std::string code;
    std::string message;
  };
  std::vector<Warning> warnings() const;

  struct Impl;  ///< internal (server.cpp)

 private:
  Server() = default;
  std::unique_ptr<Impl> impl_;
};

}  // namespace charkit::server
