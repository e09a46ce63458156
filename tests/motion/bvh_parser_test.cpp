// BVH parser and frame reader on small hand-written files, one per pitfall.
// Line:column values are counted by hand from the literal lines below.
#include <gtest/gtest.h>

#include "bvh_test_util.h"
#include "charkit/motion/bvh.h"

namespace charkit::motion {
namespace {

using testing::bvh_lines;
using testing::read_all;

// A two-joint skeleton with 3 rotation channels on the root.
std::string two_joints(std::string_view frames_line, std::initializer_list<std::string_view> rows) {
  std::string s = bvh_lines({"HIERARCHY", "ROOT Hips", "{", "  OFFSET 0 0 0",
                             "  CHANNELS 3 Zrotation Xrotation Yrotation", "  End Site", "  {",
                             "    OFFSET 0 1 0", "  }", "}", "MOTION"});
  s += frames_line;
  s += "\nFrame Time: 0.0333333\n";
  for (auto r : rows) {
    s += r;
    s += "\n";
  }
  return s;
}

TEST(BvhNumber, AcceptsTheFormsFoundInTheWild) {
  double v = 0;
  ASSERT_TRUE(parse_bvh_number(".0083333", v));
  EXPECT_DOUBLE_EQ(v, 0.0083333);
  ASSERT_TRUE(parse_bvh_number("1e-05", v));
  EXPECT_DOUBLE_EQ(v, 0.00001);
  ASSERT_TRUE(parse_bvh_number("-.5", v));
  EXPECT_DOUBLE_EQ(v, -0.5);
  ASSERT_TRUE(parse_bvh_number("+1", v));
  EXPECT_DOUBLE_EQ(v, 1.0);
  ASSERT_TRUE(parse_bvh_number("-0.0000", v));
  EXPECT_EQ(v, 0.0);
  ASSERT_TRUE(parse_bvh_number("2.5E+2", v));
  EXPECT_DOUBLE_EQ(v, 250.0);
  ASSERT_TRUE(parse_bvh_number("7", v));
  EXPECT_DOUBLE_EQ(v, 7.0);
}

TEST(BvhNumber, RejectsNonNumbers) {
  double v = 0;
  for (const char* bad : {"", "+", "-", ".", "+-1", "++1", "1.5x", "nan", "inf", "-inf", "1e400",
                          "0x10", "1,5", "e5"})
    EXPECT_FALSE(parse_bvh_number(bad, v)) << bad;
}

TEST(BvhParser, NamesWithSpacesColonsAndDotsAndTabs) {
  std::string text =
      bvh_lines({"HIERARCHY", "ROOT Bip01 Pelvis", "{", "\tOFFSET\t1\t2\t3",
                 "\tCHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation",
                 "\tJOINT mixamorig:Left Up.Leg", "\t{", "\t\tOFFSET .5 -.5 1e-05",
                 "\t\tCHANNELS 3 Xrotation Yrotation Zrotation", "\t\tEnd Site", "\t\t{",
                 "\t\t\tOFFSET 0 -1 0", "\t\t}", "\t}", "}", "MOTION", "Frames:\t1",
                 "Frame Time:\t.0083333", "0 0 0 0 0 0 0 0 0"});
  auto h = parse_bvh_header(text);
  ASSERT_TRUE(h.ok()) << h.error().to_string();
  ASSERT_EQ(h->joints.size(), 3u);
  EXPECT_EQ(h->joints[0].name, "Bip01 Pelvis");
  EXPECT_EQ(h->joints[1].name, "mixamorig:Left Up.Leg");
  EXPECT_EQ(h->joints[1].parent, 0);
  EXPECT_TRUE(h->joints[2].end_site);
  EXPECT_EQ(h->joints[2].parent, 1);
  EXPECT_DOUBLE_EQ(h->joints[0].offset[2], 3.0);
  EXPECT_DOUBLE_EQ(h->joints[1].offset[0], 0.5);
  EXPECT_DOUBLE_EQ(h->joints[1].offset[1], -0.5);
  EXPECT_DOUBLE_EQ(h->joints[1].offset[2], 1e-5);
  EXPECT_EQ(h->joints[1].first_channel, 6u);
  EXPECT_EQ(h->joints[1].channels[0], Channel::kXrotation);
  EXPECT_EQ(h->channel_count, 9u);
  EXPECT_EQ(h->declared_frames, 1u);
  EXPECT_DOUBLE_EQ(h->frame_time, 0.0083333);
  EXPECT_EQ(read_all(*h, text).frames.size(), 1u);
}

TEST(BvhParser, SeveralRootsKeepTheirOwnChannels) {
  std::string text = bvh_lines({"HIERARCHY",
                                "ROOT A",
                                "{",
                                "OFFSET 0 0 0",
                                "CHANNELS 3 Xposition Yposition Zposition",
                                "}",
                                "ROOT B",
                                "{",
                                "OFFSET 1 0 0",
                                "CHANNELS 3 Zrotation Yrotation Xrotation",
                                "End Site",
                                "{",
                                "OFFSET 0 1 0",
                                "}",
                                "}",
                                "MOTION",
                                "Frames: 2",
                                "Frame Time: 0.04",
                                "1 2 3 4 5 6",
                                "7 8 9 10 11 12"});
  auto h = parse_bvh_header(text);
  ASSERT_TRUE(h.ok()) << h.error().to_string();
  EXPECT_EQ(h->root_count, 2u);
  ASSERT_EQ(h->joints.size(), 3u);
  EXPECT_EQ(h->joints[1].parent, -1);
  EXPECT_EQ(h->joints[1].first_channel, 3u);
  EXPECT_EQ(h->joints[2].parent, 1);
  auto all = read_all(*h, text);
  ASSERT_EQ(all.frames.size(), 2u);
  EXPECT_EQ(all.frames[1], (std::vector<double>{7, 8, 9, 10, 11, 12}));
  EXPECT_TRUE(all.warnings.empty());
}

TEST(BvhParser, CrlfAndByteOrderMark) {
  std::string text = "\xEF\xBB\xBF" + two_joints("Frames: 2", {"1 2 3", "4 5 6"});
  std::string crlf;
  for (char c : text) {
    if (c == '\n') crlf += '\r';
    crlf += c;
  }
  auto h = parse_bvh_header(crlf);
  ASSERT_TRUE(h.ok()) << h.error().to_string();
  auto all = read_all(*h, crlf);
  ASSERT_EQ(all.frames.size(), 2u);
  EXPECT_EQ(all.frames[1], (std::vector<double>{4, 5, 6}));
}

TEST(BvhParser, BraceOnTheNameLine) {
  std::string text = bvh_lines({"HIERARCHY", "ROOT Hips {", "OFFSET 0 0 0", "CHANNELS 1 Yrotation",
                                "JOINT Spine {", "OFFSET 0 1 0", "}", "}", "MOTION", "Frames: 1",
                                "Frame Time: 0.1", "45"});
  auto h = parse_bvh_header(text);
  ASSERT_TRUE(h.ok()) << h.error().to_string();
  EXPECT_EQ(h->joints[0].name, "Hips");
  EXPECT_EQ(h->joints[1].name, "Spine");
}

TEST(BvhFrames, FewerRowsThanDeclaredKeepsThemAndWarns) {
  std::string text = two_joints("Frames: 3", {"1 2 3", "4 5 6"});
  auto h = parse_bvh_header(text);
  ASSERT_TRUE(h.ok());
  auto all = read_all(*h, text);
  EXPECT_EQ(all.frames.size(), 2u);
  ASSERT_EQ(all.warnings.size(), 1u);
  EXPECT_EQ(all.warnings[0].code, "BVH_MISSING_FRAMES");
  // 13 header lines and 2 rows, each ending in '\n': the end is line 16, column 1.
  EXPECT_EQ(all.warnings[0].message.rfind("16:1: ", 0), 0u) << all.warnings[0].message;
}

TEST(BvhFrames, MoreRowsThanDeclaredKeepsThemAndWarns) {
  std::string text = two_joints("Frames: 1", {"1 2 3", "4 5 6", "7 8 9"});
  auto h = parse_bvh_header(text);
  ASSERT_TRUE(h.ok());
  auto all = read_all(*h, text);
  EXPECT_EQ(all.frames.size(), 3u);
  ASSERT_EQ(all.warnings.size(), 1u);
  EXPECT_EQ(all.warnings[0].code, "BVH_EXTRA_FRAMES");
  // Rows are lines 14, 15, 16; the first extra row is line 15.
  EXPECT_EQ(all.warnings[0].message.rfind("15:1: ", 0), 0u) << all.warnings[0].message;
}

TEST(BvhFrames, TruncatedLastRowIsDroppedWithAWarning) {
  for (const char* tail : {"", "\n", "\n\n  \n"}) {
    std::string text = two_joints("Frames: 3", {"1 2 3", "4 5 6"});
    text += "7 8";
    text += tail;
    auto h = parse_bvh_header(text);
    ASSERT_TRUE(h.ok());
    auto all = read_all(*h, text);
    EXPECT_EQ(all.frames.size(), 2u);
    ASSERT_GE(all.warnings.size(), 1u);
    EXPECT_EQ(all.warnings[0].code, "BVH_TRUNCATED_ROW");
    // "7 8" is line 16; its end is column 4.
    EXPECT_EQ(all.warnings[0].message.rfind("16:4: ", 0), 0u) << all.warnings[0].message;
  }
}

TEST(BvhFrames, ShortRowInTheMiddleIsAnError) {
  std::string text = two_joints("Frames: 3", {"1 2 3", "4 5", "7 8 9"});
  auto h = parse_bvh_header(text);
  ASSERT_TRUE(h.ok());
  FrameReader reader(*h, text);
  std::vector<double> v(3);
  ASSERT_TRUE(*reader.next(v));
  auto r = reader.next(v);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "BVH_ROW");
  EXPECT_EQ(r.error().message.rfind("15:4: ", 0), 0u) << r.error().message;
}

TEST(BvhFrames, LongRowIsAnError) {
  std::string text = two_joints("Frames: 2", {"1 2 3 4", "4 5 6"});
  auto h = parse_bvh_header(text);
  ASSERT_TRUE(h.ok());
  FrameReader reader(*h, text);
  std::vector<double> v(3);
  auto r = reader.next(v);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "BVH_ROW");
  EXPECT_EQ(r.error().message.rfind("14:7: ", 0), 0u) << r.error().message;
}

