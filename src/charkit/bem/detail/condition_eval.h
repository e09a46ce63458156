// Internal to bem/: evaluating §6 conditions at one selection (used by the
// option pass to check that the default selection satisfies the selection
// constraints). The exhaustive proof over all selections is the decision
// graph's job, not this helper's.
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "charkit/bem/detail/context.h"

namespace charkit::bem {

/// One value per option group in manifest order; nullopt when the group is
/// unavailable (its available_when is false), so any eq on it is false (§6).
using Selection = std::vector<std::optional<std::string>>;

/// Index of option group id in ctx.groups, or -1.
int find_group(const Context& ctx, const std::string& id);

/// Value of a condition already accepted by check_condition. Malformed parts
/// evaluate to false (never throws).
bool eval_condition(const Json& cond, const Selection& sel, const Context& ctx);

}  // namespace charkit::bem
