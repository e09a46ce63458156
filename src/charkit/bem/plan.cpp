#include "charkit/bem/plan.h"

#include <algorithm>
#include <map>

#include "charkit/bem/error_codes.h"
#include "charkit/core/json.h"

namespace charkit::bem {

namespace {

core::Error plan_error(core::ErrorCode code, std::string message, std::string pointer = {}) {
  return core::error_at_pointer(code, std::move(message), std::move(pointer));
}

struct Builder {
  const Model& model;
  const Settings& settings;
  Plan plan;
  std::vector<std::uint32_t> payloads;
  bool all_frames = false;
  bool every_draw = false;

  std::uint64_t payload_count() const { return model.payload_sizes.size(); }

  bool payload_ok(std::uint32_t id) const { return id < payload_count(); }

  // Resolve one "textures" entry (§7 fixed index, §9 slot).
  core::Status bind(const TextureRef& ref, TextureBinding b, const std::string& where) {
    if (!ref.is_slot) {
      if (ref.texture >= model.textures.size())
        return plan_error(codes::BEM_PLAN_RANGE,
                          "texture " + std::to_string(ref.texture) + " does not exist", where);
      b.texture = ref.texture;
    } else {
      if (ref.slot >= model.slots.size())
        return plan_error(codes::BEM_PLAN_RANGE,
                          "texture slot " + std::to_string(ref.slot) + " does not exist", where);
      const TextureSlot& slot = model.slots[ref.slot];
      b.slot = ref.slot;
      int held = -1;
      for (std::size_t c = 0; c < slot.candidates.size(); ++c) {
        if (!evaluate(slot.candidates[c].when, settings.effective)) continue;
        if (held >= 0)
          return plan_error(codes::BEM_PLAN_CANDIDATES,
                            "texture slot '" + slot.id + "' has more than one candidate holding",
                            where);
        held = static_cast<int>(c);
      }
      if (held < 0)
        return plan_error(codes::BEM_PLAN_CANDIDATES,
                          "no candidate of texture slot '" + slot.id + "' holds", where);
      b.texture = slot.candidates[static_cast<std::size_t>(held)].texture;
      if (b.texture && *b.texture >= model.textures.size())
        return plan_error(codes::BEM_PLAN_RANGE,
                          "texture slot '" + slot.id + "' names a missing texture", where);
      // §9: all non-null candidates replace the same original texture; a null
      // one keeps it, so it is named by any non-null candidate.
      if (!b.texture) {
        for (const SlotCandidate& c : slot.candidates)
          if (c.texture && *c.texture < model.textures.size()) {
            b.original_name = model.textures[*c.texture].original_name;
            break;
          }
      }
    }
    if (b.texture) {
      const Texture& t = model.textures[*b.texture];
      if (!payload_ok(t.payload))
        return plan_error(codes::BEM_PLAN_RANGE,
                          "texture payload " + std::to_string(t.payload) + " does not exist",
                          "/textures/" + std::to_string(*b.texture));
      b.original_name = t.original_name;
      payloads.push_back(t.payload);
    }
    plan.textures.push_back(std::move(b));
    return core::Ok{};
  }

  core::Status plan_mesh(PlannedMesh& pm) {
    const Mesh& mesh = model.meshes[pm.mesh];
    for (std::size_t s = 0; s < mesh.streams.size(); ++s) {
      const VertexStream& vs = mesh.streams[s];
      if (vs.stride == 0) {
        pm.stream_payloads.push_back(std::nullopt);
        continue;
      }
      if (!payload_ok(vs.payload))
        return plan_error(
            codes::BEM_PLAN_RANGE, "vertex stream payload does not exist",
            core::json_pointer_join("/meshes", pm.mesh) + "/streams/" + std::to_string(s));
      pm.stream_payloads.push_back(vs.payload);
      payloads.push_back(vs.payload);
    }
    // §7: selected draws in manifest order form one index stream; each
    // segment's start is recomputed (1.0 draws are all selected, same order).
    std::uint64_t start = 0;
    for (std::size_t d = 0; d < mesh.draws.size(); ++d) {
      const Draw& draw = mesh.draws[d];
      if (!every_draw && !evaluate(draw.when, settings.effective)) continue;
      const std::string where =
          core::json_pointer_join("/meshes", pm.mesh) + "/draws/" + std::to_string(d);
      if (!payload_ok(draw.indices))
        return plan_error(codes::BEM_PLAN_RANGE, "index payload does not exist", where);
      const auto di = static_cast<std::uint32_t>(d);
      pm.draws.push_back(di);
      pm.segments.push_back(IndexSegment{di, draw.indices, draw.start,
                                         static_cast<std::uint32_t>(start), draw.count});
      start += draw.count;
      if (start > UINT32_MAX)
        return plan_error(codes::BEM_PLAN_RANGE, "index stream too long", where);
      payloads.push_back(draw.indices);
      plan.draws.emplace_back(pm.mesh, di);
      for (std::size_t e = 0; e < draw.textures.size(); ++e) {
        TextureBinding b;
        b.source = TextureBinding::Source::kDraw;
        b.mesh = pm.mesh;
        b.draw = di;
        b.component = draw.material_component;
        b.material_slot = draw.material_slot;
        b.material_name = draw.material_name;
        b.entry = static_cast<std::uint32_t>(e);
        if (auto st =
                bind(draw.textures[e], std::move(b), where + "/textures/" + std::to_string(e));
            !st.ok())
          return st;
      }
    }
    pm.index_count = static_cast<std::uint32_t>(start);
    return core::Ok{};
  }

