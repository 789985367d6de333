#!/usr/bin/python3
"""Prints the coefficient tables of engines/cpu/kernels/vector_math_erf_f64.hpp.

Needs mpmath (Debian: python3-mpmath); not run by the build or the tests.
Every table lists its polynomial's coefficients highest degree first.
- kErfSmall: erf(x) = x + x*Q(x^2) on |x| < 0.75, Q the Taylor series of
  erf(x)/x - 1 in z = x^2 to degree 15: (2/sqrt(pi)) (-1)^n / (n! (2n + 1)),
  less 1 for n = 0 (truncation below 2e-19 relative).
- kErfMiddle0, kErfMiddle1: erf(a) on [0.75, 1.25] and [1.25, 1.75] as
  polynomials in u = (a - center) * 4.
- kErfcPiece0, kErfcPiece1: g(a) = erfc(a) exp(a^2) on [1.75, 3.75] and
  [3.75, 6], as polynomials in u = a - center (half width 1) and
  u = (a - center) / half_width.
Each fit is mpmath.chebyfit with the fewest coefficients whose relative
error (printed) is below 2e-17.
"""
import mpmath

mpmath.mp.dps = 50


def g(a):
    return mpmath.erfc(a) * mpmath.exp(a * a)


def table(name, values):
    items = ", ".join(float(v).hex() for v in values)
    return f"inline constexpr double {name}[] = {{{items}}};"


def fit(name, f, lo, hi):
    lo, hi = mpmath.mpf(lo), mpmath.mpf(hi)
    center, half = (lo + hi) / 2, (hi - lo) / 2
    smallest = min(abs(f(lo)), abs(f(hi)))
    for n in range(8, 40):
        poly, err = mpmath.chebyfit(lambda u: f(center + half * u), [-1, 1], n, error=True)
        if err / smallest < 2e-17:
            break
    print(f"// [{float(lo)}, {float(hi)}]: center {float(center)}, half width {float(half)}; "
          f"{n} coefficients, relative error {mpmath.nstr(err / smallest, 3)}")
    print(table(name, poly))


k = 2 / mpmath.sqrt(mpmath.pi)
q = [k - 1] + [k * (-1) ** n / (mpmath.factorial(n) * (2 * n + 1)) for n in range(1, 16)]
print(table("kErfSmall", reversed(q)))
fit("kErfMiddle0", mpmath.erf, 0.75, 1.25)
fit("kErfMiddle1", mpmath.erf, 1.25, 1.75)
fit("kErfcPiece0", g, 1.75, 3.75)
fit("kErfcPiece1", g, 3.75, 6)
