// API tokens (tokens.h).
#include "charkit/store/tokens.h"

#include <array>

#include "charkit/core/base64.h"
#include "charkit/core/enum_names.h"
#include "charkit/core/random.h"
#include "charkit/core/sha256.h"
#include "charkit/core/utf8.h"
#include "charkit/store/detail/catalogue_impl.h"
#include "charkit/store/error_codes.h"

namespace charkit::store {

using core::make_error;
using core::Result;
using detail::Row;
using detail::to_i64;
using detail::to_str;
using detail::Value;
using Params = std::vector<Value>;

namespace {

constexpr std::string_view kCols = "id, name, scope, hint, created_at, last_used_at, revoked_at";
constexpr std::int64_t kUseResolutionMs = 60'000;

ApiToken token_from(const Row& r) {
  ApiToken t;
  t.id = to_i64(r[0]);
  t.name = to_str(r[1]);
  t.scope = parse_scope(to_str(r[2])).value_or(Scope::read);
  t.hint = to_str(r[3]);
  t.created_at = to_i64(r[4]);
  if (r[5]) t.last_used_at = to_i64(r[5]);
  if (r[6]) t.revoked_at = to_i64(r[6]);
  return t;
}

std::string secret_digest(std::string_view secret) {
  return core::to_hex(core::sha256(
      core::Bytes(reinterpret_cast<const std::uint8_t*>(secret.data()), secret.size())));
}

bool well_formed(std::string_view secret, std::string_view prefix = kTokenPrefix) {
  static_assert(kTokenSecretLength == kSessionSecretLength && kTokenPrefix.size() == 4 &&
                kSessionPrefix.size() == 4);
  if (secret.size() != kTokenSecretLength || secret.substr(0, prefix.size()) != prefix)
    return false;
  for (char c : secret.substr(prefix.size()))
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
          c == '_'))
      return false;
  return true;
}

}  // namespace

constexpr core::EnumNames<Scope, 3> kScopes{
    {{{Scope::read, "read"}, {Scope::write, "write"}, {Scope::admin, "admin"}}}};

std::string_view scope_name(Scope s) {
  return kScopes.name(s);
}

std::optional<Scope> parse_scope(std::string_view s) {
  return kScopes.parse(s);
}

Result<CreatedToken> TokenStore::create(Scope scope, std::string_view name) {
  if (name.size() > 200 || !core::is_valid_utf8(name))
    return make_error(codes::TOKEN_INVALID, "a token name is at most 200 bytes of UTF-8");
  std::array<std::uint8_t, 32> raw{};
  if (auto s = core::secure_random_bytes(raw); !s) return std::move(s).error();
  CreatedToken out;
  out.secret = std::string(kTokenPrefix) + core::base64url(raw);
  auto& impl = *cat_.impl_;
  std::lock_guard lock(impl.mu);
  const std::int64_t now = cat_.now_ms();
  auto r = impl.conn->exec(
      "INSERT INTO api_tokens (name, scope, secret_sha256, hint, created_at) VALUES (?, ?, ?, ?, "
      "?) RETURNING " +
          std::string(kCols),
      Params{std::string(name), std::string(scope_name(scope)), secret_digest(out.secret),
             out.secret.substr(kTokenPrefix.size(), 8), now});
  if (!r) return std::move(r).error();
  if (r->rows.empty()) return make_error(codes::CATALOGUE_SQL, "INSERT returned no row");
  out.token = token_from(r->rows[0]);
  return out;
}

Result<std::vector<ApiToken>> TokenStore::list(bool include_revoked) {
  auto& impl = *cat_.impl_;
  std::lock_guard lock(impl.mu);
  auto r = impl.conn->exec("SELECT " + std::string(kCols) + " FROM api_tokens" +
                           (include_revoked ? "" : " WHERE revoked_at IS NULL") + " ORDER BY id");
  if (!r) return std::move(r).error();
  std::vector<ApiToken> out;
  for (const auto& row : r->rows) out.push_back(token_from(row));
  return out;
}

