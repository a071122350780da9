"""The bootstrap's outcomes and percentile bands with numpy, on the same
draws as the engine (their indices are the input): each path compounds the
growth factors it picked from 1, its maximum drawdown counts the start as a
peak, its CAGR is final ** (1 / years) - 1 (0 when the equity ends at or
below 0), and the bands are np.percentile (method "linear") of the paths'
outcomes and of their equity at the fan's points.

Input: {"growth": path of L float64 little-endian, "picks": path of
D x L uint32 little-endian (draw-major), "draws": D, "length": L,
"years": Y, "points": [steps], "percentiles": [q]}.
Output: {"final_equity", "max_drawdown", "cagr": bands; "fan": per
percentile per point; "finals": every draw's final equity}."""

import json
import sys

import numpy as np

spec = json.load(sys.stdin)
growth = np.fromfile(spec["growth"], dtype="<f8")
picks = np.fromfile(spec["picks"], dtype="<u4").reshape(spec["draws"], spec["length"])
assert growth.size == spec["length"]
q = spec["percentiles"]

paths = np.cumprod(growth[picks], axis=1)
start = np.ones((spec["draws"], 1))
with_start = np.concatenate([start, paths], axis=1)
peaks = np.maximum.accumulate(with_start, axis=1)
max_drawdown = (with_start / peaks - 1.0).min(axis=1)
final = paths[:, -1]
years = spec["years"]
positive = (final > 0) & (years > 0)
cagr = np.zeros_like(final)
cagr[positive] = final[positive] ** (1.0 / years) - 1.0
fan = with_start[:, spec["points"]]

json.dump(
    {
        "final_equity": np.percentile(final, q).tolist(),
        "max_drawdown": np.percentile(max_drawdown, q).tolist(),
        "cagr": np.percentile(cagr, q).tolist(),
        "fan": np.percentile(fan, q, axis=0).tolist(),
        "finals": final.tolist(),
    },
    sys.stdout,
)
