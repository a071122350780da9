"""Constraints between fields that JSON Schema cannot state. Each hook keeps
every schema constraint of the generated request and adds one of these, so a
generated request is one a careful client could send; the service's answer
to the same request without the fix is a 400 naming the field, which the
end-to-end tests check.
"""

import datetime

import schemathesis

# Seasonality's default years end at the data's latest year and start 20
# years before it; one year given alone is completed with itself.


def _order(d, low, high):
    """Swaps two values of one type (numbers, or ISO dates as text) out of order."""
    a, b = d.get(low), d.get(high)
    if type(a) is type(b) and isinstance(a, (int, str)) and a > b:
        d[low], d[high] = d[high], d[low]


def _path(ctx):
    return ctx.operation.path if ctx is not None and ctx.operation is not None else ""


def _ints(q, *names):
    """The named values as integers (query values may come as text); None
    when one is not an integer, and the hook leaves the query alone."""
    out = {}
    for n in names:
        if n in q:
            try:
                out[n] = int(q[n])
            except (TypeError, ValueError):
                return None
    return out


@schemathesis.hook
def map_query(ctx, query):
    if query and _path(ctx).startswith(("/cpm/scan", "/views/pattern")):
        return _pattern(dict(query), _path(ctx))
    if query and _path(ctx) == "/views/correlation":
        # The fields of POST /symbol_corr, the comparisons as a list.
        return _correlation(dict(query))
    if query and _path(ctx).startswith("/smart-stock-scanner/single"):
        q = dict(query)
        _order(q, "start_date", "end_date")
        return q
    if query and _path(ctx).startswith("/ws/prices"):
        q = dict(query)
        _order(q, "start", "end")
        return q
    if not query or not _path(ctx).startswith(("/seasonality", "/views/seasonality")):
        return query
    q = dict(query)
    v = _ints(q, "start_year", "end_year", "entry_day", "exit_day", "month", "day")
    if v is None:
        return query
    # start_year <= end_year; a year given alone stands for both.
    if "start_year" in v and "end_year" not in v:
        v["end_year"] = v["start_year"]
    if "end_year" in v and "start_year" not in v:
        v["start_year"] = v["end_year"]
    _order(v, "start_year", "end_year")
    # exit_day lies 1 to 252 sessions after entry_day.
    if "exit_day" in v:
        entry = v.setdefault("entry_day", 100)
        v["exit_day"] = entry + 1 + (v["exit_day"] - entry - 1) % 252
    # day exists in month (February has 29 in leap years); values outside
    # the schema (negative cases) are left as generated.
    if "day" in v and 1 <= v.get("month", 1) <= 12:
        month = v.setdefault("month", 1)
        days = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
        v["day"] = (v["day"] - 1) % days + 1
    q.update(v)
    return q


# Names the schema cannot enumerate because they are data: tickers with
# prices in the sample set and a Sentiment indicator of its catalog.
TICKERS = {"SPX", "NDX", "IVV", "TLT", "GLD"}
SENTIMENT = "S&P 500 Index Optix"


def _strategy(b):
    """A generated strategy with real names, its dates in order, and each
    Scoring threshold within its conditions."""
    for key in ("symbol", "benchmark"):
        if key in b and str(b[key]).upper() not in TICKERS:
            b[key] = "SPX"
    # start_date defaults to 1800-10-01, so an end_date alone must not precede it.
    if isinstance(b.get("end_date"), str) and "start_date" not in b and b["end_date"] < "1800-10-01":
        b["start_date"] = b["end_date"]
    _order(b, "start_date", "end_date")
    for side in ("entry", "exit"):
        block = b.get(side)
        if not isinstance(block, dict):
            continue
        conditions = block.get("condition") or block.get("steps")
        conditions = conditions if isinstance(conditions, list) else [conditions]
        for c in conditions:
            signal = c.get("signal") if isinstance(c, dict) else None
            if isinstance(signal, dict) and signal.get("type") not in ("Technical", "Symbol"):
                signal["name"] = SENTIMENT
        t = block.get("score_threshold")
        if isinstance(t, (int, float)) and not isinstance(t, bool) and t > len(conditions):
            block["score_threshold"] = len(conditions)
    return b