  // §10 evaluation: exact frame → that frame; between a and b → both, linear.
  core::Status plan_channel(std::uint32_t di, PlannedMesh& pm) {
    const Deformation& def = model.deformations[di];
    const std::string where = "/mesh_deformations/" + std::to_string(di);
    if (def.parameter >= model.parameters.size() || def.parameter >= settings.ticks.size())
      return plan_error(codes::BEM_PLAN_RANGE, "deformation parameter does not exist", where);
    PlannedChannel ch;
    ch.deformation = di;
    ch.mesh = def.mesh;
    ch.parameter = def.parameter;
    ch.tick = settings.ticks[def.parameter];
    ch.available = settings.parameter_available[def.parameter];
    const std::uint32_t v = ch.tick;
    auto frame = [&](std::size_t f, float w) -> core::Status {
      const DeformationFrame& fr = def.frames[f];
      if (!fr.neutral && !payload_ok(fr.payload))
        return plan_error(codes::BEM_PLAN_RANGE, "frame payload does not exist",
                          where + "/frames/" + std::to_string(f));
      ch.frames.push_back(PlannedFrame{static_cast<std::uint32_t>(f), fr.value, fr.neutral,
                                       fr.neutral ? 0u : fr.payload, fr.neutral ? 0u : fr.count,
                                       w});
      if (!fr.neutral) payloads.push_back(fr.payload);
      return core::Ok{};
    };
    const auto weights = channel_frame_weights(def, v);
    for (const auto& [f, w] : weights)
      if (auto st = frame(f, w); !st.ok()) return st;
    const bool found = !weights.empty();
    if (!found)
      return plan_error(codes::BEM_PLAN_FRAMES, "no frame covers tick " + std::to_string(v), where);
    if (all_frames) {
      for (std::size_t f = 0; f < def.frames.size(); ++f) {
        const bool planned = std::any_of(ch.frames.begin(), ch.frames.end(),
                                         [&](const PlannedFrame& p) { return p.frame == f; });
        if (!planned && !def.frames[f].neutral)
          if (auto st = frame(f, 0.0f); !st.ok()) return st;
      }
      std::sort(ch.frames.begin(), ch.frames.end(),
                [](const PlannedFrame& a, const PlannedFrame& b) { return a.frame < b.frame; });
    }
    pm.channels.push_back(std::move(ch));
    return core::Ok{};
  }
};

}  // namespace

std::vector<std::pair<std::uint32_t, float>> channel_frame_weights(const Deformation& def,
                                                                   std::uint32_t tick) {
  const double v = tick;
  for (std::size_t f = 0; f < def.frames.size(); ++f) {
    if (def.frames[f].value == tick) return {{static_cast<std::uint32_t>(f), 1.0f}};
    if (f + 1 < def.frames.size() && def.frames[f].value < tick && tick < def.frames[f + 1].value) {
      const double a = def.frames[f].value;
      const double b = def.frames[f + 1].value;
      return {{static_cast<std::uint32_t>(f), static_cast<float>((b - v) / (b - a))},
              {static_cast<std::uint32_t>(f + 1), static_cast<float>((v - a) / (b - a))}};
    }
  }
  return {};
}

core::Result<Plan> make_plan(const Model& model, const Settings& settings,
                             const PlanOptions& options) {
  if (settings.saved.size() != model.groups.size() ||
      settings.effective.size() != model.groups.size() ||
      settings.ticks.size() != model.parameters.size() ||
      settings.parameter_available.size() != model.parameters.size())
    return plan_error(codes::BEM_PLAN_SETTINGS, "settings do not belong to this model");

  // 1.4: one resource on one platform (reference notes, "Selection plans").
  const Resource* resource = nullptr;
  if (!options.resource.empty() || !options.platform.empty()) {
    if (options.resource.empty() || options.platform.empty())
      return plan_error(codes::BEM_PLAN_PLATFORM, "give both a resource and a platform");
    if (model.resources.empty())
      return plan_error(codes::BEM_PLAN_RESOURCE,
                        "package has no resources (explicit resource targets are 1.4+)");
    for (const Resource& r : model.resources)
      if (r.id == options.resource) resource = &r;
    if (!resource) {
      std::string known;
      for (const Resource& r : model.resources) known += (known.empty() ? "" : ", ") + r.id;
      return plan_error(codes::BEM_PLAN_RESOURCE,
                        "unknown resource '" + options.resource + "' (package has: " + known + ")",
                        "/target/resources");
    }
    if (std::find(resource->platforms.begin(), resource->platforms.end(), options.platform) ==
        resource->platforms.end()) {
      std::string served;
      for (const std::string& p : resource->platforms) served += (served.empty() ? "" : ", ") + p;
      return plan_error(codes::BEM_PLAN_PLATFORM,
                        "resource '" + resource->id + "' does not serve platform '" +
                            options.platform + "' (it serves: " + served + ")",
                        "/target/resources");
    }
  }

  Builder b{model, settings, {}, {}, options.all_frames, options.every_draw};
  b.plan.resource = options.resource;
  b.plan.platform = options.platform;
  b.plan.parameter_ticks = settings.ticks;

  std::map<std::uint32_t, std::vector<std::uint32_t>> replaced;  // mesh -> targets
  for (std::size_t t = 0; t < model.components.size(); ++t) {
    const Component& comp = model.components[t];
    if (resource && comp.resource != resource->id) continue;
    const std::string where = "/component_rules/" + std::to_string(t);
    int held = -1;
    for (std::size_t c = 0; c < comp.candidates.size(); ++c) {
      if (!evaluate(comp.candidates[c].when, settings.effective)) continue;
      if (held >= 0)
        return plan_error(codes::BEM_PLAN_CANDIDATES,
                          "component " + std::to_string(t) + " has more than one candidate holding",
                          where);
      held = static_cast<int>(c);
    }
    if (held < 0)
      return plan_error(codes::BEM_PLAN_CANDIDATES,
                        "no candidate of component " + std::to_string(t) + " holds", where);
    const Candidate& cand = comp.candidates[static_cast<std::size_t>(held)];
    PlannedComponent pc;
    pc.target = static_cast<std::uint32_t>(t);
    pc.candidate = static_cast<std::uint32_t>(held);
    pc.op = cand.op;
    if (cand.op == Operation::kReplace) {
      if (cand.mesh >= model.meshes.size())
        return plan_error(codes::BEM_PLAN_RANGE,
                          "mesh " + std::to_string(cand.mesh) + " does not exist", cand.pointer);
      pc.mesh = cand.mesh;
      replaced[cand.mesh].push_back(pc.target);
    }
    b.plan.components.push_back(std::move(pc));
    if (options.every_draw)
      for (const Candidate& other : comp.candidates)
        if (other.op == Operation::kReplace && other.mesh < model.meshes.size()) {
          std::vector<std::uint32_t>& targets = replaced[other.mesh];
          if (std::find(targets.begin(), targets.end(), t) == targets.end())
            targets.push_back(static_cast<std::uint32_t>(t));
        }
  }

  // Meshes ascending, each once (manifest order of draws across meshes).
  for (auto& [mesh, targets] : replaced) {
    PlannedMesh pm;
    pm.mesh = mesh;
    pm.components = targets;
    if (auto st = b.plan_mesh(pm); !st.ok()) return std::move(st).error();
    b.plan.meshes.push_back(std::move(pm));
  }
  for (PlannedComponent& pc : b.plan.components) {
    if (pc.op != Operation::kReplace) continue;
    for (std::size_t i = 0; i < b.plan.meshes.size(); ++i)
      if (b.plan.meshes[i].mesh == pc.mesh) {
        pc.planned_mesh = static_cast<std::uint32_t>(i);
        pc.draws = b.plan.meshes[i].draws;
      }
  }

  // Keep overrides (§6 keep-material-textures), after all draw bindings.
  for (const PlannedComponent& pc : b.plan.components) {
    if (pc.op != Operation::kKeep) continue;
    const Candidate& cand = model.components[pc.target].candidates[pc.candidate];
    for (std::size_t o = 0; o < cand.overrides.size(); ++o) {
      const KeepOverride& ov = cand.overrides[o];
      for (std::size_t e = 0; e < ov.textures.size(); ++e) {
        TextureBinding tb;
        tb.source = TextureBinding::Source::kKeepOverride;
        tb.component = pc.target;
        tb.override_index = static_cast<std::uint32_t>(o);
        tb.material_slot = ov.material_slot;
        tb.material_name = ov.material_name;
        tb.entry = static_cast<std::uint32_t>(e);
        const std::string where = cand.pointer + "/material_overrides/" + std::to_string(o) +
                                  "/textures/" + std::to_string(e);
        if (auto st = b.bind(ov.textures[e], std::move(tb), where); !st.ok())
          return std::move(st).error();
      }
    }
  }

  // §10: a channel is active only on a mesh selected for replace.
  for (std::size_t d = 0; d < model.deformations.size(); ++d) {
    const std::uint32_t mesh = model.deformations[d].mesh;
    for (PlannedMesh& pm : b.plan.meshes) {
      if (pm.mesh != mesh) continue;
      if (auto st = b.plan_channel(static_cast<std::uint32_t>(d), pm); !st.ok())
        return std::move(st).error();
    }
  }

  std::sort(b.payloads.begin(), b.payloads.end());
  b.payloads.erase(std::unique(b.payloads.begin(), b.payloads.end()), b.payloads.end());
  b.plan.payloads = std::move(b.payloads);
  return std::move(b.plan);
}

}  // namespace charkit::bem
