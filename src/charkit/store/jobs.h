// A durable job queue in the catalogue's database (table `jobs`):
// pending → running → done | failed. A worker claims a job with a lease,
// renews it by heartbeat and completes it; a job whose worker died (lease
// expired) is claimed again, until max_attempts claims were spent. Two
// workers never hold the same job at once: PostgreSQL claims with
// FOR UPDATE SKIP LOCKED, SQLite inside BEGIN IMMEDIATE.
// Protocol: docs/contracts/data-models.md §Jobs.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "charkit/core/result.h"
#include "charkit/store/catalogue.h"

namespace charkit::store {

enum class JobState { pending, running, done, failed };
std::string_view job_state_name(JobState s);
std::optional<JobState> parse_job_state(std::string_view s);

struct Job {
  std::int64_t id = 0;
  std::string kind;     ///< what to run, e.g. "motion.preprocess"
  std::string payload;  ///< the job's input (JSON text by convention)
  JobState state = JobState::pending;
  std::int64_t attempts = 0;  ///< claims so far; a claim is identified by (id, worker, attempts)
  std::int64_t max_attempts = 3;
  std::string worker;                       ///< who holds / last held it
  std::optional<std::int64_t> lease_until;  ///< Unix ms; set while running
  std::string error;                        ///< why it failed
  std::int64_t created_at = 0;
  std::int64_t updated_at = 0;
};

class JobQueue {
 public:
  /// Uses the catalogue's connection and clock; the catalogue must outlive the queue.
  explicit JobQueue(Catalogue& catalogue) : cat_(catalogue) {}

  /// Inserts a pending job; on PostgreSQL also NOTIFYs the job channel
  /// (job_channel()), so that idle workers LISTENing there wake up.
  core::Result<Job> enqueue(std::string_view kind, std::string_view payload,
                            std::int64_t max_attempts = 3);
  /// Claims the oldest job that is pending, or running with an expired
  /// lease and attempts left (of `kind` when not empty). nullopt: nothing to do.
  /// Running jobs with an expired lease and no attempts left are marked
  /// failed first ("lease expired after N attempts").
  core::Result<std::optional<Job>> claim(std::string_view worker, std::chrono::milliseconds lease,
                                         std::string_view kind = {});
  /// Extends the lease of a claim; false when the claim was lost (lease
  /// expired and someone else took the job, or it was completed).
  core::Result<bool> heartbeat(const Job& claim, std::chrono::milliseconds lease);
  /// done; false when the claim was lost (the result must be discarded).
  core::Result<bool> complete(const Job& claim);
  /// failed with the error text; false when the claim was lost.
  core::Result<bool> fail(const Job& claim, std::string_view error);
  /// Back to pending without spending an attempt (graceful shutdown); on
  /// PostgreSQL NOTIFYs the job channel like enqueue.
  core::Result<bool> release(const Job& claim);
  /// Back to pending, the attempt not counted, not to be claimed before
  /// `delay` has passed (a pending job's lease_until is its earliest start),
  /// with `why` as its error text meanwhile: a job that met a transient
  /// storage error (docs/server.md §Jobs). False when the claim was lost.
  core::Result<bool> retry_later(const Job& claim, std::chrono::milliseconds delay,
                                 std::string_view why);

  core::Result<std::optional<Job>> get(std::int64_t id);
  /// ListQuery.format filters by kind, .state by job state.
  core::Result<Page<Job>> list(const ListQuery& q);
  core::Result<std::int64_t> count(JobState state);

 private:
  /// Ends a claim in `state`; a job back to pending gives its attempt back
  /// and is not claimed again before `not_before` has passed.
  core::Result<bool> finish(const Job& claim, JobState state, std::string_view error,
                            std::chrono::milliseconds not_before = {});
  void notify_workers();
  Catalogue& cat_;
};

/// The PostgreSQL NOTIFY channel of a catalogue's job queue:
/// "charkit_jobs:" + the schema the tables live in (current_schema()), so
/// that catalogues in different schemas of one database do not wake each
/// other's workers; a schema name that would make the channel longer than
/// 63 bytes is replaced by the first 32 hex digits of its SHA-256.
std::string job_channel_for_schema(std::string_view schema);

/// Wakes idle workers when a job is enqueued or released: LISTEN on the
/// catalogue's job channel over a connection of its own
/// (docs/contracts/data-models.md §5). PostgreSQL only: for SQLite open()
/// gives nullptr, and workers rely on their in-process notify and poll.
class JobListener {
 public:
  /// Opens the connection and LISTENs; when this returns, every later
  /// enqueue on the same catalogue wakes wait().
  static core::Result<std::unique_ptr<JobListener>> open(std::string_view url,
                                                         CatalogueOptions options = {});
  ~JobListener();
  JobListener(const JobListener&) = delete;
  JobListener& operator=(const JobListener&) = delete;

  /// Waits at most `timeout` for a notification: true when one or more came
  /// (or the connection was re-established and some may have been missed),
  /// false on timeout or interrupt(). Errors: the connection is gone.
  core::Result<bool> wait(std::chrono::milliseconds timeout);
  /// Ends the current (or the next) wait() early; safe from any thread.
  void interrupt();
  const std::string& channel() const { return channel_; }

 private:
  JobListener() = default;
  std::unique_ptr<Catalogue> cat_;
  std::string channel_;
  int wake_fd_ = -1;
};

}  // namespace charkit::store
