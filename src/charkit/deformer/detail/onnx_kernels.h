// Internal: the helpers and kernels shared by the ONNX executor's
// sources - onnx_run.cpp (element-wise and linear-algebra kernels, the
// dispatch and the run loop), onnx_ops_shape.cpp (shapes, indexing and data
// movement) and onnx_ops_reduce.cpp (reductions and normalisation). Not part
// of the public API.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "charkit/deformer/detail/onnx_graph.h"
#include "charkit/deformer/error_codes.h"
#include "charkit/deformer/onnx.h"

namespace charkit::deformer::onnx_kernel {

using core::Status;
using namespace onnx_detail;

using Shape = std::vector<std::int64_t>;

using Idx = std::array<std::int64_t, kOnnxMaxRank>;

template <typename T>
std::vector<T>& data(OnnxTensor& t);

template <>
inline std::vector<float>& data<float>(OnnxTensor& t) {
  return t.f;
}

template <>
inline std::vector<std::int64_t>& data<std::int64_t>(OnnxTensor& t) {
  return t.i;
}

template <typename T>
const std::vector<T>& cdata(const OnnxTensor& t) {
  return data<T>(const_cast<OnnxTensor&>(t));
}

// Gives `out` a type and shape, sizing its data (no allocation when the
// capacity is already there).
inline Status shape_out(const Node& n, OnnxTensor& out, OnnxType type,
                        std::span<const std::int64_t> s) {
  std::int64_t count = 0;
  if (s.size() > kOnnxMaxRank || !checked_numel(s, count, n.max_elements))
    return node_error(n, codes::ONNX_SHAPE,
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

inline std::string shape_str(std::span<const std::int64_t> s) {
  std::string r = "[";
  for (std::size_t k = 0; k < s.size(); ++k) r += (k ? "," : "") + std::to_string(s[k]);
  return r + "]";
}

inline const char* type_str(OnnxType t) {
  return t == OnnxType::kFloat ? "float32" : t == OnnxType::kInt64 ? "int64" : "bool";
}

inline Status need_float(const Node& n, const OnnxTensor& t) {
  if (t.type != OnnxType::kFloat)
    return node_error(n, codes::ONNX_TYPE,
                      std::string("needs float32 input, got ") + type_str(t.type));
  return core::Ok{};
}

// Row-major strides of `in` as seen from an output of rank `rank` into which
// it broadcasts (right-aligned; broadcast dims get stride 0).
inline void bstrides(std::span<const std::int64_t> in, std::size_t rank, Idx& st) {
  std::int64_t s = 1;
  for (std::size_t k = 0; k < rank; ++k) st[k] = 0;
  for (std::size_t k = in.size(); k-- > 0;) {
    std::size_t o = rank - in.size() + k;
    st[o] = in[k] == 1 ? 0 : s;
    s *= in[k];
  }
}

inline bool broadcast(std::span<const std::int64_t> a, std::span<const std::int64_t> b,
                      Shape& out) {
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

inline std::int64_t numel_of(std::span<const std::int64_t> s) {
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
    Idx sa{}, sb{};
    bstrides(as, os.size(), sa);
    bstrides(bs, os.size(), sb);
    for_each_bcast(os, sa, sb, f);
  }
}

// Integer arithmetic wraps (two's complement) instead of overflowing.
inline std::int64_t wrap_add(std::int64_t x, std::int64_t y) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(x) + static_cast<std::uint64_t>(y));
}

inline std::int64_t wrap_sub(std::int64_t x, std::int64_t y) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(x) - static_cast<std::uint64_t>(y));
}

inline std::int64_t wrap_mul(std::int64_t x, std::int64_t y) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(x) * static_cast<std::uint64_t>(y));
}

// Truncating division (as C++ and onnxruntime); the divisor is checked non-zero first.
inline std::int64_t int_div(std::int64_t x, std::int64_t y) {
  return y == -1 ? wrap_sub(0, x) : x / y;
}

inline std::int64_t int_pow(std::int64_t x, std::int64_t y) {
  if (y < 0) return x == 1 ? 1 : x == -1 ? (y % 2 ? -1 : 1) : 0;  // truncated 1/x^|y|
  std::uint64_t r = 1, b = static_cast<std::uint64_t>(x);
  for (auto e = static_cast<std::uint64_t>(y); e; e >>= 1) {
    if (e & 1) r *= b;
    b *= b;
  }
  return static_cast<std::int64_t>(r);
}

inline float fmax_nan(float x, float y) {
  return std::isnan(x) || x > y ? x : y;
}

inline float fmin_nan(float x, float y) {
  return std::isnan(x) || x < y ? x : y;
}

