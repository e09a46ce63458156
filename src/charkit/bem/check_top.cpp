#include "charkit/bem/context.h"

namespace charkit::bem {

void check_top_level(Context& /*ctx*/) {}  // placeholder until this pass lands

void check_final(Context& /*ctx*/) {}  // placeholder until this pass lands

}  // namespace charkit::bem
