// The Vulkan implementation of gpu::Context (built when volk and glslc are
// found; context_none.cpp otherwise).
#include <volk.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

#include "charkit/gpu/context.h"
#include "charkit/gpu/detail/vulkan.h"
#include "charkit/gpu/error_codes.h"

namespace charkit::gpu {

namespace {

/// volkInitialize once per process: whether a loader is there.
bool loader_present() {
  static const bool ok = volkInitialize() == VK_SUCCESS;
  return ok;
}

std::string version_string(std::uint32_t v) {
  return std::to_string(VK_API_VERSION_MAJOR(v)) + "." + std::to_string(VK_API_VERSION_MINOR(v)) +
         "." + std::to_string(VK_API_VERSION_PATCH(v));
}

const char* type_name(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
      return "discrete";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
      return "integrated";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
      return "virtual";
    case VK_PHYSICAL_DEVICE_TYPE_CPU:
      return "cpu";
    default:
      return "other";
  }
}

DeviceInfo describe(VkPhysicalDevice pd, std::uint32_t index) {
  VkPhysicalDeviceDriverProperties driver{};
  driver.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES;
  VkPhysicalDeviceSubgroupProperties subgroup{};
  subgroup.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES;
  subgroup.pNext = &driver;
  VkPhysicalDeviceProperties2 props{};
  props.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
  props.pNext = &subgroup;
  vkGetPhysicalDeviceProperties2(pd, &props);
  const VkPhysicalDeviceLimits& l = props.properties.limits;
  DeviceInfo d;
  d.index = index;
  d.name = props.properties.deviceName;
  d.type = type_name(props.properties.deviceType);
  d.api_version = version_string(props.properties.apiVersion);
  d.driver_version = props.properties.driverVersion;
  d.driver_name = driver.driverName;
  d.driver_info = driver.driverInfo;
  d.vendor_id = props.properties.vendorID;
  d.device_id = props.properties.deviceID;
  d.max_storage_buffer_range = l.maxStorageBufferRange;
  d.max_compute_invocations = l.maxComputeWorkGroupInvocations;
  for (int i = 0; i < 3; ++i) {
    d.max_workgroup_size[static_cast<std::size_t>(i)] = l.maxComputeWorkGroupSize[i];
    d.max_workgroup_count[static_cast<std::size_t>(i)] = l.maxComputeWorkGroupCount[i];
  }
  d.subgroup_size = subgroup.subgroupSize;
  VkPhysicalDeviceMemoryProperties mem{};
  vkGetPhysicalDeviceMemoryProperties(pd, &mem);
  for (std::uint32_t h = 0; h < mem.memoryHeapCount; ++h)
    if ((mem.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) != 0)
      d.device_local_bytes += mem.memoryHeaps[h].size;
  VkPhysicalDeviceVulkan13Features f13{};
  f13.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES;
  VkPhysicalDeviceFeatures2 f{};
  f.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
  f.pNext = &f13;
  if (props.properties.apiVersion >= VK_API_VERSION_1_3) vkGetPhysicalDeviceFeatures2(pd, &f);
  d.usable = props.properties.apiVersion >= VK_API_VERSION_1_3 && f13.maintenance4 == VK_TRUE;
  return d;
}

/// An instance for listing devices or for a context.
core::Result<VkInstance> make_instance(bool validation) {
  if (!loader_present()) return unavailable("no Vulkan loader (libvulkan.so.1) on this machine");
  VkApplicationInfo app{};
  app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
  app.pApplicationName = "charkit";
  app.apiVersion = VK_API_VERSION_1_3;
  std::vector<const char*> layers;
  std::vector<const char*> extensions;
  if (validation) {
    std::uint32_t n = 0;
    vkEnumerateInstanceLayerProperties(&n, nullptr);
    std::vector<VkLayerProperties> props(n);
    vkEnumerateInstanceLayerProperties(&n, props.data());
    const bool have = std::any_of(props.begin(), props.end(), [](const VkLayerProperties& p) {
      return std::strcmp(p.layerName, "VK_LAYER_KHRONOS_validation") == 0;
    });
    if (!have)
      return unavailable(
          "the Khronos validation layer is not installed (Debian: vulkan-validationlayers)");
    layers.push_back("VK_LAYER_KHRONOS_validation");
    extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
  }
  VkInstanceCreateInfo ci{};
  ci.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
  ci.pApplicationInfo = &app;
  ci.enabledLayerCount = static_cast<std::uint32_t>(layers.size());
  ci.ppEnabledLayerNames = layers.data();
  ci.enabledExtensionCount = static_cast<std::uint32_t>(extensions.size());
  ci.ppEnabledExtensionNames = extensions.data();
  VkInstance instance = VK_NULL_HANDLE;
  if (VkResult r = vkCreateInstance(&ci, nullptr, &instance); r != VK_SUCCESS) {
    if (r == VK_ERROR_INCOMPATIBLE_DRIVER)
      return unavailable("no Vulkan driver is installed (VK_ERROR_INCOMPATIBLE_DRIVER)");
    return vk_error("vkCreateInstance", r);
  }
  volkLoadInstanceOnly(instance);
  return instance;
}

core::Result<std::vector<VkPhysicalDevice>> physical_devices(VkInstance instance) {
  std::uint32_t n = 0;
  if (VkResult r = vkEnumeratePhysicalDevices(instance, &n, nullptr); r != VK_SUCCESS)
    return vk_error("vkEnumeratePhysicalDevices", r);
  std::vector<VkPhysicalDevice> pds(n);
  if (VkResult r = vkEnumeratePhysicalDevices(instance, &n, pds.data()); r != VK_SUCCESS)
    return vk_error("vkEnumeratePhysicalDevices", r);
  return pds;
}

/// The validation layer's messages, process-wide (the validating instance is
/// shared): each Context reports those logged since it was created.
std::mutex g_log_mutex;
std::vector<std::string> g_log;

VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                          VkDebugUtilsMessageTypeFlagsEXT,
                                          const VkDebugUtilsMessengerCallbackDataEXT* data, void*) {
  const char* level =
      (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) != 0 ? "error" : "warning";
  std::lock_guard<std::mutex> lock(g_log_mutex);
  g_log.push_back(std::string(level) + ": " +
                  (data != nullptr && data->pMessage != nullptr ? data->pMessage : ""));
  return VK_FALSE;
}