def _figure(by):
    """A momentum or volatility lookback the data can serve (1-5000 and
    2-5000 bars; the schema cannot bound a number inside a one-key object);
    a technical signal by a name the catalog has."""
    if "momentum" in by and isinstance(by["momentum"], int):
        return {"momentum": max(1, min(by["momentum"], 5000))}
    if "volatility" in by and isinstance(by["volatility"], int):
        return {"volatility": max(2, min(by["volatility"], 5000))}
    return {"technical": {"name": "RSI"}}


def _portfolio(b):
    """A generated portfolio with stored symbols, its dates in order, one
    mode of the two (weights when neither or both came), rules that read
    those symbols: a top/bottom k within the universe, by momentum or
    volatility, and fixed weights summing to 1 over the whole universe."""
    universe = b.get("universe")
    if isinstance(universe, list) and universe:
        b["universe"] = sorted(TICKERS)[: max(1, min(len(universe), len(TICKERS)))]
    if "benchmark" in b and str(b["benchmark"]).upper() not in TICKERS:
        b["benchmark"] = "SPX"
    b.pop("start_date", None)
    b.pop("end_date", None)
    if isinstance(b.get("signals"), dict) and not isinstance(b.get("weights"), dict):
        signals = _strategy(dict(b["signals"]))
        rank = signals.get("rank_by")
        if isinstance(rank, dict) and isinstance(rank.get("by"), dict):
            signals["rank_by"] = {**rank, "by": _figure(rank["by"])}
        b["signals"] = signals
        return b
    b.pop("signals", None)
    w = dict(b["weights"]) if isinstance(b.get("weights"), dict) else {"schedule": {"every": "month"}}
    n = len(b.get("universe") or []) or 1
    select = w.get("select")
    if isinstance(select, dict) and select.get("method") in ("top", "bottom"):
        select = dict(select)
        # JSON integers may come as whole floats (218.0).
        if isinstance(select.get("k"), (int, float)):
            select["k"] = max(1, min(int(select["k"]), n))
        if isinstance(select.get("by"), dict):
            # Selections rank by momentum or volatility only.
            by = _figure(select["by"])
            select["by"] = {"momentum": 20} if "technical" in by else by
        w["select"] = select
    weighting = w.get("weighting")
    if isinstance(weighting, dict) and weighting.get("method") == "fixed":
        w["select"] = {"method": "all"}
        w["weighting"] = {"method": "fixed", "weights": {t: 1 / n for t in b.get("universe") or []}}
    b["weights"] = w
    return b


# A Customize template that holds enough sessions of every ticker above.
TEMPLATE = ("2024-03-01", "2024-05-31")


def _pattern(b, path):
    """A pattern-match request with a real ticker, a template the data can
    serve (in Customize mode: its dates in order, 5 sessions to 5 years,
    inside the sample's years), a moving-average period when a filter is
    set, and a universe only where one is searched: scan tasks."""
    if "symbol" in b and str(b["symbol"]).upper() not in TICKERS:
        b["symbol"] = "SPX"
    if not b.get("system_pattern"):
        start, end = b.get("start_date"), b.get("end_date")
        ok = isinstance(start, str) and isinstance(end, str) and "1991-01-01" <= min(start, end)
        if ok:
            _order(b, "start_date", "end_date")
            days = (_date(b["end_date"]) - _date(b["start_date"])).days if _date(b["start_date"]) and _date(b["end_date"]) else -1
            ok = 14 <= days <= 1500 and b["end_date"] <= "2026-11-20"
        if not ok:
            b["start_date"], b["end_date"] = TEMPLATE
        # A template holds at least 5 bars of its timeframe.
        need = {"weekly": 42, "monthly": 190}.get(str(b.get("timeframe", "")).lower(), 0)
        end = _date(b["end_date"])
        if end and need and (end - _date(b["start_date"])).days < need:
            b["start_date"] = (end - datetime.timedelta(days=need)).isoformat()
    condition = _ints(b, "ma_condition")
    if condition and condition.get("ma_condition") in (1, 2) and b.get("ma") is None:
        b["ma"] = 20
    if path == "/cpm/scan/start" and b.get("universe") not in (None, ""):
        b["universe"] = "sp500"
    elif path != "/cpm/scan/start":
        b.pop("universe", None)
    return b


