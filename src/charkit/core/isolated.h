// Running a third-party decoder in a child process (docs/isolation.md).
//
// Some decoders we depend on (libassimp 5.2 above all) crash, loop or
// allocate without bound on malformed input, and no check of ours can rule
// every such input out. run_isolated forks, runs the work in the child and
// carries its result back through a pipe as bytes; a crash, a timeout or an
// exhausted memory limit in the child becomes an ordinary error in the
// caller, and the caller's process (a CLI run, a server worker) lives on.
//
// The work runs in a copy of the caller's address space: it may read
// anything the caller built (the input bytes, options) without copying, but
// what it changes stays in the child. The child ends with _exit, so no
// destructor, atexit handler or stdio buffer of the caller runs twice.
//
// Threads: only the calling thread exists in the child. glibc makes malloc
// usable after fork; a lock some other thread held inside a library at the
// moment of the fork would stay held in the child. A child that sleeps on
// such a lock (its CPU time frozen, nothing sent) is seen as stalled,
// killed and the work run again in a fresh child; a lock that spins is
// ended by the timeout instead of hanging the caller.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "charkit/core/result.h"

namespace charkit::core {

struct IsolationLimits {
  /// Wall time of the child; then it is killed (SIGKILL).
  std::chrono::milliseconds timeout{120'000};
  /// Most bytes the child may send back (the work's result).
  std::uint64_t max_result_bytes = 1ull << 31;
  /// RLIMIT_AS of the child (0 = none). Not applied in sanitizer builds,
  /// whose shadow memory reserves terabytes of address space.
  std::uint64_t address_space_bytes = 16ull << 30;
  /// A child that has slept (not runnable) without using CPU time or
  /// sending a byte for this long is taken to be stuck on a lock inherited
  /// from another thread of the caller: it is killed and the work runs again
  /// in a fresh child, at most stall_retries times (then ISOLATED_STALLED).
  /// All attempts share `timeout`. Zero turns the check off.
  std::chrono::milliseconds stall_timeout{5'000};
  int stall_retries = 2;
  /// Polled (every 100 ms at most) while the child runs; once true the
  /// child is killed and ISOLATED_CANCELLED returned. May be null.
  const std::atomic<bool>* cancel = nullptr;
};

/// The work: returns the bytes to carry back, or an error (which is carried
/// back too, code and message; the location is dropped).
using IsolatedWork = std::function<Result<std::vector<std::uint8_t>>()>;

/// Runs work in a forked child. Returns its bytes or its error as it gave
/// them, or one of:
/// - ISOLATED_CRASH: the child ended without a complete answer (killed by a
///   signal, or a sanitizer report and exit); the message says how it ended;
/// - ISOLATED_TIMEOUT: it ran past limits.timeout and was killed;
/// - ISOLATED_STALLED: every attempt stalled (see stall_timeout);
/// - ISOLATED_LIMIT: its answer was larger than limits.max_result_bytes;
/// - ISOLATED_CANCELLED: limits.cancel went up and the child was killed;
/// - ISOLATED_SYSTEM: pipe or fork failed (errno's text).
/// `what` names the work in those messages ("the Assimp import").
Result<std::vector<std::uint8_t>> run_isolated(const IsolatedWork& work,
                                               const IsolationLimits& limits,
                                               std::string_view what);

}  // namespace charkit::core
