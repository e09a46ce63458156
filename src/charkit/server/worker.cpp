// Job execution and the worker thread pool (worker.h).
#include "charkit/server/worker.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <limits>
#include <mutex>
#include <thread>
#include <vector>

#include "charkit/bem/validate.h"
#include "charkit/core/json.h"
#include "charkit/core/json_text.h"
#include "charkit/core/mapped_file.h"
#include "charkit/core/utf8.h"
#include "charkit/motion/assimp_motion.h"
#include "charkit/motion/convert.h"
#include "charkit/motion/convert_file.h"
#include "charkit/motion/error_codes.h"
#include "charkit/motion/format.h"
#include "charkit/motion/keypoint_json.h"
#include "charkit/scene/intake.h"
#include "charkit/server/error_codes.h"
#include "charkit/store/content_lock.h"
#include "charkit/store/error_codes.h"
#include "charkit/store/jobs.h"

namespace charkit::server {
namespace {

using core::Json;
using core::Status;

/// "CODE: message (location)", valid UTF-8: it is stored in the catalogue and
/// served as JSON, and messages may quote bytes of the input.
std::string error_text(const core::Error& e) {
  std::string s = e.code + ": " + e.message;
  if (!e.location.empty()) s += " (" + e.location.to_string() + ")";
  return core::to_valid_utf8(s);
}

core::Result<std::int64_t> payload_id(std::string_view payload) {
  auto j = core::parse_json_strict(payload);
  if (!j || !j->is_object() || !j->contains("id") || !(*j)["id"].is_number_integer())
    return core::make_error(codes::JOB_PAYLOAD, "job payload is not {\"id\": N}");
  return (*j)["id"].get<std::int64_t>();
}

/// Removes the blobs of assets whose last reference went, each under its
/// content lock and only if the bytes were not uploaded again meanwhile.
void remove_orphans(store::Catalogue& cat, const store::BlobStore& blobs,
                    const std::vector<store::Asset>& orphans) {
  (void)store::remove_orphan_blobs(cat, blobs, orphans);
}

core::Result<store::Asset> asset_of(store::Catalogue& cat, std::int64_t asset_id) {
  auto a = cat.get_asset(asset_id);
  if (!a) return std::move(a).error();
  if (!*a) return core::make_error(codes::JOB_ASSET_MISSING, "the record's asset row is gone");
  return std::move(**a);
}

bool cancelled(const std::atomic<bool>* cancel) {
  return cancel && cancel->load();
}

Status cancelled_error() {
  return core::make_error(kJobCancelled, "the worker is stopping");
}

/// Why the job's cancel flag is up (none when it is not).
JobStop stop_of(const JobContext& c) {
  if (!cancelled(c.cancel)) return JobStop::none;
  const JobStop why = c.stop ? c.stop->load() : JobStop::shutdown;
  return why == JobStop::none ? JobStop::shutdown : why;
}

std::uint64_t max_decoded_bytes(const JobContext& c) {
  if (c.budgets.max_decoded_bytes) return *c.budgets.max_decoded_bytes;
  const std::uint64_t upload = std::max<std::uint64_t>(c.max_upload_bytes, 1);
  const std::uint64_t cap = std::numeric_limits<std::uint64_t>::max() / kDecodedBytesPerUploadByte;
  return std::min(upload, cap) * kDecodedBytesPerUploadByte;
}

}  // namespace

std::uint64_t package_memory_budget(const JobBudgets& budgets, std::uint64_t package_bytes) {
  if (budgets.max_memory_bytes) return *budgets.max_memory_bytes;
  const std::uint64_t cap = std::numeric_limits<std::uint64_t>::max() / kMemoryPerPackageByte;
  return std::max(kMinJobMemoryBytes, std::min(package_bytes, cap) * kMemoryPerPackageByte);
}

namespace {

/// Whether error e sends the job back to the queue (its record to pending)
/// rather than failing it: a transient storage error within the job's
/// storage-retry window.
bool requeues(const JobContext& c, const core::Error& e) {
  return c.retry_storage && store::is_transient(e);
}

void note_budget(const JobContext& c, std::string_view code) {
  if (c.budget_code) *c.budget_code = std::string(code);
}

constexpr core::ErrorCode kBudgetTime = codes::JOB_BUDGET_TIME;

/// Without the code: the record's error line puts it in front.
std::string time_budget_message(const JobContext& c) {
  return "the job ran longer than its budget of " + std::to_string(c.budgets.timeout.count()) +
         " ms";
}

std::string time_budget_text(const JobContext& c) {
  return kBudgetTime.str() + ": " + time_budget_message(c);
}

// ---- motion.preprocess ------------------------------------------------------

struct NdjsonOut {
  std::uint64_t frames = 0;
  double fps = motion::kDefaultFps;
  std::vector<motion::BvhWarning> warnings;  ///< recorded on the motion
};

/// Converts the motion file into the upload. The content decides the path
/// (motion::detect_motion_file, as `charkit motion` judges the same file),
/// not the name's extension; `kind` tells which it was.
core::Result<NdjsonOut> convert_motion(const std::string& path, store::Upload& up,
                                       const JobContext& ctx, motion::MotionFileKind& kind) {
  const std::atomic<bool>* cancel = ctx.cancel;
  motion::OutputSink sink = [&up, cancel](std::string_view chunk) {
    if (cancelled(cancel)) return false;  // stopping: end the conversion
    auto s =
        up.write(core::Bytes(reinterpret_cast<const std::uint8_t*>(chunk.data()), chunk.size()));
    return s.ok();
  };
  motion::MotionFileOptions o;
  o.budget = motion::MotionBudget{ctx.budgets.max_joint_frames, ctx.budgets.max_output_bytes};
  o.cancel = cancel;
  auto r = motion::convert_motion_file(path, o, sink, &kind);
  if (!r) return std::move(r).error();
  return NdjsonOut{r->frames, r->fps, std::move(r->warnings)};
}

/// A library budget error (MOTION_BUDGET_X) as the job's (JOB_BUDGET_X).
core::Error as_job_budget(core::Error e) {
  constexpr std::pair<core::ErrorCode, core::ErrorCode> kBudgets[] = {
      {motion::codes::MOTION_BUDGET_JOINT_FRAMES, codes::JOB_BUDGET_JOINT_FRAMES},
      {motion::codes::MOTION_BUDGET_OUTPUT_BYTES, codes::JOB_BUDGET_OUTPUT_BYTES},
  };
  for (const auto& [library, job] : kBudgets) {
    if (e.code == library) e.code = job.str();
  }
  return e;
}

/// True for the codes of a job ended by one of its budgets.
bool is_job_budget(const core::Error& e) {
  return e.code == codes::JOB_BUDGET_TIME || e.code == codes::JOB_BUDGET_DECODED_BYTES ||
         e.code == codes::JOB_BUDGET_JOINT_FRAMES || e.code == codes::JOB_BUDGET_OUTPUT_BYTES;
}

/// The body of preprocess_motion (below), which settles the motion when this
/// returns an error.
Status convert_and_record_motion(std::int64_t id, const store::BlobStore& blobs,
                                 store::Catalogue& cat, const JobContext& ctx) {
  auto got = cat.get_motion(id);
  if (!got) return std::move(got).error();
  if (!*got) return core::Ok{};  // deleted meanwhile: nothing to do
  store::Motion m = std::move(**got);
  auto asset = asset_of(cat, m.asset_id);
  if (!asset) return std::move(asset).error();

  auto fail = [&](const core::Error& e) -> Status {
    m.preprocess_state = store::PreprocessState::failed;
    m.error = error_text(e);
    auto u = cat.update_motion(m);
    if (!u) return std::move(u).error();
    remove_orphans(cat, blobs, u->orphans);
    return core::Ok{};
  };
  auto timed_out = [&]() -> Status {
    note_budget(ctx, kBudgetTime);
    return fail(core::make_error(kBudgetTime, time_budget_message(ctx)));
  };
  // Stopped mid-way: on a graceful stop the motion is back to pending, as
  // its job will be; a lost claim leaves the record to its new owner.
  auto stopped = [&](JobStop why) -> Status {
    if (why == JobStop::timeout) return timed_out();
    if (why == JobStop::shutdown) {
      m.preprocess_state = store::PreprocessState::pending;
      m.error.clear();
      if (auto u = cat.update_motion(m); !u) return std::move(u).error();
    }
    return cancelled_error();
  };

  if (JobStop why = stop_of(ctx); why != JobStop::none) {
    if (why == JobStop::timeout) return timed_out();
    return cancelled_error();  // nothing begun, nothing to undo
  }
  m.preprocess_state = store::PreprocessState::running;
  m.error.clear();
  m.warnings.clear();
  if (auto u = cat.update_motion(m); !u) return std::move(u).error();

  // Storage that is out for a while: the motion waits as `pending` and the
  // error goes to the pool, which puts the job back in the queue.
  auto retry_or_fail = [&](const core::Error& e) -> Status {
    if (!requeues(ctx, e)) return fail(e);
    m.preprocess_state = store::PreprocessState::pending;
    m.error.clear();
    if (auto u = cat.update_motion(m); !u) return std::move(u).error();
    return e;
  };
  auto up = blobs.begin_upload(store::Kind::keypoints, "ndjson");
  if (!up) return fail(up.error());
  auto src = blobs.local_file(asset->storage_key);  // S3: a downloaded copy
  if (!src) {
    up->abort();
    return retry_or_fail(src.error());
  }
  motion::MotionFileKind kind = motion::MotionFileKind::kUnknown;  // `format` stays the name's
  auto out = convert_motion(src->path().string(), *up, ctx, kind);
  if (!out) {
    up->abort();
    if (JobStop why = stop_of(ctx); why != JobStop::none) return stopped(why);
    core::Error e = as_job_budget(std::move(out).error());
    if (is_job_budget(e)) note_budget(ctx, e.code);
    return fail(e);
  }
  // Converted, but stop() came first or the claim was lost: keep nothing
  // half-recorded. (A timeout this late lets the finished work count.)
  if (JobStop why = stop_of(ctx); why == JobStop::shutdown || why == JobStop::lost) {
    up->abort();
    return stopped(why);
  }
  // Publishing the keypoint blob and recording its asset happen under the
  // content's lock, so a deletion of the same bytes cannot remove the blob
  // in between (store/content_lock.h).
  auto lock = store::lock_content(cat, {up->digest()});
  if (!lock) {
    up->abort();
    return std::move(lock).error();  // busy or no database: the job fails, the motion with it
  }
  auto blob = up->commit();
  if (!blob) return retry_or_fail(blob.error());
  store::NewAsset na{blob->sha256,
                     store::Kind::keypoints,
                     "ndjson",
                     blob->size,
                     asset->original_name + ".keypoints.ndjson",
                     blob->key};
  auto kp = cat.put_asset(na);
  if (!kp) {
    if (!blob->reused) (void)blobs.remove(blob->key);  // nothing records it
    return fail(kp.error());
  }
  m.keypoints_asset_id = kp->record.id;
  m.frames = static_cast<std::int64_t>(out->frames);
  m.fps = out->fps;
  m.duration_s = out->fps > 0 ? static_cast<double>(out->frames) / out->fps : 0.0;
  for (auto& w : out->warnings) m.warnings.push_back({std::move(w.code), std::move(w.message)});
  m.preprocess_state = store::PreprocessState::done;
  auto u = cat.update_motion(m);
  if (!u) return std::move(u).error();
  lock->release();
  remove_orphans(cat, blobs, u->orphans);
  return core::Ok{};
}

/// Fails a motion still `pending` or `running` with the text of the error its
/// job fails with; one already done or failed (by an earlier run) is left.
void fail_with_job(std::int64_t id, const core::Error& e, const store::BlobStore& blobs,
                   store::Catalogue& cat) {
  auto got = cat.get_motion(id);  // as stored: no half-made result of the failed run
  if (!got || !*got) return;      // the database is unreachable too, or the motion went
  store::Motion m = std::move(**got);
  if (m.preprocess_state != store::PreprocessState::pending &&
      m.preprocess_state != store::PreprocessState::running)
    return;
  m.preprocess_state = store::PreprocessState::failed;
  m.error = error_text(e);
  auto u = cat.update_motion(m);
  if (u) remove_orphans(cat, blobs, u->orphans);
}

/// An error return fails the job for good (WorkerPool: JobQueue::fail, no
/// retry; only kJobCancelled is released back to pending), so the motion
/// fails with the same text instead of staying `running` (or `pending`)
/// forever: a busy content lock, a database error, the last update refused,
/// an exception. A cancelled run already put the motion back to pending (or
/// had not begun), and a lost claim leaves the record to the job's new owner.
Status preprocess_motion(std::int64_t id, const store::BlobStore& blobs, store::Catalogue& cat,
                         const JobContext& ctx) {
  Status s = core::Ok{};
  try {
    s = convert_and_record_motion(id, blobs, cat, ctx);
  } catch (const std::exception& e) {
    s = core::make_error(codes::JOB_EXCEPTION, e.what());  // as run_job would
  }
  if (!s && s.error().code != codes::JOB_CANCELLED && stop_of(ctx) != JobStop::lost &&
      !requeues(ctx, s.error()))
    fail_with_job(id, s.error(), blobs, cat);
  return s;
}

// ---- package.validate -------------------------------------------------------

std::string version_text(std::optional<int> minor) {
  return minor ? "1." + std::to_string(*minor) : std::string();
}

Status validate_package(std::int64_t id, const store::BlobStore& blobs, store::Catalogue& cat,
                        const JobContext& ctx) {
  auto got = cat.get_package(id);
  if (!got) return std::move(got).error();
  if (!*got) return core::Ok{};
  store::Package p = std::move(**got);
  auto asset = asset_of(cat, p.asset_id);
  if (!asset) return std::move(asset).error();
  auto local = blobs.local_file(asset->storage_key);  // S3: a downloaded copy
  // Storage out for a while: the package stays unvalidated, the job is requeued.
  if (!local && requeues(ctx, local.error())) return std::move(local).error();
  auto file = local ? core::MappedFile::open(local->path().string())
                    : core::Result<core::MappedFile>(local.error());
  Json report = Json::object();
  JobStop why = JobStop::none;
  if (!file) {
    p.validity = store::Validity::invalid;
    report["valid"] = false;
    report["ioError"] = Json{{"code", file.error().code}, {"message", file.error().message}};
  } else {
    bem::ValidateOptions options;
    options.input_hints = &*file;
    options.max_decoded_bytes = max_decoded_bytes(ctx);
    options.max_memory_bytes = package_memory_budget(ctx.budgets, file->bytes().size());
    options.cancel = ctx.cancel;
    bem::ValidationResult r = bem::validate_package(file->bytes(), options);
    why = stop_of(ctx);
    // A graceful stop or a lost claim: nothing is recorded (the package
    // stays unvalidated; the job goes back to the queue or to its new owner).
    if (why == JobStop::shutdown || why == JobStop::lost) return cancelled_error();
    const bem::ValidationSummary& s = r.summary;
    bool opened = s.kind != bem::ContainerKind::kBinary || s.declared_minor.has_value();
    p.container =
        opened ? bem::container_kind_name(s.kind) : bem::sniffed_container_name(file->bytes());
    bool single = opened && s.kind != bem::ContainerKind::kCollection;
    p.bem_version = single ? version_text(s.effective_minor) : std::string();
    p.validity = r.valid() ? store::Validity::valid : store::Validity::invalid;
    report["container"] = p.container;
    report["declaredVersion"] =
        s.declared_minor ? Json(version_text(s.declared_minor)) : Json(nullptr);
    report["effectiveVersion"] = single ? Json(version_text(s.effective_minor)) : Json(nullptr);
    report["neededVersion"] = single ? Json(version_text(s.needed_minor)) : Json(nullptr);
    report["payloadCount"] = s.payload_count;
    report["valid"] = r.valid();
    report["issues"] = Json::parse(r.report.to_json_issues());
    Json members = Json::array();
    for (const auto& mem : s.members)
      members.push_back(Json{{"name", mem.name},
                             {"effectiveVersion", version_text(mem.effective_minor)},
                             {"valid", !mem.report.has_errors()},
                             {"issues", Json::parse(mem.report.to_json_issues())}});
    report["members"] = std::move(members);
    report["decodedBytes"] = s.decoded_bytes;
    report["peakMemoryBytes"] = s.peak_memory_bytes;
    if (why == JobStop::timeout) {
      p.validity = store::Validity::invalid;
      report["valid"] = false;
      report["budget"] = Json{{"code", kBudgetTime.str()}, {"message", time_budget_message(ctx)}};
      note_budget(ctx, kBudgetTime);
    } else if (s.budget_exceeded) {
      report["budget"] = Json{
          {"code", codes::JOB_BUDGET_DECODED_BYTES},
          {"message", "validation stopped after decoding " + std::to_string(s.decoded_bytes) +
                          " bytes: the budget is " + std::to_string(options.max_decoded_bytes) +
                          " decoded bytes per package"}};
      note_budget(ctx, codes::JOB_BUDGET_DECODED_BYTES);
    } else if (s.memory_exceeded) {
      report["budget"] =
          Json{{"code", codes::JOB_BUDGET_MEMORY},
               {"message", "validation stopped: decoding would hold more than the budget of " +
                               std::to_string(options.max_memory_bytes) +
                               " bytes at once for this package"}};
      note_budget(ctx, codes::JOB_BUDGET_MEMORY);
    }
  }
  p.report_json = core::dump_json(report);
  auto u = cat.update_package(p);
  if (!u) return std::move(u).error();
  return core::Ok{};
}

// ---- model.intake -----------------------------------------------------------

Status intake_model(std::int64_t id, const store::BlobStore& blobs, store::Catalogue& cat,
                    const JobContext& ctx) {
  auto got = cat.get_model(id);
  if (!got) return std::move(got).error();
  if (!*got) return core::Ok{};
  store::Model m = std::move(**got);
  auto asset = asset_of(cat, m.asset_id);
  if (!asset) return std::move(asset).error();
  // One library call, not interruptible: a stop that came meanwhile
  // discards its answer (the job runs again), a timeout fails the model.
  auto local = blobs.local_file(asset->storage_key);  // S3: a downloaded copy
  if (!local && requeues(ctx, local.error())) {
    m.intake_state = store::PreprocessState::pending;  // waits for the storage
    m.error.clear();
    if (auto u = cat.update_model(m); !u) return std::move(u).error();
    return std::move(local).error();
  }
  auto info = local ? scene::inspect_model_file(local->path().string())
                    : core::Result<scene::ModelInfo>(local.error());
  const JobStop why = stop_of(ctx);
  if (why == JobStop::shutdown || why == JobStop::lost) return cancelled_error();
  if (why == JobStop::timeout) {
    note_budget(ctx, kBudgetTime);
    m.intake_state = store::PreprocessState::failed;
    m.error = time_budget_text(ctx);
  } else if (!info) {
    m.intake_state = store::PreprocessState::failed;
    m.error = error_text(info.error());
  } else {
    m.intake_state = store::PreprocessState::done;
    m.error.clear();
    m.skinned = info->skinned;
    if (info->vrm) {
      m.vrm_version = info->vrm->version;
      m.humanoid_bones = static_cast<std::int64_t>(info->vrm->humanoid_bones);
      m.name = info->vrm->title;
    }
  }
  auto u = cat.update_model(m);
  if (!u) return std::move(u).error();
  return core::Ok{};
}

}  // namespace

std::string job_payload(std::int64_t id) {
  return core::dump_json(Json{{"id", id}});
}

Status run_job(std::string_view kind, std::string_view payload, const store::BlobStore& blobs,
               store::Catalogue& catalogue, const JobContext& context) {
  auto id = payload_id(payload);
  if (!id) return std::move(id).error();
  try {
    if (kind == kJobMotionPreprocess) return preprocess_motion(*id, blobs, catalogue, context);
    if (stop_of(context) == JobStop::shutdown || stop_of(context) == JobStop::lost)
      return cancelled_error();
    if (kind == kJobPackageValidate) return validate_package(*id, blobs, catalogue, context);
    if (kind == kJobModelIntake) return intake_model(*id, blobs, catalogue, context);
  } catch (const std::exception& e) {
    return core::make_error(codes::JOB_EXCEPTION, e.what());
  }
  return core::make_error(codes::JOB_KIND, "unknown job kind '" + std::string(kind) + "'");
}

Status run_job(std::string_view kind, std::string_view payload, const store::BlobStore& blobs,
               store::Catalogue& catalogue, const std::atomic<bool>* cancel) {
  JobContext context;
  context.cancel = cancel;
  context.max_upload_bytes = blobs.max_bytes();
  return run_job(kind, payload, blobs, catalogue, context);
}

// ---- the pool ---------------------------------------------------------------

namespace {

using Clock = std::chrono::steady_clock;

/// One worker thread's running job, shared with the service thread.
struct Slot {
  std::mutex mutex;
  bool active = false;
  store::Job claim;
  Clock::time_point renewed;    ///< last claim or successful heartbeat
  Clock::time_point next_beat;  ///< when the service thread renews the lease
  Clock::time_point deadline;   ///< wall-time budget (max() = none)
  std::atomic<bool> cancel{false};
  std::atomic<JobStop> stop{JobStop::none};

