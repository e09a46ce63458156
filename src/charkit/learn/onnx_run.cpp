// ONNX execution: one kernel per supported op on float32 (and int64 for the
// data-movement ops), numpy/ONNX multidirectional broadcasting. Buffers of
// node outputs live in the graph and are resized in place, so a second run
// with the same input shapes allocates nothing for intermediates.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>

#include <Eigen/Core>

#include "charkit/learn/onnx.h"
#include "charkit/learn/onnx_graph.h"

namespace charkit::learn {

using core::make_error;
using core::Result;
using core::Status;
using namespace onnx_detail;

namespace {

using Shape = std::vector<std::int64_t>;
using Idx = std::array<std::int64_t, kOnnxMaxRank>;

template <typename T>
std::vector<T>& data(OnnxTensor& t);
template <>
std::vector<float>& data<float>(OnnxTensor& t) {
  return t.f;
}
template <>
std::vector<std::int64_t>& data<std::int64_t>(OnnxTensor& t) {
  return t.i;
}
template <typename T>
const std::vector<T>& cdata(const OnnxTensor& t) {
  return data<T>(const_cast<OnnxTensor&>(t));
}

// Gives `out` a type and shape, sizing its data (no allocation when the
// capacity is already there).
Status shape_out(const Node& n, OnnxTensor& out, OnnxType type, std::span<const std::int64_t> s) {
  std::int64_t count = 0;
  if (s.size() > kOnnxMaxRank || !checked_numel(s, count, n.max_elements))
    return node_error(n, "ONNX_SHAPE",
                      "output would exceed " + std::to_string(n.max_elements) + " elements or " +
                          std::to_string(kOnnxMaxRank) +
                          " dimensions (or has a negative dimension)");
  out.type = type;
  out.shape.assign(s.begin(), s.end());
  if (type == OnnxType::kFloat) {
    out.f.resize(static_cast<std::size_t>(count));
    out.i.clear();
  } else {
    out.i.resize(static_cast<std::size_t>(count));
    out.f.clear();
  }
  return core::Ok{};
}

std::string shape_str(std::span<const std::int64_t> s) {
  std::string r = "[";
  for (std::size_t k = 0; k < s.size(); ++k) r += (k ? "," : "") + std::to_string(s[k]);
  return r + "]";
}

const char* type_str(OnnxType t) {
  return t == OnnxType::kFloat ? "float32" : t == OnnxType::kInt64 ? "int64" : "bool";
}

Status need_float(const Node& n, const OnnxTensor& t) {
  if (t.type != OnnxType::kFloat)
    return node_error(n, "ONNX_TYPE", std::string("needs float32 input, got ") + type_str(t.type));
  return core::Ok{};
}

// Row-major strides of `in` as seen from an output of rank `rank` into which
// it broadcasts (right-aligned; broadcast dims get stride 0).
void bstrides(std::span<const std::int64_t> in, std::size_t rank, Idx& st) {
  std::int64_t s = 1;
  for (std::size_t k = 0; k < rank; ++k) st[k] = 0;
  for (std::size_t k = in.size(); k-- > 0;) {
    std::size_t o = rank - in.size() + k;
    st[o] = in[k] == 1 ? 0 : s;
    s *= in[k];
  }
}

bool broadcast(std::span<const std::int64_t> a, std::span<const std::int64_t> b, Shape& out) {
  std::size_t r = std::max(a.size(), b.size());
  out.assign(r, 1);
  for (std::size_t k = 0; k < r; ++k) {
    std::int64_t da = k < r - a.size() ? 1 : a[k - (r - a.size())];
    std::int64_t db = k < r - b.size() ? 1 : b[k - (r - b.size())];
    if (da != db && da != 1 && db != 1) return false;
    out[k] = da == 1 ? db : da;
  }
  return true;
}

// Calls f(offset_a, offset_b) for every output element in row-major order.
template <typename F>
void for_each_bcast(std::span<const std::int64_t> os, const Idx& sa, const Idx& sb, F f) {
  const std::size_t r = os.size();
  std::int64_t total = 1;
  for (auto d : os) total *= d;
  if (total == 0) return;
  Idx idx{};
  std::int64_t oa = 0, ob = 0;
  for (std::int64_t e = 0; e < total; ++e) {
    f(e, oa, ob);
    for (std::size_t k = r; k-- > 0;) {
      if (++idx[k] < os[k]) {
        oa += sa[k];
        ob += sb[k];
        break;
      }
      oa -= sa[k] * (os[k] - 1);
      ob -= sb[k] * (os[k] - 1);
      idx[k] = 0;
    }
  }
}

// Three-way form of for_each_bcast: f(e, offset_a, offset_b, offset_c).
template <typename F>
void for_each_bcast3(std::span<const std::int64_t> os, const Idx& sa, const Idx& sb, const Idx& sc,
                     F f) {
  const std::size_t r = os.size();
  std::int64_t total = 1;
  for (auto d : os) total *= d;
  if (total == 0) return;
  Idx idx{};
  std::int64_t oa = 0, ob = 0, oc = 0;
  for (std::int64_t e = 0; e < total; ++e) {
    f(e, oa, ob, oc);
    for (std::size_t k = r; k-- > 0;) {
      if (++idx[k] < os[k]) {
        oa += sa[k];
        ob += sb[k];
        oc += sc[k];
        break;
      }
      oa -= sa[k] * (os[k] - 1);
      ob -= sb[k] * (os[k] - 1);
      oc -= sc[k] * (os[k] - 1);
      idx[k] = 0;
    }
  }
}

std::int64_t numel_of(std::span<const std::int64_t> s) {
  std::int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

// Calls f(e, ia, ib) for every element of the broadcast shape `os` of
// `as` and `bs`, with fast paths for equal shapes and a one-element side.
template <typename F>
void bcast2(std::span<const std::int64_t> os, std::span<const std::int64_t> as,
            std::span<const std::int64_t> bs, F f) {
  const std::int64_t total = numel_of(os), na = numel_of(as), nb = numel_of(bs);
  if (na == total && nb == total && std::equal(as.begin(), as.end(), bs.begin(), bs.end())) {
    for (std::int64_t k = 0; k < total; ++k) f(k, k, k);
  } else if (na == total && nb == 1) {
    for (std::int64_t k = 0; k < total; ++k) f(k, k, 0);
  } else if (nb == total && na == 1) {
    for (std::int64_t k = 0; k < total; ++k) f(k, 0, k);
  } else {
    Idx sa, sb;
    bstrides(as, os.size(), sa);
    bstrides(bs, os.size(), sb);
    for_each_bcast(os, sa, sb, f);
  }
}

// Integer arithmetic wraps (two's complement) instead of overflowing.
std::int64_t wrap_add(std::int64_t x, std::int64_t y) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(x) + static_cast<std::uint64_t>(y));
}
std::int64_t wrap_sub(std::int64_t x, std::int64_t y) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(x) - static_cast<std::uint64_t>(y));
}
std::int64_t wrap_mul(std::int64_t x, std::int64_t y) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(x) * static_cast<std::uint64_t>(y));
}
// Truncating division (as C++ and onnxruntime); the divisor is checked non-zero first.
std::int64_t int_div(std::int64_t x, std::int64_t y) {
  return y == -1 ? wrap_sub(0, x) : x / y;
}
std::int64_t int_pow(std::int64_t x, std::int64_t y) {
  if (y < 0) return x == 1 ? 1 : x == -1 ? (y % 2 ? -1 : 1) : 0;  // truncated 1/x^|y|
  std::uint64_t r = 1, b = static_cast<std::uint64_t>(x);
  for (auto e = static_cast<std::uint64_t>(y); e; e >>= 1) {
    if (e & 1) r *= b;
    b *= b;
  }
  return static_cast<std::int64_t>(r);
}
float fmax_nan(float x, float y) {
  return std::isnan(x) || x > y ? x : y;
}
float fmin_nan(float x, float y) {
  return std::isnan(x) || x < y ? x : y;
}

