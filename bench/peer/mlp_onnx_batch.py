#!/usr/bin/env python3
"""Write the benchmark MLP (300 inputs, 2 x 128 ELU, 128 linear outputs, input
standardisation) as an ONNX model with a dynamic batch axis, for the batched
inference comparison (bench/compare_mlp_batch.sh): Sub, Div, then Gemm + Elu
per layer, opset 13, float32. Weights are seeded random values (the speed does
not depend on them); also writes MODEL.in.npy, ROWS rows of inputs.

Usage: mlp_onnx_batch.py OUT.onnx [ROWS]
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

FEATURES, HIDDEN, OUTPUTS = 300, 128, 128


def main():
    out = sys.argv[1]
    rows = int(sys.argv[2]) if len(sys.argv) > 2 else 1024
    rng = np.random.default_rng(5)
    widths = [FEATURES, HIDDEN, HIDDEN, OUTPUTS]
    inits = [
        numpy_helper.from_array(rng.normal(0, 1, FEATURES).astype(np.float32), "mean"),
        numpy_helper.from_array(rng.uniform(0.5, 2, FEATURES).astype(np.float32), "std"),
    ]
    nodes = [helper.make_node("Sub", ["x", "mean"], ["c"]),
             helper.make_node("Div", ["c", "std"], ["h0"])]
    for l in range(3):
        w = (rng.normal(0, 1, (widths[l], widths[l + 1])) * np.sqrt(2.0 / widths[l])).astype(np.float32)
        b = rng.normal(0, 0.1, widths[l + 1]).astype(np.float32)
        inits += [numpy_helper.from_array(w, f"w{l}"), numpy_helper.from_array(b, f"b{l}")]
        last = l == 2
        z = "y" if last else f"z{l}"
        nodes.append(helper.make_node("Gemm", [f"h{l}", f"w{l}", f"b{l}"], [z]))
        if not last:
            nodes.append(helper.make_node("Elu", [z], [f"h{l + 1}"], alpha=1.0))
    graph = helper.make_graph(
        nodes, "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", FEATURES])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", OUTPUTS])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                              producer_name="charkit bench")
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, out)
    np.save(out + ".in.npy", rng.normal(0, 1, (rows, FEATURES)).astype(np.float32))


if __name__ == "__main__":
    main()
