// The kernel device of a command (docs/gpu.md): `--device cpu|gpu|auto`, or
// CHARKIT_DEVICE in the environment when the option is not given; `auto`
// (the default) chooses by the work's size and the device's kind.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "charkit/core/result.h"
#include "charkit/gpu/context.h"

namespace charkit::app {

struct KernelDevice {
  std::unique_ptr<gpu::Context> gpu;  ///< null: the CPU kernels
  std::string name;                   ///< "cpu" or the Vulkan device's name
  std::string note;                   ///< why auto chose the CPU ("" otherwise)
};

/// Adds `--device cpu|gpu|auto` (stored in `value`, "" when absent) to a
/// command that runs a kernel.
void add_device_option(CLI::App& command, std::string& value);

/// `option` as given ("" when absent), else CHARKIT_DEVICE, else "auto".
/// Errors: USAGE (a value that is not cpu, gpu or auto).
core::Result<std::string> device_choice(const std::string& option);

/// The device `option` names (device_choice). With `work_vertices` (the
/// vertices the command's kernels will process) `auto` follows
/// gpu::auto_device_refusal: the CPU for small work or a software device,
/// the reason in `note`. Without it (a command with no CPU path) `auto` is
/// the Vulkan device when one opens. Errors: USAGE, GPU_UNAVAILABLE /
/// GPU_VULKAN (gpu asked for and none opens).
core::Result<KernelDevice> open_kernel_device(const std::string& option,
                                              std::optional<std::uint64_t> work_vertices = {});

}  // namespace charkit::app
