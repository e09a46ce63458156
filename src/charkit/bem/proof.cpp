// §6 selection proof over the decision graph (decision_graph.h). Every
// question is a Boolean function of the option values, conjoined with Legal
// (the legal combinations); a non-false result has a path, and the path is
// the witness settings string. The §11 worst cases are weighted sums of
// such functions, maximised exactly by maximize_sum.
#include "charkit/bem/proof.h"

#include "charkit/bem/container.h"
#include "charkit/bem/detail/decision_graph.h"
#include "charkit/bem/error_codes.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>

namespace charkit::bem {

namespace {

constexpr std::uint64_t kMiB = 1024 * 1024;

/// §11 per-selection limits of one version.
struct Limits {
  std::optional<std::uint64_t> draws;  ///< 1.0: "—" (no selected-draw limit)
  std::uint64_t indices = 16'777'216;
  std::uint64_t bindings = 32;
  std::uint64_t bytes = 512 * kMiB;  ///< decoded and resident alike
};

Limits limits_for(int minor) {
  Limits l;
  if (minor >= 1) l.draws = 256;
  l.bindings = minor >= 2 ? 64 : 32;
  l.bytes = minor >= 2 ? 1536 * kMiB : minor == 1 ? 768 * kMiB : 512 * kMiB;
  return l;
}

/// The first worst case of `s` over `minor`'s limits, described; "" if none.
std::string over_limits(const ProofSummary& s, int minor) {
  const Limits l = limits_for(minor);
  if (l.draws && s.draws.value > *l.draws)
    return std::to_string(s.draws.value) + " draws in one selection (1." + std::to_string(minor) +
           " allows " + std::to_string(*l.draws) + ")";
  if (s.indices.value > l.indices) return "more selected indices than any version allows";
  if (s.texture_bindings.value > l.bindings)
    return std::to_string(s.texture_bindings.value) + " texture bindings in one selection (1." +
           std::to_string(minor) + " allows " + std::to_string(l.bindings) + ")";
  if (s.decoded_bytes.value > l.bytes)
    return std::to_string(s.decoded_bytes.value) + " decoded bytes in one selection (1." +
           std::to_string(minor) + " allows " + std::to_string(l.bytes / kMiB) + " MiB)";
  if (s.resident_bytes.value > l.bytes)
    return std::to_string(s.resident_bytes.value) + " resident bytes in one selection (1." +
           std::to_string(minor) + " allows " + std::to_string(l.bytes / kMiB) + " MiB)";
  return {};
}

std::vector<std::uint32_t> domain_sizes(const Model& m) {
  std::vector<std::uint32_t> k;
  k.reserve(m.groups.size());
  for (const auto& g : m.groups) k.push_back(static_cast<std::uint32_t>(g.choices.size()));
  return k;
}

std::string mib_text(std::uint64_t bytes) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / kMiB);
  return buf;
}

class Prover {
 public:
  Prover(const Model& m, const ProofOptions& o) : m_(m), o_(o), g_(domain_sizes(m), o.node_limit) {}

  core::Result<ProofSummary> run() {
    build_legal();
    if (g_.exhausted()) return g_.status().error();
    out_.combinations = g_.count(legal_).str();
    check_default();
    if (legal_ == DecisionGraph::kFalse) return finish();

    compile_rules();
    if (g_.exhausted()) return g_.status().error();
    check_components();
    check_slots();
    if (g_.exhausted()) return g_.status().error();
    if (o_.worst_cases) {
      auto st = worst_cases();
      if (!st) return std::move(st).error();
    }
    return finish();
  }

 private:
  ProofSummary finish() {
    out_.nodes = g_.node_count();
    return std::move(out_);
  }

  void issue(core::ErrorCode code, const char* section, std::string pointer,
             const std::string& what, const Assignment& x) {
    if (out_.issues.size() >= o_.max_issues) return;
    std::string w = settings_string(m_, x);
    out_.issues.push_back(
        {code, section, std::move(pointer), what + " (settings \"" + w + "\")", w});
  }

  std::string rule_pointer(std::size_t c) const {
    return m_.appearance_structure ? std::string("/appearances")
                                   : "/component_rules/" + std::to_string(c);
  }

  /// Legal = ∧_i (available_i ⇔ x_i ≠ NONE) ∧ ∧ selection_constraints.
  void build_legal() {
    legal_ = DecisionGraph::kTrue;
    for (std::size_t i = 0; i < m_.groups.size(); ++i) {
      const auto& grp = m_.groups[i];
      NodeId a = grp.available_when ? g_.compile(*grp.available_when) : DecisionGraph::kTrue;
      available_.push_back(a);
      legal_ = g_.land(legal_, g_.iff(a, g_.available(i)));
    }
    for (const auto& c : m_.constraints) {
      constraints_.push_back(g_.compile(c));
      legal_ = g_.land(legal_, constraints_.back());
    }
  }

