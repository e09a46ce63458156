// ONNX kernels for reductions and normalisation: Reduce*, Softmax,
// LogSoftmax, BatchNormalization, LayerNormalization, ArgMax/ArgMin, CumSum
// (docs/deformer/onnx.md). Shared helpers: onnx_kernels.h.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "charkit/deformer/detail/onnx_kernels.h"
#include "charkit/deformer/error_codes.h"

namespace charkit::deformer::onnx_kernel {

using core::make_error;

Status reduce(const Node& n, const OnnxTensor& x, const OnnxTensor* axes_t, OnnxTensor& out,
              Scratch& sc) {
  const bool int_ok = n.op == Op::kReduceSum || n.op == Op::kReduceMax || n.op == Op::kReduceMin ||
                      n.op == Op::kReduceProd;
  if (x.type == OnnxType::kBool || (x.type == OnnxType::kInt64 && !int_ok))
    return node_error(n, codes::ONNX_TYPE,
                      std::string("does not take ") + type_str(x.type) + " input");
  bool present = false;
  if (auto st = axes_of(n, axes_t, sc.s2, present); !st) return st;
  if (sc.s2.empty() && n.noop_empty_axes) return reshape_to(n, x, out, x.shape);
  const auto r = static_cast<std::int64_t>(x.shape.size());
  std::array<bool, kOnnxMaxRank> red{};
  if (sc.s2.empty()) red.fill(true);
  for (std::int64_t a : sc.s2) {
    if (auto st = normalize_axis(n, a, r); !st) return st;
    if (red[static_cast<std::size_t>(a)])
      return node_error(n, codes::ONNX_ATTRIBUTE, "axis repeated");
    red[static_cast<std::size_t>(a)] = true;
  }
  Shape& keep = sc.s3;  // x's shape with reduced dims set to 1
  keep.assign(x.shape.begin(), x.shape.end());
  sc.s1.clear();
  std::int64_t group = 1;
  for (std::size_t k = 0; k < keep.size(); ++k) {
    if (red[k]) {
      group *= keep[k];
      keep[k] = 1;
      if (n.keepdims) sc.s1.push_back(1);
    } else {
      sc.s1.push_back(keep[k]);
    }
  }
  if (auto st = shape_out(n, out, x.type, sc.s1); !st) return st;
  Idx so{}, zero{};
  bstrides(keep, keep.size(), so);
  const auto m = static_cast<std::size_t>(out.numel());
  if (x.type == OnnxType::kInt64) {
    const bool prod = n.op == Op::kReduceProd;
    const std::int64_t init = prod                     ? 1
                              : n.op == Op::kReduceMax ? std::numeric_limits<std::int64_t>::min()
                              : n.op == Op::kReduceMin ? std::numeric_limits<std::int64_t>::max()
                                                       : 0;
    std::fill(out.i.begin(), out.i.end(), init);
    for_each_bcast(x.shape, so, zero, [&](std::int64_t e, std::int64_t o, std::int64_t) {
      std::int64_t& a = out.i[static_cast<std::size_t>(o)];
      const std::int64_t v = x.i[static_cast<std::size_t>(e)];
      a = prod                     ? wrap_mul(a, v)
          : n.op == Op::kReduceMax ? std::max(a, v)
          : n.op == Op::kReduceMin ? std::min(a, v)
                                   : wrap_add(a, v);
    });
    return core::Ok{};
  }
  // float32, accumulated in double.
  const double inf = std::numeric_limits<double>::infinity();
  const double init = n.op == Op::kReduceProd  ? 1.0
                      : n.op == Op::kReduceMax ? -inf
                      : n.op == Op::kReduceMin ? inf
                                               : 0.0;
  sc.acc.assign(m, init);
  double* acc = sc.acc.data();
  auto fold = [&](auto f) {
    for_each_bcast(x.shape, so, zero, [&](std::int64_t e, std::int64_t o, std::int64_t) {
      double& a = acc[o];
      a = f(a, static_cast<double>(x.f[static_cast<std::size_t>(e)]));
    });
  };
  switch (n.op) {
    case Op::kReduceMax:
      fold([](double a, double v) { return std::isnan(v) || v > a ? v : a; });
      break;
    case Op::kReduceMin:
      fold([](double a, double v) { return std::isnan(v) || v < a ? v : a; });
      break;
    case Op::kReduceProd:
      fold([](double a, double v) { return a * v; });
      break;
    case Op::kReduceL1:
      fold([](double a, double v) { return a + std::fabs(v); });
      break;
    case Op::kReduceL2:
    case Op::kReduceSumSquare:
      fold([](double a, double v) { return a + v * v; });
      break;
    case Op::kReduceLogSumExp:
      fold([](double a, double v) { return a + std::exp(v); });
      break;
    default:  // Sum, Mean
      fold([](double a, double v) { return a + v; });
      break;
  }
  for (std::size_t k = 0; k < m; ++k) {
    double v = acc[k];
    if (n.op == Op::kReduceMean) v /= static_cast<double>(group);
    if (n.op == Op::kReduceL2) v = std::sqrt(v);
    if (n.op == Op::kReduceLogSumExp) v = std::log(v);
    out.f[k] = static_cast<float>(v);
  }
  return core::Ok{};
}

// Softmax / LogSoftmax: along `axis` (opset >= 13) or over the 2-D coercion
// [prod(dims < axis), prod(dims >= axis)] (before 13).
Status softmax(const Node& n, const OnnxTensor& x, OnnxTensor& out) {
  if (auto st = need_float(n, x); !st) return st;
  const auto r = static_cast<std::int64_t>(x.shape.size());
  std::int64_t axis = n.axis;
  if (r == 0) return node_error(n, codes::ONNX_SHAPE, "input must have rank >= 1");
  if (auto st = normalize_axis(n, axis, r); !st) return st;
  std::int64_t outer = 1, len = 1, inner = 1;
  for (std::int64_t k = 0; k < r; ++k) {
    const std::int64_t d = x.shape[static_cast<std::size_t>(k)];
    if (k < axis)
      outer *= d;
    else if (k == axis || n.legacy_softmax)
      len *= d;
    else
      inner *= d;
  }
  if (auto st = shape_out(n, out, OnnxType::kFloat, x.shape); !st) return st;
  const bool log = n.op == Op::kLogSoftmax;
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t i = 0; i < inner; ++i) {
      const std::int64_t b = o * len * inner + i;
      float mx = -std::numeric_limits<float>::infinity();
      for (std::int64_t k = 0; k < len; ++k)
        mx = std::max(mx, x.f[static_cast<std::size_t>(b + k * inner)]);
      double sum = 0;
      for (std::int64_t k = 0; k < len; ++k)
        sum += std::exp(static_cast<double>(x.f[static_cast<std::size_t>(b + k * inner)] - mx));
      const double ls = std::log(sum);
      for (std::int64_t k = 0; k < len; ++k) {
        const auto at = static_cast<std::size_t>(b + k * inner);
        const double z = static_cast<double>(x.f[at] - mx);
        out.f[at] = static_cast<float>(log ? z - ls : std::exp(z - ls));
      }
    }
  return core::Ok{};
}

