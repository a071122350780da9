"""A batch as a notebook runs it, timed: the Python package submits the
grid, waits (its long-poll), reads the results table (Arrow) and the
statistics. Input JSON on stdin: {"url", "user", "password", "strategy",
"grid", "statistics"}; output JSON: seconds to the submit's answer, to the
finished batch, to the results frame and to the statistics, the frame's
row count, the batch's id and the clock time `wait()` returned at. The client is made before the clock starts (a notebook's
`import` and `Client(...)` happen once); the package's own time after that
is counted.
"""

import json
import sys
import time

import marketlab

req = json.load(sys.stdin)
client = marketlab.Client(req["url"], req["user"], req["password"])
t0 = time.perf_counter()
task = client.batch(req["strategy"], grid=req["grid"], statistics=req["statistics"])
submitted = time.perf_counter() - t0
task.wait()
finished = time.perf_counter() - t0
finished_unix = time.time()
frame = task.results
rows = time.perf_counter() - t0
statistics = task.statistics if req["statistics"] else None
done = time.perf_counter() - t0
print(json.dumps({
    "submitted": submitted,
    "finished": finished,
    "rows": rows,
    "done": done,
    "n": len(frame),
    "task_id": task.id,
    "finished_unix": finished_unix,
    "pbo": None if statistics is None else float(statistics.get("pbo", float("nan"))),
}))
