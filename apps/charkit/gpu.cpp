// `charkit gpu info`: the Vulkan devices the GPU backend sees, their drivers
// and the limits that matter to charkit's kernels (docs/gpu.md).
#include <iostream>
#include <memory>

#include "charkit/core/json.h"
#include "charkit/gpu/context.h"
#include "cli_output.h"
#include "commands.h"
#include "printable.h"

namespace charkit::app {
namespace {

using core::Json;

int run_gpu_info(bool json) {
  auto devices = gpu::list_devices();
  if (!devices) {
    if (json) {
      print_json(Json{{"vulkan", gpu::built_with_vulkan()},
                      {"devices", Json::array()},
                      {"reason", devices.error().message}});
      return kExitOk;
    }
    std::cout << "no Vulkan devices: " << printable(devices.error().message)
              << "\nkernels run on the cpu device\n";
    return kExitOk;
  }
  if (json) {
    Json list = Json::array();
    for (const gpu::DeviceInfo& d : *devices)
      list.push_back(Json{{"index", d.index},
                          {"name", d.name},
                          {"type", d.type},
                          {"apiVersion", d.api_version},
                          {"driverName", d.driver_name},
                          {"driverInfo", d.driver_info},
                          {"driverVersion", d.driver_version},
                          {"vendorId", d.vendor_id},
                          {"deviceId", d.device_id},
                          {"maxStorageBufferRange", d.max_storage_buffer_range},
                          {"maxComputeWorkGroupInvocations", d.max_compute_invocations},
                          {"maxComputeWorkGroupSize", d.max_workgroup_size},
                          {"maxComputeWorkGroupCount", d.max_workgroup_count},
                          {"subgroupSize", d.subgroup_size},
                          {"deviceLocalBytes", d.device_local_bytes},
                          {"usable", d.usable}});
    print_json(Json{{"vulkan", true}, {"devices", std::move(list)}});
    return kExitOk;
  }
  if (devices->empty()) std::cout << "the Vulkan loader found no device\n";
  for (const gpu::DeviceInfo& d : *devices) {
    std::cout << d.index << ": " << printable(d.name) << " (" << d.type << ", Vulkan "
              << d.api_version << ", driver " << printable(d.driver_name) << " "
              << printable(d.driver_info) << ")"
              << (d.usable ? "" : "  [not usable: needs 1.3 + maintenance4]")
              << "\n   storage buffer range " << d.max_storage_buffer_range
              << " bytes, workgroup invocations " << d.max_compute_invocations << ", subgroup size "
              << d.subgroup_size << ", device-local memory " << d.device_local_bytes / (1024 * 1024)
              << " MiB\n";
  }
  return kExitOk;
}

}  // namespace

void add_gpu_commands(CLI::App& app, int& exit_code) {
  CLI::App* g = app.add_subcommand("gpu", "The GPU backend (Vulkan): devices and limits");
  g->require_subcommand(1);
  auto json = std::make_shared<bool>(false);
  CLI::App* info = g->add_subcommand(
      "info",
      "List the Vulkan devices (a real GPU, or Mesa's lavapipe on the CPU), their drivers and "
      "the limits charkit's kernels depend on; says why when there are none");
  info->add_flag("--json", *json, "Print the devices as JSON");
  info->footer(
      "Exit status: 0 (also when there is no device: the kernels then run on the cpu).\n"
      "Guide: docs/gpu.md");
  info->callback([json, &exit_code] { exit_code = run_gpu_info(*json); });
}

}  // namespace charkit::app
