// Driver controls (bem/drivers.h): the `bem simulate --events` text and the
// console's WebSocket control messages, against three drivers. Whatever
// parses must name a driver that exists, be sorted by time and carry a
// finite value; applying it to a runtime must keep every phase in [0, 1].
// Seeds in fuzz/corpus/driver_events/.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "charkit/bem/drivers.h"

using namespace charkit::bem;

namespace {

DriverSet three_drivers() {
  DriverSet set;
  for (const char* id : {"glow", "wave", "d\xc3\xa9"}) {
    Driver d;
    d.id = id;
    d.name = id;
    d.base_frequency = 1.0;
    d.waveform = Waveform::kSine;
    set.drivers.push_back(d);
  }
  set.drivers[1].playback = Playback::kOnce;
  return set;
}

void check_phases(DriverRuntime& rt) {
  const RuntimeFrame f = rt.frame();
  for (const DriverStatus& s : f.drivers)
    if (!(s.phase >= 0.0 && s.phase <= 1.0) || !(s.w >= 0.0 && s.w <= 1.0)) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const Model model;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  DriverRuntime rt(three_drivers(), model, {}, {});
  if (auto events = parse_driver_events(text, rt.drivers())) {
    double last = 0.0;
    for (const DriverEvent& e : *events) {
      if (e.driver >= rt.drivers().size() || e.time < last || !std::isfinite(e.arg)) std::abort();
      last = e.time;
      apply_driver_control(rt, e.action, e.driver, e.arg);
      rt.step(0.37);
      check_phases(rt);
    }
  }
  if (auto control = parse_driver_control(text, rt.drivers())) {
    if (control->driver >= rt.drivers().size() || !std::isfinite(control->arg)) std::abort();
    apply_driver_control(rt, control->action, control->driver, control->arg);
    rt.step(0.5);
    check_phases(rt);
  }
  return 0;
}
