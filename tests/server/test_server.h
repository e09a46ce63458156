// A charkit server for the server tests: quiet, on any free loopback port,
// its data under dir, 2 HTTP threads and 1 job worker; SQLite in dir, or a
// fresh schema of the PostgreSQL database that CHARKIT_TEST_PG_URL names
// (the ctest fixture of tests/store starts a throw-away server for it).
#pragma once

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <utility>

#include "charkit/core/result.h"
#include "charkit/server/server.h"

namespace charkit::server {

// tests/data, where the test files live.
inline const std::filesystem::path kData = CHARKIT_TEST_DATA;

enum class Backend { sqlite, postgresql };

inline void PrintTo(Backend b, std::ostream* os) {
  *os << (b == Backend::sqlite ? "sqlite" : "postgresql");
}

/// The catalogue a test's servers share: "" url = SQLite in the data folder.
struct TestDb {
  std::string url;
  std::string schema;
};

/// For PostgreSQL: the database and a schema no other test uses, or the
/// reason to skip (no CHARKIT_TEST_PG_URL, or the fixture's server did not start).
inline std::pair<TestDb, std::string> test_db(Backend backend) {
  if (backend == Backend::sqlite) return {TestDb{}, ""};
  const char* url = std::getenv("CHARKIT_TEST_PG_URL");
  if (!url || !*url)
    return {TestDb{}, "CHARKIT_TEST_PG_URL is not set (ctest starts a PostgreSQL test server)"};
  if (const char* svc = std::getenv("PGSERVICEFILE"); svc && !std::filesystem::exists(svc))
    return {TestDb{}, std::string("no PostgreSQL test server (") + svc + " missing)"};
  static std::atomic<int> counter{0};
  std::string schema =
      "srv_" + std::to_string(::getpid()) + "_" + std::to_string(counter++) + "_" +
      std::to_string(std::chrono::steady_clock::now().time_since_epoch().count() % 100000);
  return {TestDb{url, std::move(schema)}, ""};
}

inline ServerOptions test_server_options(const std::filesystem::path& dir,
                                         std::uint64_t max_upload = store::kDefaultMaxUploadBytes,
                                         const TestDb& db = {}) {
  ServerOptions o;
  o.port = 0;
  o.data_dir = dir;
  o.db_url = db.url;
  o.db_schema = db.schema;
  o.http_threads = 2;
  o.job_workers = 1;
  o.max_upload_bytes = max_upload;
  o.quiet = true;
  return o;
}

struct TestServer {
  std::unique_ptr<Server> server;
  std::uint16_t port = 0;
};

inline core::Result<TestServer> start_test_server(const ServerOptions& o) {
  auto s = Server::create(o);
  if (!s) return s.error();
  auto p = (*s)->start();
  if (!p) return p.error();
  return TestServer{std::move(*s), *p};
}

inline core::Result<TestServer> start_test_server(
    const std::filesystem::path& dir, std::uint64_t max_upload = store::kDefaultMaxUploadBytes,
    const TestDb& db = {}) {
  return start_test_server(test_server_options(dir, max_upload, db));
}

}  // namespace charkit::server
