// The command line shared by the charkit programs (docs/cli.md §Programs):
// the top-level app, its flags and footer, parsing and the exit status. Each
// program passes the command groups it holds.
// Exit status (ARCHITECTURE.md): 0 success, 1 invalid input, 2 usage error.
// Output convention (docs/cli.md, cli_output.h): results on stdout, messages
// on stderr as `FILE: LOCATION: severity CODE: message`, one JSON document
// with --json.
#include <cstring>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "charkit/core/error_codes.h"
#include "charkit/version.h"
#include "cli_output.h"
#include "commands.h"
#include "error_codes.h"

namespace charkit::app {
namespace {

// The deepest command the parser reached, for the "see --help" hint.
std::string command_path(const CLI::App& app) {
  std::string path;
  const CLI::App* a = &app;
  while (true) {
    auto subs = a->get_subcommands();
    if (subs.empty()) break;
    a = subs.front();
    path += " " + a->get_name();
  }
  return path;
}

// The output flags also work before the command (`charkit --json bem validate
// x.bem`): those given before the first command word move to the end of the
// arguments (before a `--`), where the command takes them. Short forms are
// spelt long, as a command may use -q or -v for something else.
std::vector<char*> output_flags_last(int argc, char** argv) {
  static char json[] = "--json", quiet[] = "--quiet", verbose[] = "--verbose";
  std::vector<char*> args{argv[0]}, moved;
  int i = 1;
  for (; i < argc && argv[i][0] == '-' && std::strcmp(argv[i], "--") != 0; ++i) {
    const char* a = argv[i];
    if (std::strcmp(a, "--json") == 0)
      moved.push_back(json);
    else if (std::strcmp(a, "-q") == 0 || std::strcmp(a, "--quiet") == 0)
      moved.push_back(quiet);
    else if (std::strcmp(a, "-v") == 0 || std::strcmp(a, "--verbose") == 0)
      moved.push_back(verbose);
    else
      args.push_back(argv[i]);
  }
  int end = i;
  while (end < argc && std::strcmp(argv[end], "--") != 0) ++end;
  args.insert(args.end(), argv + i, argv + end);
  args.insert(args.end(), moved.begin(), moved.end());
  args.insert(args.end(), argv + end, argv + argc);
  return args;
}

}  // namespace

int run_program(int argc, char** argv, void (*add_groups)(CLI::App& app, int& exit_code)) {
  CLI::App app{"charkit: game-character asset toolkit (BEM packages, motion, deformers, rendering)",
               "charkit"};
  app.set_version_flag("--version", "charkit " CHARKIT_VERSION_STRING);
  app.footer(
      "Every command also takes --json (one JSON document on stdout), -q/--quiet (only errors) "
      "and -v/--verbose (more detail).\n"
      "Exit status: 0 success, 1 invalid input, 2 usage or I/O error.\n"
      "Run 'charkit help COMMAND' or 'charkit COMMAND --help' for the options of a command; "
      "'charkit completion bash' prints a bash completion script.");

  int exit_code = kExitOk;
  add_groups(app, exit_code);
  install_output_options(app);

  std::vector<char*> args = output_flags_last(argc, argv);
  argc = static_cast<int>(args.size());
  argv = args.data();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version arrive here as "successful" parse errors.
    if (e.get_exit_code() == 0) {
      app.exit(e);
      return kExitOk;
    }
    // The flags were not recorded: look for them in the arguments.
    for (int i = 1; i < argc && std::strcmp(argv[i], "--") != 0; ++i) {
      if (std::strcmp(argv[i], "--json") == 0) output_mode().json = true;
      if (std::strcmp(argv[i], "-q") == 0 || std::strcmp(argv[i], "--quiet") == 0)
        output_mode().quiet = true;
    }
    report_error("", codes::USAGE,
                 std::string(e.what()) + " (see 'charkit" + command_path(app) + " --help')",
                 kExitUsage);
    return finish_output(kExitUsage);
  } catch (const std::exception& e) {
    report_error("", core::codes::INTERNAL, std::string("internal error: ") + e.what(), kExitUsage);
    return finish_output(kExitUsage);
  }
  return finish_output(exit_code);
}

}  // namespace charkit::app
