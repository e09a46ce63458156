#include "device.h"

#include <cstdint>
#include <cstdlib>
#include <optional>

#include "error_codes.h"

namespace charkit::app {

void add_device_option(CLI::App& command, std::string& value) {
  command
      .add_option("--device", value,
                  "Kernel device: cpu, gpu (Vulkan; an error when none opens) or auto (the "
                  "Vulkan device for work of 100,000 vertices or more on a hardware GPU, else "
                  "cpu; docs/gpu.md). Default: CHARKIT_DEVICE, else auto")
      ->check(CLI::IsMember({"cpu", "gpu", "auto"}));
}

core::Result<std::string> device_choice(const std::string& option) {
  std::string choice = option;
  if (choice.empty()) {
    const char* env = std::getenv("CHARKIT_DEVICE");  // not-an-error-code
    choice = env != nullptr && *env != '\0' ? env : "auto";
  }
  if (choice != "cpu" && choice != "gpu" && choice != "auto")
    return core::make_error(
        codes::USAGE,
        "the device is \"" + choice + "\" (--device or CHARKIT_DEVICE); it is cpu, gpu or auto");
  return choice;
}

core::Result<KernelDevice> open_kernel_device(const std::string& option,
                                              std::optional<std::uint64_t> work_vertices) {
  auto choice = device_choice(option);
  if (!choice) return std::move(choice).error();
  KernelDevice d;
  d.name = "cpu";
  if (*choice == "cpu") return d;
  const bool automatic = *choice == "auto";
  // Small work never pays for opening a device.
  if (automatic && work_vertices) {
    d.note = gpu::auto_device_refusal(*work_vertices, nullptr);
    if (!d.note.empty()) return d;
  }
  auto ctx = gpu::Context::create();
  if (!ctx) {
    if (!automatic) return std::move(ctx).error();
    d.note = ctx.error().message;
    return d;
  }
  if (automatic && work_vertices) {
    d.note = gpu::auto_device_refusal(*work_vertices, &(*ctx)->device());
    if (!d.note.empty()) return d;
  }
  d.gpu = std::move(*ctx);
  d.name = d.gpu->device().name;
  return d;
}

}  // namespace charkit::app
