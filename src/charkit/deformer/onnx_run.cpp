// ONNX execution: the element-wise and linear-algebra kernels, the dispatch
// of every node to its kernel and the run loop (shape / indexing kernels in
// onnx_ops_shape.cpp, reductions and normalisation in onnx_ops_reduce.cpp,
// shared helpers in onnx_kernels.h). numpy/ONNX multidirectional
// broadcasting. Buffers of node outputs live in the graph and are resized in
// place, so a second run with the same input shapes allocates nothing for
// intermediates.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>

#include <Eigen/Core>

#include "charkit/deformer/detail/onnx_kernels.h"
#include "charkit/deformer/error_codes.h"
#include "charkit/deformer/onnx.h"

namespace charkit::deformer {

using core::make_error;
using core::Result;
using core::Status;
using namespace onnx_detail;
using namespace onnx_kernel;

namespace {

// Element-wise binary ops with numpy broadcasting: the arithmetic ops on
// float32 or int64 (both sides the same type), Pow (any mix: the result has
// the base's type), PRelu, comparisons (-> bool) and the logical ops on bool.
// `op` overrides the node's op (variadic Max/Min/Sum/Mean fold through here).
Status binary(const Node& n, Op op, const OnnxTensor& a, const OnnxTensor& b, OnnxTensor& out,
              Scratch& sc) {
  std::span<const std::int64_t> bs = b.shape;
  if (n.legacy) {
    // Opset < 7: shapes equal, or B broadcast onto A when broadcast=1,
    // aligned at `axis` when given (B's dims then sit at A[axis...]).
    if (!n.legacy_broadcast) {
      if (a.shape != b.shape)
        return node_error(n, codes::ONNX_SHAPE,
                          "shapes " + shape_str(a.shape) + " and " + shape_str(b.shape) +
                              " differ and broadcast=0");
    } else if (n.has_axis) {
      std::int64_t ax = n.axis < 0 ? n.axis + static_cast<std::int64_t>(a.shape.size()) : n.axis;
      if (ax < 0 || ax + static_cast<std::int64_t>(b.shape.size()) >
                        static_cast<std::int64_t>(a.shape.size()))
        return node_error(n, codes::ONNX_SHAPE, "axis out of range for legacy broadcast");
      sc.s2.assign(b.shape.begin(), b.shape.end());
      sc.s2.resize(a.shape.size() - static_cast<std::size_t>(ax), 1);
      bs = sc.s2;
    }
  }
  if (!broadcast(a.shape, bs, sc.s1) || sc.s1.size() > kOnnxMaxRank)
    return node_error(
        n, codes::ONNX_SHAPE,
        "shapes " + shape_str(a.shape) + " and " + shape_str(b.shape) + " do not broadcast");
  if (n.legacy && sc.s1 != a.shape)
    return node_error(n, codes::ONNX_SHAPE, "legacy broadcast must keep A's shape");
  if (op == Op::kPRelu && sc.s1 != a.shape)
    return node_error(
        n, codes::ONNX_SHAPE,
        "slope " + shape_str(b.shape) + " does not broadcast to X " + shape_str(a.shape));
  const bool logical = op == Op::kAnd || op == Op::kOr || op == Op::kXor;
  if (logical && (a.type != OnnxType::kBool || b.type != OnnxType::kBool))
    return node_error(n, codes::ONNX_TYPE, "needs bool inputs");
  if (op != Op::kPow && a.type != b.type)
    return node_error(
        n, codes::ONNX_TYPE,
        std::string("input types differ: ") + type_str(a.type) + " and " + type_str(b.type));
  if (!logical && op != Op::kEqual && a.type == OnnxType::kBool)
    return node_error(n, codes::ONNX_TYPE, "does not take bool inputs");
  if ((op == Op::kPRelu || op == Op::kMean) && a.type != OnnxType::kFloat)
    return node_error(n, codes::ONNX_TYPE, "needs float32 inputs");
  const OnnxType out_type = is_compare(op) || logical ? OnnxType::kBool : a.type;
  if (auto st = shape_out(n, out, out_type, sc.s1); !st) return st;
  const std::span<const std::int64_t> os = sc.s1, as = a.shape;
  auto run = [&](const auto* pa, const auto* pb, auto* po, auto f) {
    bcast2(os, as, bs,
           [&](std::int64_t e, std::int64_t ia, std::int64_t ib) { po[e] = f(pa[ia], pb[ib]); });
  };
  if (is_compare(op)) {
    if (a.type == OnnxType::kFloat)
      run(a.f.data(), b.f.data(), out.i.data(),
          [op](float x, float y) { return compare(op, x, y); });
    else
      run(a.i.data(), b.i.data(), out.i.data(),
          [op](std::int64_t x, std::int64_t y) { return compare(op, x, y); });
    return core::Ok{};
  }
  if (logical) {
    run(a.i.data(), b.i.data(), out.i.data(), [op](std::int64_t x, std::int64_t y) -> std::int64_t {
      return op == Op::kAnd ? (x && y) : op == Op::kOr ? (x || y) : (x != y);
    });
    return core::Ok{};
  }
  if (op == Op::kPow) {
    if (a.type == OnnxType::kBool || b.type == OnnxType::kBool)
      return node_error(n, codes::ONNX_TYPE, "does not take bool inputs");
    const bool af = a.type == OnnxType::kFloat, bf = b.type == OnnxType::kFloat;
    if (af && bf)
      run(a.f.data(), b.f.data(), out.f.data(), [](float x, float y) { return std::pow(x, y); });
    else if (af)
      run(a.f.data(), b.i.data(), out.f.data(), [](float x, std::int64_t y) {
        return static_cast<float>(std::pow(static_cast<double>(x), static_cast<double>(y)));
      });
    else if (bf)
      return node_error(n, codes::ONNX_TYPE,
                        "an int64 base with a float32 exponent is not supported");
    else
      run(a.i.data(), b.i.data(), out.i.data(), int_pow);
    return core::Ok{};
  }
  if (a.type == OnnxType::kFloat) {
    const float* pa = a.f.data();
    const float* pb = b.f.data();
    float* po = out.f.data();
    switch (op) {
      case Op::kAdd:
      case Op::kSum:
      case Op::kMean:
        run(pa, pb, po, [](float x, float y) { return x + y; });
        break;
      case Op::kSub:
        run(pa, pb, po, [](float x, float y) { return x - y; });
        break;
      case Op::kMul:
        run(pa, pb, po, [](float x, float y) { return x * y; });
        break;
      case Op::kDiv:
        run(pa, pb, po, [](float x, float y) { return x / y; });
        break;
      case Op::kMax:
        run(pa, pb, po, fmax_nan);
        break;
      case Op::kMin:
        run(pa, pb, po, fmin_nan);
        break;
      default:  // PRelu
        run(pa, pb, po, [](float x, float s) { return x < 0 ? s * x : x; });
        break;
    }
    return core::Ok{};
  }
  const std::int64_t* pa = a.i.data();
  const std::int64_t* pb = b.i.data();
  std::int64_t* po = out.i.data();
  switch (op) {
    case Op::kAdd:
    case Op::kSum:
      run(pa, pb, po, wrap_add);
      break;
    case Op::kSub:
      run(pa, pb, po, wrap_sub);
      break;
    case Op::kMul:
      run(pa, pb, po, wrap_mul);
      break;
    case Op::kDiv:
      if (std::find(b.i.begin(), b.i.end(), 0) != b.i.end())
        return node_error(n, codes::ONNX_VALUE, "integer division by zero");
      run(pa, pb, po, int_div);
      break;
    case Op::kMax:
      run(pa, pb, po, [](std::int64_t x, std::int64_t y) { return std::max(x, y); });
      break;
    default:  // Min
      run(pa, pb, po, [](std::int64_t x, std::int64_t y) { return std::min(x, y); });
      break;
  }
  return core::Ok{};
}

// Bounds the multiply-adds of one Gemm / MatMul (outputs x K) to 4096 per
// allowed output element, so that a small file cannot ask for hours of work.
Status check_work(const Node& n, std::int64_t outputs, std::int64_t k) {
  if (static_cast<double>(outputs) * static_cast<double>(k) >
      static_cast<double>(n.max_elements) * 4096.0)
    return node_error(
        n, codes::ONNX_SHAPE,
        "the product needs more than " + std::to_string(n.max_elements) + " x 4096 multiply-adds");
  return core::Ok{};
}

// C[M,N] += alpha * op(A) op(B), row-major, op = optional transpose
// (Eigen's blocked, vectorised product).
void gemm_kernel(const float* a, bool trans_a, const float* b, bool trans_b, float* c,
                 std::int64_t M, std::int64_t N, std::int64_t K, float alpha) {
  using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using CMap = Eigen::Map<const Mat>;
  Eigen::Map<Mat> cm(c, M, N);
  const CMap am(a, trans_a ? K : M, trans_a ? M : K);
  const CMap bm(b, trans_b ? N : K, trans_b ? K : N);
  if (!trans_a && !trans_b)
    cm.noalias() += alpha * am * bm;
  else if (!trans_a)
    cm.noalias() += alpha * am * bm.transpose();
  else if (!trans_b)
    cm.noalias() += alpha * am.transpose() * bm;
  else
    cm.noalias() += alpha * am.transpose() * bm.transpose();
}

Status gemm(const Node& n, const OnnxTensor& a, const OnnxTensor& b, const OnnxTensor* c,
            OnnxTensor& out, Scratch& sc) {
  if (auto st = need_float(n, a); !st) return st;
  if (auto st = need_float(n, b); !st) return st;
  if (a.shape.size() != 2 || b.shape.size() != 2)
    return node_error(
        n, codes::ONNX_SHAPE,
        "A and B must be 2-D, got " + shape_str(a.shape) + " and " + shape_str(b.shape));
  const std::int64_t M = n.trans_a ? a.shape[1] : a.shape[0];
  const std::int64_t K = n.trans_a ? a.shape[0] : a.shape[1];
  const std::int64_t K2 = n.trans_b ? b.shape[1] : b.shape[0];
  const std::int64_t N = n.trans_b ? b.shape[0] : b.shape[1];
  if (K != K2)
    return node_error(
        n, codes::ONNX_SHAPE,
        "inner dimensions differ: " + shape_str(a.shape) + " x " + shape_str(b.shape));
  sc.s1 = {M, N};
  if (auto st = shape_out(n, out, OnnxType::kFloat, sc.s1); !st) return st;
  if (auto st = check_work(n, out.numel(), K); !st) return st;
  std::fill(out.f.begin(), out.f.end(), 0.0f);
  if (c) {
    if (auto st = need_float(n, *c); !st) return st;
    // C broadcasts one way onto [M, N].
    if (!broadcast(sc.s1, c->shape, sc.s2) || sc.s2 != sc.s1)
      return node_error(n, codes::ONNX_SHAPE,
                        "C " + shape_str(c->shape) + " does not broadcast to " + shape_str(sc.s1));
    Idx so{}, scs{};
    bstrides(c->shape, 2, scs);
    float* po = out.f.data();
    for_each_bcast(sc.s1, so, scs, [&](std::int64_t e, std::int64_t, std::int64_t ic) {
      po[e] = n.beta * c->f[static_cast<std::size_t>(ic)];
    });
  }
  gemm_kernel(a.f.data(), n.trans_a, b.f.data(), n.trans_b, out.f.data(), M, N, K, n.alpha);
  return core::Ok{};
}

Status matmul(const Node& n, const OnnxTensor& a, const OnnxTensor& b, OnnxTensor& out,
              Scratch& sc) {
  if (auto st = need_float(n, a); !st) return st;
  if (auto st = need_float(n, b); !st) return st;
  if (a.shape.empty() || b.shape.empty())
    return node_error(n, codes::ONNX_SHAPE, "MatMul operands must have rank >= 1");
  // 1-D operands: A as [1, K] and B as [K, 1], the added dim removed after.
  const bool a1 = a.shape.size() == 1, b1 = b.shape.size() == 1;
  const std::int64_t M = a1 ? 1 : a.shape[a.shape.size() - 2];
  const std::int64_t K = a.shape.back();
  const std::int64_t K2 = b1 ? b.shape[0] : b.shape[b.shape.size() - 2];
  const std::int64_t N = b1 ? 1 : b.shape.back();
  if (K != K2)
    return node_error(
        n, codes::ONNX_SHAPE,
        "inner dimensions differ: " + shape_str(a.shape) + " x " + shape_str(b.shape));
  std::span<const std::int64_t> ab(a.shape.data(), a1 ? 0 : a.shape.size() - 2);
  std::span<const std::int64_t> bb(b.shape.data(), b1 ? 0 : b.shape.size() - 2);
  Shape& batch = sc.s3;
  if (!broadcast(ab, bb, batch) || batch.size() + 2 > kOnnxMaxRank)
    return node_error(n, codes::ONNX_SHAPE,
                      "batch dimensions of " + shape_str(a.shape) + " and " + shape_str(b.shape) +
                          " do not broadcast");
  sc.s1 = batch;
  if (!a1) sc.s1.push_back(M);
  if (!b1) sc.s1.push_back(N);
  if (auto st = shape_out(n, out, OnnxType::kFloat, sc.s1); !st) return st;
  if (auto st = check_work(n, out.numel(), K); !st) return st;
  std::fill(out.f.begin(), out.f.end(), 0.0f);
  Idx sa{}, sb{};
  bstrides(ab, batch.size(), sa);
  bstrides(bb, batch.size(), sb);
  const std::int64_t mk = M * K, kn = K * N, mn = M * N;
  if (batch.empty()) {
    gemm_kernel(a.f.data(), false, b.f.data(), false, out.f.data(), M, N, K, 1.0f);
    return core::Ok{};
  }
  for_each_bcast(batch, sa, sb, [&](std::int64_t e, std::int64_t ia, std::int64_t ib) {
    gemm_kernel(a.f.data() + ia * mk, false, b.f.data() + ib * kn, false, out.f.data() + e * mn, M,
                N, K, 1.0f);
  });
  return core::Ok{};
}

Status reshape(const Node& n, const OnnxTensor& in, const OnnxTensor* shape_t, OnnxTensor& out,
               Scratch& sc) {
  if (shape_t) {
    if (auto st = int_list(n, *shape_t, sc.s1); !st) return st;
  } else if (n.has_ints) {
    sc.s1 = n.ints;
  } else {
    return node_error(n, codes::ONNX_NODE,
                      "no shape (input 1 or, before opset 5, attribute shape)");
  }
  int infer = -1;
  std::int64_t known = 1;
  for (std::size_t k = 0; k < sc.s1.size(); ++k) {
    std::int64_t& d = sc.s1[k];
    if (d == 0 && !n.allowzero) {
      if (k >= in.shape.size())
        return node_error(n, codes::ONNX_SHAPE,
                          "0 at position " + std::to_string(k) + " has no input dimension to copy");
      d = in.shape[k];
    }
    if (d == -1) {
      if (infer >= 0) return node_error(n, codes::ONNX_SHAPE, "more than one -1 in the shape");
      infer = static_cast<int>(k);
      continue;
    }
    if (d < 0) return node_error(n, codes::ONNX_SHAPE, "negative dimension in the shape");
    if (d != 0 && known > kOnnxMaxElements / d)
      return node_error(n, codes::ONNX_SHAPE, "shape too large");
    known *= d;
  }
  if (infer >= 0) {
    if (known == 0 || in.numel() % known != 0)
      return node_error(
          n, codes::ONNX_SHAPE,
          "cannot infer -1 reshaping " + shape_str(in.shape) + " to " + shape_str(sc.s1));
    sc.s1[static_cast<std::size_t>(infer)] = in.numel() / known;
  }
  return reshape_to(n, in, out, sc.s1);
}

template <typename T>
void transpose_data(const OnnxTensor& in, OnnxTensor& out, const Shape& perm) {
  const std::size_t r = in.shape.size();
  Idx ist{}, st{};
  std::int64_t s = 1;
  for (std::size_t k = r; k-- > 0;) {
    ist[k] = s;
    s *= in.shape[k];
  }
  for (std::size_t k = 0; k < r; ++k) st[k] = ist[static_cast<std::size_t>(perm[k])];
  const T* src = cdata<T>(in).data();
  T* dst = data<T>(out).data();
  Idx zero{};
  for_each_bcast(out.shape, st, zero,
                 [&](std::int64_t e, std::int64_t ii, std::int64_t) { dst[e] = src[ii]; });
}

Status transpose(const Node& n, const OnnxTensor& in, OnnxTensor& out, Scratch& sc) {
  const std::size_t r = in.shape.size();
  Shape& perm = sc.s2;
  if (n.has_ints) {
    perm = n.ints;
  } else {
    perm.resize(r);
    for (std::size_t k = 0; k < r; ++k) perm[k] = static_cast<std::int64_t>(r - 1 - k);
  }
  if (perm.size() != r)
    return node_error(n, codes::ONNX_ATTRIBUTE, "perm length differs from rank");
  std::array<bool, kOnnxMaxRank> seen{};
  sc.s1.resize(r);
  for (std::size_t k = 0; k < r; ++k) {
    if (perm[k] < 0 || perm[k] >= static_cast<std::int64_t>(r) ||
        seen[static_cast<std::size_t>(perm[k])])
      return node_error(n, codes::ONNX_ATTRIBUTE, "perm is not a permutation");
    seen[static_cast<std::size_t>(perm[k])] = true;
    sc.s1[k] = in.shape[static_cast<std::size_t>(perm[k])];
  }
  if (auto st = shape_out(n, out, in.type, sc.s1); !st) return st;
  if (in.type == OnnxType::kFloat)
    transpose_data<float>(in, out, perm);
  else
    transpose_data<std::int64_t>(in, out, perm);
  return core::Ok{};
}

template <typename T>
void concat_data(std::span<const OnnxTensor* const> ins, OnnxTensor& out, std::size_t axis) {
  std::int64_t outer = 1;
  for (std::size_t k = 0; k < axis; ++k) outer *= out.shape[k];
  T* dst = data<T>(out).data();
  for (std::int64_t o = 0; o < outer; ++o)
    for (const OnnxTensor* t : ins) {
      std::int64_t chunk = outer ? t->numel() / std::max<std::int64_t>(outer, 1) : 0;
      const T* src = cdata<T>(*t).data() + o * chunk;
      dst = std::copy(src, src + chunk, dst);
    }
}

Status concat(const Node& n, std::span<const OnnxTensor* const> ins, OnnxTensor& out, Scratch& sc) {
  const OnnxTensor& first = *ins[0];
  const auto r = static_cast<std::int64_t>(first.shape.size());
  std::int64_t axis = n.axis;
  if (auto st = normalize_axis(n, axis, r); !st) return st;
  const auto ax = static_cast<std::size_t>(axis);
  sc.s1 = first.shape;
  sc.s1[ax] = 0;
  for (const OnnxTensor* t : ins) {
    if (t->type != first.type || t->shape.size() != first.shape.size())
      return node_error(n, codes::ONNX_SHAPE, "inputs differ in type or rank");
    for (std::size_t k = 0; k < first.shape.size(); ++k)
      if (k != ax && t->shape[k] != first.shape[k])
        return node_error(n, codes::ONNX_SHAPE,
                          "shapes " + shape_str(first.shape) + " and " + shape_str(t->shape) +
                              " differ off the axis");
    if (sc.s1[ax] > kOnnxMaxElements) return node_error(n, codes::ONNX_SHAPE, "output too large");
    sc.s1[ax] += t->shape[ax];
  }
  if (auto st = shape_out(n, out, first.type, sc.s1); !st) return st;
  if (first.type == OnnxType::kFloat)
    concat_data<float>(ins, out, ax);
  else
    concat_data<std::int64_t>(ins, out, ax);
  return core::Ok{};
}

Status unsqueeze(const Node& n, const OnnxTensor& in, const OnnxTensor* axes_t, OnnxTensor& out,
                 Scratch& sc) {
  bool present = false;
  if (auto st = axes_of(n, axes_t, sc.s2, present); !st) return st;
  if (!present) return node_error(n, codes::ONNX_NODE, "no axes (input 1 or attribute axes)");
  const auto r = static_cast<std::int64_t>(in.shape.size() + sc.s2.size());
  if (r > static_cast<std::int64_t>(kOnnxMaxRank))
    return node_error(n, codes::ONNX_SHAPE, "result rank too large");
  std::array<bool, kOnnxMaxRank> ins{};
  for (std::int64_t a : sc.s2) {
    if (auto st = normalize_axis(n, a, r); !st) return st;
    if (ins[static_cast<std::size_t>(a)])
      return node_error(n, codes::ONNX_ATTRIBUTE, "duplicate axis");
    ins[static_cast<std::size_t>(a)] = true;
  }
  sc.s1.clear();
  std::size_t src = 0;
  for (std::int64_t k = 0; k < r; ++k)
    sc.s1.push_back(ins[static_cast<std::size_t>(k)] ? 1 : in.shape[src++]);
  return reshape_to(n, in, out, sc.s1);
}

Status squeeze(const Node& n, const OnnxTensor& in, const OnnxTensor* axes_t, OnnxTensor& out,
               Scratch& sc) {
  bool present = false;
  if (auto st = axes_of(n, axes_t, sc.s2, present); !st) return st;
  const auto r = static_cast<std::int64_t>(in.shape.size());
  std::array<bool, kOnnxMaxRank> drop{};
  if (!present) {
    for (std::int64_t k = 0; k < r; ++k) drop[static_cast<std::size_t>(k)] = in.shape[k] == 1;
  }
  for (std::int64_t a : sc.s2) {
    if (auto st = normalize_axis(n, a, r); !st) return st;
    if (in.shape[static_cast<std::size_t>(a)] != 1)
      return node_error(
          n, codes::ONNX_SHAPE,
          "cannot squeeze axis " + std::to_string(a) + " of " + shape_str(in.shape) + " (not 1)");
    drop[static_cast<std::size_t>(a)] = true;
  }
  sc.s1.clear();
  for (std::int64_t k = 0; k < r; ++k)
    if (!drop[static_cast<std::size_t>(k)]) sc.s1.push_back(in.shape[static_cast<std::size_t>(k)]);
  return reshape_to(n, in, out, sc.s1);
}

Status flatten(const Node& n, const OnnxTensor& in, OnnxTensor& out, Scratch& sc) {
  const auto r = static_cast<std::int64_t>(in.shape.size());
  std::int64_t axis = n.axis;
  if (axis < -r || axis > r)
    return node_error(n, codes::ONNX_ATTRIBUTE, "axis " + std::to_string(axis) + " out of range");
  if (axis < 0) axis += r;
  std::int64_t a = 1, b = 1;
  for (std::int64_t k = 0; k < r; ++k) (k < axis ? a : b) *= in.shape[static_cast<std::size_t>(k)];
  sc.s1 = {a, b};
  return reshape_to(n, in, out, sc.s1);
}

Status clip(const Node& n, const OnnxTensor& in, const OnnxTensor* lo, const OnnxTensor* hi,
            OnnxTensor& out) {
  float mn = n.clip_min, mx = n.clip_max;
  for (auto [t, v] : {std::pair{lo, &mn}, std::pair{hi, &mx}}) {
    if (!t) continue;
    if (t->type != OnnxType::kFloat || t->f.size() != 1)
      return node_error(n, codes::ONNX_SHAPE, "min and max must be float32 scalars");
    *v = t->f[0];
  }
  // min(max(x, lo), hi): with lo > hi every value becomes hi, as ONNX says.
  return unary(n, in, out, [mn, mx](float x) { return std::min(std::max(x, mn), mx); });
}

// One-input element-wise ops on float32 (Neg, Abs and Sign also on int64).
Status unary_op(const Node& n, const OnnxTensor& x, OnnxTensor& out) {
  if (x.type == OnnxType::kInt64 && (n.op == Op::kNeg || n.op == Op::kAbs || n.op == Op::kSign)) {
    if (auto st = shape_out(n, out, OnnxType::kInt64, x.shape); !st) return st;
    for (std::size_t k = 0; k < x.i.size(); ++k) {
      const std::int64_t v = x.i[k];
      out.i[k] = n.op == Op::kSign           ? (v > 0) - (v < 0)
                 : n.op == Op::kNeg || v < 0 ? wrap_sub(0, v)
                                             : v;
    }
    return core::Ok{};
  }
  const float al = n.alpha, be = n.beta, ga = n.gamma;
  switch (n.op) {
    case Op::kNeg:
      return unary(n, x, out, [](float v) { return -v; });
    case Op::kAbs:
      return unary(n, x, out, [](float v) { return std::fabs(v); });
    case Op::kSign:
      return unary(n, x, out, [](float v) { return v > 0 ? 1.0f : v < 0 ? -1.0f : v; });
    case Op::kExp:
      return unary(n, x, out, [](float v) { return std::exp(v); });
    case Op::kLog:
      return unary(n, x, out, [](float v) { return std::log(v); });
    case Op::kSqrt:
      return unary(n, x, out, [](float v) { return std::sqrt(v); });
    case Op::kReciprocal:
      return unary(n, x, out, [](float v) { return 1.0f / v; });
    case Op::kFloor:
      return unary(n, x, out, [](float v) { return std::floor(v); });
    case Op::kCeil:
      return unary(n, x, out, [](float v) { return std::ceil(v); });
    case Op::kRound:  // halves to even
      return unary(n, x, out, [](float v) { return std::nearbyint(v); });
    case Op::kErf:
      return unary(n, x, out, [](float v) { return std::erf(v); });
    case Op::kSin:
      return unary(n, x, out, [](float v) { return std::sin(v); });
    case Op::kCos:
      return unary(n, x, out, [](float v) { return std::cos(v); });
    case Op::kTan:
      return unary(n, x, out, [](float v) { return std::tan(v); });
    case Op::kAsin:
      return unary(n, x, out, [](float v) { return std::asin(v); });
    case Op::kAcos:
      return unary(n, x, out, [](float v) { return std::acos(v); });
    case Op::kAtan:
      return unary(n, x, out, [](float v) { return std::atan(v); });
    case Op::kSinh:
      return unary(n, x, out, [](float v) { return std::sinh(v); });
    case Op::kCosh:
      return unary(n, x, out, [](float v) { return std::cosh(v); });
    case Op::kAsinh:
      return unary(n, x, out, [](float v) { return std::asinh(v); });
    case Op::kAcosh:
      return unary(n, x, out, [](float v) { return std::acosh(v); });
    case Op::kAtanh:
      return unary(n, x, out, [](float v) { return std::atanh(v); });
    case Op::kSoftplus:  // ln(1 + e^v) without overflow
      return unary(n, x, out, [](float v) {
        return v > 0 ? v + std::log1p(std::exp(-v)) : std::log1p(std::exp(v));
      });
    case Op::kSoftsign:
      return unary(n, x, out, [](float v) { return v / (1.0f + std::fabs(v)); });
    case Op::kSelu:
      return unary(n, x, out,
                   [al, ga](float v) { return v > 0 ? ga * v : ga * al * std::expm1(v); });
    case Op::kCelu:
      return unary(n, x, out, [al](float v) {
        return std::max(0.0f, v) + std::min(0.0f, al * std::expm1(v / al));
      });
    case Op::kHardSigmoid:
      return unary(n, x, out,
                   [al, be](float v) { return std::max(0.0f, std::min(1.0f, al * v + be)); });
    case Op::kHardSwish:
      return unary(n, x, out,
                   [](float v) { return v * std::max(0.0f, std::min(1.0f, v / 6.0f + 0.5f)); });
    case Op::kThresholdedRelu:
      return unary(n, x, out, [al](float v) { return v > al ? v : 0.0f; });
    case Op::kGelu:
      if (n.gelu_tanh)
        return unary(n, x, out, [](float v) {
          const float c = 0.7978845608028654f;  // sqrt(2 / pi)
          return 0.5f * v * (1.0f + std::tanh(c * (v + 0.044715f * v * v * v)));
        });
      return unary(n, x, out,
                   [](float v) { return 0.5f * v * (1.0f + std::erf(v * 0.70710678118654752f)); });
    case Op::kMish:
      return unary(n, x, out, [](float v) {
        const float sp = v > 0 ? v + std::log1p(std::exp(-v)) : std::log1p(std::exp(v));
        return v * std::tanh(sp);
      });
    default:
      return node_error(n, codes::ONNX_NODE, "not a unary op");
  }
}

Status logical_not(const Node& n, const OnnxTensor& x, OnnxTensor& out) {
  if (x.type != OnnxType::kBool) return node_error(n, codes::ONNX_TYPE, "needs a bool input");
  if (auto st = shape_out(n, out, OnnxType::kBool, x.shape); !st) return st;
  for (std::size_t k = 0; k < x.i.size(); ++k) out.i[k] = x.i[k] ? 0 : 1;
  return core::Ok{};
}

// Max, Min, Sum, Mean over one or more inputs, folded pairwise with
// broadcasting (ping-pong between two scratch tensors).
Status variadic(const Node& n, std::span<const OnnxTensor* const> ins, OnnxTensor& out,
                Scratch& sc) {
  if (ins.size() == 1) {
    if (n.op == Op::kMean)
      if (auto st = need_float(n, *ins[0]); !st) return st;
    return reshape_to(n, *ins[0], out, ins[0]->shape);
  }
  const OnnxTensor* acc = ins[0];
  for (std::size_t k = 1; k < ins.size(); ++k) {
    OnnxTensor& dst = k + 1 == ins.size() ? out : (k % 2 ? sc.t1 : sc.t2);
    if (auto st = binary(n, n.op, *acc, *ins[k], dst, sc); !st) return st;
    acc = &dst;
  }
  if (n.op == Op::kMean) {
    const float c = static_cast<float>(ins.size());
    for (float& v : out.f) v /= c;
  }
  return core::Ok{};
}

Status where(const Node& n, const OnnxTensor& c, const OnnxTensor& x, const OnnxTensor& y,
             OnnxTensor& out, Scratch& sc) {
  if (c.type != OnnxType::kBool) return node_error(n, codes::ONNX_TYPE, "condition must be bool");
  if (x.type != y.type)
    return node_error(
        n, codes::ONNX_TYPE,
        std::string("X and Y types differ: ") + type_str(x.type) + " and " + type_str(y.type));
  if (!broadcast(c.shape, x.shape, sc.s2) || !broadcast(sc.s2, y.shape, sc.s1) ||
      sc.s1.size() > kOnnxMaxRank)
    return node_error(n, codes::ONNX_SHAPE,
                      "shapes " + shape_str(c.shape) + ", " + shape_str(x.shape) + " and " +
                          shape_str(y.shape) + " do not broadcast");
  if (auto st = shape_out(n, out, x.type, sc.s1); !st) return st;
  Idx s0{}, s1{}, s2{};
  bstrides(c.shape, sc.s1.size(), s0);
  bstrides(x.shape, sc.s1.size(), s1);
  bstrides(y.shape, sc.s1.size(), s2);
  auto pick = [&](const auto& xv, const auto& yv, auto& ov) {
    for_each_bcast3(sc.s1, s0, s1, s2,
                    [&](std::int64_t e, std::int64_t ic, std::int64_t ix, std::int64_t iy) {
                      ov[static_cast<std::size_t>(e)] = c.i[static_cast<std::size_t>(ic)]
                                                            ? xv[static_cast<std::size_t>(ix)]
                                                            : yv[static_cast<std::size_t>(iy)];
                    });
  };
  if (x.type == OnnxType::kFloat)
    pick(x.f, y.f, out.f);
  else
    pick(x.i, y.i, out.i);
  return core::Ok{};
}

const OnnxTensor* arg(const std::vector<const OnnxTensor*>& ref, const Node& n, std::size_t k) {
  if (k >= n.in.size() || n.in[k] < 0) return nullptr;
  return ref[static_cast<std::size_t>(n.in[k])];
}

// The node's inputs in `list`: every position (absent optional ones as
// null) or, with `present_only`, just the given ones (variadic ops).
std::span<const OnnxTensor* const> inputs_of(const std::vector<const OnnxTensor*>& ref,
                                             const Node& n, std::vector<const OnnxTensor*>& list,
                                             bool present_only) {
  list.clear();
  for (std::size_t k = 0; k < n.in.size(); ++k) {
    const OnnxTensor* t = arg(ref, n, k);
    if (t || !present_only) list.push_back(t);
  }
  return list;
}

Status exec(const Node& n, const std::vector<const OnnxTensor*>& ref, OnnxTensor& out, Scratch& sc,
            std::vector<const OnnxTensor*>& list) {
  const OnnxTensor& x = *arg(ref, n, 0);
  switch (n.op) {
    case Op::kGemm:
      return gemm(n, x, *arg(ref, n, 1), arg(ref, n, 2), out, sc);
    case Op::kMatMul:
      return matmul(n, x, *arg(ref, n, 1), out, sc);
    case Op::kAdd:
    case Op::kSub:
    case Op::kMul:
    case Op::kDiv:
      return binary(n, n.op, x, *arg(ref, n, 1), out, sc);
    case Op::kRelu:
      return unary(n, x, out, [](float v) { return v > 0 ? v : 0.0f; });
    case Op::kElu: {
      const float al = n.alpha;
      return unary(n, x, out, [al](float v) { return v >= 0 ? v : al * std::expm1(v); });
    }
    case Op::kSigmoid:
      return unary(n, x, out, [](float v) { return 1.0f / (1.0f + std::exp(-v)); });
    case Op::kTanh:
      return unary(n, x, out, [](float v) { return std::tanh(v); });
    case Op::kLeakyRelu: {
      const float al = n.alpha;
      return unary(n, x, out, [al](float v) { return v >= 0 ? v : al * v; });
    }
    case Op::kClip:
      return clip(n, x, arg(ref, n, 1), arg(ref, n, 2), out);
    case Op::kIdentity:
      return reshape_to(n, x, out, x.shape);
    case Op::kReshape:
      return reshape(n, x, arg(ref, n, 1), out, sc);
    case Op::kFlatten:
      return flatten(n, x, out, sc);
    case Op::kTranspose:
      return transpose(n, x, out, sc);
    case Op::kConcat:
      return concat(n, inputs_of(ref, n, list, true), out, sc);
    case Op::kUnsqueeze:
      return unsqueeze(n, x, arg(ref, n, 1), out, sc);
    case Op::kSqueeze:
      return squeeze(n, x, arg(ref, n, 1), out, sc);
    case Op::kConstant:
      return core::Ok{};  // evaluated at load time
    case Op::kNot:
      return logical_not(n, x, out);
    case Op::kPow:
    case Op::kPRelu:
    case Op::kEqual:
    case Op::kLess:
    case Op::kGreater:
    case Op::kLessOrEqual:
    case Op::kGreaterOrEqual:
    case Op::kAnd:
    case Op::kOr:
    case Op::kXor:
      return binary(n, n.op, x, *arg(ref, n, 1), out, sc);
    case Op::kMax:
    case Op::kMin:
    case Op::kSum:
    case Op::kMean:
      return variadic(n, inputs_of(ref, n, list, true), out, sc);
    case Op::kWhere:
      return where(n, x, *arg(ref, n, 1), *arg(ref, n, 2), out, sc);
    case Op::kShape:
      return shape_of(n, x, out, sc);
    case Op::kSize:
      sc.s1.clear();
      if (auto st = shape_out(n, out, OnnxType::kInt64, sc.s1); !st) return st;
      out.i[0] = x.numel();
      return core::Ok{};
    case Op::kGather:
      return gather(n, x, *arg(ref, n, 1), out, sc);
    case Op::kCast:
      return cast(n, x, out);
    case Op::kConstantOfShape:
      return constant_of_shape(n, x, out, sc);
    case Op::kExpand:
      return expand(n, x, *arg(ref, n, 1), out, sc);
    case Op::kSlice:
      return slice(n, inputs_of(ref, n, list, false), x, out, sc);
    case Op::kRange:
      return range(n, x, *arg(ref, n, 1), *arg(ref, n, 2), out, sc);
    case Op::kTile:
      return tile(n, x, *arg(ref, n, 1), out, sc);
    case Op::kDropout:
      return dropout(n, x, arg(ref, n, 2), out);
    case Op::kReduceMean:
    case Op::kReduceSum:
    case Op::kReduceMax:
    case Op::kReduceMin:
    case Op::kReduceProd:
    case Op::kReduceL1:
    case Op::kReduceL2:
    case Op::kReduceSumSquare:
    case Op::kReduceLogSumExp:
      return reduce(n, x, arg(ref, n, 1), out, sc);
    case Op::kSoftmax:
    case Op::kLogSoftmax:
      return softmax(n, x, out);
    case Op::kBatchNormalization:
      return batch_norm(n, x, inputs_of(ref, n, list, false), out);
    case Op::kLayerNormalization:
      return layer_norm(n, x, *arg(ref, n, 1), arg(ref, n, 2), out, sc);
    case Op::kArgMax:
    case Op::kArgMin:
      return arg_extreme(n, x, out, sc);
    case Op::kCumSum:
      return cumsum(n, x, *arg(ref, n, 1), out);
    case Op::kPad:
      return pad(n, inputs_of(ref, n, list, false), x, out, sc);
    default:
      return unary_op(n, x, out);
  }
  return core::Ok{};
}

Status check_input(const OnnxValueInfo& info, const OnnxTensor& t, std::size_t k) {
  auto err = [&](const std::string& msg) {
    return make_error(codes::ONNX_INPUT,
                      "input " + std::to_string(k) + " '" + info.name + "': " + msg);
  };
  std::int64_t n = 0;
  if (t.shape.size() > kOnnxMaxRank || !checked_numel(t.shape, n))
    return err("shape " + shape_str(t.shape) + " is negative or too large");
  const std::size_t have = t.type == OnnxType::kFloat ? t.f.size() : t.i.size();
  if (have != static_cast<std::size_t>(n))
    return err(std::to_string(have) + " values for shape " + shape_str(t.shape));
  if (info.elem_type != 0 && info.elem_type != static_cast<std::int32_t>(t.type))
    return err(std::string("element type must be ") +
               type_str(static_cast<OnnxType>(info.elem_type)));
  if (info.has_shape) {
    if (info.shape.size() != t.shape.size())
      return err("rank " + std::to_string(t.shape.size()) + ", the model declares " +
                 std::to_string(info.shape.size()));
    for (std::size_t d = 0; d < t.shape.size(); ++d)
      if (info.shape[d].value >= 0 && info.shape[d].symbol.empty() &&
          info.shape[d].value != t.shape[d])
        return err("dimension " + std::to_string(d) + " is " + std::to_string(t.shape[d]) +
                   ", the model declares " + std::to_string(info.shape[d].value));
  }
  return core::Ok{};
}

}  // namespace

Result<std::vector<OnnxTensor>> OnnxModel::run(std::span<const OnnxTensor> inputs) {
  OnnxGraph& g = *g_;
  if (inputs.size() != g.inputs.size())
    return make_error(codes::ONNX_INPUT, "the model takes " + std::to_string(g.inputs.size()) +
                                             " inputs, got " + std::to_string(inputs.size()));
  for (std::size_t v = 0; v < g.ref.size(); ++v) g.ref[v] = g.is_const[v] ? &g.consts[v] : nullptr;
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    if (auto st = check_input(g.inputs[k], inputs[k], k); !st) return std::move(st).error();
    g.ref[static_cast<std::size_t>(g.input_ids[k])] = &inputs[k];
  }
  Scratch& sc = g.scratch;
  std::vector<const OnnxTensor*>& list = g.list;
  std::int64_t made = 0;  // elements of all node outputs of this run
  for (const Node& n : g.nodes) {
    if (n.op == Op::kConstant) continue;
    OnnxTensor& out = g.work[static_cast<std::size_t>(n.out)];
    if (n.op == Op::kSplit) {
      std::vector<OnnxTensor*>& outs = g.split_outs;
      outs.assign(1, &out);
      for (int id : n.more_outs) outs.push_back(&g.work[static_cast<std::size_t>(id)]);
      if (auto st = split(n, *arg(g.ref, n, 0), arg(g.ref, n, 1), outs, sc); !st)
        return std::move(st).error();
      for (int id : n.more_outs)
        g.ref[static_cast<std::size_t>(id)] = &g.work[static_cast<std::size_t>(id)];
    } else if (auto st = exec(n, g.ref, out, sc, list); !st) {
      return std::move(st).error();
    }
    g.ref[static_cast<std::size_t>(n.out)] = &out;
    made += out.numel();
    for (int id : n.more_outs) made += g.work[static_cast<std::size_t>(id)].numel();
    if (made > g.max_total)
      return node_error(
          n, codes::ONNX_SHAPE,
          "the run's node outputs exceed " + std::to_string(g.max_total) + " elements together");
  }
  std::vector<OnnxTensor> result;
  result.reserve(g.output_ids.size());
  for (int id : g.output_ids) result.push_back(*g.ref[static_cast<std::size_t>(id)]);
  return result;
}

}  // namespace charkit::deformer
