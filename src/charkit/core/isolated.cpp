#include "charkit/core/isolated.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <optional>
#include <string>

#include "charkit/core/bytes.h"
#include "charkit/core/error_codes.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define CHARKIT_ISOLATED_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer) || \
    __has_feature(thread_sanitizer)
#define CHARKIT_ISOLATED_SANITIZED 1
#endif
#endif

// Sanitizer runtimes (and libFuzzer through them) call a death callback on
// a report; in the child that would be the caller's (libFuzzer writing a
// crash artifact for a crash we expect and report as an error).
extern "C" void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

namespace charkit::core {

namespace {

// The answer on the pipe: one status byte (0 = bytes, 1 = error), a u64
// length, then the payload (the bytes; or code, NUL, message).
constexpr std::uint8_t kAnswerBytes = 0;
constexpr std::uint8_t kAnswerError = 1;

bool write_all(int fd, const std::uint8_t* p, std::size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

[[noreturn]] void child_main(int fd, const IsolatedWork& work,
                             [[maybe_unused]] const IsolationLimits& limits) {
  // No core files for a crash we expect and report, and the default action
  // for fatal signals: the caller's handlers (a sanitizer's, libFuzzer's)
  // would treat the child's crash as their own.
  rlimit no_core{0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP}) ::signal(sig, SIG_DFL);
  if (__sanitizer_set_death_callback) __sanitizer_set_death_callback(nullptr);
#ifndef CHARKIT_ISOLATED_SANITIZED
  if (limits.address_space_bytes != 0) {
    rlimit as{limits.address_space_bytes, limits.address_space_bytes};
    ::setrlimit(RLIMIT_AS, &as);
  }
#endif
  std::uint8_t status = kAnswerError;
  std::vector<std::uint8_t> payload;
  try {
    auto r = work();
    if (r) {
      status = kAnswerBytes;
      payload = std::move(r.value());
    } else {
      const std::string& code = r.error().code;
      const std::string& msg = r.error().message;
      payload.assign(code.begin(), code.end());
      payload.push_back(0);
      payload.insert(payload.end(), msg.begin(), msg.end());
    }
  } catch (const std::bad_alloc&) {
    const std::string text = std::string(codes::ISOLATED_MEMORY) + '\0' + "out of memory";
    payload.assign(text.begin(), text.end());
  } catch (const std::exception& e) {
    const std::string text = std::string(codes::ISOLATED_EXCEPTION) + '\0' + e.what();
    payload.assign(text.begin(), text.end());
  } catch (...) {
    const std::string text = std::string(codes::ISOLATED_EXCEPTION) + '\0' + "an unknown exception";
    payload.assign(text.begin(), text.end());
  }
  std::uint8_t head[9];
  head[0] = status;
  const auto n = static_cast<std::uint64_t>(payload.size());
  for (int i = 0; i < 8; ++i) head[1 + i] = static_cast<std::uint8_t>(n >> (8 * i));
  const bool ok = write_all(fd, head, sizeof head) && write_all(fd, payload.data(), payload.size());
  ::close(fd);
  ::_exit(ok ? 0 : 3);
}

std::string how_it_ended(int wstatus) {
  if (WIFSIGNALED(wstatus)) {
    const int sig = WTERMSIG(wstatus);
    const char* name = ::sigabbrev_np(sig);
    return "was killed by signal " + std::to_string(sig) +
           (name ? std::string(" (SIG") + name + ")" : "");
  }
  if (WIFEXITED(wstatus)) return "exited with status " + std::to_string(WEXITSTATUS(wstatus));
  return "ended abnormally";
}

/// The child's CPU time (user + system, in clock ticks) and whether it is
/// asleep, from /proc/<pid>/stat; nullopt when it cannot be read.
struct ChildState {
  unsigned long long cpu_ticks = 0;
  bool sleeping = false;
};

std::optional<ChildState> child_state(pid_t pid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  char text[1024];
  const ssize_t n = ::read(fd, text, sizeof text - 1);
  ::close(fd);
  if (n <= 0) return std::nullopt;
  text[n] = 0;
  // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so
  // the fields start after the last ')'. utime and stime are fields 14, 15.
  const char* p = std::strrchr(text, ')');
  if (!p) return std::nullopt;
  ChildState st;
  int field = 2;
  unsigned long long utime = 0, stime = 0;
  for (const char* q = p + 1; *q && field < 15;) {
    while (*q == ' ') ++q;
    if (!*q) break;
    ++field;
    if (field == 3) st.sleeping = *q == 'S';
    if (field == 14) utime = std::strtoull(q, nullptr, 10);
    if (field == 15) stime = std::strtoull(q, nullptr, 10);
    while (*q && *q != ' ') ++q;
  }
  if (field != 15) return std::nullopt;
  st.cpu_ticks = utime + stime;
  return st;
}

enum class Ending { answered, timed_out, too_large, read_failed, cancelled, stalled };

}  // namespace

Result<std::vector<std::uint8_t>> run_isolated(const IsolatedWork& work,
                                               const IsolationLimits& limits,
                                               std::string_view what) {
  // All attempts share one deadline.
  const auto deadline = std::chrono::steady_clock::now() + limits.timeout;
  std::vector<std::uint8_t> got;
  Ending ending = Ending::answered;
  int wstatus = 0;
  int attempts = 0;
  do {
    ++attempts;
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0)
      return make_error(codes::ISOLATED_SYSTEM,
                        std::string(what) + ": pipe: " + std::strerror(errno));
    const pid_t pid = ::fork();
    if (pid < 0) {
      const int e = errno;
      ::close(fds[0]);
      ::close(fds[1]);
      return make_error(codes::ISOLATED_SYSTEM, std::string(what) + ": fork: " + std::strerror(e));
    }
    if (pid == 0) {
      ::close(fds[0]);
      child_main(fds[1], work, limits);
    }
    ::close(fds[1]);
    const int fd = fds[0];

    // Read the answer until EOF, within the deadline and the size limit,
    // watching for a stall.
    got.clear();
    ending = Ending::answered;
    auto last_progress = std::chrono::steady_clock::now();
    std::optional<unsigned long long> last_cpu;
    std::uint8_t buf[65536];
    for (;;) {
      const auto now = std::chrono::steady_clock::now();
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
      if (left.count() <= 0) {
        ending = Ending::timed_out;
        break;
      }
      if (limits.cancel && limits.cancel->load()) {
        ending = Ending::cancelled;
        break;
      }
      if (limits.stall_timeout.count() > 0) {
        const auto st = child_state(pid);
        if (!st || !st->sleeping || st->cpu_ticks != last_cpu) last_progress = now;
        if (st) last_cpu = st->cpu_ticks;
        if (now - last_progress >= limits.stall_timeout) {
          ending = Ending::stalled;
          break;
        }
      }
      pollfd p{fd, POLLIN, 0};
      const int pr = ::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 100)));
      if (pr < 0) {
        if (errno == EINTR) continue;
        ending = Ending::read_failed;
        break;
      }
      if (pr == 0) continue;  // the checks above end it
      const ssize_t r = ::read(fd, buf, sizeof buf);
      if (r < 0) {
        if (errno == EINTR || errno == EAGAIN) continue;
        ending = Ending::read_failed;
        break;
      }
      if (r == 0) break;  // EOF: the child closed its end or ended
      if (got.size() + static_cast<std::size_t>(r) > limits.max_result_bytes + 9) {
        ending = Ending::too_large;
        break;
      }
      got.insert(got.end(), buf, buf + r);
      last_progress = std::chrono::steady_clock::now();
    }
    ::close(fd);
    if (ending != Ending::answered) ::kill(pid, SIGKILL);
    wstatus = 0;
    while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
    }
  } while (ending == Ending::stalled && attempts <= limits.stall_retries);

  const bool timed_out = ending == Ending::timed_out, too_large = ending == Ending::too_large,
             read_failed = ending == Ending::read_failed, cancelled = ending == Ending::cancelled;
  if (ending == Ending::stalled)
    return make_error(codes::ISOLATED_STALLED,
                      std::string(what) + " stalled (asleep, using no CPU time, for " +
                          std::to_string(limits.stall_timeout.count()) + " ms) in each of " +
                          std::to_string(attempts) + " attempts and was stopped");
  const std::string name(what);
  if (cancelled) return make_error(codes::ISOLATED_CANCELLED, name + " was cancelled");
  if (timed_out)
    return make_error(codes::ISOLATED_TIMEOUT, name + " ran longer than " +
                                                   std::to_string(limits.timeout.count()) +
                                                   " ms and was stopped");
  if (too_large)
    return make_error(
        codes::ISOLATED_LIMIT,
        name + " produced more than " + std::to_string(limits.max_result_bytes) + " bytes");
  // A complete answer counts even if the child's exit went wrong afterwards.
  bool complete = got.size() >= 9;
  std::uint64_t n = 0;
  if (complete) {
    n = load_le<std::uint64_t>(got.data() + 1);
    complete = n == got.size() - 9 && (got[0] == kAnswerBytes || got[0] == kAnswerError);
  }
  if (!complete || read_failed)
    return make_error(codes::ISOLATED_CRASH, name + " crashed: its process " +
                                                 how_it_ended(wstatus) + " before it answered");
  if (got[0] == kAnswerBytes) {
    got.erase(got.begin(), got.begin() + 9);
    return got;
  }
  const std::string_view text(reinterpret_cast<const char*>(got.data()) + 9,
                              static_cast<std::size_t>(n));
  const auto nul = text.find('\0');
  if (nul == std::string_view::npos)
    return make_error(codes::ISOLATED_CRASH, name + " sent a malformed answer");
  // The child's error, passed on as it was raised there.
  return Error{std::string(text.substr(0, nul)), std::string(text.substr(nul + 1)), {}};
}

}  // namespace charkit::core
