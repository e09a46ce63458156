// The drivers playground (detail/drivers_playground.h, docs/api.md §Drivers
// playground): the runtime's frames as JSON text, with the preview GLB's
// morph weights.
#include "charkit/server/detail/drivers_playground.h"

#include <utility>

#include "charkit/bem/export_gltf.h"
#include "charkit/core/json.h"
#include "charkit/core/json_text.h"

namespace charkit::server {

using core::Json;

namespace {

constexpr int kCurveSamples = 256;

std::unique_ptr<const bem::Model> own(bem::Model model) {
  return std::make_unique<const bem::Model>(std::move(model));
}

Json binding_json(const bem::DriverBinding& b) {
  Json j{{"type", bem::binding_type_name(b.type)}};
  switch (b.type) {
    case bem::BindingType::kMorphParameter:
      j["target"] = b.target;
      j["low"] = b.low;
      j["high"] = b.high;
      break;
    case bem::BindingType::kMaterialFloat:
      j["component"] = b.component;
      j["material_slot"] = b.material_slot;
      j["property"] = b.property;
      j["low"] = b.low;
      j["high"] = b.high;
      break;
    case bem::BindingType::kMaterialColor:
      j["component"] = b.component;
      j["material_slot"] = b.material_slot;
      j["property"] = b.property;
      j["from"] = Json::array({b.from[0], b.from[1], b.from[2], b.from[3]});
      j["to"] = Json::array({b.to[0], b.to[1], b.to[2], b.to[3]});
      break;
    case bem::BindingType::kMaterialKeyword:
      j["component"] = b.component;
      j["material_slot"] = b.material_slot;
      j["keyword"] = b.keyword;
      j["threshold"] = b.threshold;
      break;
  }
  return j;
}

}  // namespace

DriverPlayground::DriverPlayground(std::int64_t package_id, bem::Model model,
                                   const bem::Settings& settings, bem::Plan plan,
                                   bem::DriverSet set)
    : package_id_(package_id),
      model_(own(std::move(model))),
      plan_(std::move(plan)),
      rt_(std::move(set), *model_, settings.ticks, bem::static_materials(*model_, plan_)) {}

std::string DriverPlayground::header() const {
  Json drivers = Json::array();
  for (const bem::Driver& d : rt_.drivers()) {
    Json bindings = Json::array();
    for (const bem::DriverBinding& b : d.bindings) bindings.push_back(binding_json(b));
    Json j{{"id", d.id},
           {"name", d.name},
           {"waveform", bem::waveform_name(d.waveform)},
           {"playback", bem::playback_name(d.playback)},
           {"base_frequency", d.base_frequency},
           {"speed_multiplier", d.speed_multiplier},
           {"default_playing", d.default_playing},
           {"bindings", std::move(bindings)}};
    // The waveform over one cycle, for the page's plot: the runtime's own
    // values (jitter included), kCurveSamples + 1 points at phase i / kCurveSamples.
    Json curve = Json::array();
    for (int i = 0; i <= kCurveSamples; ++i)
      curve.push_back(bem::waveform_value(d.waveform, static_cast<double>(i) / kCurveSamples));
    j["curve"] = std::move(curve);
    j["sound"] =
        d.sound ? Json{{"payload", d.sound->payload}, {"format", d.sound->format}} : Json(nullptr);
    drivers.push_back(std::move(j));
  }
  Json params = Json::array();
  for (const bem::Parameter& p : model_->parameters)
    params.push_back(Json{{"id", p.id}, {"min", p.min}, {"max", p.max}, {"neutral", p.neutral}});
  Json meshes = Json::array();
  for (const std::vector<float>& w : bem::morph_target_weights(*model_, plan_, {}))
    meshes.push_back(Json{{"targets", w.size()}});
  Json log = Json::array();
  for (const std::string& line : rt_.log()) log.push_back(line);
  return core::dump_json(Json{{"type", "drivers"},
                              {"packageId", package_id_},
                              {"fps", kFps},
                              {"drivers", std::move(drivers)},
                              {"parameters", std::move(params)},
                              {"meshes", std::move(meshes)},
                              {"log", std::move(log)}});
}

std::string DriverPlayground::control(std::string_view text) {
  auto c = bem::parse_driver_control(text, rt_.drivers());
  if (!c)
    return core::dump_json(
        Json{{"type", "error"}, {"error", c.error().code}, {"message", c.error().message}});
  bem::apply_driver_control(rt_, c->action, c->driver, c->arg);
  dirty_ = true;
  return {};
}

std::string DriverPlayground::advance(std::uint64_t periods) {
  if (periods > 0) {
    rt_.step(static_cast<double>(periods) / kFps);
    step_ += periods;
  }
  const bem::RuntimeFrame f = rt_.frame();
  Json j{{"type", "frame"}, {"step", step_}, {"time", static_cast<double>(step_) / kFps}};
  Json state = bem::runtime_frame_json(*model_, rt_, f);
  for (auto& [k, v] : state.items()) j[k] = std::move(v);
  Json morphs = Json::array();
  for (const std::vector<float>& w : bem::morph_target_weights(*model_, plan_, f.ticks))
    morphs.push_back(w);
  j["morphs"] = std::move(morphs);
  dirty_ = false;
  return core::dump_json(j);
}

bool DriverPlayground::changing() const {
  if (dirty_) return true;
  for (std::size_t d = 0; d < rt_.drivers().size(); ++d)
    if (rt_.state(d) == bem::DriverState::kPlaying) return true;
  return false;
}

}  // namespace charkit::server