  /// §6: every group at its default, unavailable groups without a value,
  /// availability evaluated in manifest order.
  void check_default() {
    default_.assign(m_.groups.size(), 0);
    for (std::size_t i = 0; i < m_.groups.size(); ++i) default_[i] = g_.none(i);
    for (std::size_t i = 0; i < m_.groups.size(); ++i) {
      const auto& grp = m_.groups[i];
      bool avail = g_.eval(available_[i], default_);
      if (avail && grp.default_choice < grp.choices.size()) default_[i] = grp.default_choice;
    }
    if (g_.eval(legal_, default_)) return;
    std::string ptr = "/option_groups";
    for (std::size_t k = 0; k < constraints_.size(); ++k)
      if (!g_.eval(constraints_[k], default_)) {
        ptr = "/selection_constraints/" + std::to_string(k);
        break;
      }
    issue(codes::BEM_SELECTION_DEFAULT_ILLEGAL, "§6", ptr,
          "the default combination (every group at its default) is not legal", default_);
  }

  void compile_rules() {
    cand_.resize(m_.components.size());
    for (std::size_t c = 0; c < m_.components.size(); ++c)
      for (const auto& cand : m_.components[c].candidates)
        cand_[c].push_back(g_.compile(cand.when));
    draw_.resize(m_.meshes.size());
    any_draw_.assign(m_.meshes.size(), DecisionGraph::kFalse);
    for (std::size_t mi = 0; mi < m_.meshes.size(); ++mi)
      for (const auto& d : m_.meshes[mi].draws) {
        draw_[mi].push_back(g_.compile(d.when));
        any_draw_[mi] = g_.lor(any_draw_[mi], draw_[mi].back());
      }
    slot_.resize(m_.slots.size());
    for (std::size_t s = 0; s < m_.slots.size(); ++s)
      for (const auto& sc : m_.slots[s].candidates) slot_[s].push_back(g_.compile(sc.when));
  }

  /// Exactly one of `whens` is true at every legal combination. Calls
  /// none(x) or two(j, k, x) for the first violation of each kind.
  template <class None, class Two>
  void exactly_one(const std::vector<NodeId>& whens, None none, Two two) {
    NodeId seen = DecisionGraph::kFalse;
    bool reported_two = false;
    for (std::size_t k = 0; k < whens.size(); ++k) {
      if (!reported_two) {
        NodeId both = g_.land(legal_, g_.land(seen, whens[k]));
        if (auto x = g_.witness(both, &default_)) {
          std::size_t j = 0;
          while (j < k && !g_.eval(whens[j], *x)) ++j;
          two(j, k, *x);
          reported_two = true;
        }
      }
      seen = g_.lor(seen, whens[k]);
    }
    if (auto x = g_.witness(g_.land(legal_, g_.lnot(seen)), &default_)) none(*x);
  }

  void check_components() {
    for (std::size_t c = 0; c < m_.components.size(); ++c) {
      const auto& comp = m_.components[c];
      exactly_one(
          cand_[c],
          [&](const Assignment& x) {
            issue(codes::BEM_SELECTION_NO_CANDIDATE, "§6", rule_pointer(c),
                  "no candidate of component " + std::to_string(c) + " is true", x);
          },
          [&](std::size_t j, std::size_t k, const Assignment& x) {
            issue(codes::BEM_SELECTION_MULTIPLE_CANDIDATES, "§6", comp.candidates[k].pointer,
                  "candidates " + std::to_string(j) + " and " + std::to_string(k) +
                      " of component " + std::to_string(c) + " are both true",
                  x);
          });
      // §6: a replacement mesh selects at least one draw.
      for (std::size_t k = 0; k < comp.candidates.size(); ++k) {
        const auto& cand = comp.candidates[k];
        if (cand.op != Operation::kReplace || cand.mesh >= m_.meshes.size()) continue;
        NodeId bad = g_.land(legal_, g_.land(cand_[c][k], g_.lnot(any_draw_[cand.mesh])));
        if (auto x = g_.witness(bad, &default_))
          issue(codes::BEM_SELECTION_NO_DRAW, "§6", cand.pointer,
                "candidate " + std::to_string(k) + " of component " + std::to_string(c) +
                    " replaces it with mesh " + std::to_string(cand.mesh) +
                    ", which selects no draw",
                *x);
      }
    }
  }

