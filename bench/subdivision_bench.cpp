// Subdivision (docs/deform/subdivision.md) against OpenSubdiv 3.5's uniform
// Loop refinement to level 1, single thread, on a closed torus of about a
// million triangles with every edge split at full strength:
//  - with topology: charkit's edge table + the three kernels, against
//    OpenSubdiv's refiner creation + RefineUniform + primvar interpolation;
//  - topology prebuilt: charkit's three kernels (vertices, edge points and
//    the new index list) against OpenSubdiv's primvar interpolation alone.
// The primvar is the kernels' whole 40-byte vertex (position, normal,
// tangent) on both sides. Before timing, every edge point is checked against
// OpenSubdiv's Loop edge point (interior edges: all of a torus) within 1e-6
// relative; a mismatch aborts the program. BM_Memcpy copies the kernels'
// output bytes, the machine's bound, in the same run.
// Run: build/release/bench/subdivision_bench --benchmark_repetitions=5
//      --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <opensubdiv/far/primvarRefiner.h>
#include <opensubdiv/far/topologyDescriptor.h>
#include <opensubdiv/far/topologyRefinerFactory.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <vector>

#include "charkit/deform/subdivision.h"

#ifndef CHARKIT_TORUS_MAJOR
#define CHARKIT_TORUS_MAJOR 1000
#endif

