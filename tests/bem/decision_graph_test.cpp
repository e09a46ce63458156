// The §6 decision graph: reduction, hash-consing, exact counting with
// NONE values, witnesses, the node limit and the weighted-sum maximum.
// Expected counts are products of domain sizes worked out by hand.
#include "charkit/bem/detail/decision_graph.h"

#include <gtest/gtest.h>

namespace charkit::bem {
namespace {

using G = DecisionGraph;

TEST(DecisionGraph, CountsIncludeNoneValues) {
  // Two groups with 2 and 3 choices: domains of 3 and 4 values with NONE.
  G g({2, 3});
  EXPECT_EQ(g.count(G::kTrue), 12);
  EXPECT_EQ(g.count(G::kFalse), 0);
  EXPECT_EQ(g.count(g.eq(0, 1)), 4);                              // x0 = 1, x1 any of 4
  EXPECT_EQ(g.count(g.eq(1, 2)), 3);                              // x1 = 2, x0 any of 3
  EXPECT_EQ(g.count(g.land(g.available(0), g.available(1))), 6);  // 2 × 3
  EXPECT_EQ(g.count(g.lnot(g.available(1))), 3);                  // x1 = NONE
  EXPECT_EQ(g.count(g.lor(g.eq(0, 0), g.eq(1, 0))), 4 + 3 - 1);   // inclusion–exclusion
}

TEST(DecisionGraph, ReducedAndHashConsed) {
  G g({3, 3});
  NodeId a = g.eq(0, 1);
  EXPECT_EQ(a, g.eq(0, 1));
  EXPECT_EQ(g.land(a, g.lnot(a)), G::kFalse);
  EXPECT_EQ(g.lor(a, g.lnot(a)), G::kTrue);
  NodeId b = g.eq(1, 2);
  // De Morgan gives the same node, not just the same function.
  EXPECT_EQ(g.lnot(g.land(a, b)), g.lor(g.lnot(a), g.lnot(b)));
  // The disjunction of every value of a variable is the constant true.
  NodeId all = G::kFalse;
  for (std::uint32_t c = 0; c < 3; ++c) all = g.lor(all, g.eq(0, c));
  EXPECT_EQ(g.lor(all, g.lnot(g.available(0))), G::kTrue);
  EXPECT_EQ(all, g.available(0));
}

TEST(DecisionGraph, CompilesConditions) {
  G g({2, 2});
  Condition any;
  any.op = Condition::Op::kAny;
  any.operands = {Condition::eq(0, 0), Condition::eq(1, 1)};
  Condition neg;
  neg.op = Condition::Op::kNot;
  neg.operands = {any};
  NodeId f = g.compile(neg);
  // Not (x0 = 0 or x1 = 1): x0 ∈ {1, NONE}, x1 ∈ {0, NONE}: 2 × 2.
  EXPECT_EQ(g.count(f), 4);
  EXPECT_TRUE(g.eval(f, {1, 0}));
  EXPECT_TRUE(g.eval(f, {2, 2}));
  EXPECT_FALSE(g.eval(f, {0, 0}));
  // eq on NONE is false: not(eq) is true there.
  EXPECT_FALSE(g.eval(g.compile(Condition::eq(0, 0)), {2, 0}));
  // Out-of-range references compile to false instead of crashing.
  EXPECT_EQ(g.compile(Condition::eq(5, 0)), G::kFalse);
  EXPECT_EQ(g.compile(Condition::eq(0, 2)), G::kFalse);
}

TEST(DecisionGraph, CountBeyondSixtyFourBits) {
  // 64 groups of 64 choices, all available: 64^64 = 2^384 combinations.
  G g(std::vector<std::uint32_t>(64, 64));
  NodeId all = G::kTrue;
  for (std::size_t v = 0; v < 64; ++v) all = g.land(all, g.available(v));
  EXPECT_EQ(g.count(all), BigCount(1) << 384);
  // Every node created counts: 2 terminals, 64 available(v) nodes, and the
  // step conjoining available(v) rebuilds the chain above it (v new nodes,
  // the bottom reuses available(v)): 2 + 64 + (1 + … + 63) = 2082.
  EXPECT_EQ(g.node_count(), 2082u);
}

TEST(DecisionGraph, WitnessSatisfiesAndPrefersFill) {
  G g({3, 3, 3});
  NodeId f = g.land(g.lor(g.eq(0, 2), g.eq(1, 1)), g.lnot(g.available(2)));
  Assignment fill{2, 0, 0};
  auto x = g.witness(f, &fill);
  ASSERT_TRUE(x.has_value());
  EXPECT_TRUE(g.eval(f, *x));
  EXPECT_EQ((*x)[0], 2u);  // the fill value works, so it is kept
  EXPECT_EQ((*x)[2], 3u);  // NONE is forced
  EXPECT_FALSE(g.witness(G::kFalse).has_value());
}

TEST(DecisionGraph, NodeLimitIsACleanError) {
  // x_i == x_{7−i} for i < 4 over 16 choices: after the first four variables
  // the graph must remember 17^4 prefixes, far beyond a limit of 1000.
  G g(std::vector<std::uint32_t>(8, 16), 1000);
  NodeId f = G::kTrue;
  for (std::size_t i = 0; i < 4; ++i) {
    NodeId same = G::kFalse;
    for (std::uint32_t c = 0; c < 16; ++c) same = g.lor(same, g.land(g.eq(i, c), g.eq(7 - i, c)));
    f = g.land(f, same);
  }
  EXPECT_TRUE(g.exhausted());
  EXPECT_EQ(f, G::kFalse);
  EXPECT_LE(g.node_count(), 1000u);
  ASSERT_FALSE(g.status().ok());
  EXPECT_EQ(g.status().error().code, "BEM_DECISION_GRAPH_TOO_LARGE");
}

TEST(DecisionGraph, MaximizeWeightedSum) {
  // Three groups {0, 1}, all available. Terms: x0=1 (5), x0=0∧x1=1 (7),
  // x1=1 (1), x2=0 (2). By hand: x0=1 gives at most 5+1+2 = 8; x0=0, x1=1,
  // x2=0 gives 7+1+2 = 10, the maximum.
  G g({2, 2, 2});
  NodeId domain = g.land(g.available(0), g.land(g.available(1), g.available(2)));
  std::vector<WeightedTerm> terms{
      {g.eq(0, 1), 5}, {g.land(g.eq(0, 0), g.eq(1, 1)), 7}, {g.eq(1, 1), 1}, {g.eq(2, 0), 2}};
  auto r = maximize_sum(g, domain, terms);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->value, 10u);
  EXPECT_EQ(r->witness, (Assignment{0, 1, 0}));
  // Restricting the domain to x0 = 1 gives 8.
  auto r1 = maximize_sum(g, g.land(domain, g.eq(0, 1)), terms);
  ASSERT_TRUE(r1.ok());
  EXPECT_EQ(r1->value, 8u);
  // Same function twice: the weights add up (term merging).
  std::vector<WeightedTerm> twice{{g.eq(2, 1), 3}, {g.eq(2, 1), 4}, {G::kTrue, 1}};
  auto r2 = maximize_sum(g, domain, twice);
  ASSERT_TRUE(r2.ok());
  EXPECT_EQ(r2->value, 8u);
  EXPECT_EQ(r2->witness[2], 1u);
}

TEST(DecisionGraph, MaximizeStateLimit) {
  // 12 binary groups, terms pairing group v with group v+6: the search holds
  // 1 initial state, 2 after x0 (NONE is outside the domain) and 4 after x1
  // (each term still open or not): more than a limit of 3.
  G g(std::vector<std::uint32_t>(12, 2));
  NodeId domain = G::kTrue;
  std::vector<WeightedTerm> terms;
  for (std::size_t v = 0; v < 12; ++v) {
    domain = g.land(domain, g.available(v));
    terms.push_back({g.land(g.eq(v, 1), g.eq((v + 6) % 12, 1)), 1});
  }
  auto r = maximize_sum(g, domain, terms, 3);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, "BEM_DECISION_GRAPH_TOO_LARGE");
  auto ok = maximize_sum(g, domain, terms);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->value, 12u);  // every x = 1 makes all 12 terms true
}

}  // namespace
}  // namespace charkit::bem
