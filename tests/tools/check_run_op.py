#!/usr/bin/python3
"""`tenact run-op` against NumPy: every family of the built-in module
`tenact` run eagerly on the CPU engine and on a simulated device, each
result compared with a float64 NumPy evaluation of the format document's
formula (docs/program-format.md, "The built-in module"). The tolerance,
a few float32 ulps of the result plus the sum bound's share, is loose next
to the kernels' own tests (tests/extensions/), which assert the spec's
bound; here the point is that the command line runs every family end to
end, on both engines, and prints what the kernels computed.

Usage: check_run_op.py TENACT WORK_DIR
"""
import json
import math
import os
import subprocess
import sys

import numpy as np


def run_op(tenact, args):
    p = subprocess.run([tenact, "run-op"] + args + ["--print-json"], capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"run-op {' '.join(args)} exited {p.returncode}: {p.stderr}")
    out = json.loads(p.stdout)["outputs"]["y"]
    data = [float(v) for v in out["data"]]
    return np.array(data, dtype=np.float32).reshape(out["shape"])


def main():
    tenact, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(7)
    x = (rng.standard_normal((6, 33)) * 3).astype(np.float32)
    scale = (1 + rng.standard_normal(33) * 0.1).astype(np.float32)
    bias = (rng.standard_normal(33) * 0.1).astype(np.float32)
    files = {}
    for name, a in dict(x=x, scale=scale, bias=bias).items():
        files[name] = os.path.join(work, name + ".npy")
        np.save(files[name], a)
    x64 = x.astype(np.float64)
    erf = np.vectorize(math.erf)

    def softmax(a, axis):
        e = np.exp(a - a.max(axis=axis, keepdims=True))
        return e / e.sum(axis=axis, keepdims=True)

    def log_softmax(a, axis):
        m = a.max(axis=axis, keepdims=True)
        return a - m - np.log(np.exp(a - m).sum(axis=axis, keepdims=True))

    mean = x64.mean(axis=1, keepdims=True)
    var = ((x64 - mean) ** 2).mean(axis=1, keepdims=True)
    c = math.sqrt(2 / math.pi)
    cases = [
        ("softmax along axis 1", ["tenact.softmax", "--attr", "dimension=1", "--input", "x=" + files["x"]],
         softmax(x64, 1)),
        ("softmax along axis 0", ["tenact.softmax", "--attr", "dimension=0", "--input", "x=" + files["x"]],
         softmax(x64, 0)),
        ("log_softmax along axis 1", ["tenact.log_softmax", "--attr", "dimension=1", "--input", "x=" + files["x"]],
         log_softmax(x64, 1)),
        ("layer_norm with scale and bias",
         ["tenact.layer_norm", "--attr", "dimensions=[1]", "--input", "x=" + files["x"],
          "--input", "scale=" + files["scale"], "--input", "bias=" + files["bias"]],
         (x64 - mean) / np.sqrt(var + 1e-5) * scale + bias),
        ("rms_norm with scale and epsilon",
         ["tenact.rms_norm", "--attr", "dimensions=[1]", "--attr", "epsilon=1e-3", "--input", "x=" + files["x"],
          "--input", "scale=" + files["scale"]],
         x64 / np.sqrt((x64 * x64).mean(axis=1, keepdims=True) + 1e-3) * scale),
        ("gelu, erf form", ["tenact.gelu", "--input", "x=" + files["x"]], x64 * (1 + erf(x64 / math.sqrt(2))) / 2),
        ("gelu, tanh form", ["tenact.gelu", "--attr", "approximate=tanh", "--input", "x=" + files["x"]],
         x64 * (1 + np.tanh(c * (x64 + 0.044715 * x64 ** 3))) / 2),
    ]
    failures = []
    for engine in ("cpu", "sim:0"):
        for what, args, want in cases:
            got = run_op(tenact, args + ["--engine", engine]).astype(np.float64)
            if got.shape != want.shape:
                failures.append(f"{what} on {engine}: shape {got.shape}, expected {want.shape}")
                continue
            tol = 16 * np.finfo(np.float32).eps * np.maximum(np.abs(want), 1.0)
            worst = np.max(np.abs(got - want) - tol)
            if worst > 0:
                failures.append(f"{what} on {engine}: off by {np.max(np.abs(got - want))}")
    if failures:
        raise SystemExit("\n".join(failures))
    print(f"run-op matched NumPy in {2 * len(cases)} runs")


if __name__ == "__main__":
    main()
