"""Handles of submitted work: a backtest, a batch, a pattern (CPM) task and
a scanner backtest. Each knows its status path, waits for the end and turns
the answer into DataFrames."""

from __future__ import annotations

import json
import sys
import time
from typing import TYPE_CHECKING, Any, Hashable, Mapping

import pandas as pd

from .calls import Awaiting, Blocking, Op, Sleep, call, reading
from .errors import TaskFailed, TaskTimeout, envelope_error
from . import glossary
from .frames import dated, records_frame
from .grids import original, short_names, typed, with_values
from .monte_carlo import MonteCarlo

if sys.version_info >= (3, 11):
    from typing import Self
else:
    from typing_extensions import Self

if TYPE_CHECKING:
    from .api import Api

FINAL = ("SUCCESS", "FAILED")


class Task:
    """A submitted task; `record` is the last status answer. Its blocking
    form (`BacktestTask`, ...) answers values, its async form
    (`AsyncBacktestTask`, ...) awaitables of the same values."""

    #: The status path; `{id}` is the task's id.
    status_path = ""
    #: Query parameters every status read sends.
    status_params: dict[str, str] = {}

    def __init__(self, client: "Api[Any, Any, Any, Any, Any]", task_id: str, record: dict[str, Any] | None = None):
        self.client = client
        self.id = task_id
        self.record: dict[str, Any] = record or {}

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.id} {self.record.get('status', 'PENDING')}>"

    def _status(self) -> Op[str]:
        """PENDING, RUNNING, SUCCESS or FAILED (read again unless final)."""
        if self.record.get("status") not in FINAL:
            yield from self._refresh(None)
        return str(self.record.get("status", "PENDING"))

    status = reading(_status)

    def _refresh(self, wait: float | None) -> Op[dict[str, Any]]:
        params = {**self.status_params, **({"wait": f"{wait:g}"} if wait else {})} or None
        self.record = yield from self.client._object("GET", self.status_path.format(id=self.id), params=params)
        return self.record

    @call
    def refresh(self, wait: float | None = None) -> Op[dict[str, Any]]:
        """The task's status read again (held up to `wait` seconds by the
        server until it changes, where it long-polls)."""
        return (yield from self._refresh(wait))

    def _wait(self, timeout: float) -> Op[None]:
        if self.record.get("status") in FINAL:
            # Ended when it was submitted (or last read): nothing to send.
            if self.record["status"] == "FAILED":
                raise TaskFailed(200, f"task {self.id} failed: {self._error()}", self.record)
            return
        deadline = time.monotonic() + timeout
        pause = 0.005
        long_poll = yield from self.client._long_poll(self.status_path)
        while True:
            left = deadline - time.monotonic()
            record = yield from self._refresh(min(left, long_poll) if long_poll and left > 0.001 else None)
            if record.get("status") in FINAL:
                break
            if time.monotonic() >= deadline:
                raise TaskTimeout(None, f"task {self.id} is still {record.get('status')} after {timeout:g} s", record)
            if not long_poll:
                yield Sleep(min(pause, max(deadline - time.monotonic(), 0)))
                pause = min(pause * 1.6, 1.0)
        if record["status"] == "FAILED":
            raise TaskFailed(200, f"task {self.id} failed: {self._error()}", record)

    def _error(self) -> str:
        return str(self.record.get("error") or self.record.get("result") or "no reason given")

    def _done(self) -> Op[dict[str, Any]]:
        if self.record.get("status") not in FINAL:
            yield from self._wait(600.0)
        elif self.record["status"] == "FAILED":
            raise TaskFailed(200, f"task {self.id} failed: {self._error()}", self.record)
        return self.record

    def _report_url(self) -> Op[str]:
        """The task as a page with charts, to open in a browser."""
        if "report_url" not in self.record:
            yield from self._refresh(None)
        return self.client.url + str(self.record["report_url"])

    report_url = reading(_report_url)


WAIT_DOC = """Waits until the task ends: with the server's long-poll where it
        offers one (`?wait=`), else polling with backoff from 5 ms to 1 s.

        Args:
            timeout: seconds to wait at most.

        Returns:
            This task (its own class: a `BacktestTask` stays one), SUCCESS.

        Raises:
            TaskFailed: the task ended FAILED (`message` says why).
            TaskTimeout: `timeout` ran out first (the task goes on)."""


