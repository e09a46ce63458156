// `charkit serve` and `charkit worker`: the HTTP server with its job
// workers, and a job-only process for other hosts (docs/server.md,
// docs/api.md). The work is in charkit::server; this file parses options,
// waits for SIGINT/SIGTERM and shuts down gracefully.
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <pthread.h>

#include "charkit/server/listen.h"
#include "charkit/server/server.h"
#include "charkit/server/worker.h"
#include "cli_output.h"
#include "commands.h"
#include "error_codes.h"
#include "printable.h"

namespace charkit::app {
namespace {

struct ServeArgs {
  std::string listen = "127.0.0.1:8080";
  std::string data = "charkit-data";
  std::string db;
  std::string blobs;
  unsigned workers = 2;
  unsigned http_threads = 4;
  std::uint64_t max_upload = store::kDefaultMaxUploadBytes;
  bool quiet = false;
  std::string web;  // the built console; "" = found beside the program, "none" = the plain page
  // Access control (docs/server.md §Access control).
  std::string auth = "auto";
  bool insecure_open = false;
  bool public_read = false;
  bool public_metrics = false;
  std::vector<std::string> allowed_hosts;
  std::vector<std::string> cors_origins;
  std::string tls_cert;
  std::string tls_key;
  // Bounded work.
  std::size_t max_connections = 1024;
  std::size_t max_connections_per_client = 64;
  unsigned header_timeout_s = 10;
  unsigned session_hours = 24 * 7;
  std::uint64_t min_upload_rate = 4096;
  unsigned blocking_threads = 4;
  // Jobs (docs/server.md §Jobs, §Limits).
  double job_lease_s = 15;
  double job_timeout_s = static_cast<double>(server::kDefaultJobTimeout.count()) / 1000.0;
  /// max(): not given (4 × --max-upload).
  std::uint64_t job_max_decoded_bytes = std::numeric_limits<std::uint64_t>::max();
  /// max(): not given (package_memory_budget's default).
  std::uint64_t job_max_memory = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t job_max_joint_frames = server::kDefaultMaxJointFrames;
  std::uint64_t job_max_output_bytes = server::kDefaultMaxOutputBytes;
};

std::chrono::milliseconds seconds_to_ms(double s) {
  return std::chrono::milliseconds(static_cast<std::int64_t>(s * 1000.0 + 0.5));
}

server::JobBudgets budgets_of(const ServeArgs& a) {
  server::JobBudgets b;
  if (a.job_max_decoded_bytes != std::numeric_limits<std::uint64_t>::max())
    b.max_decoded_bytes = a.job_max_decoded_bytes;
  if (a.job_max_memory != std::numeric_limits<std::uint64_t>::max())
    b.max_memory_bytes = a.job_max_memory;
  b.max_joint_frames = a.job_max_joint_frames;
  b.max_output_bytes = a.job_max_output_bytes;
  b.timeout = seconds_to_ms(a.job_timeout_s);
  return b;
}

/// The job options shared by `serve` and `worker`.
void add_job_options(CLI::App* cmd, ServeArgs& a) {
  cmd->add_option("--job-lease", a.job_lease_s,
                  "Seconds a running job's claim holds without a heartbeat (renewed every "
                  "third of it); a job of a worker that died is retried after about this long")
      ->capture_default_str()
      ->check(CLI::Range(0.1, 86400.0));
  cmd->add_option("--job-timeout", a.job_timeout_s,
                  "Wall-time budget of one job in seconds; past it the job is stopped and its "
                  "record failed with JOB_BUDGET_TIME (0: none)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1e7));
  cmd->add_option("--job-max-decoded-bytes", a.job_max_decoded_bytes,
                  "Bytes package validation may decode from one package, all payloads, ZIP "
                  "entries and collection members together (JOB_BUDGET_DECODED_BYTES; default "
                  "4 × --max-upload; 0: none)");
  cmd->add_option("--job-max-memory", a.job_max_memory,
                  "Bytes of decoded data package validation may hold at once: payload and "
                  "member buffers and the parsed manifest (JOB_BUDGET_MEMORY; default the larger "
                  "of 64 MiB and 8 × the package's size; 0: none)");
  cmd->add_option("--job-max-joint-frames", a.job_max_joint_frames,
                  "Motion preprocessing: most frames × skeleton joints, checked before the work "
                  "where the frame count is known (JOB_BUDGET_JOINT_FRAMES; 0: none)")
      ->capture_default_str();
  cmd->add_option("--job-max-output-bytes", a.job_max_output_bytes,
                  "Motion preprocessing: most bytes of keypoint NDJSON, estimated before the work "
                  "at 2 KiB a frame and enforced while writing (JOB_BUDGET_OUTPUT_BYTES; 0: none)")
      ->capture_default_str();
}

/// Blocks SIGINT and SIGTERM in this thread (and so in every thread started
/// after it) so that wait_for_signal() receives them.
sigset_t block_stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  return set;
}

int wait_for_signal(const sigset_t& set) {
  int sig = 0;
  sigwait(&set, &sig);
  return sig;
}

/// The built web console to serve (docs/console.md §Serving): --web DIR,
/// else the one installed beside the program (PREFIX/share/charkit/web for
/// PREFIX/bin/charkit), else this build tree's (BUILD/share/charkit/web);
/// "" when none of them holds an index.html (or --web none): the plain
/// built-in page.
std::filesystem::path console_dir(const std::string& web) {
  if (web == "none") return {};
  if (!web.empty()) return web;
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  std::vector<std::filesystem::path> candidates;
  if (!ec) candidates.push_back(exe.parent_path() / CHARKIT_CONSOLE_INSTALLED_REL);
  candidates.emplace_back(CHARKIT_CONSOLE_BUILD_DIR);
  for (const auto& dir : candidates) {
    if (!dir.empty() && std::filesystem::is_regular_file(dir / "index.html", ec))
      return dir.lexically_normal();
  }
  return {};
}

int run_serve(const ServeArgs& a) {
  server::ServerOptions o;
  auto listen = server::parse_listen_address(a.listen);
  if (!listen) return report_error("", listen.error(), kExitUsage);
  o.address = listen->address;
  o.port = listen->port;
  o.data_dir = a.data;
  o.db_url = a.db;
  o.blob_root = a.blobs;
  o.job_workers = a.workers;
  o.http_threads = a.http_threads;
  o.max_upload_bytes = a.max_upload;
  o.quiet = a.quiet;
  o.auth = a.auth == "required" ? server::AuthMode::required : server::AuthMode::automatic;
  o.insecure_open = a.insecure_open;
  o.public_read = a.public_read;
  o.public_metrics = a.public_metrics;
  o.allowed_hosts = a.allowed_hosts;
  o.cors_origins = a.cors_origins;
  o.tls_cert = a.tls_cert;
  o.tls_key = a.tls_key;
  if (o.tls_cert.empty() != o.tls_key.empty()) {
    return report_error("", codes::USAGE, "--tls-cert and --tls-key go together", kExitUsage);
  }
  o.max_connections = a.max_connections;
  o.max_connections_per_client = a.max_connections_per_client;
  o.header_timeout = std::chrono::seconds(a.header_timeout_s);
  o.session_lifetime = std::chrono::hours(a.session_hours);
  o.min_upload_rate = a.min_upload_rate;
  o.blocking_threads = a.blocking_threads;
  o.job_lease = seconds_to_ms(a.job_lease_s);
  o.job_budgets = budgets_of(a);
  o.console_dir = console_dir(a.web);
  sigset_t signals = block_stop_signals();
  auto srv = server::Server::create(o);
  if (!srv) return report_error("", srv.error(), kExitUsage);
  auto port = (*srv)->start();
  if (!port) return report_error("", port.error(), kExitUsage);
  for (const auto& w : (*srv)->warnings()) report_warning("", w.code, w.message);
  std::string host = o.address.find(':') != std::string::npos ? "[" + o.address + "]" : o.address;
  // Where it listens is the command's result: printed even with --quiet.
  std::cerr << format_message(
                   Severity::kInfo, "", "", "",
                   "listening on " + std::string(o.tls_cert.empty() ? "http" : "https") + "://" +
                       host + ":" + std::to_string(*port) + "/ (data " + o.data_dir.string() +
                       ", blobs " + server::resolved_blob_root(o).string() + ", database " +
                       server::resolved_db_url(o) + ", " + std::to_string(a.workers) +
                       " job workers, " +
                       (o.console_dir.empty() ? std::string("plain page: no built console found")
                                              : "console " + o.console_dir.string()) +
                       "); Ctrl-C stops")
            << std::endl;
  int sig = wait_for_signal(signals);
  report_info("", std::string(sig == SIGINT ? "SIGINT" : "SIGTERM") +
                      ": stopping (in-flight uploads are discarded, stream clients get a close "
                      "frame, running jobs go back to the queue)");
  (*srv)->stop();
  report_info("", "stopped");
  return kExitOk;
}

int run_worker(const ServeArgs& a) {
  server::ServerOptions o;
  o.data_dir = a.data;
  o.db_url = a.db;
  o.blob_root = a.blobs;
  sigset_t signals = block_stop_signals();
  server::WorkerPoolOptions w;
  w.db_url = server::resolved_db_url(o);
  w.blob_root = server::resolved_blob_root(o);
  w.max_upload_bytes = a.max_upload;
  w.threads = a.workers ? a.workers : 1;
  w.lease = seconds_to_ms(a.job_lease_s);
  w.budgets = budgets_of(a);
  w.log = [](std::string_view line) { report_info("", line); };
  auto pool = server::WorkerPool::start(w);
  if (!pool) return report_error("", pool.error(), kExitUsage);
  std::cerr << format_message(Severity::kInfo, "", "", "",
                              "worker running " + std::to_string(w.threads) + " threads on " +
                                  w.db_url + "; Ctrl-C stops")
            << std::endl;
  int sig = wait_for_signal(signals);
  report_info("", std::string(sig == SIGINT ? "SIGINT" : "SIGTERM") +
                      ": stopping (running jobs go back to the queue)");
  (*pool)->stop();
  return kExitOk;
}

}  // namespace

void add_serve_commands(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<ServeArgs>();
  CLI::App* serve = app.add_subcommand("serve",
                                       "Run the HTTP server: REST API for models, motions and "
                                       "packages, background jobs, a web page");
  serve
      ->add_option("--listen", args->listen,
                   "Address and port to listen on (HOST:PORT; port 0 picks a free one, printed "
                   "on stderr)")
      ->capture_default_str();
  serve
      ->add_option("--data", args->data,
                   "Data folder: SQLite catalogue DIR/charkit.sqlite3, blobs DIR/blobs")
      ->capture_default_str();
  serve->add_option("--web", args->web,
                    "Folder of the built web console (index.html + assets/; `node web/build.mjs "
                    "DIR` builds one). Default: the one installed beside the program, else the "
                    "build tree's; 'none': the plain built-in page");
  serve->add_option("--db", args->db,
                    "Catalogue URL instead of the SQLite file: sqlite:PATH or "
                    "postgresql://USER@HOST/DB (several servers and workers may share one)");
  serve->add_option("--blobs", args->blobs,
                    "Blob store instead of DATA/blobs: a folder, or "
                    "s3://BUCKET/PREFIX?endpoint=URL&region=R (credentials from AWS_ACCESS_KEY_ID, "
                    "AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN)");
  serve
      ->add_option("--workers", args->workers,
                   "Job worker threads in this process (0: leave jobs to `charkit worker`)")
      ->capture_default_str();
  serve->add_option("--http-threads", args->http_threads, "Threads serving HTTP requests")
      ->capture_default_str()
      ->check(CLI::Range(1u, 256u));
  serve->add_option("--max-upload", args->max_upload, "Largest upload in bytes (larger: 413)")
      ->capture_default_str();
  serve->add_flag("--quiet", args->quiet,
                  "No line per request and per job on stderr (start and stop lines stay)");
  serve
      ->add_option("--auth", args->auth,
                   "When API tokens are needed: auto (once `charkit token create` made one) or "
                   "required (always)")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "required"}));
  serve->add_flag("--insecure-open", args->insecure_open,
                  "Listen on a non-loopback address although no API token exists (anyone who "
                  "can connect may upload and delete)");
  serve->add_flag("--public-read", args->public_read, "GET routes need no token");
  serve->add_flag("--public-metrics", args->public_metrics, "/metrics needs no token");
  serve->add_option("--allowed-host", args->allowed_hosts,
                    "A Host header value this server answers to besides localhost and the listen "
                    "address (NAME or NAME:PORT; repeatable), e.g. the name behind a proxy");
  serve->add_option("--cors-origin", args->cors_origins,
                    "An origin (https://app.example) whose pages may call the API (CORS; "
                    "repeatable)");
  serve->add_option("--tls-cert", args->tls_cert, "PEM certificate chain: serve HTTPS and WSS");
  serve->add_option("--tls-key", args->tls_key, "PEM private key of --tls-cert");
  serve
      ->add_option("--max-connections", args->max_connections,
                   "Open connections at most (HTTP and WebSocket); more get 503")
      ->capture_default_str();
  serve
      ->add_option("--max-connections-per-client", args->max_connections_per_client,
                   "Open connections from one client address (IPv6: its /64) at most, so that "
                   "no client can take them all; more get 503 (0: no per-client cap)")
      ->capture_default_str();
  serve
      ->add_option("--header-timeout", args->header_timeout_s,
                   "Seconds a connection may stay open without sending a whole request line "
                   "and header (when new, and between keep-alive requests)")
      ->capture_default_str()
      ->check(CLI::Range(1u, 3600u));
  serve
      ->add_option("--session-hours", args->session_hours,
                   "Lifetime of a browser login session in hours (logout or revoking its token "
                   "ends it sooner)")
      ->capture_default_str()
      ->check(CLI::Range(1u, 24u * 366u));
  serve
      ->add_option("--min-upload-rate", args->min_upload_rate,
                   "Bytes/s an upload must average after its first 30 s, else it is cut off (0: "
                   "no minimum)")
      ->capture_default_str();
  serve
      ->add_option("--blocking-threads", args->blocking_threads,
                   "Threads for the database and file work of requests (kept off the HTTP "
                   "threads)")
      ->capture_default_str()
      ->check(CLI::Range(1u, 256u));
  add_job_options(serve, *args);
  serve->footer(
      "Open http://HOST:PORT/ in a browser for the upload page; the API is in docs/api.md.\n"
      "Uploads: curl --data-binary @walk.bvh "
      "'http://127.0.0.1:8080/api/motions?filename=walk.bvh'\n"
      "The server binds to loopback unless --listen says otherwise; a non-loopback address needs\n"
      "an API token in the catalogue (charkit token create) or --insecure-open. Once a token\n"
      "exists, requests need one (Authorization: Bearer, or /login in a browser). One line per\n"
      "request goes to\n"
      "stderr. SIGINT/SIGTERM stop it gracefully: no new connections, uploads in flight are\n"
      "discarded (no temporary file stays), WebSocket clients get a close frame (1001), running\n"
      "jobs are cancelled and go back to the queue (pending) for the next start or another "
      "worker.\n"
      "Jobs: a claim is held for --job-lease seconds and renewed by a heartbeat; a job whose\n"
      "worker died is retried after about one lease. Each job has budgets (--job-timeout,\n"
      "--job-max-*); a job past one ends with its record failed and a JOB_BUDGET_... reason.\n"
      "Exit status: 0 after a clean stop, 2 when the database, data folder or port cannot be "
      "used.");
  serve->callback([args, &exit_code] { exit_code = run_serve(*args); });

  auto wargs = std::make_shared<ServeArgs>();
  CLI::App* worker = app.add_subcommand(
      "worker",
      "Run background jobs only (motion preprocessing, package validation, model intake)");
  worker->add_option("--db", wargs->db,
                     "Catalogue URL shared with the server (default: sqlite:DIR/charkit.sqlite3)");
  worker
      ->add_option("--data", wargs->data, "Data folder shared with the server (blobs in DIR/blobs)")
      ->capture_default_str();
  worker->add_option("--blobs", wargs->blobs,
                     "Blob store shared with the server instead of DATA/blobs: a folder or "
                     "s3://BUCKET/PREFIX?endpoint=URL&region=R");
  worker->add_option("--workers", wargs->workers, "Job threads")->capture_default_str();
  worker
      ->add_option("--max-upload", wargs->max_upload,
                   "The servers' upload limit in bytes (the default decode budget derives from it)")
      ->capture_default_str();
  add_job_options(worker, *wargs);
  worker->footer(
      "Claims jobs from the catalogue's queue; several workers (processes or hosts sharing a\n"
      "PostgreSQL catalogue and the data folder) never run the same job at once. SIGINT/SIGTERM\n"
      "stop it: running jobs are cancelled and go back to the queue (pending). Claims are held\n"
      "for --job-lease seconds and renewed by a heartbeat; on PostgreSQL idle workers wake on\n"
      "NOTIFY when a job is enqueued (and poll every 2 s besides).\n"
      "Exit status: 0 after a clean stop, 2 when the database or data folder cannot be used.");
  worker->callback([wargs, &exit_code] { exit_code = run_worker(*wargs); });
}

}  // namespace charkit::app
