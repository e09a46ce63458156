// The §6 selection proof. Packages are written by hand from the spec (the
// package builder's valid package with its manifest edited); combination
// counts and worst cases are worked out by hand in the comments. The last
// tests compare every result with brute-force enumeration of small random
// models.
#include "charkit/bem/proof.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "charkit/bem/model.h"
#include "charkit/bem/validate.h"
#include "charkit/core/json.h"
#include "package_builder.h"

namespace charkit::bem {
namespace {

Condition never() {
  Condition c;
  c.op = Condition::Op::kFalse;
  return c;
}

using testkit::Json;
using testkit::TestPackage;

Json eq(const char* g, const char* c) {
  return Json{{"eq", Json::array({g, c})}};
}
Json all(Json a, Json b) {
  return Json{{"all", Json::array({std::move(a), std::move(b)})}};
}
Json any_of(Json list) {
  return Json{{"any", std::move(list)}};
}
Json not_(Json a) {
  return Json{{"not", std::move(a)}};
}

Json group(const char* id, std::vector<std::string> choices, const char* def,
           std::optional<Json> available_when = std::nullopt) {
  Json cs = Json::array();
  for (const auto& c : choices) cs.push_back(Json{{"id", c}, {"name", c}});
  Json g{{"id", id}, {"name", id}, {"default", def}, {"choices", cs}};
  if (available_when) g["available_when"] = *available_when;
  return g;
}

Json candidate(Json when, const char* op, std::optional<int> mesh = std::nullopt) {
  Json c{{"when", std::move(when)}, {"operation", op}};
  if (mesh) c["mesh"] = *mesh;
  return c;
}

Json& rules(TestPackage& p, int component) {
  return p.manifest["component_rules"][static_cast<std::size_t>(component)]["candidates"];
}

struct Checked {
  ValidationResult result;
  std::optional<Model> model;
};

// Validate the package (binary form) and build its model independently.
Checked check(const TestPackage& p) {
  Checked c;
  auto bytes = p.binary();
  c.result = validate_package(bytes);
  core::Report rep;
  auto pkg = Package::open(bytes, rep);
  if (pkg) {
    auto m = build_model(p.manifest, *pkg, p.minor);
    if (m) c.model = std::move(*m);
  }
  return c;
}

std::vector<const core::Issue*> errors_with(const core::Report& r, const std::string& code) {
  std::vector<const core::Issue*> out;
  for (const auto& i : r.issues())
    if (i.code == code) out.push_back(&i);
  return out;
}

std::string error_codes(const core::Report& r) {
  std::string s;
  for (const auto& i : r.issues())
    if (i.severity == core::Severity::kError) s += i.code + ": " + i.message + "\n";
  return s;
}

/// The runtime's reading of a settings string (§6): each group takes its
/// saved choice (or default), and is unavailable when its available_when is
/// false at the groups before it.
EffectiveValues parse_settings(const Model& m, const std::string& s) {
  std::map<std::string, std::string> saved;
  std::size_t pos = 0;
  while (pos <= s.size() && !s.empty()) {
    std::size_t amp = s.find('&', pos);
    std::string part = s.substr(pos, amp == std::string::npos ? std::string::npos : amp - pos);
    std::size_t colon = part.find(':');
    if (colon != std::string::npos) saved[part.substr(0, colon)] = part.substr(colon + 1);
    if (amp == std::string::npos) break;
    pos = amp + 1;
  }
  EffectiveValues v;
  for (const auto& g : m.groups) {
    std::uint32_t c = g.default_choice;
    if (auto it = saved.find(g.id); it != saved.end()) {
      auto f = std::find(g.choices.begin(), g.choices.end(), it->second);
      if (f != g.choices.end()) c = static_cast<std::uint32_t>(f - g.choices.begin());
    }
    bool avail = !g.available_when || evaluate(*g.available_when, v);
    v.push_back(avail ? std::optional<std::uint32_t>(c) : std::nullopt);
  }
  return v;
}

// ---- combination counts -------------------------------------------------

TEST(Proof, IndependentGroupsMultiply) {
  TestPackage p = testkit::make_valid_package(1);
  p.manifest["option_groups"].push_back(group("colour", {"c0", "c1", "c2"}, "c0"));
  auto c = check(p);
  ASSERT_TRUE(c.result.valid()) << error_codes(c.result.report);
  ASSERT_TRUE(c.result.summary.proof.has_value());
  EXPECT_EQ(c.result.summary.proof->combinations, "6");  // 2 outfits × 3 colours
}

TEST(Proof, ChainedAvailabilityCountsEffectiveStates) {
  // outfit a/b/c; part on/off only with outfit b; trim x/y only with part on.
  // a: 1, b: (on: 2 trims) + (off: 1) = 3, c: 1 → 5 effective states.
  TestPackage p = testkit::make_valid_package(1);
  p.manifest["option_groups"] = Json::array({group("outfit", {"a", "b", "c"}, "a"),
                                             group("part", {"on", "off"}, "on", eq("outfit", "b")),
                                             group("trim", {"x", "y"}, "x", eq("part", "on"))});
  rules(p, 0)[1]["when"] = not_(eq("outfit", "a"));
  auto c = check(p);
  ASSERT_TRUE(c.result.valid()) << error_codes(c.result.report);
  EXPECT_EQ(c.result.summary.proof->combinations, "5");
}

TEST(Proof, SelectionConstraintsCutCombinations) {
  // 2 × 3 = 6, minus outfit b with colour c2, minus outfit b with c1 → 4.
  TestPackage p = testkit::make_valid_package(1);
  p.manifest["option_groups"].push_back(group("colour", {"c0", "c1", "c2"}, "c0"));
  p.manifest["selection_constraints"] =
      Json::array({not_(all(eq("outfit", "b"), eq("colour", "c2"))),
                   not_(all(eq("outfit", "b"), eq("colour", "c1")))});
  auto c = check(p);
  ASSERT_TRUE(c.result.valid()) << error_codes(c.result.report);
  EXPECT_EQ(c.result.summary.proof->combinations, "4");
}

TEST(Proof, AppearanceStructureCountsAppearances) {
  TestPackage p = testkit::make_valid_package(0);
  Json second = p.manifest["appearances"][0];
  second["id"] = "outfit-b";
  second["components"][0] = Json{{"target", 0}, {"operation", "keep"}};
  p.manifest["appearances"].push_back(second);
  auto c = check(p);
  ASSERT_TRUE(c.result.valid()) << error_codes(c.result.report);
  const ProofSummary& s = *c.result.summary.proof;
  EXPECT_EQ(s.combinations, "2");
  // outfit-a replaces component 0 with the one draw; outfit-b keeps it.
  EXPECT_EQ(s.draws.value, 1u);
  EXPECT_EQ(s.draws.witness, "outfit-a");   // 1.0: the appearance id alone
  EXPECT_FALSE(s.draws.limit.has_value());  // §11: "—" for 1.0
  EXPECT_EQ(s.texture_bindings.limit, 32u);
  EXPECT_EQ(s.decoded_bytes.limit, 512u * 1024 * 1024);
}

// ---- exactly one candidate ------------------------------------------------

TEST(Proof, TwoTrueCandidatesFailWithARealWitness) {
  TestPackage p = testkit::make_valid_package(1);
  p.manifest["option_groups"].push_back(group("colour", {"c0", "c1", "c2"}, "c0"));
  // Component 1: "keep" always, and "hide" with colour c1: both at c1.
  rules(p, 1).push_back(candidate(eq("colour", "c1"), "hide"));
  auto c = check(p);
  EXPECT_FALSE(c.result.valid());
  auto errs = errors_with(c.result.report, "BEM_SELECTION_MULTIPLE_CANDIDATES");
  ASSERT_EQ(errs.size(), 1u) << error_codes(c.result.report);
  EXPECT_EQ(errs[0]->location.pointer, "/component_rules/1/candidates/1");
  EXPECT_EQ(errs[0]->section, "§6");
  ASSERT_TRUE(c.model.has_value());
  auto proof = prove_selections(*c.model);
  ASSERT_TRUE(proof.ok());
  ASSERT_EQ(proof->issues.size(), 1u);
  const ProofIssue& issue = proof->issues[0];
  EXPECT_NE(errs[0]->message.find(issue.witness), std::string::npos);
  EffectiveValues v = parse_settings(*c.model, issue.witness);
  const auto& cands = c.model->components[1].candidates;
  EXPECT_TRUE(evaluate(cands[0].when, v));
  EXPECT_TRUE(evaluate(cands[1].when, v));
}

TEST(Proof, GapHasNoCandidate) {
  TestPackage p = testkit::make_valid_package(1);
  p.manifest["option_groups"].push_back(group("colour", {"c0", "c1", "c2"}, "c0"));
  rules(p, 1) =
      Json::array({candidate(eq("colour", "c0"), "keep"), candidate(eq("colour", "c1"), "hide")});
  auto c = check(p);
  auto errs = errors_with(c.result.report, "BEM_SELECTION_NO_CANDIDATE");
  ASSERT_EQ(errs.size(), 1u) << error_codes(c.result.report);
  EXPECT_EQ(errs[0]->location.pointer, "/component_rules/1");
  ASSERT_TRUE(c.model.has_value());
  auto proof = prove_selections(*c.model);
  ASSERT_TRUE(proof.ok());
  ASSERT_EQ(proof->issues.size(), 1u);
  EffectiveValues v = parse_settings(*c.model, proof->issues[0].witness);
  for (const auto& cand : c.model->components[1].candidates) EXPECT_FALSE(evaluate(cand.when, v));
  EXPECT_EQ(v[1], std::optional<std::uint32_t>(2));  // only colour c2 has the gap
}

TEST(Proof, GapBehindUnavailableGroup) {
  // part exists only with outfit b; component 1 is keep when part on, hide
  // when part off: with outfit a the part has no value, so nothing is true.
  TestPackage p = testkit::make_valid_package(1);
  p.manifest["option_groups"].push_back(group("part", {"on", "off"}, "on", eq("outfit", "b")));
  rules(p, 1) =
      Json::array({candidate(eq("part", "on"), "keep"), candidate(eq("part", "off"), "hide")});
  auto c = check(p);
  auto errs = errors_with(c.result.report, "BEM_SELECTION_NO_CANDIDATE");
  ASSERT_EQ(errs.size(), 1u) << error_codes(c.result.report);
  // The witness names every group; the unavailable part is written with its default.
  EXPECT_NE(errs[0]->message.find("outfit:a&part:on"), std::string::npos) << errs[0]->message;
}

TEST(Proof, ReplacementWithoutSelectedDraw) {
  TestPackage p = testkit::make_valid_package(1);
  p.manifest["option_groups"].push_back(group("colour", {"c0", "c1"}, "c0"));
  p.manifest["meshes"][0]["draws"][0]["when"] = eq("colour", "c0");
  auto c = check(p);
  auto errs = errors_with(c.result.report, "BEM_SELECTION_NO_DRAW");
  ASSERT_EQ(errs.size(), 1u) << error_codes(c.result.report);
  EXPECT_EQ(errs[0]->location.pointer, "/component_rules/0/candidates/0");
  EXPECT_NE(errs[0]->message.find("outfit:a&colour:c1"), std::string::npos) << errs[0]->message;
}

// ---- texture slots ----------------------------------------------------------

TestPackage with_slot(Json candidates) {
  TestPackage p = testkit::make_valid_package(2);
  p.manifest["required_capabilities"].push_back("texture-slots");
  p.manifest["option_groups"].push_back(group("colour", {"c0", "c1", "c2"}, "c0"));
  p.manifest["texture_slots"] = Json::array({Json{{"id", "body_d"}, {"candidates", candidates}}});
  p.manifest["meshes"][0]["draws"][0]["textures"] = Json::array({Json{{"slot", "body_d"}}});
  return p;
}

TEST(Proof, SlotExactlyOne) {
  // c0 keeps the original (null), c1 and c2 bind texture 0.
  auto ok =
      check(with_slot(Json::array({Json{{"when", eq("colour", "c0")}, {"texture", nullptr}},
                                   Json{{"when", not_(eq("colour", "c0"))}, {"texture", 0}}})));
  ASSERT_TRUE(ok.result.valid()) << error_codes(ok.result.report);
  // Worst case: outfit a (mesh selected) with colour c1 or c2: one binding.
  EXPECT_EQ(ok.result.summary.proof->texture_bindings.value, 1u);
  EXPECT_EQ(ok.result.summary.proof->texture_bindings.limit, 64u);

  auto gap = check(with_slot(Json::array({Json{{"when", eq("colour", "c0")}, {"texture", nullptr}},
                                          Json{{"when", eq("colour", "c1")}, {"texture", 0}}})));
  auto errs = errors_with(gap.result.report, "BEM_SLOT_NO_CANDIDATE");
  ASSERT_EQ(errs.size(), 1u) << error_codes(gap.result.report);
  EXPECT_EQ(errs[0]->location.pointer, "/texture_slots/0");
  EXPECT_EQ(errs[0]->section, "§9");
  EXPECT_NE(errs[0]->message.find("colour:c2"), std::string::npos);

  auto two = check(with_slot(Json::array({Json{{"when", true}, {"texture", nullptr}},
                                          Json{{"when", eq("colour", "c2")}, {"texture", 0}}})));
  errs = errors_with(two.result.report, "BEM_SLOT_MULTIPLE_CANDIDATES");
  ASSERT_EQ(errs.size(), 1u) << error_codes(two.result.report);
  EXPECT_EQ(errs[0]->location.pointer, "/texture_slots/0/candidates/1");
  EXPECT_NE(errs[0]->message.find("colour:c2"), std::string::npos);
}

// ---- worst cases --------------------------------------------------------------

// Mesh 0 with one ungated draw plus `per_group` draws gated by p:on and as
// many gated by q:on, all sharing index payload 3, without textures.
TestPackage gated_draws(int minor, int per_group) {
  TestPackage p = testkit::make_valid_package(minor);
  p.manifest["option_groups"].push_back(group("p", {"on", "off"}, "off"));
  p.manifest["option_groups"].push_back(group("q", {"on", "off"}, "off"));
  Json& draws = p.manifest["meshes"][0]["draws"];
  Json d = draws[0];
  d["textures"] = Json::array();
  for (const char* g : {"p", "q"})
    for (int i = 0; i < per_group; ++i) {
      d["when"] = eq(g, "on");
      draws.push_back(d);
    }
  return p;
}

TEST(Proof, SelectedDrawLimitOnlyInSomeCombination) {
  // One ungated draw plus 129 per group: 1 + 129 + 129 = 259 > 256, reached
  // only with p:on and q:on (either alone gives 130).
  auto c = check(gated_draws(2, 129));
  auto errs = errors_with(c.result.report, "BEM_SELECTED_DRAW_LIMIT");
  ASSERT_EQ(errs.size(), 1u) << error_codes(c.result.report);
  EXPECT_NE(errs[0]->message.find("Selected draw limit exceeded"), std::string::npos);
  EXPECT_NE(errs[0]->message.find("outfit:a&p:on&q:on"), std::string::npos) << errs[0]->message;
  EXPECT_EQ(errs[0]->section, "§11");
  ASSERT_TRUE(c.model.has_value());
  auto proof = prove_selections(*c.model);
  ASSERT_TRUE(proof.ok());
  EXPECT_EQ(proof->draws.value, 259u);
  EXPECT_EQ(proof->indices.value, 259u * 3);
  EXPECT_EQ(proof->combinations, "8");  // 2 × 2 × 2

  // 1 + 2 × 127 = 255 ≤ 256: valid.
  auto fits = check(gated_draws(2, 127));
  ASSERT_TRUE(fits.result.valid()) << error_codes(fits.result.report);
  EXPECT_EQ(fits.result.summary.proof->draws.value, 255u);
  EXPECT_EQ(fits.result.summary.proof->draws.witness, "outfit:a&p:on&q:on");
}

// Component 0 replaced by mesh 0 with `n` ungated draws, each binding texture 0.
TestPackage bound_draws(int minor, int n, bool replace_both) {
  TestPackage p = testkit::make_valid_package(minor);
  Json& draws = p.manifest["meshes"][0]["draws"];
  Json d = draws[0];
  for (int i = 1; i < n; ++i) draws.push_back(d);
  if (replace_both) rules(p, 1)[0] = candidate(true, "replace", 0);
  return p;
}

TEST(Proof, TextureBindingLimitPerVersion) {
  // 33 bindings: over 32 in 1.1, within 64 in 1.2.
  auto v11 = check(bound_draws(1, 33, false));
  ASSERT_EQ(errors_with(v11.result.report, "BEM_TEXTURE_BINDING_LIMIT").size(), 1u)
      << error_codes(v11.result.report);
  auto v12 = check(bound_draws(2, 33, false));
  ASSERT_TRUE(v12.result.valid()) << error_codes(v12.result.report);
  EXPECT_EQ(v12.result.summary.proof->texture_bindings.value, 33u);
  // Q12: a mesh replacing two components counts twice: 17 draws, 34 bindings.
  auto twice = check(bound_draws(1, 17, true));
  auto errs = errors_with(twice.result.report, "BEM_TEXTURE_BINDING_LIMIT");
  ASSERT_EQ(errs.size(), 1u) << error_codes(twice.result.report);
  EXPECT_NE(errs[0]->message.find("34"), std::string::npos);
  auto once = check(bound_draws(1, 17, false));
  ASSERT_TRUE(once.result.valid()) << error_codes(once.result.report);
  EXPECT_EQ(once.result.summary.proof->texture_bindings.value, 17u);
  EXPECT_EQ(once.result.summary.proof->draws.value, 17u);
}

TEST(Proof, DecodedBytesCountSharedPayloadsOnce) {
  // Payload sizes of the base package: streams 36 + 24 + 12, indices 6,
  // texture 64. Outfit a replaces component 0 with mesh 0.
  auto one = check(testkit::make_valid_package(1));
  ASSERT_TRUE(one.result.valid()) << error_codes(one.result.report);
  const ProofSummary& s = *one.result.summary.proof;
  EXPECT_EQ(s.decoded_bytes.value, 36u + 24 + 12 + 6 + 64);
  EXPECT_EQ(s.decoded_bytes.witness, "outfit:a");
  // Resident: the mesh copy (streams + 3 indices × 2 bytes) + the texture.
  EXPECT_EQ(s.resident_bytes.value, 72u + 6 + 64);
  EXPECT_EQ(s.decoded_bytes.limit, 768u * 1024 * 1024);

  // Both components replaced by mesh 0: payloads are read once (decoded
  // unchanged), the geometry is resident per component, the texture once.
  auto both = check(bound_draws(1, 1, true));
  ASSERT_TRUE(both.result.valid()) << error_codes(both.result.report);
  const ProofSummary& b = *both.result.summary.proof;
  EXPECT_EQ(b.decoded_bytes.value, 142u);
  EXPECT_EQ(b.resident_bytes.value, 2 * (72u + 6) + 64);
  EXPECT_EQ(b.draws.value, 2u);
  EXPECT_EQ(b.indices.value, 6u);
  EXPECT_EQ(b.texture_bindings.value, 2u);
}

TEST(Proof, ByteLimitsOnAHandBuiltModel) {
  // One group {a, b}; one component replaced by mesh 0 at a, by mesh 1 at b.
  // Mesh 0's streams are 3 × 200 MiB (payloads 0..2), mesh 1's 3 × 100 MiB.
  Model m;
  m.minor = 1;  // 768 MiB
  m.groups.push_back(Group{"outfit", "Outfit", {"a", "b"}, 0, std::nullopt});
  for (std::uint32_t mesh = 0; mesh < 2; ++mesh) {
    Mesh me;
    me.index_size = 2;
    for (std::uint32_t s = 0; s < 3; ++s) me.streams.push_back({4, mesh * 3 + s});
    Draw d;
    d.indices = 6;
    d.count = 3;
    me.draws.push_back(d);
    m.meshes.push_back(me);
  }
  Component comp;
  for (std::uint32_t c = 0; c < 2; ++c) {
    Candidate cand;
    cand.when = Condition::eq(0, c);
    cand.op = Operation::kReplace;
    cand.mesh = c;
    cand.pointer = "/component_rules/0/candidates/" + std::to_string(c);
    comp.candidates.push_back(cand);
  }
  m.components.push_back(comp);
  const std::uint64_t mib = 1024 * 1024;
  m.payload_sizes = {200 * mib, 200 * mib, 200 * mib, 100 * mib, 100 * mib, 100 * mib, 6};
  auto r = prove_selections(m);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->decoded_bytes.value, 600 * mib + 6);  // outfit a
  EXPECT_EQ(r->decoded_bytes.witness, "outfit:a");
  EXPECT_TRUE(r->issues.empty());  // 600 MiB ≤ 768 MiB
  m.minor = 0;                     // 512 MiB
  r = prove_selections(m);
  ASSERT_TRUE(r.ok());
  std::set<std::string> codes;
  for (const auto& i : r->issues) codes.insert(i.code);
  EXPECT_EQ(codes, (std::set<std::string>{"BEM_DECODED_BYTES_LIMIT", "BEM_RESIDENT_BYTES_LIMIT"}));
}

TEST(Proof, NodeLimitIsACleanError) {
  // Ten groups of 16 choices with x_i == x_{9−i}: the graph must tell 16^5
  // prefixes apart, more than 250,000 nodes.
  TestPackage p = testkit::make_valid_package(1);
  std::vector<std::string> choices;
  for (int c = 0; c < 16; ++c) choices.push_back("c" + std::to_string(c));
  Json groups = Json::array();
  for (int i = 0; i < 10; ++i)
    groups.push_back(group(("g" + std::to_string(i)).c_str(), choices, "c0"));
  groups[0]["id"] = "outfit";  // the rules refer to outfit a/b
  groups[0]["choices"][0]["id"] = "a";
  groups[0]["choices"][1]["id"] = "b";
  groups[0]["default"] = "a";
  p.manifest["option_groups"] = groups;
  Json constraints = Json::array();
  for (int i = 0; i < 5; ++i) {
    Json same = Json::array();
    for (int c = 0; c < 16; ++c) {
      const Json& left = groups[static_cast<std::size_t>(i)];
      auto gi = left["id"].get<std::string>();
      auto gj = groups[static_cast<std::size_t>(9 - i)]["id"].get<std::string>();
      auto ci = left["choices"][static_cast<std::size_t>(c)]["id"].get<std::string>();
      std::string cj = "c" + std::to_string(c);
      same.push_back(all(eq(gi.c_str(), ci.c_str()), eq(gj.c_str(), cj.c_str())));
    }
    constraints.push_back(any_of(same));
  }
  p.manifest["selection_constraints"] = constraints;
  rules(p, 0)[1]["when"] = not_(eq("outfit", "a"));
  auto c = check(p);
  auto errs = errors_with(c.result.report, "BEM_DECISION_GRAPH_TOO_LARGE");
  ASSERT_EQ(errs.size(), 1u) << error_codes(c.result.report);
  EXPECT_FALSE(c.result.summary.proof.has_value());
}

// ---- brute force ------------------------------------------------------------

/// Small random models: every result of the proof is compared with an
/// enumeration of all combinations that implements docs/bem/proof.md directly.
class RandomModel {
 public:
  explicit RandomModel(std::uint32_t seed) : rng_(seed) {}

