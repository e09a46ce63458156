#include "charkit/store/detail/sigv4.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <ctime>

#include "charkit/core/sha256.h"

namespace charkit::store::sigv4 {
namespace {

using Key = std::array<std::uint8_t, 32>;

Key hmac(std::span<const std::uint8_t> key, std::string_view data) {
  Key out{};
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), out.data(), &len);
  return out;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

// Header values: leading and trailing blanks removed, runs of blanks inside
// reduced to one space (the SigV4 "Trimall").
std::string trim_all(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  bool blank = false;
  for (char c : v) {
    const bool is_blank = c == ' ' || c == '\t' || c == '\r' || c == '\n';
    if (is_blank) {
      blank = !out.empty();
      continue;
    }
    if (blank) out.push_back(' ');
    blank = false;
    out.push_back(c);
  }
  return out;
}

bool unreserved(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_' || c == '~';
}

// Canonical headers and the signed-header list, sorted by lower-case name;
// repeated names join their values with ',' in the order given.
std::pair<std::string, std::string> canonical_headers(const Pairs& headers) {
  std::vector<std::pair<std::string, std::string>> h;
  h.reserve(headers.size());
  for (const auto& [name, value] : headers) h.emplace_back(lower(trim_all(name)), trim_all(value));
  std::stable_sort(h.begin(), h.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string canon, names;
  for (std::size_t i = 0; i < h.size(); ++i) {
    if (i > 0 && h[i].first == h[i - 1].first) {
      canon.back() = ',';  // replaces the '\n' of the previous value
      canon += h[i].second + "\n";
      continue;
    }
    canon += h[i].first + ":" + h[i].second + "\n";
    if (!names.empty()) names += ';';
    names += h[i].first;
  }
  return {canon, names};
}

}  // namespace

std::string amz_date(std::chrono::system_clock::time_point t) {
  const std::time_t tt = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  ::gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

std::string uri_encode(std::string_view s, bool keep_slash) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (unreserved(c) || (keep_slash && c == '/')) {
      out.push_back(ch);
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

std::string canonical_query(const Pairs& query) {
  std::vector<std::pair<std::string, std::string>> q;
  q.reserve(query.size());
  for (const auto& [name, value] : query)
    q.emplace_back(uri_encode(name, false), uri_encode(value, false));
  std::sort(q.begin(), q.end());
  std::string out;
  for (const auto& [name, value] : q) {
    if (!out.empty()) out += '&';
    out += name + "=" + value;
  }
  return out;
}

std::string canonical_request(const Request& r) {
  const auto [headers, names] = canonical_headers(r.headers);
  return r.method + "\n" + uri_encode(r.path.empty() ? "/" : r.path, true) + "\n" +
         canonical_query(r.query) + "\n" + headers + "\n" + names + "\n" + r.payload_hash;
}

std::string string_to_sign(std::string_view date, const Scope& scope,
                           std::string_view canonical_request) {
  const std::string date8(date.substr(0, 8));
  return "AWS4-HMAC-SHA256\n" + std::string(date) + "\n" + date8 + "/" + scope.region + "/" +
         scope.service + "/aws4_request\n" +
         core::to_hex(core::sha256(core::as_bytes(canonical_request)));
}

std::array<std::uint8_t, 32> signing_key(std::string_view secret, std::string_view date8,
                                         const Scope& scope) {
  const std::string k = "AWS4" + std::string(secret);
  Key key = hmac(core::as_bytes(k), date8);
  key = hmac(key, scope.region);
  key = hmac(key, scope.service);
  return hmac(key, "aws4_request");
}

Signature sign(const Request& request, const Credentials& credentials, std::string_view date,
               const Scope& scope) {
  Signature s;
  s.canonical_request = canonical_request(request);
  s.signed_headers = canonical_headers(request.headers).second;
  s.string_to_sign = string_to_sign(date, scope, s.canonical_request);
  const Key key = signing_key(credentials.secret_access_key, date.substr(0, 8), scope);
  s.signature = core::to_hex(hmac(key, s.string_to_sign));
  s.authorization = "AWS4-HMAC-SHA256 Credential=" + credentials.access_key_id + "/" +
                    std::string(date.substr(0, 8)) + "/" + scope.region + "/" + scope.service +
                    "/aws4_request, SignedHeaders=" + s.signed_headers +
                    ", Signature=" + s.signature;
  return s;
}

}  // namespace charkit::store::sigv4
