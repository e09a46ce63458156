#include "charkit/bem/context.h"

namespace charkit::bem {

void check_v15(Context& /*ctx*/) {}  // placeholder until this pass lands

void check_material_overrides(Context&, const Json&, const std::string&) {}

}  // namespace charkit::bem
