// API tokens (tokens.h).
#include "charkit/store/tokens.h"

#include <array>

#include "charkit/core/base64.h"
#include "charkit/core/enum_names.h"
#include "charkit/core/random.h"
#include "charkit/core/sha256.h"
#include "charkit/core/utf8.h"
#include "charkit/store/detail/catalogue_impl.h"

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

bool well_formed(std::string_view secret) {
  if (secret.size() != kTokenSecretLength || secret.substr(0, kTokenPrefix.size()) != kTokenPrefix)
    return false;
  for (char c : secret.substr(kTokenPrefix.size()))
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
    return make_error("TOKEN_INVALID", "a token name is at most 200 bytes of UTF-8");
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
  if (r->rows.empty()) return make_error("CATALOGUE_SQL", "INSERT returned no row");
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
  auto r =
      impl.conn->exec("UPDATE api_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
                      Params{cat_.now_ms(), id});
  if (!r) return std::move(r).error();
  return r->changes > 0;
}

Result<std::optional<ApiToken>> TokenStore::verify(std::string_view secret) {
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
