// charkit-all: every command group of the charkit command line. Users run
// `charkit` (launcher.cpp), which hands it every command but the `bem` ones
// (docs/cli.md §Programs).
#include "commands.h"

namespace {

void add_all_groups(CLI::App& app, int& exit_code) {
  using namespace charkit::app;
  add_bem_commands(app, exit_code);
  add_motion_commands(app, exit_code);
  add_model_commands(app, exit_code);
  add_deformer_commands(app, exit_code);
  add_deform_commands(app, exit_code);
  add_render_commands(app, exit_code);
  add_gpu_commands(app, exit_code);
  add_serve_commands(app, exit_code);  // none without the server (disabled/serve.cpp)
  add_live_commands(app, exit_code);   // none without the server (disabled/live.cpp)
  add_token_commands(app, exit_code);
  add_errors_command(app, exit_code);
  add_help_commands(app, exit_code);
}

}  // namespace

int main(int argc, char** argv) {
  return charkit::app::run_program(argc, argv, add_all_groups);
}