  /// Raises the cancel flag for `why` unless it is up already (the first reason wins).
  void raise(JobStop why) {
    JobStop none = JobStop::none;
    if (stop.compare_exchange_strong(none, why)) cancel.store(true);
  }
};

struct Counters {
  std::atomic<std::uint64_t> claims{0}, retries{0}, completions{0}, failures{0}, releases{0},
      storage_retries{0}, lost_claims{0}, heartbeat_failures{0}, budget_failures{0},
      notifications{0};
};

}  // namespace

struct WorkerPool::Impl {
  WorkerPoolOptions options;
  std::vector<std::thread> threads;
  std::thread service;
  std::thread listening;  ///< PostgreSQL: waits for NOTIFY
  std::vector<std::unique_ptr<Slot>> slots;
  std::unique_ptr<store::Catalogue> service_cat;  ///< the heartbeats' connection
  std::unique_ptr<store::JobListener> listener;   ///< PostgreSQL: LISTEN (may be null)
  std::mutex mutex;
  std::condition_variable wake;          ///< idle worker threads
  std::condition_variable service_wake;  ///< the service and listener threads
  std::atomic<bool> stopping{false};
  std::atomic<bool> service_stopping{false};
  std::uint64_t generation = 0;  // bumped by notify()
  Counters counters;

