// The GPU backend (docs/gpu.md): Vulkan 1.3 compute through volk, on a real
// GPU when there is one, else on Mesa's lavapipe (a CPU Vulkan driver, what
// the tests and CI use). A Context owns an instance, one device with a
// compute queue, its buffers (host-visible storage buffers, one allocation
// each) and its compute pipelines (SPIR-V compiled at build time by glslc and
// embedded in the library). Kernels (deform::Morph40Job::run_gpu …) record
// dispatches and run them; the Vulkan types stay inside gpu/.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "charkit/core/result.h"

namespace charkit::gpu {

/// True when this build has the Vulkan backend (volk and glslc were found).
bool built_with_vulkan();

/// One Vulkan physical device and the limits that matter to charkit.
struct DeviceInfo {
  std::uint32_t index = 0;
  std::string name;
  std::string type;         ///< "discrete", "integrated", "virtual", "cpu" or "other"
  std::string api_version;  ///< "1.3.230"
  std::uint32_t driver_version = 0;
  std::string driver_name;  ///< e.g. "llvmpipe", "NVIDIA"
  std::string driver_info;
  std::uint32_t vendor_id = 0;
  std::uint32_t device_id = 0;
  std::uint64_t max_storage_buffer_range = 0;
  std::uint32_t max_compute_invocations = 0;
  std::array<std::uint32_t, 3> max_workgroup_size{};
  std::array<std::uint32_t, 3> max_workgroup_count{};
  std::uint32_t subgroup_size = 0;
  std::uint64_t device_local_bytes = 0;
  /// Vulkan 1.3 with the maintenance4 feature: what charkit's shaders need.
  bool usable = false;
};

/// Every Vulkan physical device. Errors: GPU_UNAVAILABLE (no loader, or a
/// build without Vulkan), GPU_VULKAN.
core::Result<std::vector<DeviceInfo>> list_devices();

struct ContextOptions {
  /// The Khronos validation layer with a messenger that records every
  /// warning and error (validation_messages()); also on when the
  /// environment has CHARKIT_VULKAN_VALIDATION=1. GPU_UNAVAILABLE when the
  /// layer is not installed.
  bool validation = false;
  /// A device index of list_devices(); unset: the first usable GPU
  /// (discrete, integrated, virtual), else the first usable device.
  std::optional<std::uint32_t> device;
  /// Largest buffer to create (0: the device's maxStorageBufferRange; a
  /// smaller value makes kernels chunk their work as on a device with that
  /// limit, which the tests use).
  std::uint64_t max_buffer_bytes = 0;
};

/// A kernel's buffer: host-visible, coherent, persistently mapped.
struct BufferId {
  std::uint32_t id = 0;
};
struct PipelineId {
  std::uint32_t id = 0;
};

/// One compute dispatch: a pipeline, its storage buffers (binding i =
/// buffers[i]), push constants and the number of workgroups along x.
struct Dispatch {
  PipelineId pipeline;
  std::vector<BufferId> buffers;
  std::vector<std::uint8_t> push;
  std::uint32_t groups = 0;
};

class Context {
 public:
  /// Errors: GPU_UNAVAILABLE (with the reason), GPU_VULKAN.
  static core::Result<std::unique_ptr<Context>> create(const ContextOptions& options = {});
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  const DeviceInfo& device() const;
  /// The largest buffer create_buffer accepts: the device's storage-buffer
  /// range, or ContextOptions::max_buffer_bytes when smaller.
  std::uint64_t max_buffer_bytes() const;
  /// The validation layer's warnings and errors logged since this context was
  /// created (validation on).
  std::vector<std::string> validation_messages() const;

  /// A storage buffer of `bytes` (> 0). GPU_LIMIT past the device's
  /// maxStorageBufferRange, GPU_VULKAN when allocation fails.
  core::Result<BufferId> create_buffer(std::uint64_t bytes);
  /// Its mapped bytes (valid until free_buffer or the context's end).
  std::span<std::uint8_t> map(BufferId buffer);
  void free_buffer(BufferId buffer);
  /// A compute pipeline from SPIR-V words with `storage_buffers` bindings
  /// (0..n-1 in set 0) and `push_bytes` of push constants. Built once per
  /// context: the same words (by address: embedded shaders are static) and
  /// layout give the same pipeline again.
  core::Result<PipelineId> create_pipeline(std::span<const std::uint32_t> spirv,
                                           std::uint32_t storage_buffers, std::uint32_t push_bytes);
  /// Records the dispatches in order into one command buffer, a
  /// shader-write → shader-read/write barrier between consecutive ones and a
  /// shader → host barrier at the end, submits it and waits.
  core::Status run(std::span<const Dispatch> dispatches);

 private:
  Context();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace charkit::gpu