class BlockingTask(Task, Blocking):
    """A task of a `Client`: its reads answer values."""

    def _drive(self, op: Op[Any]) -> Any:
        return self.client._drive(op)  # type: ignore[attr-defined]

    def wait(self, timeout: float = 600.0) -> Self:
        self._drive(self._wait(timeout))
        return self

    wait.__doc__ = WAIT_DOC


class AsyncTask(Task, Awaiting):
    """A task of an `AsyncClient`: its reads answer awaitables."""

    async def _drive(self, op: Op[Any]) -> Any:
        return await self.client._drive(op)  # type: ignore[attr-defined]

    async def wait(self, timeout: float = 600.0) -> Self:
        await self._drive(self._wait(timeout))
        return self

    wait.__doc__ = WAIT_DOC


class Backtest(Task):
    """A strategy backtest (`POST /backtest/start_backtest`): the reads of
    `BacktestTask` and `AsyncBacktestTask`."""

    status_path = "/backtest/status/{id}"

    def _raw(self) -> Op[dict[str, Any]]:
        """The result object as the server answers it (metrics and trade lists)."""
        record = yield from self._done()
        result: dict[str, Any] = record["result"]
        return result

    raw = reading(_raw)

    def _result(self) -> Op[pd.Series]:
        """The metrics under the glossary's names and units (docs/results.md:
        `total_return`, `sharpe`, `max_drawdown`, ... fractions, not percent)
        as a float Series; `attrs` holds `symbol`, `frequency`, `benchmark`,
        `warnings` and `defaults_applied` (the defaults that decided it).
        `raw` keeps the spec's names and percentages."""
        raw = yield from self._raw()
        series = glossary.metrics(raw, glossary.BACKTEST, self.id)
        series.attrs.update(symbol=raw.get("Symbol"), frequency=raw.get("Frequency"), benchmark=raw.get("Benchmark"),
                            warnings=list(raw.get("warnings") or []),
                            defaults_applied=dict(raw.get("defaults_applied") or {}))
        return series

    result = reading(_result)

    def _chart(self) -> Op[dict[str, Any]]:
        if not hasattr(self, "_chart_cache"):
            yield from self._done()
            self._chart_cache = yield from self.client._object("GET", f"/backtest/chart/{self.id}")
        return self._chart_cache

    def _equity(self) -> Op[pd.DataFrame]:
        """Per bar of the window, by a DatetimeIndex `Date`: `equity` and
        `cash` (in the capital's currency), `drawdown` (from the running
        peak, a fraction, 0 or negative), `daily_return` (the equity's return
        from the bar before, a fraction; NaN on the first bar), `benchmark`
        (the benchmark bought with the initial capital at the first close),
        and this kind's own `close` and `position` (units held at the close,
        negative short)."""
        chart = yield from self._chart()
        columns = ("equity", "cash", "drawdown", "daily_return", "benchmark", "close", "position")
        frame = pd.DataFrame({k: chart[k] for k in columns}).astype("float64")
        frame.index = glossary.as_index(chart["time"], "Date")
        frame.attrs["benchmark"] = chart.get("benchmark_symbol")
        return frame

    equity = reading(_equity)

    def _returns(self) -> Op[pd.Series]:
        """The equity's daily returns from the window's second bar on (the
        returns the metrics are computed from), by date: what quantstats and
        pyfolio take as they are."""
        frame = yield from self._equity()
        return glossary.returns_of(frame)

    returns = reading(_returns)

    def _trades(self) -> Op[pd.DataFrame]:
        """One row per trade, by its `entry_time`, in the glossary's columns:
        `exit_time`, `symbol`, `side`, `size` (units), `entry_price` and
        `exit_price` (fills after slippage), `fees`, `profit` (in money,
        after costs), `return` (the profit over the entry's value, a
        fraction), `bars_held`, `exit_reason` (`Signal`, `Stop Loss`, `Take
        Profit`, `Max Holding`, or `Open` for one still held at the end) and
        `mae` / `mfe` (the worst and best move while held, fractions of the
        entry fill)."""
        chart = yield from self._chart()
        rows = chart["trades"]
        columns = {c: [t.get(c) for t in rows] for c in glossary.TRADES}
        # The JSON dates an open trade's exit at the last bar (where the
        # figures close it); the glossary's exit time of an open trade is NaT.
        columns["exit_time"] = [None if t["exit_reason"] == "Open" else t["exit_time"] for t in rows]
        return glossary.trades_frame(columns, [t["entry_time"] for t in rows])

    trades = reading(_trades)

    @call
    def monte_carlo(self, draws: int = 1000, seed: int = 0, block: int | None = None) -> Op[MonteCarlo]:
        """The bootstrap of this run: its trades drawn again with
        replacement and its bar returns in circular blocks (`block` bars;
        default the cube root of their number), `draws` paths each. The
        same seed gives the same answer."""
        yield from self._done()
        raw = yield from self.client._json("GET", f"/backtest/monte-carlo/{self.id}", params=_monte_carlo_params(draws, seed, block))
        return MonteCarlo(raw)


