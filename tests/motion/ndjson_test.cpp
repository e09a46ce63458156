// The NDJSON line, checked against text written by hand from the model and
// motion format contract §2.1.
#include <gtest/gtest.h>

#include <string>

#include "charkit/core/json.h"
#include "charkit/motion/detail/ndjson.h"

namespace charkit::motion {
namespace {

std::string number(double v) {
  std::string s;
  append_number(s, v);
  return s;
}

TEST(NdjsonNumber, ShortestRoundTripWithAFractionPart) {
  EXPECT_EQ(number(0.5), "0.5");
  EXPECT_EQ(number(1.0), "1.0");
  EXPECT_EQ(number(0.0), "0.0");
  EXPECT_EQ(number(-0.0), "0.0");
  EXPECT_EQ(number(0.1), "0.1");
  EXPECT_EQ(number(-0.35), "-0.35");
  EXPECT_EQ(number(1000.0 / 30.0), "33.333333333333336");
  EXPECT_EQ(number(1e-7), "1e-07");
  EXPECT_EQ(number(1e300 * 1e300), "0.0");  // never produced; still valid JSON
  // Round trip: the text reads back as the same double.
  for (double v : {0.123456789012345678, 0.85, 1.0 / 3.0, -2.5e-5})
    EXPECT_EQ(std::stod(number(v)), v);
}

TEST(NdjsonLine, MatchesTheSeedShape) {
  std::array<Keypoint, kPointCount> pts{};
  for (auto& p : pts) p = Keypoint{0.5, 0.5, 0.0, 1.0};
  pts[1] = Keypoint{0.25, 0.75, -0.125, 0.5};
  std::array<double, kAngleCount> ang{};
  ang.fill(1.0);
  ang[8] = -0.5;
  std::string line;
  append_frame_line(line, 3, 100.0, pts, ang);

  std::string want =
      "{\"frame\":3,\"timeMs\":100.0,\"points\":[[0.5,0.5,0.0,1.0],[0.25,0.75,-0.125,0.5]";
  for (int i = 2; i < 33; ++i) want += ",[0.5,0.5,0.0,1.0]";
  want += "],\"angles\":[1.0,1.0,1.0,1.0,1.0,1.0,1.0,1.0,-0.5]}\n";
  EXPECT_EQ(line, want);

  auto j = core::parse_json_strict(std::string_view(line).substr(0, line.size() - 1));
  ASSERT_TRUE(j.ok());
  EXPECT_EQ(j->size(), 4u);
  EXPECT_EQ((*j)["points"].size(), 33u);
  EXPECT_EQ((*j)["angles"].size(), 9u);
}

TEST(NdjsonLine, TimeFromFps) {
  EXPECT_DOUBLE_EQ(frame_time_ms(0, 30), 0.0);
  EXPECT_DOUBLE_EQ(frame_time_ms(3, 30), 100.0);
  EXPECT_DOUBLE_EQ(frame_time_ms(1, 120), 1000.0 / 120.0);
}

}  // namespace
}  // namespace charkit::motion
