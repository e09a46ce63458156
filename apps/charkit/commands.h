// The command groups of the `charkit` program. Each group registers its
// sub-commands on the top-level CLI11 app; the command that runs stores its
// exit status (0 success, 1 invalid input, 2 usage or I/O error).
#pragma once

#include <CLI/CLI.hpp>

namespace charkit::app {

inline constexpr int kExitOk = 0;
inline constexpr int kExitInvalid = 1;
inline constexpr int kExitUsage = 2;

/// `charkit bem …`: validate and inspect BEM packages.
void add_bem_commands(CLI::App& app, int& exit_code);

}  // namespace charkit::app
