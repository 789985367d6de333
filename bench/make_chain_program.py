#!/usr/bin/python3
"""Writes a long program for measuring `tenact run`'s memory (bench/README.md).

    /usr/bin/python3 bench/make_chain_program.py OPS DIR [--shape N] [--inputs K] [--unfused]

writes DIR/chain_OPS[_inK][_unfused].json, a chain of OPS adds on f32[N]
(N = 4 by default): y0 = x0 + x0, y(i) = y(i-1) + x(i mod K), with K inputs
x0 .. x(K-1) (K = 1 by default), and the input file DIR/ones_N.npy (all
ones), then prints the command that runs it. The CPU engine fuses such a
chain into one elementwise region; with --unfused every other op is a
reshape of the previous value to its own shape (a layout op), so no region
forms and every op is its own pipeline unit.

Standard library only (the .npy header is written by hand).
"""

import argparse
import os
import struct
import sys


def write_npy_ones(path, n):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d,), }" % n
    header += " " * (64 - (10 + len(header) + 1) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("ascii"))
        f.write(struct.pack("<%df" % n, *([1.0] * n)))


def op_lines(ops, n, inputs, unfused):
    prev = "x0"
    for i in range(ops):
        out = "y%d" % i
        if unfused and i % 2 == 1:
            yield '{"op": "reshape", "in": ["%s"], "out": "%s", "shape": [%d]}' % (prev, out, n)
        else:
            yield '{"op": "add", "in": ["%s", "x%d"], "out": "%s"}' % (prev, i % inputs, out)
        prev = out


def main(argv):
    parser = argparse.ArgumentParser(description="a chain of adds for tenact run")
    parser.add_argument("ops", type=int)
    parser.add_argument("dir")
    parser.add_argument("--shape", type=int, default=4)
    parser.add_argument("--inputs", type=int, default=1)
    parser.add_argument("--unfused", action="store_true")
    a = parser.parse_args(argv[1:])
    os.makedirs(a.dir, exist_ok=True)
    name = "chain_%d%s%s" % (a.ops, "_in%d" % a.inputs if a.inputs > 1 else "", "_unfused" if a.unfused else "")
    path = os.path.join(a.dir, name + ".json")
    inputs = ",\n    ".join('{"name": "x%d", "dtype": "f32", "shape": [%d]}' % (k, a.shape) for k in range(a.inputs))
    with open(path, "w") as f:
        f.write('{\n  "format": "tenact.program/1",\n  "name": "%s",\n' % name)
        f.write('  "inputs": [\n    %s\n  ],\n' % inputs)
        f.write('  "ops": [\n    ')
        f.write(",\n    ".join(op_lines(a.ops, a.shape, a.inputs, a.unfused)))
        f.write('\n  ],\n  "outputs": ["y%d"]\n}\n' % (a.ops - 1))
    npy = os.path.join(a.dir, "ones_%d.npy" % a.shape)
    write_npy_ones(npy, a.shape)
    print("tenact run %s %s" % (path, " ".join("--input x%d=%s" % (k, npy) for k in range(a.inputs))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