  void log(const std::string& line) const {
    if (options.log) options.log(line);
  }
  /// How old the job is (since it was enqueued).
  static std::chrono::milliseconds age_of(const store::Job& j) {
    const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::system_clock::now().time_since_epoch());
    return std::max(std::chrono::milliseconds(0), now - std::chrono::milliseconds(j.created_at));
  }
  /// Whether a transient storage error may still send the job back to the queue.
  bool retry_window_open(const store::Job& j) const {
    return age_of(j) < options.storage_retry_window;
  }
  /// The wait before the job is claimed again: its age (so the waits double),
  /// at least 1 s, at most storage_retry_max_delay.
  std::chrono::milliseconds storage_retry_delay(const store::Job& j) const {
    return std::clamp(age_of(j), std::chrono::milliseconds(1000),
                      std::max(std::chrono::milliseconds(1000), options.storage_retry_max_delay));
  }
  std::chrono::milliseconds heartbeat_period() const {
    if (options.heartbeat.count() > 0) return options.heartbeat;
    return std::max(std::chrono::milliseconds(1), options.lease / 3);
  }
  void notify_workers() {
    {
      std::lock_guard lock(mutex);
      ++generation;
    }
    wake.notify_all();
  }

  // ---- a worker thread ----

  void run(unsigned index, std::unique_ptr<store::Catalogue> cat, store::BlobStore blobs) {
    store::JobQueue queue(*cat);
    Slot& slot = *slots[index];
    std::string worker =
        options.name + "-" + std::to_string(::getpid()) + "-" + std::to_string(index);
    while (!stopping.load()) {
      std::uint64_t seen = 0;
      {
        std::lock_guard lock(mutex);
        seen = generation;
      }
      auto job = queue.claim(worker, options.lease);
      if (job && *job) {
        run_claim(**job, slot, queue, *cat, blobs);
        continue;
      }
      if (!job) log("job claim failed: " + error_text(job.error()));
      const auto poll = listener ? options.notify_poll : options.idle_poll;
      std::unique_lock lock(mutex);
      wake.wait_for(lock, poll, [&] { return stopping.load() || generation != seen; });
    }
  }

