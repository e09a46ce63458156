// libFuzzer target: the ONNX model loader, then (when it loads) one run with
// small varied inputs when every input's shape is declared and small
// (symbolic dims taken as 1). Inputs are capped at 1 MiB; the executor runs
// with small element limits (set_element_limits).
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "charkit/deformer/onnx.h"

using namespace charkit::deformer;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > (1u << 20)) return 0;
  auto m = load_onnx(std::span<const std::uint8_t>(data, size));
  if (!m) {
    (void)m.error().to_string();
    return 0;
  }
  // Small bounds keep every unit fast and small (a 125-byte Tile or Expand
  // may otherwise ask for 2^26 elements, seconds under ASan).
  m->set_element_limits(std::int64_t{1} << 18, std::int64_t{1} << 21);
  std::vector<OnnxTensor> inputs;
  for (const auto& v : m->inputs()) {
    if (!v.has_shape) return 0;
    OnnxTensor t;
    t.type = v.elem_type == 7   ? OnnxType::kInt64
             : v.elem_type == 9 ? OnnxType::kBool
                                : OnnxType::kFloat;
    std::int64_t n = 1;
    for (const auto& d : v.shape) {
      const std::int64_t dim = !d.symbol.empty() || d.value < 0 ? 1 : d.value;
      if (dim > 4096 || n * dim > 4096) return 0;
      t.shape.push_back(dim);
      n *= dim;
    }
    // Small varied values (not all zeros) so that indices, bounds and
    // divisors take several paths: floats in [-1, 1], ints in [-3, 3], bools 0/1.
    for (std::int64_t k = 0; k < n; ++k) {
      if (t.type == OnnxType::kFloat)
        t.f.push_back(static_cast<float>(k % 5) * 0.5f - 1.0f);
      else
        t.i.push_back(t.type == OnnxType::kBool ? k % 2 : k % 7 - 3);
    }
    inputs.push_back(std::move(t));
  }
  auto r = m->run(inputs);
  if (!r) (void)r.error().to_string();
  return 0;
}
