// §13 dynamic drivers at run time (bem/drivers.h, docs/bem/runtime.md).
#include "charkit/bem/drivers.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <numbers>

#include "charkit/bem/error_codes.h"
#include "charkit/core/json.h"
#include "charkit/core/utf8.h"

namespace charkit::bem {

using core::Json;

// The names are literals, so each view is NUL-terminated.
const char* waveform_name(Waveform w) {
  return kWaveformNames.name(w).data();
}

const char* playback_name(Playback p) {
  return kPlaybackNames.name(p).data();
}

const char* driver_state_name(DriverState s) {
  return kDriverStateNames.name(s).data();
}

const char* binding_type_name(BindingType t) {
  return kBindingTypeNames.name(t).data();
}

double waveform_value(Waveform w, double p) {
  if (!(p > 0.0)) return 0.0;  // phase 0 (and NaN) gives 0 for every waveform
  p = std::min(p, 1.0);
  switch (w) {
    case Waveform::kPingpong:
      return p < 0.5 ? 2.0 * p : 2.0 - 2.0 * p;
    case Waveform::kSine:
      return (1.0 - std::cos(2.0 * std::numbers::pi * p)) / 2.0;
    case Waveform::kSawtooth:
      return p;
    case Waveform::kStep:
      return p < 0.5 ? 0.0 : 1.0;
    case Waveform::kJitter: {
      // SplitMix64 of the quantised phase: the same curve on every run and
      // every machine (§13: never rand()).
      std::uint64_t z =
          static_cast<std::uint64_t>(std::floor(p * kJitterSteps)) + 0x9E3779B97F4A7C15ULL;
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
      z ^= z >> 31;
      return static_cast<double>(z >> 11) * 0x1.0p-53;
    }
  }
  return 0.0;
}

namespace {

std::optional<double> number(const Json& o, const char* key) {
  auto it = o.find(key);
  if (it == o.end() || !it->is_number()) return std::nullopt;
  const double v = it->get<double>();
  if (!std::isfinite(v)) return std::nullopt;
  return v;
}

std::string string_or(const Json& o, const char* key, std::string fallback) {
  auto it = o.find(key);
  return it != o.end() && it->is_string() ? it->get<std::string>() : fallback;
}

std::uint32_t index_or(const Json& o, const char* key) {
  auto v = number(o, key);
  if (!v || *v < 0 || *v > 4294967295.0 || std::floor(*v) != *v) return 0;
  return static_cast<std::uint32_t>(*v);
}

// range [low, high]: the default [0, 1] unless a valid increasing pair.
void read_range(const Json& b, DriverBinding& out) {
  auto it = b.find("range");
  if (it == b.end() || !it->is_array() || it->size() != 2 || !(*it)[0].is_number() ||
      !(*it)[1].is_number())
    return;
  out.low = (*it)[0].get<double>();
  out.high = (*it)[1].get<double>();
}

std::array<double, 4> rgba(const Json& c) {
  std::array<double, 4> out{0, 0, 0, 0};
  if (!c.is_array()) return out;
  for (std::size_t k = 0; k < 4 && k < c.size(); ++k)
    if (c[k].is_number()) out[k] = c[k].get<double>();
  return out;
}

}  // namespace

DriverSet read_drivers(const Json& manifest, const Model& model) {
  DriverSet out;
  if (!manifest.is_object()) return out;
  auto list = manifest.find("drivers");
  if (list == manifest.end() || !list->is_array()) return out;
  std::size_t sounds = 0;
  std::set<std::string> ids;
  for (std::size_t i = 0; i < list->size(); ++i) {
    const Json& d = (*list)[i];
    const std::string at = "drivers[" + std::to_string(i) + "]";
    if (!d.is_object() || !d.contains("id") || !d["id"].is_string() ||
        d["id"].get<std::string>().empty()) {
      out.log.push_back("[AnimDriver] " + at + ": no id, dropped");
      continue;
    }
    Driver drv;
    drv.id = d["id"].get<std::string>();
    if (!ids.insert(drv.id).second) {
      out.log.push_back("[AnimDriver] " + at + " \"" + drv.id + "\": repeated id, dropped");
      continue;
    }
    if (out.drivers.size() == kMaxDrivers) {
      out.log.push_back("[AnimDriver] " + at + " \"" + drv.id + "\": more than " +
                        std::to_string(kMaxDrivers) + " drivers, dropped");
      continue;
    }
    drv.name = string_or(d, "name", drv.id);
    const std::string wf = string_or(d, "waveform", "pingpong");
    auto w = kWaveformNames.parse(wf);
    if (!w) {
      out.log.push_back("[AnimDriver] \"" + drv.id + "\": unknown waveform \"" + wf +
                        "\", dropped");
      continue;
    }
    drv.waveform = *w;
    const std::string pb = string_or(d, "playback", "loop");
    auto playback = kPlaybackNames.parse(pb);
    if (!playback) {
      out.log.push_back("[AnimDriver] \"" + drv.id + "\": unknown playback \"" + pb +
                        "\", dropped");
      continue;
    }
    drv.playback = *playback;
    if (auto it = d.find("default_playing"); it != d.end() && it->is_boolean())
      drv.default_playing = it->get<bool>();
    drv.base_frequency = std::clamp(number(d, "base_frequency").value_or(0.0), 0.0, 10.0);
    drv.speed_multiplier = std::clamp(number(d, "speed_multiplier").value_or(1.0), 0.0, 10.0);
    if (auto bl = d.find("bindings"); bl != d.end() && bl->is_array()) {
      for (std::size_t k = 0; k < bl->size(); ++k) {
        const Json& b = (*bl)[k];
        const std::string bat = "\"" + drv.id + "\" bindings[" + std::to_string(k) + "]";
        if (drv.bindings.size() == kMaxDriverBindings) {
          out.log.push_back("[AnimDriver] " + bat + ": more than " +
                            std::to_string(kMaxDriverBindings) + " bindings, dropped");
          continue;
        }
        if (!b.is_object()) {
          out.log.push_back("[AnimDriver] " + bat + ": not an object, dropped");
          continue;
        }
        const std::string type = string_or(b, "type", "");
        DriverBinding db;
        read_range(b, db);
        if (type == "morph_parameter" || type == "blend_shape") {
          db.type = BindingType::kMorphParameter;
          db.target = string_or(b, "target", "");
          const int p = model.find_parameter(db.target);
          if (p < 0) {
            out.log.push_back("[AnimDriver] " + bat + ": \"" + db.target +
                              "\" is not a parameter, dropped");
            continue;
          }
          db.parameter = static_cast<std::uint32_t>(p);
          db.low = std::clamp(db.low, 0.0, 1.0);
          db.high = std::clamp(db.high, 0.0, 1.0);
        } else if (type == "material_float" || type == "material_color" ||
                   type == "material_keyword") {
          db.component = index_or(b, "component");
          db.material_slot = index_or(b, "material_slot");
          if (type == "material_float") {
            db.type = BindingType::kMaterialFloat;
            db.property = string_or(b, "property", "");
          } else if (type == "material_color") {
            db.type = BindingType::kMaterialColor;
            db.property = string_or(b, "property", "");
            if (auto c = b.find("colors"); c != b.end() && c->is_array() && c->size() == 2) {
              db.from = rgba((*c)[0]);
              db.to = rgba((*c)[1]);
            }
          } else {
            db.type = BindingType::kMaterialKeyword;
            db.keyword = string_or(b, "keyword", "");
            db.threshold = std::clamp(number(b, "threshold").value_or(0.5), 0.0, 1.0);
          }
        } else {
          out.log.push_back("[AnimDriver] " + bat + ": unknown type \"" + type + "\", dropped");
          continue;
        }
        drv.bindings.push_back(std::move(db));
      }
    }
    if (auto s = d.find("sound"); s != d.end() && s->is_object()) {
      if (sounds == kMaxDriverSounds) {
        out.log.push_back("[driver-audio] \"" + drv.id + "\": more than " +
                          std::to_string(kMaxDriverSounds) + " sounds, the sound is dropped");
      } else {
        DriverSound snd;
        snd.payload = index_or(*s, "payload");
        snd.format = string_or(*s, "format", "bin");
        snd.gain = std::clamp(number(*s, "gain").value_or(1.0), 0.0, 2.0);
        if (auto l = s->find("loop"); l != s->end() && l->is_boolean()) snd.loop = l->get<bool>();
        snd.offset_seconds = std::clamp(number(*s, "offset_seconds").value_or(0.0), 0.0, 60.0);
        drv.sound = snd;
        ++sounds;
      }
    }
    if (drv.bindings.empty() && !drv.sound) {
      out.log.push_back("[AnimDriver] \"" + drv.id + "\": neither bindings nor a sound, dropped");
      continue;
    }
    out.drivers.push_back(std::move(drv));
  }
  return out;
}

std::vector<StaticMaterial> static_materials(const Model& model, const Plan& plan) {
  std::vector<StaticMaterial> out;
  for (const auto& [m, d] : plan.draws) {
    if (m >= model.meshes.size() || d >= model.meshes[m].draws.size()) continue;
    const Draw& draw = model.meshes[m].draws[d];
    const Json& o = *draw.material_overrides;
    if (!o.is_object()) continue;
    auto it = std::find_if(out.begin(), out.end(), [&](const StaticMaterial& s) {
      return s.component == draw.material_component && s.material_slot == draw.material_slot;
    });
    if (it == out.end()) {
      out.push_back({draw.material_component, draw.material_slot, {}, {}, {}, {}});
      it = out.end() - 1;
    }
    if (auto f = o.find("floats"); f != o.end() && f->is_object())
      for (auto e = f->begin(); e != f->end(); ++e)
        if (e->is_number()) it->floats[e.key()] = e->get<double>();
    if (auto c = o.find("colors"); c != o.end() && c->is_object())
      for (auto e = c->begin(); e != c->end(); ++e) it->colors[e.key()] = rgba(*e);
    for (const char* key : {"enable_keywords", "disable_keywords"}) {
      auto k = o.find(key);
      if (k == o.end() || !k->is_array()) continue;
      const bool enable = key[0] == 'e';
      for (const Json& kw : *k) {
        if (!kw.is_string()) continue;
        const std::string s = kw.get<std::string>();
        (enable ? it->enable_keywords : it->disable_keywords).insert(s);
        (enable ? it->disable_keywords : it->enable_keywords).erase(s);
      }
    }
  }
  return out;
}

DriverRuntime::DriverRuntime(DriverSet set, const Model& model,
                             std::vector<std::uint32_t> manual_ticks,
                             std::vector<StaticMaterial> statics)
    : model_(&model),
      set_(std::move(set)),
      manual_(std::move(manual_ticks)),
      statics_(std::move(statics)) {
  manual_.resize(model.parameters.size(), 0);
  live_.resize(set_.drivers.size());
  for (std::size_t i = 0; i < set_.drivers.size(); ++i) {
    live_[i].speed = set_.drivers[i].speed_multiplier;
    if (set_.drivers[i].default_playing) start(i);
  }
}

int DriverRuntime::find(std::string_view id) const {
  for (std::size_t i = 0; i < set_.drivers.size(); ++i)
    if (set_.drivers[i].id == id) return static_cast<int>(i);
  return -1;
}

void DriverRuntime::sound(std::size_t i, bool start) {
  if (set_.drivers[i].sound) pending_.push_back({i, start});
}

void DriverRuntime::start(std::size_t i) {
  if (i >= live_.size()) return;
  Live& l = live_[i];
  if (l.state == DriverState::kPlaying) return;
  if (l.state == DriverState::kStopped || l.state == DriverState::kFinished) l.phase = 0.0;
  l.state = DriverState::kPlaying;
  sound(i, true);
}

void DriverRuntime::pause(std::size_t i) {
  if (i >= live_.size() || live_[i].state != DriverState::kPlaying) return;
  live_[i].state = DriverState::kPaused;
  sound(i, false);
}

void DriverRuntime::stop(std::size_t i) {
  if (i >= live_.size()) return;
  Live& l = live_[i];
  if (l.state == DriverState::kPlaying) sound(i, false);
  l.state = DriverState::kStopped;
  l.phase = 0.0;
}

void DriverRuntime::toggle(std::size_t i) {
  if (i >= live_.size()) return;
  if (live_[i].state == DriverState::kStopped)
    start(i);
  else
    stop(i);
}

void DriverRuntime::set_speed(std::size_t i, double speed) {
  if (i >= live_.size() || !std::isfinite(speed)) return;
  live_[i].speed = std::clamp(speed, 0.25, 4.0);
}

void DriverRuntime::step(double dt) {
  if (!std::isfinite(dt) || dt < 0.0) return;
  for (std::size_t i = 0; i < live_.size(); ++i) {
    Live& l = live_[i];
    if (l.state != DriverState::kPlaying) continue;
    const double next = l.phase + dt * set_.drivers[i].base_frequency * l.speed;
    if (set_.drivers[i].playback == Playback::kLoop) {
      l.phase = next - std::floor(next);
    } else if (next >= 1.0) {
      l.phase = 1.0;
      l.state = DriverState::kFinished;
      sound(i, false);
    } else {
      l.phase = next;
    }
  }
}

RuntimeFrame DriverRuntime::frame() {
  RuntimeFrame f;
  f.ticks = manual_;
  f.driven.assign(manual_.size(), false);
  auto material = [&](const DriverBinding& b) -> MaterialValue& {
    const std::string& name = b.type == BindingType::kMaterialKeyword ? b.keyword : b.property;
    for (MaterialValue& m : f.materials)
      if (m.component == b.component && m.material_slot == b.material_slot && m.type == b.type &&
          m.name == name)
        return m;
    MaterialValue m;
    m.component = b.component;
    m.material_slot = b.material_slot;
    m.type = b.type;
    m.name = name;
    // Released: the static override, else the binding's lower bound.
    const StaticMaterial* s = nullptr;
    for (const StaticMaterial& st : statics_)
      if (st.component == b.component && st.material_slot == b.material_slot) s = &st;
    if (b.type == BindingType::kMaterialFloat) {
      m.value = b.low;
      if (s && s->floats.count(name)) {
        m.value = s->floats.at(name);
        m.from_static = true;
      }
    } else if (b.type == BindingType::kMaterialColor) {
      m.color = b.from;
      if (s && s->colors.count(name)) {
        m.color = s->colors.at(name);
        m.from_static = true;
      }
    } else {
      m.enabled = s && s->enable_keywords.count(name) > 0;
      m.from_static = s && (s->enable_keywords.count(name) || s->disable_keywords.count(name));
    }
    f.materials.push_back(std::move(m));
    return f.materials.back();
  };
  // Every targeted material value first, released; drivers then write theirs.
  for (const Driver& d : set_.drivers)
    for (const DriverBinding& b : d.bindings)
      if (b.type != BindingType::kMorphParameter) material(b);
  for (std::size_t i = 0; i < set_.drivers.size(); ++i) {
    const Driver& d = set_.drivers[i];
    const Live& l = live_[i];
    DriverStatus st;
    st.driver = i;
    st.state = l.state;
    st.phase = l.phase;
    st.speed = l.speed;
    if (l.state != DriverState::kStopped) {
      st.w = waveform_value(d.waveform, l.phase);
      for (std::size_t k = 0; k < d.bindings.size(); ++k) {
        const DriverBinding& b = d.bindings[k];
        BindingOutput o;
        o.binding = k;
        switch (b.type) {
          case BindingType::kMorphParameter: {
            const Parameter& p = model_->parameters[b.parameter];
            const double span = static_cast<double>(p.max) - static_cast<double>(p.min);
            const double t =
                std::round(static_cast<double>(p.min) + (b.low + (b.high - b.low) * st.w) * span);
            o.tick = static_cast<std::uint32_t>(
                std::clamp(t, static_cast<double>(p.min), static_cast<double>(p.max)));
            f.ticks[b.parameter] = o.tick;
            f.driven[b.parameter] = true;
            break;
          }
          case BindingType::kMaterialFloat: {
            o.value = b.low + (b.high - b.low) * st.w;
            MaterialValue& m = material(b);
            m.value = o.value;
            m.driven = true;
            m.from_static = false;
            break;
          }
          case BindingType::kMaterialColor: {
            for (std::size_t c = 0; c < 4; ++c)
              o.color[c] = b.from[c] + (b.to[c] - b.from[c]) * st.w;
            MaterialValue& m = material(b);
            m.color = o.color;
            m.driven = true;
            m.from_static = false;
            break;
          }
          case BindingType::kMaterialKeyword: {
            o.enabled = st.w > b.threshold;
            MaterialValue& m = material(b);
            m.enabled = o.enabled;
            m.driven = true;
            m.from_static = false;
            break;
          }
        }
        st.outputs.push_back(o);
      }
    }
    f.drivers.push_back(std::move(st));
  }
  f.sounds = std::move(pending_);
  pending_.clear();
  return f;
}

// ---- controls, events and the frame's JSON ------------------------------------------

std::optional<DriverAction> driver_action(std::string_view name) {
  if (name == "start") return DriverAction::kStart;
  if (name == "pause") return DriverAction::kPause;
  if (name == "stop") return DriverAction::kStop;
  if (name == "toggle") return DriverAction::kToggle;
  if (name == "speed") return DriverAction::kSpeed;
  return std::nullopt;
}

const char* driver_action_name(DriverAction a) {
  switch (a) {
    case DriverAction::kStart:
      return "start";
    case DriverAction::kPause:
      return "pause";
    case DriverAction::kStop:
      return "stop";
    case DriverAction::kToggle:
      return "toggle";
    case DriverAction::kSpeed:
      return "speed";
  }
  return "start";
}

namespace {

/// A decimal number filling the whole field (no sign prefix '+', no spaces).
std::optional<double> whole_number(std::string_view s) {
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v))
    return std::nullopt;
  return v;
}

}  // namespace

