"""The peer of the ingest benchmark: one session of many symbols appended
the way a pandas script does it, with pyarrow's Parquet: for each symbol of
a grouped-daily answer, read its file, check that a session already there
agrees, append the new one, write the file back. No validation rules, no
catalog, no generation: less than the import does.

Input (JSON on stdin): {"dir": the market directory, "file": the answer};
prints {"seconds": ...} of the one pass."""
import json
import sys
import time

import pandas as pd

d = json.load(sys.stdin)
t0 = time.perf_counter()
with open(d["file"]) as f:
    answer = json.load(f)
rows = pd.DataFrame(answer["results"])
rows["date"] = pd.to_datetime(rows["t"], unit="ms").dt.normalize()
for symbol, bar in rows.groupby("T"):
    path = f'{d["dir"]}/prices/daily/{symbol}.parquet'
    stored = pd.read_parquet(path)
    stored["date"] = pd.to_datetime(stored["date"])
    new = pd.DataFrame({
        "date": bar["date"].values,
        "open": bar["o"].values, "high": bar["h"].values, "low": bar["l"].values,
        "close": bar["c"].values, "volume": bar["v"].astype(float).values,
    })
    both = new.merge(stored, on="date", suffixes=("", "_stored"))
    if not (both[["open", "high", "low", "close"]].values
            == both[["open_stored", "high_stored", "low_stored", "close_stored"]].values).all():
        sys.exit(f"{symbol}: a stored session differs")
    merged = pd.concat([stored, new[~new["date"].isin(stored["date"])]], ignore_index=True)
    merged["date"] = merged["date"].dt.date
    merged.to_parquet(path, index=False)
json.dump({"seconds": time.perf_counter() - t0}, sys.stdout)
