#include "charkit/motion/convert_file.h"

#include <string_view>

#include "charkit/core/mapped_file.h"
#include "charkit/motion/assimp_motion.h"
#include "charkit/motion/keypoint_json.h"

namespace charkit::motion {

core::Result<MotionFileSummary> convert_motion_file(const std::string& path,
                                                    const MotionFileOptions& o,
                                                    const OutputSink& sink,
                                                    MotionFileKind* kind_out) {
  auto file = core::MappedFile::open(path);
  if (!file) return std::move(file).error();
  auto bytes = file->bytes();
  std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  const MotionFileKind kind = detect_motion_file(text);
  if (kind_out) *kind_out = kind;
  if (is_assimp_kind(kind)) {
    AssimpMotionOptions ao;
    ao.isolation.cancel = o.cancel;
    auto m = load_assimp_motion_file(path, ao);
    if (!m) return std::move(m).error();
    ConvertOptions opts;
    opts.budget = o.budget;
    opts.cancel = o.cancel;
    auto r = convert_assimp_motion(*m, opts, sink);
    if (!r) return std::move(r).error();
    return MotionFileSummary{kind, r->frames, r->fps, std::move(r->warnings)};
  }
  if (kind == MotionFileKind::kKeypointJson) {
    KeypointJsonOptions ko;
    ko.budget = o.budget;
    ko.cancel = o.cancel;
    auto r = convert_keypoint_json(text, ko, sink);
    if (!r) return std::move(r).error();
    return MotionFileSummary{kind, r->frames, r->fps, std::move(r->warnings)};
  }
  if (kind == MotionFileKind::kBvh) {
    ConvertOptions opts;
    opts.hints = &*file;
    opts.budget = o.budget;
    opts.cancel = o.cancel;
    auto r = convert_bvh(text, opts, sink);
    if (!r) return std::move(r).error();
    return MotionFileSummary{kind, r->frames, r->fps, std::move(r->warnings)};
  }
  return unknown_motion_file_error();
}

}  // namespace charkit::motion