// BatchNormalization with the stored statistics: y = (x - mean) * scale /
// sqrt(var + epsilon) + B per channel (dim 1).
Status batch_norm(const Node& n, const OnnxTensor& x, std::span<const OnnxTensor* const> p,
                  OnnxTensor& out) {
  if (auto st = need_float(n, x); !st) return st;
  if (x.shape.size() < 2)
    return node_error(n, codes::ONNX_SHAPE, "X must have rank >= 2 (N, C, ...)");
  const std::int64_t c = x.shape[1];
  for (std::size_t k = 1; k < 5; ++k) {
    if (auto st = need_float(n, *p[k]); !st) return st;
    if (p[k]->numel() != c || p[k]->shape.size() != 1)
      return node_error(n, codes::ONNX_SHAPE,
                        "scale, B, mean and var must have shape [" + std::to_string(c) + "]");
  }
  if (auto st = shape_out(n, out, OnnxType::kFloat, x.shape); !st) return st;
  std::int64_t inner = 1;
  for (std::size_t k = 2; k < x.shape.size(); ++k) inner *= x.shape[k];
  const std::int64_t batch = x.shape[0];
  for (std::int64_t ch = 0; ch < c; ++ch) {
    const auto cu = static_cast<std::size_t>(ch);
    const float a = p[1]->f[cu] / std::sqrt(p[4]->f[cu] + n.epsilon);
    const float b = p[2]->f[cu] - p[3]->f[cu] * a;
    for (std::int64_t s = 0; s < batch; ++s) {
      const auto off = static_cast<std::size_t>((s * c + ch) * inner);
      for (std::int64_t k = 0; k < inner; ++k)
        out.f[off + static_cast<std::size_t>(k)] = x.f[off + static_cast<std::size_t>(k)] * a + b;
    }
  }
  return core::Ok{};
}

