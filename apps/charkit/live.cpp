// `charkit live publish MOTION --channel NAME`: a motion's keypoint frames
// streamed to a live channel of a running `charkit serve`, at the motion's
// rate (server/live_publish.h; contracts/websocket-keypoints.md §6). MOTION
// is a motion file of any kind `charkit motion convert` reads, converted
// here, or the id of a motion stored on the server.
#include <atomic>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "charkit/core/json.h"
#include "charkit/motion/convert_file.h"
#include "charkit/server/error_codes.h"
#include "charkit/server/live_publish.h"
#include "cli_output.h"
#include "commands.h"
#include "error_codes.h"
#include "printable.h"

namespace charkit::app {
namespace {

using core::Json;

struct LiveArgs {
  std::string motion;
  std::string channel;
  std::string server = "http://127.0.0.1:8080";
  std::string token;
  bool loop = false;
  double fps = 0;
  bool json = false;
};

std::atomic<bool> g_stop{false};

/// The first Ctrl-C closes the channel normally; a second one, should the
/// server not let the close through, ends the program at once.
extern "C" void on_stop_signal(int sig) {
  g_stop.store(true);
  std::signal(sig, SIG_DFL);
}

/// A stored motion's id: MOTION is all digits and no file of that name exists.
std::optional<std::int64_t> stored_id(const std::string& motion) {
  if (motion.empty() || motion.size() > 15) return std::nullopt;
  for (char c : motion)
    if (c < '0' || c > '9') return std::nullopt;
  std::error_code ec;
  if (std::filesystem::exists(motion, ec)) return std::nullopt;
  return std::stoll(motion);
}

int run_publish(const LiveArgs& a) {
  server::LivePublishOptions o;
  o.server = a.server;
  o.channel = a.channel;
  const char* env_token = std::getenv("CHARKIT_TOKEN");  // not-an-error-code
  o.token = !a.token.empty() ? a.token : env_token != nullptr ? env_token : "";
  o.loop = a.loop;
  o.stop = &g_stop;
  if (auto st = server::check_live_target(o); !st)
    return report_error(a.motion, st.error(), kExitUsage);
  std::string keypoints;
  double fps = 0;
  std::string what;
  if (auto id = stored_id(a.motion)) {
    auto stored = server::fetch_stored_motion(o, *id);
    if (!stored) return report_error(a.motion, stored.error(), kExitUsage);
    keypoints = std::move(stored->keypoints);
    fps = stored->fps;
    what = "motion " + a.motion + (stored->name.empty() ? "" : " (" + stored->name + ")");
  } else {
    motion::MotionFileOptions mo;
    motion::OutputSink sink = [&keypoints](std::string_view chunk) {
      keypoints.append(chunk);
      return true;
    };
    auto converted = motion::convert_motion_file(a.motion, mo, sink);
    if (!converted)
      return report_error(a.motion, converted.error(),
                          core::is_io_error(converted.error()) ? kExitUsage : kExitInvalid);
    for (const auto& w : converted->warnings) report_warning(a.motion, w.code, w.message);
    fps = converted->fps;
    what = a.motion;
  }
  if (a.fps > 0) fps = a.fps;
  report_info(a.motion, "publishing " + printable(what) + " at " +
                            std::to_string(fps).substr(0, 6) + " fps to channel '" + a.channel +
                            "' of " + printable(a.server) +
                            (a.loop ? " (looping; Ctrl-C stops)" : " (Ctrl-C stops)"));
  g_stop.store(false);
  auto previous_int = std::signal(SIGINT, on_stop_signal);
  auto previous_term = std::signal(SIGTERM, on_stop_signal);
  auto stats = server::publish_live(keypoints, fps, o);
  std::signal(SIGINT, previous_int);
  std::signal(SIGTERM, previous_term);
  if (!stats) {
    // The server, the channel or the connection: a usage error; else the motion's frames.
    const auto& code = stats.error().code;
    const bool usage = code == server::codes::LIVE_URL || code == server::codes::LIVE_CONNECT ||
                       code == server::codes::LIVE_REFUSED || code == server::codes::LIVE_CLOSED ||
                       code == server::codes::BAD_CHANNEL;
    return report_error(a.motion, stats.error(), usage ? kExitUsage : kExitInvalid);
  }
  if (a.json) {
    print_json(Json{{"channel", a.channel},
                    {"server", a.server},
                    {"frames", stats->frames},
                    {"framesSent", stats->frames_sent},
                    {"fps", stats->fps},
                    {"seconds", stats->seconds},
                    {"stopped", stats->stopped}});
  } else {
    std::cout << "sent " << stats->frames_sent << " frames of " << stats->frames << " to channel '"
              << a.channel << "' in " << std::to_string(stats->seconds).substr(0, 5) << " s"
              << (stats->stopped ? " (stopped)" : "") << "\n";
  }
  return kExitOk;
}

}  // namespace

void add_live_commands(CLI::App& app, int& exit_code) {
  CLI::App* live = app.add_subcommand("live", "Live channels of a running `charkit serve`");
  auto a = std::make_shared<LiveArgs>();
  CLI::App* pub = live->add_subcommand(
      "publish",
      "Stream a motion's keypoint frames to a live channel at the motion's rate; viewers watch "
      "them on the console's Live page");
  pub->add_option("motion", a->motion,
                  "A motion file (BVH, keypoint JSON, glTF/GLB/FBX animation), converted here, or "
                  "the id of a motion stored on the server")
      ->type_name("MOTION")
      ->required();
  pub->add_option("--channel", a->channel, "The channel: 1-64 characters of A-Z a-z 0-9 _ -")
      ->required();
  pub->add_option("--server", a->server, "The server, http://HOST:PORT")->capture_default_str();
  pub->add_option("--token", a->token,
                  "An API token with the write scope (default: $CHARKIT_TOKEN; none on a server "
                  "without tokens)");
  pub->add_flag("--loop", a->loop,
                "Start again from the first frame after the last, until stopped");
  pub->add_option("--fps", a->fps, "Send at this rate instead of the motion's own")
      ->check(CLI::PositiveNumber);
  pub->add_flag("--json", a->json, "Print the result as JSON");
  pub->footer(
      "Examples:\n"
      "  charkit live publish walk.bvh --channel stage1\n"
      "  charkit live publish 7 --channel stage1 --server http://10.0.0.5:8080 --token $TOKEN "
      "--loop\n"
      "Viewers: the console's Live page (/live), or GET /api/live/CHANNEL?role=view\n"
      "(contracts/websocket-keypoints.md). Ctrl-C closes the channel normally.");
  pub->callback([a, &exit_code] { exit_code = run_publish(*a); });
  live->require_subcommand(1);
}

}  // namespace charkit::app
