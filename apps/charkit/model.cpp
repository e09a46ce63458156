// `charkit model …`: model intake.
#include "commands.h"

namespace charkit::app {

void add_model_commands(CLI::App& app, int& /*exit_code*/) {
  auto* model = app.add_subcommand("model", "Identify character models (GLB, glTF, VRM, FBX)");
  model->require_subcommand(1);
}

}  // namespace charkit::app
