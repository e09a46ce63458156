#include "charkit/bem/settings.h"

#include <charconv>

#include "charkit/bem/error_codes.h"

namespace charkit::bem {

namespace {

constexpr std::size_t kMaxIdLength = 96;  // stable-ID rule (reference notes, §3)

bool is_id_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '-';
}
bool is_alnum(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

core::Error syntax(std::string message, std::size_t column) {
  return core::error_at_offset(codes::BEM_SETTINGS_SYNTAX,
                               std::move(message) + " at column " + std::to_string(column), column);
}

// Check one stable ID that starts at `column`; nullopt when it is fine.
std::optional<core::Error> check_id(std::string_view s, std::size_t column, const char* what) {
  if (s.empty()) return syntax(std::string("empty ") + what, column);
  if (s.size() > kMaxIdLength)
    return syntax(std::string(what) + " longer than 96 bytes", column + kMaxIdLength);
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (!is_id_char(s[i]))
      return syntax(std::string("character not allowed in a stable ID in ") + what, column + i);
  }
  if (!is_alnum(s[0]))
    return syntax(std::string(what) + " must start with a letter or digit", column);
  return std::nullopt;
}

std::optional<std::uint32_t> find_choice(const Group& g, std::string_view id) {
  for (std::size_t i = 0; i < g.choices.size(); ++i)
    if (g.choices[i] == id) return static_cast<std::uint32_t>(i);
  return std::nullopt;
}

SettingsWarning warn(core::ErrorCode code, std::string message, std::size_t column, bool params) {
  return SettingsWarning{code, std::move(message), column, params};
}

bool tick_on_grid(const Parameter& p, std::uint32_t t) {
  return t >= p.min && t <= p.max && (t - p.min) % p.step == 0;
}

}  // namespace

core::Result<std::vector<SettingsPair>> parse_settings_pairs(std::string_view text) {
  std::vector<SettingsPair> pairs;
  if (text.empty()) return pairs;
  std::size_t pos = 0;
  while (true) {
    const std::size_t amp = text.find('&', pos);
    const std::size_t end = amp == std::string_view::npos ? text.size() : amp;
    const std::string_view seg = text.substr(pos, end - pos);
    if (seg.empty()) return syntax("empty pair", pos);
    const std::size_t colon = seg.find(':');
    if (colon == std::string_view::npos) return syntax("pair without ':'", pos);
    const std::string_view key = seg.substr(0, colon);
    const std::string_view value = seg.substr(colon + 1);
    if (auto e = check_id(key, pos, "key")) return *e;
    if (auto e = check_id(value, pos + colon + 1, "value")) return *e;
    for (const SettingsPair& p : pairs)
      if (p.key == key) return syntax("'" + std::string(key) + "' given twice", pos);
    pairs.push_back(SettingsPair{std::string(key), std::string(value), pos});
    if (amp == std::string_view::npos) break;
    pos = amp + 1;
  }
  return pairs;
}

EffectiveValues compute_effective(const Model& model, const std::vector<std::uint32_t>& saved) {
  // §6: groups in order; available_when only refers to earlier groups, so the
  // later entries are still nullopt when a condition is evaluated.
  EffectiveValues eff(model.groups.size());
  for (std::size_t g = 0; g < model.groups.size() && g < saved.size(); ++g) {
    const Group& grp = model.groups[g];
    if (grp.available_when && !evaluate(*grp.available_when, eff)) continue;
    eff[g] = saved[g];
  }
  return eff;
}

Settings default_settings(const Model& model) {
  Settings s;
  for (const Group& g : model.groups) s.saved.push_back(g.default_choice);
  s.effective = compute_effective(model, s.saved);
  for (const Parameter& p : model.parameters) s.saved_ticks.push_back(p.default_value);
  for (const Parameter& p : model.parameters) {
    const bool avail = !p.available_when || evaluate(*p.available_when, s.effective);
    s.parameter_available.push_back(avail);
    s.ticks.push_back(avail ? p.default_value : p.neutral);
  }
  return s;
}

