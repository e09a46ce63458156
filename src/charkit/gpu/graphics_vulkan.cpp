// Graphics on the Vulkan backend (docs/gpu.md, "Graphics"): attachment
// images, graphics pipelines built from a GraphicsState (dynamic rendering,
// no render-pass objects), render passes recorded into one command buffer,
// and image read-back through a host-visible staging buffer.
#include <volk.h>

#include <algorithm>
#include <cstring>
#include <set>
#include <string>
#include <utility>

#include "charkit/gpu/context.h"
#include "charkit/gpu/detail/vulkan.h"
#include "charkit/gpu/error_codes.h"

namespace charkit::gpu {

namespace {

VkFormat vk_format(ImageFormat f) {
  switch (f) {
    case ImageFormat::kRgba16Float:
      return VK_FORMAT_R16G16B16A16_SFLOAT;
    case ImageFormat::kRgba8Unorm:
      return VK_FORMAT_R8G8B8A8_UNORM;
    case ImageFormat::kDepth32Stencil8:
      return VK_FORMAT_D32_SFLOAT_S8_UINT;
    case ImageFormat::kDepth32:
      return VK_FORMAT_D32_SFLOAT;
  }
  return VK_FORMAT_UNDEFINED;
}

bool is_depth(ImageFormat f) {
  return f == ImageFormat::kDepth32Stencil8 || f == ImageFormat::kDepth32;
}
bool has_stencil(ImageFormat f) {
  return f == ImageFormat::kDepth32Stencil8;
}

VkImageAspectFlags aspects(ImageFormat f) {
  if (!is_depth(f)) return VK_IMAGE_ASPECT_COLOR_BIT;
  return VK_IMAGE_ASPECT_DEPTH_BIT | (has_stencil(f) ? VK_IMAGE_ASPECT_STENCIL_BIT : 0);
}

core::Error bad_use(std::string what) {
  return core::make_error(codes::GPU_VULKAN, std::move(what));
}

VkStencilOpState stencil_face(const StencilState& s) {
  VkStencilOpState f{};
  f.failOp = static_cast<VkStencilOp>(s.fail);
  f.passOp = static_cast<VkStencilOp>(s.pass);
  f.depthFailOp = static_cast<VkStencilOp>(s.depth_fail);
  f.compareOp = static_cast<VkCompareOp>(s.compare);
  f.compareMask = s.compare_mask;
  f.writeMask = s.write_mask;
  f.reference = s.reference;
  return f;
}

}  // namespace

/// A full memory dependency with a layout change (old == new: only the
/// dependency).
void Context::Impl::transition(VkCommandBuffer cmd, Image& i, VkImageLayout to,
                               bool discard) const {
  VkImageMemoryBarrier b{};
  b.sType = VK_STRUCTURE_TYPE_IMAGE_MEMORY_BARRIER;
  b.srcAccessMask = VK_ACCESS_MEMORY_WRITE_BIT;
  b.dstAccessMask = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT;
  b.oldLayout = discard ? VK_IMAGE_LAYOUT_UNDEFINED : i.layout;
  b.newLayout = to;
  b.srcQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
  b.dstQueueFamilyIndex = VK_QUEUE_FAMILY_IGNORED;
  b.image = i.image;
  b.subresourceRange = {aspects(i.format), 0, 1, 0, 1};
  vk.vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT,
                          VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0, 0, nullptr, 0, nullptr, 1, &b);
  i.layout = to;
}

core::Result<VkDescriptorSetLayout> Context::Impl::make_set_layout(
    std::uint32_t buffer_count, std::span<const Sampling> textures, VkShaderStageFlags stages) {
  std::vector<VkSampler> chosen;  // immutable: nearest or linear, clamped to the edge
  for (Sampling s : textures) {
    auto one = sampler(s);
    if (!one) return std::move(one).error();
    chosen.push_back(*one);
  }
  std::vector<VkDescriptorSetLayoutBinding> bindings(buffer_count + textures.size());
  for (std::uint32_t i = 0; i < bindings.size(); ++i) {
    bindings[i].binding = i;
    bindings[i].descriptorType = i < buffer_count ? VK_DESCRIPTOR_TYPE_STORAGE_BUFFER
                                                  : VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER;
    bindings[i].descriptorCount = 1;
    bindings[i].stageFlags = stages;
    if (i >= buffer_count) bindings[i].pImmutableSamplers = &chosen[i - buffer_count];
  }
  VkDescriptorSetLayoutCreateInfo li{};
  li.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO;
  li.bindingCount = static_cast<std::uint32_t>(bindings.size());
  li.pBindings = bindings.data();
  VkDescriptorSetLayout layout = VK_NULL_HANDLE;
  if (VkResult r = vk.vkCreateDescriptorSetLayout(device, &li, nullptr, &layout); r != VK_SUCCESS)
    return vk_error("vkCreateDescriptorSetLayout", r);
  return layout;
}

