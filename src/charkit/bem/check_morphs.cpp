#include "charkit/bem/context.h"

namespace charkit::bem {

void check_morphs(Context& /*ctx*/) {}  // placeholder until this pass lands

}  // namespace charkit::bem
