// `charkit deformer …`: pose-driven deformer models.
#include "commands.h"

namespace charkit::app {

void add_deformer_commands(CLI::App& app, int& /*exit_code*/) {
  auto* deformer = app.add_subcommand("deformer", "Pose-driven deformer models (linear, MLP, .nmn, ONNX)");
  deformer->require_subcommand(1);
}

}  // namespace charkit::app
