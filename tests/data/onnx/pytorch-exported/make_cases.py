#!/usr/bin/python3
"""Regenerates the cases in this folder: small networks built and exported
with PyTorch's own exporter (torch.onnx.export, Debian's python3-torch
1.13), each as NAME/model.onnx + NAME/test_data_set_0/{input_0,output_0}.pb,
the layout of ONNX's backend test cases. The expected outputs are PyTorch's
(eval mode, float32), so tests/learn/onnx_test.cpp checks charkit's ONNX
runner against PyTorch on exports it has not seen when written.

TensorProtos are encoded here by hand (dims = field 1, data_type = field 2,
raw_data = field 9), so the script needs no onnx Python package.
Usage: ./make_cases.py  (in this folder)
"""
import os
import struct

import numpy as np
import torch


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def tensor_proto(a):
    a = np.ascontiguousarray(a, dtype=np.float32)
    msg = bytearray()
    for d in a.shape:
        msg += b"\x08" + varint(d)          # dims (int64, not packed)
    msg += b"\x10" + varint(1)              # data_type FLOAT
    raw = a.astype("<f4").tobytes()
    msg += b"\x4a" + varint(len(raw)) + raw  # raw_data
    return bytes(msg)


class MlpElu(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(12, 16), torch.nn.ELU(),
                                       torch.nn.Linear(16, 16), torch.nn.ELU(alpha=0.5),
                                       torch.nn.Linear(16, 5))

    def forward(self, x):
        return self.net(x)