core::Result<VkDescriptorPool> Context::Impl::make_pool(std::uint32_t sets,
                                                        std::uint32_t buffer_count,
                                                        std::uint32_t textures) {
  const VkDescriptorPoolSize sizes[2] = {
      {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, std::max(buffer_count, 1U)},
      {VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER, std::max(textures, 1U)}};
  VkDescriptorPoolCreateInfo dpi{};
  dpi.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO;
  dpi.maxSets = std::max(sets, 1U);
  dpi.poolSizeCount = 2;
  dpi.pPoolSizes = sizes;
  VkDescriptorPool made = VK_NULL_HANDLE;
  if (VkResult r = vk.vkCreateDescriptorPool(device, &dpi, nullptr, &made); r != VK_SUCCESS)
    return vk_error("vkCreateDescriptorPool", r);
  return made;
}

core::Result<VkDescriptorSet> Context::Impl::make_set(VkDescriptorPool from,
                                                      VkDescriptorSetLayout layout,
                                                      std::span<const BufferId> set_buffers,
                                                      std::span<const ImageId> textures) {
  VkDescriptorSet set = VK_NULL_HANDLE;
  VkDescriptorSetAllocateInfo sai{};
  sai.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO;
  sai.descriptorPool = from;
  sai.descriptorSetCount = 1;
  sai.pSetLayouts = &layout;
  if (VkResult r = vk.vkAllocateDescriptorSets(device, &sai, &set); r != VK_SUCCESS)
    return vk_error("vkAllocateDescriptorSets", r);
  const std::size_t nb = set_buffers.size();
  std::vector<VkDescriptorBufferInfo> buffer_infos(nb);
  std::vector<VkDescriptorImageInfo> image_infos(textures.size());
  std::vector<VkWriteDescriptorSet> writes(nb + textures.size());
  for (std::size_t w = 0; w < writes.size(); ++w) {
    writes[w].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
    writes[w].dstSet = set;
    writes[w].dstBinding = static_cast<std::uint32_t>(w);
    writes[w].descriptorCount = 1;
    if (w < nb) {
      buffer_infos[w] = {buffers[set_buffers[w].id].buffer, 0, VK_WHOLE_SIZE};
      writes[w].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      writes[w].pBufferInfo = &buffer_infos[w];
    } else {
      image_infos[w - nb] = {VK_NULL_HANDLE, images[textures[w - nb].id].view,
                             VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL};
      writes[w].descriptorType = VK_DESCRIPTOR_TYPE_COMBINED_IMAGE_SAMPLER;
      writes[w].pImageInfo = &image_infos[w - nb];
    }
  }
  vk.vkUpdateDescriptorSets(device, static_cast<std::uint32_t>(writes.size()), writes.data(), 0,
                            nullptr);
  return set;
}

core::Result<VkSampler> Context::Impl::sampler(Sampling sampling) {
  VkSampler& slot = samplers[sampling == Sampling::kLinear ? 1 : 0];
  if (slot == VK_NULL_HANDLE) {
    VkSamplerCreateInfo si{};
    si.sType = VK_STRUCTURE_TYPE_SAMPLER_CREATE_INFO;
    si.magFilter = si.minFilter =
        sampling == Sampling::kLinear ? VK_FILTER_LINEAR : VK_FILTER_NEAREST;
    si.mipmapMode = VK_SAMPLER_MIPMAP_MODE_NEAREST;
    si.addressModeU = si.addressModeV = si.addressModeW = VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE;
    si.maxLod = 0.0F;
    if (VkResult r = vk.vkCreateSampler(device, &si, nullptr, &slot); r != VK_SUCCESS)
      return vk_error("vkCreateSampler", r);
  }
  return slot;
}

core::Status Context::Impl::staging(VkDeviceSize bytes, VkBuffer* buffer,
                                    VkDeviceMemory* out_memory, void** mapped) {
  VkBufferCreateInfo bi{};
  bi.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  bi.size = std::max<VkDeviceSize>(bytes, 4);
  bi.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  bi.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  if (VkResult r = vk.vkCreateBuffer(device, &bi, nullptr, buffer); r != VK_SUCCESS)
    return vk_error("vkCreateBuffer", r);
  VkMemoryRequirements req{};
  vk.vkGetBufferMemoryRequirements(device, *buffer, &req);
  const auto type = memory_type(req.memoryTypeBits, VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                                        VK_MEMORY_PROPERTY_HOST_COHERENT_BIT);
  VkMemoryAllocateInfo ai{};
  ai.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
  ai.allocationSize = req.size;
  ai.memoryTypeIndex = type.value_or(0);
  *out_memory = VK_NULL_HANDLE;
  VkResult r =
      type ? vk.vkAllocateMemory(device, &ai, nullptr, out_memory) : VK_ERROR_FEATURE_NOT_PRESENT;
  if (r == VK_SUCCESS) r = vk.vkBindBufferMemory(device, *buffer, *out_memory, 0);
  if (r == VK_SUCCESS) r = vk.vkMapMemory(device, *out_memory, 0, VK_WHOLE_SIZE, 0, mapped);
  if (r != VK_SUCCESS) {
    vk.vkDestroyBuffer(device, *buffer, nullptr);
    if (*out_memory != VK_NULL_HANDLE) vk.vkFreeMemory(device, *out_memory, nullptr);
    return vk_error("allocating a staging buffer", r);
  }
  return core::Ok{};
}

