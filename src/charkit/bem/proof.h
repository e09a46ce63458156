// The §6 selection proof: for every legal combination of option values,
// exactly (no sampling, no enumeration), each component has exactly one
// true candidate, each replacement selects a draw, each texture slot has
// exactly one true candidate; and the worst cases over all legal
// combinations of the §11 per-selection budgets, each with a witness
// settings string. docs/bem/proof.md is the contract.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "charkit/bem/model.h"
#include "charkit/core/result.h"

namespace charkit::bem {

/// One value per option group: a choice index, or the group's choice count
/// for NONE (unavailable). The same type as in decision_graph.h, which this
/// header does not include (it pulls in Boost.Multiprecision).
using Assignment = std::vector<std::uint32_t>;

struct ProofOptions {
  /// §6: nodes of the decision graph (and states of each worst-case search);
  /// kDecisionGraphNodeLimit.
  std::size_t node_limit = 250000;
  /// Compute the five worst cases (the exactly-one checks always run).
  bool worst_cases = true;
  /// Keep at most this many issues (one per component or slot anyway).
  std::size_t max_issues = 64;
};

/// One failed check, with a legal combination that shows it.
struct ProofIssue {
  std::string code;     ///< e.g. BEM_SELECTION_MULTIPLE_CANDIDATES
  std::string section;  ///< "§6", "§9", "§11"
  std::string pointer;  ///< JSON pointer of the rule, candidate or slot concerned
  std::string message;  ///< includes the witness settings string
  std::string witness;  ///< settings string of the combination
};

/// The maximum of one budget over all legal combinations.
struct WorstCase {
  std::uint64_t value = 0;
  std::optional<std::uint64_t> limit;  ///< §11 limit for this version (none: no limit)
  std::string witness;                 ///< settings string reaching `value`
  bool exceeded() const { return limit && value > *limit; }
};

struct ProofSummary {
  std::string combinations;  ///< exact number of legal combinations, decimal
  std::size_t nodes = 0;     ///< nodes in the decision graph
  std::size_t states = 0;    ///< most states one worst-case search visited
  bool has_worst_cases = false;
  WorstCase draws;             ///< selected draws (§7, §11: 256)
  WorstCase indices;           ///< selected indices (§11: 16,777,216)
  WorstCase texture_bindings;  ///< §11: 32 (1.0/1.1), 64 (1.2+)
  WorstCase decoded_bytes;     ///< §11: 512 / 768 / 1536 MiB
  WorstCase resident_bytes;    ///< §11: 512 / 768 / 1536 MiB
  std::vector<ProofIssue> issues;
  bool ok() const { return issues.empty(); }
};

/// Run every check. Fails only with BEM_DECISION_GRAPH_TOO_LARGE (the
/// decision graph or a worst-case search passed options.node_limit).
core::Result<ProofSummary> prove_selections(const Model& model, const ProofOptions& options = {});

/// §11: the lowest version 1.m (m ≥ from, at most 1.5) whose per-selection
/// limits hold every worst case of `s` (texture bindings 32 → 64 from 1.2,
/// decoded and resident bytes 512 / 768 / 1536 MiB, selected draws unlimited
/// in 1.0 and 256 after); `from` when none does or no worst case was
/// computed. `why` (optional) gets the first limit that rules out 1.(m−1).
int lowest_minor_for_worst_cases(const ProofSummary& s, int from, std::string* why = nullptr);

/// The settings string of an assignment (§6 `group:choice&…`, every group
/// in manifest order, an unavailable group written with its default; 1.0:
/// the appearance id alone).
std::string settings_string(const Model& model, const Assignment& x);
/// The effective values of an assignment (NONE → nullopt).
EffectiveValues effective_values(const Model& model, const Assignment& x);

}  // namespace charkit::bem
