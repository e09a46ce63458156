/* The C API's header moved to charkit/capi/c_api.h, beside the rest of the
 * C API's module. This header stays for one release so that programs that
 * include the old path still build; include the new one. */
#include "charkit/capi/c_api.h"