bool is_compare(Op op) {
  return op == Op::kEqual || op == Op::kLess || op == Op::kGreater || op == Op::kLessOrEqual ||
         op == Op::kGreaterOrEqual;
}

template <typename T>
std::int64_t compare(Op op, T x, T y) {
  switch (op) {
    case Op::kEqual:
      return x == y;
    case Op::kLess:
      return x < y;
    case Op::kGreater:
      return x > y;
    case Op::kLessOrEqual:
      return x <= y;
    default:
      return x >= y;
  }
}

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
        return node_error(n, "ONNX_SHAPE",
                          "shapes " + shape_str(a.shape) + " and " + shape_str(b.shape) +
                              " differ and broadcast=0");
    } else if (n.has_axis) {
      std::int64_t ax = n.axis < 0 ? n.axis + static_cast<std::int64_t>(a.shape.size()) : n.axis;
      if (ax < 0 || ax + static_cast<std::int64_t>(b.shape.size()) >
                        static_cast<std::int64_t>(a.shape.size()))
        return node_error(n, "ONNX_SHAPE", "axis out of range for legacy broadcast");
      sc.s2.assign(b.shape.begin(), b.shape.end());
      sc.s2.resize(a.shape.size() - static_cast<std::size_t>(ax), 1);
      bs = sc.s2;
    }
  }
  if (!broadcast(a.shape, bs, sc.s1) || sc.s1.size() > kOnnxMaxRank)
    return node_error(
        n, "ONNX_SHAPE",
        "shapes " + shape_str(a.shape) + " and " + shape_str(b.shape) + " do not broadcast");
  if (n.legacy && sc.s1 != a.shape)
    return node_error(n, "ONNX_SHAPE", "legacy broadcast must keep A's shape");
  if (op == Op::kPRelu && sc.s1 != a.shape)
    return node_error(
        n, "ONNX_SHAPE",
        "slope " + shape_str(b.shape) + " does not broadcast to X " + shape_str(a.shape));
  const bool logical = op == Op::kAnd || op == Op::kOr || op == Op::kXor;
  if (logical && (a.type != OnnxType::kBool || b.type != OnnxType::kBool))
    return node_error(n, "ONNX_TYPE", "needs bool inputs");
  if (op != Op::kPow && a.type != b.type)
    return node_error(
        n, "ONNX_TYPE",
        std::string("input types differ: ") + type_str(a.type) + " and " + type_str(b.type));
  if (!logical && op != Op::kEqual && a.type == OnnxType::kBool)
    return node_error(n, "ONNX_TYPE", "does not take bool inputs");
  if ((op == Op::kPRelu || op == Op::kMean) && a.type != OnnxType::kFloat)
    return node_error(n, "ONNX_TYPE", "needs float32 inputs");
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
      return node_error(n, "ONNX_TYPE", "does not take bool inputs");
    const bool af = a.type == OnnxType::kFloat, bf = b.type == OnnxType::kFloat;
    if (af && bf)
      run(a.f.data(), b.f.data(), out.f.data(), [](float x, float y) { return std::pow(x, y); });
    else if (af)
      run(a.f.data(), b.i.data(), out.f.data(), [](float x, std::int64_t y) {
        return static_cast<float>(std::pow(static_cast<double>(x), static_cast<double>(y)));
      });
    else if (bf)
      return node_error(n, "ONNX_TYPE", "an int64 base with a float32 exponent is not supported");
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
        return node_error(n, "ONNX_VALUE", "integer division by zero");
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

template <typename F>
Status unary(const Node& n, const OnnxTensor& a, OnnxTensor& out, F f) {
  if (auto st = need_float(n, a); !st) return st;
  if (auto st = shape_out(n, out, OnnxType::kFloat, a.shape); !st) return st;
  for (std::size_t k = 0; k < a.f.size(); ++k) out.f[k] = f(a.f[k]);
  return core::Ok{};
}