Result<bool> TokenStore::revoke(std::int64_t id) {
  auto& impl = *cat_.impl_;
  std::lock_guard lock(impl.mu);
  const std::int64_t now = cat_.now_ms();
  auto r = impl.conn->exec(
      "UPDATE api_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", Params{now, id});
  if (!r) return std::move(r).error();
  // Its sessions end with it (verify also checks the token, so a session is
  // never honoured past its token even between these two statements).
  auto s = impl.conn->exec(
      "UPDATE api_sessions SET revoked_at = ? WHERE token_id = ? AND revoked_at IS NULL",
      Params{now, id});
  if (!s) return std::move(s).error();
  return r->changes > 0;
}

namespace {

constexpr std::string_view kSessionCols =
    "s.id, s.token_id, t.name, t.scope, s.created_at, s.expires_at, s.last_used_at, s.revoked_at";
constexpr std::int64_t kEndedSessionKeptMs = 24 * 3600 * 1000;

ApiSession session_from(const Row& r) {
  ApiSession s;
  s.id = to_i64(r[0]);
  s.token_id = to_i64(r[1]);
  s.token_name = to_str(r[2]);
  s.scope = parse_scope(to_str(r[3])).value_or(Scope::read);
  s.created_at = to_i64(r[4]);
  s.expires_at = to_i64(r[5]);
  if (r[6]) s.last_used_at = to_i64(r[6]);
  if (r[7]) s.revoked_at = to_i64(r[7]);
  return s;
}

}  // namespace

Result<CreatedSession> TokenStore::create_session(std::int64_t token_id, std::int64_t lifetime_ms) {
  if (lifetime_ms <= 0) return make_error(codes::TOKEN_INVALID, "a session's lifetime must be > 0");
  std::array<std::uint8_t, 32> raw{};
  if (auto s = core::secure_random_bytes(raw); !s) return std::move(s).error();
  CreatedSession out;
  out.secret = std::string(kSessionPrefix) + core::base64url(raw);
  auto& impl = *cat_.impl_;
  std::lock_guard lock(impl.mu);
  const std::int64_t now = cat_.now_ms();
  auto live = impl.conn->exec("SELECT 1 FROM api_tokens WHERE id = ? AND revoked_at IS NULL",
                              Params{token_id});
  if (!live) return std::move(live).error();
  if (live->rows.empty())
    return make_error(codes::TOKEN_UNKNOWN, "no active token with id " + std::to_string(token_id));
  auto gc = impl.conn->exec(
      "DELETE FROM api_sessions WHERE expires_at < ? OR (revoked_at IS NOT NULL AND revoked_at < "
      "?)",
      Params{now - kEndedSessionKeptMs, now - kEndedSessionKeptMs});
  if (!gc) return std::move(gc).error();
  const std::int64_t expires = lifetime_ms > INT64_MAX - now ? INT64_MAX : now + lifetime_ms;
  auto r = impl.conn->exec(
      "INSERT INTO api_sessions (token_id, secret_sha256, created_at, expires_at) VALUES (?, ?, ?, "
      "?) RETURNING id",
      Params{token_id, secret_digest(out.secret), now, expires});
  if (!r) return std::move(r).error();
  if (r->rows.empty()) return make_error(codes::CATALOGUE_SQL, "INSERT returned no row");
  auto row = impl.conn->exec("SELECT " + std::string(kSessionCols) +
                                 " FROM api_sessions s JOIN api_tokens t ON t.id = s.token_id "
                                 "WHERE s.id = ?",
                             Params{to_i64(r->rows[0][0])});
  if (!row) return std::move(row).error();
  if (row->rows.empty()) return make_error(codes::CATALOGUE_SQL, "the new session is not there");
  out.session = session_from(row->rows[0]);
  return out;
}

