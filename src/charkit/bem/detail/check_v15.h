// Internal to bem/: helpers shared by the BEM 1.5 passes (§12 material
// overrides and root offset in check_v15.cpp, §13 drivers in check_drivers.cpp).
#pragma once

#include <string>
#include <string_view>

#include "charkit/bem/detail/context.h"

namespace charkit::bem {

/// §12 property name: ^_[a-zA-Z0-9_]{1,95}$.
bool is_property_name(std::string_view s);
/// §12 shader keyword: ^[A-Z0-9_]{2,96}$.
bool is_shader_keyword(std::string_view s);
/// §12 skip_validation: names relaxed to printable ASCII (1..96 characters).
bool is_printable_name(std::string_view s);

/// A number for messages: shortest of up to 9 significant digits ("0.2", "-500").
std::string format_number(double v);

/// §13 "drivers" (called by check_v15).
void check_drivers(Context& ctx);

}  // namespace charkit::bem