TEST(BvhFrames, BadNumberNamesLineAndColumnAlsoWithCrlf) {
  for (const char* eol : {"\n", "\r\n"}) {
    std::string text = two_joints("Frames: 2", {"1 2 3"});
    text += std::string("1 2 abc") + eol;
    auto h = parse_bvh_header(text);
    ASSERT_TRUE(h.ok());
    FrameReader reader(*h, text);
    std::vector<double> v(3);
    ASSERT_TRUE(*reader.next(v));
    auto r = reader.next(v);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, "BVH_NUMBER");
    EXPECT_EQ(r.error().message.rfind("15:5: ", 0), 0u) << r.error().message;
  }
}

TEST(BvhFrames, BlankLinesBetweenRowsAreSkipped) {
  std::string text = two_joints("Frames: 2", {"1 2 3", "", "  \t", "4 5 6"});
  auto h = parse_bvh_header(text);
  ASSERT_TRUE(h.ok());
  auto all = read_all(*h, text);
  EXPECT_EQ(all.frames.size(), 2u);
  EXPECT_TRUE(all.warnings.empty());
}

struct ErrorCase {
  const char* what;
  std::string text;
  const char* code;
  const char* where;
};

TEST(BvhParser, ErrorsNameLineAndColumn) {
  const std::vector<ErrorCase> cases = {
      {"bad offset", bvh_lines({"HIERARCHY", "ROOT Hips", "{", "  OFFSET 0 0 x"}), "BVH_NUMBER",
       "4:14"},
      {"unknown channel",
       bvh_lines({"HIERARCHY", "ROOT Hips", "{", "  OFFSET 0 0 0",
                  "  CHANNELS 3 Xrotation Yrot Zrotation"}),
       "BVH_CHANNEL", "5:24"},
      {"channel twice",
       bvh_lines({"HIERARCHY", "ROOT Hips", "{", "OFFSET 0 0 0", "CHANNELS 2 Xrotation xrotation"}),
       "BVH_CHANNEL", "5:22"},
      {"channel count 7", bvh_lines({"HIERARCHY", "ROOT Hips", "{", "OFFSET 0 0 0", "CHANNELS 7"}),
       "BVH_CHANNEL", "5:10"},
      {"missing brace", bvh_lines({"HIERARCHY", "ROOT Hips", "  OFFSET 0 0 0"}), "BVH_SYNTAX",
       "3:3"},
      {"no HIERARCHY", bvh_lines({"ROOT Hips"}), "BVH_SYNTAX", "1:1"},
      {"BOM then typo", "\xEF\xBB\xBFHIERARCHX\n", "BVH_SYNTAX", "1:4"},
      {"no MOTION", bvh_lines({"HIERARCHY", "ROOT Hips", "{", "OFFSET 0 0 0", "}", "Frames: 1"}),
       "BVH_SYNTAX", "6:1"},
      {"bad frame count",
       bvh_lines({"HIERARCHY", "ROOT Hips", "{", "OFFSET 0 0 0", "}", "MOTION", "Frames: -3"}),
       "BVH_NUMBER", "7:9"},
      {"bad frame time",
       bvh_lines({"HIERARCHY", "ROOT Hips", "{", "OFFSET 0 0 0", "}", "MOTION", "Frames: 1",
                  "Frame Time: fast"}),
       "BVH_NUMBER", "8:13"},
      {"End Site with channels",
       bvh_lines({"HIERARCHY", "ROOT Hips", "{", "OFFSET 0 0 0", "End Site", "{",
                  "  CHANNELS 1 Xrotation"}),
       "BVH_SYNTAX", "7:3"},
      {"eof inside joint", bvh_lines({"HIERARCHY", "ROOT Hips", "{", "OFFSET 0 0 0"}), "BVH_SYNTAX",
       "5:1"},
      {"no offset", bvh_lines({"HIERARCHY", "ROOT Hips", "{", "}", "MOTION"}), "BVH_SYNTAX", "2:1"},
      {"empty name", bvh_lines({"HIERARCHY", "ROOT   ", "{"}), "BVH_SYNTAX", "2:8"},
  };
  for (const auto& c : cases) {
    auto h = parse_bvh_header(c.text);
    ASSERT_FALSE(h.ok()) << c.what;
    EXPECT_EQ(h.error().code, c.code) << c.what << ": " << h.error().message;
    EXPECT_EQ(h.error().message.rfind(std::string(c.where) + ": ", 0), 0u)
        << c.what << ": " << h.error().message;
    EXPECT_TRUE(h.error().location.offset.has_value()) << c.what;
  }
}

