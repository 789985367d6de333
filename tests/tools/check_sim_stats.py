#!/usr/bin/env python3
"""`tenact run --engines sim:0,sim:1 --stats-json F --trace T` on simulated devices.

Runs the mlp example twice over the same platform (two default devices),
with w1 placed on sim:1 and every op placed by preference on sim:0 (--policy
preference) so a value crosses the peer link, --repeat 2 each,
and checks: the stats file's schema ("engines" with both devices, their ops
adding up to the program's ops per run, their runs, queue depth and
utilisation, "transfers", "makespan_ns" equal to
the last of "run_makespans_ns", one makespan per run, "virtual_time" true);
that both invocations report the same virtual makespans (a function of the
program, platform and seed); and that the trace draws the devices' kernels
on "(virtual time)" stream tracks and the peer copy on a "(virtual time)"
transfer track.

Usage: check_sim_stats.py TENACT EXAMPLES_DIR OUT_DIR
"""
import json
import os
import subprocess
import sys


def run(tenact, examples, out_dir, tag):
    prog = os.path.join(examples, "mlp", "mlp.json")
    with open(prog) as f:
        program = json.load(f)
    stats = os.path.join(out_dir, "sim_stats_%s.json" % tag)
    trace = os.path.join(out_dir, "sim_trace_%s.json" % tag)
    args = [tenact, "run", prog, "--engines", "sim:0,sim:1", "--placement", "w1=sim:1", "--policy", "preference",
            "--repeat", "2",
            "--stats-json", stats, "--trace", trace]
    for i in program["inputs"]:
        args += ["--input", "%s=%s" % (i["name"], os.path.join(examples, "mlp", "inputs", i["name"] + ".npy"))]
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit("tenact run failed: " + p.stderr)
    with open(stats) as f:
        s = json.load(f)
    with open(trace) as f:
        t = json.load(f)
    return program, s, t


def main():
    tenact, examples, out_dir = sys.argv[1:4]
    os.makedirs(out_dir, exist_ok=True)
    program, first, trace = run(tenact, examples, out_dir, "a")
    _, second, _ = run(tenact, examples, out_dir, "b")
    errors = []
    engines = first.get("engines", {})
    if set(engines) != {"sim:0", "sim:1"}:
        errors.append("engines %s (want sim:0 and sim:1)" % sorted(engines))
    ops = sum(e.get("ops", 0) for e in engines.values())
    if ops != 2 * len(program["ops"]):
        errors.append("the devices ran %d ops over 2 runs of %d ops" % (ops, len(program["ops"])))
    if not all(e.get("virtual") is True for e in engines.values()):
        errors.append("a device's figures are not virtual: %s" % engines)
    # By preference every op runs on sim:0 (w1 only leaves sim:1), one run
    # at a time: sim:0 has 2 runs, a queue depth of 1, never waiting, and
    # its lanes' share of busy time is a fraction; sim:1 runs nothing.
    want = {"sim:0": (2, 1, 0), "sim:1": (0, 0, 0)}
    for name, e in engines.items():
        got = (e.get("runs"), e.get("max_queue_depth"), e.get("waited"))
        if got != want.get(name):
            errors.append("%s: runs, max_queue_depth, waited %s (want %s)" % (name, got, want.get(name)))
        u = e.get("utilisation")
        if not isinstance(u, (int, float)) or not ((0 < u <= 1) if name == "sim:0" else u == 0):
            errors.append("%s: utilisation %s" % (name, u))
    runs = first.get("run_makespans_ns")
    if not isinstance(runs, list) or len(runs) != 2 or not all(isinstance(m, int) and m > 0 for m in runs):
        errors.append("run_makespans_ns %s (want 2 positive integers)" % runs)
    elif first.get("makespan_ns") != runs[-1]:
        errors.append("makespan_ns %s is not the last run's %s" % (first.get("makespan_ns"), runs[-1]))
    if first.get("virtual_time") is not True:
        errors.append("virtual_time is %s" % first.get("virtual_time"))
    if not any(l.get("from") == "sim:1" and l.get("to") == "sim:0" and l.get("copies", 0) >= 2
               for l in first.get("transfers", [])):
        errors.append("no peer copies sim:1 -> sim:0 in %s" % first.get("transfers"))
    if second.get("run_makespans_ns") != runs:
        errors.append("makespans differ between invocations: %s vs %s" % (runs, second.get("run_makespans_ns")))
    names = {e["tid"]: e["args"]["name"] for e in trace["traceEvents"] if e["ph"] == "M"}
    spans = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    stream_spans = [e for e in spans if e.get("cat") == "op" and names.get(e["tid"], "").endswith("(virtual time)")
                    and "/ stream " in names.get(e["tid"], "")]
    copy_spans = [e for e in spans if e.get("cat") == "transfer" and
                  names.get(e["tid"], "") == "transfer sim:1/device -> sim:0/device (virtual time)"]
    if not stream_spans:
        errors.append("no kernel spans on virtual-time stream tracks (tracks: %s)" % sorted(set(names.values())))
    if len(copy_spans) != 2:
        errors.append("%d peer copy spans on the virtual-time transfer track (want 2; tracks: %s)"
                      % (len(copy_spans), sorted(set(names.values()))))
    for e in errors:
        print("FAIL", e)
    print("makespans %s, %d kernel spans, %d copy spans" % (runs, len(stream_spans), len(copy_spans)))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
