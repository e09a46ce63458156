// Internal: what catalogue.cpp and jobs.cpp share — the connection, the
// lock that serialises one Catalogue's calls, transactions, row decoding.
#pragma once

#include <charconv>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "charkit/store/catalogue.h"
#include "charkit/store/detail/sql_connection.h"

namespace charkit::store {

struct Catalogue::Impl {
  std::unique_ptr<detail::Connection> conn;
  CatalogueOptions options;
  std::recursive_mutex mu;
  /// PostgreSQL: the job queue's NOTIFY channel, found on first use (jobs.cpp).
  std::string job_channel;

  /// Runs f() inside a write transaction; commits when f returns a value,
  /// rolls back on an error (f's or commit's).
  template <typename F>
  auto in_transaction(F&& f) -> decltype(f()) {
    if (auto b = conn->begin_write(); !b) return std::move(b).error();
    auto r = f();
    if (!r) {
      conn->rollback();
      return r;
    }
    if (auto c = conn->commit(); !c) {
      conn->rollback();
      return std::move(c).error();
    }
    return r;
  }
};

namespace detail {

inline std::int64_t to_i64(const std::optional<std::string>& cell) {
  std::int64_t v = 0;
  if (cell) std::from_chars(cell->data(), cell->data() + cell->size(), v);
  return v;
}
inline double to_f64(const std::optional<std::string>& cell) {
  double v = 0;
  if (cell) std::from_chars(cell->data(), cell->data() + cell->size(), v);
  return v;
}
inline std::string to_str(const std::optional<std::string>& cell) {
  return cell.value_or("");
}

}  // namespace detail
}  // namespace charkit::store
