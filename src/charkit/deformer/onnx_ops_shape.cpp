// ONNX kernels for shapes, indexing and data movement: Shape, Gather, Cast,
// ConstantOfShape, Expand, Slice, Range, Tile, Dropout, Pad, Split
// (docs/deformer/onnx.md). Shared helpers: onnx_kernels.h.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "charkit/deformer/detail/onnx_kernels.h"
#include "charkit/deformer/error_codes.h"

namespace charkit::deformer::onnx_kernel {

using core::make_error;

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
  if (idx.type != OnnxType::kInt64) return node_error(n, codes::ONNX_TYPE, "indices must be int64");
  const auto r = static_cast<std::int64_t>(x.shape.size());
  if (r == 0) return node_error(n, codes::ONNX_SHAPE, "data must have rank >= 1");
  std::int64_t axis = n.axis;
  if (auto st = normalize_axis(n, axis, r); !st) return st;
  const auto ax = static_cast<std::size_t>(axis);
  const std::int64_t dim = x.shape[ax];
  for (std::int64_t v : idx.i)
    if (v < -dim || v >= dim)
      return node_error(n, codes::ONNX_VALUE,
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
          return node_error(n, codes::ONNX_VALUE,
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
    return node_error(n, codes::ONNX_SHAPE,
                      shape_str(x.shape) + " does not broadcast to " + shape_str(sc.s2));
  if (auto st = shape_out(n, out, x.type, sc.s1); !st) return st;
  Idx sx{}, zero{};
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

namespace {

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

}  // namespace

Status slice(const Node& n, std::span<const OnnxTensor* const> in, const OnnxTensor& x,
             OnnxTensor& out, Scratch& sc) {
  // starts / ends / axes / steps: inputs 1-4 (opset >= 10) or attributes.
  Shape& starts = sc.s1;
  Shape& ends = sc.s2;
  Shape& axes = sc.s3;
  Shape& steps = sc.s4;
  const bool from_inputs = in.size() > 1 && in[1];
  if (from_inputs) {
    if (in.size() < 3 || !in[2]) return node_error(n, codes::ONNX_NODE, "ends input is missing");
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
    return node_error(n, codes::ONNX_NODE, "no starts / ends (inputs 1 and 2 or attributes)");
  }
  const std::size_t m = starts.size();
  const auto r = static_cast<std::int64_t>(x.shape.size());
  if (ends.size() != m || (!axes.empty() && axes.size() != m) ||
      (!steps.empty() && steps.size() != m))
    return node_error(n, codes::ONNX_SHAPE, "starts, ends, axes and steps differ in length");
  if (axes.empty())
    for (std::size_t k = 0; k < m; ++k) axes.push_back(static_cast<std::int64_t>(k));
  if (steps.empty()) steps.assign(m, 1);
  Idx in_st{};
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
    if (seen[ax]) return node_error(n, codes::ONNX_ATTRIBUTE, "axis repeated");
    seen[ax] = true;
    const std::int64_t d = x.shape[ax], t = steps[k];
    if (t == 0) return node_error(n, codes::ONNX_ATTRIBUTE, "step 0");
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
  Idx st{};
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
    return node_error(n, codes::ONNX_TYPE,
                      "start, limit and delta must be scalars of one numeric type");
  const bool f = s.type == OnnxType::kFloat;
  const double start = f ? s.f[0] : static_cast<double>(s.i[0]);
  const double limit = f ? l.f[0] : static_cast<double>(l.i[0]);
  const double delta = f ? d.f[0] : static_cast<double>(d.i[0]);
  if (delta == 0 || !std::isfinite(start) || !std::isfinite(limit) || !std::isfinite(delta))
    return node_error(n, codes::ONNX_VALUE, "delta is 0 or a bound is not finite");
  const double count = std::max(std::ceil((limit - start) / delta), 0.0);
  if (count > static_cast<double>(kOnnxMaxElements))
    return node_error(n, codes::ONNX_SHAPE, "the range has too many elements");
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
  if (sc.s2.size() != r)
    return node_error(n, codes::ONNX_SHAPE, "repeats length differs from rank");
  sc.s1.resize(r);
  for (std::size_t k = 0; k < r; ++k) {
    if (sc.s2[k] != 0 && x.shape[k] > kOnnxMaxElements / sc.s2[k])
      return node_error(n, codes::ONNX_SHAPE, "output too large");
    sc.s1[k] = x.shape[k] * sc.s2[k];
  }
  if (auto st = shape_out(n, out, x.type, sc.s1); !st) return st;
  if (out.numel() == 0) return core::Ok{};
  Idx ist{};
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
    return node_error(n, codes::ONNX_TYPE, "training_mode must be a bool scalar");
  if (training && training->i[0])
    return node_error(n, codes::ONNX_VALUE, "training_mode=true is not supported (inference only)");
  return reshape_to(n, x, out, x.shape);
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
    return node_error(n, codes::ONNX_NODE, "no pads (input 1 or attribute pads)");
  }
  Shape& begin_end = sc.s3;  // [begin_0 .. begin_r-1, end_0 .. end_r-1]
  if (in.size() > 3 && in[3]) {
    begin_end.assign(static_cast<std::size_t>(2 * r), 0);
    if (auto st = int_list(n, *in[3], sc.s4); !st) return st;
    if (pads.size() != 2 * sc.s4.size())
      return node_error(n, codes::ONNX_SHAPE, "pads must hold two values per axis");
    std::array<bool, kOnnxMaxRank> seen{};
    for (std::size_t k = 0; k < sc.s4.size(); ++k) {
      std::int64_t a = sc.s4[k];
      if (auto st = normalize_axis(n, a, r); !st) return st;
      if (seen[static_cast<std::size_t>(a)])
        return node_error(n, codes::ONNX_ATTRIBUTE, "axis repeated");
      seen[static_cast<std::size_t>(a)] = true;
      begin_end[static_cast<std::size_t>(a)] = pads[k];
      begin_end[static_cast<std::size_t>(a + r)] = pads[k + sc.s4.size()];
    }
  } else {
    if (static_cast<std::int64_t>(pads.size()) != 2 * r)
      return node_error(n, codes::ONNX_SHAPE,
                        "pads has " + std::to_string(pads.size()) + " values, rank " +
                            std::to_string(r) + " needs " + std::to_string(2 * r));
    begin_end = pads;
  }
  float cf = n.pad_value;
  std::int64_t ci = 0;
  if (in.size() > 2 && in[2]) {
    const OnnxTensor& c = *in[2];
    if (c.type != x.type || c.numel() != 1)
      return node_error(n, codes::ONNX_TYPE, "constant_value must be a scalar of the data's type");
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
      return node_error(n, codes::ONNX_SHAPE,
                        "pads out of range for dimension " + std::to_string(k));
    sc.s1[ku] = d + b + e;
    if (n.pad_mode != 0 && d == 0 && sc.s1[ku] > 0)
      return node_error(n, codes::ONNX_SHAPE, "cannot reflect or extend an empty dimension");
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
  Idx ist{};
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
  if (r == 0) return node_error(n, codes::ONNX_SHAPE, "input must have rank >= 1");
  std::int64_t axis = n.axis;
  if (auto st = normalize_axis(n, axis, r); !st) return st;
  const auto ax = static_cast<std::size_t>(axis);
  const std::int64_t d = x.shape[ax];
  const auto count = static_cast<std::int64_t>(outs.size());
  Shape& sizes = sc.s2;
  if (sizes_t) {
    if (sizes_t->type != OnnxType::kInt64 || sizes_t->shape.size() > 1)
      return node_error(n, codes::ONNX_TYPE, "split must be a 1-D int64 tensor");
    sizes.assign(sizes_t->i.begin(), sizes_t->i.end());
  } else if (n.has_ints) {
    sizes = n.ints;
  } else {
    if (n.num_outputs != 0 && n.num_outputs != count)
      return node_error(n, codes::ONNX_ATTRIBUTE, "num_outputs differs from the output count");
    if (!n.num_outputs && d % count != 0)
      return node_error(n, codes::ONNX_SHAPE,
                        "dimension " + std::to_string(d) + " does not split into " +
                            std::to_string(count) + " equal parts");
    const std::int64_t part = n.num_outputs ? (d + count - 1) / count : d / count;
    sizes.clear();
    for (std::int64_t k = 0; k < count; ++k)
      sizes.push_back(std::clamp<std::int64_t>(d - k * part, 0, part));
  }
  if (static_cast<std::int64_t>(sizes.size()) != count)
    return node_error(
        n, codes::ONNX_SHAPE,
        std::to_string(sizes.size()) + " sizes for " + std::to_string(count) + " outputs");
  std::int64_t sum = 0;
  for (auto v : sizes) {
    if (v < 0 || v > d) return node_error(n, codes::ONNX_SHAPE, "negative or oversized split");
    sum += v;
  }
  if (sum != d)
    return node_error(
        n, codes::ONNX_SHAPE,
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

}  // namespace charkit::deformer::onnx_kernel
