// The exact decision graph of §6: a reduced, ordered multi-valued decision
// diagram (MDD) over the option groups in manifest order. The selection
// proof (proof.h) builds every condition of a package into one of these and
// answers "for every legal combination" questions exactly, without sampling
// and without enumerating combinations. docs/bem/proof.md is the contract.
//
// Variable i is option group i. Its domain is {choice 0 .. k_i−1, NONE}:
// NONE means "the group is unavailable" (§6: it has no effective value and
// every eq on it is false). Nodes are hash-consed in a unique table and kept
// reduced (a node whose children are all equal is that child), so equal
// functions are equal node ids.
#pragma once

#include <boost/multiprecision/cpp_int.hpp>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "charkit/bem/model.h"
#include "charkit/core/result.h"

namespace charkit::bem {

/// §6: "决策图最多 250000 个节点，超过即拒绝".
inline constexpr std::size_t kDecisionGraphNodeLimit = 250000;

using NodeId = std::uint32_t;
using BigCount = boost::multiprecision::cpp_int;

/// One value per variable: a choice index, or DecisionGraph::none(var).
using Assignment = std::vector<std::uint32_t>;

class DecisionGraph {
 public:
  static constexpr NodeId kFalse = 0;
  static constexpr NodeId kTrue = 1;

  /// choices[i] = number of choices of group i (each ≥ 1; NONE is added).
  explicit DecisionGraph(std::vector<std::uint32_t> choices,
                         std::size_t node_limit = kDecisionGraphNodeLimit);
  // The unique table's hash functors point back at the graph.
  DecisionGraph(const DecisionGraph&) = delete;
  DecisionGraph& operator=(const DecisionGraph&) = delete;

  std::size_t num_vars() const { return arity_.size(); }
  /// Domain size of a variable: its choices plus NONE.
  std::uint32_t arity(std::size_t var) const { return arity_[var]; }
  /// The value that stands for "unavailable".
  std::uint32_t none(std::size_t var) const { return arity_[var] - 1; }

  /// Nodes in the unique table, terminals included.
  std::size_t node_count() const { return vars_.size(); }
  std::size_t node_limit() const { return limit_; }
  /// True once an operation needed more nodes than the limit; every result
  /// since then is meaningless (kFalse) and status() is the error.
  bool exhausted() const { return exhausted_; }
  core::Status status() const;

  // ---- structure ----------------------------------------------------
  bool is_terminal(NodeId n) const { return n <= kTrue; }
  /// Variable a node tests; num_vars() for the terminals.
  std::size_t var(NodeId n) const { return vars_[n]; }
  NodeId child(NodeId n, std::uint32_t value) const { return pool_[first_[n] + value]; }
  /// The function with variable `var` fixed to `value` (var must not be
  /// below n's variable in the order, i.e. var ≤ var(n) or n is unaffected).
  NodeId cofactor(NodeId n, std::size_t v, std::uint32_t value) const {
    return var(n) == v ? child(n, value) : n;
  }

  /// The node testing `var` with these children (arity(var) of them), reduced
  /// and hash-consed. kFalse (and exhausted()) when over the limit.
  NodeId make(std::size_t var, std::span<const NodeId> children);

  // ---- functions ----------------------------------------------------
  NodeId eq(std::size_t var, std::uint32_t value);
  /// x_var ≠ NONE.
  NodeId available(std::size_t var);
  NodeId land(NodeId a, NodeId b) { return apply(Op::kAnd, a, b); }
  NodeId lor(NodeId a, NodeId b) { return apply(Op::kOr, a, b); }
  NodeId lxor(NodeId a, NodeId b) { return apply(Op::kXor, a, b); }
  NodeId lnot(NodeId a) { return apply(Op::kXor, a, kTrue); }
  NodeId iff(NodeId a, NodeId b) { return lnot(lxor(a, b)); }
  /// A §6 condition; eq(g, c) is x_g == c (false when x_g is NONE).
  /// Group or choice indices out of range compile to false.
  NodeId compile(const Condition& c);

  // ---- queries ------------------------------------------------------
  /// Value of f at a full assignment.
  bool eval(NodeId f, const Assignment& x) const;
  /// Number of full assignments (each variable over its whole domain,
  /// NONE included) on which f is true. Exact, arbitrary precision.
  BigCount count(NodeId f) const;
  /// Some assignment on which f is true, or nullopt for kFalse. Variables
  /// the path does not test take `fill[var]` (when given) or choice 0.
  std::optional<Assignment> witness(NodeId f, const Assignment* fill = nullptr) const;

 private:
  enum class Op : std::uint8_t { kAnd = 0, kOr = 1, kXor = 2 };
  NodeId apply(Op op, NodeId a, NodeId b);
  NodeId apply_rec(Op op, NodeId a, NodeId b);

  static std::uint64_t hash_node(std::size_t var, std::span<const NodeId> children);
  void grow_unique();

  std::vector<std::uint32_t> arity_;
  std::size_t limit_;
  bool exhausted_ = false;
  std::vector<std::uint32_t> vars_;   ///< per node: variable (num_vars for terminals)
  std::vector<std::uint32_t> first_;  ///< per node: first child in pool_
  std::vector<NodeId> pool_;          ///< children of every node, back to back
  std::vector<std::uint64_t> hash_;   ///< per node: hash_node of its variable and children
  /// The unique table: open addressing with linear probing over node ids
  /// (0 = empty: kFalse is never stored), at most half full.
  std::vector<NodeId> unique_;
  std::size_t unique_count_ = 0;
  /// The computed table of apply(): direct-mapped and lossy, as in BDD
  /// packages (an evicted entry is only recomputed); a power-of-two size that
  /// grows with the graph up to 2^20 entries (decision_graph.cpp).
  struct CacheEntry {
    std::uint64_t key = ~std::uint64_t{0};  ///< never a valid key (op < 3)
    NodeId result = 0;
  };
  std::vector<CacheEntry> computed_;
  unsigned computed_bits_ = 0;
  std::vector<NodeId> scratch_;
};

/// One term of a weighted sum Σ w_j · f_j(x).
struct WeightedTerm {
  NodeId f = DecisionGraph::kFalse;
  std::uint64_t weight = 0;
};

struct MaximumResult {
  std::uint64_t value = 0;  ///< the maximum (saturates at UINT64_MAX)
  Assignment witness;       ///< an assignment reaching it
  std::size_t states = 0;   ///< dynamic-programming states visited
};

/// The exact maximum of Σ w_j · f_j(x) over the assignments where `domain`
/// is true, with a witness. A dynamic program over the variables in order:
/// a state is (residual of domain, residuals of the terms not yet decided);
/// a term whose residual becomes true adds its weight, a false one drops,
/// and each state keeps only its best sum and a back-pointer. The states
/// count against `state_limit` (BEM_DECISION_GRAPH_TOO_LARGE beyond it).
/// `domain` must not be kFalse.
core::Result<MaximumResult> maximize_sum(const DecisionGraph& g, NodeId domain,
                                         std::span<const WeightedTerm> terms,
                                         std::size_t state_limit = kDecisionGraphNodeLimit);

}  // namespace charkit::bem
