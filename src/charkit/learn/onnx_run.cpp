// ONNX execution: one kernel per supported op on float32 (and int64 for the
// data-movement ops), numpy/ONNX multidirectional broadcasting. Buffers of
// node outputs live in the graph and are resized in place, so a second run
// with the same input shapes allocates nothing for intermediates.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

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
  if (s.size() > kOnnxMaxRank || !checked_numel(s, count))
    return node_error(n, "ONNX_SHAPE",
                      "output would exceed " + std::to_string(kOnnxMaxElements) + " elements or " +
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

Status need_float(const Node& n, const OnnxTensor& t) {
  if (t.type != OnnxType::kFloat)
    return node_error(n, "ONNX_TYPE", "needs float32 input, got int64");
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

Status binary(const Node& n, const OnnxTensor& a, const OnnxTensor& b, OnnxTensor& out,
              Scratch& sc) {
  if (auto st = need_float(n, a); !st) return st;
  if (auto st = need_float(n, b); !st) return st;
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
  if (auto st = shape_out(n, out, OnnxType::kFloat, sc.s1); !st) return st;
  Idx sa, sb;
  bstrides(a.shape, sc.s1.size(), sa);
  bstrides(bs, sc.s1.size(), sb);
  const float* pa = a.f.data();
  const float* pb = b.f.data();
  float* po = out.f.data();
  auto run = [&](auto op) {
    if (a.shape == b.shape) {
      for (std::size_t k = 0; k < out.f.size(); ++k) po[k] = op(pa[k], pb[k]);
    } else if (b.f.size() == 1) {
      for (std::size_t k = 0; k < out.f.size(); ++k) po[k] = op(pa[k], pb[0]);
    } else {
      for_each_bcast(sc.s1, sa, sb, [&](std::int64_t e, std::int64_t ia, std::int64_t ib) {
        po[e] = op(pa[ia], pb[ib]);
      });
    }
  };
  switch (n.op) {
    case Op::kAdd:
      run([](float x, float y) { return x + y; });
      break;
    case Op::kSub:
      run([](float x, float y) { return x - y; });
      break;
    case Op::kMul:
      run([](float x, float y) { return x * y; });
      break;
    default:
      run([](float x, float y) { return x / y; });
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

// C[m,n] (+)= sum_k A[m,k] B[k,n] with strides for optional transposes.
void gemm_kernel(const float* a, std::int64_t am, std::int64_t ak, const float* b, std::int64_t bk,
                 std::int64_t bn, float* c, std::int64_t M, std::int64_t N, std::int64_t K,
                 float alpha) {
  for (std::int64_t i = 0; i < M; ++i) {
    float* row = c + i * N;
    for (std::int64_t k = 0; k < K; ++k) {
      const float av = alpha * a[i * am + k * ak];
      const float* brow = b + k * bk;
      for (std::int64_t j = 0; j < N; ++j) row[j] += av * brow[j * bn];
    }
  }
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
  const std::int64_t am = n.trans_a ? 1 : K, ak = n.trans_a ? M : 1;
  const std::int64_t bk = n.trans_b ? 1 : N, bn = n.trans_b ? K : 1;
  gemm_kernel(a.f.data(), am, ak, b.f.data(), bk, bn, out.f.data(), M, N, K, n.alpha);
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
  Shape batch;
  if (!broadcast(ab, bb, batch) || batch.size() + 2 > kOnnxMaxRank)
    return node_error(n, "ONNX_SHAPE",
                      "batch dimensions of " + shape_str(a.shape) + " and " + shape_str(b.shape) +
                          " do not broadcast");
  sc.s1 = batch;
  if (!a1) sc.s1.push_back(M);
  if (!b1) sc.s1.push_back(N);
  if (auto st = shape_out(n, out, OnnxType::kFloat, sc.s1); !st) return st;
  std::fill(out.f.begin(), out.f.end(), 0.0f);
  Idx sa, sb;
  bstrides(ab, batch.size(), sa);
  bstrides(bb, batch.size(), sb);
  const std::int64_t mk = M * K, kn = K * N, mn = M * N;
  if (batch.empty()) {
    gemm_kernel(a.f.data(), K, 1, b.f.data(), N, 1, out.f.data(), M, N, K, 1.0f);
    return core::Ok{};
  }
  for_each_bcast(batch, sa, sb, [&](std::int64_t e, std::int64_t ia, std::int64_t ib) {
    gemm_kernel(a.f.data() + ia * mk, K, 1, b.f.data() + ib * kn, N, 1, out.f.data() + e * mn, M, N,
                K, 1.0f);
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
      return binary(n, x, *arg(ref, n, 1), out, sc);
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
    return err(std::string("element type must be ") + (info.elem_type == 1 ? "float32" : "int64"));
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
  for (const Node& n : g.nodes) {
    if (n.op == Op::kConstant) continue;
    OnnxTensor& out = g.work[static_cast<std::size_t>(n.out)];
    if (auto st = exec(n, g.ref, out, sc, list); !st) return std::move(st).error();
    g.ref[static_cast<std::size_t>(n.out)] = &out;
  }
  std::vector<OnnxTensor> result;
  result.reserve(g.output_ids.size());
  for (int id : g.output_ids) result.push_back(*g.ref[static_cast<std::size_t>(id)]);
  return result;
}

}  // namespace charkit::learn