core::Status Context::Impl::submit(const std::function<void(VkCommandBuffer)>& record) {
  VkCommandBuffer cmd = VK_NULL_HANDLE;
  VkCommandBufferAllocateInfo cai{};
  cai.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
  cai.commandPool = pool;
  cai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  cai.commandBufferCount = 1;
  if (VkResult r = vk.vkAllocateCommandBuffers(device, &cai, &cmd); r != VK_SUCCESS)
    return vk_error("vkAllocateCommandBuffers", r);
  VkCommandBufferBeginInfo bi{};
  bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  vk.vkBeginCommandBuffer(cmd, &bi);
  record(cmd);
  vk.vkEndCommandBuffer(cmd);
  VkSubmitInfo submit{};
  submit.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &cmd;
  VkResult r = vk.vkQueueSubmit(queue, 1, &submit, fence);
  if (r == VK_SUCCESS) r = vk.vkWaitForFences(device, 1, &fence, VK_TRUE, UINT64_MAX);
  vk.vkResetFences(device, 1, &fence);
  vk.vkFreeCommandBuffers(device, pool, 1, &cmd);
  if (r != VK_SUCCESS) return vk_error("vkQueueSubmit/vkWaitForFences", r);
  return core::Ok{};
}

core::Result<ImageId> Context::create_image(std::uint32_t width, std::uint32_t height,
                                            ImageFormat format) {
  Impl& m = *impl_;
  if (!m.graphics)
    return unavailable("Vulkan device \"" + m.info.name +
                       "\" has no graphics queue with dynamic rendering and independent blend");
  VkPhysicalDeviceProperties props{};
  vkGetPhysicalDeviceProperties(m.physical, &props);
  const std::uint32_t max = props.limits.maxImageDimension2D;
  if (width == 0 || height == 0 || width > max || height > max)
    return core::make_error(codes::GPU_LIMIT, "an image of " + std::to_string(width) + "x" +
                                                  std::to_string(height) + " is outside 1.." +
                                                  std::to_string(max) + " per side on \"" +
                                                  m.info.name + "\"");
  Impl::Image img;
  img.format = format;
  img.width = width;
  img.height = height;
  VkImageCreateInfo ci{};
  ci.sType = VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO;
  ci.imageType = VK_IMAGE_TYPE_2D;
  ci.format = vk_format(format);
  ci.extent = {width, height, 1};
  ci.mipLevels = 1;
  ci.arrayLayers = 1;
  ci.samples = VK_SAMPLE_COUNT_1_BIT;
  ci.tiling = VK_IMAGE_TILING_OPTIMAL;
  ci.usage = VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT |
             VK_IMAGE_USAGE_SAMPLED_BIT |
             (is_depth(format) ? VK_IMAGE_USAGE_DEPTH_STENCIL_ATTACHMENT_BIT
                               : VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT);
  ci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  ci.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
  if (VkResult r = m.vk.vkCreateImage(m.device, &ci, nullptr, &img.image); r != VK_SUCCESS)
    return vk_error("vkCreateImage", r);
  VkMemoryRequirements req{};
  m.vk.vkGetImageMemoryRequirements(m.device, img.image, &req);
  auto type = m.memory_type(req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
  if (!type) type = m.memory_type(req.memoryTypeBits, 0);
  VkMemoryAllocateInfo ai{};
  ai.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
  ai.allocationSize = req.size;
  ai.memoryTypeIndex = type.value_or(0);
  VkResult r = type ? m.vk.vkAllocateMemory(m.device, &ai, nullptr, &img.memory)
                    : VK_ERROR_FEATURE_NOT_PRESENT;
  if (r == VK_SUCCESS) r = m.vk.vkBindImageMemory(m.device, img.image, img.memory, 0);
  if (r == VK_SUCCESS) {
    VkImageViewCreateInfo vi{};
    vi.sType = VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO;
    vi.image = img.image;
    vi.viewType = VK_IMAGE_VIEW_TYPE_2D;
    vi.format = ci.format;
    vi.subresourceRange = {aspects(format), 0, 1, 0, 1};
    r = m.vk.vkCreateImageView(m.device, &vi, nullptr, &img.view);
  }
  if (r != VK_SUCCESS) {
    m.destroy(img);
    return vk_error("allocating an image", r);
  }
  const std::uint32_t id = m.next_image++;
  m.images.emplace(id, img);
  return ImageId{id};
}

void Context::free_image(ImageId image) {
  Impl& m = *impl_;
  auto it = m.images.find(image.id);
  if (it == m.images.end()) return;
  m.vk.vkDeviceWaitIdle(m.device);
  m.destroy(it->second);
  m.images.erase(it);
}

core::Result<std::vector<std::uint8_t>> Context::read_image(ImageId image, ImageAspect aspect) {
  Impl& m = *impl_;
  auto it = m.images.find(image.id);
  if (it == m.images.end()) return bad_use("read_image of an unknown image");
  Impl::Image& img = it->second;
  const std::uint32_t texel = texel_bytes(img.format, aspect);
  if (texel == 0)
    return bad_use(std::string("a ") + format_name(img.format) + " image has no such aspect");
  if (img.layout == VK_IMAGE_LAYOUT_UNDEFINED)
    return bad_use("read_image of an image no pass has drawn into");
  const VkDeviceSize bytes = VkDeviceSize{img.width} * img.height * texel;
  VkBuffer staging = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  void* ptr = nullptr;
  if (auto st = m.staging(bytes, &staging, &memory, &ptr); !st) return std::move(st).error();
  auto release = [&] {
    m.vk.vkDestroyBuffer(m.device, staging, nullptr);
    m.vk.vkFreeMemory(m.device, memory, nullptr);
  };
  auto st = m.submit([&](VkCommandBuffer cmd) {
    m.transition(cmd, img, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, false);
    VkBufferImageCopy region{};
    region.imageSubresource.aspectMask = aspect == ImageAspect::kColour ? VK_IMAGE_ASPECT_COLOR_BIT
                                         : aspect == ImageAspect::kDepth
                                             ? VK_IMAGE_ASPECT_DEPTH_BIT
                                             : VK_IMAGE_ASPECT_STENCIL_BIT;
    region.imageSubresource.layerCount = 1;
    region.imageExtent = {img.width, img.height, 1};
    m.vk.vkCmdCopyImageToBuffer(cmd, img.image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, staging, 1,
                                &region);
    VkMemoryBarrier host{};
    host.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
    host.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
    host.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
    m.vk.vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1,
                              &host, 0, nullptr, 0, nullptr);
  });
  if (!st) {
    release();
    return std::move(st).error();
  }
  std::vector<std::uint8_t> out(bytes);
  std::memcpy(out.data(), ptr, bytes);
  release();
  return out;
}

