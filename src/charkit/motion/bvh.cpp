#include "charkit/motion/bvh.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <optional>
#include <utility>

#include "charkit/core/ascii.h"
#include "charkit/core/utf8.h"
#include "charkit/motion/error_codes.h"

namespace charkit::motion {

namespace {

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}
bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

bool istarts_with(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && core::ascii_iequals(s.substr(0, prefix.size()), prefix);
}

std::optional<Channel> parse_channel(std::string_view s) {
  static constexpr std::string_view kNames[] = {"Xposition", "Yposition", "Zposition",
                                                "Xrotation", "Yrotation", "Zrotation"};
  for (std::size_t i = 0; i < 6; ++i)
    if (core::ascii_iequals(s, kNames[i])) return static_cast<Channel>(i);
  return std::nullopt;
}

// Tokens of the hierarchy with their line and column; names are the rest of
// their line because they may contain spaces ("Bip01 L Thigh").
class Cursor {
 public:
  Cursor(std::string_view text, std::size_t start) : t_(text), pos_(start) {}

  std::size_t pos() const { return pos_; }
  std::uint32_t line() const { return line_; }
  std::string where(std::size_t p) const {
    return std::to_string(line_) + ":" + std::to_string(p - line_start_ + 1);
  }
  std::string here() const { return where(pos_); }

  void skip_space() {
    while (pos_ < t_.size() && is_space(t_[pos_])) {
      if (t_[pos_] == '\n') {
        ++line_;
        line_start_ = pos_ + 1;
      }
      ++pos_;
    }
  }
  /// Next whitespace-delimited token ("" at the end); start receives its offset.
  std::string_view token(std::size_t& start) {
    skip_space();
    start = pos_;
    while (pos_ < t_.size() && !is_space(t_[pos_])) ++pos_;
    return t_.substr(start, pos_ - start);
  }
  /// Rest of the current line, blanks trimmed; the cursor moves to its end.
  std::string_view rest_of_line(std::size_t& start) {
    while (pos_ < t_.size() && is_blank(t_[pos_])) ++pos_;
    start = pos_;
    while (pos_ < t_.size() && t_[pos_] != '\n') ++pos_;
    std::string_view s = t_.substr(start, pos_ - start);
    while (!s.empty() && is_blank(s.back())) s.remove_suffix(1);
    return s;
  }

 private:
  std::string_view t_;
  std::size_t pos_;
  std::uint32_t line_ = 1;
  std::size_t line_start_ = 0;
};

core::Error error_at(core::ErrorCode code, const std::string& where, const std::string& what,
                     std::size_t offset) {
  return core::error_at_offset(code, where + ": " + what, offset);
}

std::string quote(std::string_view s) {
  return core::quote_excerpt(s, 40);
}

class HeaderParser {
 public:
  HeaderParser(std::string_view text, const BvhLimits& limits, std::size_t start)
      : text_(text), limits_(limits), cur_(text, start) {}

  core::Result<BvhHeader> parse();

 private:
  core::Status expect(std::string_view keyword);
  /// A "Label:value" or "Label: value" field (label case-insensitive): the
  /// value and its offset; BVH_SYNTAX naming the label when it is not next.
  core::Result<std::pair<std::string_view, std::size_t>> labelled(std::string_view label);
  core::Status parse_joint(int parent, bool end_site, std::size_t keyword_pos, std::uint32_t depth);
  core::Status read_number(double& out);

