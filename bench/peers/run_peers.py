#!/usr/bin/python3
"""Tenact against NumPy and PyTorch on the same workloads, interleaved in one run.

    cmake --build build --target peer_tenact && /usr/bin/python3 bench/peers/run_peers.py [--quick]

Run it with Debian's /usr/bin/python3 (python3-numpy, and python3-torch when
installed; torch is skipped, with the reason printed, when it does not
import). Tenact runs in one long-lived `peer_tenact --serve` process that
times its own calls (Runtime::run_sync, the prepare-cache hit included), so
neither its process start nor its data set-up is in the figures. Each pass
runs every workload through every side back to back, the first side
rotating from pass to pass (pass 1: tenact, numpy, torch; pass 2: numpy,
torch, tenact; ...). A side's figure in a pass is the median of its timed
calls (after one untimed warm-up call); the pass's ratio is
peer / Tenact (> 1: Tenact is faster). The table gives, per workload and
peer, the median over passes of each side's figure, the median of the
per-pass ratios and their range (min-max). bench/README.md, "peers".

Exit status: 0, 1 when peer_tenact fails or finds a wrong result (or a
peer's sanity check fails), 2 on a bad command line.
"""
import argparse
import os
import statistics
import sys
import time

from peer_process import PeerProcess

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# name: (reps per side and pass: full, quick)
WORKLOADS = {
    "gemm_f32_512": (10, 5),
    "gemm_f32_1024": (5, 3),
    "gemm_f32_2048": (3, 2),
    "gemm_f64_512": (10, 5),
    "gemm_f64_1024": (5, 3),
    "gemm_f64_2048": (3, 2),
    "chain_16m": (5, 3),
    "transpose_4096": (5, 3),
    "reduce_16m": (10, 5),
    "small_1000": (2000, 300),
    "mlp_b4": (2000, 300),
    "nodes_10k": (10, 3),
    "nodes_10k_fused": (10, 3),
}
NODES = {"nodes_10k": 10000, "nodes_10k_fused": 10000}
DESCRIPTION = {
    "chain_16m": "tanh(a*b+c)*0.5+a, 16M f32",
    "transpose_4096": "f32 4096x4096, materialized",
    "reduce_16m": "sum of f32[16M]",
    "small_1000": "5 ops on f32[1000]",
    "mlp_b4": "2 dots, bias, relu; B=4",
    "nodes_10k": "10,000 scalar adds, per node; Tenact: one node each",
    "nodes_10k_fused": "the same; Tenact: fusion on (default)",
}


def describe(name):
    if name.startswith("gemm_"):
        _, dt, n = name.split("_")
        return "%s [%s,%s] x [%s,%s]" % (dt, n, n, n, n)
    return DESCRIPTION.get(name, "")


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("tenact", nargs="?", default=os.path.join(REPO, "build", "bench", "peers", "peer_tenact"),
                   help="path of peer_tenact (default: build/bench/peers/peer_tenact under the repository root)")
    p.add_argument("--passes", type=int, default=5, help="passes (default 5)")
    p.add_argument("--quick", action="store_true", help="fewer calls per pass: under 2 minutes on 2 cores")
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                   help="threads for Tenact's engine and every peer (default: all cores)")
    p.add_argument("--only", default="", help="comma-separated workloads (default: all): " + ", ".join(WORKLOADS))
    p.add_argument("--settle", type=float, default=0.1,
                   help="seconds of pause before each side's calls, so that the last side's idle threads "
                        "(OpenBLAS spins for a while after a gemm) are asleep (default 0.1)")
    p.add_argument("--no-torch", action="store_true", help="skip PyTorch")
    a = p.parse_args()
    if a.passes < 1 or a.threads < 1:
        p.error("--passes and --threads take positive integers")
    a.only = [w for w in a.only.split(",") if w] or list(WORKLOADS)
    for w in a.only:
        if w not in WORKLOADS:
            p.error("unknown workload %r (known: %s)" % (w, ", ".join(WORKLOADS)))
    return a


