#!/usr/bin/python3
"""The MLP training benchmark in PyTorch (CPU), the same network
and optimiser as charkit's train_mlp and bench/peer/mlp_numpy.py: 300 inputs,
2 x 128 ELU hidden layers, 128 linear outputs, MSE, Adam (torch.optim.Adam
with its defaults = the same constants), batches of 128 drawn with
replacement, float32.

Usage: mlp_torch.py [--iterations N] [--repeat R] [--threads T] [--onnx OUT.onnx]
Prints one JSON line per run. --onnx also exports the trained network
(input "x" [batch, 300]) for the inference comparison (bench/peer/mlp_ort.mjs).
"""
import argparse
import json
import time

import numpy as np
import torch

SAMPLES, FEATURES, HIDDEN, OUTPUTS, BATCH = 1000, 300, (128, 128), 128, 128


def problem(seed=2024):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-0.8, 0.8, (SAMPLES, FEATURES)).astype(np.float32)
    w = rng.normal(0, 0.1, (FEATURES, OUTPUTS)).astype(np.float32)
    return x, np.tanh(x @ w).astype(np.float32)


def build():
    layers, i = [], FEATURES
    for h in HIDDEN:
        layers += [torch.nn.Linear(i, h), torch.nn.ELU()]
        i = h
    layers.append(torch.nn.Linear(i, OUTPUTS))
    net = torch.nn.Sequential(*layers)
    for mod in net:
        if isinstance(mod, torch.nn.Linear):
            torch.nn.init.xavier_uniform_(mod.weight)
            torch.nn.init.zeros_(mod.bias)
    return net


def train(x, y, iterations, seed=777):
    torch.manual_seed(seed)
    mean, sd = x.mean(0), x.std(0)
    sd[sd < 1e-8] = 1
    xs = torch.from_numpy((x - mean) / sd)
    yt = torch.from_numpy(y)
    net = build()
    opt = torch.optim.Adam(net.parameters(), lr=1e-3, betas=(0.9, 0.999), eps=1e-8)
    loss_fn = torch.nn.MSELoss()
    gen = torch.Generator().manual_seed(seed)
    loss = None
    for _ in range(iterations):
        idx = torch.randint(0, SAMPLES, (BATCH,), generator=gen)
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(net(xs[idx]), yt[idx])
        loss.backward()
        opt.step()
    return net, float(loss)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iterations", type=int, default=5000)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--onnx", default="")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    x, y = problem()
    net = None
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        net, loss = train(x, y, args.iterations)
        print(json.dumps({"impl": "torch", "threads": args.threads,
                          "seconds": time.perf_counter() - t0, "loss": loss}), flush=True)
    if args.onnx:
        net.eval()
        torch.onnx.export(net, torch.zeros(1, FEATURES), args.onnx, input_names=["x"],
                          output_names=["y"], dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}},
                          opset_version=13)
        # Reference outputs for a correctness check of other runtimes.
        probe = torch.from_numpy(problem(7)[0][:4])
        with torch.no_grad():
            np.save(args.onnx + ".in.npy", probe.numpy())
            np.save(args.onnx + ".out.npy", net(probe).numpy())


if __name__ == "__main__":
    main()