  void run_claim(const store::Job& j, Slot& slot, store::JobQueue& queue, store::Catalogue& cat,
                 const store::BlobStore& blobs) {
    ++counters.claims;
    if (j.attempts > 1) {
      ++counters.retries;
      // The job was another worker's: if that one died mid-job its partial
      // temporary file stays until someone sweeps; this worker does now.
      blobs.remove_stale_temp_files();
    }
    const std::string name = "job " + std::to_string(j.id) + " " + j.kind;
    {
      std::lock_guard lock(slot.mutex);
      slot.claim = j;
      slot.stop = JobStop::none;
      slot.cancel = false;
      const auto now = Clock::now();
      slot.renewed = now;
      slot.next_beat = now + heartbeat_period();
      slot.deadline = options.budgets.timeout.count() > 0 ? now + options.budgets.timeout
                                                          : Clock::time_point::max();
      slot.active = true;
      if (stopping.load()) slot.raise(JobStop::shutdown);
    }
    std::string budget;
    Status s = core::Ok{};
    if (options.runner) {
      s = options.runner(j, slot.cancel);
    } else {
      JobContext ctx;
      ctx.cancel = &slot.cancel;
      ctx.stop = &slot.stop;
      ctx.budgets = options.budgets;
      ctx.max_upload_bytes = options.max_upload_bytes;
      ctx.budget_code = &budget;
      ctx.retry_storage = retry_window_open(j);
      s = run_job(j.kind, j.payload, blobs, cat, ctx);
    }
    // Out of the slot before the queue hears the result: a heartbeat that
    // fails after this point is no loss (the job is finished).
    JobStop why = JobStop::none;
    {
      std::lock_guard lock(slot.mutex);
      slot.active = false;
      why = slot.stop.load();
    }
    if (why == JobStop::lost) {
      // Counted by the service thread when the heartbeat was refused.
      log(name + ": claim lost (lease taken over); its result is discarded");
      return;
    }
    auto lost = [&](const core::Result<bool>& r, const char* what) {
      if (!r) {
        log(name + " " + what + " not recorded: " + error_text(r.error()));
        return;
      }
      if (!*r) {
        ++counters.lost_claims;
        log(name + ": claim lost before it was " + what + "; its result is discarded");
      }
    };
    if (s) {
      auto r = queue.complete(j);
      if (r && *r) {
        ++counters.completions;
        if (!budget.empty()) ++counters.budget_failures;
        log(name + " done" + (budget.empty() ? "" : " (ended by " + budget + ")"));
      }
      lost(r, "done");
    } else if (s.error().code == codes::JOB_CANCELLED && why == JobStop::timeout) {
      const std::string text = kBudgetTime.str() + ": the job ran longer than its budget of " +
                               std::to_string(options.budgets.timeout.count()) + " ms";
      auto r = queue.fail(j, text);
      if (r && *r) {
        ++counters.failures;
        ++counters.budget_failures;
        log(name + " failed: " + text);
      }
      lost(r, "failed");
    } else if (store::is_transient(s.error()) && retry_window_open(j)) {
      const auto delay = storage_retry_delay(j);
      auto r = queue.retry_later(j, delay, error_text(s.error()));
      if (r && *r) {
        ++counters.storage_retries;
        log(name + " back to the queue for " + std::to_string(delay.count()) +
            " ms: " + error_text(s.error()));
      }
      lost(r, "requeued");
    } else if (s.error().code == codes::JOB_CANCELLED) {
      // Graceful stop: back to the queue, the attempt not counted.
      auto r = queue.release(j);
      if (r && *r) {
        ++counters.releases;
        log(name + " returned to the queue");
      }
      lost(r, "released");
    } else {
      auto r = queue.fail(j, error_text(s.error()));
      if (r && *r) {
        ++counters.failures;
        log(name + " failed: " + error_text(s.error()));
      }
      lost(r, "failed");
    }
  }

