// BVH (Biovision Hierarchy) reading: the hierarchy is parsed once into a
// flat joint list; the MOTION rows are then read one frame at a time by a
// FrameReader, so a caller holds the skeleton plus one frame, never the whole
// motion (docs/contracts/keypoints.md §BVH input, docs/motion.md).
//
// Untrusted input: every size is bounded before anything is allocated and
// every error is a core::Error whose message starts with "line:column".
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "charkit/core/mapped_file.h"
#include "charkit/core/result.h"

namespace charkit::motion {

enum class Channel : std::uint8_t {
  kXposition,
  kYposition,
  kZposition,
  kXrotation,
  kYrotation,
  kZrotation
};

const char* channel_name(Channel c);
inline bool is_rotation(Channel c) {
  return c >= Channel::kXrotation;
}
/// 0 for X, 1 for Y, 2 for Z.
inline int channel_axis(Channel c) {
  return static_cast<int>(c) % 3;
}

/// One ROOT, JOINT or End Site, in file order: a parent always comes before
/// its children (parent < own index; -1 for a ROOT).
struct BvhJoint {
  std::string name;  ///< as written (End Sites: "End Site")
  int parent = -1;
  bool end_site = false;
  std::array<double, 3> offset{};
  std::uint8_t channel_count = 0;
  std::array<Channel, 6> channels{};
  std::uint32_t first_channel = 0;  ///< index of channels[0] in a frame row
  std::uint32_t line = 0;           ///< line of the ROOT/JOINT/End keyword
};

struct BvhLimits {
  std::uint32_t max_joints = 4096;  ///< ROOTs + JOINTs + End Sites
  std::uint32_t max_depth = 128;    ///< nesting of JOINT blocks (real rigs: < 40)
  std::uint32_t max_name_bytes = 256;
  std::uint32_t max_line_bytes = 1u << 20;  ///< a frame row (4096 joints × 6 values × ~40 bytes)
  std::uint64_t max_frames = 50'000'000;
  std::uint64_t max_values = 4'000'000'000;  ///< frames × channels
};

/// A problem the reader tolerated (e.g. fewer rows than `Frames:` declares).
struct BvhWarning {
  std::string code;
  std::string message;  ///< starts with "line:column: "
};

struct BvhHeader {
  std::vector<BvhJoint> joints;
  std::uint32_t channel_count = 0;  ///< values per frame row
  std::uint64_t declared_frames = 0;
  double frame_time = 0;          ///< seconds, as written
  std::size_t motion_offset = 0;  ///< byte offset of the first frame row
  std::uint32_t motion_line = 0;  ///< its line number
  std::size_t root_count = 0;
};

/// "line:column" of byte offset `pos` in text (1-based; columns count bytes).
std::string line_column(std::string_view text, std::size_t pos);

/// Parse HIERARCHY … Frame Time. Errors (code, message "line:col: …"):
/// BVH_SYNTAX, BVH_NUMBER, BVH_LIMIT, BVH_CHANNEL.
core::Result<BvhHeader> parse_bvh_header(std::string_view text, const BvhLimits& limits = {});

/// Reads the frame rows after the header, one at a time.
/// Policy (docs/contracts/keypoints.md): every complete row is a frame, also
/// beyond `Frames:` (warning BVH_EXTRA_FRAMES); fewer rows than declared is
/// a warning (BVH_MISSING_FRAMES); a short *last* row is dropped with a
/// warning (BVH_TRUNCATED_ROW); a row with the wrong number of values
/// anywhere else, or a value that is not a finite number, is an error.
/// Blank lines are skipped.
class FrameReader {
 public:
  FrameReader(const BvhHeader& header, std::string_view text, const BvhLimits& limits = {},
              const core::InputHints* hints = nullptr);

  /// Fill values (size header.channel_count) with the next frame: true when a
  /// frame was read, false at the end.
  core::Result<bool> next(std::span<double> values);

  std::uint64_t frames_read() const { return frames_; }
  const std::vector<BvhWarning>& warnings() const { return warnings_; }

 private:
  void finish();
  void release_pages(bool all);

  const BvhHeader& header_;
  std::string_view text_;
  BvhLimits limits_;
  const core::InputHints* hints_;
  std::size_t pos_;
  std::size_t released_;
  std::uint32_t line_;
  std::uint64_t frames_ = 0;
  bool done_ = false;
  std::vector<BvhWarning> warnings_;
};

/// Parse one number token: optional sign ('+' too), leading dot, exponent;
/// locale-independent. False if not a finite number or trailing characters.
bool parse_bvh_number(std::string_view token, double& out);

}  // namespace charkit::motion
