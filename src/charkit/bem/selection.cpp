#include "charkit/bem/selection.h"

#include <algorithm>
#include <cstring>
#include <set>

#include "charkit/bem/error_codes.h"
#include "charkit/core/json.h"
#include "charkit/deform/sparse_morph.h"

namespace charkit::bem {

core::Result<PayloadData> PackagePayloadSource::read(std::uint32_t id) const {
  decoded_.push_back(id);
  return package_.read_payload(id);
}

namespace {

core::Error select_error(core::ErrorCode code, std::string message, std::string pointer = {}) {
  return core::error_at_pointer(code, std::move(message), std::move(pointer));
}

// Decodes each payload id at most once and shares the bytes.
class Cache {
 public:
  explicit Cache(const PayloadSource& source, std::vector<std::uint32_t>& decoded)
      : source_(source), decoded_(decoded) {}

  core::Result<SharedPayload> get(std::uint32_t id) {
    if (auto it = cache_.find(id); it != cache_.end()) return it->second;
    auto r = source_.read(id);
    if (!r.ok()) {
      core::Error e = std::move(r).error();
      return select_error(codes::BEM_SELECT_PAYLOAD,
                          "payload " + std::to_string(id) + ": " + e.code + ": " + e.message);
    }
    decoded_.push_back(id);
    auto p = std::make_shared<const PayloadData>(std::move(*r));
    cache_.emplace(id, p);
    return p;
  }

