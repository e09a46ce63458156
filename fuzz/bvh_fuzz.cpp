// libFuzzer target: BVH header parser, frame reader, forward kinematics, the
// MediaPipe pose job and the NDJSON line on whatever was accepted. The limits
// are small so one input costs little work (at most 256 joints × 2000 frames).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "charkit/motion/convert.h"
#include "charkit/motion/detail/ndjson.h"
#include "charkit/motion/forward_kinematics.h"
#include "charkit/motion/mediapipe33.h"

using namespace charkit::motion;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  BvhLimits limits;
  limits.max_joints = 256;
  limits.max_frames = 2000;
  limits.max_line_bytes = 1 << 16;
  auto header = parse_bvh_header(text, limits);
  if (!header) {
    (void)header.error().to_string();
    return 0;
  }
  const BvhHeader& h = *header;
  const JointMapping mapping = map_joints(h.joints, default_joint_table());
  std::vector<double> values(h.channel_count);
  std::vector<Mat3> rot(h.joints.size());
  std::vector<Vec3> pos(h.joints.size());
  std::array<Keypoint, kPointCount> points{};
  std::array<double, kAngleCount> angles{};
  ForwardKinematicsJob fk{h.joints, values, rot, pos};
  PoseJob pose{&mapping, pos, UpAxis::kZ, points, angles};
  if (!fk.validate() || !pose.validate()) __builtin_trap();  // the parser's output must always fit
  FrameReader reader(h, text, limits);
  std::string line;
  for (;;) {
    auto got = reader.next(values);
    if (!got || !*got) break;
    if (!fk.run() || !pose.run()) __builtin_trap();
    for (auto& p : points) p = project(p, 0.01);
    line.clear();
    append_frame_line(line, reader.frames_read(), frame_time_ms(reader.frames_read(), 30), points,
                      angles);
    for (double a : angles)
      if (!(a >= -1.0 && a <= 1.0)) __builtin_trap();  // §5: always a clamped cosine
  }
  (void)fps_from_frame_time(h.frame_time);
  // The whole pipeline on the same text.
  ConvertOptions o;
  o.limits = limits;
  auto r = convert_bvh(text, o, [](std::string_view) { return true; });
  (void)r;
  return 0;
}
