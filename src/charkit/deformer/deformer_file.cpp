#include "charkit/deformer/deformer_file.h"

#include <filesystem>

#include "charkit/core/enum_names.h"
#include "charkit/deformer/nmn.h"
#include "charkit/deformer/onnx.h"

namespace charkit::deformer {

DeformerFileKind detect_deformer_file(core::Bytes bytes, std::string_view path) {
  if (bytes.size() >= 4 && core::load_le<std::uint32_t>(bytes.data()) == kNmnMagic)
    return DeformerFileKind::kNmn;
  if (looks_like_onnx(bytes)) return DeformerFileKind::kOnnx;
  if (path.empty()) return DeformerFileKind::kUnknown;
  const std::filesystem::path p{std::string(path)};
  if (p.extension() == ".onnx") return DeformerFileKind::kOnnx;
  if (p.extension() == ".json" && !bytes.empty() && bytes[0] == '{')
    return DeformerFileKind::kPoseModel;
  return DeformerFileKind::kUnknown;
}

namespace {
constexpr core::EnumNames<DeformerFileKind, 4> kKindNames{
    {{{DeformerFileKind::kNmn, "nmn"},
      {DeformerFileKind::kOnnx, "onnx"},
      {DeformerFileKind::kPoseModel, "pose-model"},
      {DeformerFileKind::kUnknown, "unknown"}}}};
}  // namespace

std::string_view deformer_file_kind_name(DeformerFileKind kind) {
  return kKindNames.name(kind);
}

}  // namespace charkit::deformer