  // ---- the service thread: heartbeats and deadlines ----

  void serve() {
    store::JobQueue queue(*service_cat);
    const auto period = heartbeat_period();
    // Deadlines are looked at this often at least; heartbeats come due at `period`.
    const auto tick = std::min<std::chrono::milliseconds>(period, std::chrono::milliseconds(250));
    while (!service_stopping.load()) {
      beat(queue, period);
      std::unique_lock lock(mutex);
      service_wake.wait_for(lock, tick, [&] { return service_stopping.load(); });
    }
  }

  // ---- the listener thread (PostgreSQL): NOTIFY wakes the idle workers ----
  // Apart from the heartbeats, so that a reconnect that blocks delays only
  // wake-ups (which the poll covers), never a lease renewal.

  void listen() {
    bool failing = false;
    while (!service_stopping.load()) {
      auto r = listener->wait(std::chrono::milliseconds(1000));
      if (!r) {
        if (!failing) log("job notifications interrupted, polling: " + error_text(r.error()));
        failing = true;
        std::unique_lock lock(mutex);
        service_wake.wait_for(lock, std::chrono::seconds(5),
                              [&] { return service_stopping.load(); });
        continue;
      }
      if (failing) log("job notifications back");
      failing = false;
      if (*r) {
        ++counters.notifications;
        notify_workers();
      }
    }
  }