/// One instance per process and validation setting, never destroyed: a
/// destroyed instance unloads the driver, which keeps allocations for the
/// process (LeakSanitizer would report them from an unloaded module), and
/// creating an instance costs milliseconds a command need not pay twice.
core::Result<VkInstance> shared_instance(bool validation) {
  static std::mutex mutex;
  static VkInstance instances[2] = {VK_NULL_HANDLE, VK_NULL_HANDLE};
  std::lock_guard<std::mutex> lock(mutex);
  VkInstance& slot = instances[validation ? 1 : 0];
  if (slot != VK_NULL_HANDLE) {
    volkLoadInstanceOnly(slot);
    return slot;
  }
  auto instance = make_instance(validation);
  if (!instance) return std::move(instance).error();
  if (validation) {
    VkDebugUtilsMessengerCreateInfoEXT mi{};
    mi.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT;
    mi.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                         VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    mi.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
    mi.pfnUserCallback = &on_message;
    VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;  // lives with the instance
    if (VkResult r = vkCreateDebugUtilsMessengerEXT(*instance, &mi, nullptr, &messenger);
        r != VK_SUCCESS)
      return vk_error("vkCreateDebugUtilsMessengerEXT", r);
  }
  slot = *instance;
  return slot;
}

}  // namespace

core::Error vk_error(const char* call, VkResult r) {
  return core::make_error(codes::GPU_VULKAN,
                          std::string(call) + " failed with VkResult " + std::to_string(r));
}

core::Error unavailable(std::string why) {
  return core::make_error(codes::GPU_UNAVAILABLE, std::move(why));
}

bool built_with_vulkan() {
  return true;
}

core::Error unavailable() {
  return core::make_error(codes::GPU_UNAVAILABLE,
                          "this charkit was built without the Vulkan backend (volk and glslc were "
                          "not found at configure time, or CHARKIT_WITH_VULKAN=OFF)");
}

