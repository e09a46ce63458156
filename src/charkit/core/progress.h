// A progress callback for long library computations: called with the steps
// done so far and the total (done <= total; the last call has done == total).
// Optional everywhere it appears (an empty function is never called); it runs
// on the calling thread and must not throw. The `charkit` program turns it
// into a bar or periodic lines on stderr (docs/cli.md).
#pragma once

#include <cstddef>
#include <functional>

namespace charkit::core {

using ProgressFn = std::function<void(std::size_t done, std::size_t total)>;

}  // namespace charkit::core
