#include "charkit/version.h"

namespace charkit::core {

const char* library_version() noexcept {
  return CHARKIT_VERSION_STRING;
}

}  // namespace charkit::core
