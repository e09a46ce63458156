// Keypoint NDJSON frames read on demand (frame_source.h).
#include "charkit/server/detail/frame_source.h"

#include <algorithm>
#include <cstring>

#include "charkit/server/detail/ws.h"
#include "charkit/server/error_codes.h"

namespace charkit::server::ws {

core::Result<std::shared_ptr<const FrameSource>> FrameSource::open(
    ReadAt read_at, std::uint64_t size, double fps, const std::atomic<bool>* cancel) {
  if (!(fps > 0 && fps <= 1000))
    return core::make_error(codes::KEYPOINTS_FPS, "fps " + std::to_string(fps) + " out of range");
  std::shared_ptr<FrameSource> src(new FrameSource());
  src->fps_ = fps;
  src->size_ = size;
  std::vector<std::uint8_t> buf(1u << 20);
  std::uint64_t pos = 0;
  std::uint64_t line_start = 0;
  bool line_has_bytes = false;
  auto end_line = [&](std::uint64_t end) -> core::Status {
    if (end - line_start > kMaxNdjsonLine)
      return core::error_at_offset(codes::KEYPOINTS_LINE,
                                   "line " + std::to_string(src->starts_.size() + 1) +
                                       " is longer than " + std::to_string(kMaxNdjsonLine) +
                                       " bytes",
                                   line_start);
    if (line_has_bytes) {
      if (src->starts_.size() >= kMaxStreamFrames)
        return core::make_error(codes::KEYPOINTS_TOO_LONG,
                                "more than " + std::to_string(kMaxStreamFrames) + " frames");
      src->starts_.push_back(line_start);
    }
    return core::Ok{};
  };
  while (pos < size) {
    if (cancel && cancel->load())
      return core::make_error(codes::SERVER_STOPPING, "the server is stopping");
    const std::size_t want =
        static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), size - pos));
    auto got = read_at(pos, std::span<std::uint8_t>(buf.data(), want));
    if (!got) return std::move(got).error();
    if (*got == 0) break;  // the file is shorter than its recorded size: scan what is there
    for (std::size_t i = 0; i < *got; ++i) {
      if (buf[i] == '\n') {
        if (auto s = end_line(pos + i); !s) return std::move(s).error();
        line_start = pos + i + 1;
        line_has_bytes = false;
      } else if (buf[i] != '\r') {
        line_has_bytes = true;
      }
    }
    pos += *got;
    if (!line_has_bytes && pos - line_start > kMaxNdjsonLine) line_start = pos;  // blank padding
    if (line_has_bytes && pos - line_start > kMaxNdjsonLine)  // stop before reading on
      return core::error_at_offset(codes::KEYPOINTS_LINE,
                                   "line " + std::to_string(src->starts_.size() + 1) +
                                       " is longer than " + std::to_string(kMaxNdjsonLine) +
                                       " bytes",
                                   line_start);
  }
  src->size_ = pos;
  if (auto s = end_line(pos); !s) return std::move(s).error();
  if (src->starts_.empty()) return core::make_error(codes::KEYPOINTS_EMPTY, "no frames");
  src->read_at_ = std::move(read_at);
  return std::shared_ptr<const FrameSource>(std::move(src));
}

core::Result<std::vector<std::shared_ptr<const std::string>>> FrameSource::read(
    std::size_t first, std::size_t count) const {
  std::vector<std::shared_ptr<const std::string>> out;
  if (first >= starts_.size()) return out;
  count = std::min({count, starts_.size() - first, kMaxReadFrames});
  if (count == 0) return out;
  const std::uint64_t begin = starts_[first];
  const std::uint64_t end = first + count < starts_.size() ? starts_[first + count] : size_;
  std::string text(static_cast<std::size_t>(end - begin), '\0');
  std::uint64_t done = 0;
  while (done < text.size()) {
    auto r = read_at_(begin + done,
                      std::span<std::uint8_t>(reinterpret_cast<std::uint8_t*>(text.data()) + done,
                                              text.size() - done));
    if (!r) return std::move(r).error();
    if (*r == 0)
      return core::error_at_offset(codes::KEYPOINTS_READ, "the keypoint file ended early",
                                   begin + done);
    done += *r;
  }
  out.reserve(count);
  std::string_view rest(text);
  while (out.size() < count && !rest.empty()) {
    const auto nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    while (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find_first_not_of('\r') == std::string_view::npos) continue;
    auto v = parse_ndjson_line(line);
    if (!v) {
      auto e = std::move(v).error();
      e.message = "frame " + std::to_string(first + out.size()) + ": " + e.message;
      return e;
    }
    out.push_back(std::make_shared<const std::string>(encode_frame(*v)));
  }
  if (out.size() != count)
    return core::make_error(codes::KEYPOINTS_READ, "the keypoint file changed while streamed");
  return out;
}

}  // namespace charkit::server::ws