def _scanner_backtest(b):
    """A scanner backtest inside the sample's sessions (a recent quarter),
    with real signal names and long/short shares that sum to at most 1."""
    start, end = b.get("start_date"), b.get("end_date")
    # A recent range keeps the tasks a fuzzing run queues short.
    if not (isinstance(start, str) and isinstance(end, str) and "2026-06-01" <= min(start, end) and max(start, end) <= "2026-11-20"):
        b["start_date"], b["end_date"] = "2026-08-03", "2026-11-20"
    _order(b, "start_date", "end_date")
    if isinstance(b.get("signals"), list):
        b["signals"] = ["All"]
    for key in ("profit_target_range", "stop_loss_range", "time_in_market_range", "trend_range", "reltrend_range", "optix_range"):
        v = b.get(key)
        if isinstance(v, str) and v.count("-") == 1:
            low, high = v.split("-")
            try:
                if float(low) > float(high):
                    b[key] = f"{high}-{low}"
            except ValueError:
                pass
    ratio = b.get("long_short_ratio")
    if isinstance(ratio, str) and "/" in ratio:
        try:
            long, short = (float(x) for x in ratio.split("/"))
            if long + short > 1 or long + short <= 0:
                b["long_short_ratio"] = "1.0/0.0"
        except ValueError:
            pass
    return b


def _date(text):
    import datetime

    try:
        return datetime.date.fromisoformat(text)
    except (TypeError, ValueError):
        return None


#: Where generated webhook endpoints point: loopback, a closed port.
LOOPBACK_RECEIVER = "http://127.0.0.1:9/schemathesis"


@schemathesis.hook
def map_body(ctx, body):
    if not isinstance(body, dict):
        return body
    path = _path(ctx)
    b = dict(body)
    if path == "/webhooks":
        # A receiver that exists on no network (the server runs with
        # --webhooks-allow-loopback): registration takes it, deliveries to it
        # fail and are logged. Any other URL needs DNS, which a test run lacks.
        b["url"] = LOOPBACK_RECEIVER
        return b
    if path.startswith("/cpm/"):
        return _pattern(b, path)
    if path == "/smart-scanner-backtest/start":
        return _scanner_backtest(b)
    if path in ("/backtest/validate", "/backtest/start_backtest"):
        return _strategy(b)
    if path == "/backtest/portfolio":
        return _portfolio(b)
    if path == "/backtest/batch":
        # Each strategy (or portfolio) as for its own route; a grid's values
        # may make one invalid (a 400 naming its index), so the grid is left out.
        if isinstance(b.get("strategy"), dict):
            b["strategy"] = _strategy(dict(b["strategy"]))
            b.pop("grid", None)
        if isinstance(b.get("strategies"), list):
            b["strategies"] = [_strategy(dict(x)) if isinstance(x, dict) else x for x in b["strategies"]]
        if isinstance(b.get("portfolio"), dict):
            # A grid of portfolios: the portfolio as for its own route.
            b["portfolio"] = _portfolio(dict(b["portfolio"]))
            b.pop("grid", None)
            w = b.get("walk_forward")
            if isinstance(w, dict):
                # Windows of a year at least: each window runs the portfolio
                # again, and a fuzzed 2-session window would be thousands.
                w = dict(w)
                for k in ("in_sample", "out_of_sample"):
                    if isinstance(w.get(k), int) and not isinstance(w.get(k), bool):
                        w[k] = max(w[k], 252)
                b["walk_forward"] = w
        return b
    if path in ("/symbol_corr", "/symbol_beta", "/asset_corr"):
        _order(b, "start_date", "end_date")
    if path == "/pattern_corr":
        _order(b, "referenceStartDate", "referenceEndDate")
        _order(b, "comparisonStartDate", "comparisonEndDate")
    if path in ("/symbol_corr", "/symbol_beta"):
        return _correlation(b)
    return b


def _correlation(b):
    """Dates in order and at least one comparison other than the benchmark."""
    _order(b, "start_date", "end_date")
    if not isinstance(b.get("benchmark"), str):
        return b
    bench = b["benchmark"].strip().upper()
    others = b.get("stock_comparison")
    if isinstance(others, list) and all(str(t).strip().upper() == bench for t in others):
        b["stock_comparison"] = list(others) + [bench + "X"]
    if isinstance(others, str) and all(t.strip().upper() == bench for t in others.split(",")):
        b["stock_comparison"] = others + "," + bench + "X"
    return b
