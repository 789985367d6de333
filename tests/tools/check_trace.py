#!/usr/bin/env python3
"""`tenact run --trace` writes a Chrome trace-event file Perfetto's JSON importer accepts.

Checks the schema Perfetto's legacy JSON importer reads (the Trace Event
Format): a top-level object with a "traceEvents" list; every event has a
string "name", a "ph" among the phases we emit (X complete, i instant, C
counter, M metadata), integer "pid" and "tid"; X events have numeric "ts"
>= 0 and "dur" >= 0; i events have "ts" and a scope "s" in t/p/g; C events
have "ts" and numeric args; M events are "thread_name" with args.name;
every track used is named (counters belong to the process, not a track).
Then checks the content: with --repeat 3 one production and a miss, then
hits; op spans on an engine thread track for every run; the prepare cache
track exists; the counter "runs in flight cpu" goes 1, 0 for each run.

Usage: check_trace.py TENACT EXAMPLES_DIR OUT_DIR
"""
import json
import os
import subprocess
import sys


def main():
    tenact, examples, out_dir = sys.argv[1:4]
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, "attention_trace.json")
    prog = os.path.join(examples, "attention", "attention.json")
    with open(prog) as f:
        inputs = [i["name"] for i in json.load(f)["inputs"]]
    args = [tenact, "run", prog, "--repeat", "3", "--trace", path]
    for name in inputs:
        args += ["--input", "%s=%s" % (name, os.path.join(examples, "attention", "inputs", name + ".npy"))]
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode != 0:
        print("tenact run failed:", p.stderr)
        return 1
    with open(path) as f:
        doc = json.load(f)
    errors = []
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        print("no traceEvents list")
        return 1
    named, used = {}, set()
    for e in doc["traceEvents"]:
        if not isinstance(e.get("name"), str) or e.get("ph") not in ("X", "i", "C", "M"):
            errors.append("bad event %s" % e)
            continue
        if not isinstance(e.get("pid"), int) or not isinstance(e.get("tid"), int):
            errors.append("pid/tid not integers: %s" % e)
            continue
        if e["ph"] == "M":
            if e["name"] != "thread_name" or not isinstance(e.get("args", {}).get("name"), str):
                errors.append("bad metadata %s" % e)
            named[e["tid"]] = e["args"]["name"]
            continue
        if e["ph"] == "C":
            args = e.get("args")
            if (not isinstance(e.get("ts"), (int, float)) or e["ts"] < 0 or not isinstance(args, dict) or not args
                    or not all(isinstance(v, (int, float)) for v in args.values())):
                errors.append("bad counter %s" % e)
            continue
        used.add(e["tid"])
        if not isinstance(e.get("ts"), (int, float)) or e["ts"] < 0:
            errors.append("bad ts %s" % e)
        if e["ph"] == "X" and (not isinstance(e.get("dur"), (int, float)) or e["dur"] < 0):
            errors.append("bad dur %s" % e)
        if e["ph"] == "i" and e.get("s") not in ("t", "p", "g"):
            errors.append("bad instant scope %s" % e)
    for tid in used - set(named):
        errors.append("track %d has no thread_name" % tid)
    events = [e for e in doc["traceEvents"] if e["ph"] != "M"]
    cache = [e for e in events if named.get(e["tid"]) == "prepare cache"]
    misses = [e for e in cache if e["name"].startswith("miss")]
    hits = [e for e in cache if e["name"].startswith("hit")]
    productions = [e for e in events if e["name"].startswith("production")]
    ops = [e for e in events if e.get("cat") == "op" and named.get(e["tid"], "").startswith("engine cpu / thread")]
    runs = {e.get("args", {}).get("run") for e in ops}
    if len(misses) != 1 or len(productions) != 1 or len(hits) != 2:
        errors.append("cache events: %d misses, %d productions, %d hits (want 1, 1, 2)" % (len(misses), len(productions), len(hits)))
    if len(runs) != 3 or not ops:
        errors.append("op spans of %d runs (want 3)" % len(runs))
    depth = [e["args"]["runs in flight"] for e in events if e["ph"] == "C" and e["name"] == "runs in flight cpu"]
    if depth != [1, 0, 1, 0, 1, 0]:
        errors.append("runs in flight cpu: %s (want 1, 0 three times)" % depth)
    for e in errors:
        print("FAIL", e)
    print("%d events, %d tracks, %d op spans" % (len(events), len(named), len(ops)))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
