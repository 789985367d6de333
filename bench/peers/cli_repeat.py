#!/usr/bin/python3
"""The command line's repeat loop against Runtime::run_sync, same programs and inputs, one run.

    cmake --build build --target tenact peer_tenact && python3 bench/peers/cli_repeat.py [--passes N] [--runs N]

For each workload (small_1000: the 5-op program on f32[1000]; mlp_b4: the
mlp example's program with a batch of 4), `peer_tenact --dump` writes the
program and its inputs as files. Each pass then runs, in alternating order,
(a) `tenact run program.json --input ... --repeat RUNS --stats-json FILE`:
the per-run wall times the command prints (run_makespans_ns), and (b) the
same program on the same inputs through Runtime::run_sync in one
long-lived `peer_tenact --serve` (RUNS timed calls after an untimed one).
A side's figure in a pass is the median of its runs, the command line's
first 10 runs left out (the first one prepares). The ratio is
command line / run_sync per pass; the table gives the median over passes
and the range. Issue 17's target: <= 1.2. Both sides use the same engine
thread count. No third-party module is needed.

Exit status: 0, 1 when a command fails or prints no figures, 2 on a bad
command line.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

from peer_process import PeerProcess

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WORKLOADS = ["small_1000", "mlp_b4"]
TARGET = 1.2
SKIP = 10


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--tenact", default=os.path.join(REPO, "build", "tools", "tenact"))
    p.add_argument("--peer", default=os.path.join(REPO, "build", "bench", "peers", "peer_tenact"))
    p.add_argument("--passes", type=int, default=5)
    p.add_argument("--runs", type=int, default=20000, help="runs per side and pass (default 20000)")
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    a = p.parse_args()
    if a.passes < 1 or a.runs <= SKIP or a.threads < 1:
        p.error("--passes and --threads take positive integers, --runs more than %d" % SKIP)
    for path in (a.tenact, a.peer):
        if not os.access(path, os.X_OK):
            sys.exit("cli_repeat: no executable at %s (build it: cmake --build build --target tenact peer_tenact)"
                     % path)
    return a


def cli_run_times(args, directory, program_inputs):
    stats = os.path.join(directory, "stats.json")
    cmd = [args.tenact, "run", os.path.join(directory, "program.json"), "--repeat", str(args.runs),
           "--threads", str(args.threads), "--stats-json", stats]
    for name in program_inputs:
        cmd += ["--input", "%s=%s" % (name, os.path.join(directory, name + ".npy"))]
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        print(done.stderr, file=sys.stderr)
        sys.exit("cli_repeat: tenact run failed (exit status %d)" % done.returncode)
    with open(stats) as f:
        times = json.load(f)["run_makespans_ns"][SKIP:]
    if not times:
        sys.exit("cli_repeat: tenact run printed no run times")
    return [t * 1e-9 for t in times]


class Peer:
    def __init__(self, args):
        self.peer = PeerProcess(args.peer, args.threads, "cli_repeat")

    def run(self, name, runs):
        msg = self.peer.run(name, runs)
        if msg.get("check") != "ok":
            sys.exit("cli_repeat: peer_tenact's result check for %s: %s" % (name, msg.get("check")))
        return msg["times_s"]

    def close(self):
        self.peer.close()


def fmt_us(seconds):
    return "%.2f us" % (seconds * 1e6)


def main():
    args = parse_args()
    peer = Peer(args)
    with tempfile.TemporaryDirectory(prefix="tenact-cli-repeat-") as tmp:
        inputs = {}
        for name in WORKLOADS:
            directory = os.path.join(tmp, name)
            os.mkdir(directory)
            subprocess.run([args.peer, "--dump", name, directory], check=True)
            with open(os.path.join(directory, "program.json")) as f:
                inputs[name] = [i["name"] for i in json.load(f)["inputs"]]
        results = {name: {"cli": [], "sync": [], "ratio": []} for name in WORKLOADS}
        for p in range(args.passes):
            for name in WORKLOADS:
                directory = os.path.join(tmp, name)
                order = ["cli", "sync"] if p % 2 == 0 else ["sync", "cli"]
                figure = {}
                for side in order:
                    times = (cli_run_times(args, directory, inputs[name]) if side == "cli"
                             else peer.run(name, args.runs))
                    figure[side] = statistics.median(times)
                r = results[name]
                r["cli"].append(figure["cli"])
                r["sync"].append(figure["sync"])
                r["ratio"].append(figure["cli"] / figure["sync"])
            print("pass %d/%d done" % (p + 1, args.passes), file=sys.stderr)
    peer.close()
    print("engine threads: %d; %d runs per side and pass; figure: median per-run time, median over %d passes"
          % (args.threads, args.runs, args.passes))
    print("%-12s %-14s %-14s %-7s %-13s %s" % ("workload", "tenact run", "run_sync", "ratio", "range",
                                             "target"))
    for name in WORKLOADS:
        r = results[name]
        ratio = statistics.median(r["ratio"])
        print("%-12s %-14s %-14s %-7.3f %-13s <= %.1f %s" % (
            name, fmt_us(statistics.median(r["cli"])), fmt_us(statistics.median(r["sync"])), ratio,
            "%.2f - %.2f" % (min(r["ratio"]), max(r["ratio"])), TARGET, "PASS" if ratio <= TARGET else "MISS"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