  Model make() {
    Model m;
    m.minor = static_cast<int>(pick(1, 3));
    const std::uint32_t groups = pick(1, 4);
    for (std::uint32_t g = 0; g < groups; ++g) {
      Group grp;
      grp.id = "g" + std::to_string(g);
      for (std::uint32_t c = pick(1, 3), k = 0; k < c; ++k)
        grp.choices.push_back("c" + std::to_string(k));
      grp.default_choice = pick(0, static_cast<std::uint32_t>(grp.choices.size()) - 1);
      if (g > 0 && pick(0, 2) == 0) grp.available_when = condition(m, g, 2);
      m.groups.push_back(grp);
    }
    for (std::uint32_t k = pick(0, 2); k > 0; --k) m.constraints.push_back(condition(m, groups, 2));
    for (std::uint32_t t = pick(1, 3), i = 0; i < t; ++i) {
      Texture tex;
      tex.payload = pick(0, 7);
      m.textures.push_back(tex);
    }
    for (std::uint32_t s = pick(0, 2), i = 0; i < s; ++i) {
      TextureSlot slot;
      slot.id = "s" + std::to_string(i);
      for (std::uint32_t k = pick(1, 3), j = 0; j < k; ++j) {
        SlotCandidate sc;
        sc.when = condition(m, groups, 2);
        if (pick(0, 2)) sc.texture = pick(0, static_cast<std::uint32_t>(m.textures.size()) - 1);
        slot.candidates.push_back(sc);
      }
      m.slots.push_back(slot);
    }
    for (std::uint32_t n = pick(1, 2), i = 0; i < n; ++i) {
      Mesh me;
      me.index_size = pick(0, 1) ? 2 : 4;
      for (std::uint32_t s = 0; s < 3; ++s) me.streams.push_back({4, pick(0, 7)});
      for (std::uint32_t d = pick(0, 3); d > 0; --d) {
        Draw dr;
        dr.when = pick(0, 1) ? Condition::always() : condition(m, groups, 2);
        dr.indices = pick(0, 7);
        dr.count = 3 * pick(1, 5);
        dr.textures = texture_refs(m);
        me.draws.push_back(dr);
      }
      m.meshes.push_back(me);
    }
    for (std::uint32_t c = pick(1, 3), i = 0; i < c; ++i) {
      Component comp;
      for (std::uint32_t k = pick(1, 3), j = 0; j < k; ++j) {
        Candidate cand;
        cand.when = condition(m, groups, 2);
        cand.op = static_cast<Operation>(pick(0, 2));
        cand.mesh = pick(0, static_cast<std::uint32_t>(m.meshes.size()) - 1);
        if (cand.op == Operation::kKeep && pick(0, 1))
          cand.overrides.push_back(KeepOverride{0, "m", texture_refs(m)});
        cand.pointer = "/component_rules/" + std::to_string(i) + "/candidates/" + std::to_string(j);
        comp.candidates.push_back(cand);
      }
      m.components.push_back(comp);
    }
    if (pick(0, 1)) {
      Deformation def;
      def.mesh = pick(0, static_cast<std::uint32_t>(m.meshes.size()) - 1);
      def.frames.push_back({0, true, 0, 0});
      def.frames.push_back({1000, false, pick(0, 7), 1});
      m.deformations.push_back(def);
    }
    for (int p = 0; p < 8; ++p) m.payload_sizes.push_back(pick(0, 1000));
    return m;
  }

