"""The client: one `httpx.Client` with Basic credentials; submissions carry
an `Idempotency-Key` (so a retried submit never runs twice). What is sent
again, and when, is `Client._send`'s rule: a request that never reached
the server always; one that may have, only when repeating it cannot do
anything twice."""

from __future__ import annotations

import os
import random
import time
import uuid
from typing import Any, Iterable, Mapping

import httpx
import pandas as pd

from .errors import ConnectionFailed, MarketlabError, RateLimited, error_for, message_of
from .grids import bars_rows
from .inputs import as_date, as_month, json_text, query, symbol_list
from .frames import dated, from_arrow, records_frame
from .tasks import BacktestTask, BatchTask, CpmTask, ScannerBacktestTask

ARROW = "application/vnd.apache.arrow.stream"
# GET /seasonality/<path> by the name a notebook asks for.
SEASONALITY = {
    "week": "performance-by-week",
    "month": "performance-by-month",
    "day_of_month": "performance-by-day-of-month",
    "day_of_year": "performance-by-day-of-year",
    "holiday": "performance-around-holiday",
    "specific_days": "performance-around-specific-days",
    "single_month": "performance-by-day-of-single-month",
    "dollar_curve": "one-dollar-curve",
}


class Client:
    """A marketlab server for one account.

    `max_retries` bounds the retries of one call (429, 502-504, a dropped
    connection, a timeout; see `_send` for which calls are sent again);
    `max_retry_wait` is the longest `Retry-After` it waits out (a longer
    one raises `RateLimited` at once); `retry_base` scales the jittered
    waits between the other retries."""

    def __init__(
        self,
        url: str,
        user: str,
        password: str,
        *,
        timeout: float = 60.0,
        max_retries: int = 3,
        max_retry_wait: float = 65.0,
        retry_base: float = 0.2,
    ):
        self.url = url.rstrip("/")
        self.max_retries = max_retries
        self.max_retry_wait = max_retry_wait
        self.retry_base = retry_base
        self.http = httpx.Client(base_url=self.url, auth=(user, password), timeout=timeout)
        self._waits: dict[str, float] | None = None

    @classmethod
    def from_env(cls, **options: Any) -> "Client":
        """`MARKETLAB_URL` (default http://127.0.0.1:8080), `MARKETLAB_USER`
        and `MARKETLAB_PASSWORD`."""
        try:
            user, password = os.environ["MARKETLAB_USER"], os.environ["MARKETLAB_PASSWORD"]
        except KeyError as missing:
            raise RuntimeError(f"set {missing.args[0]} (and MARKETLAB_URL unless the server is at http://127.0.0.1:8080)") from None
        return cls(os.environ.get("MARKETLAB_URL", "http://127.0.0.1:8080"), user, password, **options)

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # -- transport ---------------------------------------------------------

    def _send(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        """One call with its retries; a final 4xx/5xx raises.

        A request that never reached the server (no connection made) is
        sent again whatever its method. One that may have reached it (the
        connection dropped, no answer in time, 502, 503 or 504) is sent
        again only when repeating it cannot do anything twice: a GET, or a
        request under an `Idempotency-Key` (every submission). A 429 was
        refused before it ran: it is sent again after its `Retry-After`.
        Waits without a `Retry-After` are exponential with full jitter."""
        if "json" in kwargs:
            kwargs["content"] = json_text(kwargs.pop("json"))
            kwargs["headers"] = {"Content-Type": "application/json", **kwargs.get("headers", {})}
        if "params" in kwargs:
            kwargs["params"] = query(kwargs["params"])
        headers = kwargs.get("headers") or {}
        repeatable = method in ("GET", "HEAD") or any(k.lower() == "idempotency-key" for k in headers)
        attempt = 0
        while True:
            try:
                response = self.http.request(method, path, **kwargs)
            except (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout) as e:
                if attempt >= self.max_retries:
                    raise ConnectionFailed(f"{method} {path}: {e}") from e
                attempt += 1
                self._backoff(attempt)
                continue
            except httpx.TransportError as e:
                if not repeatable or attempt >= self.max_retries:
                    raise ConnectionFailed(f"{method} {path}: {e}") from e
                attempt += 1
                self._backoff(attempt)
                continue
            status = response.status_code
            if attempt < self.max_retries and (status == 429 or (repeatable and status in (502, 503, 504))):
                wait = _retry_after(response)
                if wait is None and status != 429:
                    attempt += 1
                    self._backoff(attempt)
                    continue
                if wait is not None and wait <= self.max_retry_wait:
                    attempt += 1
                    time.sleep(wait)
                    continue
            if status >= 400:
                raise _error(response)
            return response

    def _backoff(self, attempt: int) -> None:
        """Full jitter: a uniform wait up to `retry_base` x 2^attempt (at most 10 s)."""
        time.sleep(random.uniform(0, min(self.retry_base * 2**attempt, 10.0)))

    def _json(self, method: str, path: str, **kwargs: Any) -> Any:
        return self._send(method, path, **kwargs).json()

    def _object(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        """A call whose answer is a JSON object."""
        body = self._json(method, path, **kwargs)
        if not isinstance(body, dict):
            raise MarketlabError(None, f"{method} {path} answered {type(body).__name__}, not an object", body)
        return body

    def _arrow(self, method: str, path: str, **kwargs: Any) -> bytes:
        headers = {"Accept": ARROW, **kwargs.pop("headers", {})}
        response = self._send(method, path, headers=headers, **kwargs)
        return response.content

    def _analytics(self, method: str, path: str, **kwargs: Any) -> Any:
        """The `data` of an analytics envelope; an answer whose `code` says
        the data are insufficient (411) raises with its message."""
        body = self._json(method, path, **kwargs)
        code = body.get("code", 200)
        if code >= 400:
            raise error_for(code, message_of(body, "refused"), body)
        return body.get("data")

    def _submit(self, path: str, body: Any, key: str | None, **kwargs: Any) -> dict[str, Any]:
        headers = {"Idempotency-Key": key or str(uuid.uuid4())}
        if body is not None:
            kwargs["json"] = body
        return self._object("POST", path, headers=headers, **kwargs)

    def _long_poll(self, status_path: str) -> float:
        """Seconds of `?wait=` the server's status operation takes (0: none)."""
        if self._waits is None:
            self._waits = {}
            document = self._json("GET", "/openapi.json")
            for path, item in document.get("paths", {}).items():
                for parameter in item.get("get", {}).get("parameters", []):
                    if parameter.get("name") == "wait" and parameter.get("in") == "query":
                        self._waits[path] = float(parameter.get("schema", {}).get("maximum", 20))
        template = status_path.replace("{id}", "{task_id}")
        return self._waits.get(template) or self._waits.get(status_path.replace("{id}", "{batch_id}"), 0.0)

    # -- backtests ---------------------------------------------------------

    def validate(self, strategy: Mapping[str, Any]) -> dict[str, Any]:
        """The strategy as the server reads it (defaults filled, warnings)."""
        return self._object("POST", "/backtest/validate", json=strategy)

    def backtest(self, strategy: Mapping[str, Any], *, bars: pd.DataFrame | None = None, idempotency_key: str | None = None) -> BacktestTask:
        """Submits a backtest. With `bars` (Date index or column, Open, High,
        Low, Close, Volume and any signal columns) it runs on those bars
        (CSV mode), sent as Parquet."""
        if bars is None:
            answer = self._submit("/backtest/start_backtest", strategy, idempotency_key)
        else:
            answer = self._submit(
                "/backtest/start_backtest",
                None,
                idempotency_key,
                files={
                    "strategy": (None, json_text(dict(strategy)), "application/json"),
                    "bars": ("bars.parquet", _parquet(bars), "application/vnd.apache.parquet"),
                },
            )
        return BacktestTask(self, answer["task_id"])

    def task(self, task_id: str) -> BacktestTask:
        """A backtest submitted earlier."""
        return BacktestTask(self, task_id)

    def tasks(self, status: str | None = None, limit: int = 100) -> pd.DataFrame:
        """The account's backtests, newest first."""
        params = {"limit": limit, **({"status": status} if status else {})}
        return records_frame(self._json("GET", "/backtest/tasks", params=params)["tasks"])

    def batch(
        self,
        strategy: Mapping[str, Any] | Iterable[Mapping[str, Any]] | None = None,
        *,
        grid: Mapping[str, list[Any]] | None = None,
        strategies: Iterable[Mapping[str, Any]] | None = None,
        name: str | None = None,
        statistics: Mapping[str, Any] | bool | None = None,
        walk_forward: Mapping[str, Any] | None = None,
        bars: pd.DataFrame | None = None,
        names: Mapping[str, str] | None = None,
        idempotency_key: str | None = None,
    ) -> BatchTask:
        """A batch: one strategy and a `grid` of dotted paths to values, or
        a list of strategies (positionally or as `strategies=`).
        `statistics` sets the overfitting statistics: `blocks` (CSCV's S,
        even, 2 to 16) and `trials` (an effective number of trials); False
        skips them (and keeps no returns).
        `walk_forward` adds a walk-forward analysis: `in_sample` and
        `out_of_sample` window lengths in bars, `anchored` (default False)
        and `metric` (`sharpe`, `sortino`, `total_return`, `cagr` or
        `calmar`).
        `bars` (as `backtest(bars=)` takes them) runs every strategy on
        those bars (CSV mode). `names` names the grid's keys in `results`
        (otherwise each key's last path segments that tell it apart).

        Returns:
            The batch's handle; `wait()` it, then read `results`.

        Raises:
            ValueError: neither a strategy with a grid nor a list was given.
            MarketlabError: the server refused the batch (its `field` says where)."""
        if strategies is None and strategy is not None and not isinstance(strategy, Mapping):
            strategy, strategies = None, strategy
        own = None if bars is None else {"csv_mode": True, "csv_data": bars_rows(bars)}
        if strategies is not None:
            listed = [dict(s, **own) if own else dict(s) for s in strategies]
            body: dict[str, Any] = {"strategies": listed}
        elif isinstance(strategy, Mapping) and grid is not None:
            base = dict(strategy, **own) if own else dict(strategy)
            body = {"strategy": base, "grid": dict(grid)}
        else:
            raise ValueError("batch() takes a strategy and a grid, or a list of strategies")
        if name:
            body["name"] = name
        if isinstance(statistics, bool):
            body["statistics"] = statistics
        elif statistics is not None:
            body["statistics"] = dict(statistics)
        if walk_forward is not None:
            body["walk_forward"] = dict(walk_forward)
        answer = self._submit("/backtest/batch", body, idempotency_key)
        return BatchTask(self, answer["task_id"], submitted=body, names=names)

    def cpm_scan(self, idempotency_key: str | None = None, **params: Any) -> CpmTask:
        """A pattern scan task (`symbol`, `system_pattern` or a window, `corr_per`, ...)."""
        return CpmTask(self, self._submit("/cpm/scan/start", params, idempotency_key)["task_id"])

    def cpm_backtest(self, idempotency_key: str | None = None, **params: Any) -> CpmTask:
        """A pattern backtest task: the scan's matches traded for `time_in_market` bars."""
        return CpmTask(self, self._submit("/cpm/backtest/start", params, idempotency_key)["task_id"])

    def scanner_backtest(self, idempotency_key: str | None = None, **params: Any) -> ScannerBacktestTask:
        """A scanner backtest (`start_date`, `end_date`, `signals`, `total_capital`, ...)."""
        answer = self._submit("/smart-scanner-backtest/start", params, idempotency_key)
        return ScannerBacktestTask(self, answer["task_id"])

    # -- analytics ---------------------------------------------------------

    def seasonality(self, ticker: str, view: str = "month", **params: Any) -> pd.DataFrame:
        """A seasonality table: `view` is one of week, month, day_of_month,
        day_of_year, holiday, specific_days, single_month, dollar_curve."""
        try:
            path = SEASONALITY[view]
        except KeyError:
            raise ValueError(f"view must be one of {', '.join(SEASONALITY)}, got {view!r}") from None
        data = self._analytics("GET", f"/seasonality/{path}", params={"ticker": ticker, **params})
        if isinstance(data, dict):
            rows = next((v for v in data.values() if isinstance(v, list) and v and isinstance(v[0], dict)), None)
            if rows is None:
                return pd.json_normalize(data)
            data = rows
        return records_frame(data)

    def correlation(self, benchmark: str, symbols: str | Iterable[str], start_date: Any, end_date: Any, **params: Any) -> pd.DataFrame:
        """Each symbol's rolling return correlation with the benchmark, by
        date (Arrow); the correlation matrix is `frame.attrs["corr_matrix"]`.
        `symbols` is one symbol or several; dates are text, `date`,
        `datetime` or `pd.Timestamp`."""
        body = {"benchmark": benchmark, "stock_comparison": symbol_list(symbols), "start_date": as_date(start_date), "end_date": as_date(end_date), **params}
        return self._rolling("/symbol_corr", body)

    def correlation_matrix(self, benchmark: str, symbols: str | Iterable[str], start_date: Any, end_date: Any, **params: Any) -> pd.DataFrame:
        """The return correlation matrix of the benchmark and the symbols."""
        frame = self.correlation(benchmark, symbols, start_date, end_date, **params)
        return pd.DataFrame.from_records(frame.attrs["corr_matrix"]).set_index("index")

    def beta(self, benchmark: str, symbols: str | Iterable[str], start_date: Any, end_date: Any, **params: Any) -> pd.DataFrame:
        """Each symbol's rolling beta against the benchmark, by date."""
        body = {"benchmark": benchmark, "stock_comparison": symbol_list(symbols), "start_date": as_date(start_date), "end_date": as_date(end_date), **params}
        return self._rolling("/symbol_beta", body)

    def _rolling(self, path: str, body: dict[str, Any]) -> pd.DataFrame:
        frame = from_arrow(self._arrow("POST", path, json=body))
        code = int(frame.attrs.get("code", 211))
        if code >= 400:
            raise MarketlabError(code, str(frame.attrs.get("msg", "the data are insufficient")), frame.attrs)
        return frame.set_index("Date")

    def asset_correlation(self, start_date: Any, end_date: Any) -> pd.DataFrame:
        """Return correlations among the cross-asset symbols."""
        data = self._analytics("POST", "/asset_corr", json={"start_date": as_date(start_date), "end_date": as_date(end_date)})
        rows = next((v for v in data.values() if isinstance(v, list)), [])
        frame = records_frame(rows)
        return frame.set_index("index") if "index" in frame.columns else frame

    def screens(self) -> pd.DataFrame:
        """The predefined screens (key, category)."""
        return records_frame(self._analytics("GET", "/screens/get-predefined-screens")["screens"])

    def screen(self, key: str, date: Any = None) -> pd.DataFrame:
        """One screen's rows."""
        params = {"key": key, **({"date": as_date(date)} if date is not None else {})}
        data = self._analytics("GET", "/screens", params=params)
        if isinstance(data, dict):
            rows = next((v for v in data.values() if isinstance(v, list)), [])
            frame = records_frame(rows)
            frame.attrs.update({k: v for k, v in data.items() if not isinstance(v, list)})
            return frame
        return records_frame(data)

    def scanner(self, date: Any = None, **params: Any) -> pd.DataFrame:
        """The scanner's signals of a session (default the latest), one row
        each (Arrow); `frame.attrs` holds the day's `as_of_date` and `count`."""
        asked = {**({"date": as_date(date)} if date is not None else {}), **params}
        return from_arrow(self._arrow("GET", "/smart-stock-scanner/latest-day-all", params=asked))

    def scanner_history(self, ticker: str, **params: Any) -> pd.DataFrame:
        """One ticker's scanner signals over time."""
        data = self._analytics("GET", f"/smart-stock-scanner/single/{ticker}", params=params)
        rows = data.get("scanner_data", []) if isinstance(data, dict) else data
        return dated(records_frame(rows), "Date")

    def options(self, **params: Any) -> pd.DataFrame:
        """The option scanner's candidates (`ticker`, `min_pop`, `max_dte`, ...)."""
        data = self._analytics("GET", "/smart-option-scanner/options", params=params)
        rows = next((v for v in data.values() if isinstance(v, list)), []) if isinstance(data, dict) else data
        return records_frame(rows)

    # -- data service ------------------------------------------------------

    def symbols(self) -> pd.DataFrame:
        """The indicator catalogue (chart_name, url)."""
        return records_frame(self._json("GET", "/ws/getAllSymbols"))

    def prices(self, symbol: str, start: Any = None, end: Any = None) -> pd.DataFrame:
        """A stored symbol's daily bars from `start` to `end` (each
        optional; text, `date`, `datetime` or `pd.Timestamp`), as stored:
        `Open`, `High`, `Low`, `Close`, `Volume` by a DatetimeIndex `Date`.
        The frame is what `backtest(strategy, bars=...)` takes.

        Raises:
            UnknownSymbol: no bars are stored for `symbol`.
            MarketlabError: a malformed date, or `start` after `end`."""
        params = {"format": "arrow", "start": as_date(start) if start is not None else None, "end": as_date(end) if end is not None else None}
        frame = from_arrow(self._send("GET", f"/ws/prices/{symbol}", params=params).content)
        frame.index = pd.DatetimeIndex(pd.to_datetime(frame.pop("Date")), name="Date")
        frame.attrs["symbol"] = symbol.upper()
        return frame

    def history(self, symbol: str, days: int | None = None, sentiment: bool = False) -> pd.DataFrame:
        """An indicator's series by date (Arrow): all of it, or its last `days`."""
        if days is None:
            kind = "SymbolSentimentData" if sentiment else "SymbolData"
            path, params = f"/ws/get{kind}/{symbol}", None
        else:
            kind = "SymbolDataSentimentLimitDays" if sentiment else "SymbolDataLimitDays"
            path, params = f"/ws/get{kind}/{symbol}", {"days": days}
        return from_arrow(self._arrow("GET", path, params=params)).set_index("Date")

    # -- webhooks ----------------------------------------------------------

    def add_webhook(self, url: str, events: Iterable[str] | None = None, description: str | None = None) -> dict[str, Any]:
        """Registers an endpoint; the answer's `secret` (`whsec_...`) is shown
        only here: keep it to verify deliveries (`marketlab.verify_webhook`)."""
        body: dict[str, Any] = {"url": url}
        if events is not None:
            body["events"] = list(events)
        if description is not None:
            body["description"] = description
        return self._object("POST", "/webhooks", json=body)

    def webhooks(self) -> pd.DataFrame:
        """The account's endpoints, one row each (no secrets)."""
        return pd.DataFrame(self._json("GET", "/webhooks")["endpoints"])

    def rotate_webhook(self, webhook_id: str, keep_previous_hours: float = 24) -> dict[str, Any]:
        """A new secret (in the answer); the previous one keeps signing beside it for `keep_previous_hours`."""
        return self._object("POST", f"/webhooks/{webhook_id}/rotate", json={"keep_previous_hours": keep_previous_hours})

    def delete_webhook(self, webhook_id: str) -> None:
        self._send("DELETE", f"/webhooks/{webhook_id}")

    def webhook_deliveries(self, webhook_id: str, limit: int = 50) -> pd.DataFrame:
        """The endpoint's delivery log, newest first: one row per delivery
        (`id` is the `webhook-id`), its attempts as a list."""
        rows = self._json("GET", f"/webhooks/{webhook_id}/deliveries", params={"limit": limit})["deliveries"]
        frame = pd.DataFrame(rows)
        for column in ("created_at", "next_attempt"):
            if column in frame:
                frame[column] = pd.to_datetime(frame[column], utc=True)
        return frame

    def redeliver(self, webhook_id: str, delivery_id: str) -> dict[str, Any]:
        """Sends a delivery again (same `webhook-id` and body)."""
        return self._object("POST", f"/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver")

    # -- account -----------------------------------------------------------

    def usage(self, month: Any = None) -> dict[str, Any]:
        """The account's usage this month (or `month`: `YYYY-MM`, or a date
        in it) beside its plan's limits."""
        return self._object("GET", "/usage", params={"month": as_month(month)} if month is not None else None)


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    try:
        return max(float(value), 0.0) if value is not None else None
    except ValueError:
        return None


def _error(response: httpx.Response) -> MarketlabError:
    try:
        body: Any = response.json()
    except ValueError:
        body = response.text
    message = message_of(body, response.reason_phrase or "error")
    if response.status_code == 429:
        return RateLimited(429, message, body, _retry_after(response))
    return error_for(response.status_code, message, body)


def _parquet(bars: pd.DataFrame) -> bytes:
    """Bars as the Parquet a CSV-mode backtest takes (a `Date` column)."""
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    frame = bars.reset_index() if "Date" not in bars.columns else bars
    frame = frame.rename(columns={frame.columns[0]: "Date"}) if "Date" not in frame.columns else frame
    table = pa.Table.from_pandas(frame, preserve_index=False)
    table = table.set_column(table.schema.get_field_index("Date"), "Date", pa.array(pd.to_datetime(frame["Date"]).dt.date, pa.date32()))
    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue()