core::Result<std::vector<DeviceInfo>> list_devices() {
  auto instance = shared_instance(false);
  if (!instance) return std::move(instance).error();
  auto pds = physical_devices(*instance);
  if (!pds) return std::move(pds).error();
  std::vector<DeviceInfo> out;
  for (std::uint32_t i = 0; i < pds->size(); ++i) out.push_back(describe((*pds)[i], i));
  return out;
}

Context::Context() : impl_(std::make_unique<Impl>()) {}
Context::~Context() = default;

const DeviceInfo& Context::device() const {
  return impl_->info;
}

std::uint64_t Context::max_buffer_bytes() const {
  return impl_->max_buffer;
}

std::vector<std::string> Context::validation_messages() const {
  std::lock_guard<std::mutex> lock(g_log_mutex);
  return {g_log.begin() + static_cast<std::ptrdiff_t>(std::min(impl_->log_start, g_log.size())),
          g_log.end()};
}

core::Result<std::unique_ptr<Context>> Context::create(const ContextOptions& options) {
  const char* env = std::getenv("CHARKIT_VULKAN_VALIDATION");  // not-an-error-code
  const bool validation = options.validation || (env != nullptr && std::strcmp(env, "1") == 0);
  std::unique_ptr<Context> ctx(new Context());
  Impl& m = *ctx->impl_;
  auto instance = shared_instance(validation);
  if (!instance) return std::move(instance).error();
  m.instance = *instance;
  {
    std::lock_guard<std::mutex> lock(g_log_mutex);
    m.log_start = g_log.size();
  }
  auto pds = physical_devices(m.instance);
  if (!pds) return std::move(pds).error();
  if (pds->empty()) return unavailable("the Vulkan loader found no device");
  std::vector<DeviceInfo> infos;
  for (std::uint32_t i = 0; i < pds->size(); ++i) infos.push_back(describe((*pds)[i], i));
  std::optional<std::uint32_t> pick = options.device;
  if (pick && *pick >= infos.size())
    return unavailable("there is no Vulkan device " + std::to_string(*pick) + " (" +
                       std::to_string(infos.size()) + " found; see charkit gpu info)");
  if (!pick) {
    for (const DeviceInfo& d : infos)
      if (d.usable && d.type != "cpu" && !pick) pick = d.index;
    for (const DeviceInfo& d : infos)
      if (d.usable && !pick) pick = d.index;
  }
  if (!pick || !infos[*pick].usable) {
    const DeviceInfo& d = infos[pick.value_or(0)];
    return unavailable("Vulkan device \"" + d.name + "\" supports Vulkan " + d.api_version +
                       "; charkit needs 1.3 with maintenance4");
  }
  m.physical = (*pds)[*pick];
  m.info = infos[*pick];
  m.max_buffer = m.info.max_storage_buffer_range;
  if (options.max_buffer_bytes != 0)
    m.max_buffer = std::min(m.max_buffer, options.max_buffer_bytes);
  vkGetPhysicalDeviceMemoryProperties(m.physical, &m.memory);
  std::uint32_t nq = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(m.physical, &nq, nullptr);
  std::vector<VkQueueFamilyProperties> qf(nq);
  vkGetPhysicalDeviceQueueFamilyProperties(m.physical, &nq, qf.data());
  // A family with graphics and compute (the render passes need both), else
  // compute only (then graphics calls answer GPU_UNAVAILABLE).
  bool found = false;
  const VkQueueFlags both = VK_QUEUE_COMPUTE_BIT | VK_QUEUE_GRAPHICS_BIT;
  for (std::uint32_t i = 0; i < nq && !found; ++i)
    if ((qf[i].queueFlags & both) == both) {
      m.queue_family = i;
      found = m.graphics = true;
    }
  for (std::uint32_t i = 0; i < nq && !found; ++i)
    if ((qf[i].queueFlags & VK_QUEUE_COMPUTE_BIT) != 0) {
      m.queue_family = i;
      found = true;
    }
  if (!found) return unavailable("Vulkan device \"" + m.info.name + "\" has no compute queue");
  const float priority = 1.0F;
  VkDeviceQueueCreateInfo qi{};
  qi.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
  qi.queueFamilyIndex = m.queue_family;
  qi.queueCount = 1;
  qi.pQueuePriorities = &priority;
  // glslc --target-env=vulkan1.3 declares workgroup sizes with LocalSizeId,
  // which needs maintenance4.
  VkPhysicalDeviceVulkan13Features f13{};
  f13.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES;
  f13.maintenance4 = VK_TRUE;
  // Dynamic rendering (the render passes) where the device has it.
  VkPhysicalDeviceVulkan13Features have13{};
  have13.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES;
  VkPhysicalDeviceFeatures2 have{};
  have.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
  have.pNext = &have13;
  vkGetPhysicalDeviceFeatures2(m.physical, &have);
  f13.dynamicRendering = have13.dynamicRendering;
  m.graphics = m.graphics && have13.dynamicRendering == VK_TRUE;
  // Independent blend: the eye pass blends one target and writes the next.
  VkPhysicalDeviceFeatures core_features{};
  core_features.independentBlend = have.features.independentBlend;
  m.graphics = m.graphics && have.features.independentBlend == VK_TRUE;
  VkDeviceCreateInfo di{};
  di.pEnabledFeatures = &core_features;
  di.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
  di.pNext = &f13;
  di.queueCreateInfoCount = 1;
  di.pQueueCreateInfos = &qi;
  if (VkResult r = vkCreateDevice(m.physical, &di, nullptr, &m.device); r != VK_SUCCESS)
    return vk_error("vkCreateDevice", r);
  volkLoadDeviceTable(&m.vk, m.device);
  m.vk.vkGetDeviceQueue(m.device, m.queue_family, 0, &m.queue);
  VkCommandPoolCreateInfo pi{};
  pi.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  pi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pi.queueFamilyIndex = m.queue_family;
  if (VkResult r = m.vk.vkCreateCommandPool(m.device, &pi, nullptr, &m.pool); r != VK_SUCCESS)
    return vk_error("vkCreateCommandPool", r);
  VkFenceCreateInfo fi{};
  fi.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
  if (VkResult r = m.vk.vkCreateFence(m.device, &fi, nullptr, &m.fence); r != VK_SUCCESS)
    return vk_error("vkCreateFence", r);
  return ctx;
}

