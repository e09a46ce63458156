#include "charkit/store/jobs.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>

#include "charkit/core/enum_names.h"
#include "charkit/core/sha256.h"
#include "charkit/store/detail/catalogue_impl.h"
#include "charkit/store/error_codes.h"

namespace charkit::store {

using core::make_error;
using core::Result;
using detail::Dialect;
using detail::Row;
using detail::to_i64;
using detail::to_str;
using detail::Value;
using Params = std::vector<Value>;

namespace {

constexpr std::string_view kJobCols =
    "id, kind, payload, state, attempts, max_attempts, worker, lease_until, error, created_at, "
    "updated_at";

Job job_from(const Row& r) {
  Job j;
  j.id = to_i64(r[0]);
  j.kind = to_str(r[1]);
  j.payload = to_str(r[2]);
  j.state = parse_job_state(to_str(r[3])).value_or(JobState::pending);
  j.attempts = to_i64(r[4]);
  j.max_attempts = to_i64(r[5]);
  j.worker = to_str(r[6]);
  if (r[7]) j.lease_until = to_i64(r[7]);
  j.error = to_str(r[8]);
  j.created_at = to_i64(r[9]);
  j.updated_at = to_i64(r[10]);
  return j;
}

using detail::cat;

/// The job channel of this catalogue's connection (PostgreSQL), found once;
/// "" when it cannot be (the caller then only relies on polling).
const std::string& channel_of(detail::Connection& conn, std::string& cache) {
  if (cache.empty() && conn.dialect() == Dialect::postgresql) {
    auto r = conn.exec("SELECT current_schema()");
    if (r && !r->rows.empty() && r->rows[0][0]) cache = job_channel_for_schema(*r->rows[0][0]);
  }
  return cache;
}

}  // namespace

std::string job_channel_for_schema(std::string_view schema) {
  constexpr std::string_view kPrefix = "charkit_jobs:";
  bool plain = kPrefix.size() + schema.size() <= 63;
  for (char c : schema)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'))
      plain = false;
  if (plain) return std::string(kPrefix) + std::string(schema);
  auto digest = core::sha256(
      core::Bytes(reinterpret_cast<const std::uint8_t*>(schema.data()), schema.size()));
  return std::string(kPrefix) + core::to_hex(digest).substr(0, 32);
}

void JobQueue::notify_workers() {
  auto& impl = *cat_.impl_;
  if (impl.conn->dialect() != Dialect::postgresql) return;
  const std::string& channel = channel_of(*impl.conn, impl.job_channel);
  // Best effort: a lost notification only delays the job until the next poll.
  if (!channel.empty()) (void)impl.conn->exec("SELECT pg_notify(?, '')", Params{channel});
}

constexpr core::EnumNames<JobState, 4> kJobStates{{{{JobState::pending, "pending"},
                                                    {JobState::running, "running"},
                                                    {JobState::done, "done"},
                                                    {JobState::failed, "failed"}}}};

std::string_view job_state_name(JobState s) {
  return kJobStates.name(s);
}

std::optional<JobState> parse_job_state(std::string_view s) {
  return kJobStates.parse(s);
}

Result<Job> JobQueue::enqueue(std::string_view kind, std::string_view payload,
                              std::int64_t max_attempts) {
  if (kind.empty()) return make_error(codes::JOB_INVALID, "job kind must not be empty");
  if (max_attempts < 1) return make_error(codes::JOB_INVALID, "max_attempts must be at least 1");
  auto& impl = *cat_.impl_;
  std::lock_guard lock(impl.mu);
  const std::int64_t now = cat_.now_ms();
  auto r = impl.conn->exec(cat({"INSERT INTO jobs (kind, payload, state, attempts, max_attempts, "
                                "created_at, updated_at) "
                                "VALUES (?, ?, 'pending', 0, ?, ?, ?) RETURNING ",
                                kJobCols}),
                           Params{std::string(kind), std::string(payload), max_attempts, now, now});
  if (!r) return std::move(r).error();
  if (r->rows.empty()) return make_error(codes::CATALOGUE_SQL, "INSERT … RETURNING gave no row");
  notify_workers();  // after the INSERT committed: a woken worker sees the row
  return job_from(r->rows[0]);
}

Result<std::optional<Job>> JobQueue::claim(std::string_view worker, std::chrono::milliseconds lease,
                                           std::string_view kind) {
  if (worker.empty()) return make_error(codes::JOB_INVALID, "worker name must not be empty");
  if (lease.count() <= 0) return make_error(codes::JOB_INVALID, "lease must be positive");
  auto& impl = *cat_.impl_;
  std::lock_guard lock(impl.mu);
  auto& db = *impl.conn;
  const std::int64_t now = cat_.now_ms();
  // SQLite: BEGIN IMMEDIATE makes the select-and-update one writer at a
  // time. PostgreSQL: the row lock of FOR UPDATE SKIP LOCKED does, and
  // other claimers skip to the next row instead of waiting.
  const std::string_view lock_clause =
      db.dialect() == Dialect::postgresql ? " FOR UPDATE SKIP LOCKED" : "";
  const std::string kind_clause = kind.empty() ? "" : " AND kind = ?";
  return impl.in_transaction([&]() -> Result<std::optional<Job>> {
    auto reap = db.exec(
        "UPDATE jobs SET state = 'failed', error = 'lease expired after ' || attempts || "
        "' attempts', lease_until = NULL, updated_at = ? WHERE state = 'running' AND lease_until < "
        "? "
        "AND attempts >= max_attempts",
        Params{now, now});
    if (!reap) return std::move(reap).error();
    Params p{std::string(worker), now + lease.count(), now, now, now};
    if (!kind.empty()) p.emplace_back(std::string(kind));
    auto r = db.exec(
        cat({"UPDATE jobs SET state = 'running', worker = ?, attempts = attempts + 1, lease_until "
             "= ?, "
             "updated_at = ? WHERE id = (SELECT id FROM jobs WHERE ((state = 'pending' AND "
             "(lease_until IS NULL OR lease_until <= ?)) OR (state = "
             "'running' AND lease_until < ? AND attempts < max_attempts))",
             kind_clause, " ORDER BY id LIMIT 1", lock_clause, ") RETURNING ", kJobCols}),
        p);
    if (!r) return std::move(r).error();
    if (r->rows.empty()) return std::optional<Job>();
    return std::optional<Job>(job_from(r->rows[0]));
  });
}

Result<bool> JobQueue::heartbeat(const Job& claim, std::chrono::milliseconds lease) {
  auto& impl = *cat_.impl_;
  std::lock_guard lock(impl.mu);
  const std::int64_t now = cat_.now_ms();
  // A lease that already ran out is not renewed: another worker may hold the job now.
  auto r = impl.conn->exec(
      "UPDATE jobs SET lease_until = ?, updated_at = ? WHERE id = ? AND state = 'running' AND "
      "worker = ? AND attempts = ? AND lease_until >= ?",
      Params{now + lease.count(), now, claim.id, claim.worker, claim.attempts, now});
  if (!r) return std::move(r).error();
  return r->changes > 0;
}

Result<bool> JobQueue::finish(const Job& claim, JobState state, std::string_view error,
                              std::chrono::milliseconds not_before) {
  auto& impl = *cat_.impl_;
  std::lock_guard lock(impl.mu);
  const std::int64_t now = cat_.now_ms();
  const bool release = state == JobState::pending;
  // A pending job's lease_until is its earliest start (retry_later); NULL: at once.
  const Value lease = release && not_before.count() > 0 ? Value{now + not_before.count()} : Value{};
  auto r =
      impl.conn->exec(cat({"UPDATE jobs SET state = ?, error = ?, lease_until = ?, updated_at = ?",
                           release ? ", attempts = attempts - 1" : "",
                           " WHERE id = ? AND state = 'running' AND worker = ? AND attempts = ?"}),
                      Params{std::string(job_state_name(state)), std::string(error), lease, now,
                             claim.id, claim.worker, claim.attempts});
  if (!r) return std::move(r).error();
  return r->changes > 0;
}

Result<bool> JobQueue::complete(const Job& claim) {
  return finish(claim, JobState::done, "");
}
Result<bool> JobQueue::fail(const Job& claim, std::string_view error) {
  return finish(claim, JobState::failed, error);
}
Result<bool> JobQueue::release(const Job& claim) {
  auto r = finish(claim, JobState::pending, "");
  if (r && *r) {
    std::lock_guard lock(cat_.impl_->mu);
    notify_workers();
  }
  return r;
}

Result<bool> JobQueue::retry_later(const Job& claim, std::chrono::milliseconds delay,
                                   std::string_view why) {
  return finish(claim, JobState::pending, why, delay);
}

Result<std::optional<Job>> JobQueue::get(std::int64_t id) {
  auto& impl = *cat_.impl_;
  std::lock_guard lock(impl.mu);
  auto r =
      impl.conn->exec(cat({"SELECT ", kJobCols, " FROM jobs WHERE id = ?"}), Params{Value{id}});
  if (!r) return std::move(r).error();
  if (r->rows.empty()) return std::optional<Job>();
  return std::optional<Job>(job_from(r->rows[0]));
}

Result<Page<Job>> JobQueue::list(const ListQuery& q) {
  auto& impl = *cat_.impl_;
  std::lock_guard lock(impl.mu);
  auto& db = *impl.conn;
  std::string where;
  Params filter;
  if (!q.format.empty()) {
    where += " AND kind = ?";
    filter.emplace_back(q.format);
  }
  if (!q.state.empty()) {
    where += " AND state = ?";
    filter.emplace_back(q.state);
  }
  auto count = db.exec("SELECT COUNT(*) FROM jobs WHERE 1 = 1" + where, filter);
  if (!count) return std::move(count).error();
  const std::int64_t limit = std::clamp<std::int64_t>(q.limit, 1, 1000);
  Params p{q.after_id};
  p.insert(p.end(), filter.begin(), filter.end());
  p.emplace_back(limit + 1);
  auto rows = db.exec(
      cat({"SELECT ", kJobCols, " FROM jobs WHERE id > ?", where, " ORDER BY id LIMIT ?"}), p);
  if (!rows) return std::move(rows).error();
  Page<Job> page;
  page.total = to_i64(count->rows[0][0]);
  for (const Row& r : rows->rows) {
    if (static_cast<std::int64_t>(page.items.size()) == limit) {
      page.next_after_id = page.items.back().id;
      break;
    }
    page.items.push_back(job_from(r));
  }
  return page;
}

Result<std::int64_t> JobQueue::count(JobState state) {
  auto& impl = *cat_.impl_;
  std::lock_guard lock(impl.mu);
  auto r = impl.conn->exec("SELECT COUNT(*) FROM jobs WHERE state = ?",
                           Params{Value{std::string(job_state_name(state))}});
  if (!r) return std::move(r).error();
  return r->rows.empty() ? std::int64_t{0} : to_i64(r->rows[0][0]);
}

// ---- the listener -----------------------------------------------------------------

Result<std::unique_ptr<JobListener>> JobListener::open(std::string_view url,
                                                       CatalogueOptions options) {
  auto cat = Catalogue::open(url, std::move(options));
  if (!cat) return std::move(cat).error();
  auto& impl = *(*cat)->impl_;
  if (!impl.conn->has_notifications()) return std::unique_ptr<JobListener>();
  std::unique_ptr<JobListener> l(new JobListener());
  l->channel_ = channel_of(*impl.conn, impl.job_channel);
  if (l->channel_.empty())
    return make_error(codes::CATALOGUE_SQL, "cannot find the schema of the job queue");
  if (auto s = impl.conn->listen(l->channel_); !s) return std::move(s).error();
  l->wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (l->wake_fd_ < 0) return make_error(codes::CATALOGUE_SQL, "eventfd failed");
  l->cat_ = std::move(*cat);
  return l;
}

JobListener::~JobListener() {
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

Result<bool> JobListener::wait(std::chrono::milliseconds timeout) {
  auto& impl = *cat_->impl_;
  std::lock_guard lock(impl.mu);
  return impl.conn->wait_notification(timeout, wake_fd_);
}

void JobListener::interrupt() {
  const std::uint64_t one = 1;
  (void)!::write(wake_fd_, &one, sizeof one);
}

}  // namespace charkit::store
