// `charkit bem export`: registered by add_bem_commands (not implemented yet).
#include "commands.h"

namespace charkit::app {

void add_bem_export_command(CLI::App& /*bem*/, int& /*exit_code*/) {}

}  // namespace charkit::app
