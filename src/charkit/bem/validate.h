// BEM validation: every rule of the BEM 1.0–1.5 specification and the 1.4
// explicit-target rules, over both containers. The result is a Report.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "charkit/bem/container.h"
#include "charkit/bem/proof.h"
#include "charkit/core/mapped_file.h"
#include "charkit/core/parallel.h"
#include "charkit/core/progress.h"
#include "charkit/core/report.h"

namespace charkit::bem {

struct ValidateOptions {
  /// The user's "disable model validation" switch: relaxes exactly what §12,
  /// §12 root offset and the 1.4 note allow (docs/bem.md lists it).
  bool skip_validation = false;
  /// Keep at most this many issues in the report (counts stay exact).
  std::size_t max_issues = 200;
  /// Decode payloads and check their contents (indices, skin weights, deltas).
  bool check_payloads = true;
  /// Optional hints to the owner of the input bytes (a core::MappedFile):
  /// each payload's stored range is announced before it is decoded and
  /// released after it is checked, so pages are mapped in bulk and peak
  /// memory stays near the largest decoded payload.
  const core::InputHints* input_hints = nullptr;
  /// Budget on the bytes decoded from the package, all payloads, ZIP
  /// entries and collection members (and their payloads) together; 0: none
  /// (the CLI default). Past it validation stops with BEM_DECODE_BUDGET
  /// (docs/bem/zip.md §Budgets). The server sets one per job.
  std::uint64_t max_decoded_bytes = 0;
  /// Budget on the memory held at once for decoded data: payload and
  /// collection-member buffers (every thread's) and the parsed manifest
  /// (its text and kJsonBytesPerValue a value); 0: none (the CLI default).
  /// A payload waits for other threads' buffers rather than fail while
  /// they could make room; one that cannot fit stops validation with
  /// BEM_MEMORY_BUDGET (docs/bem/zip.md §Budgets). The server sets one per
  /// job.
  std::uint64_t max_memory_bytes = 0;
  /// Polled between payloads, members and passes and every few MiB of a ZIP
  /// entry; once true, validation stops with BEM_CANCELLED. May be null.
  const std::atomic<bool>* cancel = nullptr;
  /// Payloads decoded and checked at once (binary packages; ZIP entries are
  /// read one at a time); 0 = the executor's concurrency. The report does
  /// not depend on it: issues come in payload order and the decode budget is
  /// spent in payload order. Each thread has its own decode buffer, so peak
  /// memory is about the largest `threads` payloads. The library's default
  /// is one (a server validates several packages at once); the CLI uses
  /// every core.
  unsigned threads = 1;
  /// Where payloads are decoded; null = core::default_executor() (the
  /// calling thread alone when threads is 1). Not owned.
  core::Executor* executor = nullptr;
  /// Called with the payloads checked so far and the package's payload
  /// count while payload contents are decoded and checked (the long pass),
  /// on the calling thread; the last call has done == total. A collection
  /// bundle's members report in turn. May be empty.
  core::ProgressFn progress;
};

/// What validation learnt about a package, besides its issues.
struct ValidationSummary {
  ContainerKind kind = ContainerKind::kBinary;
  std::optional<int> declared_minor;  ///< header minor / ZIP format_version
  int effective_minor = 0;            ///< the version whose rules were applied
  int needed_minor = 0;               ///< the lowest version that expresses the content
  /// §1 capabilities the content uses (declared or not), each with the
  /// first place that uses it.
  std::map<std::string, std::string> used_capabilities;
  std::uint32_t payload_count = 0;
  /// The §6 selection proof (docs/bem/proof.md): present when the package
  /// passed every other check and the proof ran (its failures are errors in
  /// the report too).
  std::optional<ProofSummary> proof;
  /// Collection bundles: one summary + report per member.
  struct Member {
    std::string name;
    core::Report report;
    int effective_minor = 0;
    std::optional<ProofSummary> proof;
  };
  std::vector<Member> members;
  /// Bytes decoded (zstd and DEFLATE payloads, ZIP entries, members), each
  /// counted at its declared size as it is decoded (the reader holds it to
  /// that size; one found short still counts what it declared).
  std::uint64_t decoded_bytes = 0;
  /// Validation stopped early: max_decoded_bytes was reached, or the cancel
  /// flag went up (the report then has BEM_DECODE_BUDGET / BEM_CANCELLED).
  bool budget_exceeded = false;
  /// Validation stopped early: max_memory_bytes could not hold what it
  /// needed (the report then has BEM_MEMORY_BUDGET).
  bool memory_exceeded = false;
  /// The most bytes of decoded data held at once (what max_memory_bytes
  /// bounds), counted whether or not a budget was set.
  std::uint64_t peak_memory_bytes = 0;
  bool cancelled = false;
};

struct ValidationResult {
  core::Report report;
  ValidationSummary summary;
  bool valid() const;  ///< no errors here and in any member
};

/// Validate a whole file given as bytes (binary, ZIP or collection bundle).
ValidationResult validate_package(core::Bytes file, const ValidateOptions& options = {});

}  // namespace charkit::bem