  void beat(store::JobQueue& queue, std::chrono::milliseconds period) {
    for (auto& sp : slots) {
      Slot& slot = *sp;
      store::Job claim;
      {
        std::lock_guard lock(slot.mutex);
        if (!slot.active) continue;
        const auto now = Clock::now();
        if (now >= slot.deadline) slot.raise(JobStop::timeout);
        if (now < slot.next_beat) continue;
        claim = slot.claim;
      }
      auto r = queue.heartbeat(claim, options.lease);
      std::lock_guard lock(slot.mutex);
      // The job may have finished (or another one begun) meanwhile.
      if (!slot.active || slot.claim.id != claim.id || slot.claim.attempts != claim.attempts)
        continue;
      const auto now = Clock::now();
      if (r && *r) {
        slot.renewed = now;
        slot.next_beat = now + period;
      } else if (r) {
        // Refused: the lease ran out and another worker took the job, or it
        // was finished elsewhere. Stop; whatever this run makes is discarded.
        ++counters.lost_claims;
        slot.raise(JobStop::lost);
        log("job " + std::to_string(claim.id) + ": heartbeat refused, the claim is lost");
      } else {
        ++counters.heartbeat_failures;
        slot.next_beat = now + std::min(period, std::chrono::milliseconds(1000));
        // Unrenewed for a whole lease: another worker may hold the job by now.
        if (now - slot.renewed >= options.lease) {
          ++counters.lost_claims;
          slot.raise(JobStop::lost);
          log("job " + std::to_string(claim.id) + ": no heartbeat for a whole lease (" +
              error_text(r.error()) + "), the claim is given up");
        }
      }
    }
  }
};