core::Result<BufferId> Context::create_buffer(std::uint64_t bytes) {
  Impl& m = *impl_;
  if (bytes == 0) bytes = 4;
  if (bytes > m.max_buffer)
    return core::make_error(codes::GPU_LIMIT,
                            "a buffer of " + std::to_string(bytes) + " bytes is past the " +
                                std::to_string(m.max_buffer) + "-byte storage-buffer range of \"" +
                                m.info.name + "\"");
  Impl::Buffer b;
  b.size = bytes;
  VkBufferCreateInfo bi{};
  bi.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  bi.size = bytes;
  bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_VERTEX_BUFFER_BIT |
             VK_BUFFER_USAGE_INDEX_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
             VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  bi.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  if (VkResult r = m.vk.vkCreateBuffer(m.device, &bi, nullptr, &b.buffer); r != VK_SUCCESS)
    return vk_error("vkCreateBuffer", r);
  VkMemoryRequirements req{};
  m.vk.vkGetBufferMemoryRequirements(m.device, b.buffer, &req);
  const VkMemoryPropertyFlags want =
      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  std::optional<std::uint32_t> type;
  for (std::uint32_t i = 0; i < m.memory.memoryTypeCount && !type; ++i)
    if ((req.memoryTypeBits & (1U << i)) != 0 &&
        (m.memory.memoryTypes[i].propertyFlags & want) == want)
      type = i;
  if (!type) {
    m.vk.vkDestroyBuffer(m.device, b.buffer, nullptr);
    return core::make_error(codes::GPU_VULKAN,
                            "no host-visible, coherent memory type for a storage buffer");
  }
  VkMemoryAllocateInfo ai{};
  ai.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
  ai.allocationSize = req.size;
  ai.memoryTypeIndex = *type;
  if (VkResult r = m.vk.vkAllocateMemory(m.device, &ai, nullptr, &b.memory); r != VK_SUCCESS) {
    m.vk.vkDestroyBuffer(m.device, b.buffer, nullptr);
    return vk_error("vkAllocateMemory", r);
  }
  void* ptr = nullptr;
  if (VkResult r = m.vk.vkBindBufferMemory(m.device, b.buffer, b.memory, 0);
      r != VK_SUCCESS ||
      (r = m.vk.vkMapMemory(m.device, b.memory, 0, VK_WHOLE_SIZE, 0, &ptr)) != VK_SUCCESS) {
    m.vk.vkDestroyBuffer(m.device, b.buffer, nullptr);
    m.vk.vkFreeMemory(m.device, b.memory, nullptr);
    return vk_error("vkBindBufferMemory/vkMapMemory", r);
  }
  b.mapped = static_cast<std::uint8_t*>(ptr);
  const std::uint32_t id = m.next_buffer++;
  m.buffers.emplace(id, b);
  return BufferId{id};
}

