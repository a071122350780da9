"""Performance metrics of equity curves by empyrical-reloaded, as quants
check them: each curve's returns are its pct_change (n bars, n - 1
returns). Input: {"curves": [{"equity": [...], "years": y}, ...],
"annualization": 252}. CAGR and Calmar take the curve's calendar years
(docs/backtest.md): empyrical's year is len(returns) / annualization, so
they are asked with annualization = len(returns) / years.
Output per curve: returns, sharpe, sortino, annual_volatility,
max_drawdown, cagr, calmar (fractions where empyrical gives fractions)."""

import json
import sys

import empyrical
import pandas as pd

req = json.load(sys.stdin)
ann = req["annualization"]
out = []
for curve in req["curves"]:
    returns = pd.Series(curve["equity"]).pct_change().dropna()
    calendar = len(returns) / curve["years"]
    out.append({
        "returns": int(len(returns)),
        "sharpe": float(empyrical.sharpe_ratio(returns, annualization=ann)),
        "sortino": float(empyrical.sortino_ratio(returns, annualization=ann)),
        "annual_volatility": float(empyrical.annual_volatility(returns, annualization=ann)),
        "max_drawdown": float(empyrical.max_drawdown(returns)),
        "cagr": float(empyrical.cagr(returns, annualization=calendar)),
        "calmar": float(empyrical.calmar_ratio(returns, annualization=calendar)),
    })
json.dump(out, sys.stdout)
