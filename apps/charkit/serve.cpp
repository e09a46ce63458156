// `charkit serve` and `charkit worker`: the HTTP + WebSocket server.
#include "commands.h"

namespace charkit::app {

void add_serve_commands(CLI::App& /*app*/, int& /*exit_code*/) {}

}  // namespace charkit::app