 private:
  const PayloadSource& source_;
  std::vector<std::uint32_t>& decoded_;
  std::map<std::uint32_t, SharedPayload> cache_;
};

core::Status read_indices(const Mesh& mesh, const PlannedMesh& pm, Cache& cache,
                          SelectedMesh& out) {
  if (mesh.index_size != 2 && mesh.index_size != 4)
    return select_error(codes::BEM_SELECT_SIZE, "index_size must be 2 or 4",
                        core::json_pointer_join("/meshes", pm.mesh) + "/index_size");
  out.indices.resize(pm.index_count);
  for (const IndexSegment& seg : pm.segments) {
    const std::string where =
        core::json_pointer_join("/meshes", pm.mesh) + "/draws/" + std::to_string(seg.draw);
    auto p = cache.get(seg.payload);
    if (!p.ok()) return std::move(p).error();
    const core::Bytes bytes = (*p)->bytes();
    const std::uint64_t first = static_cast<std::uint64_t>(seg.source_start) * mesh.index_size;
    const std::uint64_t len = static_cast<std::uint64_t>(seg.count) * mesh.index_size;
    if (first + len > bytes.size() ||
        static_cast<std::uint64_t>(seg.start) + seg.count > pm.index_count)
      return select_error(codes::BEM_SELECT_SIZE,
                          "index payload " + std::to_string(seg.payload) + " holds " +
                              std::to_string(bytes.size()) + " bytes, draw needs " +
                              std::to_string(first + len),
                          where);
    const std::uint8_t* src = bytes.data() + first;
    for (std::uint32_t i = 0; i < seg.count; ++i) {
      std::uint32_t v = 0;
      if (mesh.index_size == 2) {
        std::uint16_t s = 0;
        std::memcpy(&s, src + static_cast<std::size_t>(i) * 2, 2);
        v = s;
      } else {
        std::memcpy(&v, src + static_cast<std::size_t>(i) * 4, 4);
      }
      if (v >= mesh.vertex_count)
        return select_error(codes::BEM_SELECT_INDEX,
                            "index " + std::to_string(v) + " not below vertex_count " +
                                std::to_string(mesh.vertex_count),
                            where);
      out.indices[static_cast<std::size_t>(seg.start) + i] = v;
    }
  }
  return core::Ok{};
}

// §10: position = base + Σ channel deltas, on the float xyz position attribute.
core::Status morph(const Mesh& mesh, const PlannedMesh& pm, Cache& cache,
                   const core::RunOptions& run, SelectedMesh& out) {
  const VertexAttribute* pos = nullptr;
  for (const VertexAttribute& a : mesh.attributes)
    if (a.semantic == 0 && a.format == 0 && a.dimension == 3) pos = &a;
  if (!pos || pos->stream >= out.streams.size() || !out.streams[pos->stream])
    return select_error(codes::BEM_SELECT_POSITION,
                        "deformed mesh has no Float32 XYZ position attribute",
                        core::json_pointer_join("/meshes", pm.mesh) + "/attributes");
  const std::uint32_t stride = mesh.streams[pos->stream].stride;
  const core::Bytes stream = out.streams[pos->stream]->bytes();
  if (pos->offset > stream.size())
    return select_error(codes::BEM_SELECT_POSITION, "position offset outside the stream",
                        core::json_pointer_join("/meshes", pm.mesh) + "/attributes");

  std::vector<deform::SparseChannel> channels;
  channels.reserve(pm.channels.size());
  for (const PlannedChannel& ch : pm.channels) {
    deform::SparseChannel sc;
    for (const PlannedFrame& f : ch.frames) {
      if (f.neutral) continue;  // the neutral frame has zero deltas
      const std::string where = "/mesh_deformations/" + std::to_string(ch.deformation) +
                                "/frames/" + std::to_string(f.frame);
      auto p = cache.get(f.payload);
      if (!p.ok()) return std::move(p).error();
      auto d = deform::parse_sparse_deltas((*p)->bytes(), mesh.vertex_count, f.count);
      if (!d.ok()) {
        core::Error e = std::move(d).error();
        e.location.pointer = where;
        return e;
      }
      out.frame_payloads.emplace(f.payload, *p);
      if (f.weight == 0.0f) continue;  // planned for PlanOptions::all_frames only
      sc.frames[sc.frame_count++] = deform::SparseFrame{d->records, f.weight};
    }
    if (sc.frame_count > 0) channels.push_back(sc);
  }

  const std::size_t n3 = static_cast<std::size_t>(mesh.vertex_count) * 3;
  std::vector<float> deltas(n3);
  out.positions.resize(n3);
  deform::SparseMorphJob job;
  job.vertex_count = mesh.vertex_count;
  job.base = stream.subspan(pos->offset);
  job.base_stride = stride;
  job.channels = channels;
  job.deltas = deltas;
  job.out = out.positions;
  if (!job.validate())
    return select_error(
        codes::BEM_SELECT_POSITION, "position stream too short for vertex_count",
        core::json_pointer_join("/meshes", pm.mesh) + "/streams/" + std::to_string(pos->stream));
  return job.run(run);
}

}  // namespace

core::Result<Selection> read_selection(const Model& model, const Plan& plan,
                                       const PayloadSource& source,
                                       const SelectionOptions& options) {
  Selection sel;
  Cache cache(source, sel.decoded);
  for (const PlannedMesh& pm : plan.meshes) {
    if (pm.mesh >= model.meshes.size())
      return select_error(codes::BEM_SELECT_SIZE, "plan names a mesh the model lacks");
    const Mesh& mesh = model.meshes[pm.mesh];
    SelectedMesh sm;
    sm.mesh = pm.mesh;
    for (std::size_t s = 0; s < pm.stream_payloads.size(); ++s) {
      if (!pm.stream_payloads[s]) {
        sm.streams.push_back(nullptr);
        continue;
      }
      auto p = cache.get(*pm.stream_payloads[s]);
      if (!p.ok()) return std::move(p).error();
      const std::uint64_t want =
          s < mesh.streams.size()
              ? static_cast<std::uint64_t>(mesh.vertex_count) * mesh.streams[s].stride
              : 0;
      if ((*p)->size() != want)
        return select_error(
            codes::BEM_SELECT_SIZE,
            "vertex stream payload is " + std::to_string((*p)->size()) + " bytes, expected " +
                std::to_string(want),
            core::json_pointer_join("/meshes", pm.mesh) + "/streams/" + std::to_string(s));
      sm.streams.push_back(std::move(*p));
    }
    if (auto st = read_indices(mesh, pm, cache, sm); !st.ok()) return std::move(st).error();
    if (!pm.channels.empty()) {
      if (auto st = morph(mesh, pm, cache, options.morph, sm); !st.ok())
        return std::move(st).error();
    }
    sel.meshes.push_back(std::move(sm));
  }
  if (options.read_textures) {
    std::set<std::uint32_t> textures;
    for (const TextureBinding& b : plan.textures)
      if (b.texture) textures.insert(*b.texture);
    for (std::uint32_t t : textures) {
      if (t >= model.textures.size())
        return select_error(codes::BEM_SELECT_SIZE, "plan names a texture the model lacks");
      auto p = cache.get(model.textures[t].payload);
      if (!p.ok()) return std::move(p).error();
      sel.textures.push_back(SelectedTexture{t, std::move(*p)});
    }
  }
  return sel;
}

}  // namespace charkit::bem