// LayerNormalization over dims [axis, rank): statistics in double, then
// (x - mean) / sqrt(var + epsilon) * Scale + B with Scale and B broadcast
// onto the normalised dims.
Status layer_norm(const Node& n, const OnnxTensor& x, const OnnxTensor& scale,
                  const OnnxTensor* bias, OnnxTensor& out, Scratch& sc) {
  if (auto st = need_float(n, x); !st) return st;
  if (auto st = need_float(n, scale); !st) return st;
  if (bias)
    if (auto st = need_float(n, *bias); !st) return st;
  const auto r = static_cast<std::int64_t>(x.shape.size());
  if (r == 0) return node_error(n, codes::ONNX_SHAPE, "X must have rank >= 1");
  std::int64_t axis = n.axis;
  if (auto st = normalize_axis(n, axis, r); !st) return st;
  const std::span<const std::int64_t> norm(x.shape.data() + axis, x.shape.size() - axis);
  for (const OnnxTensor* t : {&scale, bias}) {
    if (!t) continue;
    if (!broadcast(norm, t->shape, sc.s1) ||
        !std::equal(sc.s1.begin(), sc.s1.end(), norm.begin(), norm.end()))
      return node_error(
          n, codes::ONNX_SHAPE,
          shape_str(t->shape) + " does not broadcast to the normalised dims " + shape_str(norm));
  }
  if (auto st = shape_out(n, out, OnnxType::kFloat, x.shape); !st) return st;
  const std::int64_t len = numel_of(norm);
  const std::int64_t rows = len ? x.numel() / len : 0;
  Idx ss{}, sb{};
  bstrides(scale.shape, norm.size(), ss);
  if (bias) bstrides(bias->shape, norm.size(), sb);
  for (std::int64_t row = 0; row < rows; ++row) {
    const float* xr = x.f.data() + row * len;
    float* yr = out.f.data() + row * len;
    double mean = 0, var = 0;
    for (std::int64_t k = 0; k < len; ++k) mean += xr[k];
    mean /= static_cast<double>(len);
    for (std::int64_t k = 0; k < len; ++k) var += (xr[k] - mean) * (xr[k] - mean);
    var /= static_cast<double>(len);
    const double inv = 1.0 / std::sqrt(var + static_cast<double>(n.epsilon));
    for_each_bcast(norm, ss, sb, [&](std::int64_t e, std::int64_t is, std::int64_t ib) {
      const double b = bias ? bias->f[static_cast<std::size_t>(ib)] : 0.0;
      yr[e] = static_cast<float>((xr[e] - mean) * inv * scale.f[static_cast<std::size_t>(is)] + b);
    });
  }
  return core::Ok{};
}