ARGS = parse_args()
# OpenBLAS reads its thread count when it is loaded: set it before NumPy
# (and torch) import it, and for peer_tenact (whose engine also sets it).
os.environ["OPENBLAS_NUM_THREADS"] = str(ARGS.threads)
os.environ.setdefault("OMP_NUM_THREADS", str(ARGS.threads))

import numpy as np  # noqa: E402


def loaded_blas():
    """The BLAS shared objects this process has mapped (what NumPy calls)."""
    libs = set()
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.split()[-1] if len(line.split()) >= 6 else ""
                if "blas" in os.path.basename(path).lower():
                    libs.add(os.path.realpath(path))
    except OSError:
        pass
    return sorted(libs)


# -- the workloads' data, as peer_tenact makes it (same shapes, dtypes, ranges) --

def uniform(shape, lo, hi, seed, dtype):
    """Uniform in [lo, hi) (peer_tenact draws its own values from the same ranges)."""
    x = np.random.default_rng(seed).random(shape, dtype=dtype)
    x *= dtype(hi - lo)
    x += dtype(lo)
    return x


def filled(shape, v):
    """runtime_bench's filled(): v + (i % 7), f32."""
    n = int(np.prod(shape)) if shape else 1
    return (v + (np.arange(n) % 7)).astype(np.float32).reshape(shape)


def make_data(name):
    if name.startswith("gemm_"):
        _, dt, n = name.split("_")
        dtype = np.float32 if dt == "f32" else np.float64
        n = int(n)
        return {"a": uniform((n, n), -1, 1, 1, dtype), "b": uniform((n, n), -1, 1, 2, dtype)}
    if name == "chain_16m":
        n = 16 << 20
        return {k: uniform((n,), -2, 2, s, np.float32) for k, s in (("a", 11), ("b", 12), ("c", 13))}
    if name == "transpose_4096":
        return {"a": uniform((4096, 4096), -1, 1, 21, np.float32)}
    if name == "reduce_16m":
        return {"a": uniform((16 << 20,), 0, 1, 31, np.float32)}
    if name == "small_1000":
        return {"x": filled((1000,), 1), "y": filled((1000,), 2)}
    if name == "mlp_b4":
        return {"x": filled((4, 16), 0.5), "w1": filled((16, 32), 0.25), "b1": filled((32,), -1.0),
                "w2": filled((32, 10), 0.125), "b2": filled((10,), 2.0)}
    if name.startswith("nodes_10k"):
        return {"x": np.array(1.0, dtype=np.float32), "c": np.array(0.25, dtype=np.float32)}
    raise KeyError(name)


def expected_nodes_result():
    v = np.float32(1.0)
    for _ in range(10000):
        v = np.float32(v + np.float32(0.25))
    return float(v)


# -- the sides ------------------------------------------------------------------

def time_calls(fn, reps):
    fn()  # warm-up
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return times


class NumpyPeer:
    name = "numpy"
    label = "NumPy " + np.__version__

    def __init__(self):
        self.fns = {}

    def prepare(self, name, d):
        if name.startswith("gemm_"):
            a, b = d["a"], d["b"]
            fn = lambda: a @ b  # noqa: E731
        elif name == "chain_16m":
            a, b, c = d["a"], d["b"], d["c"]
            fn = lambda: np.tanh(a * b + c) * np.float32(0.5) + a  # noqa: E731
        elif name == "transpose_4096":
            a = d["a"]
            fn = lambda: np.ascontiguousarray(a.T)  # noqa: E731
        elif name == "reduce_16m":
            a = d["a"]
            fn = lambda: a.sum()  # noqa: E731
        elif name == "small_1000":
            x, y = d["x"], d["y"]
            fn = lambda: np.maximum(np.tanh(x * y + x) - y, x)  # noqa: E731
        elif name == "mlp_b4":
            x, w1, b1, w2, b2 = d["x"], d["w1"], d["b1"], d["w2"], d["b2"]
            fn = lambda: np.maximum(x @ w1 + b1, np.float32(0)) @ w2 + b2  # noqa: E731
        elif name.startswith("nodes_10k"):
            x, c = d["x"], d["c"]

            def fn():
                v = x
                for _ in range(10000):
                    v = v + c  # 0-d + 0-d gives a NumPy scalar (np.float32), as NumPy does
                return v
        self.fns[name] = fn
        return fn

    def result(self, name):
        return np.asarray(self.fns[name]())