  std::string_view text_;
  const BvhLimits& limits_;
  Cursor cur_;
  BvhHeader h_;
};

core::Status HeaderParser::expect(std::string_view keyword) {
  std::size_t at = 0;
  std::string_view tok = cur_.token(at);
  if (!core::ascii_iequals(tok, keyword))
    return error_at(codes::BVH_SYNTAX, cur_.where(at),
                    "expected '" + std::string(keyword) + "', found " +
                        (tok.empty() ? std::string("end of file") : quote(tok)),
                    at);
  return core::Ok{};
}

core::Status HeaderParser::read_number(double& out) {
  std::size_t at = 0;
  std::string_view tok = cur_.token(at);
  if (tok.empty())
    return error_at(codes::BVH_SYNTAX, cur_.where(at), "expected a number, found end of file", at);
  if (!parse_bvh_number(tok, out))
    return error_at(codes::BVH_NUMBER, cur_.where(at),
                    "expected a finite number, found " + quote(tok), at);
  return core::Ok{};
}

// ROOT/JOINT/End Site block after its keyword. Children recurse; the depth
// limit keeps the stack small.
core::Status HeaderParser::parse_joint(int parent, bool end_site, std::size_t keyword_pos,
                                       std::uint32_t depth) {
  if (depth >= limits_.max_depth)
    return error_at(codes::BVH_LIMIT, cur_.where(keyword_pos),
                    "joints nested deeper than " + std::to_string(limits_.max_depth) + " levels",
                    keyword_pos);
  if (h_.joints.size() >= limits_.max_joints)
    return error_at(codes::BVH_LIMIT, cur_.where(keyword_pos),
                    "more than " + std::to_string(limits_.max_joints) + " joints", keyword_pos);
  BvhJoint j;
  j.parent = parent;
  j.end_site = end_site;
  j.line = cur_.line();
  bool brace_on_name_line = false;
  if (end_site) {
    j.name = "End Site";
  } else {
    std::size_t at = 0;
    std::string_view name = cur_.rest_of_line(at);
    // "ROOT Hips {" on one line.
    if (name.size() >= 1 && name.back() == '{' &&
        (name.size() == 1 || is_blank(name[name.size() - 2]))) {
      brace_on_name_line = true;
      name.remove_suffix(1);
      while (!name.empty() && is_blank(name.back())) name.remove_suffix(1);
    }
    if (name.empty()) return error_at(codes::BVH_SYNTAX, cur_.where(at), "joint name missing", at);
    if (name.size() > limits_.max_name_bytes)
      return error_at(codes::BVH_LIMIT, cur_.where(at),
                      "joint name longer than " + std::to_string(limits_.max_name_bytes) + " bytes",
                      at);
    j.name = std::string(name);
  }
  if (!brace_on_name_line) {
    if (auto s = expect("{"); !s) return s;
  }
  const int self = static_cast<int>(h_.joints.size());
  h_.joints.push_back(std::move(j));
  bool have_offset = false, have_channels = false;
  for (;;) {
    std::size_t at = 0;
    std::string_view tok = cur_.token(at);
    if (tok == "}") break;
    if (core::ascii_iequals(tok, "OFFSET")) {
      if (have_offset)
        return error_at(codes::BVH_SYNTAX, cur_.where(at), "second OFFSET in one joint", at);
      have_offset = true;
      std::array<double, 3> off{};
      for (double& v : off)
        if (auto s = read_number(v); !s) return s;
      h_.joints[self].offset = off;
    } else if (core::ascii_iequals(tok, "CHANNELS")) {
      if (end_site)
        return error_at(codes::BVH_SYNTAX, cur_.where(at), "End Site cannot have CHANNELS", at);
      if (have_channels)
        return error_at(codes::BVH_SYNTAX, cur_.where(at), "second CHANNELS in one joint", at);
      have_channels = true;
      std::size_t nat = 0;
      std::string_view ntok = cur_.token(nat);
      unsigned n = 0;
      auto [p, ec] = std::from_chars(ntok.data(), ntok.data() + ntok.size(), n);
      if (ec != std::errc{} || p != ntok.data() + ntok.size() || n > 6)
        return error_at(codes::BVH_CHANNEL, cur_.where(nat),
                        "channel count must be 0 to 6, found " + quote(ntok), nat);
      if (std::uint64_t{h_.channel_count} + n > std::uint64_t{limits_.max_joints} * 6)
        return error_at(codes::BVH_LIMIT, cur_.where(nat), "too many channels", nat);
      BvhJoint& self_j = h_.joints[self];
      self_j.channel_count = static_cast<std::uint8_t>(n);
      self_j.first_channel = h_.channel_count;
      h_.channel_count += n;
      unsigned seen = 0;
      for (unsigned i = 0; i < n; ++i) {
        std::size_t cat = 0;
        std::string_view ctok = cur_.token(cat);
        auto c = parse_channel(ctok);
        if (!c)
          return error_at(codes::BVH_CHANNEL, cur_.where(cat), "unknown channel " + quote(ctok),
                          cat);
        unsigned bit = 1u << static_cast<unsigned>(*c);
        if (seen & bit)
          return error_at(codes::BVH_CHANNEL, cur_.where(cat),
                          "channel " + quote(ctok) + " listed twice", cat);
        seen |= bit;
        self_j.channels[i] = *c;
      }
    } else if (core::ascii_iequals(tok, "JOINT")) {
      if (end_site)
        return error_at(codes::BVH_SYNTAX, cur_.where(at), "End Site cannot have children", at);
      if (auto s = parse_joint(self, false, at, depth + 1); !s) return s;
    } else if (core::ascii_iequals(tok, "End")) {
      if (end_site)
        return error_at(codes::BVH_SYNTAX, cur_.where(at), "End Site cannot have children", at);
      if (auto s = expect("Site"); !s) return s;
      if (auto s = parse_joint(self, true, at, depth + 1); !s) return s;
    } else {
      return error_at(codes::BVH_SYNTAX, cur_.where(at),
                      "expected OFFSET, CHANNELS, JOINT, End Site or '}', found " +
                          (tok.empty() ? std::string("end of file") : quote(tok)),
                      at);
    }
  }
  if (!have_offset)
    return error_at(codes::BVH_SYNTAX, line_column(text_, keyword_pos),
                    "joint " + quote(h_.joints[self].name) + " has no OFFSET", keyword_pos);
  return core::Ok{};
}

core::Result<std::pair<std::string_view, std::size_t>> HeaderParser::labelled(
    std::string_view label) {
  std::size_t at = 0;
  const std::string_view tok = cur_.token(at);
  if (!istarts_with(tok, label))
    return error_at(codes::BVH_SYNTAX, cur_.where(at),
                    "expected '" + std::string(label) + "', found " + quote(tok), at);
  std::string_view value = tok.substr(label.size());
  std::size_t value_at = at + label.size();
  if (value.empty()) value = cur_.token(value_at);
  return std::pair{value, value_at};
}

core::Result<BvhHeader> HeaderParser::parse() {
  if (auto s = expect("HIERARCHY"); !s) return s.error();
  std::size_t at = 0;
  std::string_view tok = cur_.token(at);
  while (core::ascii_iequals(tok, "ROOT")) {
    if (auto s = parse_joint(-1, false, at, 0); !s) return s.error();
    ++h_.root_count;
    tok = cur_.token(at);
  }
  if (h_.root_count == 0)
    return error_at(
        codes::BVH_SYNTAX, cur_.where(at),
        "expected ROOT, found " + (tok.empty() ? std::string("end of file") : quote(tok)), at);
  if (!core::ascii_iequals(tok, "MOTION"))
    return error_at(
        codes::BVH_SYNTAX, cur_.where(at),
        "expected ROOT or MOTION, found " + (tok.empty() ? std::string("end of file") : quote(tok)),
        at);

  // "Frames: N" (also "Frames:N").
  auto frames_field = labelled("Frames:");
  if (!frames_field) return frames_field.error();
  const auto [count, count_at] = *frames_field;
  std::uint64_t frames = 0;
  auto [p, ec] = std::from_chars(count.data(), count.data() + count.size(), frames);
  if (ec != std::errc{} || p != count.data() + count.size() || count.empty())
    return error_at(codes::BVH_NUMBER, cur_.where(count_at),
                    "expected a frame count, found " + quote(count), count_at);
  if (frames > limits_.max_frames ||
      (h_.channel_count && frames > limits_.max_values / h_.channel_count))
    return error_at(codes::BVH_LIMIT, cur_.where(count_at),
                    "frame count " + std::to_string(frames) + " exceeds the limit", count_at);
  h_.declared_frames = frames;

  // "Frame Time: t" (also "Frame Time:t").
  if (auto s = expect("Frame"); !s) return s.error();
  auto time_field = labelled("Time:");
  if (!time_field) return time_field.error();
  const auto [ft, ft_at] = *time_field;
  if (!parse_bvh_number(ft, h_.frame_time))
    return error_at(codes::BVH_NUMBER, cur_.where(ft_at),
                    "expected the frame time, found " + quote(ft), ft_at);
  std::size_t rest_at = 0;
  std::string_view rest = cur_.rest_of_line(rest_at);
  if (!rest.empty())
    return error_at(codes::BVH_SYNTAX, cur_.where(rest_at),
                    "unexpected " + quote(rest) + " after the frame time", rest_at);
  // The first frame row starts on the next line.
  h_.motion_offset = std::min(cur_.pos() + 1, text_.size());
  h_.motion_line = cur_.line() + 1;
  return std::move(h_);
}

}  // namespace

