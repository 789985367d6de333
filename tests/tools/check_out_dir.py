#!/usr/bin/python3
"""`tenact run --out DIR` never writes outside DIR: outputs whose names hold
'/', '..', a leading '/', '.', spaces, '%' and non-ASCII land as escaped
files inside DIR (the escaping documented in `tenact run --help`, computed
here independently), a symbolic link planted in DIR is replaced and its
target untouched, values match NumPy, and a failed run leaves no file.

Usage: check_out_dir.py TENACT WORK_DIR
"""
import json
import os
import shutil
import subprocess
import sys

import numpy as np

SAFE = set(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.")


def escaped(name):
    out = []
    for i, byte in enumerate(name.encode("utf-8")):
        if byte in SAFE and not (i == 0 and byte == ord(".")):
            out.append(chr(byte))
        else:
            out.append("%%%02X" % byte)
    return "".join(out)


def run(tenact, *args):
    return subprocess.run([tenact, *args], capture_output=True, text=True)


def main():
    tenact, work = sys.argv[1], sys.argv[2]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    failures = []

    # One op per hostile name: y_k = x * (k + 1).
    names = ["layer1/w", "../../x", "/abs", ".", "..", "a b", "%", "grüße", "權重", "y"]
    ops, consts = [], []
    for k, name in enumerate(names):
        consts.append({"op": "constant", "out": f"c{k}", "dtype": "f32", "shape": [3], "value": k + 1})
        ops.append({"op": "multiply", "in": ["x", f"c{k}"], "out": name})
    program = {"format": "tenact.program/1", "name": "hostile",
               "inputs": [{"name": "x", "dtype": "f32", "shape": [3]}],
               "ops": consts + ops, "outputs": names + ["y"]}  # "y" twice: written once
    program_path = os.path.join(work, "hostile.json")
    with open(program_path, "w", encoding="utf-8") as f:
        json.dump(program, f, ensure_ascii=False)
    x = np.array([1.5, -2.0, 0.25], dtype=np.float32)
    x_path = os.path.join(work, "x.npy")
    np.save(x_path, x)

    out = os.path.join(work, "out", "nested")
    os.makedirs(out)
    victim = os.path.join(work, "victim.txt")
    with open(victim, "w") as f:
        f.write("precious")
    os.symlink(victim, os.path.join(out, "y.npy"))
    before = sorted(os.listdir(work))

    r = run(tenact, "run", program_path, "--input", f"x={x_path}", "--out", out)
    if r.returncode != 0:
        failures.append(f"run exited {r.returncode}: {r.stderr}")
    expected_files = sorted(escaped(n) + ".npy" for n in names)
    got = sorted(os.listdir(out))
    if got != expected_files:
        failures.append(f"files in DIR: {got}, expected {expected_files}")
    if sorted(os.listdir(work)) != before:
        failures.append(f"the work folder changed: {sorted(os.listdir(work))} vs {before}")
    with open(victim) as f:
        if f.read() != "precious":
            failures.append("the symbolic link's target was written")
    if os.path.islink(os.path.join(out, "y.npy")):
        failures.append("y.npy is still a symbolic link")
    for k, name in enumerate(names):
        path = os.path.join(out, escaped(name) + ".npy")
        if not os.path.isfile(path):
            continue
        value = np.load(path)
        expect = x * np.float32(k + 1)
        if value.dtype != np.float32 or not np.array_equal(value, expect):
            failures.append(f"{name}: {value!r}, expected {expect!r}")
    for root, _, files in os.walk(os.path.join(work, "out")):
        for f in files:
            if f.startswith(".") or "tmp" in f:
                failures.append(f"temporary left: {os.path.join(root, f)}")

    # A name too long for a file name fails the run; nothing is written.
    long_program = dict(program)
    long_program["ops"] = consts[:1] + [{"op": "multiply", "in": ["x", "c0"], "out": "ok"},
                                        {"op": "multiply", "in": ["x", "c0"], "out": "/" * 100}]
    long_program["outputs"] = ["ok", "/" * 100]
    long_path = os.path.join(work, "long.json")
    with open(long_path, "w") as f:
        json.dump(long_program, f)
    fresh = os.path.join(work, "fresh")
    r = run(tenact, "run", long_path, "--input", f"x={x_path}", "--out", fresh)
    if r.returncode != 1 or "needs a file name of 304 bytes" not in r.stderr:
        failures.append(f"a too long name: exit {r.returncode}, {r.stderr!r}")
    if os.path.isdir(fresh) and os.listdir(fresh):
        failures.append(f"a failed run left files: {os.listdir(fresh)}")

    for f in failures:
        print("FAIL:", f)
    print(f"{len(names)} hostile names, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
