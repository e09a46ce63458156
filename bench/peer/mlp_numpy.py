#!/usr/bin/python3
"""The MLP training benchmark in numpy, the same algorithm as
charkit's train_mlp (src/charkit/deformer/mlp.cpp): Glorot-uniform weights, zero
biases, per-feature standardisation, ELU hidden layers, linear output,
mean-squared error, Adam (lr 1e-3, b1 0.9, b2 0.999, eps 1e-8), batches of
128 rows drawn with replacement. float32 throughout, as charkit.

Usage: mlp_numpy.py [--iterations N] [--repeat R]
Prints one JSON line per run: {"impl": "numpy", "seconds": ..., "loss": ...}.
Threads: set OPENBLAS_NUM_THREADS (1 or 2) before starting Python.
"""
import argparse
import json
import time

import numpy as np

SAMPLES, FEATURES, HIDDEN, OUTPUTS, BATCH = 1000, 300, (128, 128), 128, 128


def problem(seed=2024):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-0.8, 0.8, (SAMPLES, FEATURES)).astype(np.float32)
    w = rng.normal(0, 0.1, (FEATURES, OUTPUTS)).astype(np.float32)
    y = np.tanh(x @ w).astype(np.float32)
    return x, y


def train(x, y, iterations, seed=777):
    rng = np.random.default_rng(seed)
    sizes = (FEATURES,) + HIDDEN + (OUTPUTS,)
    ws, bs = [], []
    for i, o in zip(sizes[:-1], sizes[1:]):
        a = np.sqrt(6.0 / (i + o))
        ws.append(rng.uniform(-a, a, (i, o)).astype(np.float32))
        bs.append(np.zeros(o, np.float32))
    mean = x.mean(0)
    sd = x.std(0)
    sd[sd < 1e-8] = 1
    xs = ((x - mean) / sd).astype(np.float32)
    params = ws + bs
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    lr, b1, b2, eps = np.float32(1e-3), np.float32(0.9), np.float32(0.999), np.float32(1e-8)
    n = len(ws)
    loss = 0.0
    for t in range(1, iterations + 1):
        idx = rng.integers(0, SAMPLES, BATCH)
        a = xs[idx]
        yb = y[idx]
        zs, acts = [], [a]
        for l in range(n):
            z = acts[-1] @ ws[l] + bs[l]
            zs.append(z)
            acts.append(np.where(z > 0, z, np.expm1(np.minimum(z, 0))) if l + 1 < n else z)
        diff = acts[-1] - yb
        loss = float(np.mean(diff * diff))
        da = diff * np.float32(2.0 / diff.size)
        gw, gb = [None] * n, [None] * n
        for l in range(n - 1, -1, -1):
            dz = da if l + 1 == n else da * np.where(zs[l] > 0, np.float32(1), acts[l + 1] + 1)
            gw[l] = acts[l].T @ dz
            gb[l] = dz.sum(0)
            if l > 0:
                da = dz @ ws[l].T
        grads = gw + gb
        c1 = np.float32(1 - b1 ** t)
        c2 = np.float32(1 - b2 ** t)
        for p, g, mi, vi in zip(params, grads, m, v):
            mi *= b1
            mi += (1 - b1) * g
            vi *= b2
            vi += (1 - b2) * g * g
            p -= lr * (mi / c1) / (np.sqrt(vi / c2) + eps)
    return loss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iterations", type=int, default=5000)
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    x, y = problem()
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        loss = train(x, y, args.iterations)
        print(json.dumps({"impl": "numpy", "seconds": time.perf_counter() - t0, "loss": loss}),
              flush=True)


if __name__ == "__main__":
    main()