core::Status Context::write_image(ImageId image, std::span<const std::uint8_t> texels) {
  Impl& m = *impl_;
  auto it = m.images.find(image.id);
  if (it == m.images.end()) return bad_use("write_image of an unknown image");
  Impl::Image& img = it->second;
  const ImageAspect aspect = is_depth(img.format) ? ImageAspect::kDepth : ImageAspect::kColour;
  if (has_stencil(img.format)) return bad_use("write_image of a depth-stencil image");
  const VkDeviceSize bytes = VkDeviceSize{img.width} * img.height * texel_bytes(img.format, aspect);
  if (texels.size() != bytes)
    return bad_use("write_image of " + std::to_string(texels.size()) + " bytes into a " +
                   std::to_string(bytes) + "-byte image");
  VkBuffer staging = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  void* ptr = nullptr;
  if (auto st = m.staging(bytes, &staging, &memory, &ptr); !st) return st;
  std::memcpy(ptr, texels.data(), bytes);
  auto st = m.submit([&](VkCommandBuffer cmd) {
    m.transition(cmd, img, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, true);
    VkBufferImageCopy region{};
    region.imageSubresource.aspectMask =
        aspect == ImageAspect::kColour ? VK_IMAGE_ASPECT_COLOR_BIT : VK_IMAGE_ASPECT_DEPTH_BIT;
    region.imageSubresource.layerCount = 1;
    region.imageExtent = {img.width, img.height, 1};
    m.vk.vkCmdCopyBufferToImage(cmd, staging, img.image, VK_IMAGE_LAYOUT_TRANSFER_DST_OPTIMAL, 1,
                                &region);
    m.transition(cmd, img, VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL, false);
  });
  m.vk.vkDestroyBuffer(m.device, staging, nullptr);
  m.vk.vkFreeMemory(m.device, memory, nullptr);
  return st;
}