core::Result<Settings> parse_settings(const Model& model, std::string_view options,
                                      std::string_view parameters) {
  // Model sanity first, so that nothing below can index out of range or
  // divide by zero on a model that skipped validation.
  for (std::size_t g = 0; g < model.groups.size(); ++g) {
    if (model.groups[g].default_choice >= model.groups[g].choices.size())
      return core::make_error(codes::BEM_SETTINGS_MODEL,
                              "group '" + model.groups[g].id + "' has no default choice");
  }
  for (const Parameter& p : model.parameters) {
    if (p.step == 0 || p.min > p.max)
      return core::make_error(codes::BEM_SETTINGS_MODEL,
                              "parameter '" + p.id + "' has no valid range");
  }
  if (model.appearance_structure && model.groups.size() != 1)
    return core::make_error(codes::BEM_SETTINGS_MODEL, "1.0 model without its appearance group");

  // Syntax of both strings before any normalisation.
  std::vector<SettingsPair> option_pairs;
  if (model.appearance_structure) {
    // §5: 1.0 saves the appearance id itself.
    if (!options.empty()) {
      if (auto e = check_id(options, 0, "appearance id")) return *e;
    }
  } else {
    auto p = parse_settings_pairs(options);
    if (!p.ok()) {
      core::Error e = std::move(p).error();
      e.message = "options: " + e.message;
      return e;
    }
    option_pairs = std::move(*p);
  }
  auto pp = parse_settings_pairs(parameters);
  if (!pp.ok()) {
    core::Error e = std::move(pp).error();
    e.message = "parameters: " + e.message;
    return e;
  }
  std::vector<std::uint32_t> parsed_ticks;
  for (const SettingsPair& p : *pp) {
    std::uint32_t t = 0;
    const char* b = p.value.data();
    const char* e = b + p.value.size();
    const std::size_t vcol = p.column + p.key.size() + 1;
    for (std::size_t i = 0; i < p.value.size(); ++i)
      if (p.value[i] < '0' || p.value[i] > '9')
        return syntax("parameters: tick is not a decimal number", vcol + i);
    auto r = std::from_chars(b, e, t);
    if (r.ec != std::errc() || r.ptr != e)
      return syntax("parameters: tick does not fit a UInt32", vcol);
    parsed_ticks.push_back(t);
  }

  Settings s;
  s.saved.reserve(model.groups.size());
  for (const Group& g : model.groups) s.saved.push_back(g.default_choice);
  if (model.appearance_structure) {
    if (!options.empty()) {
      if (auto c = find_choice(model.groups[0], options)) {
        s.saved[0] = *c;
      } else {
        s.warnings.push_back(
            warn(codes::BEM_SETTINGS_UNKNOWN_APPEARANCE,
                 "unknown appearance '" + std::string(options) + "', using the default", 0, false));
      }
    }
  } else {
    for (const SettingsPair& p : option_pairs) {
      const int g = model.find_group(p.key);
      if (g < 0 || static_cast<std::size_t>(g) >= model.groups.size()) {
        s.warnings.push_back(warn(codes::BEM_SETTINGS_UNKNOWN_GROUP,
                                  "unknown option group '" + p.key + "' ignored", p.column, false));
        continue;
      }
      const Group& grp = model.groups[static_cast<std::size_t>(g)];
      if (auto c = find_choice(grp, p.value)) {
        s.saved[static_cast<std::size_t>(g)] = *c;
      } else {
        s.warnings.push_back(warn(codes::BEM_SETTINGS_UNKNOWN_CHOICE,
                                  "group '" + p.key + "' has no choice '" + p.value +
                                      "', using its default '" + grp.choices[grp.default_choice] +
                                      "'",
                                  p.column + p.key.size() + 1, false));
      }
    }
  }
  s.effective = compute_effective(model, s.saved);
  for (std::size_t i = 0; i < model.constraints.size(); ++i) {
    if (!evaluate(model.constraints[i], s.effective)) {
      // §6: only combinations meeting every constraint are legal; the default
      // combination is, so an illegal saved combination falls back to it.
      s.warnings.push_back(warn(codes::BEM_SETTINGS_CONSTRAINT,
                                "selection_constraints[" + std::to_string(i) +
                                    "] does not hold; using the default of every group",
                                0, false));
      for (std::size_t g = 0; g < model.groups.size(); ++g)
        s.saved[g] = model.groups[g].default_choice;
      s.effective = compute_effective(model, s.saved);
      break;
    }
  }

  s.saved_ticks.reserve(model.parameters.size());
  for (const Parameter& p : model.parameters) s.saved_ticks.push_back(p.default_value);
  for (std::size_t i = 0; i < pp->size(); ++i) {
    const SettingsPair& pair = (*pp)[i];
    const int k = model.find_parameter(pair.key);
    if (k < 0 || static_cast<std::size_t>(k) >= model.parameters.size()) {
      s.warnings.push_back(warn(codes::BEM_SETTINGS_UNKNOWN_PARAMETER,
                                "unknown parameter '" + pair.key + "' ignored", pair.column, true));
      continue;
    }
    const Parameter& par = model.parameters[static_cast<std::size_t>(k)];
    if (!tick_on_grid(par, parsed_ticks[i])) {
      s.warnings.push_back(warn(
          codes::BEM_SETTINGS_INVALID_TICK,
          "parameter '" + pair.key + "': tick " + pair.value + " is outside [" +
              std::to_string(par.min) + "," + std::to_string(par.max) + "] or off step " +
              std::to_string(par.step) + "; using its default " + std::to_string(par.default_value),
          pair.column + pair.key.size() + 1, true));
      continue;
    }
    s.saved_ticks[static_cast<std::size_t>(k)] = parsed_ticks[i];
  }
  for (std::size_t i = 0; i < model.parameters.size(); ++i) {
    const Parameter& p = model.parameters[i];
    // §10: an unavailable parameter evaluates at neutral, keeping its saved tick.
    const bool avail = !p.available_when || evaluate(*p.available_when, s.effective);
    s.parameter_available.push_back(avail);
    s.ticks.push_back(avail ? s.saved_ticks[i] : p.neutral);
  }
  return s;
}

std::string format_options(const Model& model, const Settings& settings) {
  if (model.appearance_structure) {
    if (model.groups.empty() || settings.saved.empty() ||
        settings.saved[0] >= model.groups[0].choices.size())
      return {};
    return model.groups[0].choices[settings.saved[0]];
  }
  std::string out;
  for (std::size_t g = 0; g < model.groups.size() && g < settings.saved.size(); ++g) {
    if (settings.saved[g] >= model.groups[g].choices.size()) continue;
    if (!out.empty()) out += '&';
    out += model.groups[g].id;
    out += ':';
    out += model.groups[g].choices[settings.saved[g]];
  }
  return out;
}

std::string format_parameters(const Model& model, const Settings& settings) {
  std::string out;
  for (std::size_t i = 0; i < model.parameters.size() && i < settings.saved_ticks.size(); ++i) {
    if (!out.empty()) out += '&';
    out += model.parameters[i].id;
    out += ':';
    out += std::to_string(settings.saved_ticks[i]);
  }
  return out;
}

}  // namespace charkit::bem
