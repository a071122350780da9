"""The smart option scanner's listing and figures recomputed independently
from the option_chains table with pyarrow and scipy: which puts are listed,
POP (Black-Scholes N(d2) at the break-even), ev_score and cagr.

stdin: {"table": path, "date": "YYYY-MM-DD", "rate": r}
stdout: {"<contract symbol>": {field: value, ...}, ...}
"""
import datetime as dt
import json
import math
import sys

import pyarrow.parquet as pq
from scipy.stats import norm

q = json.load(sys.stdin)
t = pq.read_table(q["table"]).to_pylist()
day = dt.date.fromisoformat(q["date"])
rate = q["rate"]
out = {}
for r in t:
    if r["as_of"] != day or r["option_type"] != "put":
        continue
    s, k, last, iv = r["underlying_price"], r["strike"], r["last"], r["iv"]
    dte = (r["expiration"] - day).days
    listed = (
        s > 0
        and 0.70 * s <= k < s
        and 1 <= dte <= 60
        and (r["bid"] or 0) > 0
        and last >= 0.05
        and (r["open_interest"] or 0) >= 10
        and iv > 0
    )
    if not listed:
        continue
    years = dte / 365.0
    be = k - last
    sd = iv * math.sqrt(years)
    d2 = (math.log(s / be) + (rate - 0.5 * iv * iv) * years) / sd
    pop = norm.cdf(d2)
    margin = k * 100.0
    net = last * 100.0 * 0.98
    stressed = s * math.exp(-1.2 * iv * math.sqrt(years))
    tail = max((k - stressed) * 100.0 - net, 0.0)
    ev = (pop * net - (1.0 - pop) * tail) / margin * 100.0
    out[r["contract_symbol"]] = {
        "ticker": r["underlying"],
        "close": s,
        "expirDate": r["expiration"].isoformat(),
        "DTE": dte,
        "strike": k,
        "be": be,
        "POP_est": pop * 100.0,
        "credit": last,
        "margin": margin,
        "return_per": last * 100.0 / margin * 100.0,
        "cagr": ev * 252.0 / dte,
        "ev_score": ev,
        "Volume": r["volume"],
        "OI": r["open_interest"],
        "IV": iv,
    }
json.dump(out, sys.stdout)
