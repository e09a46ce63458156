#include "charkit/motion/detail/ndjson.h"

#include <charconv>
#include <cmath>
#include <cstring>

#include "charkit/core/error_codes.h"

namespace charkit::motion {

void append_number(std::string& out, double v) {
  if (!std::isfinite(v) || v == 0.0) v = 0.0;  // also turns -0 into 0
  char buf[40];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  if (ec != std::errc{}) {
    out += "0.0";
    return;
  }
  std::size_t n = static_cast<std::size_t>(end - buf);
  out.append(buf, n);
  // JSON-wise "1" is fine; the model and motion format contract writes floats
  // as "1.0", "0.0".
  if (std::memchr(buf, '.', n) == nullptr && std::memchr(buf, 'e', n) == nullptr) out += ".0";
}

void append_frame_line(std::string& out, std::uint64_t frame, double time_ms,
                       std::span<const Keypoint> points, std::span<const double> angles) {
  out += "{\"frame\":";
  out += std::to_string(frame);
  out += ",\"timeMs\":";
  append_number(out, time_ms);
  out += ",\"points\":[";
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (i) out += ',';
    out += '[';
    append_number(out, points[i].x);
    out += ',';
    append_number(out, points[i].y);
    out += ',';
    append_number(out, points[i].z);
    out += ',';
    append_number(out, points[i].confidence);
    out += ']';
  }
  out += "],\"angles\":[";
  for (std::size_t i = 0; i < angles.size(); ++i) {
    if (i) out += ',';
    append_number(out, angles[i]);
  }
  out += "]}\n";
}

FrameLineWriter::FrameLineWriter(const MotionBudget& budget, const OutputSink& sink)
    : budget_(budget), sink_(sink) {
  out_.reserve(kFlushBytes + 4096);
}

core::Status FrameLineWriter::add(std::uint64_t frame, double time_ms,
                                  std::span<const Keypoint> points,
                                  std::span<const double> angles) {
  append_frame_line(out_, frame, time_ms, points, angles);
  if (out_.size() < kFlushBytes) return core::Ok{};
  return write();
}

core::Status FrameLineWriter::finish() {
  return write();
}

core::Status FrameLineWriter::write() {
  if (auto b = check_output_budget(budget_, written_ += out_.size()); !b) return b;
  if (!out_.empty() && !sink_(out_))
    return core::make_error(core::codes::IO_WRITE, "cannot write the output");
  out_.clear();
  return core::Ok{};
}

}  // namespace charkit::motion
