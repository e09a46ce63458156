// Executing `.nmn` networks (docs/deformer/nmn.md, "Execution"). The layer tree
// is flattened once into a list of leaf operations (a Sequence is just their
// composition); evaluation ping-pongs between two preallocated buffers.
#include <algorithm>
#include <cassert>
#include <cmath>
#include <string>

#include "charkit/deformer/detail/batch_kernels.h"
#include "charkit/deformer/error_codes.h"
#include "charkit/deformer/nmn.h"

namespace charkit::deformer {
namespace {

void flatten_into(const NmnLayer& l, std::vector<NmnRunner::Op>& ops) {
  if (l.type == NmnLayerType::kSequence) {
    for (const auto& c : l.children) flatten_into(c, ops);
    return;
  }
  if (l.type == NmnLayerType::kCopy) return;  // identity
  NmnRunner::Op op{l.type, l.in, l.out, l.blocks, l.rows, l.cols, {}, {}, {}, {}};
  switch (l.type) {
    case NmnLayerType::kLinear:
      op.w = l.weights;
      op.bias = l.biases;
      break;
    case NmnLayerType::kCompressedLinear:
      // Dequantised once: weight[i][o] = q * scale[i] + offset[i].
      op.type = NmnLayerType::kLinear;
      op.w.resize(l.qweights.size());
      for (std::size_t i = 0; i < l.in; ++i)
        for (std::size_t o = 0; o < l.out; ++o)
          op.w[i * l.out + o] =
              static_cast<float>(l.qweights[i * l.out + o]) * l.scales[i] + l.offsets[i];
      op.bias = l.biases;
      break;
    case NmnLayerType::kMultiLinear:
      op.w = l.weights;
      op.bias = l.biases;
      break;
    default:
      op.a = l.a;
      op.b = l.b;
      break;
  }
  ops.push_back(std::move(op));
}

void apply(const NmnRunner::Op& op, const float* x, float* y) {
  switch (op.type) {
    case NmnLayerType::kLinear:
      // The kernel MlpEvaluator uses: an exported network re-reads to the bit.
      detail::dense_rows(x, 1, op.in, op.w.data(), op.bias.data(), op.out, y);
      return;
    case NmnLayerType::kMultiLinear: {
      std::copy(op.bias.begin(), op.bias.end(), y);
      if (op.rows == 0 || op.cols == 0) return;  // the biases (or nothing)
      const float* w = op.w.data();
      for (std::size_t blk = 0; blk < op.blocks; ++blk) {
        const float* xb = x + blk * op.rows;
        float* yb = y + blk * op.cols;
        for (std::size_t r = 0; r < op.rows; ++r, w += op.cols) {
          const float xr = xb[r];
          for (std::size_t c = 0; c < op.cols; ++c) yb[c] += xr * w[c];
        }
      }
      return;
    }
    case NmnLayerType::kRelu:
      for (std::size_t i = 0; i < op.in; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
      return;
    case NmnLayerType::kElu:
      // MlpEvaluator's ELU (within 4 ulp of nmn_elu), for the bit-exact re-read.
      std::copy(x, x + op.in, y);
      detail::elu_inplace(y, op.in);
      return;
    case NmnLayerType::kTanh:
      for (std::size_t i = 0; i < op.in; ++i) y[i] = std::tanh(x[i]);
      return;
    case NmnLayerType::kGelu:
      for (std::size_t i = 0; i < op.in; ++i) y[i] = nmn_gelu(x[i]);
      return;
    case NmnLayerType::kPrelu:
      for (std::size_t i = 0; i < op.in; ++i) y[i] = x[i] > 0.0f ? x[i] : op.a[i] * x[i];
      return;
    case NmnLayerType::kNormalize:
      for (std::size_t i = 0; i < op.in; ++i) y[i] = (x[i] - op.a[i]) / op.b[i];
      return;
    case NmnLayerType::kDenormalize:
      for (std::size_t i = 0; i < op.in; ++i) y[i] = x[i] * op.b[i] + op.a[i];
      return;
    case NmnLayerType::kClamp:
      for (std::size_t i = 0; i < op.in; ++i) y[i] = std::min(std::max(x[i], op.a[i]), op.b[i]);
      return;
    default:
      assert(false && "flatten() emits only supported leaf layers");
      return;
  }
}

}  // namespace

float nmn_elu(float x) {
  return x > 0.0f ? x : std::expm1(x);
}
float nmn_gelu(float x) {
  return x / (1.0f + std::exp(-1.702f * x));
}

NmnRunner::Plan NmnRunner::flatten(const NmnModel& model) {
  Plan p;
  flatten_into(model.root, p.ops);
  p.in = model.input_size;
  p.out = model.output_size;
  return p;
}

void NmnRunner::eval(const Plan& plan, std::span<const float> in, std::span<float> out,
                     std::vector<float>& s0, std::vector<float>& s1) {
  if (plan.ops.empty()) {  // identity (empty Sequence or only Copy layers)
    std::copy(in.begin(), in.end(), out.begin());
    return;
  }
  const float* x = in.data();
  for (std::size_t i = 0; i < plan.ops.size(); ++i) {
    float* y = i + 1 == plan.ops.size() ? out.data() : (i % 2 == 0 ? s0.data() : s1.data());
    apply(plan.ops[i], x, y);
    x = y;
  }
}

core::Result<NmnRunner> NmnRunner::create(const NmnNetwork& n,
                                          std::span<const std::uint32_t> group_items) {
  NmnRunner r;
  const std::uint64_t inputs = n.input_count();
  if (n.input_mean.size() != inputs || n.input_std.size() != inputs || n.main.input_size != inputs)
    return core::make_error(codes::NMN_RUNNER, "network input sizes are inconsistent");
  r.input_count_ = static_cast<std::size_t>(inputs);
  r.mean_ = n.input_mean;
  r.std_ = n.input_std;  // divided by at run time: (x - mean) / std, as the engine does
  r.main_ = flatten(n.main);
  std::size_t width = std::max<std::size_t>(r.input_count_, r.main_.out);
  for (const auto& op : r.main_.ops) width = std::max<std::size_t>(width, std::max(op.in, op.out));
  if (n.group) {
    const std::uint64_t want = std::uint64_t{n.num_groups} * n.num_items_per_group;
    if (group_items.size() != want)
      return core::make_error(codes::NMN_GROUP_ITEMS,
                              "the group model needs " + std::to_string(want) +
                                  " item indices (NumGroups * NumItemsPerGroup), got " +
                                  std::to_string(group_items.size()));
    const std::uint64_t items = std::uint64_t{n.num_bones} + n.num_curves;
    for (std::size_t i = 0; i < group_items.size(); ++i)
      if (group_items[i] >= items)
        return core::make_error(codes::NMN_GROUP_ITEMS, "group item " + std::to_string(i) + " is " +
                                                            std::to_string(group_items[i]) +
                                                            ", only " + std::to_string(items) +
                                                            " bones + curves exist");
    if (n.group->input_size != want * 6)
      return core::make_error(codes::NMN_RUNNER,
                              "group model input size is not NumGroups*NumItemsPerGroup*6");
    r.has_group_ = true;
    r.group_items_.assign(group_items.begin(), group_items.end());
    r.group_ = flatten(*n.group);
    r.group_in_.resize(r.group_.in);
    for (const auto& op : r.group_.ops)
      width = std::max<std::size_t>(width, std::max(op.in, op.out));
  } else if (!group_items.empty()) {
    return core::make_error(codes::NMN_GROUP_ITEMS,
                            "group items given but the network has no group model");
  }
  r.output_count_ = r.main_.out + (r.has_group_ ? r.group_.out : 0);
  r.norm_.resize(r.input_count_);
  r.s0_.resize(width);
  r.s1_.resize(width);
  return r;
}

void NmnRunner::run(std::span<const float> input, std::span<float> output) {
  assert(input.size() == input_count_ && output.size() == output_count_);
  for (std::size_t i = 0; i < input_count_; ++i) norm_[i] = (input[i] - mean_[i]) / std_[i];
  eval(main_, norm_, output.first(main_.out), s0_, s1_);
  if (has_group_) {
    for (std::size_t k = 0; k < group_items_.size(); ++k)
      std::copy_n(norm_.begin() + static_cast<std::ptrdiff_t>(group_items_[k]) * 6, 6,
                  group_in_.begin() + static_cast<std::ptrdiff_t>(k) * 6);
    eval(group_, group_in_, output.subspan(main_.out), s0_, s1_);
  }
}

void NmnRunner::run_batch(std::span<const float> input, std::span<float> output, std::size_t rows) {
  assert(input.size() == rows * input_count_ && output.size() == rows * output_count_);
  for (std::size_t r = 0; r < rows; ++r)
    run(input.subspan(r * input_count_, input_count_),
        output.subspan(r * output_count_, output_count_));
}

}  // namespace charkit::deformer
