#include "charkit/bem/context.h"

namespace charkit::bem {

void check_morphs(Context& /*ctx*/) {}  // placeholder until this pass lands

}  // namespace charkit::bem

namespace charkit::bem {
void check_deformation_payload(Context&, std::uint32_t, core::Bytes, const PayloadUse&) {}  // placeholder
}  // namespace charkit::bem
