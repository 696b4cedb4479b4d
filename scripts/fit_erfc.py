#!/usr/bin/env python3
"""Fits the erfc approximation of src/ops/gelu.c and prints its coefficients.

erfc(t) = exp(-t^2) R(t) for t >= 0, with R(t) = erfc(t) exp(t^2) smooth and
decreasing from 1. R is approximated by a polynomial of degree 9 in
u = 1 / (1 + t / 2), fitted on [0, 9.4] (past it exp(-t^2) underflows float)
for the smallest largest relative error by iteratively reweighted least
squares (Lawson's algorithm), against Python's double-precision math.erfc.
Prints the coefficients as C floats and the largest relative error of R in
double and when evaluated by Horner's rule in float32.

    python3 scripts/fit_erfc.py        (needs numpy)
"""
import math

import numpy as np

P, DEGREE, T = 0.5, 9, 9.4


def fit():
    t = np.unique(np.concatenate([np.linspace(0, T, 20001), np.linspace(0, 1, 5001)]))
    r = np.array([math.erfc(v) * math.exp(v * v) for v in t])
    v = np.vander(1.0 / (1.0 + P * t), DEGREE + 1, increasing=True)
    w = np.ones_like(t)
    for _ in range(60):
        c, *_ = np.linalg.lstsq(v * (w / r)[:, None], w, rcond=None)
        err = (v @ c - r) / r
        w = w * np.sqrt(np.abs(err) + 1e-30)
        w /= w.max()
    return c, np.abs(err).max()


def float_error(c):
    t = np.linspace(0, T, 200001).astype(np.float32)
    u = (np.float32(1) / (np.float32(1) + np.float32(P) * t)).astype(np.float32)
    acc = np.full_like(u, np.float32(c[-1]))
    for k in range(len(c) - 2, -1, -1):
        acc = (acc * u + np.float32(c[k])).astype(np.float32)
    ref = np.array([math.erfc(float(v)) * math.exp(float(v) ** 2) for v in t])
    return np.abs((acc - ref) / ref).max()


def main():
    c, err = fit()
    for k, v in enumerate(c):
        print("    %.9ef, /* u^%d */" % (np.float32(v), k))
    print("largest relative error of R: %.3g (double), %.3g (float32 Horner)"
          % (err, float_error(c)))


if __name__ == "__main__":
    main()
