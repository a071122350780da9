"""The benchmark mode the reference scripts share: the median seconds of
`runs` calls, printed as JSON."""
import json
import statistics
import sys
import time


def print_median_seconds(call, runs):
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        call()
        times.append(time.perf_counter() - t0)
    json.dump({"median_seconds": statistics.median(times)}, sys.stdout)