std::span<std::uint8_t> Context::map(BufferId buffer) {
  auto it = impl_->buffers.find(buffer.id);
  if (it == impl_->buffers.end()) return {};
  return {it->second.mapped, static_cast<std::size_t>(it->second.size)};
}

void Context::free_buffer(BufferId buffer) {
  Impl& m = *impl_;
  auto it = m.buffers.find(buffer.id);
  if (it == m.buffers.end()) return;
  m.vk.vkDestroyBuffer(m.device, it->second.buffer, nullptr);
  m.vk.vkFreeMemory(m.device, it->second.memory, nullptr);
  m.buffers.erase(it);
}

core::Result<PipelineId> Context::create_pipeline(std::span<const std::uint32_t> spirv,
                                                  std::uint32_t storage_buffers,
                                                  std::uint32_t push_bytes,
                                                  std::span<const Sampling> textures) {
  Impl& m = *impl_;
  // A kernel asks for its pipeline on every run: the same embedded SPIR-V
  // and layout give the pipeline built the first time.
  for (std::size_t i = 0; i < m.pipelines.size(); ++i) {
    const Impl::Pipeline& q = m.pipelines[i];
    if (q.spirv == spirv.data() && q.words == spirv.size() && q.bindings == storage_buffers &&
        q.push_bytes == push_bytes && q.textures == textures.size())
      return PipelineId{static_cast<std::uint32_t>(i)};
  }
  Impl::Pipeline p;
  p.bindings = storage_buffers;
  p.push_bytes = push_bytes;
  p.spirv = spirv.data();
  p.words = spirv.size();
  p.textures = static_cast<std::uint32_t>(textures.size());
  auto layout = m.make_set_layout(storage_buffers, textures, VK_SHADER_STAGE_COMPUTE_BIT);
  if (!layout) return std::move(layout).error();
  p.set_layout = *layout;
  VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, push_bytes};
  VkPipelineLayoutCreateInfo pli{};
  pli.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
  pli.setLayoutCount = 1;
  pli.pSetLayouts = &p.set_layout;
  pli.pushConstantRangeCount = push_bytes > 0 ? 1 : 0;
  pli.pPushConstantRanges = &range;
  VkShaderModule module = VK_NULL_HANDLE;
  VkShaderModuleCreateInfo si{};
  si.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
  si.codeSize = spirv.size() * 4;
  si.pCode = spirv.data();
  VkResult r = m.vk.vkCreatePipelineLayout(m.device, &pli, nullptr, &p.layout);
  if (r == VK_SUCCESS) r = m.vk.vkCreateShaderModule(m.device, &si, nullptr, &module);
  if (r == VK_SUCCESS) {
    VkComputePipelineCreateInfo ci{};
    ci.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO;
    ci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    ci.stage.module = module;
    ci.stage.pName = "main";
    ci.layout = p.layout;
    r = m.vk.vkCreateComputePipelines(m.device, VK_NULL_HANDLE, 1, &ci, nullptr, &p.pipeline);
  }
  if (module != VK_NULL_HANDLE) m.vk.vkDestroyShaderModule(m.device, module, nullptr);
  if (r != VK_SUCCESS) {
    if (p.layout != VK_NULL_HANDLE) m.vk.vkDestroyPipelineLayout(m.device, p.layout, nullptr);
    m.vk.vkDestroyDescriptorSetLayout(m.device, p.set_layout, nullptr);
    return vk_error("creating a compute pipeline", r);
  }
  m.pipelines.push_back(p);
  return PipelineId{static_cast<std::uint32_t>(m.pipelines.size() - 1)};
}

