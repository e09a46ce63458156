// `charkit deformer …`: pose-driven deformer models.
#include "commands.h"

namespace charkit::app {

void add_deformer_commands(CLI::App& app, int& exit_code) {
  auto* deformer = app.add_subcommand(
      "deformer", "Pose-driven deformers: linear and neural pose models, .nmn and ONNX networks");
  deformer->require_subcommand(1);
  deformer->footer(
      "Workflow: sample (rig -> dataset) -> train (dataset -> pose model) -> eval / bake / "
      "export-nmn; import brings engine networks in; info and run work on any deformer file.\n"
      "Guide: docs/deformer/workflow.md");
  add_deformer_train_commands(*deformer, exit_code);
  add_deformer_bridge_commands(*deformer, exit_code);
  add_deformer_run_commands(*deformer, exit_code);
}

}  // namespace charkit::app
