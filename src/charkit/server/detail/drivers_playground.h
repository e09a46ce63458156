// The console's drivers playground (docs/api.md §Drivers playground): one
// package's §13 drivers run by bem::DriverRuntime for one WebSocket
// connection (GET /api/packages/{id}/drivers). The connection (ws.cpp)
// owns the clock: it calls advance() once per frame period and sends what
// it returns; control messages from the page go through control(). No
// Beast here, and no locking: a playground lives on its session's strand.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "charkit/bem/drivers.h"
#include "charkit/bem/model.h"
#include "charkit/bem/plan.h"
#include "charkit/bem/settings.h"

namespace charkit::server {

class DriverPlayground {
 public:
  /// Frames per second of the state the connection sends.
  static constexpr double kFps = 30.0;

  /// `plan`: the selection's plan with PlanOptions::all_frames, the one the
  /// page's preview GLB (export.glb?targets=1) was written from, so that the
  /// morph weights line up with its targets.
  DriverPlayground(std::int64_t package_id, bem::Model model, const bem::Settings& settings,
                   bem::Plan plan, bem::DriverSet set);

  /// The first message: {"type": "drivers", ...} describing every driver
  /// (id, name, waveform, playback, frequency, bindings with their ranges),
  /// the parameters, the preview meshes' morph target counts and the
  /// runtime's drop log.
  std::string header() const;
  /// A control message from the page (bem::parse_driver_control): applied
  /// and "" returned, or the {"type": "error"} message to answer.
  std::string control(std::string_view text);
  /// Advances the runtime by `periods` frame periods (0: the state as it is)
  /// and returns the {"type": "frame"} message.
  std::string advance(std::uint64_t periods);
  /// Whether the next frame can differ from the last one sent: a driver is
  /// playing, or a control was applied since.
  bool changing() const;

 private:
  std::int64_t package_id_;
  std::unique_ptr<const bem::Model> model_;  ///< the runtime points into it
  bem::Plan plan_;
  bem::DriverRuntime rt_;
  std::uint64_t step_ = 0;
  bool dirty_ = true;  ///< a control since the last frame (the first frame too)
};

}  // namespace charkit::server