core::Status Context::run(std::span<const Dispatch> dispatches) {
  Impl& m = *impl_;
  if (dispatches.empty()) return core::Ok{};
  std::uint32_t descriptors = 0, textures = 0;
  for (const Dispatch& d : dispatches) {
    if (d.pipeline.id >= m.pipelines.size())
      return core::make_error(codes::GPU_VULKAN, "dispatch of an unknown pipeline");
    const Impl::Pipeline& p = m.pipelines[d.pipeline.id];
    if (p.graphics) return core::make_error(codes::GPU_VULKAN, "dispatch of a graphics pipeline");
    if (d.buffers.size() != p.bindings || d.push.size() != p.push_bytes)
      return core::make_error(codes::GPU_VULKAN,
                              "a dispatch's buffers or push constants do not fit its pipeline");
    for (BufferId b : d.buffers)
      if (m.buffers.find(b.id) == m.buffers.end())
        return core::make_error(codes::GPU_VULKAN, "dispatch of an unknown buffer");
    if (d.textures.size() != p.textures)
      return core::make_error(codes::GPU_VULKAN, "a dispatch's textures do not fit its pipeline");
    for (ImageId t : d.textures) {
      auto it = m.images.find(t.id);
      if (it == m.images.end() || it->second.layout == VK_IMAGE_LAYOUT_UNDEFINED ||
          it->second.format == ImageFormat::kDepth32Stencil8)
        return core::make_error(codes::GPU_VULKAN,
                                "a dispatch samples an unknown, unwritten or depth-stencil image");
    }
    descriptors += p.bindings;
    textures += p.textures;
  }
  auto pool = m.make_pool(static_cast<std::uint32_t>(dispatches.size()), descriptors, textures);
  if (!pool) return std::move(pool).error();
  std::vector<VkDescriptorSet> sets;
  for (const Dispatch& d : dispatches) {
    auto set = m.make_set(*pool, m.pipelines[d.pipeline.id].set_layout, d.buffers, d.textures);
    if (!set) {
      m.vk.vkDestroyDescriptorPool(m.device, *pool, nullptr);
      return std::move(set).error();
    }
    sets.push_back(*set);
  }
  auto st = m.submit([&](VkCommandBuffer cmd) {
    for (std::size_t i = 0; i < dispatches.size(); ++i) {
      const Dispatch& d = dispatches[i];
      const Impl::Pipeline& p = m.pipelines[d.pipeline.id];
      for (ImageId t : d.textures) {
        Impl::Image& img = m.images[t.id];
        if (img.layout != VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL)
          m.transition(cmd, img, VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL, false);
      }
      if (i > 0) {
        VkMemoryBarrier mb{};
        mb.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
        mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
        mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
        m.vk.vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                                  VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &mb, 0, nullptr, 0,
                                  nullptr);
      }
      m.vk.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, p.pipeline);
      m.vk.vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, p.layout, 0, 1, &sets[i], 0,
                                   nullptr);
      if (p.push_bytes > 0)
        m.vk.vkCmdPushConstants(cmd, p.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, p.push_bytes,
                                d.push.data());
      if (d.groups > 0) m.vk.vkCmdDispatch(cmd, d.groups, 1, 1);
    }
    VkMemoryBarrier host{};
    host.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
    host.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT;
    host.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
    m.vk.vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                              0, 1, &host, 0, nullptr, 0, nullptr);
  });
  m.vk.vkDestroyDescriptorPool(m.device, *pool, nullptr);
  return st;
}

}  // namespace charkit::gpu
