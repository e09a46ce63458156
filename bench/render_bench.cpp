// Frame time of `charkit render`'s frame (render::render_frame: light depth
// map, body, face, classification, eye, transparent, and the read-back of
// every attachment) for the Godette VRM on the GPU backend — lavapipe on a
// machine without a GPU. Sizes 1920×1080 and 960×540;
// shadow map 2048². Skips when no Vulkan device opens.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>

#include "charkit/gpu/context.h"
#include "charkit/render/frame.h"
#include "charkit/render/model.h"
#include "charkit/scene/gltf_document.h"

namespace {

using namespace charkit;

struct Scene {
  std::unique_ptr<gpu::Context> context;
  render::RenderModel model;
  std::string error;
};

Scene& scene_once() {
  static Scene s = [] {
    Scene r;
    auto ctx = gpu::Context::create();
    if (!ctx) {
      r.error = ctx.error().message;
      return r;
    }
    r.context = std::move(*ctx);
    auto doc =
        scene::GltfDocument::load_file(CHARKIT_SOURCE_DIR "/tests/data/models/Godette_vrm_v4.vrm");
    if (!doc) {
      r.error = doc.error().message;
      return r;
    }
    auto m = render::load_render_model(*doc);
    if (!m) {
      r.error = m.error().message;
      return r;
    }
    r.model = std::move(*m);
    return r;
  }();
  return s;
}

void BM_RenderFrame(benchmark::State& state) {
  Scene& s = scene_once();
  if (!s.context) {
    state.SkipWithError(s.error.c_str());
    return;
  }
  render::FrameOptions o;
  o.width = static_cast<std::uint32_t>(state.range(0));
  o.height = static_cast<std::uint32_t>(state.range(1));
  o.camera = render::framing_camera(s.model, static_cast<float>(o.width) / o.height);
  o.light_direction = {0.4F, 0.7F, -0.6F};
  for (auto _ : state) {
    auto f = render::render_frame(*s.context, s.model, o);
    if (!f) {
      state.SkipWithError(f.error().message.c_str());
      return;
    }
    benchmark::DoNotOptimize(f->stats.character_pixels);
  }
  state.SetLabel(s.context->device().name);
  state.counters["Mpixel/s"] = benchmark::Counter(static_cast<double>(o.width) * o.height * 1e-6,
                                                  benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_RenderFrame)
    ->Args({1920, 1080})
    ->Args({960, 540})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
