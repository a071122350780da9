"""Split adjustment computed with pandas: each bar's prices divided, and its
volume multiplied, by the product of the ratios of the splits whose ex-date
comes after the bar (the factor of a vendor's split-adjusted series).

Input (JSON on stdin): {"dates", "open", "high", "low", "close", "volume",
"splits": [[ex_date, ratio]]}; prints the adjusted columns."""
import json
import sys

import pandas as pd

COLUMNS = ["open", "high", "low", "close", "volume"]

d = json.load(sys.stdin)
index = pd.DatetimeIndex(pd.to_datetime(d["dates"]))
raw = pd.DataFrame({k: d[k] for k in COLUMNS}, index=index, dtype=float)
ratios = pd.Series(
    {pd.Timestamp(day): ratio for day, ratio in d["splits"]}, dtype=float
)
# Each ex-date's ratio on its session, 1 elsewhere; the factor of a bar is
# the product over the sessions after it.
on_session = ratios.groupby(level=0).prod().reindex(index, fill_value=1.0)
factor = on_session[::-1].cumprod()[::-1].shift(-1, fill_value=1.0)
adjusted = raw[["open", "high", "low", "close"]].div(factor, axis=0)
adjusted["volume"] = raw["volume"].mul(factor)
out = {k: adjusted[k].tolist() for k in COLUMNS}
out["dates"] = [t.strftime("%Y-%m-%d") for t in index]
json.dump(out, sys.stdout)
