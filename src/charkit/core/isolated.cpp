#include "charkit/core/isolated.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>
#include <new>
#include <string>

#include "charkit/core/bytes.h"

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
    const std::string text = std::string("ISOLATED_MEMORY") + '\0' + "out of memory";
    payload.assign(text.begin(), text.end());
  } catch (const std::exception& e) {
    const std::string text = std::string("ISOLATED_EXCEPTION") + '\0' + e.what();
    payload.assign(text.begin(), text.end());
  } catch (...) {
    const std::string text = std::string("ISOLATED_EXCEPTION") + '\0' + "an unknown exception";
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

}  // namespace

Result<std::vector<std::uint8_t>> run_isolated(const IsolatedWork& work,
                                               const IsolationLimits& limits,
                                               std::string_view what) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    return make_error("ISOLATED_SYSTEM", std::string(what) + ": pipe: " + std::strerror(errno));
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int e = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    return make_error("ISOLATED_SYSTEM", std::string(what) + ": fork: " + std::strerror(e));
  }
  if (pid == 0) {
    ::close(fds[0]);
    child_main(fds[1], work, limits);
  }
  ::close(fds[1]);
  const int fd = fds[0];

  // Read the answer until EOF, within the deadline and the size limit.
  const auto deadline = std::chrono::steady_clock::now() + limits.timeout;
  std::vector<std::uint8_t> got;
  bool timed_out = false, too_large = false, read_failed = false, cancelled = false;
  std::uint8_t buf[65536];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    if (limits.cancel && limits.cancel->load()) {
      cancelled = true;
      break;
    }
    pollfd p{fd, POLLIN, 0};
    const long long wait_ms = limits.cancel ? 100 : 1'000'000;
    const int pr = ::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), wait_ms)));
    if (pr < 0) {
      if (errno == EINTR) continue;
      read_failed = true;
      break;
    }
    if (pr == 0) continue;  // the deadline check above ends it
    const ssize_t r = ::read(fd, buf, sizeof buf);
    if (r < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      read_failed = true;
      break;
    }
    if (r == 0) break;  // EOF: the child closed its end or ended
    if (got.size() + static_cast<std::size_t>(r) > limits.max_result_bytes + 9) {
      too_large = true;
      break;
    }
    got.insert(got.end(), buf, buf + r);
  }
  ::close(fd);
  if (timed_out || too_large || read_failed || cancelled) ::kill(pid, SIGKILL);
  int wstatus = 0;
  while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  const std::string name(what);
  if (cancelled) return make_error("ISOLATED_CANCELLED", name + " was cancelled");
  if (timed_out)
    return make_error("ISOLATED_TIMEOUT", name + " ran longer than " +
                                              std::to_string(limits.timeout.count()) +
                                              " ms and was stopped");
  if (too_large)
    return make_error("ISOLATED_LIMIT", name + " produced more than " +
                                            std::to_string(limits.max_result_bytes) + " bytes");
  // A complete answer counts even if the child's exit went wrong afterwards.
  bool complete = got.size() >= 9;
  std::uint64_t n = 0;
  if (complete) {
    n = load_le<std::uint64_t>(got.data() + 1);
    complete = n == got.size() - 9 && (got[0] == kAnswerBytes || got[0] == kAnswerError);
  }
  if (!complete || read_failed)
    return make_error("ISOLATED_CRASH", name + " crashed: its process " + how_it_ended(wstatus) +
                                            " before it answered");
  if (got[0] == kAnswerBytes) {
    got.erase(got.begin(), got.begin() + 9);
    return got;
  }
  const std::string_view text(reinterpret_cast<const char*>(got.data()) + 9,
                              static_cast<std::size_t>(n));
  const auto nul = text.find('\0');
  if (nul == std::string_view::npos)
    return make_error("ISOLATED_CRASH", name + " sent a malformed answer");
  return make_error(std::string(text.substr(0, nul)), std::string(text.substr(nul + 1)));
}

}  // namespace charkit::core
