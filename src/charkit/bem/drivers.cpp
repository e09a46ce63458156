// §13 dynamic drivers at run time (bem/drivers.h, docs/bem/runtime.md).
#include "charkit/bem/drivers.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace charkit::bem {

using core::Json;

const char* waveform_name(Waveform w) {
  switch (w) {
    case Waveform::kPingpong:
      return "pingpong";
    case Waveform::kSine:
      return "sine";
    case Waveform::kJitter:
      return "jitter";
    case Waveform::kSawtooth:
      return "sawtooth";
    case Waveform::kStep:
      return "step";
  }
  return "pingpong";
}

const char* playback_name(Playback p) {
  return p == Playback::kOnce ? "once" : "loop";
}

const char* driver_state_name(DriverState s) {
  switch (s) {
    case DriverState::kStopped:
      return "stopped";
    case DriverState::kPlaying:
      return "playing";
    case DriverState::kPaused:
      return "paused";
    case DriverState::kFinished:
      return "finished";
  }
  return "stopped";
}

const char* binding_type_name(BindingType t) {
  switch (t) {
    case BindingType::kMorphParameter:
      return "morph_parameter";
    case BindingType::kMaterialFloat:
      return "material_float";
    case BindingType::kMaterialColor:
      return "material_color";
    case BindingType::kMaterialKeyword:
      return "material_keyword";
  }
  return "morph_parameter";
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

std::optional<Waveform> waveform_of(const std::string& s) {
  if (s == "pingpong") return Waveform::kPingpong;
  if (s == "sine") return Waveform::kSine;
  if (s == "jitter") return Waveform::kJitter;
  if (s == "sawtooth") return Waveform::kSawtooth;
  if (s == "step") return Waveform::kStep;
  return std::nullopt;
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
    auto w = waveform_of(wf);
    if (!w) {
      out.log.push_back("[AnimDriver] \"" + drv.id + "\": unknown waveform \"" + wf +
                        "\", dropped");
      continue;
    }
    drv.waveform = *w;
    const std::string pb = string_or(d, "playback", "loop");
    if (pb != "loop" && pb != "once") {
      out.log.push_back("[AnimDriver] \"" + drv.id + "\": unknown playback \"" + pb +
                        "\", dropped");
      continue;
    }
    drv.playback = pb == "once" ? Playback::kOnce : Playback::kLoop;
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
    const Json& o = draw.material_overrides;
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

}  // namespace charkit::bem
