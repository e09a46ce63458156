// FrameSource (server/detail/frame_source.h): keypoint NDJSON frames found by one
// bounded scan and read a window at a time, as motion streams use them.
#include "charkit/server/detail/frame_source.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "charkit/server/detail/ws.h"

namespace charkit::server::ws {
namespace {

/// One keypoints NDJSON line (keypoints.md) whose values encode the frame number.
std::string line(std::uint32_t frame) {
  std::string s = "{\"frame\":" + std::to_string(frame) +
                  ",\"timeMs\":" + std::to_string(frame * 10) + ".5,\"points\":[";
  for (int p = 0; p < 33; ++p) {
    if (p) s += ",";
    s += "[" + std::to_string(frame) + "," + std::to_string(p) + ",0.25,1]";
  }
  s += "],\"angles\":[1,0.5,0,0,0,0,0,0,-1]}";
  return s;
}

/// A ReadAt over a string that records the bytes asked for.
struct StringFile {
  std::string text;
  std::uint64_t bytes_read = 0;
  std::uint64_t largest_read = 0;
  FrameSource::ReadAt reader() {
    return [this](std::uint64_t off, std::span<std::uint8_t> out) -> core::Result<std::size_t> {
      if (off >= text.size()) return std::size_t{0};
      const std::size_t n = std::min<std::size_t>(out.size(), text.size() - off);
      std::memcpy(out.data(), text.data() + off, n);
      bytes_read += n;
      largest_read = std::max<std::uint64_t>(largest_read, n);
      return n;
    };
  }
};

std::uint32_t frame_number(const std::string& wire) {
  auto v = decode_frame(wire);
  EXPECT_TRUE(v) << v.error().to_string();
  return v ? v->frame : 0xffffffffu;
}

TEST(FrameSource, IndexesLinesAndReadsWindows) {
  StringFile f;
  for (std::uint32_t i = 0; i < 300; ++i) f.text += line(i) + (i % 7 == 0 ? "\r\n\n" : "\n");
  auto src = FrameSource::open(f.reader(), f.text.size(), 30.0);
  ASSERT_TRUE(src) << src.error().to_string();
  EXPECT_EQ((*src)->frames(), 300u);
  EXPECT_EQ((*src)->fps(), 30.0);

  f.bytes_read = 0;
  auto w = (*src)->read(100, 50);
  ASSERT_TRUE(w) << w.error().to_string();
  ASSERT_EQ(w->size(), 50u);
  for (std::size_t k = 0; k < w->size(); ++k) {
    ASSERT_EQ((*w)[k]->size(), kFrameBytes);
    EXPECT_EQ(frame_number(*(*w)[k]), 100 + k);
  }
  // Only the window's lines were read, not the file.
  EXPECT_LT(f.bytes_read, 51 * (line(299).size() + 3));
  auto v = decode_frame(*(*w)[0]);
  EXPECT_FLOAT_EQ(v->time_ms, 1000.5f);
  EXPECT_FLOAT_EQ(v->points[4 * 5 + 1], 5.0f);  // point 5's y
  EXPECT_FLOAT_EQ(v->angles[8], -1.0f);

  // Windows are clamped at the end; past the end is empty.
  auto tail = (*src)->read(290, 100);
  ASSERT_TRUE(tail);
  ASSERT_EQ(tail->size(), 10u);
  EXPECT_EQ(frame_number(*tail->back()), 299u);
  EXPECT_TRUE((*src)->read(300, 5)->empty());
}

TEST(FrameSource, ScanUsesBoundedReads) {
  StringFile f;
  for (std::uint32_t i = 0; i < 5000; ++i) f.text += line(i) + "\n";  // ~2.8 MB
  ASSERT_GT(f.text.size(), 2u << 20);  // more than the 1 MiB scan buffer, twice
  auto src = FrameSource::open(f.reader(), f.text.size(), 60.0);
  ASSERT_TRUE(src);
  EXPECT_EQ((*src)->frames(), 5000u);
  EXPECT_LE(f.largest_read, 1u << 20);
}

TEST(FrameSource, Refusals) {
  StringFile empty{"\n\n\r\n"};
  auto e = FrameSource::open(empty.reader(), empty.text.size(), 30);
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().code, "KEYPOINTS_EMPTY");

  StringFile ok{line(0) + "\n"};
  EXPECT_EQ(FrameSource::open(ok.reader(), ok.text.size(), 0).error().code, "KEYPOINTS_FPS");
  EXPECT_EQ(FrameSource::open(ok.reader(), ok.text.size(), 5000).error().code, "KEYPOINTS_FPS");

  StringFile longline{line(0) + "\n" + std::string(kMaxNdjsonLine + 10, 'x') + "\n"};
  auto l = FrameSource::open(longline.reader(), longline.text.size(), 30);
  ASSERT_FALSE(l);
  EXPECT_EQ(l.error().code, "KEYPOINTS_LINE");
  // A line longer than the limit with no newline at all stops the scan early.
  StringFile endless{std::string(3u << 20, 'y')};
  auto n = FrameSource::open(endless.reader(), endless.text.size(), 30);
  ASSERT_FALSE(n);
  EXPECT_EQ(n.error().code, "KEYPOINTS_LINE");
  EXPECT_LE(endless.bytes_read, 2u << 20);

  // A line that does not parse is reported with its frame when read.
  StringFile bad{line(0) + "\n{\"frame\":1}\n" + line(2) + "\n"};
  auto b = FrameSource::open(bad.reader(), bad.text.size(), 30);
  ASSERT_TRUE(b);
  auto r = (*b)->read(0, 3);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "KEYPOINTS_LINE");
  EXPECT_NE(r.error().message.find("frame 1"), std::string::npos) << r.error().message;

  // Cancelled scans stop.
  std::atomic<bool> stop{true};
  auto c = FrameSource::open(ok.reader(), ok.text.size(), 30, &stop);
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().code, "SERVER_STOPPING");
}

TEST(FrameSource, FileShorterThanIndexedIsAnErrorNotACrash) {
  StringFile f;
  for (std::uint32_t i = 0; i < 10; ++i) f.text += line(i) + "\n";
  auto src = FrameSource::open(f.reader(), f.text.size(), 30);
  ASSERT_TRUE(src);
  f.text.resize(f.text.size() / 2);  // the stored file changed under the index
  auto r = (*src)->read(0, 10);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, "KEYPOINTS_READ");
}

}  // namespace
}  // namespace charkit::server::ws
