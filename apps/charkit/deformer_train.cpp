// `charkit deformer` sub-commands (see commands.h).
#include "commands.h"

namespace charkit::app {

void add_deformer_train_commands(CLI::App& /*deformer*/, int& /*exit_code*/) {}

}  // namespace charkit::app