const char* channel_name(Channel c) {
  static constexpr const char* kNames[] = {"Xposition", "Yposition", "Zposition",
                                           "Xrotation", "Yrotation", "Zrotation"};
  return kNames[static_cast<int>(c)];
}

bool parse_bvh_number(std::string_view tok, double& out) {
  if (tok.empty()) return false;
  // std::from_chars takes no '+'; the sign after it must not be doubled.
  if (tok[0] == '+') {
    tok.remove_prefix(1);
    if (tok.empty() || tok[0] == '-' || tok[0] == '+') return false;
  }
  // from_chars would accept "inf"/"nan"; BVH values are plain decimals.
  char first = tok[0] == '-' && tok.size() > 1 ? tok[1] : tok[0];
  if (!((first >= '0' && first <= '9') || first == '.')) return false;
  double v = 0;
  auto [p, ec] =
      std::from_chars(tok.data(), tok.data() + tok.size(), v, std::chars_format::general);
  if (ec != std::errc{} || p != tok.data() + tok.size() || !std::isfinite(v)) return false;
  out = v;
  return true;
}

std::string line_column(std::string_view text, std::size_t pos) {
  pos = std::min(pos, text.size());
  std::size_t line = 1, start = 0;
  for (std::size_t i = 0; i < pos; ++i)
    if (text[i] == '\n') {
      ++line;
      start = i + 1;
    }
  return std::to_string(line) + ":" + std::to_string(pos - start + 1);
}

