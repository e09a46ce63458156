// A motion file of any kind to keypoint NDJSON with the default options:
// the content decides the path (detect_motion_file), never the name. Shared
// by the server's motion job and the C API (`charkit motion convert` has its
// own options on top of the same converters).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "charkit/core/result.h"
#include "charkit/motion/convert.h"
#include "charkit/motion/format.h"

namespace charkit::motion {

struct MotionFileOptions {
  MotionBudget budget;  ///< 0 = unlimited
  const std::atomic<bool>* cancel = nullptr;
};

struct MotionFileSummary {
  MotionFileKind kind = MotionFileKind::kUnknown;
  std::uint64_t frames = 0;
  double fps = kDefaultFps;
  std::vector<BvhWarning> warnings;
};

/// Maps the file, judges its kind and converts it through the matching
/// converter (BVH, keypoint JSON, or Assimp for glTF/GLB/FBX), writing the
/// NDJSON through `sink`. `kind` in the summary is set even on failure when
/// `kind_out` is given. Errors: IO_* (the file), MOTION_FORMAT (unknown
/// kind), and the converters' errors.
core::Result<MotionFileSummary> convert_motion_file(const std::string& path,
                                                    const MotionFileOptions& options,
                                                    const OutputSink& sink,
                                                    MotionFileKind* kind_out = nullptr);

}  // namespace charkit::motion