core::Result<std::vector<DriverEvent>> parse_driver_events(std::string_view text,
                                                           const std::vector<Driver>& drivers) {
  constexpr std::size_t kMaxEvents = 100000;
  std::vector<DriverEvent> out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('&', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view item = text.substr(pos, end - pos);
    auto bad = [&](const std::string& why) {
      return core::error_at_offset(
          codes::BEM_SIMULATE_EVENTS,
          "event " + core::quote_excerpt(item) + ": " + why +
              " (form TIME:ACTION:DRIVER[:ARG], actions start, pause, stop, "
              "toggle, speed)",
          pos + 1);
    };
    if (out.size() >= kMaxEvents) return bad("more than " + std::to_string(kMaxEvents) + " events");
    std::vector<std::string_view> parts;
    for (std::size_t a = 0;;) {
      const std::size_t b = item.find(':', a);
      parts.push_back(item.substr(a, b == std::string_view::npos ? item.size() - a : b - a));
      if (b == std::string_view::npos || parts.size() > 4) break;
      a = b + 1;
    }
    if (parts.size() < 3 || parts.size() > 4) return bad("expected 3 or 4 fields");
    DriverEvent e;
    e.column = pos + 1;
    const auto time = whole_number(parts[0]);
    if (!time || *time < 0) return bad("the time is not a number of seconds >= 0");
    e.time = *time;
    const auto action = driver_action(parts[1]);
    if (!action) return bad("unknown action " + core::quote_excerpt(parts[1]));
    e.action = *action;
    const auto it = std::find_if(drivers.begin(), drivers.end(),
                                 [&](const Driver& d) { return d.id == parts[2]; });
    if (it == drivers.end()) {
      std::string ids;
      for (const Driver& d : drivers) ids += (ids.empty() ? "" : ", ") + core::quote_excerpt(d.id);
      return bad("no driver " + core::quote_excerpt(parts[2]) +
                 " (the package's drivers: " + (ids.empty() ? "none" : ids) + ")");
    }
    e.driver = static_cast<std::size_t>(it - drivers.begin());
    if (e.action == DriverAction::kSpeed) {
      if (parts.size() != 4) return bad("speed needs a value, e.g. 2:speed:glow:1.5");
      const auto speed = whole_number(parts[3]);
      if (!speed) return bad("the speed is not a number");
      e.arg = *speed;
    } else if (parts.size() == 4) {
      return bad("only speed takes a value");
    }
    out.push_back(e);
    pos = end + 1;
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const DriverEvent& a, const DriverEvent& b) { return a.time < b.time; });
  return out;
}

