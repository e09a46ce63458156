// Access control (auth.h).
#include "charkit/server/detail/auth.h"

#include "charkit/core/ascii.h"
#include "charkit/core/sha256.h"

namespace charkit::server {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = core::ascii_lower(c);
  return out;
}

/// "host:port" → "host", "[::1]:8080" → "[::1]", "name" → "name".
std::string_view host_part(std::string_view host) {
  if (!host.empty() && host.front() == '[') {
    auto close = host.find(']');
    return close == std::string_view::npos ? host : host.substr(0, close + 1);
  }
  auto colon = host.rfind(':');
  return colon == std::string_view::npos ? host : host.substr(0, colon);
}

std::string digest(std::string_view secret) {
  return core::to_hex(core::sha256(
      core::Bytes(reinterpret_cast<const std::uint8_t*>(secret.data()), secret.size())));
}

}  // namespace

std::optional<LiveRoleRequest> live_role(const QueryParams& params) {
  const auto role = query_value(params, "role");
  if (role == "publish") return LiveRoleRequest::publish;
  if (role == "view") return LiveRoleRequest::view;
  return std::nullopt;
}

std::string session_cookie(std::string_view cookie) {
  // Cookie: name=value; name2=value2 (RFC 6265 §4.2.1).
  while (!cookie.empty()) {
    auto semi = cookie.find(';');
    auto pair = core::trim_blanks(cookie.substr(0, semi));
    cookie = semi == std::string_view::npos ? std::string_view() : cookie.substr(semi + 1);
    auto eq = pair.find('=');
    if (eq == std::string_view::npos) continue;
    if (core::trim_blanks(pair.substr(0, eq)) == kSessionCookie) {
      auto value = core::trim_blanks(pair.substr(eq + 1));
      if (value.size() >= 2 && value.front() == '"' && value.back() == '"')
        value = value.substr(1, value.size() - 2);
      // Only a session's secret: an API token never travels in a cookie.
      if (value.substr(0, store::kSessionPrefix.size()) != store::kSessionPrefix) continue;
      return std::string(value);
    }
  }
  return {};
}

std::string request_secret(std::string_view authorization, std::string_view cookie) {
  authorization = core::trim_blanks(authorization);
  if (authorization.size() > 7 && core::ascii_iequals(authorization.substr(0, 7), "bearer "))
    return std::string(core::trim_blanks(authorization.substr(7)));
  return session_cookie(cookie);
}

std::vector<std::string> default_allowed_hosts(std::string_view address, std::uint16_t port) {
  if (address == "0.0.0.0" || address == "::" || address == "[::]") return {};
  const std::string p = std::to_string(port);
  std::vector<std::string> hosts{"localhost:" + p, "127.0.0.1:" + p, "[::1]:" + p};
  std::string a = lower(address);
  if (a.find(':') != std::string::npos && a.front() != '[') a = "[" + a + "]";
  if (a != "127.0.0.1" && a != "[::1]" && a != "localhost") hosts.push_back(a + ":" + p);
  return hosts;
}

bool host_allowed(const AccessPolicy& policy, std::string_view host) {
  if (policy.hosts.empty()) return true;
  const std::string h = lower(core::trim_blanks(host));
  if (h.empty()) return false;
  const bool has_port = host_part(h).size() != h.size();
  for (const auto& allowed : policy.hosts) {
    if (h == allowed) return true;
    // A Host without a port (some clients leave out the default) matches by name.
    if (!has_port && host_part(allowed) == h) return true;
    // A listed name without a port (--allowed-host NAME) matches it on any
    // port: the name is what DNS rebinding cannot forge.
    if (has_port && host_part(allowed).size() == allowed.size() && host_part(h) == allowed)
      return true;
  }
  return false;
}

OriginCheck check_origin(const AccessPolicy& policy, std::string_view origin, std::string_view host,
                         bool tls) {
  origin = core::trim_blanks(origin);
  if (origin.empty()) return OriginCheck::none;
  const std::string o = lower(origin);
  // Same origin: the page came from this Host (and port). The scheme is not
  // compared: behind a TLS-terminating proxy the browser says https:// while
  // the server speaks plain HTTP, and one host:port serves only one scheme.
  const std::string h = lower(core::trim_blanks(host));
  (void)tls;
  for (std::string_view scheme : {"http://", "https://"})
    if (o.size() == scheme.size() + h.size() && o.compare(0, scheme.size(), scheme) == 0 &&
        o.compare(scheme.size(), std::string::npos, h) == 0 && !h.empty())
      return OriginCheck::same;
  for (const auto& allowed : policy.cors_origins)
    if (o == lower(allowed)) return OriginCheck::cors;
  return OriginCheck::forbidden;
}

std::optional<AuthCache::Decision> AuthCache::find(std::string_view secret) {
  std::lock_guard lock(mu_);
  const auto now = std::chrono::steady_clock::now();
  if (!tokens_exist_ || now - tokens_checked_ > ttl_) return std::nullopt;
  Decision d;
  d.tokens_exist = *tokens_exist_;
  if (secret.empty() || !d.tokens_exist) return d;
  auto it = entries_.find(digest(secret));
  if (it == entries_.end() || it->second.expires < now) return std::nullopt;
  d.scope = it->second.scope;
  d.token_id = it->second.token_id;
  return d;
}

core::Result<AuthCache::Decision> AuthCache::lookup(store::TokenStore& tokens,
                                                    std::string_view secret) {
  auto count = tokens.count();
  if (!count) return std::move(count).error();
  Decision d;
  d.tokens_exist = *count > 0;
  if (d.tokens_exist && !secret.empty()) {
    auto t = tokens.verify(secret);
    if (!t) return std::move(t).error();
    if (*t) {
      d.scope = (*t)->scope;
      d.token_id = (*t)->id;
    }
  }
  std::lock_guard lock(mu_);
  const auto now = std::chrono::steady_clock::now();
  tokens_exist_ = d.tokens_exist;
  tokens_checked_ = now;
  if (!secret.empty() && d.tokens_exist) {
    if (entries_.size() >= 4096) entries_.clear();  // bounded: random secrets cannot grow it
    entries_[digest(secret)] = Entry{d.scope, d.token_id, now + ttl_};
  }
  return d;
}

void AuthCache::clear() {
  std::lock_guard lock(mu_);
  tokens_exist_.reset();
  entries_.clear();
}

}  // namespace charkit::server
