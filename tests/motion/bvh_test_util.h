// Helpers for the motion tests: BVH text from lines, and reading all frames.
#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "charkit/motion/bvh.h"

namespace charkit::motion::testing {

/// Lines joined with eol (line N of the result is lines[N-1]).
inline std::string bvh_lines(std::initializer_list<std::string_view> lines,
                             std::string_view eol = "\n") {
  std::string out;
  for (auto l : lines) {
    out += l;
    out += eol;
  }
  return out;
}

struct AllFrames {
  std::vector<std::vector<double>> frames;
  std::vector<BvhWarning> warnings;
};

/// Every frame of a parsed file; the test fails on a reader error.
inline AllFrames read_all(const BvhHeader& h, std::string_view text, const BvhLimits& limits = {}) {
  AllFrames r;
  FrameReader reader(h, text, limits);
  std::vector<double> v(h.channel_count);
  for (int guard = 0; guard < 1000000; ++guard) {
    auto got = reader.next(v);
    EXPECT_TRUE(got.ok()) << (got.ok() ? "" : got.error().to_string());
    if (!got.ok() || !*got) break;
    r.frames.push_back(v);
  }
  r.warnings = reader.warnings();
  return r;
}

}  // namespace charkit::motion::testing