core::Result<DriverEvent> parse_driver_control(std::string_view json_text,
                                               const std::vector<Driver>& drivers) {
  auto bad = [](const std::string& why) {
    return core::make_error(codes::BEM_DRIVER_CONTROL,
                            why +
                                " (a control is {\"action\": \"start\"|\"pause\"|\"stop\"|"
                                "\"toggle\"|\"speed\", \"driver\": ID, \"value\": SPEED})");
  };
  if (json_text.size() > 4096) return bad("the message is over 4096 bytes");
  auto j = core::parse_json_strict(json_text);
  if (!j) return bad("not JSON: " + j.error().message);
  if (!j->is_object()) return bad("not a JSON object");
  const auto action_it = j->find("action");
  if (action_it == j->end() || !action_it->is_string()) return bad("no string \"action\"");
  const auto action = driver_action(action_it->get_ref<const std::string&>());
  if (!action)
    return bad("unknown action " + core::quote_excerpt(action_it->get_ref<const std::string&>()));
  const auto driver_it = j->find("driver");
  if (driver_it == j->end() || !driver_it->is_string()) return bad("no string \"driver\"");
  const std::string& id = driver_it->get_ref<const std::string&>();
  const auto it =
      std::find_if(drivers.begin(), drivers.end(), [&](const Driver& d) { return d.id == id; });
  if (it == drivers.end()) {
    std::string ids;
    for (const Driver& d : drivers) ids += (ids.empty() ? "" : ", ") + core::quote_excerpt(d.id);
    return bad("no driver " + core::quote_excerpt(id) +
               " (the package's drivers: " + (ids.empty() ? "none" : ids) + ")");
  }
  DriverEvent e;
  e.action = *action;
  e.driver = static_cast<std::size_t>(it - drivers.begin());
  const auto value_it = j->find("value");
  if (e.action == DriverAction::kSpeed) {
    if (value_it == j->end() || !value_it->is_number())
      return bad("speed needs a number \"value\"");
    e.arg = value_it->get<double>();
    if (!std::isfinite(e.arg)) return bad("the speed is not a finite number");
  } else if (value_it != j->end()) {
    return bad("only speed takes a value");
  }
  return e;
}