TEST(BvhLimits, RefusesAbsurdSizesBeforeReading) {
  BvhLimits small;
  small.max_joints = 2;
  std::string text = bvh_lines(
      {"HIERARCHY", "ROOT A", "{", "OFFSET 0 0 0", "JOINT B", "{", "OFFSET 0 0 0", "JOINT C", "{"});
  auto h = parse_bvh_header(text, small);
  ASSERT_FALSE(h.ok());
  EXPECT_EQ(h.error().code, "BVH_LIMIT");
  EXPECT_EQ(h.error().message.rfind("8:1: ", 0), 0u) << h.error().message;

  std::string huge = two_joints("Frames: 99999999999", {});
  auto h2 = parse_bvh_header(huge);
  ASSERT_FALSE(h2.ok());
  EXPECT_EQ(h2.error().code, "BVH_LIMIT");
  EXPECT_EQ(h2.error().message.rfind("12:9: ", 0), 0u) << h2.error().message;

  // Nesting is bounded (the parser recurses): 200 nested joints are refused.
  std::string deep = "HIERARCHY\n";
  for (int i = 0; i < 200; ++i)
    deep += (i ? "JOINT J" : "ROOT J") + std::to_string(i) + "\n{\nOFFSET 0 1 0\n";
  auto h4 = parse_bvh_header(deep);
  ASSERT_FALSE(h4.ok());
  EXPECT_EQ(h4.error().code, "BVH_LIMIT");
  // JOINT J128 is on line 2 + 3·128.
  EXPECT_EQ(h4.error().message.rfind("386:1: ", 0), 0u) << h4.error().message;

  BvhLimits narrow;
  narrow.max_line_bytes = 8;
  std::string text3 = two_joints("Frames: 1", {"1.000000 2 3"});
  auto h3 = parse_bvh_header(text3, narrow);
  ASSERT_TRUE(h3.ok());
  FrameReader reader(*h3, text3, narrow);
  std::vector<double> v(3);
  auto r = reader.next(v);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "BVH_LIMIT");
}

TEST(BvhFrames, NoChannelsUsesTheDeclaredCount) {
  std::string text = bvh_lines({"HIERARCHY", "ROOT A", "{", "OFFSET 0 0 0", "}", "MOTION",
                                "Frames: 3", "Frame Time: 0.5", "", "", ""});
  auto h = parse_bvh_header(text);
  ASSERT_TRUE(h.ok()) << h.error().to_string();
  EXPECT_EQ(read_all(*h, text).frames.size(), 3u);
  // A huge `Frames:` without the lines costs nothing: one line, one frame.
  std::string huge = bvh_lines({"HIERARCHY", "ROOT A", "{", "OFFSET 0 0 0", "}", "MOTION",
                                "Frames: 40000000", "Frame Time: 0.5", ""});
  auto h2 = parse_bvh_header(huge);
  ASSERT_TRUE(h2.ok());
  auto all = read_all(*h2, huge);
  EXPECT_EQ(all.frames.size(), 1u);
  ASSERT_EQ(all.warnings.size(), 1u);
  EXPECT_EQ(all.warnings[0].code, "BVH_MISSING_FRAMES");
}

}  // namespace
}  // namespace charkit::motion
