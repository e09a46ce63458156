// Query, target, Range and file-name parsing (http_glue.h).
#include "charkit/server/detail/http_glue.h"

#include <limits>

#include "charkit/core/ascii.h"
#include "charkit/core/utf8.h"
#include "charkit/server/error_codes.h"

namespace charkit::server {
namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/// Digits only, no sign; nullopt on overflow or empty.
std::optional<std::uint64_t> parse_u64(std::string_view s) {
  if (s.empty() || s.size() > 20) return std::nullopt;
  std::uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    auto d = static_cast<std::uint64_t>(c - '0');
    if (v > (std::numeric_limits<std::uint64_t>::max() - d) / 10) return std::nullopt;
    v = v * 10 + d;
  }
  return v;
}

/// Length of the valid UTF-8 sequence starting at s[i], 0 when invalid or
/// a C1 control character (U+0080..U+009F, encoded C2 80..C2 9F).
std::size_t utf8_sequence(std::string_view s, std::size_t i) {
  const std::size_t n = core::utf8_sequence_length(s, i);
  if (n == 2 && static_cast<unsigned char>(s[i]) == 0xC2 &&
      static_cast<unsigned char>(s[i + 1]) <= 0x9F)
    return 0;
  return n;
}

/// The next non-empty part of s split at sep, starting at pos (which moves
/// past the part and its separator); nullopt when no part is left.
std::optional<std::string_view> next_part(std::string_view s, char sep, std::size_t& pos) {
  while (pos <= s.size()) {
    std::size_t end = s.find(sep, pos);
    if (end == std::string_view::npos) end = s.size();
    std::string_view part = s.substr(pos, end - pos);
    pos = end + 1;
    if (!part.empty()) return part;
  }
  return std::nullopt;
}

}  // namespace

core::Result<std::string> percent_decode(std::string_view text, bool plus_is_space) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '%') {
      int hi = i + 1 < text.size() ? hex_value(text[i + 1]) : -1;
      int lo = i + 2 < text.size() ? hex_value(text[i + 2]) : -1;
      if (hi < 0 || lo < 0)
        return core::error_at_offset(codes::HTTP_BAD_ESCAPE,
                                     "'%' must be followed by two hex digits", i);
      char d = static_cast<char>(hi * 16 + lo);
      if (d == '\0')
        return core::error_at_offset(codes::HTTP_NUL, "a percent-escape decodes to a NUL byte", i);
      out.push_back(d);
      i += 2;
    } else if (c == '+' && plus_is_space) {
      out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  return out;
}

core::Result<QueryParams> parse_query(std::string_view query) {
  QueryParams params;
  std::size_t pos = 0;
  while (const auto part = next_part(query, '&', pos)) {
    if (params.size() >= kMaxQueryParams)
      return core::make_error(codes::HTTP_TOO_MANY_PARAMS,
                              "more than " + std::to_string(kMaxQueryParams) + " query parameters");
    std::size_t eq = part->find('=');
    auto name = percent_decode(part->substr(0, eq), true);
    if (!name) return std::move(name).error();
    std::string value;
    if (eq != std::string_view::npos) {
      auto v = percent_decode(part->substr(eq + 1), true);
      if (!v) return std::move(v).error();
      value = std::move(*v);
    }
    params.emplace_back(std::move(*name), std::move(value));
  }
  return params;
}

std::optional<std::string> query_value(const QueryParams& params, std::string_view name) {
  for (const auto& [k, v] : params)
    if (k == name) return v;
  return std::nullopt;
}