void apply_driver_control(DriverRuntime& rt, DriverAction action, std::size_t driver, double arg) {
  switch (action) {
    case DriverAction::kStart:
      return rt.start(driver);
    case DriverAction::kPause:
      return rt.pause(driver);
    case DriverAction::kStop:
      return rt.stop(driver);
    case DriverAction::kToggle:
      return rt.toggle(driver);
    case DriverAction::kSpeed:
      return rt.set_speed(driver, arg);
  }
}

namespace {

Json color_json(const std::array<double, 4>& c) {
  return Json::array({c[0], c[1], c[2], c[3]});
}

}  // namespace

Json runtime_frame_json(const Model& model, const DriverRuntime& rt, const RuntimeFrame& f) {
  Json drivers = Json::array();
  for (const DriverStatus& s : f.drivers) {
    const Driver& d = rt.drivers()[s.driver];
    Json bindings = Json::array();
    for (const BindingOutput& o : s.outputs) {
      const DriverBinding& b = d.bindings[o.binding];
      Json j{{"type", binding_type_name(b.type)}};
      switch (b.type) {
        case BindingType::kMorphParameter:
          j["target"] = b.target;
          j["tick"] = o.tick;
          break;
        case BindingType::kMaterialFloat:
          j["component"] = b.component;
          j["material_slot"] = b.material_slot;
          j["property"] = b.property;
          j["value"] = o.value;
          break;
        case BindingType::kMaterialColor:
          j["component"] = b.component;
          j["material_slot"] = b.material_slot;
          j["property"] = b.property;
          j["value"] = color_json(o.color);
          break;
        case BindingType::kMaterialKeyword:
          j["component"] = b.component;
          j["material_slot"] = b.material_slot;
          j["keyword"] = b.keyword;
          j["enabled"] = o.enabled;
          break;
      }
      bindings.push_back(std::move(j));
    }
    drivers.push_back(Json{{"id", d.id},
                           {"state", driver_state_name(s.state)},
                           {"phase", s.phase},
                           {"w", s.w},
                           {"speed", s.speed},
                           {"bindings", std::move(bindings)}});
  }
  Json params = Json::object();
  for (std::size_t p = 0; p < model.parameters.size() && p < f.ticks.size(); ++p)
    params[model.parameters[p].id] = f.ticks[p];
  Json materials = Json::array();
  for (const MaterialValue& m : f.materials) {
    Json j{{"component", m.component},
           {"material_slot", m.material_slot},
           {"type", binding_type_name(m.type)},
           {m.type == BindingType::kMaterialKeyword ? "keyword" : "property", m.name}};
    if (m.type == BindingType::kMaterialFloat)
      j["value"] = m.value;
    else if (m.type == BindingType::kMaterialColor)
      j["value"] = color_json(m.color);
    else
      j["enabled"] = m.enabled;
    j["source"] = m.driven ? "driver" : m.from_static ? "static" : "default";
    materials.push_back(std::move(j));
  }
  Json sounds = Json::array();
  for (const SoundEvent& e : f.sounds) {
    const Driver& d = rt.drivers()[e.driver];
    Json j{{"driver", d.id}, {"event", e.start ? "start" : "stop"}};
    if (e.start && d.sound) {
      j["payload"] = d.sound->payload;
      j["format"] = d.sound->format;
      j["gain"] = d.sound->gain;
      j["loop"] = d.sound->loop;
      j["offset_seconds"] = d.sound->offset_seconds;
    }
    sounds.push_back(std::move(j));
  }
  return Json{{"drivers", std::move(drivers)},
              {"parameters", std::move(params)},
              {"materials", std::move(materials)},
              {"sounds", std::move(sounds)}};
}

}  // namespace charkit::bem
