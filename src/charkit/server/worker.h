// Background jobs of the server: a pool of threads that claim jobs from the
// catalogue's durable queue (store::JobQueue) and run them — motion
// preprocessing (BVH, keypoint JSON, FBX/glTF through Assimp → MediaPipe-33
// NDJSON stored as a `keypoints` asset), package validation (the BEM report)
// and model intake. Used inside `charkit serve` and alone by `charkit worker`.
// Job kinds and payloads: docs/server.md.
#pragma once

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

namespace charkit::server {

inline constexpr std::string_view kJobMotionPreprocess = "motion.preprocess";
inline constexpr std::string_view kJobPackageValidate = "package.validate";
inline constexpr std::string_view kJobModelIntake = "model.intake";

/// Job payload: {"id": N} (the motion, package or model row).
std::string job_payload(std::int64_t id);

/// Runs one job of any kind above against the store and catalogue; the
/// record's state fields say how it went. An error return means the job
/// itself could not run (unknown kind, bad payload, database failure): the
/// caller fails the job with that text.
core::Status run_job(std::string_view kind, std::string_view payload, const store::BlobStore& blobs,
                     store::Catalogue& catalogue);

struct WorkerPoolOptions {
  std::string db_url;  ///< each thread opens its own catalogue connection
  std::filesystem::path blob_root;
  std::uint64_t max_upload_bytes = store::kDefaultMaxUploadBytes;
  unsigned threads = 2;
  std::chrono::milliseconds lease{10 * 60 * 1000};
  std::chrono::milliseconds idle_poll{500};   ///< wait between empty claims
  std::string name = "worker";                ///< prefix of the worker ids in the jobs table
  std::function<void(std::string_view)> log;  ///< one line per job; none when empty
};

/// Threads that claim and run jobs until stop(). stop() lets each thread
/// finish the job it is running, then joins them.
class WorkerPool {
 public:
  static core::Result<std::unique_ptr<WorkerPool>> start(WorkerPoolOptions options);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;
  /// Wakes idle threads to look for work now (after an enqueue).
  void notify();
  void stop();

 private:
  WorkerPool() = default;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace charkit::server