core::Result<BvhHeader> parse_bvh_header(std::string_view text, const BvhLimits& limits) {
  // A UTF-8 byte-order mark is skipped; columns still count its bytes.
  std::size_t start = text.substr(0, 3) == "\xEF\xBB\xBF" ? 3 : 0;
  HeaderParser p(text, limits, start);
  return p.parse();
}

// ---- frames ------------------------------------------------------------------

FrameReader::FrameReader(const BvhHeader& header, std::string_view text, const BvhLimits& limits,
                         const core::InputHints* hints)
    : header_(header),
      text_(text),
      limits_(limits),
      hints_(hints),
      pos_(std::min(header.motion_offset, text.size())),
      released_(pos_),
      line_(header.motion_line) {}

void FrameReader::release_pages(bool all) {
  // Pages behind the reader are not needed again in this pass: give them back
  // so the resident size stays small for files of any length.
  constexpr std::size_t kChunk = std::size_t{1} << 20;
  if (!hints_) return;
  if (all || pos_ - released_ >= kChunk) {
    hints_->done_reading(core::as_bytes(text_.substr(released_, pos_ - released_)));
    released_ = pos_;
  }
}

void FrameReader::finish() {
  done_ = true;
  release_pages(true);
  if (frames_ < header_.declared_frames) {
    warnings_.push_back(BvhWarning{codes::BVH_MISSING_FRAMES,
                                   line_column(text_, text_.size()) + ": 'Frames:' declares " +
                                       std::to_string(header_.declared_frames) +
                                       " frames, the file has " + std::to_string(frames_) +
                                       "; the complete frames are kept"});
  }
}