inline bool is_compare(Op op) {
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

template <typename F>
Status unary(const Node& n, const OnnxTensor& a, OnnxTensor& out, F f) {
  if (auto st = need_float(n, a); !st) return st;
  if (auto st = shape_out(n, out, OnnxType::kFloat, a.shape); !st) return st;
  for (std::size_t k = 0; k < a.f.size(); ++k) out.f[k] = f(a.f[k]);
  return core::Ok{};
}

template <typename T>
void copy_data(const OnnxTensor& in, OnnxTensor& out) {
  const auto& src = cdata<T>(in);
  std::copy(src.begin(), src.end(), data<T>(out).begin());
}

// Same data, new shape (Identity, Reshape, Flatten, Squeeze, Unsqueeze).
inline Status reshape_to(const Node& n, const OnnxTensor& in, OnnxTensor& out,
                         std::span<const std::int64_t> s) {
  if (auto st = shape_out(n, out, in.type, s); !st) return st;
  if (out.numel() != in.numel())
    return node_error(n, codes::ONNX_SHAPE,
                      "cannot reshape " + shape_str(in.shape) + " to " + shape_str(s));
  if (in.type == OnnxType::kFloat)
    copy_data<float>(in, out);
  else
    copy_data<std::int64_t>(in, out);
  return core::Ok{};
}

// Reads an int64 1-D (or scalar) tensor of axes / shape values into v.
inline Status int_list(const Node& n, const OnnxTensor& t, std::vector<std::int64_t>& v) {
  if (t.type != OnnxType::kInt64 || t.shape.size() > 1)
    return node_error(n, codes::ONNX_TYPE, "shape / axes input must be a 1-D int64 tensor");
  if (t.i.size() > kOnnxMaxRank * 2)
    return node_error(n, codes::ONNX_SHAPE, "shape / axes input is too long");
  v.assign(t.i.begin(), t.i.end());
  return core::Ok{};
}

inline Status normalize_axis(const Node& n, std::int64_t& axis, std::int64_t rank) {
  if (axis < -rank || axis >= rank)
    return node_error(
        n, codes::ONNX_ATTRIBUTE,
        "axis " + std::to_string(axis) + " out of range for rank " + std::to_string(rank));
  if (axis < 0) axis += rank;
  return core::Ok{};
}

// Axes from input 1 (opset >= 13) or the attribute (before); `present` false
// when neither is given.
inline Status axes_of(const Node& n, const OnnxTensor* axes_t, Shape& axes, bool& present) {
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

// Reads a 1-D int64 shape input into `s`, every value >= 0.
inline Status shape_input(const Node& n, const OnnxTensor& t, Shape& s) {
  if (auto st = int_list(n, t, s); !st) return st;
  for (auto d : s)
    if (d < 0) return node_error(n, codes::ONNX_SHAPE, "negative dimension in " + shape_str(s));
  return core::Ok{};
}

// Row-major element strides of a shape.
inline void strides_of(std::span<const std::int64_t> s, Idx& st) {
  std::int64_t v = 1;
  for (std::size_t k = s.size(); k-- > 0;) {
    st[k] = v;
    v *= s[k];
  }
}

// ---- Kernels of onnx_ops_shape.cpp and onnx_ops_reduce.cpp ----

Status shape_of(const Node& n, const OnnxTensor& x, OnnxTensor& out, Scratch& sc);

Status gather(const Node& n, const OnnxTensor& x, const OnnxTensor& idx, OnnxTensor& out,
              Scratch& sc);

Status cast(const Node& n, const OnnxTensor& x, OnnxTensor& out);

Status constant_of_shape(const Node& n, const OnnxTensor& shape_t, OnnxTensor& out, Scratch& sc);

Status expand(const Node& n, const OnnxTensor& x, const OnnxTensor& shape_t, OnnxTensor& out,
              Scratch& sc);

Status slice(const Node& n, std::span<const OnnxTensor* const> in, const OnnxTensor& x,
             OnnxTensor& out, Scratch& sc);

Status range(const Node& n, const OnnxTensor& s, const OnnxTensor& l, const OnnxTensor& d,
             OnnxTensor& out, Scratch& sc);

Status tile(const Node& n, const OnnxTensor& x, const OnnxTensor& rep, OnnxTensor& out,
            Scratch& sc);

Status dropout(const Node& n, const OnnxTensor& x, const OnnxTensor* training, OnnxTensor& out);

// Pad: constant, reflect or edge, negative pads cropping. Pads come from
// input 1 (opset >= 11; for the axes of input 3 when given, opset 18) or
// the attribute; the constant from input 2 or the `value` attribute.
Status pad(const Node& n, std::span<const OnnxTensor* const> in, const OnnxTensor& x,
           OnnxTensor& out, Scratch& sc);

// Split into the node's outputs along `axis`: sizes from input 1 (opset >=
// 13) or the `split` attribute; else `num_outputs` (opset 18: ceil-sized
// parts, the last smaller) or equal parts, one per output.
Status split(const Node& n, const OnnxTensor& x, const OnnxTensor* sizes_t,
             std::span<OnnxTensor* const> outs, Scratch& sc);

Status reduce(const Node& n, const OnnxTensor& x, const OnnxTensor* axes_t, OnnxTensor& out,
              Scratch& sc);

// Softmax / LogSoftmax: along `axis` (opset >= 13) or over the 2-D coercion
// [prod(dims < axis), prod(dims >= axis)] (before 13).
Status softmax(const Node& n, const OnnxTensor& x, OnnxTensor& out);

// BatchNormalization with the stored statistics: y = (x - mean) * scale /
// sqrt(var + epsilon) + B per channel (dim 1).
Status batch_norm(const Node& n, const OnnxTensor& x, std::span<const OnnxTensor* const> p,
                  OnnxTensor& out);

// LayerNormalization over dims [axis, rank): statistics in double, then
// (x - mean) / sqrt(var + epsilon) * Scale + B with Scale and B broadcast
// onto the normalised dims.
Status layer_norm(const Node& n, const OnnxTensor& x, const OnnxTensor& scale,
                  const OnnxTensor* bias, OnnxTensor& out, Scratch& sc);

// ArgMax / ArgMin along one axis: the first (or, with select_last_index,
// the last) position of the extreme value, as int64.
Status arg_extreme(const Node& n, const OnnxTensor& x, OnnxTensor& out, Scratch& sc);

// CumSum along the axis given as input 1, optionally exclusive / reversed.
Status cumsum(const Node& n, const OnnxTensor& x, const OnnxTensor& axis_t, OnnxTensor& out);

}  // namespace charkit::deformer::onnx_kernel
