#include "charkit/bem/context.h"

namespace charkit::bem {

void check_meshes(Context& /*ctx*/) {}  // placeholder until this pass lands

}  // namespace charkit::bem

namespace charkit::bem {
void check_texture_list(Context&, const Json&, const std::string&) {}  // placeholder
}  // namespace charkit::bem