core::Result<PipelineId> Context::create_graphics_pipeline(const GraphicsPipelineDesc& desc) {
  Impl& m = *impl_;
  if (!m.graphics)
    return unavailable("Vulkan device \"" + m.info.name +
                       "\" has no graphics queue with dynamic rendering and independent blend");
  if (desc.state.colour.size() != desc.colour_formats.size())
    return bad_use("a graphics pipeline needs one blend state per colour attachment");
  if (desc.fragment_spirv.empty() && !desc.colour_formats.empty())
    return bad_use("a pipeline without a fragment shader cannot write colour attachments");
  if (desc.depth_format && !is_depth(*desc.depth_format))
    return bad_use("the depth attachment's format is not a depth format");
  for (ImageFormat f : desc.colour_formats)
    if (is_depth(f)) return bad_use("a colour attachment's format is a depth format");
  if ((desc.state.stencil.enabled || desc.state.depth.test) && !desc.depth_format)
    return bad_use("depth or stencil testing without a depth attachment");
  if (desc.state.stencil.enabled && !has_stencil(*desc.depth_format))
    return bad_use("stencil testing without a stencil aspect");

  Impl::Pipeline p;
  p.graphics = true;
  p.push_bytes = desc.push_bytes;
  p.colour_formats = desc.colour_formats;
  p.depth_format = desc.depth_format;
  const VkShaderStageFlags stages = VK_SHADER_STAGE_VERTEX_BIT | VK_SHADER_STAGE_FRAGMENT_BIT;
  p.textures = static_cast<std::uint32_t>(desc.textures.size());
  p.bindings = desc.storage_buffers;
  if (!desc.textures.empty() || desc.storage_buffers > 0) {
    auto layout = m.make_set_layout(desc.storage_buffers, desc.textures, stages);
    if (!layout) return std::move(layout).error();
    p.set_layout = *layout;
  }
  VkPushConstantRange range{stages, 0, desc.push_bytes};
  VkPipelineLayoutCreateInfo pli{};
  pli.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
  pli.setLayoutCount = desc.textures.empty() && desc.storage_buffers == 0 ? 0 : 1;
  pli.pSetLayouts = &p.set_layout;
  pli.pushConstantRangeCount = desc.push_bytes > 0 ? 1 : 0;
  pli.pPushConstantRanges = &range;
  if (VkResult r = m.vk.vkCreatePipelineLayout(m.device, &pli, nullptr, &p.layout);
      r != VK_SUCCESS) {
    m.vk.vkDestroyDescriptorSetLayout(m.device, p.set_layout, nullptr);
    return vk_error("vkCreatePipelineLayout", r);
  }

  VkShaderModule modules[2] = {VK_NULL_HANDLE, VK_NULL_HANDLE};
  VkPipelineShaderStageCreateInfo stage_info[2]{};
  std::uint32_t stage_count = 0;
  VkResult r = VK_SUCCESS;
  for (int s = 0; s < 2 && r == VK_SUCCESS; ++s) {
    const auto& words = s == 0 ? desc.vertex_spirv : desc.fragment_spirv;
    if (words.empty()) continue;
    VkShaderModuleCreateInfo si{};
    si.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
    si.codeSize = words.size() * 4;
    si.pCode = words.data();
    r = m.vk.vkCreateShaderModule(m.device, &si, nullptr, &modules[s]);
    VkPipelineShaderStageCreateInfo& st = stage_info[stage_count++];
    st.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    st.stage = s == 0 ? VK_SHADER_STAGE_VERTEX_BIT : VK_SHADER_STAGE_FRAGMENT_BIT;
    st.module = modules[s];
    st.pName = "main";
  }

  VkVertexInputBindingDescription binding{0, desc.vertex_stride, VK_VERTEX_INPUT_RATE_VERTEX};
  std::vector<VkVertexInputAttributeDescription> attributes;
  static const VkFormat float_formats[] = {VK_FORMAT_R32_SFLOAT, VK_FORMAT_R32G32_SFLOAT,
                                           VK_FORMAT_R32G32B32_SFLOAT,
                                           VK_FORMAT_R32G32B32A32_SFLOAT};
  for (const VertexAttribute& a : desc.attributes)
    attributes.push_back({a.location, 0,
                          float_formats[std::clamp<std::uint32_t>(a.components, 1, 4) - 1],
                          a.offset});
  VkPipelineVertexInputStateCreateInfo vin{};
  vin.sType = VK_STRUCTURE_TYPE_PIPELINE_VERTEX_INPUT_STATE_CREATE_INFO;
  vin.vertexBindingDescriptionCount = 1;
  vin.pVertexBindingDescriptions = &binding;
  vin.vertexAttributeDescriptionCount = static_cast<std::uint32_t>(attributes.size());
  vin.pVertexAttributeDescriptions = attributes.data();
  VkPipelineInputAssemblyStateCreateInfo ia{};
  ia.sType = VK_STRUCTURE_TYPE_PIPELINE_INPUT_ASSEMBLY_STATE_CREATE_INFO;
  ia.topology = VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST;
  VkPipelineViewportStateCreateInfo vp{};
  vp.sType = VK_STRUCTURE_TYPE_PIPELINE_VIEWPORT_STATE_CREATE_INFO;
  vp.viewportCount = 1;
  vp.scissorCount = 1;
  VkPipelineRasterizationStateCreateInfo rs{};
  rs.sType = VK_STRUCTURE_TYPE_PIPELINE_RASTERIZATION_STATE_CREATE_INFO;
  rs.polygonMode = VK_POLYGON_MODE_FILL;
  rs.cullMode = desc.state.cull == CullMode::kNone    ? VK_CULL_MODE_NONE
                : desc.state.cull == CullMode::kFront ? VK_CULL_MODE_FRONT_BIT
                                                      : VK_CULL_MODE_BACK_BIT;
  rs.frontFace = VK_FRONT_FACE_COUNTER_CLOCKWISE;
  rs.lineWidth = 1.0F;
  VkPipelineMultisampleStateCreateInfo ms{};
  ms.sType = VK_STRUCTURE_TYPE_PIPELINE_MULTISAMPLE_STATE_CREATE_INFO;
  ms.rasterizationSamples = VK_SAMPLE_COUNT_1_BIT;
  VkPipelineDepthStencilStateCreateInfo ds{};
  ds.sType = VK_STRUCTURE_TYPE_PIPELINE_DEPTH_STENCIL_STATE_CREATE_INFO;
  ds.depthTestEnable = desc.state.depth.test ? VK_TRUE : VK_FALSE;
  ds.depthWriteEnable = desc.state.depth.write ? VK_TRUE : VK_FALSE;
  ds.depthCompareOp = static_cast<VkCompareOp>(desc.state.depth.compare);
  ds.stencilTestEnable = desc.state.stencil.enabled ? VK_TRUE : VK_FALSE;
  ds.front = ds.back = stencil_face(desc.state.stencil);
  ds.maxDepthBounds = 1.0F;
  std::vector<VkPipelineColorBlendAttachmentState> blends;
  for (const BlendState& b : desc.state.colour) {
    VkPipelineColorBlendAttachmentState a{};
    a.blendEnable = b.enabled ? VK_TRUE : VK_FALSE;
    a.srcColorBlendFactor = static_cast<VkBlendFactor>(b.src_colour);
    a.dstColorBlendFactor = static_cast<VkBlendFactor>(b.dst_colour);
    a.colorBlendOp = static_cast<VkBlendOp>(b.colour_op);
    a.srcAlphaBlendFactor = static_cast<VkBlendFactor>(b.src_alpha);
    a.dstAlphaBlendFactor = static_cast<VkBlendFactor>(b.dst_alpha);
    a.alphaBlendOp = static_cast<VkBlendOp>(b.alpha_op);
    a.colorWriteMask = b.write_mask & 0xFU;
    blends.push_back(a);
  }
  VkPipelineColorBlendStateCreateInfo cb{};
  cb.sType = VK_STRUCTURE_TYPE_PIPELINE_COLOR_BLEND_STATE_CREATE_INFO;
  cb.attachmentCount = static_cast<std::uint32_t>(blends.size());
  cb.pAttachments = blends.data();
  const VkDynamicState dynamic[] = {VK_DYNAMIC_STATE_VIEWPORT, VK_DYNAMIC_STATE_SCISSOR};
  VkPipelineDynamicStateCreateInfo dy{};
  dy.sType = VK_STRUCTURE_TYPE_PIPELINE_DYNAMIC_STATE_CREATE_INFO;
  dy.dynamicStateCount = 2;
  dy.pDynamicStates = dynamic;
  std::vector<VkFormat> colour_formats;
  for (ImageFormat f : desc.colour_formats) colour_formats.push_back(vk_format(f));
  VkPipelineRenderingCreateInfo ri{};
  ri.sType = VK_STRUCTURE_TYPE_PIPELINE_RENDERING_CREATE_INFO;
  ri.colorAttachmentCount = static_cast<std::uint32_t>(colour_formats.size());
  ri.pColorAttachmentFormats = colour_formats.data();
  if (desc.depth_format) {
    ri.depthAttachmentFormat = vk_format(*desc.depth_format);
    if (has_stencil(*desc.depth_format)) ri.stencilAttachmentFormat = ri.depthAttachmentFormat;
  }
  if (r == VK_SUCCESS) {
    VkGraphicsPipelineCreateInfo gi{};
    gi.sType = VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO;
    gi.pNext = &ri;
    gi.stageCount = stage_count;
    gi.pStages = stage_info;
    gi.pVertexInputState = &vin;
    gi.pInputAssemblyState = &ia;
    gi.pViewportState = &vp;
    gi.pRasterizationState = &rs;
    gi.pMultisampleState = &ms;
    gi.pDepthStencilState = &ds;
    gi.pColorBlendState = &cb;
    gi.pDynamicState = &dy;
    gi.layout = p.layout;
    r = m.vk.vkCreateGraphicsPipelines(m.device, VK_NULL_HANDLE, 1, &gi, nullptr, &p.pipeline);
  }
  for (VkShaderModule mod : modules)
    if (mod != VK_NULL_HANDLE) m.vk.vkDestroyShaderModule(m.device, mod, nullptr);
  if (r != VK_SUCCESS) {
    m.vk.vkDestroyPipelineLayout(m.device, p.layout, nullptr);
    m.vk.vkDestroyDescriptorSetLayout(m.device, p.set_layout, nullptr);
    return vk_error("creating a graphics pipeline", r);
  }
  m.pipelines.push_back(std::move(p));
  return PipelineId{static_cast<std::uint32_t>(m.pipelines.size() - 1)};
}

