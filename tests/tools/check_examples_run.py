#!/usr/bin/python3
"""Runs `tenact run` on every example (once with --out, once with
--print-json) and compares the outputs with the NumPy references in
examples/NAME/expected/. Exact for integers and bool; floating outputs within
a tolerance scaled by the magnitudes NumPy's own reference involves. Then
runs each example on simulated GPUs (--engines sim:0,sim:1; cpu,sim:0; and
the two-GPU example platform) and requires the very same printed outputs as
on the CPU engine. A model example (docs/program-format.md, "Weights and
states") gets --weights NAME/weights when that folder exists and --repeat N
when NAME/repeat holds N: its reference is the output of the N-th run.

Usage: check_examples_run.py TENACT EXAMPLES_DIR
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np


def decode_json_tensor(t):
    dtype = {"bool": np.bool_, "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
             "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64, "f16": np.float16,
             "f32": np.float32, "f64": np.float64, "c64": np.complex64, "c128": np.complex128}[t["dtype"]]
    def num(v):
        if isinstance(v, list):
            return complex(num(v[0]), num(v[1]))
        if isinstance(v, str):
            return float(v)
        return v
    return np.array([num(v) for v in t["data"]], dtype=dtype).reshape(t["shape"])


def close(actual, expected, name):
    if actual.dtype != expected.dtype or actual.shape != expected.shape:
        return f"{name}: got {actual.dtype}{list(actual.shape)}, expected {expected.dtype}{list(expected.shape)}"
    if expected.dtype.kind in "biu":
        if not np.array_equal(actual, expected):
            return f"{name}: integer values differ"
        return None
    # Sums reassociate (docs/program-format.md): allow a few ulps of the largest
    # magnitude involved plus a relative bound.
    eps = np.finfo(expected.dtype).eps
    scale = max(1.0, float(np.max(np.abs(expected[np.isfinite(expected)]), initial=0.0)))
    ok = np.isclose(actual, expected, rtol=64 * eps, atol=64 * eps * scale, equal_nan=True)
    if not np.all(ok):
        worst = np.max(np.abs(actual.astype(np.complex128) - expected.astype(np.complex128)))
        return f"{name}: values differ (max abs difference {worst})"
    return None


def main():
    tenact, examples = sys.argv[1], sys.argv[2]
    failures = []
    names = sorted(d for d in os.listdir(examples) if os.path.isfile(os.path.join(examples, d, d + ".json")))
    for ex in names:
        d = os.path.join(examples, ex)
        args = [tenact, "run", os.path.join(d, ex + ".json")]
        for f in sorted(os.listdir(os.path.join(d, "inputs"))):
            args += ["--input", f"{os.path.splitext(f)[0]}={os.path.join(d, 'inputs', f)}"]
        # A model (weights or states): its weights folder, and the number of
        # runs the reference assumes (states persist across them).
        if os.path.isdir(os.path.join(d, "weights")):
            args += ["--weights", os.path.join(d, "weights")]
        if os.path.isfile(os.path.join(d, "repeat")):
            with open(os.path.join(d, "repeat")) as f:
                args += ["--repeat", f.read().strip()]
        expected = {os.path.splitext(f)[0]: np.load(os.path.join(d, "expected", f))
                    for f in os.listdir(os.path.join(d, "expected"))}
        with tempfile.TemporaryDirectory() as out:
            r = subprocess.run(args + ["--out", out], capture_output=True, text=True)
            if r.returncode != 0:
                failures.append(f"{ex}: --out exit {r.returncode}: {r.stderr.strip()}")
                continue
            for name, exp in expected.items():
                path = os.path.join(out, name + ".npy")
                if not os.path.exists(path):
                    failures.append(f"{ex}: --out wrote no {name}.npy")
                    continue
                msg = close(np.load(path), exp, f"{ex}/{name} (--out)")
                if msg:
                    failures.append(msg)
        r = subprocess.run(args + ["--print-json"], capture_output=True, text=True)
        if r.returncode != 0:
            failures.append(f"{ex}: --print-json exit {r.returncode}: {r.stderr.strip()}")
            continue
        printed = json.loads(r.stdout)["outputs"]
        for name, exp in expected.items():
            if name not in printed:
                failures.append(f"{ex}: --print-json lacks {name}")
                continue
            msg = close(decode_json_tensor(printed[name]), exp, f"{ex}/{name} (--print-json)")
            if msg:
                failures.append(msg)
        for engines in (["--engines", "sim:0,sim:1"], ["--engines", "cpu,sim:0"],
                        ["--engines", "sim:1,sim:0", "--platform",
                         os.path.join(examples, "platforms", "two_gpus.json")]):
            s = subprocess.run(args + ["--print-json"] + engines, capture_output=True, text=True)
            if s.returncode != 0:
                failures.append(f"{ex}: {' '.join(engines)} exit {s.returncode}: {s.stderr.strip()}")
            elif s.stdout != r.stdout:
                failures.append(f"{ex}: {' '.join(engines)} printed other outputs than --engines cpu")
        print(f"{ex}: {len(expected)} outputs checked, the same on simulated GPUs")
    for f in failures:
        print("FAIL", f)
    if not names:
        print("FAIL no examples found")
        sys.exit(1)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