core::Result<bool> FrameReader::next(std::span<double> values) {
  if (done_) return false;
  const std::uint32_t n = header_.channel_count;
  if (values.size() != n)
    return core::make_error(codes::BVH_USAGE, "frame buffer has " + std::to_string(values.size()) +
                                                  " values, the hierarchy " + std::to_string(n));
  if (n == 0) {
    // No channels: each frame is one (empty) line. Counting lines as well as
    // `Frames:` bounds the work by the file's size.
    if (frames_ >= header_.declared_frames) {
      done_ = true;
      return false;
    }
    if (pos_ >= text_.size()) {
      finish();
      return false;
    }
    const void* nl = std::memchr(text_.data() + pos_, '\n', text_.size() - pos_);
    pos_ = nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - text_.data()) + 1
              : text_.size();
    ++line_;
    ++frames_;
    return true;
  }
  while (pos_ < text_.size()) {
    const char* base = text_.data() + pos_;
    const void* nl = std::memchr(base, '\n', text_.size() - pos_);
    std::size_t eol =
        nl ? static_cast<std::size_t>(static_cast<const char*>(nl) - text_.data()) : text_.size();
    const std::size_t line_start = pos_;
    const std::uint32_t line = line_;
    pos_ = nl ? eol + 1 : eol;
    ++line_;
    auto where = [&](std::size_t p) {
      return std::to_string(line) + ":" + std::to_string(p - line_start + 1);
    };
    if (eol - line_start > limits_.max_line_bytes)
      return error_at(codes::BVH_LIMIT, where(line_start),
                      "line longer than " + std::to_string(limits_.max_line_bytes) + " bytes",
                      line_start);
    std::uint32_t count = 0;
    std::size_t i = line_start;
    while (true) {
      while (i < eol && is_blank(text_[i])) ++i;
      if (i >= eol) break;
      std::size_t tstart = i;
      while (i < eol && !is_blank(text_[i])) ++i;
      if (count == n)
        return error_at(codes::BVH_ROW, where(tstart),
                        "frame row has more than " + std::to_string(n) + " values", tstart);
      std::string_view tok = text_.substr(tstart, i - tstart);
      if (!parse_bvh_number(tok, values[count]))
        return error_at(codes::BVH_NUMBER, where(tstart),
                        "expected a finite number, found " + quote(tok), tstart);
      ++count;
    }
    if (count == 0) continue;  // blank line
    if (count < n) {
      // A short row is tolerated only as the last row (a cut-off file).
      bool last = true;
      for (std::size_t k = pos_; k < text_.size(); ++k)
        if (!is_space(text_[k])) {
          last = false;
          break;
        }
      if (!last)
        return error_at(
            codes::BVH_ROW, where(eol),
            "frame row has " + std::to_string(count) + " of " + std::to_string(n) + " values", eol);
      warnings_.push_back(BvhWarning{codes::BVH_TRUNCATED_ROW,
                                     where(eol) + ": last frame row has " + std::to_string(count) +
                                         " of " + std::to_string(n) + " values; it is dropped"});
      pos_ = text_.size();
      break;
    }
    if (frames_ >= limits_.max_frames || frames_ + 1 > limits_.max_values / n)
      return error_at(codes::BVH_LIMIT, where(line_start), "more frames than the limit",
                      line_start);
    if (frames_ == header_.declared_frames)
      warnings_.push_back(
          BvhWarning{codes::BVH_EXTRA_FRAMES, where(line_start) + ": rows beyond the " +
                                                  std::to_string(header_.declared_frames) +
                                                  " declared frames are kept"});
    ++frames_;
    release_pages(false);
    return true;
  }
  finish();
  return false;
}

}  // namespace charkit::motion
