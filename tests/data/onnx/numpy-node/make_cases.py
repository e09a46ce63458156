#!/usr/bin/python3
"""Regenerates the cases in this folder: one ONNX node per case, built with
onnx.helper (Debian's python3-onnx), with the expected outputs computed by
numpy (float64, then rounded to float32) from the operator definitions in
the ONNX operator documentation. They pin down the semantics of the
operators charkit runs beyond ONNX's own node tests (tests/data/onnx/node/):
negative and clamped Slice bounds, Gather with negative indices, the pre-13
Softmax coercion, reduction axes forms, integer arithmetic, bool ops.

Layout as ONNX's backend cases: NAME/model.onnx and
NAME/test_data_set_0/{input_N,output_0}.pb.
Usage: ./make_cases.py  (in this folder)
"""
import math
import os
import shutil

import numpy as np
from onnx import TensorProto, helper, numpy_helper

RNG = np.random.default_rng(2026)
HERE = os.path.dirname(os.path.abspath(__file__))
ONNX_TYPE = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.int64): TensorProto.INT64,
             np.dtype(np.bool_): TensorProto.BOOL}


def f32(*shape, lo=-2.0, hi=2.0):
    return RNG.uniform(lo, hi, shape).astype(np.float32)


def i64(values):
    return np.array(values, dtype=np.int64)


def case(name, op, inputs, want, opset=13, attrs=None, const_inputs=()):
    """inputs: list of (name, array or None for an absent optional input);
    inputs whose name is in const_inputs become initializers, not graph inputs."""
    node_inputs, graph_inputs, inits, feeds = [], [], [], []
    for n, a in inputs:
        if a is None:
            node_inputs.append("")
            continue
        node_inputs.append(n)
        if n in const_inputs:
            inits.append(numpy_helper.from_array(a, n))
        else:
            graph_inputs.append(helper.make_tensor_value_info(n, ONNX_TYPE[a.dtype], a.shape))
            feeds.append(a)
    wants = list(want) if isinstance(want, list) else [want]  # a list: one output each
    for k, w in enumerate(wants):
        w = np.asarray(w)
        wants[k] = w.astype(np.float32) if w.dtype == np.float64 else w
    names = ["y"] + [f"y{k}" for k in range(1, len(wants))]
    node = helper.make_node(op, node_inputs, names, **(attrs or {}))
    graph = helper.make_graph([node], name, graph_inputs,
                              [helper.make_tensor_value_info(nm, ONNX_TYPE[w.dtype], w.shape)
                               for nm, w in zip(names, wants)],
                              initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="charkit make_cases.py")
    model.ir_version = 8
    d = os.path.join(HERE, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, "test_data_set_0"))
    with open(os.path.join(d, "model.onnx"), "wb") as f:
        f.write(model.SerializeToString())
    for k, a in enumerate(feeds):
        with open(os.path.join(d, "test_data_set_0", f"input_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(a).SerializeToString())
    for k, w in enumerate(wants):
        with open(os.path.join(d, "test_data_set_0", f"output_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(w).SerializeToString())


def unary_cases():
    x = f32(3, 4).astype(np.float64)
    xf = x.astype(np.float32)
    erf = np.vectorize(math.erf)
    sp = np.log1p(np.exp(x))
    cases = {
        "neg": ("Neg", -x, {}), "abs": ("Abs", np.abs(x), {}), "exp": ("Exp", np.exp(x), {}),
        "erf": ("Erf", erf(x), {}), "sin": ("Sin", np.sin(x), {}), "cos": ("Cos", np.cos(x), {}),
        "atan": ("Atan", np.arctan(x), {}), "sinh": ("Sinh", np.sinh(x), {}),
        "asinh": ("Asinh", np.arcsinh(x), {}),
        "softplus": ("Softplus", sp, {}), "softsign": ("Softsign", x / (1 + np.abs(x)), {}),
        "selu_attrs": ("Selu", np.where(x > 0, 1.1 * x, 1.1 * 1.5 * np.expm1(x)),
                       {"alpha": 1.5, "gamma": 1.1}),
        "celu": ("Celu", np.maximum(0, x) + np.minimum(0, 0.8 * np.expm1(x / 0.8)), {"alpha": 0.8}),
        "hardsigmoid_attrs": ("HardSigmoid", np.clip(0.3 * x + 0.4, 0, 1),
                              {"alpha": 0.3, "beta": 0.4}),
        "thresholdedrelu": ("ThresholdedRelu", np.where(x > 0.5, x, 0), {"alpha": 0.5}),
        "sign": ("Sign", np.sign(x), {}),
    }
    for name, (op, want, attrs) in cases.items():
        case(name, op, [("x", xf)], want, attrs=attrs)
    pos = f32(3, 4, lo=0.1, hi=3.0)
    p = pos.astype(np.float64)
    case("log", "Log", [("x", pos)], np.log(p))
    case("sqrt", "Sqrt", [("x", pos)], np.sqrt(p))
    case("reciprocal", "Reciprocal", [("x", pos)], 1 / p)
    case("acosh", "Acosh", [("x", pos + 1)], np.arccosh(p + 1))
    halves = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.4, -0.6], dtype=np.float32)
    case("round_half_even", "Round", [("x", halves)], np.round(halves))
    case("floor", "Floor", [("x", halves)], np.floor(halves))
    case("ceil", "Ceil", [("x", halves)], np.ceil(halves))
    case("hardswish", "HardSwish", [("x", xf * 3)], 3 * x * np.clip(3 * x / 6 + 0.5, 0, 1), opset=14)
    case("gelu_none", "Gelu", [("x", xf)], 0.5 * x * (1 + erf(x / math.sqrt(2))), opset=20)
    case("gelu_tanh", "Gelu", [("x", xf)],
         0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3))), opset=20,
         attrs={"approximate": "tanh"})
    case("mish", "Mish", [("x", xf)], x * np.tanh(sp), opset=18)
    case("neg_int64", "Neg", [("x", i64([[3, -4], [0, 7]]))], i64([[-3, 4], [0, -7]]))