class MlpMixed(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(12, 10)
        self.b = torch.nn.Linear(10, 8, bias=False)
        self.c = torch.nn.Linear(8, 4)

    def forward(self, x):
        h = torch.tanh(self.a(x))
        h = torch.relu(self.b(h))
        return torch.sigmoid(self.c(h))


class LeakyClamp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(12, 6)

    def forward(self, x):
        y = torch.nn.functional.leaky_relu(self.a(x), 0.2)
        return torch.clamp(y, min=-0.5, max=0.5)


class Shapes(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(12, 12)

    def forward(self, x):
        y = x.reshape(-1, 3, 4).transpose(1, 2).reshape(-1, 12)
        z = torch.cat([y, (x - 0.25) / 2.0], dim=1)
        z = z.unsqueeze(1).squeeze(1)
        return torch.cat([self.a(y) * y, z], dim=1).reshape(-1)


class MatMulAdd(torch.nn.Module):
    def __init__(self):
        super().__init__()
        g = torch.Generator().manual_seed(3)
        self.w = torch.nn.Parameter(torch.randn(12, 7, generator=g))
        self.b = torch.nn.Parameter(torch.randn(7, generator=g))

    def forward(self, x):
        return torch.matmul(x, self.w) + self.b


class ViewGelu(torch.nn.Module):
    """x.view(x.size(0), -1) with a dynamic batch: Shape, Gather, Unsqueeze, Concat, Reshape."""

    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(12, 10)
        self.b = torch.nn.Linear(10, 5)

    def forward(self, x):
        h = x.view(x.size(0), -1)
        return self.b(torch.nn.functional.gelu(self.a(h)))


class Norms(torch.nn.Module):
    """BatchNorm1d with running statistics, LayerNorm, SiLU, Hardswish, softmax."""

    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(12, 10)
        self.bn = torch.nn.BatchNorm1d(10)
        self.ln = torch.nn.LayerNorm(10)
        self.b = torch.nn.Linear(10, 6)
        g = torch.Generator().manual_seed(7)
        with torch.no_grad():
            self.bn.running_mean.copy_(torch.randn(10, generator=g) * 0.3)
            self.bn.running_var.copy_(torch.rand(10, generator=g) + 0.5)
            self.bn.weight.copy_(torch.rand(10, generator=g) + 0.5)
            self.bn.bias.copy_(torch.randn(10, generator=g) * 0.1)
            self.ln.weight.copy_(torch.rand(10, generator=g) + 0.5)
            self.ln.bias.copy_(torch.randn(10, generator=g) * 0.1)

    def forward(self, x):
        h = torch.nn.functional.silu(self.bn(self.a(x)))
        h = torch.nn.functional.hardswish(self.ln(h))
        return torch.softmax(self.b(h), dim=-1)


class Activations(torch.nn.Module):
    """The activation functions a deformer network might use, side by side."""

    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(12, 8)
        self.prelu = torch.nn.PReLU(num_parameters=1, init=0.2)
        self.b = torch.nn.Linear(8 * 11, 4)

    def forward(self, x):
        h = self.a(x)
        f = torch.nn.functional
        acts = [f.gelu(h, approximate="tanh"), f.softplus(h), f.selu(h), f.celu(h, 0.7),
                f.hardsigmoid(h), f.mish(h), f.softsign(h), f.logsigmoid(h), f.tanhshrink(h),
                f.relu6(3 * h), self.prelu(h)]
        return self.b(torch.cat(acts, dim=1))


class Math(torch.nn.Module):
    """Element-wise maths, reductions, normalize (ReduceL2 + Expand), std, log_softmax."""

    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(12, 6)

    def forward(self, x):
        h = self.a(x)
        u = h.pow(2) + torch.sqrt(h.abs()) + torch.exp(-h) + torch.log1p(h.abs())
        u = u + h.reciprocal().clamp(-2, 2) + torch.sin(h) * torch.cos(h) + torch.atan(h)
        u = u + torch.maximum(h, 0.5 * h) - torch.minimum(h, -h)
        m = h.mean(dim=1, keepdim=True) + h.sum(-1, keepdim=True)
        n = torch.nn.functional.normalize(h, dim=-1)
        s = (h - h.mean(1, keepdim=True)) / h.std(1, keepdim=True)
        return torch.cat([u + m, n, s, torch.log_softmax(h, dim=1)], dim=1)


class Indexing(torch.nn.Module):
    """expand / where / slicing / repeat / arange: ConstantOfShape, Equal, Where,
    Expand, Greater, Slice (steps), Tile, Range."""

    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(12, 8)
        self.register_buffer("z", torch.linspace(-1, 1, 8).reshape(1, 8))

    def forward(self, x):
        h = self.a(x)
        e = h + self.z.expand(x.size(0), 8)
        w = torch.where(h > 0, h, 0.1 * h)
        parts = [e, w, h[:, 1:5], h[:, ::3], h[:, -3:].repeat(1, 2),
                 h * torch.arange(h.size(1)).to(h.dtype)]
        return torch.cat(parts, dim=1)


class Parts(torch.nn.Module):
    """split / unbind (Split with several outputs), argmax, cumsum, constant pad."""

    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(12, 8)

    def forward(self, x):
        h = self.a(x)
        p, q, r = torch.split(h, [2, 4, 2], dim=1)
        cols = torch.unbind(h[:, :3], dim=1)
        s = torch.stack([cols[2], cols[0] * cols[1]], dim=1)
        k = h.argmax(dim=1, keepdim=True).to(h.dtype)
        c = torch.cumsum(q, dim=1)
        padded = torch.nn.functional.pad(r, (1, 2), value=0.5)
        return torch.cat([p * 2.0, c, s, k, padded], dim=1)


CASES = [("mlp_elu", MlpElu, 13), ("mlp_mixed", MlpMixed, 11), ("leaky_clamp", LeakyClamp, 12),
         ("shapes", Shapes, 13), ("matmul_add", MatMulAdd, 13), ("mlp_elu_opset9", MlpElu, 9),
         ("view_gelu", ViewGelu, 13), ("norms_opset11", Norms, 11), ("norms_opset17", Norms, 17),
         ("activations", Activations, 13), ("math", Math, 13), ("math_opset9", Math, 9),
         ("indexing", Indexing, 13), ("indexing_opset11", Indexing, 11),
         ("parts", Parts, 13), ("parts_opset11", Parts, 11)]
# Input shape per case (the rest take [4, 12]).
INPUT_SHAPES = {"view_gelu": (4, 3, 4)}


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    for name, cls, opset in CASES:
        torch.manual_seed(len(name))
        model = cls().eval()
        shape = INPUT_SHAPES.get(name, (4, 12))
        x = torch.from_numpy(np.random.default_rng(len(name)).uniform(-1.5, 1.5, shape)
                             .astype(np.float32))
        d = os.path.join(here, name)
        os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
        torch.onnx.export(model, x, os.path.join(d, "model.onnx"), input_names=["x"],
                          output_names=["y"], dynamic_axes={"x": {0: "batch"}},
                          opset_version=opset)
        with torch.no_grad():
            y = model(x).numpy()
        for fname, arr in (("input_0.pb", x.numpy()), ("output_0.pb", y)):
            with open(os.path.join(d, "test_data_set_0", fname), "wb") as f:
                f.write(tensor_proto(arr))
        print(name, "opset", opset, "output", y.shape)


if __name__ == "__main__":
    main()
