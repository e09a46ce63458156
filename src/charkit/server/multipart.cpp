// multipart/form-data reading (multipart.h).
#include "charkit/server/detail/multipart.h"

#include <utility>
#include <vector>

#include "charkit/core/ascii.h"
#include "charkit/server/detail/http_glue.h"
#include "charkit/server/error_codes.h"

namespace charkit::server {
namespace {

using Params = std::vector<std::pair<std::string, std::string>>;

constexpr std::size_t kMaxHeaderParams = 16;
/// Transport padding allowed after a boundary (RFC 2046 §5.1.1: LWSP).
constexpr std::size_t kMaxPadding = 64;

/// RFC 9110 token characters.
bool is_tchar(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

/// `type; a=b; c="d"` → the type (lower case) and the parameters (names in
/// lower case). A quoted value ends at the next '"'.
core::Result<std::pair<std::string, Params>> parse_header_value(std::string_view s,
                                                                core::ErrorCode code) {
  auto bad = [&](std::string why) { return core::make_error(code, std::move(why)); };
  std::size_t pos = 0;
  const std::size_t n = s.size();
  auto skip_ows = [&] {
    while (pos < n && (s[pos] == ' ' || s[pos] == '\t')) ++pos;
  };
  skip_ows();
  std::size_t start = pos;
  while (pos < n && s[pos] != ';') ++pos;
  std::string type(core::trim_blanks(s.substr(start, pos - start)));
  for (char& c : type) c = core::ascii_lower(c);
  Params params;
  while (pos < n) {
    if (s[pos] != ';') return bad("expected ';' between parameters");
    ++pos;
    skip_ows();
    if (pos == n) break;  // a trailing ';'
    start = pos;
    while (pos < n && is_tchar(s[pos])) ++pos;
    if (pos == start) return bad("a parameter has no name");
    std::string name(s.substr(start, pos - start));
    for (char& c : name) c = core::ascii_lower(c);
    skip_ows();
    if (pos == n || s[pos] != '=') return bad("parameter '" + name + "' has no value");
    ++pos;
    skip_ows();
    std::string value;
    if (pos < n && s[pos] == '"') {
      auto close = s.find('"', pos + 1);
      if (close == std::string_view::npos) return bad("unterminated quoted value");
      value = std::string(s.substr(pos + 1, close - pos - 1));
      pos = close + 1;
    } else {
      start = pos;
      while (pos < n && s[pos] != ';' && s[pos] != ' ' && s[pos] != '\t') ++pos;
      value = std::string(s.substr(start, pos - start));
    }
    skip_ows();
    if (params.size() >= kMaxHeaderParams) return bad("too many parameters");
    params.emplace_back(std::move(name), std::move(value));
  }
  return std::pair{std::move(type), std::move(params)};
}

const std::string* param(const Params& p, std::string_view name) {
  for (const auto& [k, v] : p)
    if (k == name) return &v;
  return nullptr;
}

/// RFC 2046 §5.1.1 bchars (space allowed, but not last).
bool is_bchar(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  return std::string_view("'()+_,-./:=? ").find(c) != std::string_view::npos;
}

}  // namespace

bool is_multipart_form_data(std::string_view content_type) {
  auto semi = content_type.find(';');
  return core::ascii_iequals(core::trim_blanks(content_type.substr(0, semi)),
                             "multipart/form-data");
}

core::Result<std::string> multipart_boundary(std::string_view content_type) {
  if (!is_multipart_form_data(content_type))
    return core::make_error(codes::MULTIPART_NOT_FORM_DATA,
                            "the Content-Type is not multipart/form-data");
  auto parsed = parse_header_value(content_type, codes::MULTIPART_BAD_BOUNDARY);
  if (!parsed) return std::move(parsed).error();
  const std::string* b = param(parsed->second, "boundary");
  if (!b || b->empty())
    return core::make_error(codes::MULTIPART_BAD_BOUNDARY, "multipart/form-data needs a boundary");
  if (b->size() > kMaxBoundaryBytes)
    return core::make_error(codes::MULTIPART_BAD_BOUNDARY,
                            "the boundary is longer than 70 characters");
  for (char c : *b)
    if (!is_bchar(c))
      return core::make_error(codes::MULTIPART_BAD_BOUNDARY,
                              "the boundary holds a character RFC 2046 does not allow");
  if (b->back() == ' ')
    return core::make_error(codes::MULTIPART_BAD_BOUNDARY, "the boundary ends with a space");
  return *b;
}

core::Result<std::optional<std::string>> disposition_file_name(std::string_view value) {
  auto parsed = parse_header_value(value, codes::MULTIPART_BAD_DISPOSITION);
  if (!parsed) return std::move(parsed).error();
  if (parsed->first != "form-data")
    return core::make_error(codes::MULTIPART_BAD_DISPOSITION,
                            "a part's Content-Disposition must be form-data");
  if (const std::string* ext = param(parsed->second, "filename*")) {
    // RFC 5987: charset'language'percent-encoded; only UTF-8 is used here.
    auto q1 = ext->find('\'');
    auto q2 = q1 == std::string::npos ? q1 : ext->find('\'', q1 + 1);
    if (q2 == std::string::npos)
      return core::make_error(codes::MULTIPART_BAD_DISPOSITION,
                              "filename* is not charset'language'value");
    if (core::ascii_iequals(std::string_view(*ext).substr(0, q1), "utf-8")) {
      auto decoded = percent_decode(std::string_view(*ext).substr(q2 + 1), false);
      if (!decoded)
        return core::make_error(codes::MULTIPART_BAD_DISPOSITION,
                                "filename*: " + decoded.error().message);
      return std::optional<std::string>(std::move(*decoded));
    }
  }
  if (const std::string* name = param(parsed->second, "filename"))
    return std::optional<std::string>(*name);
  return std::optional<std::string>();
}

MultipartReader::MultipartReader(std::string boundary, Events events)
    : delimiter_("\r\n--" + boundary), events_(std::move(events)), buf_("\r\n") {
  // The virtual CRLF in buf_ lets the first boundary at the very start of the
  // body match the same delimiter as every later one.
}

core::Status MultipartReader::fail(core::ErrorCode code, std::string message) {
  return fail(core::make_error(code, std::move(message)));
}

core::Status MultipartReader::fail(core::Error error) {
  state_ = State::failed;
  error.location = core::Location::at_offset(consumed_ >= 2 ? consumed_ - 2 : 0);
  error_ = std::move(error);
  return *error_;
}

core::Status MultipartReader::emit(std::string_view bytes) {
  if (bytes.empty()) return core::Ok{};
  if (in_file_) {
    file_bytes_ += bytes.size();
    auto s = events_.on_file_data(bytes);
    if (!s) {
      state_ = State::failed;
      error_ = s.error();
    }
    return s;
  }
  field_bytes_ += bytes.size();
  if (field_bytes_ > kMaxFieldBytes)
    return fail(codes::MULTIPART_FIELD_TOO_LARGE, "form fields other than the file exceed " +
                                                      std::to_string(kMaxFieldBytes) + " bytes");
  return core::Ok{};
}

core::Status MultipartReader::feed(std::string_view bytes) {
  if (state_ == State::failed) return *error_;
  if (state_ == State::epilogue) return core::Ok{};  // after the close delimiter: ignored
  buf_.append(bytes);
  bool progressed = true;
  while (progressed) {
    progressed = false;
    auto s = step(progressed);
    if (!s) return s;
  }
  return core::Ok{};
}

core::Status MultipartReader::step(bool& progressed) {
  auto consume = [&](std::size_t n) {
    buf_.erase(0, n);
    consumed_ += n;
  };
  const std::size_t keep = delimiter_.size() - 1;  // a tail that may start a delimiter
  switch (state_) {
    case State::preamble: {
      auto pos = buf_.find(delimiter_);
      if (pos == std::string::npos) {
        if (buf_.size() > keep) {
          preamble_bytes_ += buf_.size() - keep;
          consume(buf_.size() - keep);
        }
        if (preamble_bytes_ > kMaxPreambleBytes)
          return fail(codes::MULTIPART_PREAMBLE_TOO_LARGE,
                      "no boundary in the first " + std::to_string(kMaxPreambleBytes) + " bytes");
        return core::Ok{};
      }
      preamble_bytes_ += pos;
      if (preamble_bytes_ > kMaxPreambleBytes)
        return fail(codes::MULTIPART_PREAMBLE_TOO_LARGE,
                    "no boundary in the first " + std::to_string(kMaxPreambleBytes) + " bytes");
      consume(pos + delimiter_.size());
      state_ = State::after_delimiter;
      progressed = true;
      return core::Ok{};
    }
    case State::after_delimiter: {
      if (buf_.empty()) return core::Ok{};
      if (buf_[0] == '-') {
        if (buf_.size() < 2) return core::Ok{};
        if (buf_[1] != '-')
          return fail(codes::MULTIPART_BAD_DELIMITER, "a boundary is followed by '-'");
        consume(2);
        buf_.clear();  // the epilogue is ignored
        state_ = State::epilogue;
        return core::Ok{};
      }
      std::size_t i = 0;
      while (i < buf_.size() && (buf_[i] == ' ' || buf_[i] == '\t')) ++i;
      if (i > kMaxPadding)
        return fail(codes::MULTIPART_BAD_DELIMITER, "too much padding after a boundary");
      if (buf_.size() < i + 2) return core::Ok{};
      if (buf_[i] != '\r' || buf_[i + 1] != '\n')
        return fail(codes::MULTIPART_BAD_DELIMITER, "a boundary is not followed by CRLF or \"--\"");
      consume(i + 2);
      if (++parts_ > kMaxParts)
        return fail(codes::MULTIPART_TOO_MANY_PARTS,
                    "more than " + std::to_string(kMaxParts) + " parts in one body");
      state_ = State::headers;
      progressed = true;
      return core::Ok{};
    }
    case State::headers: {
      std::size_t end = 0;
      std::string_view block;
      if (buf_.size() >= 2 && buf_[0] == '\r' && buf_[1] == '\n') {
        end = 2;  // no header lines at all
      } else {
        auto pos = buf_.find("\r\n\r\n");
        if (pos == std::string::npos || pos + 4 > kMaxPartHeaderBytes) {
          if (buf_.size() >= kMaxPartHeaderBytes || pos != std::string::npos)
            return fail(
                codes::MULTIPART_HEADER_TOO_LARGE,
                "a part's header block exceeds " + std::to_string(kMaxPartHeaderBytes) + " bytes");
          return core::Ok{};
        }
        block = std::string_view(buf_).substr(0, pos);
        end = pos + 4;
      }
      std::optional<std::string> file_name;
      bool disposition = false;
      while (!block.empty()) {
        auto eol = block.find("\r\n");
        std::string_view line = block.substr(0, eol);
        block = eol == std::string_view::npos ? std::string_view() : block.substr(eol + 2);
        if (line.empty() || line[0] == ' ' || line[0] == '\t')
          return fail(codes::MULTIPART_BAD_HEADER, "a folded or empty header line in a part");
        if (line.find_first_of("\r\n") != std::string_view::npos || line.find('\0') != line.npos)
          return fail(codes::MULTIPART_BAD_HEADER, "a bare CR, LF or NUL in a part's header");
        auto colon = line.find(':');
        if (colon == std::string_view::npos || colon == 0)
          return fail(codes::MULTIPART_BAD_HEADER, "a part's header line has no name");
        if (!core::ascii_iequals(core::trim_blanks(line.substr(0, colon)), "content-disposition"))
          continue;
        if (disposition)
          return fail(codes::MULTIPART_BAD_HEADER, "two Content-Disposition headers in one part");
        disposition = true;
        auto fn = disposition_file_name(core::trim_blanks(line.substr(colon + 1)));
        if (!fn) return fail(fn.error());
        file_name = std::move(*fn);
      }
      consume(end);
      in_file_ = file_name.has_value();
      if (in_file_) {
        if (file_seen_)
          return fail(codes::MULTIPART_TWO_FILES, "an upload holds exactly one file part");
        file_seen_ = true;
        auto s = events_.on_file_begin(*file_name);
        if (!s) {
          state_ = State::failed;
          error_ = s.error();
          return s;
        }
      }
      state_ = State::body;
      progressed = true;
      return core::Ok{};
    }
    case State::body: {
      auto pos = buf_.find(delimiter_);
      if (pos == std::string::npos) {
        if (buf_.size() > keep) {
          const std::size_t n = buf_.size() - keep;
          auto s = emit(std::string_view(buf_).substr(0, n));
          if (!s) return s;
          consume(n);
        }
        return core::Ok{};
      }
      auto s = emit(std::string_view(buf_).substr(0, pos));
      if (!s) return s;
      consume(pos + delimiter_.size());
      in_file_ = false;
      state_ = State::after_delimiter;
      progressed = true;
      return core::Ok{};
    }
    case State::epilogue:
      buf_.clear();
      return core::Ok{};
    case State::failed:
      return *error_;
  }
  return core::Ok{};
}

core::Status MultipartReader::finish() {
  if (state_ == State::failed) return *error_;
  if (state_ != State::epilogue)
    return fail(codes::MULTIPART_TRUNCATED, "the body ended before the closing boundary");
  if (!file_seen_) return fail(codes::MULTIPART_NO_FILE, "no part of the body holds a file");
  return core::Ok{};
}

}  // namespace charkit::server