class Batch(Task):
    """A batch of backtests (`POST /backtest/batch`): the reads of
    `BatchTask` and `AsyncBatchTask`."""

    status_path = "/backtest/batch/{id}"

    def __init__(self, client: "Api[Any, Any, Any, Any, Any]", task_id: str, record: dict[str, Any] | None = None, *,
                 submitted: dict[str, Any] | None = None, names: Mapping[str, str] | None = None):
        super().__init__(client, task_id, record)
        #: The body this client submitted (None for a batch read by its id).
        self.submitted = submitted
        self._given_names = dict(names or {})

    def _names(self) -> Op[dict[str, str]]:
        """Each grid key (its dotted paths) by the column name `results`
        gives it."""
        record = yield from self._done()
        return short_names(record.get("paths") or [], self._given_names)

    names = reading(_names)

    def _progress(self) -> Op[tuple[int, int]]:
        """(done, total) strategies."""
        record = self.record if self.record.get("status") in FINAL else (yield from self._refresh(None))
        return record.get("done", 0), record.get("total", 0)

    progress = reading(_progress)

    def _results(self) -> Op[pd.DataFrame]:
        """One row per strategy, indexed by its position in the batch: the
        varied parameters by their short names (`names`; integers and floats
        as such), `symbol`, then the metrics under the glossary's names and
        units, as a single backtest's `result` has them (`total_return`,
        `sharpe`, `max_drawdown`, ... fractions, float64; a grid of
        portfolios has `benchmark_return` where a strategy's rows have
        `buy_hold_return`, as a portfolio's `result`); a strategy that could
        not run has its `error` and NaN metrics."""
        if not hasattr(self, "_results_cache"):
            yield from self._done()
            frame = yield from self.client._arrow("GET", f"/backtest/batch/{self.id}/results", params={"format": "arrow"})
            frame = frame.set_index("index")
            names = yield from self._names()
            for key in names:
                if key in frame.columns:
                    frame[key] = typed(frame[key])
            for legacy, (name, scale) in glossary.BACKTEST.items():
                if legacy in frame.columns:
                    frame[legacy] = pd.to_numeric(frame[legacy]).astype("float64") * scale
            renamed = {**names, "Symbol": "symbol", **{k: v[0] for k, v in glossary.BACKTEST.items()}}
            if "Symbol" in frame.columns and frame["Symbol"].fillna("").eq("").all():
                # A grid of portfolios: its rows' `BuyHoldGain` is the
                # benchmark's change, as a portfolio's `benchmark_return`.
                renamed["BuyHoldGain"] = "benchmark_return"
            self._results_cache = frame.rename(columns=renamed)
        return self._results_cache

    results = reading(_results)

    @call
    def strategy(self, row: Hashable) -> Op[dict[str, Any]]:
        """The full strategy of row `row` (its label in `results`, as
        `idxmax()` gives it), as it ran; in a grid of portfolios, the
        portfolio's request body.

        Raises:
            ValueError: the batch was not submitted by this client object
                (the server keeps a batch's rows, not its body)."""
        if self.submitted is None:
            raise ValueError("the strategy of a row is known for batches submitted by this client object")
        if "strategies" in self.submitted:
            chosen: dict[str, Any] = self.submitted["strategies"][int(str(row))]  # batch order
            return chosen
        grid = self.submitted["grid"]
        results = yield from self._results()
        cells = results.loc[int(str(row))]
        names = yield from self._names()
        values = {key: original(grid, key, cells[name]) for key, name in names.items()}
        return with_values(self.submitted.get("portfolio") or self.submitted["strategy"], values)

    @call
    def heatmap(self, x: str, y: str, metric: str = "sharpe", *, plot: bool = False) -> Op[pd.DataFrame]:
        """`metric` over two varied parameters.

        Args:
            x, y: the parameters (by their names in `results`).
            metric: a metric column of `results`.
            plot: draw it too (matplotlib); its axes go to `attrs["ax"]`.

        Returns:
            `y`'s values as rows, `x`'s as columns, each cell the metric of
            the row with those values."""
        results = yield from self._results()
        pivot = results.pivot_table(index=y, columns=x, values=metric, aggfunc="first")
        if plot:
            import matplotlib.pyplot as plt

            fig, ax = plt.subplots()
            image = ax.imshow(pivot.to_numpy(), aspect="auto", origin="lower", cmap="viridis")
            ax.set_xticks(range(len(pivot.columns)), [str(c) for c in pivot.columns])
            ax.set_yticks(range(len(pivot.index)), [str(i) for i in pivot.index])
            ax.set_xlabel(x)
            ax.set_ylabel(y)
            ax.set_title(metric)
            fig.colorbar(image, ax=ax)
            pivot.attrs["ax"] = ax
        return pivot

    def _statistics(self) -> Op[pd.Series]:
        """Whether the best row is luck: the Deflated Sharpe Ratio
        (`deflated_sharpe_ratio`, `probabilistic_sharpe_ratio`,
        `expected_max_sharpe`, `best_index`, ...) and the Probability of
        Backtest Overfitting (`pbo`, `probability_of_loss`,
        `degradation_slope`, ...) as one Series; empty for a batch of one
        strategy. Statistics that could not be computed are absent, and
        `notes` says why."""
        record = yield from self._done()
        flat: dict[str, Any] = {}
        for key, value in (record.get("statistics") or {}).items():
            if isinstance(value, dict):
                flat.update({k: v for k, v in value.items() if not isinstance(v, list)})
            elif key == "notes":
                flat[key] = "; ".join(value)
            elif value is not None:
                flat[key] = value
        return pd.Series(flat, name=self.id, dtype=object)

    statistics = reading(_statistics)

    def _logits(self) -> Op[pd.DataFrame]:
        """The PBO's logit histogram: one row per bin (`from`, `to`,
        `count`; open ends are NaN)."""
        record = yield from self._done()
        bins = ((record.get("statistics") or {}).get("overfitting") or {}).get("logit_histogram", [])
        return pd.DataFrame(bins, columns=["from", "to", "count"]).astype({"from": float, "to": float})

    logits = reading(_logits)

    def _walk_forward(self) -> Op[pd.DataFrame]:
        """The walk-forward's windows, one row each, by the out-of-sample
        start: the in-sample and out-of-sample dates, the in-sample best
        (`best_index`, `params`, `score`), its returns in and out of sample
        and its `efficiency`. Empty for a batch without one."""
        record = yield from self._done()
        frame = pd.DataFrame((record.get("walk_forward") or {}).get("windows", []))
        if frame.empty:
            return frame
        for column in ("in_sample_start", "in_sample_end", "out_of_sample_end"):
            frame[column] = glossary.as_times(frame[column])
        frame.index = glossary.as_index(frame.pop("out_of_sample_start"), "out_of_sample_start")
        return frame

    walk_forward = reading(_walk_forward)

    def _walk_forward_equity(self) -> Op[pd.Series]:
        """The walk-forward's stitched out-of-sample equity (from 1), by
        session (`Date`)."""
        record = yield from self._done()
        points = (record.get("walk_forward") or {}).get("equity", [])
        index = glossary.as_index([p["time"] for p in points], "Date")
        return pd.Series([p["equity"] for p in points], index=index, name="equity", dtype=float)

    walk_forward_equity = reading(_walk_forward_equity)

    def _walk_forward_summary(self) -> Op[pd.Series]:
        """The walk-forward's stitched figures (`total_return`, `cagr`,
        `sharpe`, `max_drawdown`, `efficiency`, `profitable_windows`, ...)
        and its settings, as one Series."""
        record = yield from self._done()
        wf = dict(record.get("walk_forward") or {})
        flat = {k: v for k, v in wf.items() if k not in ("windows", "equity", "settings", "notes")}
        flat.update(wf.get("settings") or {})
        if wf.get("notes"):
            flat["notes"] = "; ".join(wf["notes"])
        return pd.Series(flat, name=self.id, dtype=object)

    walk_forward_summary = reading(_walk_forward_summary)

    @call
    def monte_carlo(self, row: int, draws: int = 1000, seed: int = 0, block: int | None = None) -> Op[MonteCarlo]:
        """The bootstrap of row `row` (its index in `results`), as
        `BacktestTask.monte_carlo` of its strategy run alone."""
        params = {"row": row, **_monte_carlo_params(draws, seed, block)}
        raw = yield from self.client._json("GET", f"/backtest/batch/{self.id}/monte-carlo", params=params)
        return MonteCarlo(raw)

    def _error(self) -> str:
        return str(self.record.get("error") or "no reason given")


