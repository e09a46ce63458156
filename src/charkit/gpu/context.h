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
/// The error of every GPU entry point in a build without the Vulkan backend
/// (GPU_UNAVAILABLE, saying why): what the kernels' stand-ins return.
core::Error unavailable();

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

/// `--device auto`'s rule (docs/gpu.md, "Choosing the device"): a kernel
/// runs on the GPU when its work has at least kAutoGpuMinVertices vertices
/// and the device is hardware. Below that, opening the device, building its
/// pipelines and moving the data cost more than the CPU kernels take; a
/// software device (type "cpu": lavapipe, SwiftShader) runs on the same
/// cores as the CPU kernels with Vulkan's costs on top.
inline constexpr std::uint64_t kAutoGpuMinVertices = 100'000;
/// Empty when `auto` runs `vertices` of work on `device`, else the reason it
/// does not. A null device: the size alone decides (asked before a device
/// is opened, so small work never pays for opening one).
std::string auto_device_refusal(std::uint64_t vertices, const DeviceInfo* device);

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
struct ImageId {
  std::uint32_t id = 0;
};
/// How a pipeline's texture binding samples (clamped to the edge).
enum class Sampling : std::uint8_t { kNearest, kLinear };

/// One compute dispatch: a pipeline, its storage buffers (binding i =
/// buffers[i]), push constants and the number of workgroups along x.
struct Dispatch {
  PipelineId pipeline;
  std::vector<BufferId> buffers;
  std::vector<std::uint8_t> push;
  std::uint32_t groups = 0;
  /// Sampled images at bindings buffers.size() … (the pipeline's textures).
  std::vector<ImageId> textures;
};

// ---- Graphics (the render passes, docs/render/passes.md) ----------------

/// Attachment formats: HDR colour, 8-bit maps, depth-stencil (reversed-Z
/// depth with an 8-bit stencil) and depth only (light-space shadow maps).
enum class ImageFormat : std::uint8_t { kRgba16Float, kRgba8Unorm, kDepth32Stencil8, kDepth32 };
/// Which part of an image read_image copies.
enum class ImageAspect : std::uint8_t { kColour, kDepth, kStencil };
/// Bytes per texel of `aspect` of `format` as read_image returns them
/// (colour: 8 or 4, depth: 4 floats, stencil: 1); 0 for an aspect the format
/// lacks.
std::uint32_t texel_bytes(ImageFormat format, ImageAspect aspect);
const char* format_name(ImageFormat format);

/// Vulkan's comparison, stencil, blend and cull enumerations (same order as
/// VkCompareOp, VkStencilOp, VkBlendFactor, VkBlendOp).
enum class CompareOp : std::uint8_t {
  kNever,
  kLess,
  kEqual,
  kLessOrEqual,
  kGreater,
  kNotEqual,
  kGreaterOrEqual,
  kAlways
};
enum class StencilOp : std::uint8_t {
  kKeep,
  kZero,
  kReplace,
  kIncrementClamp,
  kDecrementClamp,
  kInvert,
  kIncrementWrap,
  kDecrementWrap
};
enum class BlendFactor : std::uint8_t {
  kZero,
  kOne,
  kSrcColour,
  kOneMinusSrcColour,
  kDstColour,
  kOneMinusDstColour,
  kSrcAlpha,
  kOneMinusSrcAlpha,
  kDstAlpha,
  kOneMinusDstAlpha
};
enum class BlendOp : std::uint8_t { kAdd, kSubtract, kReverseSubtract, kMin, kMax };
enum class CullMode : std::uint8_t { kNone, kFront, kBack };
const char* name(CompareOp op);
const char* name(StencilOp op);
const char* name(BlendFactor factor);
const char* name(BlendOp op);
const char* name(CullMode mode);

struct DepthState {
  bool test = false;
  bool write = false;
  CompareOp compare = CompareOp::kAlways;
};
/// One state for front and back faces.
struct StencilState {
  bool enabled = false;
  CompareOp compare = CompareOp::kAlways;
  StencilOp pass = StencilOp::kKeep;
  StencilOp fail = StencilOp::kKeep;
  StencilOp depth_fail = StencilOp::kKeep;
  std::uint8_t reference = 0;
  std::uint8_t compare_mask = 0xFF;
  std::uint8_t write_mask = 0xFF;
};
/// One colour target's blending and write mask (bit 0 R … bit 3 A).
struct BlendState {
  bool enabled = false;
  std::uint8_t write_mask = 0xF;
  BlendFactor src_colour = BlendFactor::kOne;
  BlendFactor dst_colour = BlendFactor::kZero;
  BlendOp colour_op = BlendOp::kAdd;
  BlendFactor src_alpha = BlendFactor::kOne;
  BlendFactor dst_alpha = BlendFactor::kZero;
  BlendOp alpha_op = BlendOp::kAdd;
};
struct GraphicsState {
  DepthState depth;
  StencilState stencil;
  std::vector<BlendState> colour;  ///< one per colour attachment, in order
  CullMode cull = CullMode::kNone;
};

