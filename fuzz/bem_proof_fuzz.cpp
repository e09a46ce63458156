// libFuzzer target: the §6 selection proof over small models built directly
// from the input bytes (groups, availability, constraints, candidates,
// draws, slots, payload sizes). Must never crash or over-allocate; when the
// raw assignment space is at most 4096, the combination count and the draw
// and index maxima are checked against brute-force enumeration (abort on
// mismatch).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "charkit/bem/model.h"
#include "charkit/bem/proof.h"

namespace {

using namespace charkit::bem;

Condition never() {
  Condition c;
  c.op = Condition::Op::kFalse;
  return c;
}

class Input {
 public:
  Input(const std::uint8_t* d, std::size_t n) : d_(d), n_(n) {}
  std::uint32_t byte() { return pos_ < n_ ? d_[pos_++] : 0; }
  /// A value in [0, n) (n ≥ 1).
  std::uint32_t below(std::uint32_t n) { return byte() % n; }

 private:
  const std::uint8_t* d_;
  std::size_t n_;
  std::size_t pos_ = 0;
};

Condition condition(Input& in, const Model& m, std::uint32_t limit, int depth) {
  std::uint32_t kind = in.below(depth > 0 ? 7 : 4);
  if (kind == 0) return Condition::always();
  if (kind == 1 || limit == 0) return never();
  if (kind <= 3) {
    std::uint32_t g = in.below(limit);
    return Condition::eq(g, in.below(static_cast<std::uint32_t>(m.groups[g].choices.size())));
  }
  Condition c;
  c.op = kind == 4 ? Condition::Op::kAll : kind == 5 ? Condition::Op::kAny : Condition::Op::kNot;
  std::uint32_t n = c.op == Condition::Op::kNot ? 1 : 1 + in.below(3);
  for (std::uint32_t i = 0; i < n; ++i) c.operands.push_back(condition(in, m, limit, depth - 1));
  return c;
}

Model make_model(Input& in) {
  Model m;
  m.minor = static_cast<int>(in.below(6));
  const std::uint32_t groups = in.below(7);
  for (std::uint32_t g = 0; g < groups; ++g) {
    Group grp;
    grp.id = "g" + std::to_string(g);
    for (std::uint32_t c = 1 + in.below(4), k = 0; k < c; ++k)
      grp.choices.push_back("c" + std::to_string(k));
    grp.default_choice = in.below(static_cast<std::uint32_t>(grp.choices.size()));
    if (g > 0 && in.below(2)) grp.available_when = condition(in, m, g, 3);
    m.groups.push_back(grp);
  }
  for (std::uint32_t k = in.below(3); k > 0; --k)
    m.constraints.push_back(condition(in, m, groups, 3));
  for (int p = 0; p < 8; ++p) m.payload_sizes.push_back(std::uint64_t{in.byte()} << in.below(24));
  for (std::uint32_t t = 1 + in.below(3), i = 0; i < t; ++i) {
    Texture tex;
    tex.payload = in.below(9);  // 8: out of range, counted as 0 bytes
    m.textures.push_back(tex);
  }
  for (std::uint32_t s = in.below(3), i = 0; i < s; ++i) {
    TextureSlot slot;
    for (std::uint32_t k = 1 + in.below(3), j = 0; j < k; ++j) {
      SlotCandidate sc;
      sc.when = condition(in, m, groups, 2);
      if (in.below(2)) sc.texture = in.below(static_cast<std::uint32_t>(m.textures.size()));
      slot.candidates.push_back(sc);
    }
    m.slots.push_back(slot);
  }
  auto refs = [&] {
    std::vector<TextureRef> r;
    for (std::uint32_t n = in.below(3); n > 0; --n) {
      TextureRef t;
      t.is_slot = !m.slots.empty() && in.below(2);
      t.slot = t.is_slot ? in.below(static_cast<std::uint32_t>(m.slots.size())) : 0;
      t.texture = in.below(static_cast<std::uint32_t>(m.textures.size()));
      r.push_back(t);
    }
    return r;
  };
  for (std::uint32_t n = 1 + in.below(2), i = 0; i < n; ++i) {
    Mesh me;
    me.index_size = in.below(2) ? 2 : 4;
    for (int s = 0; s < 3; ++s) me.streams.push_back({4, in.below(8)});
    for (std::uint32_t d = in.below(4); d > 0; --d) {
      Draw dr;
      dr.when = condition(in, m, groups, 2);
      dr.indices = in.below(8);
      dr.count = 3 * in.byte();
      dr.textures = refs();
      me.draws.push_back(dr);
    }
    m.meshes.push_back(me);
  }
  for (std::uint32_t c = 1 + in.below(3), i = 0; i < c; ++i) {
    Component comp;
    for (std::uint32_t k = 1 + in.below(3), j = 0; j < k; ++j) {
      Candidate cand;
      cand.when = condition(in, m, groups, 2);
      cand.op = static_cast<Operation>(in.below(3));
      cand.mesh = in.below(static_cast<std::uint32_t>(m.meshes.size()) + 1);  // may be out of range
      if (cand.op == Operation::kKeep && in.below(2)) cand.overrides.push_back({0, "m", refs()});
      comp.candidates.push_back(cand);
    }
    m.components.push_back(comp);
  }
  return m;
}

// Brute force: every raw assignment, kept when it is an effective state.
void cross_check(const Model& m, const ProofSummary& p) {
  std::uint64_t space = 1;
  for (const auto& g : m.groups) space *= g.choices.size() + 1;
  if (space > 4096) return;
  std::vector<std::uint32_t> x(m.groups.size(), 0);
  std::uint64_t legal = 0, draws = 0, indices = 0;
  for (std::uint64_t n = 0; n < space; ++n) {
    std::uint64_t r = n;
    for (std::size_t i = 0; i < x.size(); ++i) {
      x[i] = static_cast<std::uint32_t>(r % (m.groups[i].choices.size() + 1));
      r /= m.groups[i].choices.size() + 1;
    }
    EffectiveValues v;
    bool ok = true;
    for (std::size_t i = 0; i < x.size(); ++i) {
      bool avail = !m.groups[i].available_when || evaluate(*m.groups[i].available_when, v);
      bool none = x[i] == m.groups[i].choices.size();
      ok = ok && avail != none;
      v.push_back(none ? std::nullopt : std::optional<std::uint32_t>(x[i]));
    }
    for (const auto& c : m.constraints) ok = ok && evaluate(c, v);
    if (!ok) continue;
    ++legal;
    std::uint64_t d = 0, ix = 0;
    for (const auto& comp : m.components)
      for (const auto& cand : comp.candidates) {
        if (cand.op != Operation::kReplace || cand.mesh >= m.meshes.size()) continue;
        if (!evaluate(cand.when, v)) continue;
        for (const auto& dr : m.meshes[cand.mesh].draws)
          if (evaluate(dr.when, v)) {
            ++d;
            ix += dr.count;
          }
      }
    draws = std::max(draws, d);
    indices = std::max(indices, ix);
  }
  if (p.combinations != std::to_string(legal)) std::abort();
  if (legal == 0) return;
  if (!p.has_worst_cases || p.draws.value != draws || p.indices.value != indices) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Input in(data, size);
  Model m = make_model(in);
  ProofOptions options;
  // A small limit now and then, so the too-large path runs too.
  if (size > 0 && data[0] == 0xFF) options.node_limit = 64;
  auto r = prove_selections(m, options);
  if (!r) return 0;
  if (options.node_limit != 64) cross_check(m, *r);
  return 0;
}