def _monte_carlo_params(draws: int, seed: int, block: int | None) -> dict[str, Any]:
    params = {"draws": draws, "seed": seed}
    if block is not None:
        params["block"] = block
    return params


class Analytics(Task):
    """An analytics service task: its answer is the envelope's `data`."""

    def _raw(self) -> Op[dict[str, Any]]:
        """The answer's `data` as the server gives it.

        Raises:
            NoData: the task ended with nothing to answer (its `code` 407:
                no pattern matched, no item passed the filters)."""
        record = yield from self._done()
        envelope = record.get("result") or {}
        refused = envelope_error(envelope)
        if refused is not None:
            raise refused
        data: dict[str, Any] = envelope.get("data") or {}
        return data

    raw = reading(_raw)


class Cpm(Analytics):
    """A pattern (CPM) scan or pattern backtest: the reads of `CpmTask` and
    `AsyncCpmTask`."""

    status_path = "/cpm/status/{id}"

    def _patterns(self) -> Op[pd.DataFrame]:
        """The matched windows, one row each."""
        raw = yield from self._raw()
        return records_frame(raw.get("patterns", []))

    patterns = reading(_patterns)

    def _result(self) -> Op[pd.Series]:
        """A pattern backtest's metrics (`TOTAL RETURN`, `WIN RATE`, ...)."""
        raw = yield from self._raw()
        info = raw.get("backtest_info") or {}
        return pd.Series({k: v for k, v in info.items() if not isinstance(v, (list, dict))}, name=self.id, dtype=object)

    result = reading(_result)

    def _trades(self) -> Op[pd.DataFrame]:
        """A pattern backtest's trades, by the match's start date."""
        raw = yield from self._raw()
        rows = (raw.get("backtest_info") or {}).get("trades", [])
        return dated(records_frame(rows), "StartDate")

    trades = reading(_trades)