  void check_slots() {
    for (std::size_t s = 0; s < m_.slots.size(); ++s) {
      std::string ptr = "/texture_slots/" + std::to_string(s);
      const std::string& id = m_.slots[s].id;
      exactly_one(
          slot_[s],
          [&](const Assignment& x) {
            issue(codes::BEM_SLOT_NO_CANDIDATE, "§9", ptr,
                  "no candidate of texture slot \"" + id + "\" is true", x);
          },
          [&](std::size_t j, std::size_t k, const Assignment& x) {
            issue(codes::BEM_SLOT_MULTIPLE_CANDIDATES, "§9",
                  ptr + "/candidates/" + std::to_string(k),
                  "candidates " + std::to_string(j) + " and " + std::to_string(k) +
                      " of texture slot \"" + id + "\" are both true",
                  x);
          });
    }
  }

  std::uint64_t payload_size(std::uint32_t p) const {
    return p < m_.payload_sizes.size() ? m_.payload_sizes[p] : 0;
  }

  /// Calls bind(f, texture) for each texture a reference list binds when f
  /// holds: a fixed texture, or each non-null candidate of a slot (f ∧ its when).
  template <class Bind>
  void for_each_binding(NodeId f, const std::vector<TextureRef>& refs, Bind bind) {
    for (const auto& r : refs) {
      if (!r.is_slot) {
        bind(f, r.texture);
        continue;
      }
      if (r.slot >= m_.slots.size()) continue;
      const auto& cands = m_.slots[r.slot].candidates;
      for (std::size_t k = 0; k < cands.size(); ++k)
        if (cands[k].texture) bind(g_.land(f, slot_[r.slot][k]), *cands[k].texture);
    }
  }

  core::Status worst_cases() {
    const Limits lim = limits_for(m_.minor);
    std::vector<WeightedTerm> draws, indices, bindings, decoded, resident;
    std::map<std::uint32_t, NodeId> payload_used;  // decoded: payload → used
    std::map<std::uint32_t, NodeId> texture_used;  // resident: texture → bound
    std::map<std::uint32_t, NodeId> frame_used;    // resident: deformation payload → used
    auto use = [&](std::map<std::uint32_t, NodeId>& set, std::uint32_t key, NodeId f) {
      auto [it, inserted] = set.try_emplace(key, f);
      if (!inserted) it->second = g_.lor(it->second, f);
    };
    auto bind_texture = [&](NodeId f, std::uint32_t t) {
      bindings.push_back({f, 1});
      if (t >= m_.textures.size()) return;
      use(payload_used, m_.textures[t].payload, f);
      use(texture_used, t, f);
    };

    std::vector<NodeId> mesh_selected(m_.meshes.size(), DecisionGraph::kFalse);
    for (std::size_t c = 0; c < m_.components.size(); ++c) {
      const auto& comp = m_.components[c];
      for (std::size_t k = 0; k < comp.candidates.size(); ++k) {
        const auto& cand = comp.candidates[k];
        const NodeId when = cand_[c][k];
        if (cand.op == Operation::kKeep) {
          for (const auto& ov : cand.overrides) for_each_binding(when, ov.textures, bind_texture);
          continue;
        }
        if (cand.op != Operation::kReplace || cand.mesh >= m_.meshes.size()) continue;
        // Q12: each component renders its own copy of the mesh: draws,
        // indices, bindings and resident geometry count per component.
        const Mesh& mesh = m_.meshes[cand.mesh];
        mesh_selected[cand.mesh] = g_.lor(mesh_selected[cand.mesh], when);
        std::uint64_t stream_bytes = 0;
        for (const auto& s : mesh.streams) stream_bytes += payload_size(s.payload);
        resident.push_back({when, stream_bytes});
        for (std::size_t d = 0; d < mesh.draws.size(); ++d) {
          const Draw& dr = mesh.draws[d];
          NodeId f = g_.land(when, draw_[cand.mesh][d]);
          draws.push_back({f, 1});
          indices.push_back({f, dr.count});
          resident.push_back({f, std::uint64_t{dr.count} * mesh.index_size});
          use(payload_used, dr.indices, f);
          for_each_binding(f, dr.textures, bind_texture);
        }
      }
    }
    for (std::size_t mi = 0; mi < m_.meshes.size(); ++mi)
      for (const auto& s : m_.meshes[mi].streams) use(payload_used, s.payload, mesh_selected[mi]);
    // §11: "1.3 的预算按各通道全部帧保守计算" — every frame of every channel
    // of a selected replacement mesh, whatever the parameter's availability.
    for (const auto& def : m_.deformations) {
      if (def.mesh >= m_.meshes.size()) continue;
      for (const auto& fr : def.frames) {
        if (fr.neutral) continue;
        use(payload_used, fr.payload, mesh_selected[def.mesh]);
        use(frame_used, fr.payload, mesh_selected[def.mesh]);
      }
    }
    for (const auto& [p, f] : payload_used) decoded.push_back({f, payload_size(p)});
    for (const auto& [t, f] : texture_used)
      resident.push_back({f, payload_size(m_.textures[t].payload)});
    for (const auto& [p, f] : frame_used) resident.push_back({f, payload_size(p)});
    if (g_.exhausted()) return g_.status();

    struct Metric {
      std::vector<WeightedTerm>* terms;
      WorstCase* out;
      std::optional<std::uint64_t> limit;
    };
    Metric metrics[] = {{&draws, &out_.draws, lim.draws},
                        {&indices, &out_.indices, lim.indices},
                        {&bindings, &out_.texture_bindings, lim.bindings},
                        {&decoded, &out_.decoded_bytes, lim.bytes},
                        {&resident, &out_.resident_bytes, lim.bytes}};
    for (auto& mt : metrics) {
      auto r = maximize_sum(g_, legal_, *mt.terms, o_.node_limit);
      if (!r) return std::move(r).error();
      mt.out->value = r->value;
      mt.out->limit = mt.limit;
      mt.out->witness = settings_string(m_, r->witness);
      out_.states = std::max(out_.states, r->states);
    }
    out_.has_worst_cases = true;
    report_limit(out_.draws, codes::BEM_SELECTED_DRAW_LIMIT,
                 "Selected draw limit exceeded: " + std::to_string(out_.draws.value) +
                     " draws are selected at once");
    report_limit(out_.indices, codes::BEM_SELECTED_INDEX_LIMIT,
                 "selected index limit exceeded: " + std::to_string(out_.indices.value) +
                     " indices are selected at once");
    report_limit(out_.texture_bindings, codes::BEM_TEXTURE_BINDING_LIMIT,
                 "texture binding limit exceeded: " + std::to_string(out_.texture_bindings.value) +
                     " textures are bound at once");
    report_limit(
        out_.decoded_bytes, codes::BEM_DECODED_BYTES_LIMIT,
        "decoded data limit exceeded: one selection decodes " + mib_text(out_.decoded_bytes.value));
    report_limit(out_.resident_bytes, codes::BEM_RESIDENT_BYTES_LIMIT,
                 "resident resource limit exceeded: one selection keeps " +
                     mib_text(out_.resident_bytes.value) + " resident");
    return core::Ok{};
  }

