// Background jobs of the server: a pool of threads that claim jobs from the
// catalogue's durable queue (store::JobQueue) and run them — motion
// preprocessing (BVH, keypoint JSON, FBX/glTF through Assimp → MediaPipe-33
// NDJSON stored as a `keypoints` asset), package validation (the BEM report)
// and model intake. Used inside `charkit serve` and alone by `charkit worker`.
// Job kinds and payloads: docs/server.md.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "charkit/core/result.h"
#include "charkit/server/error_codes.h"
#include "charkit/store/blob_store.h"
#include "charkit/store/catalogue.h"
#include "charkit/store/jobs.h"

namespace charkit::server {

inline constexpr std::string_view kJobMotionPreprocess = "motion.preprocess";
inline constexpr std::string_view kJobPackageValidate = "package.validate";
inline constexpr std::string_view kJobModelIntake = "model.intake";

/// Error code of a job that stopped because its cancel flag went up (the
/// pool stopping, or the claim lost): the pool releases it (back to
/// `pending`, the attempt not counted) or discards its result, instead of
/// failing it.
inline constexpr core::ErrorCode kJobCancelled = codes::JOB_CANCELLED;

/// Why a running job's cancel flag went up.
enum class JobStop : std::uint8_t {
  none,
  shutdown,  ///< the pool is stopping: the record goes back to pending, the job too
  lost,      ///< the claim was lost (heartbeat): nothing is recorded, the result is discarded
  timeout,   ///< the wall-time budget ran out: the record fails with JOB_BUDGET_TIME
};

// Defaults of the per-job budgets (docs/server.md §Limits).
/// package.validate decodes at most this many times the upload limit.
inline constexpr std::uint64_t kDecodedBytesPerUploadByte = 4;
/// package.validate holds at most this many times the package's size of
/// decoded data at once, and never less than kMinJobMemoryBytes: packed
/// mesh and texture data compress by a few times at most, while a few KiB
/// of hostile zeros or `[{},{},…]` would otherwise hold hundreds of MiB.
inline constexpr std::uint64_t kMemoryPerPackageByte = 8;
inline constexpr std::uint64_t kMinJobMemoryBytes = 64ull << 20;
/// motion.preprocess: frames × skeleton joints (e.g. 100 joints × 500 000 frames).
inline constexpr std::uint64_t kDefaultMaxJointFrames = 50'000'000;
/// motion.preprocess: keypoint NDJSON bytes (about 120 000 frames; a
/// 6 000 s, 180 001-frame glTF would make 388 MB).
inline constexpr std::uint64_t kDefaultMaxOutputBytes = 256ull << 20;
/// Wall time of one job.
inline constexpr std::chrono::milliseconds kDefaultJobTimeout{5 * 60 * 1000};

/// Bounds on one job; each ends the job with a failure recorded on its
/// record (motion `preprocessState: failed`, `error: "JOB_BUDGET_…: …"`;
/// package `validity: invalid`, the issue in its report and `budget` set;
/// model `intakeState: failed`). 0 = no bound.
struct JobBudgets {
  /// package.validate: bytes decoded from one package, all payloads, ZIP
  /// entries and collection members together (JOB_BUDGET_DECODED_BYTES).
  /// nullopt: kDecodedBytesPerUploadByte × the pool's upload limit.
  std::optional<std::uint64_t> max_decoded_bytes;
  /// package.validate: bytes of decoded data held at once (payload and
  /// member buffers, the parsed manifest; JOB_BUDGET_MEMORY). nullopt:
  /// the larger of kMinJobMemoryBytes and kMemoryPerPackageByte × the
  /// package's size (package_memory_budget).
  std::optional<std::uint64_t> max_memory_bytes;
  /// motion.preprocess: frames × skeleton joints (JOB_BUDGET_JOINT_FRAMES),
  /// checked before the work where the frame count is known (glTF/FBX:
  /// duration × fps; keypoint JSON: its frames array).
  std::uint64_t max_joint_frames = kDefaultMaxJointFrames;
  /// motion.preprocess: keypoint NDJSON bytes (JOB_BUDGET_OUTPUT_BYTES),
  /// estimated before the work at 2 KiB a frame, enforced while writing.
  std::uint64_t max_output_bytes = kDefaultMaxOutputBytes;
  /// Wall time of one job, any kind (JOB_BUDGET_TIME).
  std::chrono::milliseconds timeout = kDefaultJobTimeout;
};

/// The memory budget of validating a package of package_bytes bytes
/// under budgets (0: none).
std::uint64_t package_memory_budget(const JobBudgets& budgets, std::uint64_t package_bytes);

/// What run_job is given besides the job.
struct JobContext {
  /// Polled while the job runs (may be null); once true the job stops soon:
  /// validation and conversion stop within a few MiB or a few hundred frames.
  const std::atomic<bool>* cancel = nullptr;
  /// Why cancel went up (null: treated as JobStop::shutdown).
  const std::atomic<JobStop>* stop = nullptr;
  JobBudgets budgets;
  /// Upload limit the default decoded-bytes budget derives from.
  std::uint64_t max_upload_bytes = store::kDefaultMaxUploadBytes;
  /// Set to the JOB_BUDGET_… code when a budget ended the job (may be null).
  std::string* budget_code = nullptr;
  /// A transient storage error (store::is_transient) may send the job back
  /// to the queue: the job then returns that error with its record back to
  /// `pending` instead of failing it. False once the job's storage-retry
  /// window has passed: the record fails as for any other error.
  bool retry_storage = false;
};

/// Job payload: {"id": N} (the motion, package or model row).
std::string job_payload(std::int64_t id);

/// Runs one job of any kind above against the store and catalogue; the
/// record's state fields say how it went (a budget that ended it included:
/// the job itself is then done). An error return means the job itself could
/// not run (unknown kind, bad payload, database failure): the caller fails
/// the job with that text. When context.cancel goes up:
/// - shutdown: the job stops (validation and conversion mid-way, intake once
///   its one library call returns), its record goes back to `pending` (or
///   stays unvalidated), and kJobCancelled is returned;
/// - lost: the same, but the record is not touched (another worker owns it);
/// - timeout: the record is failed with JOB_BUDGET_TIME and Ok is returned.
/// A transient storage error with context.retry_storage set puts the record
/// back to `pending` and is returned (the pool requeues the job).
/// Re-running a job is harmless: the keypoint blob and asset are content
/// addressed, the record is overwritten.
core::Status run_job(std::string_view kind, std::string_view payload, const store::BlobStore& blobs,
                     store::Catalogue& catalogue, const JobContext& context);
/// run_job with the default budgets; `cancel` (may be null) means shutdown.
core::Status run_job(std::string_view kind, std::string_view payload, const store::BlobStore& blobs,
                     store::Catalogue& catalogue, const std::atomic<bool>* cancel = nullptr);

/// What a pool thread runs for a claimed job (default: run_job with the
/// pool's store, connection and budgets). `cancel` turns true when the pool
/// stops, the claim is lost or the wall-time budget runs out; a runner that
/// sees it should return an error with code kJobCancelled soon (the pool
/// then releases the job, discards it, or fails it with JOB_BUDGET_TIME).
/// Tests inject slow or blocking runners here.
using JobRunner =
    std::function<core::Status(const store::Job& job, const std::atomic<bool>& cancel)>;

struct WorkerPoolOptions {
  std::string db_url;     ///< each thread opens its own catalogue connection
  std::string pg_schema;  ///< PostgreSQL schema of the tables ("" = default)
  std::filesystem::path blob_root;
  std::uint64_t max_upload_bytes = store::kDefaultMaxUploadBytes;
  unsigned threads = 2;
  /// How long a claim holds without a heartbeat: a worker that died loses
  /// its jobs after this long (docs/contracts/data-models.md §5).
  std::chrono::milliseconds lease{15'000};
  /// Heartbeat period of running jobs; 0 = lease / 3.
  std::chrono::milliseconds heartbeat{0};
  std::chrono::milliseconds idle_poll{500};  ///< wait between empty claims
  /// PostgreSQL: idle threads wake on NOTIFY (JobListener); this slower poll
  /// remains as a safety net (expired leases send no notification).
  std::chrono::milliseconds notify_poll{2'000};
  bool listen = true;  ///< PostgreSQL: LISTEN for enqueued jobs (false: poll only)
  JobBudgets budgets;
  /// A job that meets a transient storage error (store::is_transient: S3
  /// unreachable or answering 5xx after its client's retries) goes back to
  /// the queue, to be claimed again after a delay that doubles with the
  /// job's age (its age, at least 1 s, at most storage_retry_max_delay),
  /// until it is storage_retry_window old; then its record fails.
  std::chrono::milliseconds storage_retry_window{60 * 60 * 1000};
  std::chrono::milliseconds storage_retry_max_delay{60 * 1000};
  std::string name = "worker";                ///< prefix of the worker ids in the jobs table
  std::function<void(std::string_view)> log;  ///< one line per job; none when empty
  JobRunner runner;                           ///< replaces run_job when set (tests)
};

/// Counters of a pool since it started (docs/server.md §Jobs lists the
/// /metrics names proposed for them).
struct WorkerPoolStats {
  std::uint64_t claims = 0;           ///< jobs claimed
  std::uint64_t retries = 0;          ///< claims of a job claimed before (attempts > 1)
  std::uint64_t completions = 0;      ///< jobs marked done (their record may say failed)
  std::uint64_t failures = 0;         ///< jobs marked failed (the job itself could not run)
  std::uint64_t releases = 0;         ///< jobs returned to pending by a graceful stop
  std::uint64_t storage_retries = 0;  ///< jobs returned to pending by a transient storage error
  std::uint64_t lost_claims =
      0;  ///< claims lost (heartbeat or completion refused): result discarded
  std::uint64_t heartbeat_failures = 0;  ///< heartbeats that could not reach the database
  std::uint64_t budget_failures = 0;     ///< jobs ended by a budget (JOB_BUDGET_…)
  std::uint64_t notifications = 0;       ///< wake-ups by a PostgreSQL NOTIFY
};

/// Threads that claim and run jobs until stop(); one service thread that
/// renews the leases of running jobs (every `heartbeat`) and raises the
/// cancel flag of a job whose claim was lost or whose wall time ran out; on
/// PostgreSQL one more thread that LISTENs for new jobs and wakes idle ones. stop() raises the
/// cancel flags, waits for each thread's current job to return and joins them: a job that returned
/// kJobCancelled goes back to `pending` with its attempt not counted (the next start, or another
/// worker, runs it), one that finished is recorded as usual.
class WorkerPool {
 public:
  static core::Result<std::unique_ptr<WorkerPool>> start(WorkerPoolOptions options);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;
  /// Wakes idle threads to look for work now (after an enqueue).
  void notify();
  /// Raises the cancel flags without waiting (stop() then joins).
  void request_stop();
  /// Graceful stop (above); safe to call twice.
  void stop();
  /// The counters so far (a consistent-enough snapshot; thread-safe).
  WorkerPoolStats stats() const;

 private:
  WorkerPool() = default;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace charkit::server
