#!/usr/bin/python3
"""Writes the seed corpus of npy_fuzzer into fuzz/corpus/npy/ (small files,
a few hundred bytes each, written by NumPy). Rerun to regenerate:
    /usr/bin/python3 fuzz/make_npy_corpus.py
"""
import io
import os

import numpy as np


def save(path, arr, version=None):
    buf = io.BytesIO()
    if version is None:
        np.save(buf, arr)
    else:
        np.lib.format.write_array(buf, arr, version=version)
    with open(path, "wb") as f:
        f.write(buf.getvalue())


def main() -> None:
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "npy")
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(1)
    save(os.path.join(out, "f32_2x3.npy"), rng.standard_normal((2, 3)).astype("<f4"))
    save(os.path.join(out, "f64_scalar.npy"), np.array(-0.0))
    save(os.path.join(out, "bool_5.npy"), np.array([True, False, True, True, False]))
    save(os.path.join(out, "i8_empty.npy"), np.zeros((2, 0, 3), dtype="|i1"))
    save(os.path.join(out, "u16_4.npy"), np.array([0, 1, 65535, 300], dtype="<u2"))
    save(os.path.join(out, "i64_bigendian.npy"), np.arange(6, dtype=">i8").reshape(2, 3))
    save(os.path.join(out, "f16_specials.npy"),
         np.array([np.nan, np.inf, -np.inf, -0.0, 6e-8, 65504], dtype="<f2"))
    save(os.path.join(out, "c64_fortran.npy"),
         np.asfortranarray((rng.standard_normal((2, 3)) + 1j).astype("<c8")))
    save(os.path.join(out, "c128_v2.npy"), np.array([1 + 2j, -3j]), version=(2, 0))
    save(os.path.join(out, "u32_v3.npy"), np.arange(4, dtype="<u4"), version=(3, 0))
    bits = np.array([0x3F80, 0xC000, 0x7FC0], dtype="<u2")
    buf = io.BytesIO()
    np.save(buf, np.frombuffer(bits.tobytes(), dtype="V2"))
    with open(os.path.join(out, "bf16_3.npy"), "wb") as f:
        f.write(buf.getvalue().replace(b"'|V2'", b"'<V2'"))


if __name__ == "__main__":
    main()