// ArgMax / ArgMin along one axis: the first (or, with select_last_index,
// the last) position of the extreme value, as int64.
Status arg_extreme(const Node& n, const OnnxTensor& x, OnnxTensor& out, Scratch& sc) {
  if (x.type == OnnxType::kBool) return node_error(n, codes::ONNX_TYPE, "does not take bool input");
  const auto r = static_cast<std::int64_t>(x.shape.size());
  if (r == 0) return node_error(n, codes::ONNX_SHAPE, "input must have rank >= 1");
  std::int64_t axis = n.axis;
  if (auto st = normalize_axis(n, axis, r); !st) return st;
  const auto ax = static_cast<std::size_t>(axis);
  const std::int64_t len = x.shape[ax];
  if (len == 0) return node_error(n, codes::ONNX_SHAPE, "the reduced axis is empty");
  sc.s1.clear();
  std::int64_t outer = 1, inner = 1;
  for (std::size_t k = 0; k < x.shape.size(); ++k) {
    if (k < ax) outer *= x.shape[k];
    if (k > ax) inner *= x.shape[k];
    if (k != ax)
      sc.s1.push_back(x.shape[k]);
    else if (n.keepdims)
      sc.s1.push_back(1);
  }
  if (auto st = shape_out(n, out, OnnxType::kInt64, sc.s1); !st) return st;
  const bool mx = n.op == Op::kArgMax;
  auto scan = [&](const auto& v) {
    for (std::int64_t o = 0; o < outer; ++o)
      for (std::int64_t i = 0; i < inner; ++i) {
        const std::int64_t base = o * len * inner + i;
        std::int64_t best = 0;
        auto bv = v[static_cast<std::size_t>(base)];
        for (std::int64_t k = 1; k < len; ++k) {
          const auto c = v[static_cast<std::size_t>(base + k * inner)];
          const bool better =
              mx ? (n.select_last ? c >= bv : c > bv) : (n.select_last ? c <= bv : c < bv);
          if (better) {
            best = k;
            bv = c;
          }
        }
        out.i[static_cast<std::size_t>(o * inner + i)] = best;
      }
  };
  if (x.type == OnnxType::kFloat)
    scan(x.f);
  else
    scan(x.i);
  return core::Ok{};
}

// CumSum along the axis given as input 1, optionally exclusive / reversed.
Status cumsum(const Node& n, const OnnxTensor& x, const OnnxTensor& axis_t, OnnxTensor& out) {
  if (x.type == OnnxType::kBool) return node_error(n, codes::ONNX_TYPE, "does not take bool input");
  if (axis_t.type != OnnxType::kInt64 || axis_t.i.size() != 1)
    return node_error(n, codes::ONNX_TYPE, "axis must be an int64 scalar");
  const auto r = static_cast<std::int64_t>(x.shape.size());
  if (r == 0) return node_error(n, codes::ONNX_SHAPE, "input must have rank >= 1");
  std::int64_t axis = axis_t.i[0];
  if (auto st = normalize_axis(n, axis, r); !st) return st;
  if (auto st = shape_out(n, out, x.type, x.shape); !st) return st;
  std::int64_t outer = 1, inner = 1;
  for (std::int64_t k = 0; k < r; ++k) {
    if (k < axis) outer *= x.shape[static_cast<std::size_t>(k)];
    if (k > axis) inner *= x.shape[static_cast<std::size_t>(k)];
  }
  const std::int64_t len = x.shape[static_cast<std::size_t>(axis)];
  auto run = [&](const auto& v, auto& o, auto zero, auto add) {
    for (std::int64_t a = 0; a < outer; ++a)
      for (std::int64_t i = 0; i < inner; ++i) {
        auto acc = zero;
        for (std::int64_t s = 0; s < len; ++s) {
          const std::int64_t k = n.reverse ? len - 1 - s : s;
          const auto at = static_cast<std::size_t>((a * len + k) * inner + i);
          if (n.exclusive) {
            o[at] = acc;
            acc = add(acc, v[at]);
          } else {
            acc = add(acc, v[at]);
            o[at] = acc;
          }
        }
      }
  };
  if (x.type == OnnxType::kFloat)
    run(x.f, out.f, 0.0f, [](float p, float q) { return p + q; });
  else
    run(x.i, out.i, std::int64_t{0}, wrap_add);
  return core::Ok{};
}

}  // namespace charkit::deformer::onnx_kernel
