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
#include <string>
#include <string_view>

#include "charkit/core/result.h"
#include "charkit/store/blob_store.h"
#include "charkit/store/catalogue.h"
#include "charkit/store/jobs.h"

namespace charkit::server {

inline constexpr std::string_view kJobMotionPreprocess = "motion.preprocess";
inline constexpr std::string_view kJobPackageValidate = "package.validate";
inline constexpr std::string_view kJobModelIntake = "model.intake";

/// Error code of a job that stopped because its pool is stopping: the pool
/// releases it (back to `pending`, the attempt not counted) instead of failing it.
inline constexpr std::string_view kJobCancelled = "JOB_CANCELLED";

/// Job payload: {"id": N} (the motion, package or model row).
std::string job_payload(std::int64_t id);

/// Runs one job of any kind above against the store and catalogue; the
/// record's state fields say how it went. An error return means the job
/// itself could not run (unknown kind, bad payload, database failure): the
/// caller fails the job with that text. `cancel` (may be null) is polled
/// while the job runs: once it is true, motion preprocessing stops at its
/// next output chunk, puts the motion back to `pending` and returns
/// kJobCancelled; a job that has not started its work yet returns
/// kJobCancelled too. Validation and intake, once started, run to the end.
core::Status run_job(std::string_view kind, std::string_view payload, const store::BlobStore& blobs,
                     store::Catalogue& catalogue, const std::atomic<bool>* cancel = nullptr);

/// What a pool thread runs for a claimed job (default: run_job with the
/// pool's store and connection). `cancel` turns true when the pool stops; a
/// runner that sees it should return an error with code kJobCancelled soon.
/// Tests inject slow or blocking runners here.
using JobRunner =
    std::function<core::Status(const store::Job& job, const std::atomic<bool>& cancel)>;

struct WorkerPoolOptions {
  std::string db_url;     ///< each thread opens its own catalogue connection
  std::string pg_schema;  ///< PostgreSQL schema of the tables ("" = default)
  std::filesystem::path blob_root;
  std::uint64_t max_upload_bytes = store::kDefaultMaxUploadBytes;
  unsigned threads = 2;
  std::chrono::milliseconds lease{10 * 60 * 1000};
  std::chrono::milliseconds idle_poll{500};   ///< wait between empty claims
  std::string name = "worker";                ///< prefix of the worker ids in the jobs table
  std::function<void(std::string_view)> log;  ///< one line per job; none when empty
  JobRunner runner;                           ///< replaces run_job when set (tests)
};

/// Threads that claim and run jobs until stop(). stop() raises the cancel
/// flag, waits for each thread's current job to return and joins them: a job
/// that returned kJobCancelled goes back to `pending` with its attempt not
/// counted (the next start, or another worker, runs it), one that finished
/// is recorded as usual.
class WorkerPool {
 public:
  static core::Result<std::unique_ptr<WorkerPool>> start(WorkerPoolOptions options);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;
  /// Wakes idle threads to look for work now (after an enqueue).
  void notify();
  /// Raises the cancel flag without waiting (stop() then joins).
  void request_stop();
  /// Graceful stop (above); safe to call twice.
  void stop();

 private:
  WorkerPool() = default;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace charkit::server
