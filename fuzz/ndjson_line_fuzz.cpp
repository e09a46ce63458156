// libFuzzer target: keypoint NDJSON as the server streams it. Each line of
// the input goes through ws::parse_ndjson_line (an accepted line must
// encode to a frame that decodes to the same values), and the whole input
// is opened as a stored file by ws::FrameSource (line index, then windows
// read back), which must agree on the frame count and never crash.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

#include "charkit/server/detail/frame_source.h"
#include "charkit/server/detail/ws.h"

using namespace charkit;
using namespace charkit::server;

namespace {
void check(bool ok) {
  if (!ok) std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  std::size_t parsed = 0;
  for (std::string_view rest = in; !rest.empty();) {
    const auto nl = rest.find('\n');
    const std::string_view line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    auto v = ws::parse_ndjson_line(line);
    if (!v) continue;
    ++parsed;
    const std::string wire = ws::encode_frame(*v);
    check(wire.size() == ws::kFrameBytes);
    auto back = ws::decode_frame(wire);
    check(back.ok());
    check(back->frame == v->frame && back->points == v->points && back->angles == v->angles);
  }

  auto read_at = [in](std::uint64_t off, std::span<std::uint8_t> out) -> core::Result<std::size_t> {
    if (off >= in.size()) return std::size_t{0};
    const std::size_t n = std::min<std::size_t>(out.size(), in.size() - off);
    std::memcpy(out.data(), in.data() + off, n);
    return n;
  };
  auto src = ws::FrameSource::open(read_at, in.size(), 30.0);
  if (!src) return 0;
  check((*src)->frames() > 0);
  std::size_t read = 0;
  for (std::size_t first = 0; first < (*src)->frames(); first += 7) {
    auto w = (*src)->read(first, 7);
    if (!w) return 0;  // a line that does not parse: reported, not a crash
    for (const auto& f : *w) check(f && f->size() == ws::kFrameBytes);
    read += w->size();
  }
  check(read == (*src)->frames());
  check(parsed >= read);  // every frame read is a line that parses (CR trimmed lines aside)
  return 0;
}
