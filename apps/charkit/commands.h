// The command groups of the `charkit` program. Each group registers its
// sub-commands on the top-level CLI11 app; the command that runs stores its
// exit status (0 success, 1 invalid input, 2 usage or I/O error).
#pragma once

#include <CLI/CLI.hpp>

namespace charkit::app {

inline constexpr int kExitOk = 0;
inline constexpr int kExitInvalid = 1;
inline constexpr int kExitUsage = 2;

/// The top-level app with the groups add_groups registers, parsed from
/// argv and run; returns the exit status (program.cpp). main() of
/// charkit-all and charkit-bem.
int run_program(int argc, char** argv, void (*add_groups)(CLI::App& app, int& exit_code));

/// `charkit bem …`: validate and inspect BEM packages.
void add_bem_commands(CLI::App& app, int& exit_code);

/// `charkit motion …` (motion.cpp): motion to MediaPipe-33 keypoints.
void add_motion_commands(CLI::App& app, int& exit_code);

/// `charkit model …` (model.cpp): model intake (format, VRM version, skin, counts).
void add_model_commands(CLI::App& app, int& exit_code);

/// `charkit deformer …` (deformer.cpp): pose-driven deformer models.
void add_deformer_commands(CLI::App& app, int& exit_code);

/// `charkit deform …` (deform.cpp): the deformation kernels on files (`deform morph`).
void add_deform_commands(CLI::App& app, int& exit_code);

/// `charkit render` (render.cpp): a model through the character passes.
void add_render_commands(CLI::App& app, int& exit_code);

/// `charkit gpu info` (gpu.cpp): the Vulkan devices of the GPU backend.
void add_gpu_commands(CLI::App& app, int& exit_code);

/// `charkit serve` and `charkit worker` (serve.cpp): the HTTP + WebSocket server, job workers.
void add_serve_commands(CLI::App& app, int& exit_code);

/// `charkit live publish` (live.cpp): a motion streamed to a live channel of a server.
void add_live_commands(CLI::App& app, int& exit_code);

/// `charkit token create|list|revoke` (token.cpp): the server's API tokens.
void add_token_commands(CLI::App& app, int& exit_code);

/// `charkit errors [CODE]` (errors.cpp): the declared error codes; --json, --markdown.
void add_errors_command(CLI::App& app, int& exit_code);
/// `charkit help [COMMAND [SUB]]` and `charkit completion bash` (help.cpp):
/// registered last, they read the whole command tree.
void add_help_commands(CLI::App& app, int& exit_code);

// The other `charkit bem` sub-commands, one file each, registered on the
// `bem` group by add_bem_commands.
/// `charkit bem select` (bem_select.cpp): the plan of one selection.
void add_bem_select_command(CLI::App& bem, int& exit_code);
/// `charkit bem convert` and `charkit bem unpack` (bem_convert.cpp).
void add_bem_convert_commands(CLI::App& bem, int& exit_code);
/// `charkit bem export` (bem_export.cpp): one selection as glTF 2.0.
void add_bem_export_command(CLI::App& bem, int& exit_code);
/// `charkit bem pack` (bem_pack.cpp): a glTF scene's meshes into a template's layout.
void add_bem_pack_command(CLI::App& bem, int& exit_code);
/// `charkit bem simulate` (bem_simulate.cpp): the §13 drivers over time, NDJSON.
void add_bem_simulate_command(CLI::App& bem, int& exit_code);
/// `charkit bem library` (bem_library.cpp): runtime.ini + packages/ of a player.
void add_bem_library_command(CLI::App& bem, int& exit_code);

// The `charkit deformer` sub-commands, registered by add_deformer_commands.
/// `charkit deformer info` and `run` (deformer_run.cpp): any model file's
/// inputs/outputs/layers; a batch of raw features through a model.
void add_deformer_run_commands(CLI::App& deformer, int& exit_code);
/// `charkit deformer sample|train|eval|…` (deformer_train.cpp): datasets and training.
void add_deformer_train_commands(CLI::App& deformer, int& exit_code);
/// `charkit deformer export-nmn|import|bake` (deformer_bridge.cpp): engine files and shape keys.
void add_deformer_bridge_commands(CLI::App& deformer, int& exit_code);

}  // namespace charkit::app
