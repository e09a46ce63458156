// The §6 selection proof on generated models of realistic structure at the
// §11 maxima of structure: 64 option groups (an outfit of 16 choices, a
// colour of 64, 62 parts of 4 choices each available under two outfits),
// 16 components with one candidate per outfit, 64 meshes whose draws are
// gated by their parts, 8 texture slots with one candidate per colour.
// Reports the full proof time and the decision-graph node and search state
// counts. Run with --benchmark_repetitions=5 (median).
#include <benchmark/benchmark.h>

#include <random>
#include <string>

#include "charkit/bem/model.h"
#include "charkit/bem/proof.h"

namespace {

using namespace charkit::bem;

Condition any2(Condition a, Condition b) {
  Condition c;
  c.op = Condition::Op::kAny;
  c.operands = {std::move(a), std::move(b)};
  return c;
}

/// `outfits` outfit choices, `parts` part groups (4 choices each).
Model make_model(std::uint32_t outfits, std::uint32_t parts) {
  std::mt19937 rng(42);
  Model m;
  m.minor = 3;
  auto names = [](std::uint32_t n, const char* prefix) {
    std::vector<std::string> v;
    for (std::uint32_t i = 0; i < n; ++i) v.push_back(prefix + std::to_string(i));
    return v;
  };
  m.groups.push_back(Group{"outfit", "Outfit", names(outfits, "o"), 0, std::nullopt});
  m.groups.push_back(Group{"colour", "Colour", names(64, "c"), 0, std::nullopt});
  for (std::uint32_t p = 0; p < parts; ++p) {
    // Part p exists with two outfits (§6 chained availability).
    Condition avail = any2(Condition::eq(0, p % outfits), Condition::eq(0, (p + 5) % outfits));
    m.groups.push_back(
        Group{"part" + std::to_string(p), "Part", {"off", "v1", "v2", "v3"}, 0, avail});
  }
  const std::uint32_t meshes = 64, slots = 8, textures = 32;
  for (std::uint32_t t = 0; t < textures; ++t) {
    Texture tex;
    tex.payload = t;
    m.textures.push_back(tex);
  }
  for (std::uint32_t s = 0; s < slots; ++s) {
    TextureSlot slot;
    slot.id = "slot" + std::to_string(s);
    for (std::uint32_t c = 0; c < 64; ++c) {
      SlotCandidate sc;
      sc.when = Condition::eq(1, c);
      if (c % 4 != 0) sc.texture = (s * 7 + c) % textures;
      slot.candidates.push_back(sc);
    }
    m.slots.push_back(slot);
  }
  std::uint32_t next_payload = textures;
  for (std::uint32_t mi = 0; mi < meshes; ++mi) {
    Mesh me;
    me.index_size = 4;
    for (int s = 0; s < 3; ++s) me.streams.push_back({12, next_payload++});
    Draw base;
    base.indices = next_payload++;
    base.count = 3000;
    base.textures = {TextureRef{true, 0, mi % slots}, TextureRef{false, mi % textures, 0}};
    me.draws.push_back(base);
    // Two parts per mesh, three variants each.
    for (std::uint32_t k = 0; k < 2; ++k) {
      std::uint32_t part = 2 + (mi * 2 + k) % parts;
      for (std::uint32_t v = 1; v <= 3; ++v) {
        Draw d;
        d.when = Condition::eq(part, v);
        d.indices = next_payload++;
        d.count = 300 * v;
        d.textures = {TextureRef{true, 0, (mi + v) % slots}};
        me.draws.push_back(d);
      }
    }
    m.meshes.push_back(me);
  }
  for (std::uint32_t c = 0; c < 16; ++c) {
    Component comp;
    for (std::uint32_t o = 0; o < outfits; ++o) {
      Candidate cand;
      cand.when = Condition::eq(0, o);
      std::uint32_t kind = (c + o) % 5;
      cand.op = kind == 0 ? Operation::kKeep : kind == 1 ? Operation::kHide : Operation::kReplace;
      cand.mesh = (c * 5 + o * 3) % meshes;
      comp.candidates.push_back(cand);
    }
    m.components.push_back(comp);
  }
  for (std::uint32_t mi = 0; mi < meshes; mi += 4) {
    Deformation def;
    def.mesh = mi;
    def.frames = {{0, true, 0, 0}, {1000, false, next_payload++, 100}};
    m.deformations.push_back(def);
  }
  std::uniform_int_distribution<std::uint64_t> size(1000, 4u << 20);
  for (std::uint32_t p = 0; p < next_payload; ++p) m.payload_sizes.push_back(size(rng));
  return m;
}

void BM_ProveSelections(benchmark::State& state) {
  Model m = make_model(static_cast<std::uint32_t>(state.range(0)),
                       static_cast<std::uint32_t>(state.range(1)));
  std::size_t nodes = 0, states = 0;
  bool ok = true;
  for (auto _ : state) {
    auto r = prove_selections(m);
    ok = r.ok();
    if (ok) {
      nodes = r->nodes;
      states = r->states;
      benchmark::DoNotOptimize(r->draws.value);
    }
  }
  if (!ok) state.SkipWithError("proof failed (graph too large)");
  state.counters["groups"] = static_cast<double>(m.groups.size());
  state.counters["nodes"] = static_cast<double>(nodes);
  state.counters["states"] = static_cast<double>(states);
}
// 16 outfits × 64 colours × 62 parts = 64 groups; smaller sizes for scaling.
BENCHMARK(BM_ProveSelections)
    ->Args({16, 62})
    ->Args({16, 30})
    ->Args({8, 14})
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