class TorchPeer:
    name = "torch"

    def __init__(self, torch, threads):
        self.torch = torch
        torch.set_num_threads(threads)
        self.label = "PyTorch " + torch.__version__
        self.fns = {}

    def prepare(self, name, d):
        torch = self.torch
        t = {k: torch.from_numpy(np.ascontiguousarray(v)).clone() for k, v in d.items()}
        if name.startswith("gemm_"):
            a, b = t["a"], t["b"]
            fn = lambda: a @ b  # noqa: E731
        elif name == "chain_16m":
            a, b, c = t["a"], t["b"], t["c"]
            fn = lambda: torch.tanh(a * b + c) * 0.5 + a  # noqa: E731
        elif name == "transpose_4096":
            a = t["a"]
            fn = lambda: a.t().contiguous()  # noqa: E731
        elif name == "reduce_16m":
            a = t["a"]
            fn = lambda: a.sum()  # noqa: E731
        elif name == "small_1000":
            x, y = t["x"], t["y"]
            fn = lambda: torch.maximum(torch.tanh(x * y + x) - y, x)  # noqa: E731
        elif name == "mlp_b4":
            x, w1, b1, w2, b2 = t["x"], t["w1"], t["b1"], t["w2"], t["b2"]
            fn = lambda: torch.addmm(b2, torch.relu(torch.addmm(b1, x, w1)), w2)  # noqa: E731
        elif name.startswith("nodes_10k"):
            x, c = t["x"], t["c"]

            def fn():
                v = x
                for _ in range(10000):
                    v = v + c
                return v

        def in_inference_mode(fn=fn):
            with torch.inference_mode():
                return fn()
        self.fns[name] = in_inference_mode
        return in_inference_mode

    def result(self, name):
        return self.fns[name]().numpy()


class TenactSide:
    name = "tenact"
    label = "Tenact"

    def __init__(self, path, threads):
        if not os.access(path, os.X_OK):
            sys.exit("run_peers: no peer_tenact at %s (build it: cmake --build build --target peer_tenact)" % path)
        self.peer = PeerProcess(path, threads, "run_peers")
        self.threads = self.peer.ready["threads"]
        self.checks = {}

    def run(self, name, reps):
        msg = self.peer.run(name, reps)
        self.checks[name] = msg["check"]
        return msg["times_s"]

    def close(self):
        self.peer.close()


# -- the run ----------------------------------------------------------------------

def fmt_time(seconds, per_node):
    if per_node:
        return "%.3f us/node" % (seconds * 1e6)
    if seconds >= 1:
        return "%.3f s" % seconds
    if seconds >= 1e-3:
        return "%.2f ms" % (seconds * 1e3)
    return "%.1f us" % (seconds * 1e6)


