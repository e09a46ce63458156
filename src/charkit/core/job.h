// The one shape of charkit's kernels (docs/core.md §Jobs).
//
// A kernel is a job: a struct of parameters and caller-owned spans, inputs
// and outputs, that the caller fills. Every job has
//   core::Status validate() const;
//       every check of the inputs against each other and against the output
//       sizes; the first failure as a located error with a declared code;
//   core::Status run(const core::RunOptions& options = {}) const;
//       the computation into the output spans. It requires a job that passed
//       validate() (the checks are not repeated: validate once, run many
//       times); what it still checks, because it costs nothing, its header
//       says. It allocates nothing unless its header says so.
// Threading is an option of run(), never a second entry point; a job with
// a GPU path adds run_gpu(gpu::Context&), with the same checks and results
// as run() (its header says how close).
#pragma once

#include <algorithm>
#include <cstddef>

#include "charkit/core/parallel.h"

namespace charkit::core {

/// How a job's run() may spend threads.
struct RunOptions {
  /// The work is split over this executor; nullptr: the calling thread only.
  Executor* executor = nullptr;
  /// At most this many chunks run at the same time; 0: as many as the
  /// executor allows. Ignored without an executor.
  std::size_t max_threads = 0;

  /// `executor`, or the serial executor when there is none.
  Executor& executor_or_serial() const {
    return executor != nullptr ? *executor : serial_executor();
  }

  /// How many chunks may run at once: 1 without an executor, else the
  /// executor's concurrency capped by max_threads.
  std::size_t parallelism() const {
    if (executor == nullptr) return 1;
    const std::size_t c = std::max<std::size_t>(1, executor->concurrency());
    return max_threads == 0 ? c : std::min(c, max_threads);
  }

  /// The chunk size for n items: `min_grain`, raised so that max_threads
  /// (when set) bounds the number of chunks.
  std::size_t grain(std::size_t n, std::size_t min_grain) const {
    if (max_threads == 0) return std::max<std::size_t>(1, min_grain);
    return std::max({std::size_t{1}, min_grain, (n + max_threads - 1) / max_threads});
  }
};

}  // namespace charkit::core
