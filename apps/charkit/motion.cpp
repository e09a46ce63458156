// `charkit motion …` and `charkit model …` (not implemented yet).
#include "commands.h"

namespace charkit::app {

void add_motion_commands(CLI::App& /*app*/, int& /*exit_code*/) {}

}  // namespace charkit::app