namespace {

namespace osd = OpenSubdiv::OPENSUBDIV_VERSION;
using namespace charkit;

constexpr int kMajor =
    CHARKIT_TORUS_MAJOR;  // 1000 × 500 quads: 500,000 vertices, 1,000,000 triangles
constexpr int kMinor = CHARKIT_TORUS_MAJOR / 2;

/// OpenSubdiv's primvar: the same 10 floats as charkit's input vertex.
struct Vertex10 {
  float v[10];
  void Clear(void* = nullptr) { std::fill(v, v + 10, 0.0F); }
  void AddWithWeight(const Vertex10& src, float w) {
    for (int i = 0; i < 10; ++i) v[i] += w * src.v[i];
  }
};

struct Torus {
  std::vector<std::uint32_t> indices;
  std::vector<Vertex10> vertices;
  std::vector<std::uint8_t> bytes;  // the same, as 40-byte records
  std::vector<std::uint32_t> extras;
};

const Torus& torus() {
  static const Torus t = [] {
    Torus r;
    const float R = 1.0F, a = 0.35F;
    for (int i = 0; i < kMajor; ++i)
      for (int j = 0; j < kMinor; ++j) {
        const float u = 6.2831853F * static_cast<float>(i) / kMajor;
        const float w = 6.2831853F * static_cast<float>(j) / kMinor;
        const float n[3] = {std::cos(w) * std::cos(u), std::cos(w) * std::sin(u), std::sin(w)};
        Vertex10 v{};
        v.v[0] = (R + a * std::cos(w)) * std::cos(u);
        v.v[1] = (R + a * std::cos(w)) * std::sin(u);
        v.v[2] = a * std::sin(w);
        for (int k = 0; k < 3; ++k) v.v[3 + k] = n[k];
        v.v[6] = -std::sin(u);
        v.v[7] = std::cos(u);
        v.v[9] = 1.0F;
        r.vertices.push_back(v);
      }
    auto id = [](int i, int j) {
      return static_cast<std::uint32_t>((i % kMajor) * kMinor + (j % kMinor));
    };
    for (int i = 0; i < kMajor; ++i)
      for (int j = 0; j < kMinor; ++j) {
        r.indices.insert(r.indices.end(), {id(i, j), id(i + 1, j), id(i + 1, j + 1)});
        r.indices.insert(r.indices.end(), {id(i, j), id(i + 1, j + 1), id(i, j + 1)});
      }
    r.bytes.resize(r.vertices.size() * deform::kSubdivInVertexBytes);
    std::memcpy(r.bytes.data(), r.vertices.data(), r.bytes.size());
    r.extras.assign(r.vertices.size(), deform::pack_subdiv_extras(1.0F, 63));
    return r;
  }();
  return t;
}

std::unique_ptr<osd::Far::TopologyRefiner> osd_refiner(const Torus& t) {
  using Factory = osd::Far::TopologyRefinerFactory<osd::Far::TopologyDescriptor>;
  static std::vector<int> verts_per_face;
  verts_per_face.assign(t.indices.size() / 3, 3);
  osd::Far::TopologyDescriptor desc;
  desc.numVertices = static_cast<int>(t.vertices.size());
  desc.numFaces = static_cast<int>(verts_per_face.size());
  desc.numVertsPerFace = verts_per_face.data();
  desc.vertIndicesPerFace = reinterpret_cast<const osd::Far::Index*>(t.indices.data());
  osd::Sdc::Options sdc;
  sdc.SetVtxBoundaryInterpolation(osd::Sdc::Options::VTX_BOUNDARY_EDGE_ONLY);
  std::unique_ptr<osd::Far::TopologyRefiner> refiner(
      Factory::Create(desc, Factory::Options(osd::Sdc::SCHEME_LOOP, sdc)));
  refiner->RefineUniform(osd::Far::TopologyRefiner::UniformOptions(1));
  return refiner;
}

/// charkit's buffers for one run (allocated once, outside the timing).
struct Outputs {
  std::vector<std::uint8_t> vertices;
  std::vector<float> strength;
  std::vector<std::uint32_t> indices;
  deform::DrawIndexedIndirect draw;
};

/// The three kernels; `validated`: the same arrays passed validate() before
/// (what a caller re-running an unchanged mesh does), so only run() is timed.
void run_kernels(const Torus& t, const deform::SubdivTopology& top, Outputs& o,
                 bool validated = false) {
  const deform::SubdivMeshView view{static_cast<std::uint32_t>(t.vertices.size()),
                                    t.bytes,
                                    t.extras,
                                    top.index_bits,
                                    top.edge_count,
                                    top.edges};
  o.vertices.resize((t.vertices.size() + top.edge_count) * deform::kSubdivOutVertexBytes);
  o.strength.resize(top.edge_count);
  o.indices.resize(t.indices.size() * 4);
  const deform::SubdivBuffers buffers{o.vertices, o.strength, o.indices, &o.draw};
  const deform::SubdivisionJob job{{}, view, t.indices, top.triangle_edges, {}, buffers};
  if (!validated && !job.validate()) std::abort();
  if (!job.run()) std::abort();
}

/// Every charkit edge point against OpenSubdiv's (aborts on a mismatch).
void check_against_osd() {
  const Torus& t = torus();
  auto top =
      deform::build_subdiv_topology(t.indices, static_cast<std::uint32_t>(t.vertices.size()));
  if (!top) std::abort();
  Outputs o;
  run_kernels(t, *top, o);
  auto refiner = osd_refiner(t);
  const osd::Far::TopologyLevel& l0 = refiner->GetLevel(0);
  const std::size_t V = t.vertices.size();
  std::vector<Vertex10> refined(static_cast<std::size_t>(refiner->GetLevel(1).GetNumVertices()));
  Vertex10* dst = refined.data();
  osd::Far::PrimvarRefiner(*refiner).Interpolate(1, t.vertices.data(), dst);
  // Our edge id for each vertex pair.
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> ours;
  const deform::SubdivMeshView view{static_cast<std::uint32_t>(V),
                                    t.bytes,
                                    t.extras,
                                    top->index_bits,
                                    top->edge_count,
                                    top->edges};
  for (std::uint32_t e = 0; e < top->edge_count; ++e) {
    const deform::SubdivEdge ed = view.edge(e);
    ours[{std::min(ed.a, ed.b), std::max(ed.a, ed.b)}] = e;
  }
  if (static_cast<std::size_t>(l0.GetNumEdges()) != top->edge_count) {
    std::fprintf(stderr, "edge counts differ: %d vs %u\n", l0.GetNumEdges(), top->edge_count);
    std::abort();
  }
  double worst = 0.0;
  for (int e = 0; e < l0.GetNumEdges(); ++e) {
    const auto ev = l0.GetEdgeVertices(e);
    const auto a = static_cast<std::uint32_t>(ev[0]);
    const auto b = static_cast<std::uint32_t>(ev[1]);
    const std::uint32_t mine = ours.at({std::min(a, b), std::max(a, b)});
    // Level 1 orders vertex children first, then the edge children.
    const Vertex10& theirs = refined[V + static_cast<std::size_t>(e)];
    float p[3];
    std::memcpy(p, o.vertices.data() + (V + mine) * deform::kSubdivOutVertexBytes, 12);
    for (int k = 0; k < 3; ++k) {
      const double rel = std::fabs(double{p[k]} - double{theirs.v[k]}) /
                         std::max(1.0, std::fabs(double{theirs.v[k]}));
      worst = std::max(worst, rel);
    }
  }
  std::fprintf(stderr, "edge points: %d interior edges, worst relative difference %.3g\n",
               l0.GetNumEdges(), worst);
  if (worst > 1e-6) std::abort();
}

void BM_CharkitWithTopology(benchmark::State& state) {
  const Torus& t = torus();
  Outputs o;
  for (auto _ : state) {
    auto top =
        deform::build_subdiv_topology(t.indices, static_cast<std::uint32_t>(t.vertices.size()));
    run_kernels(t, *top, o);
    benchmark::DoNotOptimize(o.indices.data());
  }
  state.counters["triangles"] = static_cast<double>(t.indices.size() / 3);
}

void BM_OsdWithTopology(benchmark::State& state) {
  const Torus& t = torus();
  std::vector<Vertex10> refined;
  for (auto _ : state) {
    auto refiner = osd_refiner(t);
    refined.resize(static_cast<std::size_t>(refiner->GetLevel(1).GetNumVertices()));
    Vertex10* dst = refined.data();
    osd::Far::PrimvarRefiner(*refiner).Interpolate(1, t.vertices.data(), dst);
    benchmark::DoNotOptimize(refined.data());
  }
}

void BM_CharkitPrebuilt(benchmark::State& state) {
  const Torus& t = torus();
  auto top =
      deform::build_subdiv_topology(t.indices, static_cast<std::uint32_t>(t.vertices.size()));
  Outputs o;
  run_kernels(t, *top, o);  // validates the inputs once
  for (auto _ : state) {
    run_kernels(t, *top, o, true);
    benchmark::DoNotOptimize(o.indices.data());
  }
  state.SetBytesProcessed(state.iterations() *
                          static_cast<std::int64_t>(o.vertices.size() + o.indices.size() * 4));
}

void BM_OsdPrebuilt(benchmark::State& state) {
  const Torus& t = torus();
  auto refiner = osd_refiner(t);
  std::vector<Vertex10> refined(static_cast<std::size_t>(refiner->GetLevel(1).GetNumVertices()));
  const osd::Far::PrimvarRefiner primvar(*refiner);
  Vertex10* dst = refined.data();
  for (auto _ : state) {
    primvar.Interpolate(1, t.vertices.data(), dst);
    benchmark::DoNotOptimize(refined.data());
  }
}

/// Each kernel alone (topology prebuilt), as separate jobs: where the time goes.
void BM_CharkitKernel(benchmark::State& state) {
  const Torus& t = torus();
  auto top =
      deform::build_subdiv_topology(t.indices, static_cast<std::uint32_t>(t.vertices.size()));
  Outputs o;
  run_kernels(t, *top, o);
  const deform::SubdivMeshView view{static_cast<std::uint32_t>(t.vertices.size()),
                                    t.bytes,
                                    t.extras,
                                    top->index_bits,
                                    top->edge_count,
                                    top->edges};
  const deform::SubdivParams p;
  for (auto _ : state) {
    switch (state.range(0)) {
      case 1:
        benchmark::DoNotOptimize(deform::SubdivStrengthJob{p, view, o.vertices, o.strength}.run());
        break;
      case 2:
        benchmark::DoNotOptimize(deform::SubdivEdgeJob{p, view, o.strength, {}, o.vertices}.run());
        break;
      default:
        benchmark::DoNotOptimize(deform::SubdivIndexJob{view, t.indices, top->triangle_edges,
                                                        o.strength, 0.0F, o.indices, &o.draw}
                                     .run());
    }
    benchmark::DoNotOptimize(o.vertices.data());
  }
}

/// memcpy of the kernels' output bytes (vertices + indices): the bound.
void BM_Memcpy(benchmark::State& state) {
  const Torus& t = torus();
  const std::size_t bytes =
      (t.vertices.size() * 4) * deform::kSubdivOutVertexBytes + t.indices.size() * 4 * 4;
  std::vector<std::uint8_t> src(bytes, 1);
  std::vector<std::uint8_t> dst(bytes, 0);
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), bytes);
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(bytes));
}

BENCHMARK(BM_CharkitWithTopology)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_OsdWithTopology)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CharkitPrebuilt)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_OsdPrebuilt)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CharkitKernel)->Arg(1)->Arg(2)->Arg(3)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Memcpy)->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  check_against_osd();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