core::Status Context::render(std::span<const RenderPass> passes) {
  Impl& m = *impl_;
  // Everything checked before anything is recorded. An image is written
  // once an earlier pass of the same call drew into it.
  std::set<std::uint32_t> written;
  for (const RenderPass& pass : passes) {
    std::vector<const Attachment*> all;
    for (const Attachment& a : pass.colour) all.push_back(&a);
    if (pass.depth) all.push_back(&*pass.depth);
    if (all.empty()) return bad_use("a render pass without attachments");
    const Impl::Image* first = nullptr;
    for (const Attachment* a : all) {
      auto it = m.images.find(a->image.id);
      if (it == m.images.end()) return bad_use("a render pass with an unknown image");
      if (first != nullptr &&
          (it->second.width != first->width || it->second.height != first->height))
        return bad_use("a render pass's attachments differ in size");
      first = &it->second;
    }
    for (std::size_t i = 0; i < pass.colour.size(); ++i)
      if (is_depth(m.images[pass.colour[i].image.id].format))
        return bad_use("a depth image as a colour attachment");
    if (pass.depth && !is_depth(m.images[pass.depth->image.id].format))
      return bad_use("a colour image as the depth attachment");
    for (const Draw& d : pass.draws) {
      if (d.pipeline.id >= m.pipelines.size() || !m.pipelines[d.pipeline.id].graphics)
        return bad_use("a draw without a graphics pipeline");
      const Impl::Pipeline& p = m.pipelines[d.pipeline.id];
      if (d.push.size() != p.push_bytes)
        return bad_use("a draw's push constants do not fit its pipeline");
      if (p.colour_formats.size() != pass.colour.size())
        return bad_use("a draw's pipeline expects " + std::to_string(p.colour_formats.size()) +
                       " colour attachments, the pass has " + std::to_string(pass.colour.size()));
      for (std::size_t i = 0; i < pass.colour.size(); ++i)
        if (m.images[pass.colour[i].image.id].format != p.colour_formats[i])
          return bad_use("colour attachment " + std::to_string(i) +
                         " differs in format from the pipeline's");
      if (p.depth_format.has_value() != pass.depth.has_value() ||
          (pass.depth && m.images[pass.depth->image.id].format != *p.depth_format))
        return bad_use("the depth attachment differs from the pipeline's");
      if (d.buffers.size() != p.bindings)
        return bad_use("a draw's pipeline reads " + std::to_string(p.bindings) +
                       " storage buffers, the draw gives " + std::to_string(d.buffers.size()));
      for (BufferId b : d.buffers)
        if (m.buffers.find(b.id) == m.buffers.end()) return bad_use("a draw of an unknown buffer");
      if (d.textures.size() != p.textures)
        return bad_use("a draw's pipeline samples " + std::to_string(p.textures) +
                       " textures, the draw gives " + std::to_string(d.textures.size()));
      for (ImageId t : d.textures) {
        auto ti = m.images.find(t.id);
        if (ti == m.images.end()) return bad_use("a draw samples an unknown image");
        if (has_stencil(ti->second.format)) return bad_use("a draw samples a depth-stencil image");
        if (ti->second.layout == VK_IMAGE_LAYOUT_UNDEFINED && written.count(t.id) == 0)
          return bad_use("a draw samples an image nothing has written");
        for (const Attachment* a : all)
          if (a->image.id == t.id) return bad_use("a pass samples its own attachment");
      }
      if (m.buffers.find(d.vertices.id) == m.buffers.end() ||
          (d.indices && m.buffers.find(d.indices->id) == m.buffers.end()))
        return bad_use("a draw of an unknown buffer");
    }
    for (const Attachment* a : all) written.insert(a->image.id);
  }
  // One descriptor set per draw that samples textures, from one pool.
  std::uint32_t sets = 0, samplers = 0, storage = 0;
  for (const RenderPass& pass : passes)
    for (const Draw& d : pass.draws)
      if (!d.textures.empty() || !d.buffers.empty()) {
        ++sets;
        samplers += static_cast<std::uint32_t>(d.textures.size());
        storage += static_cast<std::uint32_t>(d.buffers.size());
      }
  VkDescriptorPool dpool = VK_NULL_HANDLE;
  if (sets > 0) {
    auto pool = m.make_pool(sets, storage, samplers);
    if (!pool) return std::move(pool).error();
    dpool = *pool;
  }
  std::vector<std::vector<VkDescriptorSet>> draw_sets;
  for (const RenderPass& pass : passes) {
    draw_sets.emplace_back(pass.draws.size(), VK_NULL_HANDLE);
    for (std::size_t k = 0; k < pass.draws.size(); ++k) {
      const Draw& d = pass.draws[k];
      if (d.textures.empty() && d.buffers.empty()) continue;
      auto set = m.make_set(dpool, m.pipelines[d.pipeline.id].set_layout, d.buffers, d.textures);
      if (!set) {
        m.vk.vkDestroyDescriptorPool(m.device, dpool, nullptr);
        return std::move(set).error();
      }
      draw_sets.back()[k] = *set;
    }
  }
  std::size_t pass_index = 0;
  auto st = m.submit([&](VkCommandBuffer cmd) {
    for (const RenderPass& pass : passes) {
      const std::vector<VkDescriptorSet>& pass_sets = draw_sets[pass_index++];
      // Sampled images move to shader-read layout before the pass begins.
      for (const Draw& d : pass.draws)
        for (ImageId t : d.textures) {
          Impl::Image& img = m.images[t.id];
          if (img.layout != VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL)
            m.transition(cmd, img, VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL, false);
        }
      std::vector<VkRenderingAttachmentInfo> colour;
      auto info = [&](const Attachment& a, VkImageLayout layout) {
        Impl::Image& img = m.images[a.image.id];
        m.transition(cmd, img, layout, a.clear);
        VkRenderingAttachmentInfo ai{};
        ai.sType = VK_STRUCTURE_TYPE_RENDERING_ATTACHMENT_INFO;
        ai.imageView = img.view;
        ai.imageLayout = layout;
        ai.loadOp = a.clear ? VK_ATTACHMENT_LOAD_OP_CLEAR : VK_ATTACHMENT_LOAD_OP_LOAD;
        ai.storeOp = VK_ATTACHMENT_STORE_OP_STORE;
        if (is_depth(img.format)) {
          ai.clearValue.depthStencil = {a.clear_depth, a.clear_stencil};
        } else {
          for (int c = 0; c < 4; ++c)
            ai.clearValue.color.float32[c] = a.clear_colour[static_cast<std::size_t>(c)];
        }
        return ai;
      };
      for (const Attachment& a : pass.colour)
        colour.push_back(info(a, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL));
      VkRenderingAttachmentInfo depth{};
      if (pass.depth) depth = info(*pass.depth, VK_IMAGE_LAYOUT_DEPTH_STENCIL_ATTACHMENT_OPTIMAL);
      const Impl::Image& size =
          m.images[pass.colour.empty() ? pass.depth->image.id : pass.colour[0].image.id];
      VkRenderingInfo ri{};
      ri.sType = VK_STRUCTURE_TYPE_RENDERING_INFO;
      ri.renderArea = {{0, 0}, {size.width, size.height}};
      ri.layerCount = 1;
      ri.colorAttachmentCount = static_cast<std::uint32_t>(colour.size());
      ri.pColorAttachments = colour.data();
      if (pass.depth) {
        ri.pDepthAttachment = &depth;
        if (has_stencil(m.images[pass.depth->image.id].format)) ri.pStencilAttachment = &depth;
      }
      m.vk.vkCmdBeginRendering(cmd, &ri);
      const VkViewport viewport{
          0.0F, 0.0F, static_cast<float>(size.width), static_cast<float>(size.height), 0.0F, 1.0F};
      m.vk.vkCmdSetViewport(cmd, 0, 1, &viewport);
      m.vk.vkCmdSetScissor(cmd, 0, 1, &ri.renderArea);
      for (std::size_t k = 0; k < pass.draws.size(); ++k) {
        const Draw& d = pass.draws[k];
        const Impl::Pipeline& p = m.pipelines[d.pipeline.id];
        m.vk.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_GRAPHICS, p.pipeline);
        if (pass_sets[k] != VK_NULL_HANDLE)
          m.vk.vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_GRAPHICS, p.layout, 0, 1,
                                       &pass_sets[k], 0, nullptr);
        const VkDeviceSize offset = 0;
        m.vk.vkCmdBindVertexBuffers(cmd, 0, 1, &m.buffers[d.vertices.id].buffer, &offset);
        if (p.push_bytes > 0)
          m.vk.vkCmdPushConstants(cmd, p.layout,
                                  VK_SHADER_STAGE_VERTEX_BIT | VK_SHADER_STAGE_FRAGMENT_BIT, 0,
                                  p.push_bytes, d.push.data());
        if (d.indices) {
          m.vk.vkCmdBindIndexBuffer(cmd, m.buffers[d.indices->id].buffer, 0, VK_INDEX_TYPE_UINT32);
          m.vk.vkCmdDrawIndexed(cmd, d.count, 1, 0, 0, 0);
        } else {
          m.vk.vkCmdDraw(cmd, d.count, 1, 0, 0);
        }
      }
      m.vk.vkCmdEndRendering(cmd);
    }
  });
  if (dpool != VK_NULL_HANDLE) m.vk.vkDestroyDescriptorPool(m.device, dpool, nullptr);
  return st;
}

}  // namespace charkit::gpu