class ScannerBacktest(Analytics):
    """A scanner backtest (`POST /smart-scanner-backtest/start`): the reads
    of `ScannerBacktestTask` and `AsyncScannerBacktestTask`. `raw` keeps
    the spec's names and percentages; the frames speak the glossary."""

    status_path = "/smart-scanner-backtest/status/{id}"

    def _result(self) -> Op[pd.Series]:
        """The metrics under the glossary's names and units (`total_return`,
        `max_drawdown`, `win_rate`, ... fractions) as a float Series."""
        data = yield from self._raw()
        return glossary.metrics(data, glossary.SCANNER_BACKTEST, self.id)

    result = reading(_result)

    def _equity(self) -> Op[pd.DataFrame]:
        """Per session, by a DatetimeIndex `Date`: `equity`, `cash`,
        `drawdown` and `daily_return` (fractions)."""
        data = yield from self._raw()
        frame = pd.DataFrame({"equity": data.get("equity", []), "cash": data.get("cash", [])}, dtype="float64")
        frame.index = glossary.as_index(data.get("dates", []), "Date")
        capital = float(self._params().get("total_capital") or frame["equity"].iloc[0])
        return glossary.with_drawdown_and_returns(frame, capital)

    equity = reading(_equity)

    def _returns(self) -> Op[pd.Series]:
        """The equity's daily returns from the second session on."""
        frame = yield from self._equity()
        return glossary.returns_of(frame)

    returns = reading(_returns)

    def _trades(self) -> Op[pd.DataFrame]:
        """One row per trade, by its `entry_time`, in the glossary's columns
        (as a backtest's `trades`): `fees` are the commissions of both sides
        (the task's `commission`, a percent of each side's value), `return`
        the profit over the entry's value, `bars_held` the sessions from
        entry to exit (to the last session while open); `mae`/`mfe` are NaN
        (the simulation does not keep the bars between)."""
        data = yield from self._raw()
        arrays = data.get("result") or {}
        entry = list(arrays.get("Start Date", []))
        size = pd.Series(arrays.get("Shares", []), dtype="float64")
        paid = pd.Series(arrays.get("Price", []), dtype="float64")
        got = pd.Series(arrays.get("Close", []), dtype="float64")
        profit = pd.Series(arrays.get("FloatProfit", []), dtype="float64")
        rate = float(self._params().get("commission") or 0.0) / 100.0
        at = {d: i for i, d in enumerate(data.get("dates", []))}
        last = len(at) - 1
        exits = list(arrays.get("Exit Date", [None] * len(entry)))
        columns = {
            "exit_time": exits,
            "symbol": arrays.get("Symbol", []),
            "side": [str(d).lower() for d in arrays.get("Direction", [])],
            "size": size,
            "entry_price": paid,
            "exit_price": got,
            "fees": rate * size * (paid + got),
            "profit": profit,
            "return": profit / (size * paid),
            "bars_held": [(at[x] if x is not None else last) - at[e] for e, x in zip(entry, exits)],
            "exit_reason": [glossary.SCANNER_EXIT_REASONS.get(r, r) for r in arrays.get("OrderStatus", [])],
        }
        return glossary.trades_frame(columns, entry)

    trades = reading(_trades)

    def _params(self) -> dict[str, Any]:
        """The submitted parameters (the task object holds them as JSON text)."""
        params = self.record.get("params")
        if isinstance(params, str):
            params = json.loads(params)
        return dict(params or {})


