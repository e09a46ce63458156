#include "device.h"

#include <cstdlib>

#include "error_codes.h"

namespace charkit::app {

void add_device_option(CLI::App& command, std::string& value) {
  command
      .add_option("--device", value,
                  "Kernel device: cpu, gpu (Vulkan; an error when none opens) or auto (the "
                  "Vulkan device when one opens, else cpu). Default: CHARKIT_DEVICE, else auto")
      ->check(CLI::IsMember({"cpu", "gpu", "auto"}));
}

core::Result<KernelDevice> open_kernel_device(const std::string& option) {
  std::string choice = option;
  if (choice.empty()) {
    const char* env = std::getenv("CHARKIT_DEVICE");  // not-an-error-code
    choice = env != nullptr && *env != '\0' ? env : "auto";
  }
  if (choice != "cpu" && choice != "gpu" && choice != "auto")
    return core::make_error(
        codes::USAGE,
        "the device is \"" + choice + "\" (--device or CHARKIT_DEVICE); it is cpu, gpu or auto");
  KernelDevice d;
  d.name = "cpu";
  if (choice == "cpu") return d;
  auto ctx = gpu::Context::create();
  if (!ctx) {
    if (choice == "gpu") return std::move(ctx).error();
    d.note = ctx.error().message;
    return d;
  }
  d.gpu = std::move(*ctx);
  d.name = d.gpu->device().name;
  return d;
}

}  // namespace charkit::app