def main():
    t_start = time.perf_counter()
    threads = ARGS.threads
    print("run_peers: %d pass(es)%s, workloads: %s" % (ARGS.passes, " (--quick)" if ARGS.quick else "",
                                                      ", ".join(ARGS.only)))
    peers = [NumpyPeer()]
    blas = loaded_blas()
    print("peer numpy: NumPy %s, BLAS %s, OPENBLAS_NUM_THREADS=%d (NumPy's own elementwise ops and sums are "
          "single-threaded)" % (np.__version__, ", ".join(blas) or "(none mapped)", threads))
    if ARGS.no_torch:
        print("peer torch: skipped (--no-torch)")
    else:
        try:
            import torch
        except Exception as e:  # ImportError, or a broken installation
            print("peer torch: skipped: cannot import torch (%s: %s); Debian: apt-get install python3-torch"
                  % (type(e).__name__, e))
        else:
            peers.append(TorchPeer(torch, threads))
            print("peer torch: PyTorch %s, torch.set_num_threads(%d), calls in torch.inference_mode()"
                  % (torch.__version__, threads))

    tenact = TenactSide(ARGS.tenact, threads)
    print("Tenact: %s --serve --threads %d: one CPU engine of %d threads, OpenBLAS %d threads; per call "
          "Runtime::run_sync (prepare-cache hit + execution)" % (ARGS.tenact, threads, tenact.threads, tenact.threads))
    sides = [tenact] + peers

    # Data for the peers, made once (not timed); peer_tenact makes its own.
    fns = {}
    for name in ARGS.only:
        d = make_data(name)
        for p in peers:
            fns[(p.name, name)] = p.prepare(name, d)

    # medians[(side, workload)] = [per-pass median call time]
    medians = {}
    status = 0
    for pass_no in range(ARGS.passes):
        k = pass_no % len(sides)
        order = sides[k:] + sides[:k]
        for name in ARGS.only:
            reps = WORKLOADS[name][1 if ARGS.quick else 0]
            for side in order:
                time.sleep(ARGS.settle)
                if side is tenact:
                    times = tenact.run(name, reps)
                else:
                    times = time_calls(fns[(side.name, name)], reps)
                medians.setdefault((side.name, name), []).append(statistics.median(times))
        print("pass %d/%d done (order: %s), %.0f s" % (pass_no + 1, ARGS.passes, ", ".join(s.name for s in order),
                                                      time.perf_counter() - t_start), flush=True)

    # Sanity of the peers' answers on the workloads with exact answers.
    for p in peers:
        for name in ARGS.only:
            if name.startswith("nodes_10k"):
                got = float(p.result(name))
                if got != expected_nodes_result():
                    print("run_peers: %s %s gave %r" % (p.name, name, got), file=sys.stderr)
                    status = 1
    tenact.close()

    print()
    print("threads: %d (Tenact's engine pool and its OpenBLAS; OPENBLAS_NUM_THREADS=%d for NumPy%s)"
          % (threads, threads, "; torch.set_num_threads(%d)" % threads if len(peers) > 1 else ""))
    print("time: median over %d passes of each pass's median call; ratio = peer time / Tenact time per pass "
          "(> 1: Tenact faster): median [min - max] over passes" % ARGS.passes)
    for p in peers:
        print()
        print("Tenact vs %s" % p.label)
        print("%-17s %-16s %-16s %7s  %-17s %s" % ("workload", "Tenact", p.name, "ratio", "ratio range", "what"))
        for name in ARGS.only:
            tn, pn = medians[("tenact", name)], medians[(p.name, name)]
            nodes = NODES.get(name, 0)
            scale = 1.0 / nodes if nodes else 1.0
            ratios = [b / a for a, b in zip(tn, pn)]
            desc = describe(name)
            print("%-17s %-16s %-16s %7.2f  %-17s %s" % (
                name, fmt_time(statistics.median(tn) * scale, nodes), fmt_time(statistics.median(pn) * scale, nodes),
                statistics.median(ratios), "%.2f - %.2f" % (min(ratios), max(ratios)), desc))
    print()
    checked = ", ".join("%s %s" % (n, tenact.checks.get(n, "?")) for n in ARGS.only)
    print("Tenact results checked against plain loops (peer_tenact): %s" % checked)
    print("total %.0f s" % (time.perf_counter() - t_start))
    return status


if __name__ == "__main__":
    sys.exit(main())