class Portfolio(Task):
    """A portfolio backtest (`POST /backtest/portfolio`): the reads of
    `PortfolioTask` and `AsyncPortfolioTask`. Waiting reads the result's
    figures alone (`view=summary`: a few KB where the whole result of 500
    symbols runs to MBs); each table comes as Arrow when first read."""

    status_path = "/backtest/portfolio/{id}"
    status_params = {"view": "summary"}

    def _raw(self) -> Op[dict[str, Any]]:
        """The whole result as the server gives it (read once, on first use)."""
        if not hasattr(self, "_raw_cache"):
            yield from self._done()
            record = yield from self.client._object("GET", self.status_path.format(id=self.id), params={"view": "full"})
            self._raw_cache: dict[str, Any] = record["result"]
        return self._raw_cache

    raw = reading(_raw)

    def _table(self, name: str) -> Op[pd.DataFrame]:
        """The task's table `name` (Arrow), read once."""
        tables: dict[str, pd.DataFrame] = self.__dict__.setdefault("_tables", {})
        if name not in tables:
            yield from self._done()
            tables[name] = yield from self.client._arrow("GET", f"/backtest/portfolio/{self.id}/{name}")
        return tables[name].copy()

    def _result(self) -> Op[pd.Series]:
        """The metrics under the glossary's names and units, as a single
        backtest's `result` (fractions, float64), with the portfolio's own
        (`average_exposure`, `annual_turnover`, `crowded_out`) and those
        against the benchmark (`alpha`, `beta`, `tracking_error`,
        `information_ratio`, `up_capture`, `down_capture`,
        `benchmark_return`); `attrs` holds `mode`, `universe`, `benchmark`,
        `start_date`, `end_date`, `warnings` and `defaults_applied`."""
        record = yield from self._done()
        summary: dict[str, Any] = record["result"]
        found = {k: v for k, v in summary.items() if k in glossary.METRICS and v is not None}
        found.update({k: v for k, v in (summary.get("relative") or {}).items() if v is not None})
        series = glossary.ordered(found, self.id)
        series.attrs.update({k: summary.get(k) for k in ("mode", "universe", "benchmark", "start_date", "end_date")})
        series.attrs.update(warnings=list(summary.get("warnings") or []),
                            defaults_applied=dict(summary.get("defaults_applied") or {}))
        return series

    result = reading(_result)

    def _equity(self) -> Op[pd.DataFrame]:
        """Per session, by a DatetimeIndex `Date`: `equity`, `cash`,
        `drawdown` and `daily_return` (fractions), `benchmark` (scaled to
        the capital), and this kind's own `exposure` (the positions' value)
        and `traded` (value bought and sold that session)."""
        record = yield from self._done()
        frame = yield from self._table("equity")
        dates = frame.pop("date")
        capital = float(record["result"]["initial_capital"])
        frame = glossary.with_drawdown_and_returns(frame.astype("float64"), capital)
        frame.index = glossary.as_index(dates, "Date")
        return frame[["equity", "cash", "drawdown", "daily_return", "benchmark", "exposure", "traded"]]

    equity = reading(_equity)

    def _returns(self) -> Op[pd.Series]:
        """The equity's daily returns from the window's second session on:
        what quantstats takes as it is."""
        frame = yield from self._equity()
        return glossary.returns_of(frame)

    returns = reading(_returns)

    def _trades(self) -> Op[pd.DataFrame]:
        """Round trips (a position from its first buy until flat again), by
        `entry_time`, in the glossary's columns (as a backtest's `trades`;
        `exit_time` NaT while open; `mae`/`mfe` NaN)."""
        frame = yield from self._table("trades")
        columns = {c: frame[c] for c in glossary.TRADES if c in frame.columns}
        return glossary.trades_frame(columns, frame["entry_time"])

    trades = reading(_trades)

    def _orders(self) -> Op[pd.DataFrame]:
        """Every fill, by its `time`: `symbol`, `side` (`buy` or `sell`),
        `size` (units), `price` (after slippage) and `fees`."""
        frame = yield from self._table("orders")
        return glossary.orders_frame({c: frame[c] for c in glossary.ORDERS}, frame["time"])

    orders = reading(_orders)

    def _weights(self) -> Op[pd.DataFrame]:
        """Each symbol's weight at each month's last session: a column per
        symbol held at some point (0 when not held), by a DatetimeIndex `Date`."""
        frame = yield from self._table("weights")
        dates = frame.pop("date")
        frame = frame.astype("float64")
        frame.index = glossary.as_index(dates, "Date")
        return frame.reindex(columns=sorted(frame.columns))

    weights = reading(_weights)

    def _contributions(self) -> Op[pd.DataFrame]:
        """Each traded symbol's `profit` (money) and `contribution` (the
        profit over the initial capital, a fraction), largest first, by
        `symbol`."""
        frame = yield from self._table("contributions")
        return frame.set_index("symbol")

    contributions = reading(_contributions)


class BacktestTask(Backtest, BlockingTask):
    """A backtest of a `Client`."""


class BatchTask(Batch, BlockingTask):
    """A batch of a `Client`."""


class CpmTask(Cpm, BlockingTask):
    """A pattern task of a `Client`."""


class ScannerBacktestTask(ScannerBacktest, BlockingTask):
    """A scanner backtest of a `Client`."""


class AsyncBacktestTask(Backtest, AsyncTask):
    """A backtest of an `AsyncClient`: `await task.wait()`, `await task.equity`."""


class AsyncBatchTask(Batch, AsyncTask):
    """A batch of an `AsyncClient`."""


class AsyncCpmTask(Cpm, AsyncTask):
    """A pattern task of an `AsyncClient`."""


class AsyncScannerBacktestTask(ScannerBacktest, AsyncTask):
    """A scanner backtest of an `AsyncClient`."""


class PortfolioTask(Portfolio, BlockingTask):
    """A portfolio backtest of a `Client`."""


class AsyncPortfolioTask(Portfolio, AsyncTask):
    """A portfolio backtest of an `AsyncClient`."""
