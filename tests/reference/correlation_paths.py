"""The correlation user path as a quant meets it, timed (medians of `runs`):

- pandas: the frames of pandas_correlation.py computed from the local
  Parquet files (read, join, returns, matrix, rolling correlation and beta),
  and the computation alone on series already in memory;
- the service over HTTP: `/symbol_corr` and `/symbol_beta` as JSON (bytes
  received, and parsed into DataFrames) and as Arrow streams read into
  pandas with pyarrow.

Input (JSON on stdin): {"base", "user", "password", "market_dir",
"symbols" (the first is the benchmark), "start", "end", "window", "runs"}.
Prints JSON: median seconds per path, answer sizes, and the largest
difference between the Arrow answers and pandas' frames."""
import base64
import http.client
import io
import json
import os
import statistics
import sys
import time
import urllib.parse

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.ipc

from pandas_correlation import frames


def median_seconds(call, runs):
    call()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        call()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def read_series(market_dir, symbols):
    out = []
    for s in symbols:
        df = pd.read_parquet(os.path.join(market_dir, "prices", "daily", f"{s}.parquet"), columns=["date", "close"])
        out.append([s, df["date"], df["close"].to_numpy()])
    return out


def request_frames(req, series):
    return frames({**req, "series": [[s, d, c] for s, d, c in series]})


class Service:
    def __init__(self, req):
        url = urllib.parse.urlparse(req["base"])
        self.conn = http.client.HTTPConnection(url.hostname, url.port)
        token = base64.b64encode(f"{req['user']}:{req['password']}".encode()).decode()
        self.auth = f"Basic {token}"
        self.body = json.dumps({
            "benchmark": req["symbols"][0], "stock_comparison": req["symbols"][1:],
            "start_date": req["start"], "end_date": req["end"], "roll_window": req["window"],
        })

    def post(self, path, accept):
        self.conn.request("POST", path, body=self.body, headers={
            "Authorization": self.auth, "Content-Type": "application/json", "Accept": accept})
        r = self.conn.getresponse()
        data = r.read()
        assert r.status == 200, (path, r.status, data[:200])
        return data

    def json_bytes(self):
        return self.post("/symbol_corr", "application/json"), self.post("/symbol_beta", "application/json")

    def json_frames(self):
        corr, beta = self.json_bytes()
        corr, beta = json.loads(corr)["data"], json.loads(beta)["data"]
        matrix = pd.DataFrame(corr["corr_matrix"]).set_index("index")
        roll = pd.DataFrame(corr["corr_roll"])
        roll["Date"] = pd.to_datetime(roll["Date"])
        b = pd.DataFrame(beta["beta_roll"])
        b["Date"] = pd.to_datetime(b["Date"])
        return matrix, roll.set_index("Date"), b.set_index("Date")

    def arrow_frames(self):
        arrow = "application/vnd.apache.arrow.stream"
        corr = pa.ipc.open_stream(self.post("/symbol_corr", arrow)).read_all()
        beta = pa.ipc.open_stream(self.post("/symbol_beta", arrow)).read_all()
        matrix = pd.DataFrame(json.loads(corr.schema.metadata[b"corr_matrix"])).set_index("index")
        return matrix, corr.to_pandas().set_index("Date"), beta.to_pandas().set_index("Date")


def main():
    req = json.load(sys.stdin)
    runs = req.get("runs", 15)
    market_dir, symbols = req["market_dir"], req["symbols"]
    service = Service(req)
    series = read_series(market_dir, symbols)
    out = {
        "pandas_from_parquet": median_seconds(lambda: request_frames(req, read_series(market_dir, symbols)), runs),
        "pandas_computation": median_seconds(lambda: request_frames(req, series), runs),
        "http_json_received": median_seconds(service.json_bytes, runs),
        "http_json_frames": median_seconds(service.json_frames, runs),
        "http_arrow_frames": median_seconds(service.arrow_frames, runs),
    }
    corr, beta = service.json_bytes()
    out["json_bytes"] = len(corr) + len(beta)
    out["arrow_bytes"] = len(service.post("/symbol_corr", "application/vnd.apache.arrow.stream")) + len(
        service.post("/symbol_beta", "application/vnd.apache.arrow.stream"))
    # The Arrow answers against pandas' own frames.
    _, names, _, _, corr_m, roll_corr, roll_beta = request_frames(req, series)
    matrix, roll, b = service.arrow_frames()
    worst = float(np.nanmax(np.abs(matrix.loc[names, names].to_numpy() - corr_m.to_numpy())))
    w = req["window"]
    for n in names[1:]:
        for ours, theirs in [(roll[n], roll_corr[n]), (b[n], roll_beta[n])]:
            theirs = theirs.iloc[w - 1:].to_numpy()
            assert len(theirs) == len(ours), (len(theirs), len(ours))
            worst = max(worst, float(np.nanmax(np.abs(ours.to_numpy() - theirs))))
    out["largest_difference"] = worst
    out["rows"] = len(roll)
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
