// The BEM 1.5 dynamic-drivers runtime (§13, dynamic-drivers-v1): what a
// player does with a package's `drivers` over time, as a deterministic
// library type with no clock of its own (docs/bem/runtime.md).
//
// read_drivers() reads the manifest the way the runtime must: a driver whose
// waveform or playback is unknown is dropped, a binding of an unknown type
// is dropped, quotas (16 drivers, 32 bindings, 8 sounds) drop the excess,
// each with a log line; the validator (check_drivers.cpp) refuses the same
// packages outright. DriverRuntime then keeps each driver's state and
// phase, takes the control calls (start, pause, stop, toggle, speed) and
// step(dt), and frame() gives every driver's w and binding outputs, the
// resulting parameter ticks and material values, and the sound events.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "charkit/bem/model.h"
#include "charkit/bem/plan.h"
#include "charkit/core/enum_names.h"
#include "charkit/core/json_fwd.h"
#include "charkit/core/result.h"

namespace charkit::bem {

enum class Waveform : std::uint8_t { kPingpong, kSine, kJitter, kSawtooth, kStep };
enum class Playback : std::uint8_t { kLoop, kOnce };
enum class DriverState : std::uint8_t { kStopped, kPlaying, kPaused, kFinished };
enum class BindingType : std::uint8_t {
  kMorphParameter,
  kMaterialFloat,
  kMaterialColor,
  kMaterialKeyword
};

/// The §13 spelling of each value, one table per enum: the names below and
/// the manifest readers and checks (bem/drivers.cpp, check_drivers.cpp)
/// come from them.
inline constexpr core::EnumNames<Waveform, 5> kWaveformNames{{{{Waveform::kPingpong, "pingpong"},
                                                               {Waveform::kSine, "sine"},
                                                               {Waveform::kJitter, "jitter"},
                                                               {Waveform::kSawtooth, "sawtooth"},
                                                               {Waveform::kStep, "step"}}}};
inline constexpr core::EnumNames<Playback, 2> kPlaybackNames{
    {{{Playback::kLoop, "loop"}, {Playback::kOnce, "once"}}}};
inline constexpr core::EnumNames<DriverState, 4> kDriverStateNames{
    {{{DriverState::kStopped, "stopped"},
      {DriverState::kPlaying, "playing"},
      {DriverState::kPaused, "paused"},
      {DriverState::kFinished, "finished"}}}};
inline constexpr core::EnumNames<BindingType, 4> kBindingTypeNames{
    {{{BindingType::kMorphParameter, "morph_parameter"},
      {BindingType::kMaterialFloat, "material_float"},
      {BindingType::kMaterialColor, "material_color"},
      {BindingType::kMaterialKeyword, "material_keyword"}}}};

/// "pingpong", "sine", "jitter", "sawtooth", "step".
const char* waveform_name(Waveform w);
/// "loop", "once".
const char* playback_name(Playback p);
/// "stopped", "playing", "paused", "finished".
const char* driver_state_name(DriverState s);
/// "morph_parameter", "material_float", "material_color", "material_keyword".
const char* binding_type_name(BindingType t);

/// Steps per cycle of the jitter waveform: its value changes when
/// floor(phase * kJitterSteps) does.
inline constexpr std::uint32_t kJitterSteps = 64;

/// The waveform's w in [0, 1] at a phase in [0, 1] (§13): pingpong
/// p < 0.5 ? 2p : 2 - 2p; sine (1 - cos 2πp) / 2; sawtooth p; step
/// p < 0.5 ? 0 : 1; jitter a hash of floor(p * kJitterSteps) (SplitMix64 of
/// that integer, top 53 bits as a fraction). Every waveform gives 0 at phase 0.
double waveform_value(Waveform w, double phase);

struct DriverBinding {
  BindingType type = BindingType::kMorphParameter;
  std::uint32_t parameter = 0;  ///< morph: index into Model::parameters
  std::string target;           ///< morph: the parameter id
  std::uint32_t component = 0;  ///< material bindings
  std::uint32_t material_slot = 0;
  std::string property;                                    ///< material_float / material_color
  std::string keyword;                                     ///< material_keyword
  double low = 0.0, high = 1.0;                            ///< range
  std::array<double, 4> from{0, 0, 0, 0}, to{0, 0, 0, 0};  ///< material_color
  double threshold = 0.5;                                  ///< material_keyword
};

struct DriverSound {
  std::uint32_t payload = 0;
  std::string format = "bin";
  double gain = 1.0;
  bool loop = true;
  double offset_seconds = 0.0;
};

struct Driver {
  std::string id;
  std::string name;  ///< the id when the manifest gives none
  Waveform waveform = Waveform::kPingpong;
  Playback playback = Playback::kLoop;
  bool default_playing = false;
  double base_frequency = 0.0;
  double speed_multiplier = 1.0;
  std::vector<DriverBinding> bindings;
  std::optional<DriverSound> sound;
};

/// §13's quotas: drivers per package, bindings per driver, drivers with a sound.
inline constexpr std::size_t kMaxDrivers = 16;
inline constexpr std::size_t kMaxDriverBindings = 32;
inline constexpr std::size_t kMaxDriverSounds = 8;

struct DriverSet {
  std::vector<Driver> drivers;
  /// What was dropped and why, one line each ("[AnimDriver] ..." or
  /// "[driver-audio] ..."), in manifest order.
  std::vector<std::string> log;
};

/// The runtime's reading of manifest["drivers"] against the model's
/// parameters. Never fails: what it cannot use is dropped with a log line.
DriverSet read_drivers(const core::Json& manifest, const Model& model);

/// What a material slot holds without drivers: the static §12
/// material_overrides of the selected draws of (component, material_slot).
struct StaticMaterial {
  std::uint32_t component = 0;
  std::uint32_t material_slot = 0;
  std::map<std::string, double> floats;
  std::map<std::string, std::array<double, 4>> colors;
  std::set<std::string> enable_keywords;
  std::set<std::string> disable_keywords;
};

/// The static overrides of a plan's selected draws, one entry per
/// (material_component, material_slot) that has any (later draws win).
std::vector<StaticMaterial> static_materials(const Model& model, const Plan& plan);

struct BindingOutput {
  std::size_t binding = 0;                  ///< index into the driver's bindings
  std::uint32_t tick = 0;                   ///< morph_parameter
  double value = 0.0;                       ///< material_float
  std::array<double, 4> color{0, 0, 0, 0};  ///< material_color
  bool enabled = false;                     ///< material_keyword
};

struct DriverStatus {
  std::size_t driver = 0;  ///< index into DriverSet::drivers
  DriverState state = DriverState::kStopped;
  double phase = 0.0;
  double w = 0.0;
  double speed = 1.0;
  /// Empty while stopped (released); one per binding otherwise.
  std::vector<BindingOutput> outputs;
};

/// A material property or keyword some binding targets, as the slot holds it
/// this frame: the driving binding's output, or after release the static
/// override, else the binding's lower bound (keywords: off).
struct MaterialValue {
  std::uint32_t component = 0;
  std::uint32_t material_slot = 0;
  BindingType type = BindingType::kMaterialFloat;
  std::string name;  ///< property or keyword
  double value = 0.0;
  std::array<double, 4> color{0, 0, 0, 0};
  bool enabled = false;
  bool driven = false;       ///< written by a driver this frame
  bool from_static = false;  ///< released to a static material_overrides value
};

struct SoundEvent {
  std::size_t driver = 0;
  bool start = true;  ///< false: stop
};

struct RuntimeFrame {
  std::vector<DriverStatus> drivers;
  /// Per parameter (manifest order): the tick to evaluate, the driving
  /// binding's where one drives it (the last one in driver order), else the
  /// load-time manual tick.
  std::vector<std::uint32_t> ticks;
  std::vector<bool> driven;  ///< per parameter
  std::vector<MaterialValue> materials;
  /// Sound starts and stops since the previous frame(), in order.
  std::vector<SoundEvent> sounds;
};

class DriverRuntime {
 public:
  /// manual_ticks: per parameter the load-time ticks (Settings::ticks);
  /// statics: static_materials() of the selection. Drivers with
  /// default_playing start playing (a sound start event each).
  DriverRuntime(DriverSet set, const Model& model, std::vector<std::uint32_t> manual_ticks,
                std::vector<StaticMaterial> statics);

