// Reduced ordered MDD with a unique table and a computed cache (§6 decision
// graph). Every node counts against the limit; once it is reached the graph
// stops growing and reports BEM_DECISION_GRAPH_TOO_LARGE, so a hostile
// package costs at most limit × (max arity) child slots of memory.
#include "charkit/bem/detail/decision_graph.h"

#include <algorithm>
#include <string>

#include "charkit/bem/error_codes.h"

namespace charkit::bem {

namespace {
// The computed cache is only a speed-up: direct-mapped and lossy, its size
// follows the graph up to 2^20 entries, so its memory stays bounded whatever
// the package.
constexpr unsigned kComputedCacheMinBits = 12;
constexpr unsigned kComputedCacheMaxBits = 20;  // 16 MiB of entries
}  // namespace

std::uint64_t DecisionGraph::hash_node(std::size_t var, std::span<const NodeId> children) {
  std::uint64_t h = 0x9E3779B97F4A7C15ull ^ var;
  for (NodeId c : children) h = (h ^ c) * 0x100000001B3ull + (h >> 29);
  return h ^ (h >> 32);
}

void DecisionGraph::grow_unique() {
  std::vector<NodeId> table(unique_.empty() ? 1024 : unique_.size() * 2, 0);
  const std::size_t mask = table.size() - 1;
  for (NodeId n : unique_) {
    if (n == 0) continue;
    std::size_t i = hash_[n] & mask;
    while (table[i] != 0) i = (i + 1) & mask;
    table[i] = n;
  }
  unique_ = std::move(table);
}

DecisionGraph::DecisionGraph(std::vector<std::uint32_t> choices, std::size_t node_limit)
    : limit_(node_limit) {
  arity_.reserve(choices.size());
  for (std::uint32_t k : choices) arity_.push_back(k + 1);
  // Terminals: variable index num_vars, no children.
  const auto terminal_var = static_cast<std::uint32_t>(arity_.size());
  vars_ = {terminal_var, terminal_var};
  first_ = {0, 0};
  hash_ = {0, 0};
  grow_unique();
}

core::Status DecisionGraph::status() const {
  if (!exhausted_) return core::Ok{};
  return core::make_error(codes::BEM_DECISION_GRAPH_TOO_LARGE,
                          "the exact decision graph of the option groups needs more than " +
                              std::to_string(limit_) +
                              " nodes (§6: at most 250000); simplify the conditions");
}

NodeId DecisionGraph::make(std::size_t v, std::span<const NodeId> children) {
  if (exhausted_) return kFalse;
  if (std::all_of(children.begin(), children.end(), [&](NodeId c) { return c == children[0]; }))
    return children[0];
  const std::uint64_t h = hash_node(v, children);
  const std::size_t mask = unique_.size() - 1;
  std::size_t i = h & mask;
  for (; unique_[i] != 0; i = (i + 1) & mask) {
    const NodeId n = unique_[i];
    if (hash_[n] == h && vars_[n] == v &&
        std::equal(children.begin(), children.end(), pool_.begin() + first_[n]))
      return n;
  }
  if (vars_.size() >= limit_) {
    exhausted_ = true;
    return kFalse;
  }
  const auto id = static_cast<NodeId>(vars_.size());
  vars_.push_back(static_cast<std::uint32_t>(v));
  first_.push_back(static_cast<std::uint32_t>(pool_.size()));
  pool_.insert(pool_.end(), children.begin(), children.end());
  hash_.push_back(h);
  unique_[i] = id;
  if (++unique_count_ * 2 > unique_.size()) grow_unique();
  return id;
}

NodeId DecisionGraph::eq(std::size_t v, std::uint32_t value) {
  if (v >= num_vars() || value >= none(v)) return kFalse;
  std::vector<NodeId> ch(arity_[v], kFalse);
  ch[value] = kTrue;
  return make(v, ch);
}

NodeId DecisionGraph::available(std::size_t v) {
  if (v >= num_vars()) return kFalse;
  std::vector<NodeId> ch(arity_[v], kTrue);
  ch[none(v)] = kFalse;
  return make(v, ch);
}

NodeId DecisionGraph::apply(Op op, NodeId a, NodeId b) {
  if (exhausted_) return kFalse;
  NodeId r = apply_rec(op, a, b);
  return exhausted_ ? kFalse : r;
}

NodeId DecisionGraph::apply_rec(Op op, NodeId a, NodeId b) {
  if (exhausted_) return kFalse;
  switch (op) {
    case Op::kAnd:
      if (a == kFalse || b == kFalse) return kFalse;
      if (a == kTrue || a == b) return b;
      if (b == kTrue) return a;
      break;
    case Op::kOr:
      if (a == kTrue || b == kTrue) return kTrue;
      if (a == kFalse || a == b) return b;
      if (b == kFalse) return a;
      break;
    case Op::kXor:
      if (a == b) return kFalse;
      if (a == kFalse) return b;
      if (b == kFalse) return a;
      if (is_terminal(a) && is_terminal(b)) return kTrue;
      break;
  }
  if (a > b) std::swap(a, b);  // all three operations commute
  const std::uint64_t key = (static_cast<std::uint64_t>(op) << 62) |
                            (static_cast<std::uint64_t>(a) << 31) | static_cast<std::uint64_t>(b);
  // Grow the cache with the graph (dropping its entries: it is only a cache).
  if (computed_bits_ < kComputedCacheMaxBits &&
      (computed_.empty() || vars_.size() * 2 > computed_.size())) {
    computed_bits_ = std::max(kComputedCacheMinBits, computed_bits_ + 1);
    computed_.assign(std::size_t{1} << computed_bits_, CacheEntry{});
  }
  CacheEntry& slot = computed_[(key * 0x9E3779B97F4A7C15ull) >> (64 - computed_bits_)];
  if (slot.key == key) return slot.result;

  // The children are collected on scratch_, a stack shared by the recursion
  // (indices, not pointers: deeper calls may grow it).
  const std::size_t v = std::min(var(a), var(b));
  const std::size_t base = scratch_.size();
  scratch_.resize(base + arity_[v]);
  for (std::uint32_t x = 0; x < arity_[v]; ++x) {
    const NodeId r = apply_rec(op, cofactor(a, v, x), cofactor(b, v, x));
    if (exhausted_) {
      scratch_.resize(base);
      return kFalse;
    }
    scratch_[base + x] = r;
  }
  const NodeId r = make(v, std::span<const NodeId>(scratch_.data() + base, arity_[v]));
  scratch_.resize(base);
  if (exhausted_) return kFalse;
  // Re-index: the cache may have grown during the recursion.
  CacheEntry& fresh = computed_[(key * 0x9E3779B97F4A7C15ull) >> (64 - computed_bits_)];
  fresh.key = key;
  fresh.result = r;
  return r;
}

NodeId DecisionGraph::compile(const Condition& c) {
  switch (c.op) {
    case Condition::Op::kTrue:
      return kTrue;
    case Condition::Op::kFalse:
      return kFalse;
    case Condition::Op::kEq:
      return eq(c.group, c.choice);
    case Condition::Op::kAll: {
      NodeId r = kTrue;
      for (const auto& o : c.operands) r = land(r, compile(o));
      return r;
    }
    case Condition::Op::kAny: {
      NodeId r = kFalse;
      for (const auto& o : c.operands) r = lor(r, compile(o));
      return r;
    }
    case Condition::Op::kNot:
      return c.operands.size() == 1 ? lnot(compile(c.operands[0])) : kFalse;
  }
  return kFalse;
}

bool DecisionGraph::eval(NodeId f, const Assignment& x) const {
  while (!is_terminal(f)) {
    const std::size_t v = var(f);
    const std::uint32_t value = v < x.size() && x[v] < arity_[v] ? x[v] : none(v);
    f = child(f, value);
  }
  return f == kTrue;
}

BigCount DecisionGraph::count(NodeId f) const {
  // A path that skips variables lo .. hi−1 stands for every value of each:
  // multiply by their arities.
  auto skipped = [&](std::size_t lo, std::size_t hi) {
    BigCount p(1);
    for (std::size_t v = lo; v < hi; ++v) p *= arity_[v];
    return p;
  };
  // Memo over nodes below f: count of assignments of vars var(node)..n−1.
  std::unordered_map<NodeId, BigCount> memo;
  memo[kFalse] = 0;
  memo[kTrue] = 1;
  // Iterative post-order: children before parents.
  std::vector<std::pair<NodeId, bool>> stack{{f, false}};
  while (!stack.empty()) {
    auto [node, expanded] = stack.back();
    stack.pop_back();
    if (memo.count(node)) continue;
    const std::size_t v = var(node);
    if (!expanded) {
      stack.push_back({node, true});
      for (std::uint32_t x = 0; x < arity_[v]; ++x)
        if (!memo.count(child(node, x))) stack.push_back({child(node, x), false});
      continue;
    }
    BigCount total(0);
    for (std::uint32_t x = 0; x < arity_[v]; ++x) {
      NodeId c = child(node, x);
      total += memo[c] * skipped(v + 1, var(c));
    }
    memo[node] = std::move(total);
  }
  return memo[f] * skipped(0, var(f));
}

std::optional<Assignment> DecisionGraph::witness(NodeId f, const Assignment* fill) const {
  if (f == kFalse) return std::nullopt;
  const std::size_t n = num_vars();
  Assignment x(n, 0);
  if (fill)
    for (std::size_t v = 0; v < n && v < fill->size(); ++v)
      if ((*fill)[v] < arity_[v]) x[v] = (*fill)[v];
  // In a reduced graph every node other than kFalse has a path to kTrue, so
  // any child that is not kFalse leads on.
  while (!is_terminal(f)) {
    const std::size_t v = var(f);
    if (child(f, x[v]) == kFalse) {
      for (std::uint32_t value = 0; value < arity_[v]; ++value)
        if (child(f, value) != kFalse) {
          x[v] = value;
          break;
        }
    }
    f = child(f, x[v]);
  }
  return x;
}

}  // namespace charkit::bem

