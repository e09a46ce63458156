// Server counters and gauges, rendered as Prometheus text exposition format
// 0.0.4 by GET /metrics (docs/api.md). Updated from every HTTP and WebSocket
// thread, hence atomics; the per-(method, code) request counts sit behind a
// mutex because their label set grows at run time (bounded: see count_request).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

namespace charkit::server {

struct Metrics {
  std::atomic<std::uint64_t> request_bytes{0};   ///< request body bytes received
  std::atomic<std::uint64_t> response_bytes{0};  ///< response body bytes sent
  std::atomic<std::int64_t> stream_clients{0};   ///< open WebSocket connections
  std::atomic<std::int64_t> uploads_in_flight{0};
  std::atomic<std::uint64_t> frames_sent{0};     ///< binary frames written to stream clients
  std::atomic<std::uint64_t> frames_skipped{0};  ///< frames dropped for slow clients
  /// The most frames ever queued for one client at once (the policy keeps it ≤ 1).
  std::atomic<std::uint64_t> queue_max{0};
  /// Exceptions that a request handler or an I/O completion handler let
  /// through (answered 500 or logged; the server goes on).
  std::atomic<std::uint64_t> handler_exceptions{0};
  std::atomic<std::int64_t> connections{0};  ///< open client connections (HTTP + WebSocket)
  std::atomic<std::uint64_t> connections_refused{0};  ///< 503 at the connection cap
  std::atomic<std::uint64_t> accept_backoffs{0};      ///< accept() out of descriptors or memory

  /// One answered request. Unknown methods share the label "other" and codes
  /// outside 100..599 become 0, so a client cannot grow the label set without bound.
  void count_request(std::string_view method, unsigned code);
  void note_queue_depth(std::uint64_t depth);

  /// The exposition text. jobs: (state, count) from the catalogue; a count < 0
  /// (the catalogue did not answer) is left out.
  std::string render(const std::vector<std::pair<std::string, std::int64_t>>& jobs) const;
  /// Counters of this process's job workers (WorkerPool::stats), appended by
  /// the server: (metric name without charkit_jobs_, help, value).
  static void render_counters(
      std::string& out, const std::vector<std::tuple<std::string, std::string, std::uint64_t>>& c);

 private:
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, unsigned>, std::uint64_t> requests_;
};

/// RAII +1/-1 on a gauge.
class GaugeToken {
 public:
  explicit GaugeToken(std::atomic<std::int64_t>& g) : g_(&g) { g_->fetch_add(1); }
  ~GaugeToken() {
    if (g_) g_->fetch_sub(1);
  }
  GaugeToken(const GaugeToken&) = delete;
  GaugeToken& operator=(const GaugeToken&) = delete;

 private:
  std::atomic<std::int64_t>* g_;
};

}  // namespace charkit::server
