"""The scanner backtest's portfolio rules (docs/scanner.md, steps 4-7)
implemented a second time, over the same filtered items: the ranking, the
daily limit, Kelly or fixed sizing, whole shares, cash, exits on closes,
commission, and the result's metrics. Prices come from the Parquet files
with pandas, not from the service.

Input (JSON on stdin): {"market": dir, "calendar": [dates], "items": [...],
"params": {capital, long, short, commission, allocation ("Kelly" or a
fraction), daily_limit, rank}}. Prints the metrics and the per-trade arrays
under the result's names."""
import json
import math
import sys

import numpy as np
import pandas as pd

KELLY_CAP = 0.25


def kelly(win_rate, avg_win, avg_loss):
    w = win_rate / 100.0
    if w <= 0 or avg_win <= 0:
        return 0.0
    f = w if avg_loss >= 0 else w - (1 - w) / (avg_win / -avg_loss)
    return min(max(f, 0.0), KELLY_CAP)


def score(item, rank):
    key = {"WinRate": "win_rate", "Z_Score": "z_score", "StdDev": "std_dev",
           "ExpectedReturn": "expected_return", "SharpeRatio": "sharpe_ratio"}[rank]
    return -item[key] if rank == "StdDev" else item[key]


def prices(market, symbol, calendar):
    bars = pd.read_parquet(f"{market}/prices/daily/{symbol}.parquet")
    bars["date"] = pd.to_datetime(bars["date"]).dt.strftime("%Y-%m-%d")
    bars = bars.set_index("date").reindex(calendar)
    return bars["open"].to_numpy(float), bars["close"].to_numpy(float)