core::Result<Target> parse_target(std::string_view target) {
  if (target.empty() || target.front() != '/')
    return core::make_error(codes::HTTP_BAD_TARGET, "the request target must start with '/'");
  for (std::size_t i = 0; i < target.size(); ++i) {
    auto b = static_cast<unsigned char>(target[i]);
    if (b <= 0x20 || b == 0x7F)
      return core::error_at_offset(codes::HTTP_BAD_TARGET,
                                   "the request target holds a space or control byte", i);
  }
  Target t;
  std::size_t q = target.find('?');
  std::string_view path = target.substr(0, q);
  if (q != std::string_view::npos) {
    auto params = parse_query(target.substr(q + 1));
    if (!params) return std::move(params).error();
    t.params = std::move(*params);
  }
  std::size_t pos = 1;  // past the leading '/'
  while (const auto raw = next_part(path, '/', pos)) {
    auto seg = percent_decode(*raw, false);
    if (!seg) return std::move(seg).error();
    if (*seg == "." || *seg == ".." || seg->find('/') != std::string::npos ||
        seg->find('\\') != std::string::npos)
      return core::make_error(codes::HTTP_BAD_PATH, "path segment '" + *seg + "' is not allowed");
    t.segments.push_back(std::move(*seg));
  }
  return t;
}

std::optional<std::int64_t> parse_id(std::string_view text) {
  auto v = parse_u64(text);
  if (!v || *v == 0 || *v > (std::uint64_t{1} << 53)) return std::nullopt;
  return static_cast<std::int64_t>(*v);
}

bool is_sha256_hex(std::string_view text) {
  if (text.size() != 64) return false;
  for (char c : text)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

ByteRange parse_range(std::string_view header, std::uint64_t size) {
  ByteRange none;
  std::string_view h = core::trim_blanks(header);
  constexpr std::string_view kUnit = "bytes=";
  if (h.size() < kUnit.size()) return none;
  for (std::size_t i = 0; i < kUnit.size(); ++i)
    if (static_cast<char>(h[i] | 0x20) != kUnit[i] && h[i] != kUnit[i]) return none;
  std::string_view spec = core::trim_blanks(h.substr(kUnit.size()));
  if (spec.find(',') != std::string_view::npos) return none;  // several ranges: send it all
  std::size_t dash = spec.find('-');
  if (dash == std::string_view::npos) return none;
  std::string_view a = core::trim_blanks(spec.substr(0, dash));
  std::string_view b = core::trim_blanks(spec.substr(dash + 1));
  ByteRange r;
  if (a.empty()) {  // suffix: the last n bytes
    auto n = parse_u64(b);
    if (!n) return none;
    if (*n == 0 || size == 0) {
      r.kind = ByteRange::Kind::kUnsatisfiable;
      return r;
    }
    std::uint64_t len = *n < size ? *n : size;
    r.kind = ByteRange::Kind::kSatisfiable;
    r.first = size - len;
    r.last = size - 1;
    return r;
  }
  auto first = parse_u64(a);
  if (!first) return none;
  std::uint64_t last = 0;
  if (b.empty()) {
    last = size == 0 ? 0 : size - 1;
  } else {
    auto l = parse_u64(b);
    if (!l || *l < *first) return none;
    last = *l < size ? *l : (size == 0 ? 0 : size - 1);
  }
  if (*first >= size) {
    r.kind = ByteRange::Kind::kUnsatisfiable;
    return r;
  }
  r.kind = ByteRange::Kind::kSatisfiable;
  r.first = *first;
  r.last = last;
  return r;
}

std::string clean_file_name(std::string_view name) {
  std::size_t cut = name.find_last_of("/\\");
  if (cut != std::string_view::npos) name = name.substr(cut + 1);
  std::string out;
  for (std::size_t i = 0; i < name.size();) {
    auto b = static_cast<unsigned char>(name[i]);
    std::size_t n = utf8_sequence(name, i);
    if (n == 0) {
      ++i;  // invalid byte: dropped
      continue;
    }
    if (n == 1 && (b < 0x20 || b == 0x7F)) {
      ++i;
      continue;
    }
    if (out.empty() && n == 1 && b == ' ') {
      ++i;
      continue;
    }
    if (out.size() + n > kMaxFileNameBytes) break;
    out.append(name.substr(i, n));
    i += n;
  }
  while (!out.empty() && (out.back() == ' ')) out.pop_back();
  if (out == "." || out == "..") out.clear();
  return out;
}

}  // namespace charkit::server
