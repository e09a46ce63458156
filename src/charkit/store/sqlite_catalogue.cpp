// The SQLite connection of the catalogue: WAL journal, busy timeout,
// foreign keys on, and its prepared statements kept by SQL text (the
// catalogue issues a few dozen distinct statements; preparing one costs
// more than running it, so every request after the first reuses them).
#include <sqlite3.h>

#include <cstring>
#include <string>
#include <unordered_map>

#include "charkit/store/detail/sql_connection.h"
#include "charkit/store/error_codes.h"

namespace charkit::store::detail {
namespace {

using core::make_error;

class SqliteConnection final : public Connection {
 public:
  explicit SqliteConnection(sqlite3* db) : db_(db) {}
  ~SqliteConnection() override {
    drop_statements();
    sqlite3_close_v2(db_);
  }

  Dialect dialect() const override { return Dialect::sqlite; }

  core::Result<Rows> exec(std::string_view sql, std::span<const Value> params) override {
    sqlite3_stmt* st = statement(sql);
    if (!st) return error("prepare");
    // Reset on every way out: a statement left mid-step would hold its read
    // transaction open; bindings are cleared so none leaks into the next use.
    struct Reset {
      sqlite3_stmt* s;
      ~Reset() {
        sqlite3_reset(s);
        sqlite3_clear_bindings(s);
      }
    } reset{st};
    for (std::size_t i = 0; i < params.size(); ++i) {
      const int idx = static_cast<int>(i + 1);
      int rc = SQLITE_OK;
      const Value& v = params[i];
      if (std::holds_alternative<std::monostate>(v)) {
        rc = sqlite3_bind_null(st, idx);
      } else if (const auto* n = std::get_if<std::int64_t>(&v)) {
        rc = sqlite3_bind_int64(st, idx, *n);
      } else if (const auto* d = std::get_if<double>(&v)) {
        rc = sqlite3_bind_double(st, idx, *d);
      } else {
        const auto& s = std::get<std::string>(v);
        rc = sqlite3_bind_text64(st, idx, s.data(), s.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
      }
      if (rc != SQLITE_OK) return error("bind");
    }
    Rows out;
    while (true) {
      const int rc = sqlite3_step(st);
      if (rc == SQLITE_DONE) break;
      if (rc != SQLITE_ROW) return error("step");
      const int n = sqlite3_column_count(st);
      Row row(static_cast<std::size_t>(n));
      for (int c = 0; c < n; ++c) {
        switch (sqlite3_column_type(st, c)) {
          case SQLITE_NULL:
            break;
          case SQLITE_INTEGER:
            row[static_cast<std::size_t>(c)] = std::to_string(sqlite3_column_int64(st, c));
            break;
          case SQLITE_FLOAT:
            row[static_cast<std::size_t>(c)] = real_text(sqlite3_column_double(st, c));
            break;
          default: {
            const auto* p = reinterpret_cast<const char*>(sqlite3_column_blob(st, c));
            const int len = sqlite3_column_bytes(st, c);
            row[static_cast<std::size_t>(c)] =
                std::string(p ? p : "", static_cast<std::size_t>(len));
          }
        }
      }
      out.rows.push_back(std::move(row));
    }
    out.changes = sqlite3_changes64(db_);
    return out;
  }

  core::Status begin_write() override { return simple("BEGIN IMMEDIATE"); }
  core::Status commit() override { return simple("COMMIT"); }
  void rollback() override {
    if (!sqlite3_get_autocommit(db_)) (void)simple("ROLLBACK");
  }

  core::Status simple(const char* sql) {
    char* msg = nullptr;
    if (sqlite3_exec(db_, sql, nullptr, nullptr, &msg) != SQLITE_OK) {
      std::string m = msg ? msg : "error";
      sqlite3_free(msg);
      return make_error(codes::CATALOGUE_SQL, std::string(sql) + ": " + m);
    }
    return core::Ok{};
  }

 private:
  /// The prepared statement for `sql`, prepared on first use; nullptr when
  /// SQLite refuses it (sqlite3_errmsg says why). Statements prepared with
  /// _v2 re-prepare themselves after a schema change (migrations).
  sqlite3_stmt* statement(std::string_view sql) {
    if (auto it = statements_.find(std::string(sql)); it != statements_.end()) return it->second;
    // Bounded: the catalogue's SQL is a fixed set, but a caller building
    // statements from data must not grow this without end.
    if (statements_.size() >= kMaxStatements) drop_statements();
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &st, nullptr) !=
            SQLITE_OK ||
        !st) {
      sqlite3_finalize(st);
      return nullptr;
    }
    statements_.emplace(std::string(sql), st);
    return st;
  }
  void drop_statements() {
    for (auto& [text, st] : statements_) sqlite3_finalize(st);
    statements_.clear();
  }

  core::Error error(const char* what) {
    return make_error(codes::CATALOGUE_SQL,
                      std::string("sqlite ") + what + ": " + sqlite3_errmsg(db_) + " (" +
                          std::to_string(sqlite3_extended_errcode(db_)) + ")");
  }
  static constexpr std::size_t kMaxStatements = 256;
  sqlite3* db_;
  std::unordered_map<std::string, sqlite3_stmt*> statements_;
};

}  // namespace

core::Result<std::unique_ptr<Connection>> open_sqlite(const std::string& path,
                                                      std::chrono::milliseconds busy_timeout) {
  sqlite3* db = nullptr;
  const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
  if (sqlite3_open_v2(path.c_str(), &db, flags, nullptr) != SQLITE_OK) {
    std::string m = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close_v2(db);
    return make_error(codes::CATALOGUE_OPEN, "cannot open SQLite database '" + path + "': " + m);
  }
  auto conn = std::make_unique<SqliteConnection>(db);
  sqlite3_busy_timeout(db, static_cast<int>(busy_timeout.count()));
  for (const char* pragma :
       {"PRAGMA journal_mode=WAL", "PRAGMA synchronous=NORMAL", "PRAGMA foreign_keys=ON"}) {
    if (auto s = conn->simple(pragma); !s)
      return make_error(codes::CATALOGUE_OPEN, "'" + path + "': " + s.error().message);
  }
  return std::unique_ptr<Connection>(std::move(conn));
}

}  // namespace charkit::store::detail
