// A charkit server for the server tests: quiet, on any free loopback port,
// its data under dir, 2 HTTP threads and 1 job worker.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <utility>

#include "charkit/core/result.h"
#include "charkit/server/server.h"

namespace charkit::server {

struct TestServer {
  std::unique_ptr<Server> server;
  std::uint16_t port = 0;
};

inline core::Result<TestServer> start_test_server(
    const std::filesystem::path& dir, std::uint64_t max_upload = store::kDefaultMaxUploadBytes) {
  ServerOptions o;
  o.port = 0;
  o.data_dir = dir;
  o.http_threads = 2;
  o.job_workers = 1;
  o.max_upload_bytes = max_upload;
  o.quiet = true;
  auto s = Server::create(o);
  if (!s) return s.error();
  auto p = (*s)->start();
  if (!p) return p.error();
  return TestServer{std::move(*s), *p};
}

}  // namespace charkit::server