def main():
    data = json.load(sys.stdin)
    calendar, items, p = data["calendar"], data["items"], data["params"]
    n = len(calendar)
    c = p["commission"] / 100.0
    rank = p["rank"]
    # Under Kelly, an item without an edge has no stake: never an order.
    if p["allocation"] == "Kelly":
        keep = [k for k in range(len(items)) if kelly(items[k]["win_rate"], items[k]["avg_win"], items[k]["avg_loss"]) > 0]
    else:
        keep = list(range(len(items)))
    # Best first per session; ties by symbol, then the signal's order. A
    # session's orders: its best item per symbol, the first daily_limit.
    order = sorted(keep, key=lambda k: (
        items[k]["day"], -score(items[k], rank), items[k]["symbol"], items[k]["signal"]))
    by_day = [[] for _ in range(n)]
    for k in order:
        day = by_day[items[k]["day"]]
        if len(day) < p["daily_limit"] and all(items[j]["symbol"] != items[k]["symbol"] for j in day):
            day.append(k)
    px = {s: prices(data["market"], s, calendar) for s in sorted({i["symbol"] for i in items})}

    cash = p["capital"]
    positions, open_, equity, cash_series, exposure_series = [], [], [], [], []
    skipped = 0
    for day in range(n):
        if day > 0:
            today = []
            for k in by_day[day - 1]:
                it = items[k]
                held = any(items[positions[q]["item"]]["symbol"] == it["symbol"] for q, _ in open_) or it["symbol"] in today
                f = kelly(it["win_rate"], it["avg_win"], it["avg_loss"]) if p["allocation"] == "Kelly" else float(p["allocation"])
                if held or f <= 0:
                    continue
                price = px[it["symbol"]][0][day]
                side = p["long"] if it["direction"] == "Long" else p["short"]
                shares = math.floor(f * side * p["capital"] / price) if np.isfinite(price) and price > 0 else 0
                reserve = shares * price * (1 + c)
                if shares < 1 or reserve > cash:
                    skipped += 1
                    continue
                cash -= reserve
                today.append(it["symbol"])
                open_.append((len(positions), reserve))
                positions.append({"item": k, "entry_day": day, "price": price, "shares": shares,
                                  "fraction": f, "exit": None, "last": price, "ret": 0.0, "profit": 0.0})
        still, exposure = [], 0.0
        for q, reserve in open_:
            pos = positions[q]
            it = items[pos["item"]]
            close = px[it["symbol"]][1][day]
            if np.isfinite(close):
                pos["last"] = close
            d = 1.0 if it["direction"] == "Long" else -1.0
            gross = d * (pos["last"] / pos["price"] - 1) * 100
            reason = None
            if np.isfinite(close):
                if gross >= it["profit_target"]:
                    reason = "Profit Target"
                elif gross <= -it["stop_loss"]:
                    reason = "Stop Loss"
                elif day + 1 >= pos["entry_day"] + it["hold"]:
                    reason = "Time Is Up"
            value = pos["shares"] * pos["price"]
            pnl = d * pos["shares"] * (pos["last"] - pos["price"])
            exit_fee = pos["shares"] * pos["last"] * c
            pos["profit"] = pnl - value * c - exit_fee
            pos["ret"] = pos["profit"] / value * 100
            if reason:
                pos["exit"] = (day, reason)
                cash += reserve - value * c + pnl - exit_fee
            else:
                exposure += pos["shares"] * pos["last"]
                still.append((q, reserve))
        open_ = still
        marked = 0.0
        for q, reserve in open_:
            pos = positions[q]
            d = 1.0 if items[pos["item"]]["direction"] == "Long" else -1.0
            marked += reserve - pos["shares"] * pos["price"] * c + d * pos["shares"] * (pos["last"] - pos["price"]) - pos["shares"] * pos["last"] * c
        cash_series.append(cash)
        equity.append(cash + marked)
        exposure_series.append(exposure)

    r = np.array([pos["ret"] for pos in positions])
    wins, losses = r[r > 0], r[r <= 0]
    sd = float(np.std(r, ddof=1)) if len(r) > 1 else 0.0
    eq = np.array(equity)
    peak = np.maximum.accumulate(np.concatenate([[p["capital"]], eq]))[1:]
    in_market = np.zeros(n, bool)
    for pos in positions:
        end = pos["exit"][0] if pos["exit"] else n - 1
        in_market[pos["entry_day"]:end + 1] = True
    spx_close = prices(data["market"], "SPX", calendar)[1]
    arrays = {k: [] for k in ["Start Date", "Symbol", "Signal", "Direction", "TimeInMarket", "ProfitTarget",
                              "StopLoss", "Kelly", "StayInMarket", "Shares", "Price", "Close", "FloatProfit",
                              "OrderStatus", "Action", "Exit Date"]}
    for pos in positions:
        it = items[pos["item"]]
        held = (pos["exit"][0] + 1 if pos["exit"] else n) - pos["entry_day"]
        arrays["Start Date"].append(calendar[pos["entry_day"]])
        arrays["Symbol"].append(it["symbol"])
        arrays["Signal"].append(it["signal_name"])
        arrays["Direction"].append(it["direction"])
        arrays["TimeInMarket"].append(it["hold"])
        arrays["ProfitTarget"].append(it["profit_target"])
        arrays["StopLoss"].append(it["stop_loss"])
        arrays["Kelly"].append(pos["fraction"])
        arrays["StayInMarket"].append(0 if pos["exit"] else max(it["hold"] - held, 0))
        arrays["Shares"].append(float(pos["shares"]))
        arrays["Price"].append(pos["price"])
        arrays["Close"].append(pos["last"])
        arrays["FloatProfit"].append(pos["profit"])
        arrays["OrderStatus"].append(pos["exit"][1] if pos["exit"] else "Open")
        arrays["Action"].append("Hold" if not pos["exit"] else ("Sell" if it["direction"] == "Long" else "Buy"))
        arrays["Exit Date"].append(calendar[pos["exit"][0]] if pos["exit"] else None)
    out = {
        "TOTAL RETURN": (equity[-1] / p["capital"] - 1) * 100,
        "MEDIAN RETURN": float(np.median(r)) if len(r) else 0.0,
        "AVERAGE RETURN": float(r.mean()) if len(r) else 0.0,
        "WIN RATE": len(wins) / len(r) * 100 if len(r) else 0.0,
        "AVERAGE WIN": float(wins.mean()) if len(wins) else 0.0,
        "AVERAGE LOSS": float(losses.mean()) if len(losses) else 0.0,
        "MAX RISK": float(((1 - eq / peak).max()) * 100) if n else 0.0,
        "TOTAL TRADES": len(r),
        "TOTAL POSITIVE": int(len(wins)),
        "TOTAL NEGATIVE": int(len(losses)),
        "TIME IN MARKET": float(in_market.mean() * 100),
        "STD.DEV": sd,
        "Z-SCORE": float(r.mean() / (sd / math.sqrt(len(r)))) if sd > 0 else 0.0,
        "BUY and HOLD": float((spx_close[-1] / spx_close[0] - 1) * 100),
        "AVERAGE POSITION": float(np.mean(exposure_series)),
        "skipped_trades": skipped,
        "equity": equity,
        "cash": cash_series,
        "result": arrays,
    }
    json.dump(out, sys.stdout)


main()
