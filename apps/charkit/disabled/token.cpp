// Stand-in for ../token.cpp in a build without the server
// (CHARKIT_WITH_SERVER=OFF; docs/building.md, "Optional dependencies"): the
// server's API tokens are not offered.
#include "commands.h"

namespace charkit::app {

void add_token_commands(CLI::App& /*app*/, int& /*exit_code*/) {}

}  // namespace charkit::app
