// The Vulkan backend's context state, shared by context_vulkan.cpp (compute)
// and graphics_vulkan.cpp (images, graphics pipelines, render passes). Not
// installed: the Vulkan types stay inside gpu/.
#pragma once

#include <volk.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "charkit/core/result.h"
#include "charkit/gpu/context.h"

namespace charkit::gpu {

/// GPU_VULKAN naming the call and its VkResult.
core::Error vk_error(const char* call, VkResult r);
/// GPU_UNAVAILABLE with the reason.
core::Error unavailable(std::string why);

struct Context::Impl {
  VkInstance instance = VK_NULL_HANDLE;  // shared_instance()'s, not owned
  std::size_t log_start = 0;             // g_log entries before this context
  VkPhysicalDevice physical = VK_NULL_HANDLE;
  VkDevice device = VK_NULL_HANDLE;
  VolkDeviceTable vk{};
  VkQueue queue = VK_NULL_HANDLE;
  std::uint32_t queue_family = 0;
  VkCommandPool pool = VK_NULL_HANDLE;
  VkFence fence = VK_NULL_HANDLE;
  DeviceInfo info;
  std::uint64_t max_buffer = 0;
  VkPhysicalDeviceMemoryProperties memory{};

  struct Buffer {
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    std::uint64_t size = 0;
    std::uint8_t* mapped = nullptr;
  };
  std::unordered_map<std::uint32_t, Buffer> buffers;
  std::uint32_t next_buffer = 1;

  struct Pipeline {
    VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
    VkPipelineLayout layout = VK_NULL_HANDLE;
    VkPipeline pipeline = VK_NULL_HANDLE;
    std::uint32_t bindings = 0;
    std::uint32_t push_bytes = 0;
    const std::uint32_t* spirv = nullptr;  // the words it was built from (embedded, static)
    std::size_t words = 0;
    std::uint32_t textures = 0;  // combined image samplers (graphics)
    bool graphics = false;       // with the attachments it draws into:
    std::vector<ImageFormat> colour_formats;
    std::optional<ImageFormat> depth_format;
  };
  std::vector<Pipeline> pipelines;

  bool graphics = false;  // the queue family also does graphics
  struct Image {
    VkImage image = VK_NULL_HANDLE;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    VkImageView view = VK_NULL_HANDLE;
    ImageFormat format = ImageFormat::kRgba8Unorm;
    std::uint32_t width = 0, height = 0;
    VkImageLayout layout = VK_IMAGE_LAYOUT_UNDEFINED;
  };
  std::unordered_map<std::uint32_t, Image> images;
  VkSampler samplers[2] = {VK_NULL_HANDLE, VK_NULL_HANDLE};  // nearest, linear; made on first use
  std::uint32_t next_image = 1;

  void destroy(Image& i) const {
    vk.vkDestroyImageView(device, i.view, nullptr);
    vk.vkDestroyImage(device, i.image, nullptr);
    vk.vkFreeMemory(device, i.memory, nullptr);
  }
  /// A memory type with `want` among `bits`.
  std::optional<std::uint32_t> memory_type(std::uint32_t bits, VkMemoryPropertyFlags want) const {
    for (std::uint32_t i = 0; i < memory.memoryTypeCount; ++i)
      if ((bits & (1U << i)) != 0 && (memory.memoryTypes[i].propertyFlags & want) == want) return i;
    return std::nullopt;
  }
  /// A full memory dependency with a layout change of `i` to `to` (from
  /// undefined when `discard`), recorded into `cmd`.
  void transition(VkCommandBuffer cmd, Image& i, VkImageLayout to, bool discard) const;
  /// A descriptor set layout of `buffers` storage buffers (bindings
  /// 0..n-1) then one combined image sampler per `textures` entry, with
  /// the context's immutable samplers, seen by `stages`.
  core::Result<VkDescriptorSetLayout> make_set_layout(std::uint32_t buffer_count,
                                                      std::span<const Sampling> textures,
                                                      VkShaderStageFlags stages);
  /// A pool for `sets` sets holding these many descriptors in all.
  core::Result<VkDescriptorPool> make_pool(std::uint32_t sets, std::uint32_t buffer_count,
                                           std::uint32_t textures);
  /// A set of `layout` from `pool` with `buffers` at bindings 0.. and
  /// `textures` after them (in shader-read layout when used).
  core::Result<VkDescriptorSet> make_set(VkDescriptorPool from, VkDescriptorSetLayout layout,
                                         std::span<const BufferId> set_buffers,
                                         std::span<const ImageId> textures);
  /// The context's sampler for `sampling`, made on first use.
  core::Result<VkSampler> sampler(Sampling sampling);
  /// A host-visible staging buffer of `bytes` (transfer source and
  /// destination) with its memory mapped at *mapped.
  core::Status staging(VkDeviceSize bytes, VkBuffer* buffer, VkDeviceMemory* out_memory,
                       void** mapped);
  /// Records with `record` into a one-time command buffer, submits, waits.
  core::Status submit(const std::function<void(VkCommandBuffer)>& record);

  ~Impl() {
    if (device != VK_NULL_HANDLE) {
      vk.vkDeviceWaitIdle(device);
      for (auto& [id, i] : images) destroy(i);
      for (VkSampler s : samplers)
        if (s != VK_NULL_HANDLE) vk.vkDestroySampler(device, s, nullptr);
      for (auto& [id, b] : buffers) {
        vk.vkDestroyBuffer(device, b.buffer, nullptr);
        vk.vkFreeMemory(device, b.memory, nullptr);
      }
      for (Pipeline& p : pipelines) {
        vk.vkDestroyPipeline(device, p.pipeline, nullptr);
        vk.vkDestroyPipelineLayout(device, p.layout, nullptr);
        vk.vkDestroyDescriptorSetLayout(device, p.set_layout, nullptr);
      }
      if (fence != VK_NULL_HANDLE) vk.vkDestroyFence(device, fence, nullptr);
      if (pool != VK_NULL_HANDLE) vk.vkDestroyCommandPool(device, pool, nullptr);
      vk.vkDestroyDevice(device, nullptr);
    }
  }
};

}  // namespace charkit::gpu
