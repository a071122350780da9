"""The Monte Carlo benchmark's peer: the same two bootstraps as a quant
writes them with numpy, vectorised over the draws (an index matrix, a
cumulative product, the running peak, np.percentile), timed on the same
growth factors. Prints JSON: the median seconds of each method.

Input: {"trades": path of float64 LE growth factors, "returns": path of
float64 LE growth factors, "draws": D, "block": B, "years": Y, "runs": R}."""

import json
import statistics
import sys
import time

import numpy as np

Q = [5, 25, 50, 75, 95]


def bands(growth, picks, years):
    paths = np.cumprod(growth[picks], axis=1)
    peaks = np.maximum.accumulate(np.maximum(paths, 1.0), axis=1)
    drawdown = (paths / peaks - 1.0).min(axis=1)
    final = paths[:, -1]
    cagr = np.where(final > 0, np.abs(final) ** (1.0 / years) - 1.0, 0.0)
    points = np.linspace(0, paths.shape[1] - 1, 250).astype(int)
    return (np.percentile(final, Q), np.percentile(drawdown, Q), np.percentile(cagr, Q), np.percentile(paths[:, points], Q, axis=0))


def trades(growth, draws, years, rng):
    picks = rng.integers(0, growth.size, size=(draws, growth.size))
    return bands(growth, picks, years)


def blocks(growth, draws, block, years, rng):
    n = growth.size
    starts = rng.integers(0, n, size=(draws, -(-n // block)))
    picks = ((starts[:, :, None] + np.arange(block)[None, None, :]) % n).reshape(draws, -1)[:, :n]
    return bands(growth, picks, years)


def main():
    spec = json.load(sys.stdin)
    t = np.fromfile(spec["trades"], dtype="<f8")
    r = np.fromfile(spec["returns"], dtype="<f8")
    rng = np.random.default_rng(7)
    out = {}
    for name, run in (
        ("trades", lambda: trades(t, spec["draws"], spec["years"], rng)),
        ("returns", lambda: blocks(r, spec["draws"], spec["block"], spec["years"], rng)),
    ):
        run()
        times = []
        for _ in range(spec["runs"]):
            t0 = time.perf_counter()
            run()
            times.append(time.perf_counter() - t0)
        out[name] = statistics.median(times)
    json.dump(out, sys.stdout)


main()
