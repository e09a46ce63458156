// User settings of a BEM package: the saved option string (§6 "组:选项&组:选项",
// 1.0: an appearance id, §5) and the saved parameter string (§10 "id:刻度&id:刻度"),
// parsed strictly and then normalised against a Model.
//
// Policy (docs/bem/select.md):
// - Hard errors (code BEM_SETTINGS_SYNTAX, location = byte column in the
//   string): text that no runtime could ever have saved — an empty pair
//   ("a:b&&c:d", leading/trailing '&'), a pair without ':', an empty id or
//   value, a character outside the stable-ID set [A-Za-z0-9_.-] (or an id not
//   starting with a letter/digit, or longer than 96 bytes), the same group or
//   parameter named twice, a tick that is not a decimal UInt32.
// - Normalised with a warning (never used as an index): unknown group,
//   unknown choice of a known group, unknown 1.0 appearance id, unknown
//   parameter id, tick outside [min,max] or off the step grid; all fall back
//   to the default. A combination that breaks selection_constraints falls
//   back to the default of every group (the default combination is legal, §6).
// - Silent: missing groups / parameters take their default; an unavailable
//   group keeps its saved value but has no effective value; an unavailable
//   parameter keeps its saved tick but evaluates at neutral (§6, §10).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "charkit/bem/model.h"
#include "charkit/core/result.h"

namespace charkit::bem {

/// One "key:value" pair of a settings string as written, with the byte
/// column where the key starts.
struct SettingsPair {
  std::string key;
  std::string value;
  std::size_t column = 0;
};

/// Syntax only: split "k:v&k:v" into pairs. The empty string gives no pairs.
/// Errors: BEM_SETTINGS_SYNTAX with Location::offset = byte column.
core::Result<std::vector<SettingsPair>> parse_settings_pairs(std::string_view text);

/// A normalisation note (the input was accepted but not used as written).
struct SettingsWarning {
  std::string code;  ///< BEM_SETTINGS_UNKNOWN_GROUP, ..._UNKNOWN_CHOICE, ...
  std::string message;
  std::size_t column = 0;      ///< byte column in the string it came from
  bool in_parameters = false;  ///< false: options string; true: parameters string
};

/// Normalised settings of one package.
struct Settings {
  /// Per group (manifest order): the saved choice index after normalisation.
  std::vector<std::uint32_t> saved;
  /// Per group: the effective choice, nullopt when unavailable (§6).
  EffectiveValues effective;
  /// Per parameter (manifest order): the saved tick after normalisation.
  std::vector<std::uint32_t> saved_ticks;
  /// Per parameter: the tick evaluation uses (neutral when unavailable, §10).
  std::vector<std::uint32_t> ticks;
  /// Per parameter: available_when holds (or is absent).
  std::vector<bool> parameter_available;
  std::vector<SettingsWarning> warnings;
};

/// The defaults: every group at its default choice, every parameter at its
/// default tick, effective values computed.
Settings default_settings(const Model& model);

/// Parse and normalise both strings (see the policy above). Errors only for
/// syntax (BEM_SETTINGS_SYNTAX; location offset = column; the message says
/// which string). A model whose group defaults are out of range (validation
/// skipped) gives BEM_SETTINGS_MODEL.
core::Result<Settings> parse_settings(const Model& model, std::string_view options,
                                      std::string_view parameters);

/// Effective values from saved choices (§6: groups in order; available_when
/// only sees earlier groups). saved.size() must equal model.groups.size().
EffectiveValues compute_effective(const Model& model, const std::vector<std::uint32_t>& saved);

/// Normalised option string: every group in manifest order as "g:c&g:c"
/// (saved values, including those of unavailable groups); 1.0: the appearance id.
std::string format_options(const Model& model, const Settings& settings);
/// Normalised parameter string: every parameter in manifest order "id:tick&…".
std::string format_parameters(const Model& model, const Settings& settings);

}  // namespace charkit::bem
