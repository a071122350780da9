"""pandas' correlation matrix, rolling correlation and rolling beta
(cov / var) of return columns given as JSON, in order:
{"columns": [[name, [...]], ...], "window": w}; the first column is the benchmark."""
import json
import sys

import pandas as pd


def clean(s):
    return [None if pd.isna(v) else float(v) for v in s]


def main():
    req = json.load(sys.stdin)
    df = pd.DataFrame({name: values for name, values in req["columns"]})
    w = req["window"]
    names = list(df.columns)
    bench = names[0]
    out = {
        "matrix": [[float(v) for v in row] for row in df.corr().values],
        "rolling_corr": {n: clean(df[n].rolling(w).corr(df[bench])) for n in names[1:]},
        "rolling_beta": {n: clean(df[n].rolling(w).cov(df[bench]) / df[bench].rolling(w).var()) for n in names[1:]},
    }
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
