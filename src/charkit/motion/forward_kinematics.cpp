#include "charkit/motion/forward_kinematics.h"

#include <numbers>
#include <string>

#include "charkit/motion/error_codes.h"

namespace charkit::motion {

Mat3 local_rotation(const BvhJoint& joint, std::span<const double> frame) {
  Mat3 r = core::identity3<double>();
  for (std::uint8_t i = 0; i < joint.channel_count; ++i) {
    Channel c = joint.channels[i];
    if (is_rotation(c))
      r = core::mul(r, core::mat3_about_axis(channel_axis(c), frame[joint.first_channel + i] *
                                                                  (std::numbers::pi / 180.0)));
  }
  return r;
}

core::Status ForwardKinematicsJob::validate() const {
  if (world_rotations.size() != joints.size() || world_positions.size() != joints.size())
    return core::make_error(codes::MOTION_INTERNAL,
                            "forward kinematics: " + std::to_string(joints.size()) + " joints, " +
                                std::to_string(world_rotations.size()) + " rotations and " +
                                std::to_string(world_positions.size()) +
                                " positions; one each per joint");
  for (std::size_t j = 0; j < joints.size(); ++j) {
    const BvhJoint& jt = joints[j];
    const char* wrong = nullptr;
    if (jt.parent >= static_cast<int>(j) || jt.parent < -1)
      wrong = "its parent does not come before it";
    else if (jt.channel_count > 6)
      wrong = "it has more than 6 channels";
    else if (std::size_t{jt.first_channel} + jt.channel_count > frame.size())
      wrong = "its channels lie past the frame row";
    if (wrong != nullptr)
      return core::make_error(
          codes::MOTION_INTERNAL,
          "forward kinematics: joint " + std::to_string(j) + " (" + jt.name + "): " + wrong);
  }
  return core::Ok{};
}

core::Status ForwardKinematicsJob::run(const core::RunOptions& /*options*/) const {
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
      world_positions[j] = core::add(world_positions[p], core::mul(world_rotations[p], t));
      world_rotations[j] = core::mul(world_rotations[p], local);
    }
  }
  return core::Ok{};
}

}  // namespace charkit::motion
