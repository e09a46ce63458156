// libFuzzer target: the keypoint-JSON reader (docs/contracts/keypoints.md §6):
// strict parse, validation with JSON pointers, normalisation and the NDJSON
// it writes. Properties checked on every accepted input: the output has one
// line per frame, every line parses, and its values lie in the §6.3 ranges.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "charkit/core/json.h"
#include "charkit/motion/keypoint_json.h"

using namespace charkit;
using namespace charkit::motion;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)detect_motion_format(text);
  KeypointJsonOptions o;
  o.limits.max_bytes = 1 << 20;
  o.limits.max_frames = 1000;
  std::string out;
  auto r = convert_keypoint_json(text, o, [&](std::string_view c) {
    out.append(c);
    return true;
  });
  if (!r) {
    const auto& e = r.error();
    (void)e.to_string();
    // Our own errors always carry a pointer (the root is ""), never an offset.
    if (e.code.starts_with("KEYPOINTS_") && e.code != "KEYPOINTS_LIMIT" && e.location.offset)
      __builtin_trap();
    if (!out.empty()) __builtin_trap();  // nothing written for an invalid document
    return 0;
  }
  std::uint64_t lines = 0;
  std::size_t start = 0;
  while (start < out.size()) {
    const std::size_t end = out.find('\n', start);
    if (end == std::string::npos) __builtin_trap();  // every line ends with \n
    auto j = core::parse_json_strict(std::string_view(out).substr(start, end - start));
    if (!j || !(*j)["points"].is_array() || (*j)["points"].size() != kPointCount) __builtin_trap();
    for (const auto& p : (*j)["points"]) {
      const double x = p[0].get<double>(), y = p[1].get<double>(), z = p[2].get<double>(),
                   c = p[3].get<double>();
      if (!(x >= 0 && x <= 1 && y >= 0 && y <= 1 && z >= -1 && z <= 1 && c >= 0 && c <= 1))
        __builtin_trap();
    }
    for (const auto& a : (*j)["angles"])
      if (!(a.get<double>() >= -1 && a.get<double>() <= 1)) __builtin_trap();
    ++lines;
    start = end + 1;
  }
  if (lines != r->frames) __builtin_trap();
  return 0;
}