// Bounds the multiply-adds of one Gemm / MatMul (outputs x K) to 4096 per
// allowed output element, so that a small file cannot ask for hours of work.
Status check_work(const Node& n, std::int64_t outputs, std::int64_t k) {
  if (static_cast<double>(outputs) * static_cast<double>(k) >
      static_cast<double>(n.max_elements) * 4096.0)
    return node_error(
        n, "ONNX_SHAPE",
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
        n, "ONNX_SHAPE",
        "A and B must be 2-D, got " + shape_str(a.shape) + " and " + shape_str(b.shape));
  const std::int64_t M = n.trans_a ? a.shape[1] : a.shape[0];
  const std::int64_t K = n.trans_a ? a.shape[0] : a.shape[1];
  const std::int64_t K2 = n.trans_b ? b.shape[1] : b.shape[0];
  const std::int64_t N = n.trans_b ? b.shape[0] : b.shape[1];
  if (K != K2)
    return node_error(
        n, "ONNX_SHAPE",
        "inner dimensions differ: " + shape_str(a.shape) + " x " + shape_str(b.shape));
  sc.s1 = {M, N};
  if (auto st = shape_out(n, out, OnnxType::kFloat, sc.s1); !st) return st;
  if (auto st = check_work(n, out.numel(), K); !st) return st;
  std::fill(out.f.begin(), out.f.end(), 0.0f);
  if (c) {
    if (auto st = need_float(n, *c); !st) return st;
    // C broadcasts one way onto [M, N].
    if (!broadcast(sc.s1, c->shape, sc.s2) || sc.s2 != sc.s1)
      return node_error(n, "ONNX_SHAPE",
                        "C " + shape_str(c->shape) + " does not broadcast to " + shape_str(sc.s1));
    Idx so{}, scs;
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
    return node_error(n, "ONNX_SHAPE", "MatMul operands must have rank >= 1");
  // 1-D operands: A as [1, K] and B as [K, 1], the added dim removed after.
  const bool a1 = a.shape.size() == 1, b1 = b.shape.size() == 1;
  const std::int64_t M = a1 ? 1 : a.shape[a.shape.size() - 2];
  const std::int64_t K = a.shape.back();
  const std::int64_t K2 = b1 ? b.shape[0] : b.shape[b.shape.size() - 2];
  const std::int64_t N = b1 ? 1 : b.shape.back();
  if (K != K2)
    return node_error(
        n, "ONNX_SHAPE",
        "inner dimensions differ: " + shape_str(a.shape) + " x " + shape_str(b.shape));
  std::span<const std::int64_t> ab(a.shape.data(), a1 ? 0 : a.shape.size() - 2);
  std::span<const std::int64_t> bb(b.shape.data(), b1 ? 0 : b.shape.size() - 2);
  Shape& batch = sc.s3;
  if (!broadcast(ab, bb, batch) || batch.size() + 2 > kOnnxMaxRank)
    return node_error(n, "ONNX_SHAPE",
                      "batch dimensions of " + shape_str(a.shape) + " and " + shape_str(b.shape) +
                          " do not broadcast");
  sc.s1 = batch;
  if (!a1) sc.s1.push_back(M);
  if (!b1) sc.s1.push_back(N);
  if (auto st = shape_out(n, out, OnnxType::kFloat, sc.s1); !st) return st;
  if (auto st = check_work(n, out.numel(), K); !st) return st;
  std::fill(out.f.begin(), out.f.end(), 0.0f);
  Idx sa, sb;
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

template <typename T>
void copy_data(const OnnxTensor& in, OnnxTensor& out) {
  const auto& src = cdata<T>(in);
  std::copy(src.begin(), src.end(), data<T>(out).begin());
}

// Same data, new shape (Identity, Reshape, Flatten, Squeeze, Unsqueeze).
Status reshape_to(const Node& n, const OnnxTensor& in, OnnxTensor& out,
                  std::span<const std::int64_t> s) {
  if (auto st = shape_out(n, out, in.type, s); !st) return st;
  if (out.numel() != in.numel())
    return node_error(n, "ONNX_SHAPE",
                      "cannot reshape " + shape_str(in.shape) + " to " + shape_str(s));
  if (in.type == OnnxType::kFloat)
    copy_data<float>(in, out);
  else
    copy_data<std::int64_t>(in, out);
  return core::Ok{};
}

// Reads an int64 1-D (or scalar) tensor of axes / shape values into v.
Status int_list(const Node& n, const OnnxTensor& t, std::vector<std::int64_t>& v) {
  if (t.type != OnnxType::kInt64 || t.shape.size() > 1)
    return node_error(n, "ONNX_TYPE", "shape / axes input must be a 1-D int64 tensor");
  if (t.i.size() > kOnnxMaxRank * 2)
    return node_error(n, "ONNX_SHAPE", "shape / axes input is too long");
  v.assign(t.i.begin(), t.i.end());
  return core::Ok{};
}

Status reshape(const Node& n, const OnnxTensor& in, const OnnxTensor* shape_t, OnnxTensor& out,
               Scratch& sc) {
  if (shape_t) {
    if (auto st = int_list(n, *shape_t, sc.s1); !st) return st;
  } else if (n.has_ints) {
    sc.s1 = n.ints;
  } else {
    return node_error(n, "ONNX_NODE", "no shape (input 1 or, before opset 5, attribute shape)");
  }
  int infer = -1;
  std::int64_t known = 1;
  for (std::size_t k = 0; k < sc.s1.size(); ++k) {
    std::int64_t& d = sc.s1[k];
    if (d == 0 && !n.allowzero) {
      if (k >= in.shape.size())
        return node_error(n, "ONNX_SHAPE",
                          "0 at position " + std::to_string(k) + " has no input dimension to copy");
      d = in.shape[k];
    }
    if (d == -1) {
      if (infer >= 0) return node_error(n, "ONNX_SHAPE", "more than one -1 in the shape");
      infer = static_cast<int>(k);
      continue;
    }
    if (d < 0) return node_error(n, "ONNX_SHAPE", "negative dimension in the shape");
    if (d != 0 && known > kOnnxMaxElements / d)
      return node_error(n, "ONNX_SHAPE", "shape too large");
    known *= d;
  }
  if (infer >= 0) {
    if (known == 0 || in.numel() % known != 0)
      return node_error(
          n, "ONNX_SHAPE",
          "cannot infer -1 reshaping " + shape_str(in.shape) + " to " + shape_str(sc.s1));
    sc.s1[static_cast<std::size_t>(infer)] = in.numel() / known;
  }
  return reshape_to(n, in, out, sc.s1);
}

Status normalize_axis(const Node& n, std::int64_t& axis, std::int64_t rank) {
  if (axis < -rank || axis >= rank)
    return node_error(
        n, "ONNX_ATTRIBUTE",
        "axis " + std::to_string(axis) + " out of range for rank " + std::to_string(rank));
  if (axis < 0) axis += rank;
  return core::Ok{};
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
  if (perm.size() != r) return node_error(n, "ONNX_ATTRIBUTE", "perm length differs from rank");
  std::array<bool, kOnnxMaxRank> seen{};
  sc.s1.resize(r);
  for (std::size_t k = 0; k < r; ++k) {
    if (perm[k] < 0 || perm[k] >= static_cast<std::int64_t>(r) ||
        seen[static_cast<std::size_t>(perm[k])])
      return node_error(n, "ONNX_ATTRIBUTE", "perm is not a permutation");
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
      return node_error(n, "ONNX_SHAPE", "inputs differ in type or rank");
    for (std::size_t k = 0; k < first.shape.size(); ++k)
      if (k != ax && t->shape[k] != first.shape[k])
        return node_error(n, "ONNX_SHAPE",
                          "shapes " + shape_str(first.shape) + " and " + shape_str(t->shape) +
                              " differ off the axis");
    if (sc.s1[ax] > kOnnxMaxElements) return node_error(n, "ONNX_SHAPE", "output too large");
    sc.s1[ax] += t->shape[ax];
  }
  if (auto st = shape_out(n, out, first.type, sc.s1); !st) return st;
  if (first.type == OnnxType::kFloat)
    concat_data<float>(ins, out, ax);
  else
    concat_data<std::int64_t>(ins, out, ax);
  return core::Ok{};
}

// Axes from input 1 (opset >= 13) or the attribute (before); `present` false
// when neither is given.
Status axes_of(const Node& n, const OnnxTensor* axes_t, Shape& axes, bool& present) {
  present = true;
  if (axes_t) return int_list(n, *axes_t, axes);
  if (n.has_ints) {
    axes = n.ints;
    return core::Ok{};
  }
  present = false;
  axes.clear();
  return core::Ok{};
}

Status unsqueeze(const Node& n, const OnnxTensor& in, const OnnxTensor* axes_t, OnnxTensor& out,
                 Scratch& sc) {
  bool present = false;
  if (auto st = axes_of(n, axes_t, sc.s2, present); !st) return st;
  if (!present) return node_error(n, "ONNX_NODE", "no axes (input 1 or attribute axes)");
  const auto r = static_cast<std::int64_t>(in.shape.size() + sc.s2.size());
  if (r > static_cast<std::int64_t>(kOnnxMaxRank))
    return node_error(n, "ONNX_SHAPE", "result rank too large");
  std::array<bool, kOnnxMaxRank> ins{};
  for (std::int64_t a : sc.s2) {
    if (auto st = normalize_axis(n, a, r); !st) return st;
    if (ins[static_cast<std::size_t>(a)]) return node_error(n, "ONNX_ATTRIBUTE", "duplicate axis");
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
          n, "ONNX_SHAPE",
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
    return node_error(n, "ONNX_ATTRIBUTE", "axis " + std::to_string(axis) + " out of range");
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
      return node_error(n, "ONNX_SHAPE", "min and max must be float32 scalars");
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
      return node_error(n, "ONNX_NODE", "not a unary op");
  }
}

Status logical_not(const Node& n, const OnnxTensor& x, OnnxTensor& out) {
  if (x.type != OnnxType::kBool) return node_error(n, "ONNX_TYPE", "needs a bool input");
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
  if (c.type != OnnxType::kBool) return node_error(n, "ONNX_TYPE", "condition must be bool");
  if (x.type != y.type)
    return node_error(
        n, "ONNX_TYPE",
        std::string("X and Y types differ: ") + type_str(x.type) + " and " + type_str(y.type));
  if (!broadcast(c.shape, x.shape, sc.s2) || !broadcast(sc.s2, y.shape, sc.s1) ||
      sc.s1.size() > kOnnxMaxRank)
    return node_error(n, "ONNX_SHAPE",
                      "shapes " + shape_str(c.shape) + ", " + shape_str(x.shape) + " and " +
                          shape_str(y.shape) + " do not broadcast");
  if (auto st = shape_out(n, out, x.type, sc.s1); !st) return st;
  Idx s0, s1, s2;
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

Status shape_of(const Node& n, const OnnxTensor& x, OnnxTensor& out, Scratch& sc) {
  const auto r = static_cast<std::int64_t>(x.shape.size());
  auto clampd = [r](std::int64_t v) { return std::clamp(v < 0 ? v + r : v, std::int64_t{0}, r); };
  const std::int64_t b = clampd(n.start), e = n.has_end ? clampd(n.end) : r;
  sc.s1 = {std::max<std::int64_t>(e - b, 0)};
  if (auto st = shape_out(n, out, OnnxType::kInt64, sc.s1); !st) return st;
  for (std::int64_t k = b; k < e; ++k)
    out.i[static_cast<std::size_t>(k - b)] = x.shape[static_cast<std::size_t>(k)];
  return core::Ok{};
}

Status gather(const Node& n, const OnnxTensor& x, const OnnxTensor& idx, OnnxTensor& out,
              Scratch& sc) {
  if (idx.type != OnnxType::kInt64) return node_error(n, "ONNX_TYPE", "indices must be int64");
  const auto r = static_cast<std::int64_t>(x.shape.size());
  if (r == 0) return node_error(n, "ONNX_SHAPE", "data must have rank >= 1");
  std::int64_t axis = n.axis;
  if (auto st = normalize_axis(n, axis, r); !st) return st;
  const auto ax = static_cast<std::size_t>(axis);
  const std::int64_t dim = x.shape[ax];
  for (std::int64_t v : idx.i)
    if (v < -dim || v >= dim)
      return node_error(n, "ONNX_VALUE",
                        "index " + std::to_string(v) + " is out of range for a dimension of " +
                            std::to_string(dim));
  sc.s1.assign(x.shape.begin(), x.shape.begin() + axis);
  sc.s1.insert(sc.s1.end(), idx.shape.begin(), idx.shape.end());
  sc.s1.insert(sc.s1.end(), x.shape.begin() + axis + 1, x.shape.end());
  if (auto st = shape_out(n, out, x.type, sc.s1); !st) return st;
  std::int64_t outer = 1, inner = 1;
  for (std::size_t k = 0; k < ax; ++k) outer *= x.shape[k];
  for (std::size_t k = ax + 1; k < x.shape.size(); ++k) inner *= x.shape[k];
  auto copy = [&](const auto& src, auto& dst) {
    auto d = dst.begin();
    for (std::int64_t o = 0; o < outer; ++o)
      for (std::int64_t v : idx.i) {
        const auto s = src.begin() + (o * dim + (v < 0 ? v + dim : v)) * inner;
        d = std::copy(s, s + inner, d);
      }
  };
  if (x.type == OnnxType::kFloat)
    copy(x.f, out.f);
  else
    copy(x.i, out.i);
  return core::Ok{};
}

Status cast(const Node& n, const OnnxTensor& x, OnnxTensor& out) {
  const auto to = static_cast<OnnxType>(n.to);
  if (auto st = shape_out(n, out, to, x.shape); !st) return st;
  if (x.type == OnnxType::kFloat) {
    for (std::size_t k = 0; k < x.f.size(); ++k) {
      const float v = x.f[k];
      if (to == OnnxType::kFloat) {
        out.f[k] = v;
      } else if (to == OnnxType::kBool) {
        out.i[k] = v != 0.0f;  // NaN is true
      } else {
        if (!(v > -9.2233720368547758e18f && v < 9.2233720368547758e18f))
          return node_error(n, "ONNX_VALUE",
                            "cannot cast " + std::to_string(v) + " to int64 (NaN or out of range)");
        out.i[k] = static_cast<std::int64_t>(v);  // truncates toward zero
      }
    }
    return core::Ok{};
  }
  for (std::size_t k = 0; k < x.i.size(); ++k) {
    const std::int64_t v = x.i[k];
    if (to == OnnxType::kFloat)
      out.f[k] = static_cast<float>(v);
    else
      out.i[k] = to == OnnxType::kBool ? v != 0 : v;
  }
  return core::Ok{};
}

// Reads a 1-D int64 shape input into `s`, every value >= 0.
Status shape_input(const Node& n, const OnnxTensor& t, Shape& s) {
  if (auto st = int_list(n, t, s); !st) return st;
  for (auto d : s)
    if (d < 0) return node_error(n, "ONNX_SHAPE", "negative dimension in " + shape_str(s));
  return core::Ok{};
}

Status constant_of_shape(const Node& n, const OnnxTensor& shape_t, OnnxTensor& out, Scratch& sc) {
  if (auto st = shape_input(n, shape_t, sc.s1); !st) return st;
  if (auto st = shape_out(n, out, n.value.type, sc.s1); !st) return st;
  if (n.value.type == OnnxType::kFloat)
    std::fill(out.f.begin(), out.f.end(), n.value.f[0]);
  else
    std::fill(out.i.begin(), out.i.end(), n.value.i[0]);
  return core::Ok{};
}

Status expand(const Node& n, const OnnxTensor& x, const OnnxTensor& shape_t, OnnxTensor& out,
              Scratch& sc) {
  if (auto st = shape_input(n, shape_t, sc.s2); !st) return st;
  if (!broadcast(x.shape, sc.s2, sc.s1) || sc.s1.size() > kOnnxMaxRank)
    return node_error(n, "ONNX_SHAPE",
                      shape_str(x.shape) + " does not broadcast to " + shape_str(sc.s2));
  if (auto st = shape_out(n, out, x.type, sc.s1); !st) return st;
  Idx sx, zero{};
  bstrides(x.shape, sc.s1.size(), sx);
  auto copy = [&](const auto& src, auto& dst) {
    for_each_bcast(sc.s1, sx, zero, [&](std::int64_t e, std::int64_t i, std::int64_t) {
      dst[static_cast<std::size_t>(e)] = src[static_cast<std::size_t>(i)];
    });
  };
  if (x.type == OnnxType::kFloat)
    copy(x.f, out.f);
  else
    copy(x.i, out.i);
  return core::Ok{};
}

// Row-major element strides of a shape.
void strides_of(std::span<const std::int64_t> s, Idx& st) {
  std::int64_t v = 1;
  for (std::size_t k = s.size(); k-- > 0;) {
    st[k] = v;
    v *= s[k];
  }
}

// Copies elements base + sum(idx_k * st_k) for every index of sc.s1 (the
// output shape) into out (Slice, with steps folded into the strides).
void strided_copy(const OnnxTensor& x, OnnxTensor& out, std::int64_t base, const Idx& st,
                  std::span<const std::int64_t> os) {
  Idx zero{};
  auto copy = [&](const auto& src, auto& dst) {
    for_each_bcast(os, st, zero, [&](std::int64_t e, std::int64_t i, std::int64_t) {
      dst[static_cast<std::size_t>(e)] = src[static_cast<std::size_t>(base + i)];
    });
  };
  if (x.type == OnnxType::kFloat)
    copy(x.f, out.f);
  else
    copy(x.i, out.i);
}

Status slice(const Node& n, std::span<const OnnxTensor* const> in, const OnnxTensor& x,
             OnnxTensor& out, Scratch& sc) {
  // starts / ends / axes / steps: inputs 1-4 (opset >= 10) or attributes.
  Shape& starts = sc.s1;
  Shape& ends = sc.s2;
  Shape& axes = sc.s3;
  Shape& steps = sc.s4;
  const bool from_inputs = in.size() > 1 && in[1];
  if (from_inputs) {
    if (in.size() < 3 || !in[2]) return node_error(n, "ONNX_NODE", "ends input is missing");
    if (auto st = int_list(n, *in[1], starts); !st) return st;
    if (auto st = int_list(n, *in[2], ends); !st) return st;
    axes.clear();
    steps.clear();
    if (in.size() > 3 && in[3])
      if (auto st = int_list(n, *in[3], axes); !st) return st;
    if (in.size() > 4 && in[4])
      if (auto st = int_list(n, *in[4], steps); !st) return st;
  } else if (n.has_slice_attrs) {
    starts = n.starts;
    ends = n.ends;
    axes = n.has_ints ? n.ints : Shape{};
    steps.clear();
  } else {
    return node_error(n, "ONNX_NODE", "no starts / ends (inputs 1 and 2 or attributes)");
  }
  const std::size_t m = starts.size();
  const auto r = static_cast<std::int64_t>(x.shape.size());
  if (ends.size() != m || (!axes.empty() && axes.size() != m) ||
      (!steps.empty() && steps.size() != m))
    return node_error(n, "ONNX_SHAPE", "starts, ends, axes and steps differ in length");
  if (axes.empty())
    for (std::size_t k = 0; k < m; ++k) axes.push_back(static_cast<std::int64_t>(k));
  if (steps.empty()) steps.assign(m, 1);
  Idx in_st;
  strides_of(x.shape, in_st);
  std::array<std::int64_t, kOnnxMaxRank> b{}, cnt{}, step{};
  std::array<bool, kOnnxMaxRank> seen{};
  for (std::int64_t k = 0; k < r; ++k) {
    cnt[static_cast<std::size_t>(k)] = x.shape[static_cast<std::size_t>(k)];
    step[static_cast<std::size_t>(k)] = 1;
  }
  for (std::size_t k = 0; k < m; ++k) {
    std::int64_t a = axes[k];
    if (auto st = normalize_axis(n, a, r); !st) return st;
    const auto ax = static_cast<std::size_t>(a);
    if (seen[ax]) return node_error(n, "ONNX_ATTRIBUTE", "axis repeated");
    seen[ax] = true;
    const std::int64_t d = x.shape[ax], t = steps[k];
    if (t == 0) return node_error(n, "ONNX_ATTRIBUTE", "step 0");
    std::int64_t s = starts[k], e = ends[k];
    if (s < 0) s = s < -d ? -1 - d : s + d;  // far below: negative still, clamped next
    if (e < 0) e = e < -d ? -1 - d : e + d;
    std::int64_t c = 0;
    if (d == 0) {
      s = 0;
    } else if (t > 0) {
      s = std::clamp<std::int64_t>(s, 0, d);
      e = std::clamp<std::int64_t>(e, 0, d);
      if (e > s)
        c = static_cast<std::int64_t>(static_cast<std::uint64_t>(e - s - 1) /
                                      static_cast<std::uint64_t>(t)) +
            1;
    } else {
      s = std::clamp<std::int64_t>(s, 0, d - 1);
      e = std::clamp<std::int64_t>(e, -1, d - 1);
      const std::uint64_t at = std::uint64_t{0} - static_cast<std::uint64_t>(t);  // |t|
      if (s > e) c = static_cast<std::int64_t>(static_cast<std::uint64_t>(s - e - 1) / at) + 1;
    }
    b[ax] = c > 0 ? s : 0;
    cnt[ax] = c;
    step[ax] = c > 1 ? t : 1;  // with two or more elements |t| < d: no overflow below
  }
  Shape& os = sc.s2;  // ends no longer needed
  os.assign(cnt.begin(), cnt.begin() + r);
  if (auto st = shape_out(n, out, x.type, os); !st) return st;
  std::int64_t base = 0;
  Idx st;
  for (std::size_t k = 0; k < static_cast<std::size_t>(r); ++k) {
    base += b[k] * in_st[k];
    st[k] = in_st[k] * step[k];
  }
  strided_copy(x, out, base, st, os);
  return core::Ok{};
}

Status range(const Node& n, const OnnxTensor& s, const OnnxTensor& l, const OnnxTensor& d,
             OnnxTensor& out, Scratch& sc) {
  if (s.type != l.type || s.type != d.type || s.type == OnnxType::kBool || s.numel() != 1 ||
      l.numel() != 1 || d.numel() != 1)
    return node_error(n, "ONNX_TYPE", "start, limit and delta must be scalars of one numeric type");
  const bool f = s.type == OnnxType::kFloat;
  const double start = f ? s.f[0] : static_cast<double>(s.i[0]);
  const double limit = f ? l.f[0] : static_cast<double>(l.i[0]);
  const double delta = f ? d.f[0] : static_cast<double>(d.i[0]);
  if (delta == 0 || !std::isfinite(start) || !std::isfinite(limit) || !std::isfinite(delta))
    return node_error(n, "ONNX_VALUE", "delta is 0 or a bound is not finite");
  const double count = std::max(std::ceil((limit - start) / delta), 0.0);
  if (count > static_cast<double>(kOnnxMaxElements))
    return node_error(n, "ONNX_SHAPE", "the range has too many elements");
  sc.s1 = {static_cast<std::int64_t>(count)};
  if (auto st = shape_out(n, out, s.type, sc.s1); !st) return st;
  for (std::int64_t k = 0; k < sc.s1[0]; ++k) {
    if (f)
      out.f[static_cast<std::size_t>(k)] = s.f[0] + static_cast<float>(k) * d.f[0];
    else
      out.i[static_cast<std::size_t>(k)] = wrap_add(s.i[0], wrap_mul(k, d.i[0]));
  }
  return core::Ok{};
}

Status tile(const Node& n, const OnnxTensor& x, const OnnxTensor& rep, OnnxTensor& out,
            Scratch& sc) {
  if (auto st = shape_input(n, rep, sc.s2); !st) return st;
  const std::size_t r = x.shape.size();
  if (sc.s2.size() != r) return node_error(n, "ONNX_SHAPE", "repeats length differs from rank");
  sc.s1.resize(r);
  for (std::size_t k = 0; k < r; ++k) {
    if (sc.s2[k] != 0 && x.shape[k] > kOnnxMaxElements / sc.s2[k])
      return node_error(n, "ONNX_SHAPE", "output too large");
    sc.s1[k] = x.shape[k] * sc.s2[k];
  }
  if (auto st = shape_out(n, out, x.type, sc.s1); !st) return st;
  if (out.numel() == 0) return core::Ok{};
  Idx ist;
  strides_of(x.shape, ist);
  auto copy = [&](const auto& src, auto& dst) {
    Idx idx{}, in_idx{};
    std::int64_t off = 0;
    const std::int64_t total = out.numel();
    for (std::int64_t e = 0; e < total; ++e) {
      dst[static_cast<std::size_t>(e)] = src[static_cast<std::size_t>(off)];
      for (std::size_t k = r; k-- > 0;) {
        ++idx[k];
        if (++in_idx[k] == x.shape[k]) {
          in_idx[k] = 0;
          off -= ist[k] * (x.shape[k] - 1);
        } else {
          off += ist[k];
        }
        if (idx[k] < sc.s1[k]) break;
        idx[k] = 0;  // the output dim is a multiple of the input dim: in_idx[k] wrapped to 0 too
      }
    }
  };
  if (x.type == OnnxType::kFloat)
    copy(x.f, out.f);
  else
    copy(x.i, out.i);
  return core::Ok{};
}

Status dropout(const Node& n, const OnnxTensor& x, const OnnxTensor* training, OnnxTensor& out) {
  if (training && (training->type != OnnxType::kBool || training->numel() != 1))
    return node_error(n, "ONNX_TYPE", "training_mode must be a bool scalar");
  if (training && training->i[0])
    return node_error(n, "ONNX_VALUE", "training_mode=true is not supported (inference only)");
  return reshape_to(n, x, out, x.shape);
}

Status reduce(const Node& n, const OnnxTensor& x, const OnnxTensor* axes_t, OnnxTensor& out,
              Scratch& sc) {
  const bool int_ok = n.op == Op::kReduceSum || n.op == Op::kReduceMax || n.op == Op::kReduceMin ||
                      n.op == Op::kReduceProd;
  if (x.type == OnnxType::kBool || (x.type == OnnxType::kInt64 && !int_ok))
    return node_error(n, "ONNX_TYPE", std::string("does not take ") + type_str(x.type) + " input");
  bool present = false;
  if (auto st = axes_of(n, axes_t, sc.s2, present); !st) return st;
  if (sc.s2.empty() && n.noop_empty_axes) return reshape_to(n, x, out, x.shape);
  const auto r = static_cast<std::int64_t>(x.shape.size());
  std::array<bool, kOnnxMaxRank> red{};
  if (sc.s2.empty()) red.fill(true);
  for (std::int64_t a : sc.s2) {
    if (auto st = normalize_axis(n, a, r); !st) return st;
    if (red[static_cast<std::size_t>(a)]) return node_error(n, "ONNX_ATTRIBUTE", "axis repeated");
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
  Idx so, zero{};
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
  if (r == 0) return node_error(n, "ONNX_SHAPE", "input must have rank >= 1");
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
  if (x.shape.size() < 2) return node_error(n, "ONNX_SHAPE", "X must have rank >= 2 (N, C, ...)");
  const std::int64_t c = x.shape[1];
  for (std::size_t k = 1; k < 5; ++k) {
    if (auto st = need_float(n, *p[k]); !st) return st;
    if (p[k]->numel() != c || p[k]->shape.size() != 1)
      return node_error(n, "ONNX_SHAPE",
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
  if (r == 0) return node_error(n, "ONNX_SHAPE", "X must have rank >= 1");
  std::int64_t axis = n.axis;
  if (auto st = normalize_axis(n, axis, r); !st) return st;
  const std::span<const std::int64_t> norm(x.shape.data() + axis, x.shape.size() - axis);
  for (const OnnxTensor* t : {&scale, bias}) {
    if (!t) continue;
    if (!broadcast(norm, t->shape, sc.s1) ||
        !std::equal(sc.s1.begin(), sc.s1.end(), norm.begin(), norm.end()))
      return node_error(
          n, "ONNX_SHAPE",
          shape_str(t->shape) + " does not broadcast to the normalised dims " + shape_str(norm));
  }
  if (auto st = shape_out(n, out, OnnxType::kFloat, x.shape); !st) return st;
  const std::int64_t len = numel_of(norm);
  const std::int64_t rows = len ? x.numel() / len : 0;
  Idx ss, sb;
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
  if (x.type == OnnxType::kBool) return node_error(n, "ONNX_TYPE", "does not take bool input");
  const auto r = static_cast<std::int64_t>(x.shape.size());
  if (r == 0) return node_error(n, "ONNX_SHAPE", "input must have rank >= 1");
  std::int64_t axis = n.axis;
  if (auto st = normalize_axis(n, axis, r); !st) return st;
  const auto ax = static_cast<std::size_t>(axis);
  const std::int64_t len = x.shape[ax];
  if (len == 0) return node_error(n, "ONNX_SHAPE", "the reduced axis is empty");
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
  if (x.type == OnnxType::kBool) return node_error(n, "ONNX_TYPE", "does not take bool input");
  if (axis_t.type != OnnxType::kInt64 || axis_t.i.size() != 1)
    return node_error(n, "ONNX_TYPE", "axis must be an int64 scalar");
  const auto r = static_cast<std::int64_t>(x.shape.size());
  if (r == 0) return node_error(n, "ONNX_SHAPE", "input must have rank >= 1");
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

// Pad: constant, reflect or edge, negative pads cropping. Pads come from
// input 1 (opset >= 11; for the axes of input 3 when given, opset 18) or
// the attribute; the constant from input 2 or the `value` attribute.
Status pad(const Node& n, std::span<const OnnxTensor* const> in, const OnnxTensor& x,
           OnnxTensor& out, Scratch& sc) {
  const auto r = static_cast<std::int64_t>(x.shape.size());
  Shape& pads = sc.s2;
  if (in.size() > 1 && in[1]) {
    if (auto st = int_list(n, *in[1], pads); !st) return st;
  } else if (n.has_ints) {
    pads = n.ints;
  } else {
    return node_error(n, "ONNX_NODE", "no pads (input 1 or attribute pads)");
  }
  Shape& begin_end = sc.s3;  // [begin_0 .. begin_r-1, end_0 .. end_r-1]
  if (in.size() > 3 && in[3]) {
    begin_end.assign(static_cast<std::size_t>(2 * r), 0);
    if (auto st = int_list(n, *in[3], sc.s4); !st) return st;
    if (pads.size() != 2 * sc.s4.size())
      return node_error(n, "ONNX_SHAPE", "pads must hold two values per axis");
    std::array<bool, kOnnxMaxRank> seen{};
    for (std::size_t k = 0; k < sc.s4.size(); ++k) {
      std::int64_t a = sc.s4[k];
      if (auto st = normalize_axis(n, a, r); !st) return st;
      if (seen[static_cast<std::size_t>(a)])
        return node_error(n, "ONNX_ATTRIBUTE", "axis repeated");
      seen[static_cast<std::size_t>(a)] = true;
      begin_end[static_cast<std::size_t>(a)] = pads[k];
      begin_end[static_cast<std::size_t>(a + r)] = pads[k + sc.s4.size()];
    }
  } else {
    if (static_cast<std::int64_t>(pads.size()) != 2 * r)
      return node_error(n, "ONNX_SHAPE",
                        "pads has " + std::to_string(pads.size()) + " values, rank " +
                            std::to_string(r) + " needs " + std::to_string(2 * r));
    begin_end = pads;
  }
  float cf = n.clip_min;
  std::int64_t ci = 0;
  if (in.size() > 2 && in[2]) {
    const OnnxTensor& c = *in[2];
    if (c.type != x.type || c.numel() != 1)
      return node_error(n, "ONNX_TYPE", "constant_value must be a scalar of the data's type");
    if (c.type == OnnxType::kFloat)
      cf = c.f[0];
    else
      ci = c.i[0];
  }
  sc.s1.resize(static_cast<std::size_t>(r));
  std::int64_t total_map = 0;
  for (std::int64_t k = 0; k < r; ++k) {
    const auto ku = static_cast<std::size_t>(k);
    const std::int64_t b = begin_end[ku], e = begin_end[ku + static_cast<std::size_t>(r)];
    const std::int64_t d = x.shape[ku];
    if (b < -kOnnxMaxElements || b > kOnnxMaxElements || e < -kOnnxMaxElements ||
        e > kOnnxMaxElements || d + b + e < 0)
      return node_error(n, "ONNX_SHAPE", "pads out of range for dimension " + std::to_string(k));
    sc.s1[ku] = d + b + e;
    if (n.pad_mode != 0 && d == 0 && sc.s1[ku] > 0)
      return node_error(n, "ONNX_SHAPE", "cannot reflect or extend an empty dimension");
    total_map += sc.s1[ku];
  }
  if (auto st = shape_out(n, out, x.type, sc.s1); !st) return st;
  if (out.numel() == 0) return core::Ok{};
  // Source index along each dim for each output index; -1: the constant.
  sc.map.resize(static_cast<std::size_t>(total_map));
  std::array<std::int64_t, kOnnxMaxRank> map_at{};
  std::int64_t at = 0;
  for (std::int64_t k = 0; k < r; ++k) {
    const auto ku = static_cast<std::size_t>(k);
    map_at[ku] = at;
    const std::int64_t d = x.shape[ku], b = begin_end[ku];
    for (std::int64_t i = 0; i < sc.s1[ku]; ++i) {
      std::int64_t src = i - b;
      if (src < 0 || src >= d) {
        if (n.pad_mode == 0) {
          src = -1;
        } else if (n.pad_mode == 2 || d == 1) {
          src = std::clamp<std::int64_t>(src, 0, d - 1);
        } else {
          const std::int64_t period = 2 * (d - 1);
          src = ((src % period) + period) % period;
          if (src >= d) src = period - src;
        }
      }
      sc.map[static_cast<std::size_t>(at++)] = src;
    }
  }
  Idx ist;
  strides_of(x.shape, ist);
  auto fill = [&](const auto& src, auto& dst, auto constant) {
    Idx idx{};
    const std::int64_t total = out.numel();
    for (std::int64_t e = 0; e < total; ++e) {
      std::int64_t off = 0;
      bool inside = true;
      for (std::size_t k = 0; k < static_cast<std::size_t>(r); ++k) {
        const std::int64_t s = sc.map[static_cast<std::size_t>(map_at[k] + idx[k])];
        if (s < 0) {
          inside = false;
          break;
        }
        off += s * ist[k];
      }
      dst[static_cast<std::size_t>(e)] = inside ? src[static_cast<std::size_t>(off)] : constant;
      for (std::size_t k = static_cast<std::size_t>(r); k-- > 0;) {
        if (++idx[k] < sc.s1[k]) break;
        idx[k] = 0;
      }
    }
  };
  if (x.type == OnnxType::kFloat)
    fill(x.f, out.f, cf);
  else
    fill(x.i, out.i, x.type == OnnxType::kBool ? std::int64_t{ci != 0} : ci);
  return core::Ok{};
}

// Split into the node's outputs along `axis`: sizes from input 1 (opset >=
// 13) or the `split` attribute; else `num_outputs` (opset 18: ceil-sized
// parts, the last smaller) or equal parts, one per output.
Status split(const Node& n, const OnnxTensor& x, const OnnxTensor* sizes_t,
             std::span<OnnxTensor* const> outs, Scratch& sc) {
  const auto r = static_cast<std::int64_t>(x.shape.size());
  if (r == 0) return node_error(n, "ONNX_SHAPE", "input must have rank >= 1");
  std::int64_t axis = n.axis;
  if (auto st = normalize_axis(n, axis, r); !st) return st;
  const auto ax = static_cast<std::size_t>(axis);
  const std::int64_t d = x.shape[ax];
  const auto count = static_cast<std::int64_t>(outs.size());
  Shape& sizes = sc.s2;
  if (sizes_t) {
    if (sizes_t->type != OnnxType::kInt64 || sizes_t->shape.size() > 1)
      return node_error(n, "ONNX_TYPE", "split must be a 1-D int64 tensor");
    sizes.assign(sizes_t->i.begin(), sizes_t->i.end());
  } else if (n.has_ints) {
    sizes = n.ints;
  } else {
    if (n.num_outputs != 0 && n.num_outputs != count)
      return node_error(n, "ONNX_ATTRIBUTE", "num_outputs differs from the output count");
    if (!n.num_outputs && d % count != 0)
      return node_error(n, "ONNX_SHAPE",
                        "dimension " + std::to_string(d) + " does not split into " +
                            std::to_string(count) + " equal parts");
    const std::int64_t part = n.num_outputs ? (d + count - 1) / count : d / count;
    sizes.clear();
    for (std::int64_t k = 0; k < count; ++k)
      sizes.push_back(std::clamp<std::int64_t>(d - k * part, 0, part));
  }
  if (static_cast<std::int64_t>(sizes.size()) != count)
    return node_error(
        n, "ONNX_SHAPE",
        std::to_string(sizes.size()) + " sizes for " + std::to_string(count) + " outputs");
  std::int64_t sum = 0;
  for (auto v : sizes) {
    if (v < 0 || v > d) return node_error(n, "ONNX_SHAPE", "negative or oversized split");
    sum += v;
  }
  if (sum != d)
    return node_error(
        n, "ONNX_SHAPE",
        "split sizes sum to " + std::to_string(sum) + ", the axis has " + std::to_string(d));
  std::int64_t outer = 1, inner = 1;
  for (std::size_t k = 0; k < x.shape.size(); ++k) {
    if (k < ax) outer *= x.shape[k];
    if (k > ax) inner *= x.shape[k];
  }
  std::int64_t start = 0;
  for (std::size_t j = 0; j < outs.size(); ++j) {
    sc.s1 = x.shape;
    sc.s1[ax] = sizes[j];
    if (auto st = shape_out(n, *outs[j], x.type, sc.s1); !st) return st;
    const std::int64_t chunk = sizes[j] * inner;
    auto copy = [&](const auto& src, auto& dst) {
      for (std::int64_t o = 0; o < outer; ++o) {
        const auto s = src.begin() + (o * d + start) * inner;
        std::copy(s, s + chunk, dst.begin() + o * chunk);
      }
    };
    if (x.type == OnnxType::kFloat)
      copy(x.f, outs[j]->f);
    else
      copy(x.i, outs[j]->i);
    start += sizes[j];
  }
  return core::Ok{};
}

const OnnxTensor* arg(const std::vector<const OnnxTensor*>& ref, const Node& n, std::size_t k) {
  if (k >= n.in.size() || n.in[k] < 0) return nullptr;
  return ref[static_cast<std::size_t>(n.in[k])];
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
      list.clear();
      for (std::size_t k = 0; k < n.in.size(); ++k)
        if (const OnnxTensor* t = arg(ref, n, k)) list.push_back(t);
      return concat(n, list, out, sc);
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
      list.clear();
      for (std::size_t k = 0; k < n.in.size(); ++k)
        if (const OnnxTensor* t = arg(ref, n, k)) list.push_back(t);
      return variadic(n, list, out, sc);
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
      list.clear();
      for (std::size_t k = 0; k < n.in.size(); ++k) list.push_back(arg(ref, n, k));
      return slice(n, list, x, out, sc);
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
      list.clear();
      for (std::size_t k = 0; k < 5; ++k) list.push_back(arg(ref, n, k));
      return batch_norm(n, x, list, out);
    case Op::kLayerNormalization:
      return layer_norm(n, x, *arg(ref, n, 1), arg(ref, n, 2), out, sc);
    case Op::kArgMax:
    case Op::kArgMin:
      return arg_extreme(n, x, out, sc);
    case Op::kCumSum:
      return cumsum(n, x, *arg(ref, n, 1), out);
    case Op::kPad:
      list.clear();
      for (std::size_t k = 0; k < n.in.size(); ++k) list.push_back(arg(ref, n, k));
      return pad(n, list, x, out, sc);
    default:
      return unary_op(n, x, out);
  }
  return core::Ok{};
}

Status check_input(const OnnxValueInfo& info, const OnnxTensor& t, std::size_t k) {
  auto err = [&](const std::string& msg) {
    return make_error("ONNX_INPUT", "input " + std::to_string(k) + " '" + info.name + "': " + msg);
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
    return make_error("ONNX_INPUT", "the model takes " + std::to_string(g.inputs.size()) +
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
          n, "ONNX_SHAPE",
          "the run's node outputs exceed " + std::to_string(g.max_total) + " elements together");
  }
  std::vector<OnnxTensor> result;
  result.reserve(g.output_ids.size());
  for (int id : g.output_ids) result.push_back(*g.ref[static_cast<std::size_t>(id)]);
  return result;
}

}  // namespace charkit::learn
