// Access control of `charkit serve` (docs/server.md §Access control): which
// access each route needs, the client's credentials (a bearer token or the
// console's login cookie), the Host and Origin allow-lists that stop
// cross-site requests and DNS rebinding, the CORS policy, and a short-lived
// cache of token checks so that the catalogue is not asked on every request.
// Pure functions over untrusted header text: bounded, never throwing.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "charkit/server/detail/http_glue.h"
#include "charkit/store/tokens.h"

namespace charkit::server {

/// What a request needs. `open` routes (health, the console's static page,
/// login) need nothing; `metrics` is any valid token unless public. The
/// route table (detail/route_table.h) decides it per request.
enum class Access { open, read, write, admin, metrics };

/// The role a live connection asks for (`?role=publish` or `?role=view`,
/// decoded; the first `role` parameter counts): nullopt for anything else.
/// Access control (match_route) and the live route both decide through this
/// one function.
enum class LiveRoleRequest { publish, view };
std::optional<LiveRoleRequest> live_role(const QueryParams& params);

/// The login cookie's name: it holds a browser session's secret
/// (store::kSessionPrefix), never an API token.
inline constexpr std::string_view kSessionCookie = "charkit_session";

/// The secret of a request: `Authorization: Bearer SECRET` (scheme
/// case-insensitive; a token's or a session's), else the session cookie when
/// it holds a session secret; "" when neither.
std::string request_secret(std::string_view authorization, std::string_view cookie);
/// The session secret of the cookie header, "" when none.
std::string session_cookie(std::string_view cookie);

/// Who may talk to the server from a browser.
struct AccessPolicy {
  /// Host header values accepted (lower case, "name" or "name:port"); empty:
  /// any (a wildcard listen address with no --allowed-host).
  std::vector<std::string> hosts;
  /// Origins that may call the API cross-origin (CORS), exact
  /// "scheme://host[:port]" strings; the server's own origin is always fine.
  std::vector<std::string> cors_origins;
};

/// The default Host allow-list for a listen address and port: localhost
/// names, and the address itself unless it is a wildcard (0.0.0.0, ::).
std::vector<std::string> default_allowed_hosts(std::string_view address, std::uint16_t port);

/// True when the Host header names this server (case-insensitive; a Host
/// without a port matches a listed name with any port, and a listed name
/// without a port matches a Host of that name with any port).
bool host_allowed(const AccessPolicy& policy, std::string_view host);

/// How a request's Origin header stands: none (not a browser, or a
/// same-origin GET), same (Origin is http:// or https:// + this request's
/// Host), cors (an allowed other origin), forbidden.
enum class OriginCheck { none, same, cors, forbidden };
OriginCheck check_origin(const AccessPolicy& policy, std::string_view origin, std::string_view host,
                         bool tls);

/// Token checks remembered for a few seconds: a revoked token stops working
/// within `ttl` on every server, and a request costs no catalogue query
/// while its token is cached.
class AuthCache {
 public:
  explicit AuthCache(std::chrono::milliseconds ttl = std::chrono::seconds(5)) : ttl_(ttl) {}

  struct Decision {
    /// A token was ever created in the catalogue (revoking every token never
    /// opens the server again).
    bool tokens_exist = false;
    std::optional<store::Scope> scope;  ///< the secret's scope; nullopt: none or not valid
    /// The token the secret is (or whose session it is): per-token limits.
    std::optional<std::int64_t> token_id;
  };
  /// The cached decision for this secret, if fresh.
  std::optional<Decision> find(std::string_view secret);
  /// Asks the catalogue (blocking) and caches the answer; errors are not cached.
  core::Result<Decision> lookup(store::TokenStore& tokens, std::string_view secret);
  /// Forget everything (a token was revoked here).
  void clear();

 private:
  struct Entry {
    std::optional<store::Scope> scope;
    std::optional<std::int64_t> token_id;
    std::chrono::steady_clock::time_point expires;
  };
  std::chrono::milliseconds ttl_;
  std::mutex mu_;
  std::optional<bool> tokens_exist_;
  std::chrono::steady_clock::time_point tokens_checked_;
  std::map<std::string, Entry> entries_;  ///< by SHA-256 of the secret
};

}  // namespace charkit::server
