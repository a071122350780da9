"""The pattern matcher's windows computed independently with stumpy's MASS
(the z-normalized Euclidean distance profile): Corr = 100 x (1 - d^2 / 2m).

Input (JSON on stdin): {"cases": [{"closes": [...], "dates": [...],
"template": [first, last] (bar indices, inclusive), "min_corr": percent,
"exclude_overlap": bool}, ...]}. Prints, per case, the matches best first as
the service lists them: every window of the template's length clear of the
template's own bars with Corr >= min_corr, and with exclude_overlap only
those sharing no bar with a better one kept, as [{"StartDate", "EndDate",
"Corr"}].

With {"bench": {"file", "lengths", "template", "runs"}} (the series as
float64 values one after another in `file`), prints the median seconds of
stumpy.mass over every series and, for a single series, of a numpy sliding
Pearson with running sums and np.convolve, with each one's largest error
against a two-pass computation (in Corr points)."""
import json
import statistics
import sys
import time

import numpy as np
import stumpy
from numpy.lib.stride_tricks import sliding_window_view


def corr(template, closes):
    """The z-normalized distance is the same for the template and for the
    template less its mean (stumpy normalizes the query itself); the centred
    query keeps the FFT's sliding dot products small, so the profile carries
    about 1e-12 of rounding instead of 1e-9 at index-like price levels."""
    t = np.asarray(template, dtype="float64")
    m = len(t)
    d = stumpy.mass(t - t.mean(), np.asarray(closes, dtype="float64"))
    return 100.0 * (1.0 - d ** 2 / (2.0 * m))


def matches(req):
    closes = np.asarray(req["closes"], dtype="float64")
    a, b = req["template"]
    m = b - a + 1
    c = corr(closes[a:b + 1], closes)
    found = [
        (float(c[i]), i)
        for i in range(len(c))
        if c[i] >= req["min_corr"] and (i + m - 1 < a or i > b)
    ]
    found.sort(key=lambda x: (-x[0], x[1]))
    kept = []
    for value, i in found:
        if req["exclude_overlap"] and any(not (i + m - 1 < j or i > j + m - 1) for _, j in kept):
            continue
        kept.append((value, i))
    dates = req["dates"]
    return [{"StartDate": dates[i], "EndDate": dates[i + m - 1], "Corr": v} for v, i in kept]


def numpy_sliding(template, x):
    """Running sums and a convolution: the usual fast form."""
    m = len(template)
    t = (template - template.mean()) / template.std()
    s1 = np.concatenate(([0.0], np.cumsum(x)))
    s2 = np.concatenate(([0.0], np.cumsum(x * x)))
    mean = (s1[m:] - s1[:-m]) / m
    var = (s2[m:] - s2[:-m]) / m - mean * mean
    return 100.0 * np.convolve(x, t[::-1], mode="valid") / (m * np.sqrt(var))


def two_pass(template, x):
    w = sliding_window_view(x, len(template))
    wc = w - w.mean(axis=1, keepdims=True)
    tc = template - template.mean()
    return 100.0 * (wc @ tc) / np.sqrt((wc ** 2).sum(axis=1) * (tc ** 2).sum())


def median_seconds(call, runs):
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        call()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def bench(spec):
    values = np.fromfile(spec["file"], dtype="<f8")
    bounds = np.cumsum([0] + spec["lengths"])
    series = [values[bounds[k]:bounds[k + 1]] for k in range(len(spec["lengths"]))]
    t = np.asarray(spec["template"], dtype="float64")
    t = t - t.mean()
    stumpy.mass(t, series[0][:10_000])  # compile once
    runs = spec["runs"]
    out = {"mass_seconds": median_seconds(lambda: [stumpy.mass(t, x) for x in series], runs)}
    if len(series) == 1:
        x = series[0]
        exact = two_pass(t, x)
        out["numpy_seconds"] = median_seconds(lambda: numpy_sliding(t, x), runs)
        fast = numpy_sliding(t, x)
        # Running sums can even make a window's variance negative: NaN there.
        out["numpy_max_error"] = float(np.nanmax(np.abs(fast - exact)))
        out["numpy_nan_windows"] = int(np.isnan(fast).sum())
        out["mass_max_error"] = float(np.max(np.abs(corr(t, x) - exact)))
    return out


if __name__ == "__main__":
    req = json.load(sys.stdin)
    if "bench" in req:
        json.dump(bench(req["bench"]), sys.stdout)
    else:
        json.dump([matches(case) for case in req["cases"]], sys.stdout)
