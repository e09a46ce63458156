// API tokens of `charkit serve` (table `api_tokens`, schema version 2):
// bearer secrets with a scope, stored only as their SHA-256, revocable,
// listed with their last use. Contract: docs/contracts/data-models.md
// §Tokens; the server's use of them: docs/server.md §Access control.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "charkit/core/result.h"
#include "charkit/store/catalogue.h"

namespace charkit::store {

/// What a token may do; each scope includes the ones before it.
enum class Scope { read, write, admin };
std::string_view scope_name(Scope s);
std::optional<Scope> parse_scope(std::string_view s);
/// True when `have` includes `need` (admin ⊇ write ⊇ read).
inline bool scope_allows(Scope have, Scope need) {
  return static_cast<int>(have) >= static_cast<int>(need);
}

/// The secret's fixed prefix: "ckt_" then 43 base64url characters (256 random bits).
inline constexpr std::string_view kTokenPrefix = "ckt_";
inline constexpr std::size_t kTokenSecretLength = 4 + 43;

struct ApiToken {
  std::int64_t id = 0;
  std::string name;
  Scope scope = Scope::read;
  std::string hint;  ///< the secret's first 8 characters after "ckt_", to recognise it
  std::int64_t created_at = 0;
  std::optional<std::int64_t> last_used_at;  ///< Unix ms, updated at most once a minute
  std::optional<std::int64_t> revoked_at;
};

/// A browser session (table `api_sessions`, schema version 5): what the
/// console's login cookie holds instead of the API token it was opened with.
/// It has the scope of its token, ends at `expires_at`, and is revoked by
/// logging out or by revoking its token.
inline constexpr std::string_view kSessionPrefix = "cks_";
inline constexpr std::size_t kSessionSecretLength = 4 + 43;
struct ApiSession {
  std::int64_t id = 0;
  std::int64_t token_id = 0;
  std::string token_name;  ///< the token's name, for listings
  Scope scope = Scope::read;
  std::int64_t created_at = 0;
  std::int64_t expires_at = 0;
  std::optional<std::int64_t> last_used_at;  ///< Unix ms, updated at most once a minute
  std::optional<std::int64_t> revoked_at;
};
struct CreatedSession {
  ApiSession session;
  std::string secret;
};

/// A token just made: the only time its secret exists outside the client.
struct CreatedToken {
  ApiToken token;
  std::string secret;
};

class TokenStore {
 public:
  /// Uses the catalogue's connection and clock; the catalogue must outlive it.
  explicit TokenStore(Catalogue& catalogue) : cat_(catalogue) {}

  /// A new token; `name` is free text for people (≤ 200 bytes, valid UTF-8).
  /// Errors: TOKEN_INVALID (name), CRYPTO_RANDOM, CATALOGUE_SQL.
  core::Result<CreatedToken> create(Scope scope, std::string_view name);
  /// Every token, newest last; revoked ones too when include_revoked.
  core::Result<std::vector<ApiToken>> list(bool include_revoked = true);
  /// Revokes the token and every session opened with it; false when the id
  /// is unknown or already revoked.
  core::Result<bool> revoke(std::int64_t id);
  /// The live token a secret stands for: an API token's own secret, or a
  /// session's (kSessionPrefix) whose session has not ended and whose token
  /// is live. nullopt for an unknown, malformed, expired or revoked one.
  /// Records the use (at most once a minute per token or session).
  core::Result<std::optional<ApiToken>> verify(std::string_view secret);

  /// Opens a browser session for a live token, ending `lifetime_ms` from now.
  /// Sessions that ended over a day ago are deleted on the way. Errors:
  /// TOKEN_UNKNOWN (no live token with this id), CRYPTO_RANDOM, CATALOGUE_SQL.
  core::Result<CreatedSession> create_session(std::int64_t token_id, std::int64_t lifetime_ms);
  /// Ends the session with this secret (logout); false when none is open.
  core::Result<bool> revoke_session(std::string_view secret);
  /// Sessions, newest last: only the open ones unless include_ended.
  core::Result<std::vector<ApiSession>> list_sessions(bool include_ended = false);
  /// Tokens ever created (revoked ones too), or only those not revoked.
  core::Result<std::int64_t> count(bool active_only = false);

 private:
  core::Result<std::optional<ApiToken>> verify_session(std::string_view secret);
  Catalogue& cat_;
};

}  // namespace charkit::store