def binary_cases():
    a, b = f32(2, 3, 4), f32(3, 1)
    case("pow_int_exponent", "Pow", [("x", a), ("e", i64([2]))], a.astype(np.float64) ** 2)
    case("pow_bcast", "Pow", [("x", np.abs(a) + 0.1), ("e", b)],
         (np.abs(a).astype(np.float64) + 0.1) ** b.astype(np.float64))
    slope = f32(3, 1, lo=0.05, hi=0.5)
    case("prelu_channel", "PRelu", [("x", a), ("s", slope)],
         np.where(a < 0, a.astype(np.float64) * slope, a), const_inputs=("s",))
    ia, ib = i64([[7, -7, 9], [-9, 5, 0]]), i64([2, -2, 4])
    case("add_int64", "Add", [("a", ia), ("b", ib)], ia + ib)
    case("mul_int64", "Mul", [("a", ia), ("b", ib)], ia * ib)
    case("div_int64_truncates", "Div", [("a", ia), ("b", ib)],
         (np.sign(ia) * np.sign(ib) * (np.abs(ia) // np.abs(ib))).astype(np.int64))
    c = f32(4)
    case("max_three_bcast", "Max", [("a", a), ("b", b), ("c", c)], np.maximum(np.maximum(a, b), c))
    case("min_two", "Min", [("a", a), ("b", b)], np.minimum(a, b))
    case("sum_three", "Sum", [("a", a), ("b", b), ("c", c)],
         a.astype(np.float64) + b + c)
    case("mean_three", "Mean", [("a", a), ("b", b), ("c", c)],
         (a.astype(np.float64) + b + c) / 3)
    case("max_one", "Max", [("a", b)], b)
    case("less", "Less", [("a", a), ("b", b)], a < b)
    case("greater_or_equal_int64", "GreaterOrEqual", [("a", ia), ("b", ib)], ia >= ib, opset=16)
    case("equal_int64", "Equal", [("a", ia), ("b", i64([7]))], ia == 7)
    m, n = a > 0, b > 0
    case("and_bcast", "And", [("a", m), ("b", n)], m & n)
    case("xor", "Xor", [("a", m), ("b", a < 0.5)], m ^ (a < 0.5))
    case("not", "Not", [("a", m)], ~m)
    case("where_bcast", "Where", [("c", n), ("x", a), ("v", np.array(0.25, np.float32))],
         np.where(n, a, np.float32(0.25)))


def shape_cases():
    x = f32(4, 5)
    case("slice_neg_steps", "Slice",
         [("x", x), ("s", i64([-1, 0])), ("e", i64([-2 ** 63, 5])), ("a", i64([0, 1])),
          ("t", i64([-2, 2]))], x[-1::-2, 0:5:2], const_inputs=("s", "e", "a", "t"))
    case("slice_clamped", "Slice",
         [("x", x), ("s", i64([1, -100])), ("e", i64([2 ** 63 - 1, 3])), ("a", i64([-2, -1]))],
         x[1:, -100:3], const_inputs=("s", "e", "a"))
    case("slice_reverse_all", "Slice",
         [("x", x), ("s", i64([100])), ("e", i64([-100])), ("a", i64([1])), ("t", i64([-1]))],
         x[:, ::-1], const_inputs=("s", "e", "a", "t"))
    case("slice_empty", "Slice", [("x", x), ("s", i64([3])), ("e", i64([1]))], x[3:1],
         const_inputs=("s", "e"))
    case("slice_opset9_attrs", "Slice", [("x", x)], x[1:3, 2:], opset=9,
         attrs={"starts": [1, 2], "ends": [3, 1000], "axes": [0, 1]})
    case("slice_opset9_default_axes", "Slice", [("x", x)], x[-2:], opset=9,
         attrs={"starts": [-2], "ends": [10]})
    idx = i64([[0, -1], [2, 1]])
    case("gather_axis1_negative", "Gather", [("x", x), ("i", idx)], np.take(x, [[0, 4], [2, 1]], 1),
         attrs={"axis": 1})
    case("gather_scalar_index", "Gather", [("x", x), ("i", np.array(-2, np.int64))], x[-2])
    case("gather_int64_data", "Gather", [("x", i64([5, 6, 7])), ("i", i64([2, 0]))], i64([7, 5]))
    case("tile", "Tile", [("x", x[:2, :3]), ("r", i64([2, 3]))], np.tile(x[:2, :3], (2, 3)),
         const_inputs=("r",))
    case("tile_zero", "Tile", [("x", x[:2, :3]), ("r", i64([0, 1]))], np.tile(x[:2, :3], (0, 1)),
         const_inputs=("r",))
    case("range_float", "Range",
         [("s", np.array(1.5, np.float32)), ("l", np.array(-2.0, np.float32)),
          ("d", np.array(-0.75, np.float32))], np.arange(1.5, -2.0, -0.75))
    case("range_int64", "Range",
         [("s", np.array(-3, np.int64)), ("l", np.array(10, np.int64)),
          ("d", np.array(4, np.int64))], np.arange(-3, 10, 4))
    xe = f32(3, 1)
    case("expand_bidirectional", "Expand", [("x", xe), ("s", i64([2, 1, 4]))],
         np.broadcast_to(xe, (2, 3, 4)), const_inputs=("s",))
    case("constant_of_shape_int64", "ConstantOfShape", [("s", i64([2, 3]))],
         np.full((2, 3), 7, np.int64), attrs={"value": numpy_helper.from_array(i64([7]))})
    case("constant_of_shape_default", "ConstantOfShape", [("s", i64([4]))],
         np.zeros(4, np.float32))
    case("shape_start_end", "Shape", [("x", f32(2, 3, 4, 5))], i64([3, 4]), opset=15,
         attrs={"start": 1, "end": -1})
    case("size", "Size", [("x", f32(2, 3, 4))], np.array(24, np.int64))
    fx = np.array([[-2.7, -0.5, 0.0, 0.5, 2.7, 1e6]], np.float32)
    case("cast_float_to_int64", "Cast", [("x", fx)], np.trunc(fx).astype(np.int64),
         attrs={"to": TensorProto.INT64})
    case("cast_float_to_bool", "Cast", [("x", fx)], fx != 0, attrs={"to": TensorProto.BOOL})
    case("cast_int64_to_float", "Cast", [("x", i64([-5, 0, 1 << 40]))],
         np.array([-5, 0, 1 << 40], np.float32), attrs={"to": TensorProto.FLOAT})
    case("dropout_inference", "Dropout", [("x", x), ("r", np.array(0.5, np.float32))], x,
         const_inputs=("r",))


def reduce_and_norm_cases():
    x = f32(2, 3, 4)
    d = x.astype(np.float64)
    case("reduce_mean_keepdims0", "ReduceMean", [("x", x)], d.mean(axis=1),
         attrs={"axes": [1], "keepdims": 0})
    case("reduce_sum_axes_input", "ReduceSum", [("x", x), ("a", i64([0, -1]))],
         d.sum(axis=(0, 2), keepdims=True), const_inputs=("a",))
    case("reduce_sum_noop", "ReduceSum", [("x", x), ("a", i64([]))], x,
         attrs={"noop_with_empty_axes": 1}, const_inputs=("a",))
    case("reduce_max_all", "ReduceMax", [("x", x)], d.max(keepdims=True))
    case("reduce_min_opset18", "ReduceMin", [("x", x), ("a", i64([2]))],
         d.min(axis=2, keepdims=True), opset=18, const_inputs=("a",))
    case("reduce_l1", "ReduceL1", [("x", x)], np.abs(d).sum(axis=2, keepdims=True),
         attrs={"axes": [2]})
    case("reduce_l2", "ReduceL2", [("x", x)], np.sqrt((d * d).sum(axis=1)),
         attrs={"axes": [1], "keepdims": 0})
    case("reduce_sum_square", "ReduceSumSquare", [("x", x)], (d * d).sum(axis=0, keepdims=True),
         attrs={"axes": [0]})
    case("reduce_log_sum_exp", "ReduceLogSumExp", [("x", x)],
         np.log(np.exp(d).sum(axis=-1, keepdims=True)), attrs={"axes": [-1]})
    case("reduce_prod_int64", "ReduceProd", [("x", i64([[2, 3], [4, -5]]))], np.array(-120, np.int64),
         attrs={"keepdims": 0, "axes": [0, 1]})

    def softmax(v, axis):
        e = np.exp(v - v.max(axis=axis, keepdims=True))
        return e / e.sum(axis=axis, keepdims=True)

    case("softmax_axis1", "Softmax", [("x", x)], softmax(d, 1), attrs={"axis": 1})
    case("softmax_default_axis", "Softmax", [("x", x)], softmax(d, -1))
    # Before opset 13: coerced to 2-D [2, 12] at axis 1.
    case("softmax_opset11_coerced", "Softmax", [("x", x)],
         softmax(d.reshape(2, 12), 1).reshape(2, 3, 4), opset=11)
    case("logsoftmax_axis0", "LogSoftmax", [("x", x)], np.log(softmax(d, 0)), attrs={"axis": 0})

    scale, bias, mean, var = f32(3, lo=0.5, hi=1.5), f32(3), f32(3), f32(3, lo=0.2, hi=2.0)
    bn = ((d - mean[None, :, None]) / np.sqrt(var.astype(np.float64)[None, :, None] + 1e-3)
          * scale[None, :, None] + bias[None, :, None])
    case("batchnorm_inference", "BatchNormalization",
         [("x", x), ("scale", scale), ("b", bias), ("mean", mean), ("var", var)], bn,
         attrs={"epsilon": 1e-3}, const_inputs=("scale", "b", "mean", "var"))
    ls, lb = f32(3, 4, lo=0.5, hi=1.5), f32(4)
    mu = d.mean(axis=(1, 2), keepdims=True)
    sd = np.sqrt(((d - mu) ** 2).mean(axis=(1, 2), keepdims=True) + 1e-5)
    case("layernorm_axis1", "LayerNormalization", [("x", x), ("s", ls), ("b", lb)],
         (d - mu) / sd * ls + lb, opset=17, attrs={"axis": 1}, const_inputs=("s", "b"))


def split_pad_scan_cases():
    x = f32(3, 6)
    case("split_opset11_attr", "Split", [("x", x)], [x[:, :1], x[:, 1:4], x[:, 4:]], opset=11,
         attrs={"axis": 1, "split": [1, 3, 2]})
    case("split_sizes_input", "Split", [("x", x), ("s", i64([2, 1]))], [x[:2], x[2:]],
         const_inputs=("s",))
    case("split_equal_parts", "Split", [("x", x)], [x[:, :2], x[:, 2:4], x[:, 4:]],
         attrs={"axis": -1})
    x7 = f32(7)
    case("split_num_outputs_uneven", "Split", [("x", x7)], [x7[:3], x7[3:6], x7[6:]], opset=18,
         attrs={"num_outputs": 3})
    t = np.array([[1.0, 3.0, 3.0, -2.0], [5.0, 5.0, 0.0, 5.0]], np.float32)
    case("argmax_keepdims", "ArgMax", [("x", t)], np.argmax(t, 1)[:, None], attrs={"axis": 1})
    case("argmax_select_last", "ArgMax", [("x", t)], 3 - np.argmax(t[:, ::-1], 1), opset=12,
         attrs={"axis": 1, "keepdims": 0, "select_last_index": 1})
    case("argmin_axis0", "ArgMin", [("x", t)], np.argmin(t, 0), attrs={"keepdims": 0})
    c = f32(2, 5)
    cd = c.astype(np.float64)
    case("cumsum", "CumSum", [("x", c), ("a", np.array(1, np.int64))], np.cumsum(cd, 1),
         const_inputs=("a",))
    case("cumsum_exclusive_reverse", "CumSum", [("x", c), ("a", np.array(-1, np.int64))],
         np.flip(np.cumsum(np.flip(cd, 1), 1), 1) - cd, const_inputs=("a",),
         attrs={"exclusive": 1, "reverse": 1})
    case("cumsum_int64", "CumSum", [("x", i64([[1, 2], [3, 4]])), ("a", np.array(0, np.int64))],
         i64([[1, 2], [4, 6]]), const_inputs=("a",))
    p = f32(3, 4)
    case("pad_constant_inputs", "Pad",
         [("x", p), ("p", i64([1, 0, 0, 2])), ("v", np.array(1.5, np.float32))],
         np.pad(p, ((1, 0), (0, 2)), constant_values=1.5), const_inputs=("p", "v"))
    case("pad_negative_crops", "Pad", [("x", p), ("p", i64([-1, 1, 0, -2]))],
         np.pad(p[1:, :2], ((0, 0), (1, 0))), const_inputs=("p",))
    case("pad_reflect", "Pad", [("x", p), ("p", i64([0, 3, 0, 2]))],
         np.pad(p, ((0, 0), (3, 2)), mode="reflect"), const_inputs=("p",),
         attrs={"mode": "reflect"})
    case("pad_edge", "Pad", [("x", p), ("p", i64([2, 1, 1, 2]))],
         np.pad(p, ((2, 1), (1, 2)), mode="edge"), const_inputs=("p",), attrs={"mode": "edge"})
    case("pad_opset2_attrs", "Pad", [("x", p)], np.pad(p, ((0, 1), (2, 0)), constant_values=-1.0),
         opset=2, attrs={"pads": [0, 2, 1, 0], "value": -1.0})
    case("pad_axes_opset18", "Pad", [("x", p), ("p", i64([1, 2])), ("v", None), ("a", i64([-1]))],
         np.pad(p, ((0, 0), (1, 2))), opset=18, const_inputs=("p", "a"))


def main():
    unary_cases()
    binary_cases()
    shape_cases()
    reduce_and_norm_cases()
    split_pad_scan_cases()
    print(len([e for e in os.listdir(HERE) if os.path.isdir(os.path.join(HERE, e))]), "cases")


if __name__ == "__main__":
    main()
