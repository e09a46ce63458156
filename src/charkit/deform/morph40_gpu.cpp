// Morph40Job on the GPU backend (docs/deform/morph40.md, "Devices").
#include <algorithm>
#include <cstring>
#include <vector>

#include "charkit/deform/error_codes.h"
#include "charkit/deform/morph40.h"
#include "charkit/gpu/error_codes.h"

#include "morph40.spv.h"

namespace charkit::deform {

core::Status Morph40Job::run_gpu(gpu::Context& context) const {
  if (vertices.size() != std::size_t{vertex_count} * kMorph40VertexBytes)
    return core::make_error(codes::DEFORM_MORPH40_SIZE,
                            "the vertex array is not vertex count × 40 bytes");
  std::vector<gpu::BufferId> owned;
  auto release = [&] {
    for (gpu::BufferId b : owned) context.free_buffer(b);
  };
  auto pipeline = context.create_pipeline(kMorph40Spirv, 2, 20);
  if (!pipeline) return std::move(pipeline).error();
  // The vertex array in chunks of at most one binding's range (lavapipe:
  // 128 MiB, 3.3 M vertices); each target runs once per chunk and each
  // invocation skips the records of vertices outside its chunk. A target's
  // records fit in one buffer whenever the vertices do (one record per
  // vertex at most).
  const std::uint64_t chunk_vertices =
      std::max<std::uint64_t>(context.max_buffer_bytes() / kMorph40VertexBytes, 1);
  struct Chunk {
    gpu::BufferId buffer;
    std::uint32_t base;
    std::uint32_t count;
  };
  std::vector<Chunk> chunks;
  for (std::uint64_t base = 0; base < vertex_count || chunks.empty(); base += chunk_vertices) {
    const auto count =
        static_cast<std::uint32_t>(std::min<std::uint64_t>(chunk_vertices, vertex_count - base));
    auto vbuf = context.create_buffer(std::max<std::uint64_t>(count * kMorph40VertexBytes, 4));
    if (!vbuf) {
      release();
      return std::move(vbuf).error();
    }
    owned.push_back(*vbuf);
    if (count > 0)
      std::memcpy(context.map(*vbuf).data(), vertices.data() + base * kMorph40VertexBytes,
                  std::size_t{count} * kMorph40VertexBytes);
    chunks.push_back({*vbuf, static_cast<std::uint32_t>(base), count});
    if (count == 0) break;
  }
  const std::uint64_t per_dispatch = std::uint64_t{context.device().max_workgroup_count[0]} * 64;
  std::vector<gpu::Dispatch> dispatches;
  for (const Morph40Target& t : targets) {
    if (t.records.size() % kMorph40RecordBytes != 0) {
      release();
      return core::make_error(codes::DEFORM_MORPH40_SIZE,
                              "a records span is not a multiple of 40 bytes");
    }
    const std::uint64_t n = t.records.size() / kMorph40RecordBytes;
    if (n == 0) continue;
    auto rbuf = context.create_buffer(t.records.size());
    if (!rbuf) {
      release();
      return std::move(rbuf).error();
    }
    owned.push_back(*rbuf);
    std::memcpy(context.map(*rbuf).data(), t.records.data(), t.records.size());
    for (const Chunk& c : chunks)
      for (std::uint64_t first = 0; first < n; first += per_dispatch) {
        const auto count = static_cast<std::uint32_t>(std::min(per_dispatch, n - first));
        gpu::Dispatch d;
        d.pipeline = *pipeline;
        d.buffers = {*rbuf, c.buffer};
        d.push.resize(20);
        const auto f = static_cast<std::uint32_t>(first);
        std::memcpy(d.push.data(), &f, 4);
        std::memcpy(d.push.data() + 4, &count, 4);
        std::memcpy(d.push.data() + 8, &t.weight, 4);
        std::memcpy(d.push.data() + 12, &c.count, 4);
        std::memcpy(d.push.data() + 16, &c.base, 4);
        d.groups = (count + 63) / 64;
        dispatches.push_back(std::move(d));
      }
  }
  core::Status st = context.run(dispatches);
  if (st)
    for (const Chunk& c : chunks)
      if (c.count > 0)
        std::memcpy(vertices.data() + std::size_t{c.base} * kMorph40VertexBytes,
                    context.map(c.buffer).data(), std::size_t{c.count} * kMorph40VertexBytes);
  release();
  return st;
}

}  // namespace charkit::deform
