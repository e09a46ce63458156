// `charkit deformer …`: pose-driven deformer models.
#include "commands.h"

namespace charkit::app {

void add_deformer_commands(CLI::App& app, int& exit_code) {
  auto* deformer =
      app.add_subcommand("deformer", "Pose-driven deformer models (linear, MLP, .nmn, ONNX)");
  deformer->require_subcommand(1);
  add_deformer_train_commands(*deformer, exit_code);
  add_deformer_run_commands(*deformer, exit_code);
}

}  // namespace charkit::app
