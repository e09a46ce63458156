// `--device auto`'s rule (gpu::auto_device_refusal, docs/gpu.md): both sides
// of the size threshold, and a software device against a hardware one.
#include <gtest/gtest.h>

#include "charkit/gpu/context.h"

namespace charkit::gpu {
namespace {

DeviceInfo device_of_type(const char* type) {
  DeviceInfo d;
  d.name = std::string("test ") + type;
  d.type = type;
  return d;
}

TEST(AutoDevice, SmallWorkStaysOnTheCpu) {
  const DeviceInfo discrete = device_of_type("discrete");
  const std::string why = auto_device_refusal(kAutoGpuMinVertices - 1, &discrete);
  EXPECT_NE(why.find("99999 vertices"), std::string::npos) << why;
  // Asked before a device is opened: the size alone decides.
  EXPECT_FALSE(auto_device_refusal(0, nullptr).empty());
  EXPECT_FALSE(auto_device_refusal(kAutoGpuMinVertices - 1, nullptr).empty());
}

TEST(AutoDevice, LargeWorkGoesToAHardwareGpu) {
  for (const char* type : {"discrete", "integrated", "virtual", "other"}) {
    const DeviceInfo d = device_of_type(type);
    EXPECT_EQ(auto_device_refusal(kAutoGpuMinVertices, &d), "") << type;
    EXPECT_EQ(auto_device_refusal(50'000'000, &d), "") << type;
  }
  EXPECT_EQ(auto_device_refusal(kAutoGpuMinVertices, nullptr), "");
}

TEST(AutoDevice, ASoftwareDeviceNeverTakesTheWork) {
  const DeviceInfo lavapipe = device_of_type("cpu");
  const std::string why = auto_device_refusal(50'000'000, &lavapipe);
  EXPECT_NE(why.find("test cpu is a software device"), std::string::npos) << why;
}

}  // namespace
}  // namespace charkit::gpu