  const std::vector<Driver>& drivers() const { return set_.drivers; }
  const std::vector<std::string>& log() const { return set_.log; }
  /// Index of a driver by id, or -1.
  int find(std::string_view id) const;
  /// A driver's state now (frame() also reports it).
  DriverState state(std::size_t driver) const { return live_.at(driver).state; }

  /// §13 controls. start: from stopped or finished the phase restarts at 0,
  /// from paused it goes on; pause: playing -> paused (phase kept, still
  /// delivered); stop: -> stopped, phase 0, released; toggle (the hotkey):
  /// stopped -> start, anything else -> stop. set_speed clamps to the live
  /// range [0.25, 4] and never moves the phase.
  void start(std::size_t driver);
  void pause(std::size_t driver);
  void stop(std::size_t driver);
  void toggle(std::size_t driver);
  void set_speed(std::size_t driver, double speed);

  /// Advances every playing driver by dt seconds: phase += dt * base_frequency
  /// * speed; loop: modulo 1; once: clamped at 1, then finished (its sound
  /// stops). dt must be finite and >= 0 (others are ignored).
  void step(double dt);

  /// The state now; takes the sound events gathered since the last call.
  RuntimeFrame frame();

 private:
  struct Live {
    DriverState state = DriverState::kStopped;
    double phase = 0.0;
    double speed = 1.0;
  };
  void sound(std::size_t driver, bool start);
  const Model* model_;
  DriverSet set_;
  std::vector<std::uint32_t> manual_;
  std::vector<StaticMaterial> statics_;
  std::vector<Live> live_;
  std::vector<SoundEvent> pending_;
};

/// The controls of §13 a player offers, by name: "start", "pause", "stop",
/// "toggle", "speed" (with a value). nullopt for any other name.
enum class DriverAction : std::uint8_t { kStart, kPause, kStop, kToggle, kSpeed };
std::optional<DriverAction> driver_action(std::string_view name);
const char* driver_action_name(DriverAction a);

/// One timed control (bem simulate --events): TIME:ACTION:DRIVER[:ARG].
struct DriverEvent {
  double time = 0.0;
  DriverAction action = DriverAction::kStart;
  std::size_t driver = 0;  ///< index into the drivers
  double arg = 1.0;        ///< speed
  std::size_t column = 0;  ///< 1-based offset of the event in the text
};

/// Parses `TIME:ACTION:DRIVER[:ARG]` items joined by `&` against the drivers
/// (ids), sorted by time (stable: equal times keep their order). Error
/// BEM_SIMULATE_EVENTS with the event's column and, for an unknown driver,
/// the ids there are. At most 100000 events.
core::Result<std::vector<DriverEvent>> parse_driver_events(std::string_view text,
                                                           const std::vector<Driver>& drivers);

/// One control message of the console's drivers WebSocket (docs/api.md
/// §Drivers): a JSON object {"action": "start"|"pause"|"stop"|"toggle"|
/// "speed", "driver": id, "value": speed (speed only)}; time 0. Error
/// BEM_DRIVER_CONTROL saying what is wrong (unknown drivers listed).
core::Result<DriverEvent> parse_driver_control(std::string_view json_text,
                                               const std::vector<Driver>& drivers);

/// Applies one control to a driver (speed: `arg`).
void apply_driver_control(DriverRuntime& rt, DriverAction action, std::size_t driver,
                          double arg = 1.0);

/// One frame as JSON (docs/bem/runtime.md, the line format of bem simulate
/// and the frames of the console's drivers WebSocket): {"drivers",
/// "parameters", "materials", "sounds"}.
core::Json runtime_frame_json(const Model& model, const DriverRuntime& rt, const RuntimeFrame& f);

}  // namespace charkit::bem
