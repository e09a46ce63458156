// The PostgreSQL connection of the catalogue (libpq): parameters sent as
// text next to the statement (PQexecParams), never spliced into it.
#include <libpq-fe.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "charkit/store/detail/sql_connection.h"
#include "charkit/store/error_codes.h"

namespace charkit::store::detail {
namespace {

using core::make_error;

// '?' → $1, $2 … (the catalogue's SQL has no '?' inside literals).
std::string renumber(std::string_view sql) {
  std::string out;
  out.reserve(sql.size() + 16);
  int n = 0;
  for (char c : sql) {
    if (c == '?') {
      out += '$';
      out += std::to_string(++n);
    } else {
      out += c;
    }
  }
  return out;
}

class PgConnection final : public Connection {
 public:
  PgConnection(PGconn* c, std::string schema) : c_(c), schema_(std::move(schema)) {}
  ~PgConnection() override { PQfinish(c_); }

  Dialect dialect() const override { return Dialect::postgresql; }

  core::Result<Rows> exec(std::string_view sql, std::span<const Value> params) override {
    // A server restart or dropped socket: reconnect once, but never in the
    // middle of a transaction (its work is gone; the caller must see the error).
    if (!in_tx_ && PQstatus(c_) != CONNECTION_OK) {
      if (auto s = reconnect(); !s) return std::move(s).error();
    }
    const std::string text = renumber(sql);
    std::vector<std::string> storage(params.size());
    std::vector<const char*> values(params.size(), nullptr);
    for (std::size_t i = 0; i < params.size(); ++i) {
      const Value& v = params[i];
      if (std::holds_alternative<std::monostate>(v)) continue;
      if (const auto* n = std::get_if<std::int64_t>(&v))
        storage[i] = std::to_string(*n);
      else if (const auto* d = std::get_if<double>(&v))
        storage[i] = real_text(*d);
      else
        storage[i] = std::get<std::string>(v);
      values[i] = storage[i].c_str();
    }
    PGresult* r = PQexecParams(c_, text.c_str(), static_cast<int>(params.size()), nullptr,
                               values.data(), nullptr, nullptr, 0);
    struct Clear {
      PGresult* r;
      ~Clear() { PQclear(r); }
    } clear{r};
    const ExecStatusType st = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
      std::string msg = r ? PQresultErrorMessage(r) : PQerrorMessage(c_);
      while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
      const char* state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : nullptr;
      return make_error(
          codes::CATALOGUE_SQL,
          "postgresql: " + msg + (state ? std::string(" (SQLSTATE ") + state + ")" : ""));
    }
    Rows out;
    const int nrows = PQntuples(r), ncols = PQnfields(r);
    out.rows.reserve(static_cast<std::size_t>(nrows));
    for (int i = 0; i < nrows; ++i) {
      Row row(static_cast<std::size_t>(ncols));
      for (int c = 0; c < ncols; ++c)
        if (!PQgetisnull(r, i, c))
          row[static_cast<std::size_t>(c)] =
              std::string(PQgetvalue(r, i, c), static_cast<std::size_t>(PQgetlength(r, i, c)));
      out.rows.push_back(std::move(row));
    }
    const char* tuples = PQcmdTuples(r);
    if (tuples && *tuples) std::from_chars(tuples, tuples + std::strlen(tuples), out.changes);
    return out;
  }

  core::Status begin_write() override {
    auto s = simple("BEGIN");
    in_tx_ = s.ok();
    return s;
  }
  core::Status commit() override {
    auto s = simple("COMMIT");
    in_tx_ = false;
    return s;
  }
  void rollback() override {
    if (PQstatus(c_) == CONNECTION_OK && PQtransactionStatus(c_) != PQTRANS_IDLE) {
      in_tx_ = false;  // let ROLLBACK itself run
      (void)simple("ROLLBACK");
    }
    in_tx_ = false;
  }

  bool has_notifications() const override { return true; }

  core::Status listen(const std::string& channel) override {
    if (auto s = listen_now(channel); !s) return s;
    channels_.push_back(channel);
    return core::Ok{};
  }

