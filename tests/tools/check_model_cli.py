#!/usr/bin/python3
"""tenact plan and tenact run of models, against NumPy and hashlib.

1. `tenact plan` of examples/kv_cache_update --json: every state's resource
   holds its capacity (4096, 4096, 4 bytes) and each update's value shares
   it; the in-place providers resolve the updates; every resource id is the
   SHA-256 (hashlib) of kind NUL fingerprint NUL identity, as
   docs/design.md says; the text form lists the same ids.
2. `tenact run` of tests/tools/data/mlp_model.json with the example MLP's
   inputs as its weights folder, with --retain a1 --print-json, on the CPU
   engine and on a simulated device, with the identity and the panel
   materializer: y equals examples/mlp/expected/y.npy and the retained a1
   equals relu(x @ w1 + b1) computed here, within the sums' tolerance;
   --retain-all keeps every op result (z1 = x @ w1 + b1 checked).
3. `tenact plan --materializer tenact.pack_panels` stores w1 and w2 in the
   blocked panel layout (w2's 10 columns zero-filled to 16) and resolves
   both products to the packed-panel provider.

Usage: check_model_cli.py TENACT SOURCE_DIR
"""
import hashlib
import json
import os
import subprocess
import sys

import numpy as np

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


def run(args):
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode != 0:
        failures.append(f"{' '.join(args[1:3])}: exit {p.returncode}: {p.stderr.strip()}")
    return p.stdout


def decode(t):
    return np.array([float(v) for v in t["data"]], dtype=np.float32).reshape(t["shape"])


def resource_id(kind, fingerprint, identity):
    digest = hashlib.sha256(f"{kind}\0{fingerprint}\0{identity}".encode()).hexdigest()
    return f"resource/{kind}/sha256/{digest}"


def close(got, want, what):
    scale = max(1.0, float(np.max(np.abs(want))))
    check(got.shape == want.shape and np.allclose(got, want, rtol=1e-5, atol=64 * 1.2e-7 * scale), what)


def main():
    tenact, src = sys.argv[1], sys.argv[2]
    kv = os.path.join(src, "examples", "kv_cache_update", "kv_cache_update.json")
    spec = ["--input", "q=f32[1,16]", "--input", "k_new=f32[1,16]", "--input", "v_new=f32[1,16]"]
    plan = json.loads(run([tenact, "plan", kv] + spec + ["--json"]) or "{}")
    text = run([tenact, "plan", kv] + spec)
    fp = plan.get("family_fingerprint", "")
    resources = {r["id"]: r for r in plan.get("resources", [])}
    states = {r["holds"]: r for r in resources.values() if r["kind"] == "state"}
    for name, size in (("k_cache", 4096), ("v_cache", 4096), ("step", 4)):
        r = states.get("state " + name)
        check(r is not None and r["bytes"] == size, f"state {name} has a resource of {size} bytes")
        check(r is not None and r["id"] == resource_id("state", fp, name), f"state {name}'s id is its SHA-256")
    values = {v["name"]: v for v in plan.get("values", [])}
    for update, state in (("k_next", "k_cache"), ("v_next", "v_cache"), ("step_next", "step")):
        check(values[update]["storage"]["kind"] == "aliased"
              and values[update]["storage"]["places"] == values[state]["storage"]["places"],
              f"{update} shares {state}'s storage")
    nodes = {n["node"]: n for n in plan.get("nodes", [])}
    for update in ("k_next", "v_next", "step_next"):
        check(nodes[update]["provider"] == "cpu/dynamic_update_slice.in_place", f"{update} resolves in place")
    for r in resources.values():
        if r["kind"] == "activation-arena":
            check(r["id"] == resource_id("activation-arena", fp, r["endpoint"]), "the arena's id is its SHA-256")
        if r["kind"] == "activation":
            name = r["holds"].removeprefix("value ")
            check(r["id"] == resource_id("activation", fp, name), f"activation {name}'s id is its SHA-256")
        check(r["id"] in text, f"the text plan lists {r['id']}")

    mlp = os.path.join(src, "examples", "mlp")
    model = os.path.join(src, "tests", "tools", "data", "mlp_model.json")
    x, w1, b1 = (np.load(os.path.join(mlp, "inputs", n + ".npy")) for n in ("x", "w1", "b1"))
    a1 = np.maximum(x.astype(np.float64) @ w1 + b1, 0).astype(np.float32)
    y = np.load(os.path.join(mlp, "expected", "y.npy"))
    for extra in ([], ["--engines", "sim:0"], ["--materializer", "tenact.pack_panels"]):
        out = run([tenact, "run", model, "--weights", os.path.join(mlp, "inputs"),
                   "--input", "x=" + os.path.join(mlp, "inputs", "x.npy"),
                   "--retain", "a1", "--print-json"] + extra)
        printed = json.loads(out or "{}")
        close(decode(printed["outputs"]["y"]), y, f"y {' '.join(extra)}")
        close(decode(printed["retained"]["a1"]), a1, f"retained a1 {' '.join(extra)}")

    everything = json.loads(run([tenact, "run", model, "--weights", os.path.join(mlp, "inputs"), "--input",
                                 "x=" + os.path.join(mlp, "inputs", "x.npy"), "--retain-all", "--print-json"]) or "{}")
    check(sorted(everything.get("retained", {})) == sorted(["h1", "b1_rows", "z1", "zero", "a1", "h2", "b2_rows", "y"]),
          f"--retain-all keeps every op result, got {sorted(everything.get('retained', {}))}")
    close(decode(everything["retained"]["z1"]), (x.astype(np.float64) @ w1 + b1).astype(np.float32), "retained z1")

    packed = json.loads(run([tenact, "plan", model, "--input", "x=f32[4,16]", "--materializer",
                             "tenact.pack_panels", "--json"]) or "{}")
    tensors = {v["name"]: v["tensor"] for v in packed.get("values", [])}
    check(tensors.get("w1") == "f32[16, 32] blocked{block=[1, 16], axis_order=[1, 0]}", f"w1 is {tensors.get('w1')}")
    check(tensors.get("w2") == "f32[32, 10] blocked{block=[1, 16], axis_order=[1, 0], zero_fill=[16, 32]}",
          f"w2 is {tensors.get('w2')}")
    providers = [n["provider"] for n in packed.get("nodes", []) if n["node"] in ("h1", "h2")]
    check(providers == ["cpu/dot_general.packed_panels"] * 2, f"the products resolve to {providers}")

    for f in failures:
        print("FAIL", f)
    print(f"{len(failures)} failures")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