  void report_limit(const WorstCase& w, core::ErrorCode code, const std::string& what) {
    if (!w.exceeded() || out_.issues.size() >= o_.max_issues) return;
    out_.issues.push_back({code, "§11", "",
                           what + " (§11: at most " + std::to_string(*w.limit) + " for BEM 1." +
                               std::to_string(m_.minor) + "; settings \"" + w.witness + "\")",
                           w.witness});
  }

  const Model& m_;
  const ProofOptions& o_;
  DecisionGraph g_;
  ProofSummary out_;
  NodeId legal_ = DecisionGraph::kFalse;
  std::vector<NodeId> available_;
  std::vector<NodeId> constraints_;
  Assignment default_;
  std::vector<std::vector<NodeId>> cand_;  // [component][candidate]
  std::vector<std::vector<NodeId>> draw_;  // [mesh][draw]
  std::vector<NodeId> any_draw_;           // [mesh]
  std::vector<std::vector<NodeId>> slot_;  // [slot][candidate]
};

}  // namespace

core::Result<ProofSummary> prove_selections(const Model& model, const ProofOptions& options) {
  Prover p(model, options);
  return p.run();
}

int lowest_minor_for_worst_cases(const ProofSummary& s, int from, std::string* why) {
  if (!s.has_worst_cases) return from;
  for (int m = from; m <= kMaxMinor; ++m) {
    if (!over_limits(s, m).empty()) continue;
    if (why != nullptr && m > from) *why = over_limits(s, m - 1);
    return m;
  }
  return from;
}

std::string settings_string(const Model& model, const Assignment& x) {
  auto choice_of = [&](std::size_t i) -> std::string {
    const Group& g = model.groups[i];
    std::uint32_t c = i < x.size() && x[i] < g.choices.size() ? x[i] : g.default_choice;
    return c < g.choices.size() ? g.choices[c] : std::string();
  };
  if (model.appearance_structure) return model.groups.empty() ? std::string() : choice_of(0);
  std::string s;
  for (std::size_t i = 0; i < model.groups.size(); ++i) {
    if (i) s += '&';
    s += model.groups[i].id + ":" + choice_of(i);
  }
  return s;
}

EffectiveValues effective_values(const Model& model, const Assignment& x) {
  EffectiveValues v(model.groups.size());
  for (std::size_t i = 0; i < model.groups.size(); ++i)
    if (i < x.size() && x[i] < model.groups[i].choices.size()) v[i] = x[i];
  return v;
}

}  // namespace charkit::bem