  core::Result<bool> wait_notification(std::chrono::milliseconds timeout, int wake_fd) override {
    if (PQstatus(c_) != CONNECTION_OK) {
      if (auto s = reconnect(); !s) return std::move(s).error();
      return true;  // notifications sent while it was down are lost: look for work
    }
    if (drain()) return true;
    pollfd fds[2] = {{PQsocket(c_), POLLIN, 0}, {wake_fd, POLLIN, 0}};
    const int n = ::poll(fds, wake_fd >= 0 ? 2 : 1,
                         static_cast<int>(std::clamp<long long>(timeout.count(), 0, 1 << 30)));
    if (n < 0) {
      if (errno == EINTR) return false;
      return make_error(codes::CATALOGUE_SQL, std::string("poll: ") + std::strerror(errno));
    }
    if (wake_fd >= 0 && (fds[1].revents & POLLIN)) {
      std::uint64_t v = 0;
      while (::read(wake_fd, &v, sizeof v) > 0) {
      }
    }
    if (fds[0].revents) {
      if (!PQconsumeInput(c_)) {
        if (auto s = reconnect(); !s) return std::move(s).error();
        return true;
      }
    }
    return drain();
  }

  /// Selects (creating when missing) the schema the tables live in.
  core::Status use_schema() {
    if (schema_.empty()) return core::Ok{};
    // Identifier checked by open_postgresql; schema names cannot be bound as parameters.
    const std::string create = "CREATE SCHEMA IF NOT EXISTS " + schema_;
    if (auto s = simple(create.c_str()); !s) {
      // Two connections creating the same schema at once: one loses the
      // race on the system catalogue's unique index; the schema exists either way.
      if (auto again = simple(create.c_str()); !again) return again;
    }
    const std::string path = "SET search_path TO " + schema_;
    return simple(path.c_str());
  }

  core::Status simple(const char* sql) {
    auto r = exec(sql, {});
    if (!r) return std::move(r).error();
    return core::Ok{};
  }

 private:
  core::Status reconnect() {
    PQreset(c_);
    if (PQstatus(c_) != CONNECTION_OK)
      return make_error(codes::CATALOGUE_OPEN,
                        "PostgreSQL connection lost and reconnecting failed");
    if (auto s = use_schema(); !s) return s;
    for (const auto& ch : channels_)
      if (auto s = listen_now(ch); !s) return s;
    return core::Ok{};
  }
  core::Status listen_now(const std::string& channel) {
    // A quoted identifier; the channel name is ours (jobs.cpp), quotes doubled anyway.
    std::string sql = "LISTEN \"";
    for (char ch : channel) sql += ch == '"' ? std::string("\"\"") : std::string(1, ch);
    sql += '"';
    return simple(sql.c_str());
  }
  /// Consumes the notifications libpq has buffered; true when there was one.
  bool drain() {
    bool any = false;
    while (PGnotify* n = PQnotifies(c_)) {
      any = true;
      PQfreemem(n);
    }
    return any;
  }
  std::vector<std::string> channels_;
  PGconn* c_;
  std::string schema_;
  bool in_tx_ = false;
};

void quiet(void*, const char*) {}

bool plain_identifier(const std::string& s) {
  if (s.empty() || s.size() > 63) return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  return !(s[0] >= '0' && s[0] <= '9');
}

}  // namespace

core::Result<std::unique_ptr<Connection>> open_postgresql(const std::string& url,
                                                          const std::string& schema) {
  if (!schema.empty() && !plain_identifier(schema))
    return make_error(codes::CATALOGUE_BAD_URL,
                      "schema name must be [a-z_][a-z0-9_]*: '" + schema + "'");
  PGconn* c = PQconnectdb(url.c_str());
  if (!c) return make_error(codes::CATALOGUE_OPEN, "libpq: out of memory");
  if (PQstatus(c) != CONNECTION_OK) {
    std::string msg = PQerrorMessage(c);
    while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
    PQfinish(c);
    return make_error(codes::CATALOGUE_OPEN, "cannot connect to PostgreSQL: " + msg);
  }
  PQsetNoticeProcessor(c, quiet, nullptr);
  auto conn = std::make_unique<PgConnection>(c, schema);
  if (auto s = conn->use_schema(); !s) return make_error(codes::CATALOGUE_OPEN, s.error().message);
  return std::unique_ptr<Connection>(std::move(conn));
}

}  // namespace charkit::store::detail
