// Stand-in for ../serve.cpp in a build without the server
// (CHARKIT_WITH_SERVER=OFF; docs/building.md, "Optional dependencies"):
// `serve` and `worker` are not offered.
#include "commands.h"

namespace charkit::app {

void add_serve_commands(CLI::App& /*app*/, int& /*exit_code*/) {}

}  // namespace charkit::app
