#include "charkit/motion/forward_kinematics.h"

#include <cmath>
#include <numbers>

namespace charkit::motion {

namespace {

Mat3 identity() {
  return {1, 0, 0, 0, 1, 0, 0, 0, 1};
}

Mat3 mul(const Mat3& a, const Mat3& b) {
  Mat3 r{};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      r[i * 3 + j] = a[i * 3] * b[j] + a[i * 3 + 1] * b[3 + j] + a[i * 3 + 2] * b[6 + j];
  return r;
}

Vec3 mul(const Mat3& a, const Vec3& v) {
  return {a[0] * v[0] + a[1] * v[1] + a[2] * v[2], a[3] * v[0] + a[4] * v[1] + a[5] * v[2],
          a[6] * v[0] + a[7] * v[1] + a[8] * v[2]};
}

// Right-handed rotation about one axis by deg degrees.
Mat3 axis_rotation(int axis, double deg) {
  const double r = deg * (std::numbers::pi / 180.0);
  const double c = std::cos(r), s = std::sin(r);
  switch (axis) {
    case 0:
      return {1, 0, 0, 0, c, -s, 0, s, c};
    case 1:
      return {c, 0, s, 0, 1, 0, -s, 0, c};
    default:
      return {c, -s, 0, s, c, 0, 0, 0, 1};
  }
}

}  // namespace

Mat3 local_rotation(const BvhJoint& joint, std::span<const double> frame) {
  Mat3 r = identity();
  for (std::uint8_t i = 0; i < joint.channel_count; ++i) {
    Channel c = joint.channels[i];
    if (is_rotation(c)) r = mul(r, axis_rotation(channel_axis(c), frame[joint.first_channel + i]));
  }
  return r;
}

bool ForwardKinematicsJob::validate() const {
  if (world_rotations.size() != joints.size() || world_positions.size() != joints.size())
    return false;
  for (std::size_t j = 0; j < joints.size(); ++j) {
    const BvhJoint& jt = joints[j];
    if (jt.parent >= static_cast<int>(j) || jt.parent < -1) return false;
    if (jt.channel_count > 6) return false;
    if (std::size_t{jt.first_channel} + jt.channel_count > frame.size()) return false;
  }
  return true;
}

void ForwardKinematicsJob::run() const {
  for (std::size_t j = 0; j < joints.size(); ++j) {
    const BvhJoint& jt = joints[j];
    Vec3 t = jt.offset;
    for (std::uint8_t i = 0; i < jt.channel_count; ++i) {
      Channel c = jt.channels[i];
      if (!is_rotation(c))
        t[static_cast<std::size_t>(channel_axis(c))] = frame[jt.first_channel + i];
    }
    const Mat3 local = local_rotation(jt, frame);
    if (jt.parent < 0) {
      world_rotations[j] = local;
      world_positions[j] = t;
    } else {
      const auto p = static_cast<std::size_t>(jt.parent);
      const Vec3 d = mul(world_rotations[p], t);
      world_positions[j] = {world_positions[p][0] + d[0], world_positions[p][1] + d[1],
                            world_positions[p][2] + d[2]};
      world_rotations[j] = mul(world_rotations[p], local);
    }
  }
}

}  // namespace charkit::motion
