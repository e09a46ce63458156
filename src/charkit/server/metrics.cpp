// Prometheus text exposition (format 0.0.4) of the server's Metrics.
#include "charkit/server/detail/metrics.h"

#include <array>

namespace charkit::server {
namespace {

constexpr std::array<std::string_view, 9> kMethods = {
    "GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH", "CONNECT", "TRACE"};

void header(std::string& out, std::string_view name, std::string_view type, std::string_view help) {
  out.append("# HELP ").append(name).append(" ").append(help).append("\n");
  out.append("# TYPE ").append(name).append(" ").append(type).append("\n");
}

void sample(std::string& out, std::string_view name, std::string_view labels, std::int64_t v) {
  out.append(name).append(labels).append(" ").append(std::to_string(v)).append("\n");
}

/// One unlabelled sample with its HELP and TYPE lines.
void metric(std::string& out, std::string_view name, std::string_view type, std::string_view help,
            std::int64_t v) {
  header(out, name, type, help);
  sample(out, name, "", v);
}

}  // namespace

void Metrics::count_request(std::string_view method, unsigned code) {
  std::string m = "other";
  for (auto k : kMethods)
    if (method == k) m = std::string(k);
  if (code < 100 || code > 599) code = 0;
  std::lock_guard lock(mutex_);
  ++requests_[{m, code}];
}

void Metrics::note_queue_depth(std::uint64_t depth) {
  std::uint64_t cur = queue_max.load();
  while (depth > cur && !queue_max.compare_exchange_weak(cur, depth)) {
  }
}

void Metrics::render_counters(
    std::string& out, const std::vector<std::tuple<std::string, std::string, std::uint64_t>>& c) {
  for (const auto& [name, help, value] : c)
    metric(out, name, "counter", help, static_cast<std::int64_t>(value));
}

std::string Metrics::render(const std::vector<std::pair<std::string, std::int64_t>>& jobs) const {
  std::string out;
  header(out, "charkit_http_requests_total", "counter",
         "HTTP requests answered, by method and status code.");
  {
    std::lock_guard lock(mutex_);
    // Label values are from a fixed set (methods above, numeric codes): no escaping needed.
    for (const auto& [key, n] : requests_)
      sample(out, "charkit_http_requests_total",
             "{method=\"" + key.first + "\",code=\"" + std::to_string(key.second) + "\"}",
             static_cast<std::int64_t>(n));
  }
  metric(out, "charkit_http_request_bytes_total", "counter", "Request body bytes received.",
         static_cast<std::int64_t>(request_bytes.load()));
  metric(out, "charkit_http_response_bytes_total", "counter", "Response body bytes sent.",
         static_cast<std::int64_t>(response_bytes.load()));
  header(out, "charkit_jobs", "gauge", "Jobs in the catalogue's queue, by state.");
  for (const auto& [state, n] : jobs)
    if (n >= 0) sample(out, "charkit_jobs", "{state=\"" + state + "\"}", n);
  metric(out, "charkit_stream_clients", "gauge", "Open WebSocket connections (streams and live).",
         stream_clients.load());
  metric(out, "charkit_uploads_in_flight", "gauge", "Uploads being received right now.",
         uploads_in_flight.load());
  metric(out, "charkit_stream_frames_sent_total", "counter",
         "Binary keypoint frames written to WebSocket clients.",
         static_cast<std::int64_t>(frames_sent.load()));
  metric(out, "charkit_stream_frames_skipped_total", "counter",
         "Keypoint frames skipped because a client was still reading an earlier one.",
         static_cast<std::int64_t>(frames_skipped.load()));
  metric(out, "charkit_stream_queue_max", "gauge",
         "The most frames ever queued for one WebSocket client at once.",
         static_cast<std::int64_t>(queue_max.load()));
  metric(out, "charkit_handler_exceptions_total", "counter",
         "Exceptions that escaped a request or I/O handler (answered 500 or logged).",
         static_cast<std::int64_t>(handler_exceptions.load()));
  metric(out, "charkit_connections", "gauge", "Open client connections (HTTP and WebSocket).",
         connections.load());
  metric(out, "charkit_connections_refused_total", "counter",
         "Connections answered 503 because the server was at its connection limit.",
         static_cast<std::int64_t>(connections_refused.load()));
  metric(out, "charkit_accept_backoffs_total", "counter",
         "Times accepting paused because file descriptors or memory ran out.",
         static_cast<std::int64_t>(accept_backoffs.load()));
  return out;
}

}  // namespace charkit::server