core::Result<std::unique_ptr<WorkerPool>> WorkerPool::start(WorkerPoolOptions options) {
  std::unique_ptr<WorkerPool> pool(new WorkerPool());
  pool->impl_ = std::make_unique<Impl>();
  Impl& impl = *pool->impl_;
  impl.options = std::move(options);
  if (impl.options.lease.count() <= 0)
    return core::make_error(store::codes::JOB_INVALID, "the job lease must be positive");
  store::BlobStoreOptions bo;
  bo.max_bytes = std::max<std::uint64_t>(impl.options.max_upload_bytes, 1);
  // Keypoint files may be larger than an upload: allow the default maximum at least.
  bo.max_bytes = std::max(bo.max_bytes, store::kDefaultMaxUploadBytes);
  auto blobs = store::BlobStore::open(impl.options.blob_root, bo);
  if (!blobs) return std::move(blobs).error();
  store::CatalogueOptions co;
  co.pg_schema = impl.options.pg_schema;
  auto service_cat = store::Catalogue::open(impl.options.db_url, co);
  if (!service_cat) return std::move(service_cat).error();
  impl.service_cat = std::move(*service_cat);
  if (impl.options.listen && impl.options.threads > 0) {
    // LISTEN before the first claim: a job enqueued from now on wakes the pool.
    auto l = store::JobListener::open(impl.options.db_url, co);
    if (l)
      impl.listener = std::move(*l);
    else  // not fatal: the threads poll every idle_poll instead
      impl.log("job notifications unavailable, polling: " + error_text(l.error()));
  }
  for (unsigned i = 0; i < impl.options.threads; ++i)
    impl.slots.push_back(std::make_unique<Slot>());
  impl.service = std::thread([&impl] { impl.serve(); });
  if (impl.listener) impl.listening = std::thread([&impl] { impl.listen(); });
  for (unsigned i = 0; i < impl.options.threads; ++i) {
    auto cat = store::Catalogue::open(impl.options.db_url, co);
    if (!cat) {
      pool->stop();
      return std::move(cat).error();
    }
    impl.threads.emplace_back([&impl, i, c = std::move(*cat), b = *blobs]() mutable {
      impl.run(i, std::move(c), std::move(b));
    });
  }
  return pool;
}

