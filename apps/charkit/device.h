// The kernel device of a command (docs/gpu.md): `--device cpu|gpu|auto`, or
// CHARKIT_DEVICE in the environment when the option is not given; `auto`
// (the default) is the Vulkan device when one can be opened, else the CPU.
#pragma once

#include <memory>
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

/// `option` as given ("" when absent). Errors: USAGE (a value that is not
/// cpu, gpu or auto, also from CHARKIT_DEVICE), GPU_UNAVAILABLE / GPU_VULKAN
/// (gpu asked for and none opens).
core::Result<KernelDevice> open_kernel_device(const std::string& option);

}  // namespace charkit::app