Result<std::optional<ApiToken>> TokenStore::verify_session(std::string_view secret) {
  auto& impl = *cat_.impl_;
  std::lock_guard lock(impl.mu);
  const std::int64_t now = cat_.now_ms();
  auto r = impl.conn->exec(
      "SELECT s.id, s.last_used_at, t.id, t.name, t.scope, t.hint, t.created_at, t.last_used_at, "
      "t.revoked_at FROM api_sessions s JOIN api_tokens t ON t.id = s.token_id WHERE "
      "s.secret_sha256 = ? "
      "AND s.revoked_at IS NULL AND s.expires_at > ? AND t.revoked_at IS NULL",
      Params{secret_digest(secret), now});
  if (!r) return std::move(r).error();
  if (r->rows.empty()) return std::optional<ApiToken>();
  const Row& row = r->rows[0];
  const std::int64_t session_id = to_i64(row[0]);
  if (!row[1] || now - to_i64(row[1]) >= kUseResolutionMs) {
    auto u = impl.conn->exec("UPDATE api_sessions SET last_used_at = ? WHERE id = ?",
                             Params{now, session_id});
    if (!u) return std::move(u).error();
  }
  return std::optional<ApiToken>(token_from(Row(row.begin() + 2, row.end())));
}

Result<bool> TokenStore::revoke_session(std::string_view secret) {
  if (!well_formed(secret, kSessionPrefix)) return false;
  auto& impl = *cat_.impl_;
  std::lock_guard lock(impl.mu);
  auto r = impl.conn->exec(
      "UPDATE api_sessions SET revoked_at = ? WHERE secret_sha256 = ? AND revoked_at IS NULL",
      Params{cat_.now_ms(), secret_digest(secret)});
  if (!r) return std::move(r).error();
  return r->changes > 0;
}

Result<std::vector<ApiSession>> TokenStore::list_sessions(bool include_ended) {
  auto& impl = *cat_.impl_;
  std::lock_guard lock(impl.mu);
  std::string sql = "SELECT " + std::string(kSessionCols) +
                    " FROM api_sessions s JOIN api_tokens t ON t.id = s.token_id";
  Params params;
  if (!include_ended) {
    sql += " WHERE s.revoked_at IS NULL AND s.expires_at > ? AND t.revoked_at IS NULL";
    params.push_back(cat_.now_ms());
  }
  auto r = impl.conn->exec(sql + " ORDER BY s.id", params);
  if (!r) return std::move(r).error();
  std::vector<ApiSession> out;
  for (const auto& row : r->rows) out.push_back(session_from(row));
  return out;
}

Result<std::optional<ApiToken>> TokenStore::verify(std::string_view secret) {
  if (well_formed(secret, kSessionPrefix)) return verify_session(secret);
  if (!well_formed(secret)) return std::optional<ApiToken>();
  auto& impl = *cat_.impl_;
  std::lock_guard lock(impl.mu);
  auto r = impl.conn->exec("SELECT " + std::string(kCols) +
                               " FROM api_tokens WHERE secret_sha256 = ? AND revoked_at IS NULL",
                           Params{secret_digest(secret)});
  if (!r) return std::move(r).error();
  if (r->rows.empty()) return std::optional<ApiToken>();
  ApiToken t = token_from(r->rows[0]);
  const std::int64_t now = cat_.now_ms();
  if (!t.last_used_at || now - *t.last_used_at >= kUseResolutionMs) {
    auto u =
        impl.conn->exec("UPDATE api_tokens SET last_used_at = ? WHERE id = ?", Params{now, t.id});
    if (!u) return std::move(u).error();
    t.last_used_at = now;
  }
  return std::optional<ApiToken>(std::move(t));
}

Result<std::int64_t> TokenStore::count(bool active_only) {
  auto& impl = *cat_.impl_;
  std::lock_guard lock(impl.mu);
  auto r = impl.conn->exec(active_only ? "SELECT COUNT(*) FROM api_tokens WHERE revoked_at IS NULL"
                                       : "SELECT COUNT(*) FROM api_tokens");
  if (!r) return std::move(r).error();
  return r->rows.empty() ? 0 : to_i64(r->rows[0][0]);
}

}  // namespace charkit::store