 private:
  std::uint32_t pick(std::uint32_t lo, std::uint32_t hi) {
    return std::uniform_int_distribution<std::uint32_t>(lo, hi)(rng_);
  }
  // A condition over groups [0, limit).
  Condition condition(const Model& m, std::uint32_t limit, int depth) {
    std::uint32_t kind = pick(0, depth > 0 ? 6 : 2);
    if (limit == 0 || kind == 0) return pick(0, 3) ? Condition::always() : never();
    if (kind <= 3) {
      std::uint32_t g = pick(0, limit - 1);
      return Condition::eq(g, pick(0, static_cast<std::uint32_t>(m.groups[g].choices.size()) - 1));
    }
    Condition c;
    c.op = kind == 4 ? Condition::Op::kAll : kind == 5 ? Condition::Op::kAny : Condition::Op::kNot;
    std::uint32_t n = c.op == Condition::Op::kNot ? 1 : pick(1, 3);
    for (std::uint32_t i = 0; i < n; ++i) c.operands.push_back(condition(m, limit, depth - 1));
    return c;
  }
  std::vector<TextureRef> texture_refs(const Model& m) {
    std::vector<TextureRef> refs;
    for (std::uint32_t n = pick(0, 2); n > 0; --n) {
      TextureRef r;
      if (!m.slots.empty() && pick(0, 1)) {
        r.is_slot = true;
        r.slot = pick(0, static_cast<std::uint32_t>(m.slots.size()) - 1);
      } else {
        r.texture = pick(0, static_cast<std::uint32_t>(m.textures.size()) - 1);
      }
      refs.push_back(r);
    }
    return refs;
  }
  std::mt19937 rng_;
};

struct Sums {
  std::uint64_t draws = 0, indices = 0, bindings = 0, decoded = 0, resident = 0;
};

// docs/bem/proof.md, "What each sum counts", written out for one state.
Sums sums_at(const Model& m, const EffectiveValues& v) {
  Sums s;
  std::set<std::uint32_t> payloads, textures, frames;
  std::set<std::uint32_t> meshes;
  auto size = [&](std::uint32_t p) { return p < m.payload_sizes.size() ? m.payload_sizes[p] : 0; };
  auto bind = [&](const std::vector<TextureRef>& refs) {
    for (const auto& r : refs) {
      if (!r.is_slot) {
        ++s.bindings;
        textures.insert(r.texture);
        continue;
      }
      for (const auto& sc : m.slots[r.slot].candidates)
        if (sc.texture && evaluate(sc.when, v)) {
          ++s.bindings;
          textures.insert(*sc.texture);
        }
    }
  };
  for (const auto& comp : m.components)
    for (const auto& cand : comp.candidates) {
      if (!evaluate(cand.when, v)) continue;
      if (cand.op == Operation::kKeep)
        for (const auto& ov : cand.overrides) bind(ov.textures);
      if (cand.op != Operation::kReplace) continue;
      const Mesh& me = m.meshes[cand.mesh];
      meshes.insert(cand.mesh);
      for (const auto& st : me.streams) {
        s.resident += size(st.payload);
        payloads.insert(st.payload);
      }
      for (const auto& d : me.draws) {
        if (!evaluate(d.when, v)) continue;
        ++s.draws;
        s.indices += d.count;
        s.resident += std::uint64_t{d.count} * me.index_size;
        payloads.insert(d.indices);
        bind(d.textures);
      }
    }
  for (const auto& def : m.deformations)
    if (meshes.count(def.mesh))
      for (const auto& f : def.frames)
        if (!f.neutral) frames.insert(f.payload);
  for (auto t : textures) {
    payloads.insert(m.textures[t].payload);
    s.resident += size(m.textures[t].payload);
  }
  for (auto f : frames) {
    payloads.insert(f);
    s.resident += size(f);
  }
  for (auto p : payloads) s.decoded += size(p);
  return s;
}

TEST(Proof, MatchesBruteForceOnRandomModels) {
  int with_issues = 0, clean = 0;
  for (std::uint32_t seed = 1; seed <= 300; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Model m = RandomModel(seed).make();
    auto proof = prove_selections(m);
    ASSERT_TRUE(proof.ok());

    // Enumerate raw values (choice or NONE) and keep the effective states:
    // a group has a value exactly when it is available (§6).
    std::vector<std::uint32_t> x(m.groups.size(), 0);
    std::uint64_t legal = 0;
    Sums best;
    std::set<std::string> expected;  // code + pointer
    bool done = m.groups.empty();
    for (bool first = true; first || !done; first = false) {
      EffectiveValues v;
      bool consistent = true;
      for (std::size_t i = 0; i < m.groups.size(); ++i) {
        bool avail = !m.groups[i].available_when || evaluate(*m.groups[i].available_when, v);
        bool none = x[i] == m.groups[i].choices.size();
        if (avail == none) consistent = false;
        v.push_back(none ? std::nullopt : std::optional<std::uint32_t>(x[i]));
      }
      for (const auto& c : m.constraints) consistent = consistent && evaluate(c, v);
      if (consistent) {
        ++legal;
        for (std::size_t c = 0; c < m.components.size(); ++c) {
          int n = 0;
          for (std::size_t k = 0; k < m.components[c].candidates.size(); ++k) {
            const Candidate& cand = m.components[c].candidates[k];
            if (!evaluate(cand.when, v)) continue;
            ++n;
            if (cand.op == Operation::kReplace &&
                std::none_of(m.meshes[cand.mesh].draws.begin(), m.meshes[cand.mesh].draws.end(),
                             [&](const Draw& d) { return evaluate(d.when, v); }))
              expected.insert("BEM_SELECTION_NO_DRAW " + cand.pointer);
          }
          if (n == 0) expected.insert("BEM_SELECTION_NO_CANDIDATE " + std::to_string(c));
          if (n > 1) expected.insert("BEM_SELECTION_MULTIPLE_CANDIDATES " + std::to_string(c));
        }
        for (std::size_t s = 0; s < m.slots.size(); ++s) {
          int n = 0;
          for (const auto& sc : m.slots[s].candidates) n += evaluate(sc.when, v) ? 1 : 0;
          if (n == 0) expected.insert("BEM_SLOT_NO_CANDIDATE " + std::to_string(s));
          if (n > 1) expected.insert("BEM_SLOT_MULTIPLE_CANDIDATES " + std::to_string(s));
        }
        Sums at = sums_at(m, v);
        best.draws = std::max(best.draws, at.draws);
        best.indices = std::max(best.indices, at.indices);
        best.bindings = std::max(best.bindings, at.bindings);
        best.decoded = std::max(best.decoded, at.decoded);
        best.resident = std::max(best.resident, at.resident);
      }
      // Next raw assignment (odometer).
      std::size_t i = 0;
      while (i < x.size() && ++x[i] > m.groups[i].choices.size()) x[i++] = 0;
      done = i == x.size();
    }
    // The default state, evaluated in order.
    {
      EffectiveValues v;
      for (const auto& g : m.groups)
        v.push_back(!g.available_when || evaluate(*g.available_when, v)
                        ? std::optional<std::uint32_t>(g.default_choice)
                        : std::nullopt);
      bool ok = true;
      for (const auto& c : m.constraints) ok = ok && evaluate(c, v);
      if (!ok) expected.insert("BEM_SELECTION_DEFAULT_ILLEGAL");
    }
    EXPECT_EQ(proof->combinations, std::to_string(legal));

    std::set<std::string> got;
    for (const auto& is : proof->issues) {
      if (is.section == "§11") continue;  // small sums: no limit issues expected
      std::string key = is.code;
      if (is.code == "BEM_SELECTION_NO_DRAW") {
        key += " " + is.pointer;
      } else if (is.code != "BEM_SELECTION_DEFAULT_ILLEGAL") {
        // "/component_rules/C…" or "/texture_slots/S…": the index.
        std::string rest = is.pointer.substr(is.pointer.find('/', 1) + 1);
        key += " " + rest.substr(0, rest.find('/'));
      }
      got.insert(key);
      // Every witness is a legal state that really shows the problem.
      if (is.code == "BEM_SELECTION_DEFAULT_ILLEGAL") continue;
      EffectiveValues v = parse_settings(m, is.witness);
      for (const auto& c : m.constraints) EXPECT_TRUE(evaluate(c, v)) << key;
      if (is.code == "BEM_SELECTION_MULTIPLE_CANDIDATES" ||
          is.code == "BEM_SELECTION_NO_CANDIDATE") {
        std::size_t c = std::stoul(key.substr(key.rfind(' ') + 1));
        int n = 0;
        for (const auto& cand : m.components[c].candidates) n += evaluate(cand.when, v) ? 1 : 0;
        EXPECT_EQ(n > 1, is.code == "BEM_SELECTION_MULTIPLE_CANDIDATES") << key;
        EXPECT_EQ(n == 0, is.code == "BEM_SELECTION_NO_CANDIDATE") << key;
      }
    }
    EXPECT_EQ(got, expected);
    with_issues += expected.empty() ? 0 : 1;
    clean += expected.empty() ? 1 : 0;

    if (legal == 0) continue;
    ASSERT_TRUE(proof->has_worst_cases);
    EXPECT_EQ(proof->draws.value, best.draws);
    EXPECT_EQ(proof->indices.value, best.indices);
    EXPECT_EQ(proof->texture_bindings.value, best.bindings);
    EXPECT_EQ(proof->decoded_bytes.value, best.decoded);
    EXPECT_EQ(proof->resident_bytes.value, best.resident);
    // Each witness reaches its maximum.
    EXPECT_EQ(sums_at(m, parse_settings(m, proof->draws.witness)).draws, best.draws);
    EXPECT_EQ(sums_at(m, parse_settings(m, proof->indices.witness)).indices, best.indices);
    EXPECT_EQ(sums_at(m, parse_settings(m, proof->texture_bindings.witness)).bindings,
              best.bindings);
    EXPECT_EQ(sums_at(m, parse_settings(m, proof->decoded_bytes.witness)).decoded, best.decoded);
    EXPECT_EQ(sums_at(m, parse_settings(m, proof->resident_bytes.witness)).resident, best.resident);
  }
  // The generator must produce both clean and faulty models.
  EXPECT_GT(with_issues, 30);
  EXPECT_GT(clean, 5);
}

}  // namespace
}  // namespace charkit::bem
