// charkit: one command-line program with a sub-command group per module.
// Exit status (ARCHITECTURE.md): 0 success, 1 invalid input, 2 usage error.
#include <exception>
#include <iostream>

#include "charkit/version.h"
#include "commands.h"

int main(int argc, char** argv) {
  CLI::App app{"charkit: game-character asset toolkit (BEM packages, motion, deformers, rendering)",
               "charkit"};
  app.set_version_flag("--version", "charkit " CHARKIT_VERSION_STRING);
  app.require_subcommand(1);
  app.footer(
      "Exit status: 0 success, 1 invalid input, 2 usage or I/O error.\n"
      "Run 'charkit COMMAND --help' for the options of a command.");

  int exit_code = charkit::app::kExitOk;
  charkit::app::add_bem_commands(app, exit_code);
  charkit::app::add_motion_commands(app, exit_code);
  charkit::app::add_model_commands(app, exit_code);
  charkit::app::add_deformer_commands(app, exit_code);
#if CHARKIT_WITH_SERVER
  charkit::app::add_serve_commands(app, exit_code);
  charkit::app::add_token_commands(app, exit_code);
#endif
  charkit::app::add_errors_command(app, exit_code);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version arrive here as "successful" parse errors.
    int rc = app.exit(e);
    return rc == 0 ? charkit::app::kExitOk : charkit::app::kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "charkit: internal error: " << e.what() << "\n";
    return charkit::app::kExitUsage;
  }
  return exit_code;
}
