// charkit-bem: the `charkit bem` commands (and --version) alone, linked only
// against what they use (zstd, libzip, the image codecs), so a `bem` command
// starts in about half the time of charkit-all, which loads Assimp,
// protobuf, libcurl, libpq and OpenSSL at start-up (docs/cli.md §Programs).
// The same sources as charkit-all's `bem` group: the two give the same output.
#include "commands.h"

int main(int argc, char** argv) {
  return charkit::app::run_program(argc, argv, [](CLI::App& app, int& exit_code) {
    charkit::app::add_bem_commands(app, exit_code);
  });
}
