// The character render passes and their exact pipeline states (the
// character-rendering frame analysis §2–§4; docs/render/passes.md): one
// declarative table, written once, that the pipeline builder (pipeline_desc)
// uses and that `--explain` and the docs print (passes_markdown). The states
// are the capture's where the frame analysis gives them; the rest are our
// readings, marked in each pass's notes.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "charkit/gpu/context.h"

namespace charkit::render {

/// The frame's attachments.
enum class Target : std::uint8_t {
  kHdr,           ///< HDR colour
  kMaterial1,     ///< first material map (control value)
  kMaterial2,     ///< second material map (motion, flags)
  kNormal,        ///< RGB = 0.5·n + 0.5, A = 1
  kDepthStencil,  ///< reversed-Z depth (GreaterEqual, clear 0) + 8-bit stencil
  kShadowDepth,   ///< the light's reversed-Z depth (face shadow geometry)
};

struct TargetDesc {
  Target id;
  const char* name;
  gpu::ImageFormat format;
  const char* contents;
};
/// Every attachment, in Target order.
std::span<const TargetDesc> targets();
const TargetDesc& target(Target t);

enum class PassId : std::uint8_t {
  kFaceShadow,            ///< face shadow geometry: light-space depth only
  kBody,                  ///< body and other opaque parts
  kFaceMain,              ///< face main shading
  kShadowClassification,  ///< stencil bit 2 where bit 7 is set
  kEyeComposite,          ///< premultiplied eye colour
  kTransparent,           ///< transparent parts over the scene colour
  kOutline,               ///< MToon's inverted-hull outline of body and face parts
};

struct PassDesc {
  PassId id;
  const char* name;            ///< e.g. "face-main" (CLI and JSON)
  const char* title;           ///< e.g. "Face main shading"
  const char* source;          ///< the state's source: frame-analysis sections or "our reading"
  const char* purpose;         ///< what the pass produces
  std::vector<Target> colour;  ///< colour attachments, in order
  std::optional<Target> depth;
  gpu::GraphicsState state;  ///< state.colour[i] belongs to colour[i]
  const char* notes;         ///< readings where the frame analysis is silent
};

/// The passes in the order a frame draws them.
const std::vector<PassDesc>& passes();
const PassDesc& pass(PassId id);

/// The stencil bits the passes use: bit 7 marks the character class (face
/// and body write 0x80), bit 2 the shadow classification (0x84 after it).
inline constexpr std::uint8_t kStencilCharacter = 0x80;
inline constexpr std::uint8_t kStencilShadowClass = 0x04;

/// The pipeline description of a pass: its attachments' formats and state,
/// with the caller's shaders and vertex layout.
gpu::GraphicsPipelineDesc pipeline_desc(const PassDesc& pass,
                                        std::span<const std::uint32_t> vertex_spirv,
                                        std::span<const std::uint32_t> fragment_spirv,
                                        std::uint32_t vertex_stride,
                                        std::vector<gpu::VertexAttribute> attributes,
                                        std::uint32_t push_bytes);

/// One Markdown table per pass and one of the attachments: what
/// docs/render/passes.md holds between its generated-table markers (tested).
std::string passes_markdown();

}  // namespace charkit::render