WorkerPool::~WorkerPool() {
  stop();
}

void WorkerPool::notify() {
  if (!impl_) return;
  impl_->notify_workers();
}

void WorkerPool::request_stop() {
  if (!impl_) return;
  {
    std::lock_guard lock(impl_->mutex);  // no lost wake-up between a check and the wait
    impl_->stopping.store(true);
  }
  for (auto& slot : impl_->slots) {
    std::lock_guard lock(slot->mutex);
    if (slot->active) slot->raise(JobStop::shutdown);
  }
  impl_->wake.notify_all();
}

void WorkerPool::stop() {
  if (!impl_) return;
  request_stop();
  for (auto& t : impl_->threads)
    if (t.joinable()) t.join();
  impl_->threads.clear();
  // The service thread renews leases until the last job returned.
  {
    std::lock_guard lock(impl_->mutex);
    impl_->service_stopping.store(true);
  }
  impl_->service_wake.notify_all();
  if (impl_->listener) impl_->listener->interrupt();
  if (impl_->service.joinable()) impl_->service.join();
  if (impl_->listening.joinable()) impl_->listening.join();
}

WorkerPoolStats WorkerPool::stats() const {
  WorkerPoolStats s;
  if (!impl_) return s;
  const Counters& c = impl_->counters;
  s.claims = c.claims.load();
  s.retries = c.retries.load();
  s.completions = c.completions.load();
  s.failures = c.failures.load();
  s.releases = c.releases.load();
  s.storage_retries = c.storage_retries.load();
  s.lost_claims = c.lost_claims.load();
  s.heartbeat_failures = c.heartbeat_failures.load();
  s.budget_failures = c.budget_failures.load();
  s.notifications = c.notifications.load();
  return s;
}

}  // namespace charkit::server
