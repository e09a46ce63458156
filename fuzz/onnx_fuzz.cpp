// libFuzzer target: the ONNX model loader, then (when it loads) one run with
// zero inputs when every input's shape is declared and small (symbolic dims
// taken as 1). Inputs are capped at 1 MiB; the executor bounds every tensor
// it makes by kOnnxMaxElements.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "charkit/learn/onnx.h"

using namespace charkit::learn;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > (1u << 20)) return 0;
  auto m = load_onnx(std::span<const std::uint8_t>(data, size));
  if (!m) {
    (void)m.error().to_string();
    return 0;
  }
  std::vector<OnnxTensor> inputs;
  for (const auto& v : m->inputs()) {
    if (!v.has_shape) return 0;
    OnnxTensor t;
    t.type = v.elem_type == 7 ? OnnxType::kInt64 : OnnxType::kFloat;
    std::int64_t n = 1;
    for (const auto& d : v.shape) {
      const std::int64_t dim = !d.symbol.empty() || d.value < 0 ? 1 : d.value;
      if (dim > 4096 || n * dim > 4096) return 0;
      t.shape.push_back(dim);
      n *= dim;
    }
    if (t.type == OnnxType::kFloat)
      t.f.assign(static_cast<std::size_t>(n), 0.0f);
    else
      t.i.assign(static_cast<std::size_t>(n), 0);
    inputs.push_back(std::move(t));
  }
  auto r = m->run(inputs);
  if (!r) (void)r.error().to_string();
  return 0;
}
