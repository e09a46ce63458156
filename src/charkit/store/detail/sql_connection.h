// Internal: the one seam between the catalogue's SQL and the two database
// client libraries (SQLite, libpq). Not installed, not for other modules.
#pragma once

#include <charconv>
#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <variant>
#include <vector>

#include "charkit/core/result.h"
#include "charkit/store/error_codes.h"

namespace charkit::store::detail {

enum class Dialect { sqlite, postgresql };

/// A statement parameter: NULL, integer, real or text.
using Value = std::variant<std::monostate, std::int64_t, double, std::string>;
/// A result row: one text cell per column (NULL = nullopt). Reals come as
/// the shortest text that reads back to the same double.
using Row = std::vector<std::optional<std::string>>;

/// The shortest text that reads back to the same double, as every
/// connection returns reals in a Row and binds them as text ("0" when the
/// value cannot be written, which std::to_chars never refuses for a finite
/// double with this buffer).
inline std::string real_text(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return ec == std::errc() ? std::string(buf, end) : std::string("0");
}

struct Rows {
  std::vector<Row> rows;
  std::int64_t changes = 0;  ///< rows changed by INSERT/UPDATE/DELETE
};

class Connection {
 public:
  virtual ~Connection() = default;
  virtual Dialect dialect() const = 0;
  /// Runs one statement written with '?' placeholders (the PostgreSQL
  /// connection renumbers them to $1…). Parameters are always bound, never
  /// spliced into the text.
  virtual core::Result<Rows> exec(std::string_view sql, std::span<const Value> params = {}) = 0;
  /// Starts a write transaction (SQLite: BEGIN IMMEDIATE, so the write lock
  /// is taken up front and the busy timeout applies; PostgreSQL: BEGIN).
  virtual core::Status begin_write() = 0;
  virtual core::Status commit() = 0;
  virtual void rollback() = 0;

  /// Notifications (PostgreSQL LISTEN/NOTIFY); SQLite has none.
  virtual bool has_notifications() const { return false; }
  /// LISTEN on `channel` (kept across reconnects).
  virtual core::Status listen(const std::string& channel) {
    (void)channel;
    return core::make_error(codes::CATALOGUE_UNSUPPORTED, "this database has no notifications");
  }
  /// Waits until a notification arrives, `wake_fd` (when ≥ 0) becomes
  /// readable, or `timeout` passes. true: one or more notifications came (all
  /// are consumed), or the connection was re-established (some may have been
  /// missed).
  virtual core::Result<bool> wait_notification(std::chrono::milliseconds timeout, int wake_fd) {
    (void)timeout;
    (void)wake_fd;
    return core::make_error(codes::CATALOGUE_UNSUPPORTED, "this database has no notifications");
  }
};

core::Result<std::unique_ptr<Connection>> open_sqlite(const std::string& path,
                                                      std::chrono::milliseconds busy_timeout);
core::Result<std::unique_ptr<Connection>> open_postgresql(const std::string& url,
                                                          const std::string& schema);

/// The concatenation of parts, for SQL text built from fragments.
inline std::string cat(std::initializer_list<std::string_view> parts) {
  std::string s;
  for (auto p : parts) s += p;
  return s;
}

}  // namespace charkit::store::detail
