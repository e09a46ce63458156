// The keypoint frame codec of the WebSocket stream (ws.h,
// docs/contracts/websocket-keypoints.md): the 572-byte binary frame, one
// NDJSON keypoint line, channel names. Kept apart from ws.cpp (the Beast
// WebSocket sessions, one of the slowest files to compile) so that the fuzz
// targets of these decoders build without it.
#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "charkit/core/json.h"
#include "charkit/server/detail/ws.h"
#include "charkit/server/error_codes.h"

namespace charkit::server::ws {
namespace {
void put_u32(std::string& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xffu));
}
std::uint32_t get_u32(const unsigned char* p) {
  return static_cast<std::uint32_t>(p[0]) | (static_cast<std::uint32_t>(p[1]) << 8) |
         (static_cast<std::uint32_t>(p[2]) << 16) | (static_cast<std::uint32_t>(p[3]) << 24);
}

/// SAX reader of one NDJSON line: keeps each number's text so that it is
/// rounded once, straight to float32 (a detour through double could round twice).
struct LineSax {
  using json = nlohmann::json;
  int depth = 0;
  std::string cur_key;
  bool in_points = false, in_angles = false;
  bool have_frame = false, have_time = false;
  std::uint64_t frame = 0;
  float time_ms = 0;
  std::vector<float> points, angles;
  std::string error;

  bool number(float f, std::optional<std::uint64_t> integral) {
    if (depth == 1 && cur_key == "frame") {
      if (!integral || *integral > 0xffffffffu) return fail("frame must be an integer < 2^32");
      frame = *integral;
      have_frame = true;
      return true;
    }
    if (depth == 1 && cur_key == "timeMs") {
      time_ms = f;
      have_time = true;
      return true;
    }
    if (in_points && depth == 3) {
      if (points.size() >= kPoints * 4) return fail("more than 33 points");
      points.push_back(f);
      return true;
    }
    if (in_angles && depth == 2) {
      if (angles.size() >= kAngles) return fail("more than 9 angles");
      angles.push_back(f);
      return true;
    }
    return fail("unexpected number");
  }
  bool fail(std::string m) {
    error = std::move(m);
    return false;
  }
  bool null() { return fail("unexpected null"); }
  bool boolean(bool) { return fail("unexpected boolean"); }
  bool number_integer(json::number_integer_t v) {
    return number(
        static_cast<float>(v),
        v >= 0 ? std::optional<std::uint64_t>(static_cast<std::uint64_t>(v)) : std::nullopt);
  }
  bool number_unsigned(json::number_unsigned_t v) {
    return number(static_cast<float>(v), static_cast<std::uint64_t>(v));
  }
  bool number_float(json::number_float_t, const std::string& text) {
    float f = 0;
    auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), f);
    if (ec != std::errc() || p != text.data() + text.size() || !std::isfinite(f))
      return fail("number '" + text + "' does not fit a float32");
    return number(f, std::nullopt);
  }
  bool string(std::string&) { return fail("unexpected string"); }
  bool binary(json::binary_t&) { return fail("unexpected binary"); }
  bool start_object(std::size_t) {
    if (depth != 0) return fail("unexpected object");
    ++depth;
    return true;
  }
  bool key(std::string& k) {
    cur_key = k;
    return true;
  }
  bool end_object() {
    --depth;
    return true;
  }
  bool start_array(std::size_t) {
    ++depth;
    if (depth == 2 && cur_key == "points" && points.empty()) return in_points = true;
    if (depth == 2 && cur_key == "angles" && angles.empty()) return in_angles = true;
    if (depth == 3 && in_points) return points.size() % 4 == 0 || fail("a point has 4 values");
    return fail("unexpected array");
  }
  bool end_array() {
    if (depth == 3 && in_points && points.size() % 4 != 0) return fail("a point has 4 values");
    if (depth == 2) in_points = in_angles = false;
    --depth;
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) {
    return fail(e.what());
  }
};

}  // namespace

std::string encode_frame(const FrameValues& v) {
  std::string out;
  out.reserve(kFrameBytes);
  put_u32(out, v.frame);
  put_u32(out, std::bit_cast<std::uint32_t>(v.time_ms));
  for (float f : v.points) put_u32(out, std::bit_cast<std::uint32_t>(f));
  for (float f : v.angles) put_u32(out, std::bit_cast<std::uint32_t>(f));
  return out;
}

