// The one CLI convention (docs/cli.md): results on stdout, messages on
// stderr as `FILE: LOCATION: severity CODE: message`, one JSON document with
// --json (errors included), bare `charkit` and `charkit help`, --quiet and
// --verbose, progress lines, the bash completion script, --listen forms.
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "charkit/core/json.h"
#include "cli_support.h"
#include "package_builder.h"

namespace charkit::clitest {
namespace {

using nlohmann::json;

// Run a shell command line; stdout and the exit status.
RunResult run_shell(const std::string& cmd) {
  RunResult r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

struct SplitResult {
  int exit_code = -1;
  std::string out;  ///< stdout
  std::string err;  ///< stderr
};

// Run `charkit ARGS` keeping stdout and stderr apart (stderr through a file).
SplitResult run_charkit_split(const std::string& args) {
  static int counter = 0;
  const auto err_path =
      std::filesystem::temp_directory_path() /
      ("charkit_cli_err_" + std::to_string(getpid()) + "_" + std::to_string(counter++) + ".txt");
  auto r =
      run_shell(std::string("'") + CHARKIT_BIN + "' " + args + " 2>'" + err_path.string() + "'");
  SplitResult s;
  s.exit_code = r.exit_code;
  s.out = std::move(r.out);
  std::ifstream in(err_path, std::ios::binary);
  s.err.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  in.close();
  std::error_code ec;
  std::filesystem::remove(err_path, ec);
  return s;
}

json parse_doc(const std::string& out) {
  try {
    return json::parse(out);  // throws on a second document or trailing text
  } catch (const std::exception& e) {
    ADD_FAILURE() << "stdout is not one JSON document: " << e.what() << "\n" << out;
    return json::object();
  }
}

class CliConventions : public ScratchDir {};

TEST_F(CliConventions, ErrorsGoToStderrInTheOneFormat) {
  const auto missing = dir_ / "missing.glb";
  auto r = run_charkit_split("model inspect " + quote(missing));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  // FILE: severity CODE: message (no location for a file that cannot be opened).
  // (No std::regex here: GCC 12 warns maybe-uninitialized inside <regex>.)
  const std::string head = missing.string() + ": error IO_";
  EXPECT_EQ(r.err.rfind(head, 0), 0u) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line: " << r.err;
  EXPECT_NE(r.err.find(": ", head.size()), std::string::npos) << r.err;

  // With a location: FILE: LOCATION: severity CODE: message.
  auto broken = write("broken.glb", {'g', 'l', 'T', 'F', 2, 0, 0, 0, 100, 0, 0, 0});
  r = run_charkit_split("model inspect " + quote(broken));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.rfind(broken.string() + ": byte 8: error GLB_TRUNCATED: ", 0), 0u) << r.err;

  // A usage error has no file: `error USAGE: message`.
  r = run_charkit_split("bem validate --bogus x.bem");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.rfind("error USAGE: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("charkit bem validate --help"), std::string::npos) << r.err;
}

TEST_F(CliConventions, ResultsOnStdoutWarningsOnStderr) {
  auto pkg = write("p.bem", testkit::make_valid_package(5).binary(true));
  auto r = run_charkit_split("bem select " + quote(pkg) + " --options " + quote("nosuch:x"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("options:"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("warning"), std::string::npos) << r.out;
  EXPECT_EQ(
      r.err.rfind(pkg.string() + ": options, column 0: warning BEM_SETTINGS_UNKNOWN_GROUP: ", 0),
      0u)
      << r.err;
  // --quiet keeps only errors on stderr; the result is unchanged.
  auto q = run_charkit_split("bem select " + quote(pkg) + " --options " + quote("nosuch:x") +
                             " --quiet");
  EXPECT_EQ(q.exit_code, 0);
  EXPECT_EQ(q.err, "");
  EXPECT_EQ(q.out, r.out);
  // ... and errors still show.
  q = run_charkit_split("bem select " + quote(dir_ / "missing.bem") + " -q");
  EXPECT_EQ(q.exit_code, 2);
  EXPECT_NE(q.err.find(": error IO_OPEN: "), std::string::npos) << q.err;
}

TEST_F(CliConventions, JsonErrorsAreOneDocumentOnStdout) {
  const auto missing = dir_ / "missing.bem";
  // A command whose failure has no document of its own.
  auto r = run_charkit_split("bem inspect " + quote(missing) + " --json");
  EXPECT_EQ(r.exit_code, 2);
  json j = parse_doc(r.out);
  EXPECT_EQ(j["ok"], false);
  ASSERT_EQ(j["errors"].size(), 1u) << r.out;
  EXPECT_EQ(j["errors"][0]["file"], missing.string());
  EXPECT_EQ(j["errors"][0]["severity"], "error");
  EXPECT_EQ(j["errors"][0]["code"], "IO_OPEN");
  EXPECT_TRUE(j["errors"][0]["location"].is_null());
  EXPECT_TRUE(j["errors"][0]["message"].is_string());
  // The same line is on stderr.
  EXPECT_NE(r.err.find(missing.string() + ": error IO_OPEN: "), std::string::npos) << r.err;

  // A command with an error document of its own keeps it and gains ok/errors.
  auto broken = write("broken.glb", {'g', 'l', 'T', 'F', 2, 0, 0, 0, 100, 0, 0, 0});
  r = run_charkit_split("model inspect " + quote(broken) + " --json");
  EXPECT_EQ(r.exit_code, 1);
  j = parse_doc(r.out);
  EXPECT_EQ(j["ok"], false);
  EXPECT_EQ(j["error"]["code"], "GLB_TRUNCATED");
  ASSERT_EQ(j["errors"].size(), 1u);
  EXPECT_EQ(j["errors"][0]["location"], "byte 8");

  // Usage errors too, exit status unchanged.
  r = run_charkit_split("bem validate --json --max-issues 0 x.bem");
  EXPECT_EQ(r.exit_code, 2);
  j = parse_doc(r.out);
  EXPECT_EQ(j["ok"], false);
  ASSERT_EQ(j["errors"].size(), 1u);
  EXPECT_EQ(j["errors"][0]["code"], "USAGE");

  // --json on a command that had none (token revoke) still prints one document.
  r = run_charkit_split("token revoke 1 --data " + quote(dir_ / "data") + " --json");
  EXPECT_NE(r.exit_code, 0);
  j = parse_doc(r.out);
  EXPECT_EQ(j["ok"], false);
  EXPECT_FALSE(j["errors"].empty()) << r.out;
}

TEST_F(CliConventions, JsonSuccessHasOk) {
  auto pkg = write("good.bem", testkit::make_valid_package(5).binary(true));
  auto r = run_charkit_split("bem validate --json " + quote(pkg));
  EXPECT_EQ(r.exit_code, 0);
  json j = parse_doc(r.out);
  EXPECT_EQ(j["ok"], true);
  EXPECT_FALSE(j.contains("errors"));
  EXPECT_EQ(j["summary"]["valid"], 1);
  // An invalid package: a result, not an error of the command; ok is the exit status.
  auto bad = write("bad.bem", {'n', 'o', 'p', 'e'});
  r = run_charkit_split("bem validate --json " + quote(bad));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(parse_doc(r.out)["ok"], false);
}

TEST_F(CliConventions, OutputFlagsBeforeTheCommand) {
  auto pkg = write("good.bem", testkit::make_valid_package(5).binary(true));
  auto after = run_charkit_split("bem validate --json " + quote(pkg));
  auto before = run_charkit_split("--json bem validate " + quote(pkg));
  EXPECT_EQ(before.exit_code, 0) << before.err;
  EXPECT_EQ(before.err, "");
  EXPECT_EQ(parse_doc(before.out)["summary"], parse_doc(after.out)["summary"]);
  // Short forms and a command (motion inspect) whose --json is the shared one.
  const std::string bvh = std::string(CHARKIT_TEST_DATA) + "/bvh/test_freebvh.bvh";
  auto motion = run_charkit_split("-q --json motion inspect " + quote(bvh));
  EXPECT_EQ(motion.exit_code, 0) << motion.err;
  EXPECT_EQ(parse_doc(motion.out)["ok"], true);
  // Errors too: one document, and the hint names the command, not the flag.
  auto missing = run_charkit_split("--json bem validate " + quote(dir_ / "none.bem"));
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_EQ(parse_doc(missing.out)["ok"], false);
  EXPECT_EQ(missing.out.find("not expected"), std::string::npos) << missing.out;
}

TEST_F(CliConventions, BareCharkitAndHelpCommand) {
  auto bare = run_charkit_split("");
  EXPECT_EQ(bare.exit_code, 0);
  EXPECT_NE(bare.out.find("Usage"), std::string::npos) << bare.out;
  EXPECT_NE(bare.out.find("bem"), std::string::npos);
  EXPECT_NE(bare.out.find("completion"), std::string::npos);
  EXPECT_EQ(bare.out, run_charkit("--help").out);

  auto group = run_charkit_split("bem");
  EXPECT_EQ(group.exit_code, 0);
  EXPECT_EQ(group.out, run_charkit("bem --help").out);
  EXPECT_NE(group.out.find("validate"), std::string::npos);

  auto help = run_charkit_split("help bem validate");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_EQ(help.out, run_charkit("bem validate --help").out);
  EXPECT_NE(help.out.find("--max-issues"), std::string::npos);
  EXPECT_EQ(run_charkit("help model").out, run_charkit("model --help").out);
  EXPECT_EQ(run_charkit("help").out, run_charkit("--help").out);

  auto unknown = run_charkit_split("help bem frobnicate");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_EQ(unknown.out, "");
  EXPECT_EQ(unknown.err.rfind("error USAGE: 'charkit bem' has no command 'frobnicate'", 0), 0u)
      << unknown.err;
  EXPECT_NE(unknown.err.find("validate"), std::string::npos) << unknown.err;
}

// README.md's command list is `charkit help --commands`, so it names every
// command there is and no other.
TEST_F(CliConventions, ReadmeListsEveryCommand) {
  auto r = run_charkit_split("help --commands");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  if (r.out.find("charkit serve") == std::string::npos)
    GTEST_SKIP() << "built without the server: README.md lists its commands";
  EXPECT_NE(r.out.find("charkit bem validate FILE..."), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("charkit render [MODEL]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("charkit completion SHELL "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("rule of BEM 1.0"), std::string::npos) << r.out;
  const std::string readme =
      clitest::read_text(std::filesystem::path(CHARKIT_TEST_DATA) / ".." / ".." / "README.md");
  const std::string marker = "<!-- charkit help --commands -->\n```text\n";
  const auto begin = readme.find(marker);
  ASSERT_NE(begin, std::string::npos) << "README.md has no generated command list";
  const auto start = begin + marker.size();
  const auto end = readme.find("```", start);
  ASSERT_NE(end, std::string::npos);
  EXPECT_EQ(readme.substr(start, end - start), r.out)
      << "README.md's command list is stale: replace it with `charkit help --commands`";
  // --json gives the same list as objects.
  auto j = parse_doc(run_charkit_split("help --commands --json").out);
  ASSERT_TRUE(j["commands"].is_array());
  EXPECT_EQ(j["commands"].size(),
            static_cast<std::size_t>(std::count(r.out.begin(), r.out.end(), '\n')));
}

TEST_F(CliConventions, EveryCommandTakesJsonQuietVerbose) {
  for (const char* cmd : {"bem validate",    "bem inspect",    "bem select",
                          "bem export",      "bem convert",    "bem unpack",
                          "motion convert",  "motion inspect", "model inspect",
                          "deformer info",   "deformer run",   "deformer sample",
                          "deformer train",  "deformer eval",  "deformer export-nmn",
                          "deformer import", "deformer bake",  "serve",
                          "worker",          "token create",   "token list",
                          "token revoke",    "help",           "completion"}) {
    auto h = run_charkit(std::string(cmd) + " --help");
    EXPECT_EQ(h.exit_code, 0) << cmd;
    for (const char* opt : {"--json", "--quiet", "--verbose"})
      EXPECT_NE(h.out.find(opt), std::string::npos) << cmd << " lacks " << opt;
  }
}

std::string complete(const std::filesystem::path& script, const std::string& words, int cword) {
  const std::string cmd = "bash --norc --noprofile -c 'source " + script.string() +
                          "; COMP_WORDS=(" + words + "); COMP_CWORD=" + std::to_string(cword) +
                          "; _charkit; echo \"${COMPREPLY[*]}\"'";
  auto r = run_shell(cmd);
  EXPECT_EQ(r.exit_code, 0) << cmd;
  while (!r.out.empty() && r.out.back() == '\n') r.out.pop_back();
  return r.out;
}

TEST_F(CliConventions, BashCompletion) {
  auto r = run_charkit_split("completion bash");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("complete -o default -F _charkit charkit"), std::string::npos);
  const auto script = dir_ / "charkit.bash";
  std::ofstream(script) << r.out;
  EXPECT_EQ(complete(script, "charkit b", 1), "bem");
  EXPECT_EQ(complete(script, "charkit mo", 1), "motion model");
  EXPECT_EQ(complete(script, "charkit bem v", 2), "validate");
  EXPECT_EQ(complete(script, "charkit motion \"\"", 2), "convert inspect");
  EXPECT_EQ(complete(script, "charkit bem validate --max", 3), "--max-issues --max-memory");
  // Options before the word do not change the command path.
  EXPECT_EQ(complete(script, "charkit deformer --help tr", 3), "train");
  EXPECT_EQ(complete(script, "charkit model inspect x.glb --js", 4), "--json");
  // Only bash for now.
  EXPECT_EQ(run_charkit("completion fish").exit_code, 2);
}

// A motion conversion reports frames as they are written (the CLI conventions:
// every step that can take more than a second); --verbose shows it from the
// start.
TEST_F(CliConventions, MotionConvertReportsFrames) {
  const std::string bvh = std::string(CHARKIT_TEST_DATA) + "/bvh/test_freebvh.bvh";
  auto r = run_charkit_split("motion convert " + quote(bvh) + " -v -o " + quote(dir_ / "o.ndjson"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string lead = "test_freebvh.bvh: info PROGRESS: converting frames: ";
  const auto at = r.err.rfind(lead);
  ASSERT_NE(at, std::string::npos) << r.err;
  const std::string line = r.err.substr(at + lead.size(), r.err.find('\n', at) - at - lead.size());
  const auto of = line.find(" of ");
  ASSERT_NE(of, std::string::npos) << line;
  EXPECT_EQ(line.substr(of), " of " + line.substr(0, of) + " (100 %)") << line;
  EXPECT_NE(line.substr(0, of), "0") << line;
  // Without --verbose a conversion under a second prints no progress.
  auto quiet =
      run_charkit_split("motion convert " + quote(bvh) + " -q -o " + quote(dir_ / "q.ndjson"));
  ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_EQ(quiet.err.find("PROGRESS"), std::string::npos) << quiet.err;
}

// The last "N of N (100 %)" progress line of LABEL for FILE_NAME on stderr,
// as "N"; "" when there is none.
std::string last_progress_count(const std::string& err, const std::string& file_name,
                                const std::string& label) {
  const std::string lead = file_name + ": info PROGRESS: " + label + ": ";
  const auto at = err.rfind(lead);
  if (at == std::string::npos) return "";
  const std::string line = err.substr(at + lead.size(), err.find('\n', at) - at - lead.size());
  const auto of = line.find(" of ");
  if (of == std::string::npos || line.substr(of) != " of " + line.substr(0, of) + " (100 %)")
    return "";
  return line.substr(0, of);
}

// A single package's validation and an export report their long passes.
TEST_F(CliConventions, BemValidateAndExportReportProgress) {
  const std::string bem = std::string(CHARKIT_TEST_DATA) + "/examples/example-1.5.bem";
  auto v = run_charkit_split("bem validate " + quote(bem) + " -v");
  ASSERT_EQ(v.exit_code, 0) << v.err;
  const std::string payloads = last_progress_count(v.err, "example-1.5.bem", "checking payloads");
  EXPECT_NE(payloads, "") << v.err;
  EXPECT_NE(payloads, "0") << v.err;
  // The count is the package's: validate --json says how many payloads it has.
  auto j = run_charkit_split("bem validate " + quote(bem) + " --json");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  EXPECT_NE(j.out.find("\"payloadCount\": " + payloads), std::string::npos) << j.out;

  auto e = run_charkit_split("bem export " + quote(bem) + " -v -o " + quote(dir_ / "e.glb"));
  ASSERT_EQ(e.exit_code, 0) << e.err;
  EXPECT_NE(last_progress_count(e.err, "example-1.5.bem", "checking payloads"), "") << e.err;
  const std::string meshes = last_progress_count(e.err, "example-1.5.bem", "exporting meshes");
  EXPECT_NE(meshes, "") << e.err;
  EXPECT_NE(meshes, "0") << e.err;
  // Without --verbose, steps under a second print no progress.
  auto quiet = run_charkit_split("bem validate " + quote(bem));
  EXPECT_EQ(quiet.err.find("PROGRESS"), std::string::npos) << quiet.err;
}

TEST_F(CliConventions, ProgressLinesWhenNotATerminal) {
  const std::string rig = std::string(CHARKIT_TEST_DATA) + "/models/RiggedSimple.glb";
  // --verbose shows progress from the start (otherwise only after a second).
  const auto t0 = std::chrono::steady_clock::now();
  auto r = run_charkit_split("deformer sample " + quote(rig) +
                             " --bones joint_3 --poses 30 --seed 1 -v -o " + quote(dir_ / "d.npz"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The last progress line is "N of N (100 %)".
  const std::string lead = "RiggedSimple.glb: info PROGRESS: building targets (delta-mush): ";
  const auto at = r.err.rfind(lead);
  ASSERT_NE(at, std::string::npos) << r.err;
  const std::string line = r.err.substr(at + lead.size(), r.err.find('\n', at) - at - lead.size());
  const auto of = line.find(" of ");
  ASSERT_NE(of, std::string::npos) << line;
  const std::string n = line.substr(0, of);
  EXPECT_FALSE(n.empty()) << line;
  EXPECT_EQ(n.find_first_not_of("0123456789"), std::string::npos) << line;
  EXPECT_EQ(line.substr(of), " of " + n + " (100 %)") << line;
  EXPECT_EQ(r.err.find("\r"), std::string::npos) << "no bar when stderr is a file";
  const auto seconds =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - t0)
          .count();
  // At most one line per 10 % or per second (11 for the deciles 0..100 %).
  std::size_t lines = 0;
  for (std::size_t p = r.err.find("PROGRESS"); p != std::string::npos;
       p = r.err.find("PROGRESS", p + 1))
    ++lines;
  EXPECT_GE(lines, 2u);
  EXPECT_LE(lines, 11u + static_cast<std::size_t>(seconds) + 1u) << r.err;
  auto q =
      run_charkit_split("deformer sample " + quote(rig) +
                        " --bones joint_3 --poses 30 --seed 1 -v -q -o " + quote(dir_ / "e.npz"));
  EXPECT_EQ(q.exit_code, 0);
  EXPECT_EQ(q.err.find("PROGRESS"), std::string::npos) << q.err;
}

bool have_ipv6_loopback() {
  int fd = socket(AF_INET6, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in6 a{};
  a.sin6_family = AF_INET6;
  a.sin6_addr = in6addr_loopback;
  const bool ok = bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  close(fd);
  return ok;
}

// Starts `charkit serve --listen LISTEN`, waits (up to 60 s) for its
// `listening on` line or its exit, stops it with SIGTERM and returns its stderr.
std::string serve_briefly(const std::filesystem::path& dir, const std::string& listen) {
  const auto err = dir / "serve.err";
  run_shell("('" + std::string(CHARKIT_BIN) + "' serve --listen '" + listen + "' --data '" +
            (dir / "data").string() + "' 2>'" + err.string() +
            "' & pid=$!; for i in $(seq 600); do grep -q 'listening on' '" + err.string() +
            "' && break; kill -0 $pid 2>/dev/null || break; sleep 0.1; done; "
            "kill $pid 2>/dev/null; wait $pid)");
  std::ifstream in(err);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST_F(CliConventions, ListenValues) {
  auto serve_briefly = [this](const std::string& listen) {
    return clitest::serve_briefly(dir_, listen);
  };
  for (const char* bad :
       {"nonsense", "127.0.0.1:99999", "::1:8080", "[::1:8080", "[nope]:80", "localhost:http"}) {
    auto r = run_charkit_split("serve --listen " + quote(bad) + " --data " + quote(dir_ / "d"));
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_EQ(r.err.rfind("error SERVER_ADDRESS: --listen '" + std::string(bad) + "': ", 0), 0u)
        << r.err;
  }
  // A name: localhost is loopback; the server starts and SIGTERM stops it.
  EXPECT_NE(serve_briefly("localhost:0").find("info: listening on http://127.0.0.1:"),
            std::string::npos);
  if (!have_ipv6_loopback()) GTEST_SKIP() << "no IPv6 loopback on this machine";
  std::string err = serve_briefly("[::1]:0");
  EXPECT_NE(err.find("info: listening on http://[::1]:"), std::string::npos) << err;
  err = serve_briefly("[::]:0");
  // The wildcard address needs --insecure-open while no token exists.
  EXPECT_NE(err.find("SERVER_"), std::string::npos) << err;
}

}  // namespace
}  // namespace charkit::clitest