namespace charkit::bem {

namespace {

struct KeyHash {
  std::size_t operator()(const std::vector<std::uint32_t>& k) const {
    std::uint64_t h = 0xCBF29CE484222325ull;
    for (std::uint32_t x : k) h = (h ^ x) * 0x100000001B3ull;
    return static_cast<std::size_t>(h ^ (h >> 29));
  }
};

std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) {
  return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

}  // namespace

core::Result<MaximumResult> maximize_sum(const DecisionGraph& g, NodeId domain,
                                         std::span<const WeightedTerm> terms,
                                         std::size_t state_limit) {
  // Equal functions are equal nodes: merge their weights, so the states
  // carry one residual per distinct function.
  std::uint64_t base = 0;
  std::unordered_map<NodeId, std::uint64_t> merged;
  for (const auto& t : terms) {
    if (t.f == DecisionGraph::kFalse || t.weight == 0) continue;
    if (t.f == DecisionGraph::kTrue) {
      base = saturating_add(base, t.weight);
      continue;
    }
    auto& w = merged[t.f];
    w = saturating_add(w, t.weight);
  }
  std::vector<WeightedTerm> live;
  live.reserve(merged.size());
  for (const auto& [f, w] : merged) live.push_back({f, w});
  std::sort(live.begin(), live.end(),
            [](const WeightedTerm& a, const WeightedTerm& b) { return a.f < b.f; });

  // A state: the domain's residual and the live terms as (residual, weight)
  // pairs sorted by residual, equal residuals merged. Two prefixes with the
  // same state have the same best completion, so only the better one is kept.
  // Key layout: [domain, r1, w1 low, w1 high, r2, …].
  struct State {
    std::vector<std::uint32_t> key;
    std::uint64_t acc = 0;
  };
  struct Back {
    std::uint32_t parent = 0;
    std::uint32_t value = 0;
  };
  auto weight_at = [](const std::vector<std::uint32_t>& k, std::size_t p) {
    return (static_cast<std::uint64_t>(k[p + 2]) << 32) | k[p + 1];
  };
  auto push_term = [](std::vector<std::uint32_t>& k, NodeId r, std::uint64_t w) {
    k.push_back(r);
    k.push_back(static_cast<std::uint32_t>(w));
    k.push_back(static_cast<std::uint32_t>(w >> 32));
  };
  const std::size_t n = g.num_vars();
  std::vector<std::vector<Back>> back(n + 1);
  std::vector<State> cur(1);
  cur[0].key.push_back(domain);
  for (const auto& t : live) push_term(cur[0].key, t.f, t.weight);
  cur[0].acc = base;
  back[0].push_back({0, 0});
  std::size_t states = 1;

  std::vector<std::uint32_t> key;
  std::vector<std::pair<NodeId, std::uint64_t>> open;
  for (std::size_t v = 0; v < n; ++v) {
    std::vector<State> next;
    std::unordered_map<std::vector<std::uint32_t>, std::uint32_t, KeyHash> index;
    for (std::uint32_t s = 0; s < cur.size(); ++s) {
      const State& st = cur[s];
      for (std::uint32_t x = 0; x < g.arity(v); ++x) {
        NodeId d = g.cofactor(st.key[0], v, x);
        if (d == DecisionGraph::kFalse) continue;
        std::uint64_t acc = st.acc;
        open.clear();
        for (std::size_t p = 1; p + 2 < st.key.size(); p += 3) {
          NodeId r = g.cofactor(st.key[p], v, x);
          if (r == DecisionGraph::kTrue)
            acc = saturating_add(acc, weight_at(st.key, p));
          else if (r != DecisionGraph::kFalse)
            open.emplace_back(r, weight_at(st.key, p));
        }
        std::sort(open.begin(), open.end());
        key.clear();
        key.push_back(d);
        for (std::size_t i = 0; i < open.size();) {
          std::uint64_t w = 0;
          std::size_t j = i;
          for (; j < open.size() && open[j].first == open[i].first; ++j)
            w = saturating_add(w, open[j].second);
          push_term(key, open[i].first, w);
          i = j;
        }
        auto [it, inserted] = index.try_emplace(key, static_cast<std::uint32_t>(next.size()));
        if (inserted) {
          if (++states > state_limit)
            return core::make_error(
                codes::BEM_DECISION_GRAPH_TOO_LARGE,
                "the worst-case search over the decision graph needs more than " +
                    std::to_string(state_limit) + " states (§6: at most 250000 nodes)");
          next.push_back({key, acc});
          back[v + 1].push_back({s, x});
        } else if (acc > next[it->second].acc) {
          next[it->second].acc = acc;
          back[v + 1][it->second] = {s, x};
        }
      }
    }
    cur = std::move(next);
  }

  if (cur.empty())
    return core::make_error(codes::BEM_DECISION_GRAPH_EMPTY, "no assignment satisfies the domain");
  // Every variable is decided: residuals are terminal, so each final state
  // is (kTrue) with no live terms; pick the best.
  std::uint32_t best = 0;
  for (std::uint32_t s = 1; s < cur.size(); ++s)
    if (cur[s].acc > cur[best].acc) best = s;
  MaximumResult r;
  r.value = cur[best].acc;
  r.states = states;
  r.witness.assign(n, 0);
  std::uint32_t at = best;
  for (std::size_t v = n; v > 0; --v) {
    r.witness[v - 1] = back[v][at].value;
    at = back[v][at].parent;
  }
  return r;
}

}  // namespace charkit::bem
