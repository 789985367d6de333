#!/usr/bin/env python3
"""tenact inspect on every example, checked against the program text itself.

For each examples/NAME/NAME.json with inputs/*.npy: `tenact inspect` (text)
and `--json` must exit 0; the JSON must list one instruction per op of the
program in order with the op's name, every output named as the program
names it, every instruction on the CPU engine's host storage, regions only
of elementwise ops (at least two, or one reading an absorbed broadcast;
plus splat constants and broadcast_in_dim ops), a 32-hex-digit key digest
equal in both forms and across runs, and retained bytes that add up. With a second
engine holding the first input, that input must enter there and move to the
engine reading it through a host_copy transfer.

Usage: check_examples_inspect.py TENACT EXAMPLES_DIR
"""
import json
import os
import re
import subprocess
import sys

# The elementwise ops of docs/program-format.md ("Elementwise, ...",
# compare, select, clamp, convert).
ELEMENTWISE = {"negate", "abs", "sign", "exponential", "log", "sine", "cosine", "tanh", "sqrt",
               "rsqrt", "exponential_minus_one", "log_plus_one", "conj", "floor", "ceil",
               "round_nearest_even", "round_nearest_afz", "logistic", "not", "add", "subtract",
               "multiply", "divide", "remainder", "maximum", "minimum", "power", "and", "or", "xor",
               "compare", "select", "clamp", "convert"}


def run(args):
    p = subprocess.run(args, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def main():
    tenact, examples = sys.argv[1], sys.argv[2]
    failures = []
    checked = 0
    for name in sorted(os.listdir(examples)):
        prog_path = os.path.join(examples, name, name + ".json")
        in_dir = os.path.join(examples, name, "inputs")
        if not os.path.isfile(prog_path):
            continue
        with open(prog_path) as f:
            prog = json.load(f)
        if prog.get("weights") or prog.get("states"):
            continue  # a model: `tenact plan` shows its plan (check_model_plan.py)
        input_args = []
        for inp in prog["inputs"]:
            input_args += ["--input", "%s=%s" % (inp["name"], os.path.join(in_dir, inp["name"] + ".npy"))]
        base = [tenact, "inspect", prog_path] + input_args

        def fail(msg):
            failures.append("%s: %s" % (name, msg))

        rc, text, err = run(base)
        if rc != 0:
            fail("text inspect exited %d: %s" % (rc, err))
            continue
        rc, js, err = run(base + ["--json"])
        if rc != 0:
            fail("json inspect exited %d: %s" % (rc, err))
            continue
        plan = json.loads(js)
        ops = prog["ops"]
        if len(plan["instructions"]) != len(ops):
            fail("%d instructions for %d ops" % (len(plan["instructions"]), len(ops)))
            continue
        for i, (ins, op) in enumerate(zip(plan["instructions"], ops)):
            outs = op["out"] if isinstance(op["out"], list) else [op["out"]]
            if ins["index"] != i or ins["op"] != op["op"] or ins["outputs"] != outs:
                fail("instruction %d is %s, program op is %s" % (i, ins, op))
            if ins["engine"] != "cpu" or ins["storage_class"] != "host":
                fail("instruction %d placed at %s/%s" % (i, ins["engine"], ins["storage_class"]))
        for region in plan["regions"]:
            absorbed = region["splat_constants"] + region["broadcasts"]
            compute = [i for i in region["instructions"] if i not in absorbed]
            if len(compute) < (1 if region["broadcasts"] else 2):
                fail("region %d has %d compute ops and %d broadcasts"
                     % (region["index"], len(compute), len(region["broadcasts"])))
            for i in compute:
                if ops[i]["op"] not in ELEMENTWISE:
                    fail("region %d holds %s" % (region["index"], ops[i]["op"]))
            for i in region["splat_constants"]:
                if ops[i]["op"] != "constant":
                    fail("region %d splat %d is %s" % (region["index"], i, ops[i]["op"]))
            for i in region["broadcasts"]:
                if ops[i]["op"] != "broadcast_in_dim":
                    fail("region %d broadcast %d is %s" % (region["index"], i, ops[i]["op"]))
            for i in region["instructions"]:
                if plan["instructions"][i]["region"] != region["index"]:
                    fail("instruction %d does not point back to region %d" % (i, region["index"]))
        if plan["transfers"]:
            fail("transfers on a single engine: %s" % plan["transfers"])
        digest = plan["key"]["digest"]
        if not re.fullmatch(r"[0-9a-f]{32}", digest):
            fail("digest %r" % digest)
        if ("key digest " + digest) not in text:
            fail("text and JSON digests differ")
        k = plan["key"]
        if k["key_bytes"] + k["root_bytes"] + k["entry_bytes"] != k["total_bytes"] or k["root_bytes"] <= 0:
            fail("retained bytes do not add up: %s" % k)
        if [o["name"] for o in plan["outputs"]] != prog["outputs"]:
            fail("outputs %s, program says %s" % (plan["outputs"], prog["outputs"]))
        rc, js2, _ = run(base + ["--json"])
        if rc != 0 or json.loads(js2)["key"]["digest"] != digest:
            fail("a second inspect gives another digest")

        # The first input lives on a second engine. Placed by cost, the ops
        # reading it run there (the CPU engines share the cores, so moving
        # it could only cost): it is never copied.
        first = prog["inputs"][0]["name"]
        rc, js4, err = run(base + ["--engines", "cpu,cpu:1", "--placement", first + "=cpu:1", "--json"])
        if rc != 0:
            fail("two-engine inspect exited %d: %s" % (rc, err))
            continue
        plan4 = json.loads(js4)
        if plan4["inputs"][0]["endpoint"] != "cpu:1/host":
            fail("input %s enters at %s" % (first, plan4["inputs"][0]["endpoint"]))
        if [t for t in plan4["transfers"] if t["value"] == first]:
            fail("placed by cost, input %s is copied: %s" % (first, plan4["transfers"]))
        if any(i["placement"]["policy"] != "earliest_finish" for i in plan4["instructions"]):
            fail("not every instruction placed by earliest_finish: %s" % plan4["instructions"])
        # By preference every op goes to the first engine: the input enters
        # where it lives and moves there.
        rc, js3, err = run(base + ["--engines", "cpu,cpu:1", "--placement", first + "=cpu:1", "--policy",
                                   "preference", "--json"])
        if rc != 0:
            fail("two-engine inspect exited %d: %s" % (rc, err))
            continue
        plan3 = json.loads(js3)
        if plan3["inputs"][0]["endpoint"] != "cpu:1/host":
            fail("input %s enters at %s" % (first, plan3["inputs"][0]["endpoint"]))
        moved = [t for t in plan3["transfers"] if t["value"] == first]
        readers = [i for i, op in enumerate(ops) if first in op.get("in", [])]
        if readers and (len(moved) != 1 or moved[0]["from"] != "cpu:1/host" or
                        moved[0]["to"] != "cpu/host" or moved[0]["provider"] != "host_copy"):
            fail("input %s transfers: %s" % (first, plan3["transfers"]))
        if plan3["key"]["digest"] == digest:
            fail("another placement gives the same key")
        checked += 1
    for f in failures:
        print("FAIL", f)
    print("%d examples inspected, %d failures" % (checked, len(failures)))
    return 1 if failures or checked < 10 else 0


if __name__ == "__main__":
    sys.exit(main())
