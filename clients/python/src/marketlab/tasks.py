"""Handles of submitted work: a backtest, a batch, a pattern (CPM) task and
a scanner backtest. Each knows its status path, waits for the end and turns
the answer into DataFrames."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Hashable, Mapping, TypeVar

import pandas as pd

from .errors import TaskFailed, TaskTimeout
from .frames import columns_frame, dated, from_arrow, records_frame
from .grids import original, short_names, typed, with_values
from .monte_carlo import MonteCarlo

if TYPE_CHECKING:
    from .client import Client

FINAL = ("SUCCESS", "FAILED")
TaskT = TypeVar("TaskT", bound="Task")


class Task:
    """A submitted task. `wait()` returns it once SUCCESS (raises
    `TaskFailed` on FAILED); `record` is the last status answer."""

    #: The status path; `{id}` is the task's id.
    status_path = ""

    def __init__(self, client: "Client", task_id: str, record: dict[str, Any] | None = None):
        self.client = client
        self.id = task_id
        self.record: dict[str, Any] = record or {}

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.id} {self.status}>"

    @property
    def status(self) -> str:
        """PENDING, RUNNING, SUCCESS or FAILED (read again unless final)."""
        if self.record.get("status") not in FINAL:
            self.refresh()
        return str(self.record.get("status", "PENDING"))

    def refresh(self, wait: float | None = None) -> dict[str, Any]:
        params = {"wait": f"{wait:g}"} if wait else None
        self.record = self.client._object("GET", self.status_path.format(id=self.id), params=params)
        return self.record

    def wait(self: TaskT, timeout: float = 600.0) -> TaskT:
        """Blocks until the task ends: with the server's long-poll where it
        offers one (`?wait=`), else polling with backoff from 5 ms to 1 s.

        Args:
            timeout: seconds to wait at most.

        Returns:
            This task (its own class: a `BacktestTask` stays one), SUCCESS.

        Raises:
            TaskFailed: the task ended FAILED (`message` says why).
            TaskTimeout: `timeout` ran out first (the task goes on)."""
        deadline = time.monotonic() + timeout
        pause = 0.005
        long_poll = self.client._long_poll(self.status_path)
        while True:
            left = deadline - time.monotonic()
            record = self.refresh(wait=min(left, long_poll) if long_poll and left > 0.001 else None)
            if record.get("status") in FINAL:
                break
            if time.monotonic() >= deadline:
                raise TaskTimeout(None, f"task {self.id} is still {record.get('status')} after {timeout:g} s", record)
            if not long_poll:
                time.sleep(min(pause, max(deadline - time.monotonic(), 0)))
                pause = min(pause * 1.6, 1.0)
        if record["status"] == "FAILED":
            raise TaskFailed(200, f"task {self.id} failed: {self._error()}", record)
        return self

    def _error(self) -> str:
        return str(self.record.get("error") or self.record.get("result") or "no reason given")

    def _done(self) -> dict[str, Any]:
        if self.record.get("status") not in FINAL:
            self.wait()
        elif self.record["status"] == "FAILED":
            raise TaskFailed(200, f"task {self.id} failed: {self._error()}", self.record)
        return self.record

    @property
    def report_url(self) -> str:
        """The task as a page with charts, to open in a browser."""
        if "report_url" not in self.record:
            self.refresh()
        return self.client.url + str(self.record["report_url"])


class BacktestTask(Task):
    """A strategy backtest (`POST /backtest/start_backtest`)."""

    status_path = "/backtest/status/{id}"

    @property
    def raw(self) -> dict[str, Any]:
        """The result object as the server answers it (metrics and trade lists)."""
        result: dict[str, Any] = self._done()["result"]
        return result

    @property
    def result(self) -> pd.Series:
        """The metrics (Total Return (%), Sharpe Ratio, ...) as a Series;
        `attrs["warnings"]` holds the run's warnings and
        `attrs["defaults_applied"]` the defaults that decided it."""
        raw = self.raw
        scalars = {k: v for k, v in raw.items() if not isinstance(v, (list, dict))}
        series = pd.Series(scalars, name=self.id, dtype=object)
        series.attrs["warnings"] = list(raw.get("warnings") or [])
        series.attrs["defaults_applied"] = dict(raw.get("defaults_applied") or {})
        return series

    def _chart(self) -> dict[str, Any]:
        if not hasattr(self, "_chart_cache"):
            self._done()
            self._chart_cache = self.client._object("GET", f"/backtest/chart/{self.id}")
        return self._chart_cache

    @property
    def equity(self) -> pd.DataFrame:
        """Per bar of the window, indexed by date: `close`, `equity` (in
        the capital's currency), `drawdown` (%, 0 or negative),
        `position` (units held at the close, negative short), `cash`,
        `daily_return` (the equity's return from the bar before, a
        fraction; NaN on the first bar) and `benchmark` (the benchmark
        bought with the initial capital at the first close)."""
        chart = self._chart()
        columns = ("close", "equity", "drawdown", "position", "cash", "daily_return", "benchmark")
        frame = pd.DataFrame({k: chart[k] for k in columns}).astype("float64")
        frame.index = pd.DatetimeIndex(pd.to_datetime(pd.Series(chart["time"])), name="Date")
        frame.attrs["benchmark"] = chart.get("benchmark_symbol")
        return frame

    @property
    def returns(self) -> pd.Series:
        """The equity's daily returns from the window's second bar on (the
        returns the metrics are computed from), by date: what quantstats
        and pyfolio take as they are."""
        r = self.equity["daily_return"].iloc[1:]
        r.name = "returns"
        return r

    @property
    def trades(self) -> pd.DataFrame:
        """One row per trade, indexed by its entry time: `exit_time`,
        `entry_price` and `exit_price` (fills before slippage),
        `return_pct` (after costs), `size` (units), `profit` (in money,
        after costs), `bars_held`, `exit_reason` (`Signal`, `Stop Loss`,
        `Take Profit`, `Max Holding`, or `Open` for one still held at the
        end) and `mae_pct` / `mfe_pct` (the worst and best move while held,
        % of the entry fill)."""
        chart = self._chart()
        columns = ["entry_time", "exit_time", "entry_price", "exit_price", "return_pct", "size", "profit",
                   "bars_held", "exit_reason", "mae_pct", "mfe_pct"]
        frame = pd.DataFrame(chart["trades"], columns=columns)
        frame["bars_held"] = frame["bars_held"].astype("int64")
        frame["exit_time"] = pd.to_datetime(frame["exit_time"])
        frame.index = pd.DatetimeIndex(pd.to_datetime(frame.pop("entry_time")), name="entry_time")
        return frame

    def monte_carlo(self, draws: int = 1000, seed: int = 0, block: int | None = None) -> MonteCarlo:
        """The bootstrap of this run: its trades drawn again with
        replacement and its bar returns in circular blocks (`block` bars;
        default the cube root of their number), `draws` paths each. The
        same seed gives the same answer."""
        self._done()
        return MonteCarlo(self.client._json("GET", f"/backtest/monte-carlo/{self.id}", params=_monte_carlo_params(draws, seed, block)))


class BatchTask(Task):
    """A batch of backtests (`POST /backtest/batch`)."""

    status_path = "/backtest/batch/{id}"

    def __init__(self, client: "Client", task_id: str, record: dict[str, Any] | None = None, *,
                 submitted: dict[str, Any] | None = None, names: Mapping[str, str] | None = None):
        super().__init__(client, task_id, record)
        #: The body this client submitted (None for a batch read by its id).
        self.submitted = submitted
        self._given_names = dict(names or {})

    @property
    def names(self) -> dict[str, str]:
        """Each grid key (its dotted paths) by the column name `results` gives it."""
        paths = self._done().get("paths") or []
        return short_names(paths, self._given_names)

    @property
    def progress(self) -> tuple[int, int]:
        """(done, total) strategies."""
        record = self.record if self.record.get("status") in FINAL else self.refresh()
        return record.get("done", 0), record.get("total", 0)

    @property
    def results(self) -> pd.DataFrame:
        """One row per strategy, indexed by its position in the batch: the
        varied parameters by their short names (`names`; integers and
        floats as such) then the metrics (`Total Return (%)`, `Sharpe
        Ratio`, `Max Drawdown`, ...); a strategy that could not run has its
        `error`."""
        if not hasattr(self, "_results"):
            self._done()
            body = self.client._arrow("GET", f"/backtest/batch/{self.id}/results", params={"format": "arrow"})
            frame = from_arrow(body).set_index("index")
            names = self.names
            for key in names:
                if key in frame.columns:
                    frame[key] = typed(frame[key])
            self._results = frame.rename(columns=names)
        return self._results

    def strategy(self, row: Hashable) -> dict[str, Any]:
        """The full strategy of row `row` (its label in `results`, as
        `idxmax()` gives it), as it ran.

        Raises:
            ValueError: the batch was not submitted by this client object
                (the server keeps a batch's rows, not its body)."""
        if self.submitted is None:
            raise ValueError("the strategy of a row is known for batches submitted by this client object")
        if "strategies" in self.submitted:
            chosen: dict[str, Any] = self.submitted["strategies"][int(str(row))]  # batch order
            return chosen
        grid = self.submitted["grid"]
        position = int(str(row))
        cells = self.results.loc[position]
        values = {key: original(grid, key, cells[name]) for key, name in self.names.items()}
        return with_values(self.submitted["strategy"], values)

    def heatmap(self, x: str, y: str, metric: str = "Sharpe Ratio", *, plot: bool = False) -> pd.DataFrame:
        """`metric` over two varied parameters: `y`'s values as rows, `x`'s
        as columns (by their names in `results`); with `plot`, drawn too
        (matplotlib), its axes in `attrs["ax"]`."""
        pivot = self.results.pivot_table(index=y, columns=x, values=metric, aggfunc="first")
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

    @property
    def statistics(self) -> pd.Series:
        """Whether the best row is luck: the Deflated Sharpe Ratio
        (`deflated_sharpe_ratio`, `probabilistic_sharpe_ratio`,
        `expected_max_sharpe`, `best_index`, ...) and the Probability of
        Backtest Overfitting (`pbo`, `probability_of_loss`,
        `degradation_slope`, ...) as one Series; empty for a batch of one
        strategy. Statistics that could not be computed are absent, and
        `notes` says why."""
        st = self._done().get("statistics") or {}
        flat: dict[str, Any] = {}
        for key, value in st.items():
            if isinstance(value, dict):
                flat.update({k: v for k, v in value.items() if not isinstance(v, list)})
            elif key == "notes":
                flat[key] = "; ".join(value)
            elif value is not None:
                flat[key] = value
        return pd.Series(flat, name=self.id, dtype=object)

    @property
    def logits(self) -> pd.DataFrame:
        """The PBO's logit histogram: one row per bin (`from`, `to`,
        `count`; open ends are NaN)."""
        st = self._done().get("statistics") or {}
        bins = (st.get("overfitting") or {}).get("logit_histogram", [])
        return pd.DataFrame(bins, columns=["from", "to", "count"]).astype({"from": float, "to": float})

    @property
    def walk_forward(self) -> pd.DataFrame:
        """The walk-forward's windows, one row each, indexed by the
        out-of-sample start: the in-sample and out-of-sample dates, the
        in-sample best (`best_index`, `params`, `score`), its returns in and
        out of sample and its `efficiency`. Empty for a batch without one."""
        wf = self._done().get("walk_forward") or {}
        frame = pd.DataFrame(wf.get("windows", []))
        if frame.empty:
            return frame
        for column in ("in_sample_start", "in_sample_end", "out_of_sample_end"):
            frame[column] = pd.to_datetime(frame[column])
        frame.index = pd.DatetimeIndex(pd.to_datetime(frame.pop("out_of_sample_start")), name="out_of_sample_start")
        return frame

    @property
    def walk_forward_equity(self) -> pd.Series:
        """The walk-forward's stitched out-of-sample equity (from 1), by bar."""
        points = (self._done().get("walk_forward") or {}).get("equity", [])
        index = pd.DatetimeIndex(pd.to_datetime([p["time"] for p in points]), name="time")
        return pd.Series([p["equity"] for p in points], index=index, name="equity", dtype=float)

    @property
    def walk_forward_summary(self) -> pd.Series:
        """The walk-forward's stitched figures (`total_return`, `cagr`,
        `sharpe`, `max_drawdown`, `efficiency`, `profitable_windows`, ...)
        and its settings, as one Series."""
        wf = dict(self._done().get("walk_forward") or {})
        flat = {k: v for k, v in wf.items() if k not in ("windows", "equity", "settings", "notes")}
        flat.update(wf.get("settings") or {})
        if wf.get("notes"):
            flat["notes"] = "; ".join(wf["notes"])
        return pd.Series(flat, name=self.id, dtype=object)

    def monte_carlo(self, row: int, draws: int = 1000, seed: int = 0, block: int | None = None) -> MonteCarlo:
        """The bootstrap of row `row` (its index in `results`), as
        `BacktestTask.monte_carlo` of its strategy run alone."""
        params = {"row": row, **_monte_carlo_params(draws, seed, block)}
        return MonteCarlo(self.client._json("GET", f"/backtest/batch/{self.id}/monte-carlo", params=params))

    def _error(self) -> str:
        return str(self.record.get("error") or "no reason given")


def _monte_carlo_params(draws: int, seed: int, block: int | None) -> dict[str, Any]:
    params = {"draws": draws, "seed": seed}
    if block is not None:
        params["block"] = block
    return params


class AnalyticsTask(Task):
    """An analytics service task: its answer is the envelope's `data`."""

    @property
    def raw(self) -> dict[str, Any]:
        data: dict[str, Any] = self._done()["result"]["data"]
        return data


class CpmTask(AnalyticsTask):
    """A pattern (CPM) scan or pattern backtest task."""

    status_path = "/cpm/status/{id}"

    @property
    def patterns(self) -> pd.DataFrame:
        """The matched windows, one row each."""
        return records_frame(self.raw.get("patterns", []))

    @property
    def result(self) -> pd.Series:
        """A pattern backtest's metrics (TOTAL RETURN, WIN RATE, ...)."""
        info = self.raw.get("backtest_info") or {}
        return pd.Series({k: v for k, v in info.items() if not isinstance(v, (list, dict))}, name=self.id, dtype=object)

    @property
    def trades(self) -> pd.DataFrame:
        """A pattern backtest's trades, indexed by the match's start date."""
        rows = (self.raw.get("backtest_info") or {}).get("trades", [])
        return dated(records_frame(rows), "StartDate")


class ScannerBacktestTask(AnalyticsTask):
    """A scanner backtest (`POST /smart-scanner-backtest/start`)."""

    status_path = "/smart-scanner-backtest/status/{id}"

    @property
    def trades(self) -> pd.DataFrame:
        """Every order of the simulation, indexed by its start date."""
        return dated(columns_frame(self.raw.get("result", {})), "Start Date")

    @property
    def equity(self) -> pd.DataFrame:
        """Equity and cash per session."""
        data = self.raw
        frame = pd.DataFrame({"equity": data.get("equity", []), "cash": data.get("cash", [])})
        frame.index = pd.DatetimeIndex(pd.to_datetime(pd.Series(data.get("dates", []))), name="Date")
        return frame