core::Result<FrameValues> decode_frame(std::string_view bytes) {
  if (bytes.size() != kFrameBytes)
    return core::make_error(codes::WS_FRAME_SIZE, "a frame is " + std::to_string(kFrameBytes) +
                                                      " bytes, this one " +
                                                      std::to_string(bytes.size()));
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  FrameValues v;
  v.frame = get_u32(p);
  auto f32 = [&](std::size_t index) {  // index-th float after the u32 frame
    return std::bit_cast<float>(get_u32(p + 4 + 4 * index));
  };
  v.time_ms = f32(0);
  for (std::size_t i = 0; i < v.points.size(); ++i) v.points[i] = f32(1 + i);
  for (std::size_t i = 0; i < v.angles.size(); ++i) v.angles[i] = f32(1 + v.points.size() + i);
  if (!std::isfinite(v.time_ms))
    return core::make_error(codes::WS_FRAME_VALUE, "timeMs is not finite (byte offset 4)");
  for (std::size_t i = 0; i < v.points.size(); ++i)
    if (!std::isfinite(v.points[i]))
      return core::make_error(codes::WS_FRAME_VALUE, "point " + std::to_string(i / 4) + " value " +
                                                         std::to_string(i % 4) + " is not finite");
  for (std::size_t i = 0; i < v.angles.size(); ++i)
    if (!std::isfinite(v.angles[i]))
      return core::make_error(codes::WS_FRAME_VALUE,
                              "angle " + std::to_string(i) + " is not finite");
  return v;
}

core::Result<FrameValues> parse_ndjson_line(std::string_view line) {
  LineSax sax;
  bool ok = nlohmann::json::sax_parse(line.begin(), line.end(), &sax);
  if (!ok || !sax.error.empty())
    return core::make_error(codes::KEYPOINTS_LINE, sax.error.empty() ? "bad line" : sax.error);
  if (!sax.have_frame || !sax.have_time)
    return core::make_error(codes::KEYPOINTS_LINE, "frame or timeMs missing");
  if (sax.points.size() != kPoints * 4 || sax.angles.size() != kAngles)
    return core::make_error(codes::KEYPOINTS_LINE, "a line holds 33 points and 9 angles");
  FrameValues v;
  v.frame = static_cast<std::uint32_t>(sax.frame);
  v.time_ms = sax.time_ms;
  std::copy(sax.points.begin(), sax.points.end(), v.points.begin());
  std::copy(sax.angles.begin(), sax.angles.end(), v.angles.begin());
  return v;
}

bool valid_channel_name(std::string_view name) {
  if (name.empty() || name.size() > kMaxChannelName) return false;
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
          c == '-'))
      return false;
  return true;
}

void FrameLengthGuard::feed(unsigned char* bytes, std::size_t n) {
  std::size_t i = 0;
  while (i < n && !done_) {
    if (skip_ > 0) {
      const std::uint64_t k = std::min<std::uint64_t>(skip_, n - i);
      skip_ -= k;
      i += static_cast<std::size_t>(k);
      continue;
    }
    unsigned char& b = bytes[i++];
    // The first byte of a 64-bit length (header byte 2 when byte 1 says 127):
    // its top bit set is no length at all; zero all eight bytes.
    if (have_ >= 2 && have_ < 10 && (header_[1] & 0x7F) == 127 &&
        (have_ > 2 ? header_[2] == 0xFF : (b & 0x80) != 0)) {
      b = 0;
      header_[2] = 0xFF;  // remembers the rewrite for the remaining length bytes
      tripped_ = true;
      if (have_ == 9) done_ = true;  // the library fails the connection here
      ++have_;
      continue;
    }
    header_[have_++] = b;
    if (have_ == 2) {
      const unsigned len7 = header_[1] & 0x7Fu;
      need_ = 2 + (len7 == 126 ? 2 : len7 == 127 ? 8 : 0) + ((header_[1] & 0x80u) ? 4 : 0);
    }
    if (have_ < 2 || have_ < need_) continue;
    const unsigned len7 = header_[1] & 0x7Fu;
    std::uint64_t len = len7;
    if (len7 == 126) len = (std::uint64_t{header_[2]} << 8) | header_[3];
    if (len7 == 127) {
      len = 0;
      for (int k = 2; k < 10; ++k) len = (len << 8) | header_[k];
    }
    skip_ = len;
    have_ = 0;
    need_ = 2;
  }
}

}  // namespace charkit::server::ws