/// A float vertex attribute: `components` (1..4) floats at `offset`.
struct VertexAttribute {
  std::uint32_t location = 0;
  std::uint32_t components = 3;
  std::uint32_t offset = 0;
};
struct GraphicsPipelineDesc {
  std::span<const std::uint32_t> vertex_spirv;
  std::span<const std::uint32_t> fragment_spirv;  ///< empty: depth only
  std::uint32_t vertex_stride = 12;
  std::vector<VertexAttribute> attributes;
  std::vector<ImageFormat> colour_formats;  ///< as many as state.colour
  std::optional<ImageFormat> depth_format;
  GraphicsState state;
  std::uint32_t push_bytes = 0;  ///< push constants seen by both stages
  /// Storage buffers at set 0, bindings 0..n-1, then combined image
  /// samplers at n.., all seen by both stages.
  std::uint32_t storage_buffers = 0;
  std::vector<Sampling> textures;
};

/// An attachment of a render pass: cleared to the given values first, or
/// loaded (the contents earlier passes left).
struct Attachment {
  ImageId image;
  bool clear = false;
  std::array<float, 4> clear_colour{};
  float clear_depth = 0.0F;  ///< reversed-Z: 0 is the far plane
  std::uint32_t clear_stencil = 0;
};
/// A non-indexed or (indices set) indexed draw of `count` vertices/indices.
struct Draw {
  PipelineId pipeline;
  BufferId vertices;
  std::optional<BufferId> indices;  ///< 32-bit
  std::uint32_t count = 0;
  std::vector<std::uint8_t> push;
  std::vector<BufferId> buffers;  ///< one per pipeline storage-buffer binding
  std::vector<ImageId> textures;  ///< one per pipeline texture binding
};
struct RenderPass {
  std::vector<Attachment> colour;
  std::optional<Attachment> depth;  ///< also the stencil when its format has one
  std::vector<Draw> draws;
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
  /// `textures`: combined image samplers after the storage buffers.
  core::Result<PipelineId> create_pipeline(std::span<const std::uint32_t> spirv,
                                           std::uint32_t storage_buffers, std::uint32_t push_bytes,
                                           std::span<const Sampling> textures = {});
  /// Records the dispatches in order into one command buffer, a
  /// shader-write → shader-read/write barrier between consecutive ones and a
  /// shader → host barrier at the end, submits it and waits.
  core::Status run(std::span<const Dispatch> dispatches);

  /// A 2D image usable as an attachment and read back with read_image.
  /// Errors: GPU_UNAVAILABLE (a device without a graphics queue),
  /// GPU_LIMIT (past the device's image size), GPU_VULKAN.
  core::Result<ImageId> create_image(std::uint32_t width, std::uint32_t height, ImageFormat format);
  void free_image(ImageId image);
  /// Fills a colour image (or a depth-only one) with texels, rows top to
  /// bottom, texel_bytes(format, colour or depth) each, ready for sampling.
  core::Status write_image(ImageId image, std::span<const std::uint8_t> texels);
  /// Its texels, rows top to bottom, texel_bytes(format, aspect) each.
  core::Result<std::vector<std::uint8_t>> read_image(ImageId image, ImageAspect aspect);
  /// A graphics pipeline (dynamic rendering, viewport and scissor set to the
  /// attachments' size; triangle lists, counter-clockwise front faces); each
  /// call builds one. Errors: GPU_UNAVAILABLE (no graphics queue), GPU_VULKAN
  /// (also a description that contradicts itself).
  core::Result<PipelineId> create_graphics_pipeline(const GraphicsPipelineDesc& desc);
  /// Records the passes in order into one command buffer (every attachment
  /// the same size; a full memory barrier between passes), submits, waits.
  core::Status render(std::span<const RenderPass> passes);

 private:
  Context();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The buffers and images one kernel run or frame creates, freed when it
/// goes out of scope (on every way out).
class Scratch {
 public:
  explicit Scratch(Context& context) : context_(context) {}
  ~Scratch();
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  /// A buffer of max(size, 4) bytes holding `bytes` of `data` (≤ size) and
  /// zeros after them.
  core::Result<BufferId> buffer(const void* data, std::size_t bytes, std::size_t size);
  core::Result<BufferId> buffer(const void* data, std::size_t bytes) {
    return buffer(data, bytes, bytes);
  }
  core::Result<ImageId> image(std::uint32_t width, std::uint32_t height, ImageFormat format);

 private:
  Context& context_;
  std::vector<BufferId> buffers_;
  std::vector<ImageId> images_;
};

}  // namespace charkit::gpu
