// The graphics enumerations' names and texel sizes (both backends).
#include "charkit/gpu/context.h"

namespace charkit::gpu {

std::uint32_t texel_bytes(ImageFormat format, ImageAspect aspect) {
  switch (format) {
    case ImageFormat::kRgba16Float:
      return aspect == ImageAspect::kColour ? 8 : 0;
    case ImageFormat::kRgba8Unorm:
      return aspect == ImageAspect::kColour ? 4 : 0;
    case ImageFormat::kDepth32Stencil8:
      return aspect == ImageAspect::kDepth ? 4 : aspect == ImageAspect::kStencil ? 1 : 0;
    case ImageFormat::kDepth32:
      return aspect == ImageAspect::kDepth ? 4 : 0;
  }
  return 0;
}

const char* format_name(ImageFormat format) {
  switch (format) {
    case ImageFormat::kRgba16Float:
      return "RGBA16F";
    case ImageFormat::kRgba8Unorm:
      return "RGBA8 UNorm";
    case ImageFormat::kDepth32Stencil8:
      return "D32F S8";
    case ImageFormat::kDepth32:
      return "D32F";
  }
  return "?";
}

const char* name(CompareOp op) {
  static const char* const names[] = {"Never",   "Less",     "Equal",        "LessEqual",
                                      "Greater", "NotEqual", "GreaterEqual", "Always"};
  return names[static_cast<int>(op) & 7];
}
const char* name(StencilOp op) {
  static const char* const names[] = {"Keep",           "Zero",   "Replace",       "IncrementClamp",
                                      "DecrementClamp", "Invert", "IncrementWrap", "DecrementWrap"};
  return names[static_cast<int>(op) & 7];
}
const char* name(BlendFactor factor) {
  static const char* const names[] = {"Zero",     "One",         "SrcColor", "InvSrcColor",
                                      "DstColor", "InvDstColor", "SrcAlpha", "InvSrcAlpha",
                                      "DstAlpha", "InvDstAlpha"};
  const auto i = static_cast<unsigned>(factor);
  return i < 10 ? names[i] : "?";
}
const char* name(BlendOp op) {
  static const char* const names[] = {"Add", "Subtract", "ReverseSubtract", "Min", "Max"};
  const auto i = static_cast<unsigned>(op);
  return i < 5 ? names[i] : "?";
}
const char* name(CullMode mode) {
  static const char* const names[] = {"None", "Front", "Back"};
  const auto i = static_cast<unsigned>(mode);
  return i < 3 ? names[i] : "?";
}

}  // namespace charkit::gpu
