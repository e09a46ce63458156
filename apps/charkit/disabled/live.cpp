// Stand-in for ../live.cpp in a build without the server
// (CHARKIT_WITH_SERVER=OFF; docs/building.md, "Optional dependencies"): the
// live publisher is not offered.
#include "commands.h"

namespace charkit::app {

void add_live_commands(CLI::App& /*app*/, int& /*exit_code*/) {}

}  // namespace charkit::app
