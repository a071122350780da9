"""Every call of the API, written once for `Client` and `AsyncClient` as
operations (`marketlab.calls`): what is sent, what is sent again, and how
each answer becomes a DataFrame."""

from __future__ import annotations

import random
import sys
import uuid
from typing import Any, Callable, Generic, Iterable, Literal, Mapping, TypeVar

import httpx
import pandas as pd
import pyarrow as pa

from .calls import Op, Request, Sleep, call
from .errors import ConnectionFailed, MarketlabError, RateLimited, envelope_error, error_for, message_of
from .frames import dated, from_arrow, records_frame
from .grids import bars_rows
from .inputs import DateLike, as_date, as_month, json_text, query, symbol_list
from .portfolio_inputs import SignalMode, WeightMode
from .ratelimits import RateLimit, rate_limit_of
from .seasonality import SEASONALITY, View, seasonality_frame
from .strategies import Strategy
from .upload import bars_file

if sys.version_info >= (3, 11):
    from typing import Self
else:
    from typing_extensions import Self

ARROW = "application/vnd.apache.arrow.stream"

BT = TypeVar("BT")
BaT = TypeVar("BaT")
CT = TypeVar("CT")
ST = TypeVar("ST")
PT = TypeVar("PT")

AnyStrategy = Strategy | Mapping[str, Any]


class Api(Generic[BT, BaT, CT, ST, PT]):
    """A marketlab server for one account: the calls `Client` and
    `AsyncClient` share. Its type parameters are the task classes the
    client hands out (blocking or async).

    `timeout` is each request's, in seconds; `max_retries` bounds the
    retries of one call (429, 502-504, a dropped connection, a timeout;
    `_send` says which calls are sent again); `max_retry_wait` is the
    longest `Retry-After` waited out (a longer one raises `RateLimited` at
    once); `retry_base` scales the jittered waits between other retries;
    `submit_wait` is how long a backtest's submit may hold its answer for
    the task's end (`Prefer: wait`): a quick backtest comes back finished
    in one round trip and its `wait()` sends nothing (0: never hold).

    Sign in with an API key (`api_key=`, or `MARKETLAB_API_KEY` when
    neither a key nor a user is given), sent as `Authorization: Bearer`,
    or with the account's e-mail and password (HTTP Basic). After each
    answer, `rate_limit` holds what it said of the plan's requests per
    minute (`RateLimit`, or None) and `mode` whether it was `live` or
    `test` (a test key's sandbox)."""

    _backtest_task: Callable[..., BT]
    _batch_task: Callable[..., BaT]
    _cpm_task: Callable[..., CT]
    _scanner_task: Callable[..., ST]
    _portfolio_task: Callable[..., PT]

    def __init__(
        self,
        url: str,
        user: str | None = None,
        password: str | None = None,
        *,
        api_key: str | None = None,
        timeout: float = 60.0,
        max_retries: int = 3,
        max_retry_wait: float = 65.0,
        retry_base: float = 0.2,
        submit_wait: float = 0.1,
    ):
        self.url = url.rstrip("/")
        self.max_retries = max_retries
        self.max_retry_wait = max_retry_wait
        self.retry_base = retry_base
        self.submit_wait = submit_wait
        self._waits: dict[str, float] | None = None
        self.rate_limit: RateLimit | None = None
        self.mode: str | None = None
        self._connect(_credentials(user, password, api_key), timeout)

    def _connect(self, credentials: "Credentials", timeout: float) -> None:
        """Makes the HTTP client (blocking or async)."""
        raise NotImplementedError

    @classmethod
    def from_env(cls, **options: Any) -> Self:
        """A client from `MARKETLAB_URL` (default http://127.0.0.1:8080) and
        `MARKETLAB_API_KEY`, or else `MARKETLAB_USER` and
        `MARKETLAB_PASSWORD`; `options` as the constructor takes them.

        Raises:
            RuntimeError: neither a key nor a user and password is set."""
        import os

        url = os.environ.get("MARKETLAB_URL", "http://127.0.0.1:8080")
        if os.environ.get("MARKETLAB_API_KEY"):
            return cls(url, api_key=os.environ["MARKETLAB_API_KEY"], **options)
        try:
            user, password = os.environ["MARKETLAB_USER"], os.environ["MARKETLAB_PASSWORD"]
        except KeyError as missing:
            raise RuntimeError(
                f"set MARKETLAB_API_KEY, or {missing.args[0]} (and MARKETLAB_URL unless the server is at http://127.0.0.1:8080)"
            ) from None
        return cls(url, user, password, **options)

    # -- transport ---------------------------------------------------------

    def _send(self, method: str, path: str, **options: Any) -> Op[httpx.Response]:
        """One call with its retries; a final 4xx/5xx raises.

        A request that never reached the server (no connection made) is
        sent again whatever its method. One that may have reached it (the
        connection dropped, no answer in time, 502, 503 or 504) is sent
        again only when repeating it cannot do anything twice: a GET, or a
        request under an `Idempotency-Key` (every submission). A 429 was
        refused before it ran: it is sent again after its `Retry-After`.
        Waits without a `Retry-After` are exponential with full jitter (a
        uniform wait up to `retry_base` x 2^attempt, at most 10 s)."""
        if "json" in options:
            options["content"] = json_text(options.pop("json"))
            options["headers"] = {"Content-Type": "application/json", **options.get("headers", {})}
        if "params" in options:
            options["params"] = query(options["params"])
        headers = options.get("headers") or {}
        repeatable = method in ("GET", "HEAD") or any(k.lower() == "idempotency-key" for k in headers)
        request = Request(method, path, options)
        attempt = 0
        while True:
            try:
                response: httpx.Response = yield request
            except (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout) as e:
                if attempt >= self.max_retries:
                    raise ConnectionFailed(f"{method} {path}: {e}") from e
                attempt += 1
                yield self._backoff(attempt)
                continue
            except httpx.TransportError as e:
                if not repeatable or attempt >= self.max_retries:
                    raise ConnectionFailed(f"{method} {path}: {e}") from e
                attempt += 1
                yield self._backoff(attempt)
                continue
            status = response.status_code
            self._note(response)
            if attempt < self.max_retries and (status == 429 or (repeatable and status in (502, 503, 504))):
                wait = _retry_after(response)
                if wait is None and status != 429:
                    attempt += 1
                    yield self._backoff(attempt)
                    continue
                if wait is not None and wait <= self.max_retry_wait:
                    attempt += 1
                    yield Sleep(wait)
                    continue
            if status >= 400:
                raise _error(response)
            return response

    def _note(self, response: httpx.Response) -> None:
        """Keeps what an answer said of the rate limit and the mode."""
        limit = rate_limit_of(response.headers)
        if limit is not None:
            self.rate_limit = limit
        mode = response.headers.get("marketlab-mode")
        if mode is not None:
            self.mode = mode

    def _backoff(self, attempt: int) -> Sleep:
        return Sleep(random.uniform(0, min(self.retry_base * 2**attempt, 10.0)))

    def _json(self, method: str, path: str, **options: Any) -> Op[Any]:
        response = yield from self._send(method, path, **options)
        return response.json()

    def _object(self, method: str, path: str, **options: Any) -> Op[dict[str, Any]]:
        """A call whose answer is a JSON object."""
        body = yield from self._json(method, path, **options)
        if not isinstance(body, dict):
            raise MarketlabError(None, f"{method} {path} answered {type(body).__name__}, not an object", body)
        return body

    def _arrow(self, method: str, path: str, **options: Any) -> Op[pd.DataFrame]:
        """An Arrow answer as a frame (its schema metadata in `attrs`). An
        answer that is not an Arrow stream raises `MarketlabError` (the
        error its JSON envelope carries, when it is one), never a parse
        failure."""
        headers = {"Accept": ARROW, **options.pop("headers", {})}
        response = yield from self._send(method, path, headers=headers, **options)
        media = response.headers.get("content-type", "")
        if not media.startswith(ARROW):
            try:
                body: Any = response.json()
            except ValueError:
                body = response.text
            error = envelope_error(body)
            if error is not None:
                raise error
            raise MarketlabError(response.status_code, f"{method} {path} answered {media or 'no content type'}, not an Arrow stream", body)
        try:
            return from_arrow(response.content)
        except pa.ArrowInvalid as e:
            raise MarketlabError(response.status_code, f"{method} {path} answered an unreadable Arrow stream: {e}") from e

    def _analytics(self, method: str, path: str, **options: Any) -> Op[Any]:
        """The `data` of an analytics envelope; an answer whose `code` is an
        error raises though it came in an HTTP 200 (407 `NoData`, 411
        `InsufficientData`)."""
        body = yield from self._json(method, path, **options)
        error = envelope_error(body)
        if error is not None:
            raise error
        return body.get("data")

    def _submit(self, path: str, body: Any, key: str | None, **options: Any) -> Op[str]:
        """A submission under an `Idempotency-Key` (the given one, or a new
        one); the task's id."""
        answer = yield from self._submitted(path, body, key, **options)
        return str(answer["task_id"])

    def _submitted(self, path: str, body: Any, key: str | None, *, prefer_wait: float = 0.0,
                   **options: Any) -> Op[dict[str, Any]]:
        """A submission's answer: `{task_id, message}`, or (held up to
        `prefer_wait` seconds for the task's end) the ended task's record."""
        headers = {"Idempotency-Key": key or str(uuid.uuid4())}
        if prefer_wait > 0:
            headers["Prefer"] = f"wait={prefer_wait:g}"
        if body is not None:
            options["json"] = body
        return (yield from self._object("POST", path, headers=headers, **options))

    def _long_poll(self, status_path: str) -> Op[float]:
        """Seconds of `?wait=` the server's status operation takes (0: none),
        read once from its OpenAPI document."""
        if self._waits is None:
            document = yield from self._json("GET", "/openapi.json")
            waits: dict[str, float] = {}
            for path, item in document.get("paths", {}).items():
                for parameter in item.get("get", {}).get("parameters", []):
                    if parameter.get("name") == "wait" and parameter.get("in") == "query":
                        waits[path] = float(parameter.get("schema", {}).get("maximum", 20))
            self._waits = waits
        template = status_path.replace("{id}", "{task_id}")
        return self._waits.get(template) or self._waits.get(status_path.replace("{id}", "{batch_id}"), 0.0)

    @call
    def request(self, method: str, path: str, *, params: Mapping[str, Any] | None = None, json: Any = None,
                headers: Mapping[str, str] | None = None) -> Op[httpx.Response]:
        """Any call of the API by its path (one this package has no method
        for, or an answer in another format), with the client's
        credentials, input conversions and retry rule.

        Returns:
            The response (its body read).

        Raises:
            MarketlabError: a 4xx or 5xx answer."""
        options: dict[str, Any] = {"headers": dict(headers or {})}
        if params is not None:
            options["params"] = params
        if json is not None:
            options["json"] = json
        return (yield from self._send(method, path, **options))

    # -- backtests ---------------------------------------------------------

    @call
    def validate(self, strategy: AnyStrategy) -> Op[dict[str, Any]]:
        """The strategy as the server reads it.

        Returns:
            `strategy` (defaults filled), `warnings` and `defaults_applied`.

        Raises:
            MarketlabError: the strategy is invalid (`field` names where)."""
        return (yield from self._object("POST", "/backtest/validate", json=strategy))

    def _start_backtest(self, strategy: AnyStrategy, bars: pd.DataFrame | None, key: str | None) -> Op[dict[str, Any]]:
        wait = self.submit_wait
        if bars is None:
            return (yield from self._submitted("/backtest/start_backtest", strategy, key, prefer_wait=wait))
        name, content, kind = bars_file(bars)
        files = {"strategy": (None, json_text(dict(strategy)), "application/json"), "bars": (name, content, kind)}
        return (yield from self._submitted("/backtest/start_backtest", None, key, prefer_wait=wait, files=files))

    @call
    def backtest(self, strategy: AnyStrategy, *, bars: pd.DataFrame | None = None, idempotency_key: str | None = None) -> Op[BT]:
        """Submits a backtest.

        Args:
            strategy: the strategy (`marketlab.Strategy`; builders such as
                `sma_cross` make the common ones).
            bars: runs on these bars instead of the stored symbol's (CSV
                mode): a frame with a `Date` index or column, `Open`,
                `High`, `Low`, `Close`, `Volume` and any signal columns,
                as `prices()` answers.
            idempotency_key: a key of your own; the same key gives the same
                task (a new one is made otherwise, so retries never run a
                backtest twice).

        Returns:
            The task; `wait()` it, then read `result`, `trades`, `equity`.
            A backtest that ended within `submit_wait` comes back ended
            (its `wait()` then sends nothing).

        Raises:
            MarketlabError: the strategy or the bars were refused."""
        answer = yield from self._start_backtest(strategy, bars, idempotency_key)
        return self._backtest_task(self, str(answer["task_id"]), answer if "status" in answer else None)

    @call
    def task(self, task_id: str) -> Op[BT]:
        """A backtest submitted earlier, by its id (its status read once).

        Raises:
            MarketlabError: 404 when the account has no such task."""
        task = self._backtest_task(self, task_id)
        yield from task._refresh(None)  # type: ignore[attr-defined]
        return task

    @call
    def tasks(self, status: Literal["PENDING", "RUNNING", "SUCCESS", "FAILED"] | None = None, limit: int = 100) -> Op[pd.DataFrame]:
        """The account's backtests, newest first, one row each (`task_id`,
        `status`, `name`, `created_at`, ...)."""
        params = {"limit": limit, **({"status": status} if status else {})}
        body = yield from self._json("GET", "/backtest/tasks", params=params)
        return records_frame(body["tasks"])

    @call
    def batch(
        self,
        strategy: AnyStrategy | Iterable[AnyStrategy] | None = None,
        *,
        grid: Mapping[str, list[Any]] | None = None,
        strategies: Iterable[AnyStrategy] | None = None,
        portfolio: Mapping[str, Any] | None = None,
        name: str | None = None,
        statistics: Mapping[str, Any] | bool | None = None,
        walk_forward: Mapping[str, Any] | None = None,
        bars: pd.DataFrame | None = None,
        names: Mapping[str, str] | None = None,
        idempotency_key: str | None = None,
    ) -> Op[BaT]:
        """A batch: one strategy and a `grid`, a list of strategies, or one
        portfolio and a `grid`.

        Args:
            strategy: the strategy the grid varies, or a list of strategies.
            grid: dotted paths (`entry.condition.signal.params.period`; a
                comma joins paths that take the same value) to their values.
            strategies: the list, by keyword.
            portfolio: a portfolio as `portfolio()` sends it (its request
                body: `universe`, `signals` or `weights`, ...) that the grid
                varies (`signals.max_positions`, `signals.rank_by.by.momentum`).
            name: the batch's name.
            statistics: the overfitting statistics' settings: `blocks`
                (CSCV's S, even, 2 to 16) and `trials`; False skips them.
            walk_forward: a walk-forward analysis: `in_sample` and
                `out_of_sample` window lengths in bars, `anchored` and
                `metric` (`sharpe`, `sortino`, `total_return`, `cagr`,
                `calmar`).
            bars: runs every strategy on these bars (as `backtest` takes).
            names: column names for the grid's keys in `results`
                (otherwise the last path segments that tell them apart).
            idempotency_key: as `backtest` takes it.

        Returns:
            The batch; `wait()` it, then read `results`.

        Raises:
            ValueError: neither a strategy or portfolio with a grid nor a
                list was given.
            MarketlabError: the server refused the batch (`field` says where)."""
        if strategies is None and strategy is not None and not isinstance(strategy, Mapping):
            strategy, strategies = None, strategy
        own = None if bars is None else {"csv_mode": True, "csv_data": bars_rows(bars)}
        if strategies is not None:
            listed = [dict(s, **own) if own else dict(s) for s in strategies]
            body: dict[str, Any] = {"strategies": listed}
        elif portfolio is not None and strategy is None and grid is not None:
            body = {"portfolio": dict(portfolio), "grid": dict(grid)}
        elif isinstance(strategy, Mapping) and grid is not None and portfolio is None:
            base = dict(strategy, **own) if own else dict(strategy)
            body = {"strategy": base, "grid": dict(grid)}
        else:
            raise ValueError("batch() takes a strategy or a portfolio and a grid, or a list of strategies")
        if name:
            body["name"] = name
        if isinstance(statistics, bool):
            body["statistics"] = statistics
        elif statistics is not None:
            body["statistics"] = dict(statistics)
        if walk_forward is not None:
            body["walk_forward"] = dict(walk_forward)
        task_id = yield from self._submit("/backtest/batch", body, idempotency_key)
        return self._batch_task(self, task_id, submitted=body, names=names)

    @call
    def cpm_scan(
        self,
        symbol: str,
        *,
        corr_per: int,
        time_in_market: int,
        system_pattern: str | None = None,
        start_date: DateLike | None = None,
        end_date: DateLike | None = None,
        timeframe: Literal["Daily", "Weekly", "Monthly"] | None = None,
        direction: Literal["Long", "Short"] | None = None,
        lookback_period: str | None = None,
        exclude_overlap: int | None = None,
        ma: int | None = None,
        ma_condition: int | None = None,
        universe: str | None = None,
        max_matches: int | None = None,
        name: str | None = None,
        idempotency_key: str | None = None,
    ) -> Op[CT]:
        """A pattern scan: the windows of `symbol`'s history (or of a
        `universe`'s stocks) whose closes move like a template.

        Args:
            symbol: the ticker searched (and holding the template).
            corr_per: the least correlation (0-100) a match has.
            time_in_market: bars followed after each match (3-252).
            system_pattern: a predefined pattern (`/cpm/get-predefined-patterns`);
                otherwise the template is `start_date` to `end_date`.
            start_date, end_date: the template's dates (text, `date`,
                `datetime` or `pd.Timestamp`).
            timeframe, direction, lookback_period, exclude_overlap, ma,
            ma_condition, universe, max_matches, name: as docs/analytics.md
                gives them; None leaves the server's default.
            idempotency_key: as `backtest` takes it.

        Returns:
            The task; `wait()` it, then read `patterns`.

        Raises:
            MarketlabError: a parameter was refused (`field` names it)."""
        body = _given(symbol=symbol, corr_per=corr_per, time_in_market=time_in_market, system_pattern=system_pattern,
                      start_date=start_date, end_date=end_date, timeframe=timeframe, direction=direction,
                      lookback_period=lookback_period, exclude_overlap=exclude_overlap, ma=ma,
                      ma_condition=ma_condition, universe=universe, max_matches=max_matches, name=name)
        task_id = yield from self._submit("/cpm/scan/start", body, idempotency_key)
        return self._cpm_task(self, task_id)

    @call
    def cpm_backtest(
        self,
        symbol: str,
        *,
        corr_per: int,
        time_in_market: int,
        system_pattern: str | None = None,
        start_date: DateLike | None = None,
        end_date: DateLike | None = None,
        timeframe: Literal["Daily", "Weekly", "Monthly"] | None = None,
        direction: Literal["Long", "Short"] | None = None,
        lookback_period: str | None = None,
        exclude_overlap: int | None = None,
        ma: int | None = None,
        ma_condition: int | None = None,
        name: str | None = None,
        idempotency_key: str | None = None,
    ) -> Op[CT]:
        """A pattern backtest: the scan's matches on `symbol` traded for
        `time_in_market` bars each. Arguments as `cpm_scan` takes them
        (without `universe` and `max_matches`).

        Returns:
            The task; `wait()` it, then read `result` and `trades`.

        Raises:
            MarketlabError: a parameter was refused (`field` names it)."""
        body = _given(symbol=symbol, corr_per=corr_per, time_in_market=time_in_market, system_pattern=system_pattern,
                      start_date=start_date, end_date=end_date, timeframe=timeframe, direction=direction,
                      lookback_period=lookback_period, exclude_overlap=exclude_overlap, ma=ma,
                      ma_condition=ma_condition, name=name)
        task_id = yield from self._submit("/cpm/backtest/start", body, idempotency_key)
        return self._cpm_task(self, task_id)

    @call
    def portfolio(
        self,
        universe: Iterable[str],
        *,
        signals: SignalMode | None = None,
        weights: WeightMode | None = None,
        benchmark: str | None = None,
        start_date: DateLike | None = None,
        end_date: DateLike | None = None,
        capital: float | None = None,
        commission: float | None = None,
        slippage: float | None = None,
        trade_price: Literal["current_close", "next_open", "next_close"] | None = None,
        fractional: bool | None = None,
        max_leverage: float | None = None,
        adjusted: bool | None = None,
        name: str | None = None,
        idempotency_key: str | None = None,
        bars: Mapping[str, pd.DataFrame] | None = None,
    ) -> Op[PT]:
        """A portfolio backtest: `universe` traded from one pool of cash,
        by `signals` or by target `weights` (docs/portfolios.md).

        Args:
            universe: stored symbols, or symbols of `bars`; 1-500.
            signals: entry and exit rules per symbol (`entry`, `exit` as
                a `Strategy` has them), `max_positions`,
                and optionally `rank_by`, `sizing`, `risk_control`
                (`marketlab.SignalMode`: a type checker names a misspelt
                key).
            weights: `schedule` (`{"every": "month"}`), and optionally
                `select`, `weighting`, `drift_tolerance`
                (`marketlab.WeightMode`).
            benchmark: the relative figures' benchmark (default SPX).
            start_date, end_date: the window traded.
            capital: the starting cash (default 100000).
            commission, slippage: fractions per side (default 0).
            trade_price: where a decision on a close fills (default
                `current_close`).
            fractional: fractional units (default True).
            max_leverage: gross exposure over the account's value (default 1).
            adjusted: trade split-adjusted bars (default True) or bars as
                traded (False).
            name: the task's name.
            idempotency_key: as `backtest` takes it.
            bars: your own daily bars by symbol (each frame a `Date` index
                or column and `Open`, `High`, `Low`, `Close`, `Volume`),
                read before stored symbols of the same name by the universe
                and the benchmark.

        Returns:
            The task; `wait()` it, then read `result`, `equity`, `trades`,
            `orders`, `weights` and `contributions`.

        Raises:
            MarketlabError: a parameter was refused (`field` names it)."""
        body = _given(universe=[str(s) for s in universe], signals=signals, weights=weights, benchmark=benchmark,
                      start_date=start_date, end_date=end_date, capital=capital, commission=commission,
                      slippage=slippage, trade_price=trade_price, fractional=fractional,
                      max_leverage=max_leverage, adjusted=adjusted, name=name)
        if not bars:
            task_id = yield from self._submit("/backtest/portfolio", body, idempotency_key)
            return self._portfolio_task(self, task_id)
        files: dict[str, tuple[str | None, Any, str]] = {"portfolio": (None, json_text(body), "application/json")}
        for symbol, frame in bars.items():
            files[f"bars.{symbol}"] = bars_file(frame)
        task_id = yield from self._submit("/backtest/portfolio", None, idempotency_key, files=files)
        return self._portfolio_task(self, task_id)

    @call
    def scanner_backtest(
        self,
        *,
        start_date: DateLike,
        end_date: DateLike,
        signals: Iterable[str],
        total_capital: float,
        find_type: Literal["stock", "etf", "stock/etf"],
        long_short_ratio: str,
        capital_allocate: str | None = None,
        commission: float | None = None,
        daily_limit: int | None = None,
        rank_condition: str | None = None,
        optix_range: str | None = None,
        profit_target_range: str | None = None,
        reltrend_range: str | None = None,
        stop_loss_range: str | None = None,
        time_in_market_range: str | None = None,
        trend_range: str | None = None,
        name: str | None = None,
        idempotency_key: str | None = None,
    ) -> Op[ST]:
        """A scanner backtest: the scanner's signals traded over a span.

        Args:
            start_date, end_date: the first and last session.
            signals: signal names (`/smart-scanner-backtest/get-predefined-signals`).
            total_capital: the starting capital.
            find_type: `stock`, `etf` or `stock/etf`.
            long_short_ratio: `long/short` shares of the capital (`1/0`).
            capital_allocate: `Kelly` (the server's default) or a fraction.
            commission: percent of the traded value.
            daily_limit: new trades a session at most.
            rank_condition: the daily ranking (docs/scanner.md).
            optix_range ... trend_range: `lo-hi` filters on the signals.
            name: the task's name.
            idempotency_key: as `backtest` takes it.

        Returns:
            The task; `wait()` it, then read `trades` and `equity`.

        Raises:
            MarketlabError: a parameter was refused (`field` names it)."""
        body = _given(start_date=start_date, end_date=end_date, signals=list(signals), total_capital=total_capital,
                      find_type=find_type, long_short_ratio=long_short_ratio, capital_allocate=capital_allocate,
                      commission=commission, daily_limit=daily_limit, rank_condition=rank_condition,
                      optix_range=optix_range, profit_target_range=profit_target_range,
                      reltrend_range=reltrend_range, stop_loss_range=stop_loss_range,
                      time_in_market_range=time_in_market_range, trend_range=trend_range, name=name)
        task_id = yield from self._submit("/smart-scanner-backtest/start", body, idempotency_key)
        return self._scanner_task(self, task_id)

    # -- analytics ---------------------------------------------------------

    @call
    def seasonality(
        self,
        ticker: str,
        view: View = "month",
        *,
        start_year: int | None = None,
        end_year: int | None = None,
        holiday_name: str | None = None,
        month: int | None = None,
        day: int | None = None,
        shift: int | None = None,
        target_month: str | None = None,
        category: str | None = None,
        entry_day: int | None = None,
        holding_days: int | None = None,
        exit_day: int | None = None,
    ) -> Op[pd.DataFrame]:
        """A seasonality table of `ticker` (docs/python.md, "Seasonality",
        gives each view's columns).

        Args:
            ticker: the symbol.
            view: `month`, `week`, `day_of_month`, `day_of_year`,
                `holiday` (`holiday_name`, `shift`), `specific_days`
                (`month`, `day`, `shift`), `single_month` (`target_month`,
                `category`) or `dollar_curve` (`entry_day`, `holding_days`,
                `exit_day`).
            start_year, end_year: the years counted (default all).

        Returns:
            One row per period, indexed by it: `weekday` (week), `month`
            (month), `month` and `day` (day_of_month), `day` (day_of_year,
            single_month), `day_offset` (holiday, specific_days) or `date`
            (dollar_curve). Columns among `mean_return`, `max_return`,
            `min_return` (percent), `positive_pct` (percent of periods that
            rose) and `equity` (dollar_curve). Weekdays and months are
            ordered categoricals, dates datetimes, days integers; the
            answer's settings (`holiday_name`, `shift`, ...) are in `attrs`.

        Raises:
            ValueError: an unknown view.
            UnknownSymbol: no data for `ticker`.
            MarketlabError: a parameter was refused, or too few years."""
        try:
            path = SEASONALITY[view]
        except KeyError:
            raise ValueError(f"view must be one of {', '.join(SEASONALITY)}, got {view!r}") from None
        params = _given(ticker=ticker, start_year=start_year, end_year=end_year, holiday_name=holiday_name, month=month,
                        day=day, shift=shift, target_month=target_month, category=category, entry_day=entry_day,
                        holding_days=holding_days, exit_day=exit_day)
        data = yield from self._analytics("GET", f"/seasonality/{path}", params=params)
        return seasonality_frame(view, data)

    @call
    def correlation(self, benchmark: str, symbols: str | Iterable[str], start_date: DateLike, end_date: DateLike, *,
                    roll_window: int | None = None) -> Op[pd.DataFrame]:
        """Each symbol's rolling return correlation with the benchmark.

        Args:
            benchmark: the benchmark's symbol.
            symbols: one symbol, or several.
            start_date, end_date: the span (text, `date`, `datetime`,
                `pd.Timestamp`).
            roll_window: sessions per window (default 21).

        Returns:
            One column per symbol, by a DatetimeIndex `Date`;
            `attrs["corr_matrix"]` is the correlation matrix's rows.

        Raises:
            UnknownSymbol: a symbol has no data.
            MarketlabError: too few common sessions, or a bad parameter."""
        return (yield from self._rolling("/symbol_corr", benchmark, symbols, start_date, end_date, roll_window))

    @call
    def correlation_matrix(self, benchmark: str, symbols: str | Iterable[str], start_date: DateLike, end_date: DateLike, *,
                           roll_window: int | None = None) -> Op[pd.DataFrame]:
        """The return correlation matrix of the benchmark and the symbols:
        rows and columns by symbol (the index is named `symbol`).
        Arguments and errors as `correlation`."""
        frame = yield from self._rolling("/symbol_corr", benchmark, symbols, start_date, end_date, roll_window)
        matrix = pd.DataFrame.from_records(frame.attrs["corr_matrix"]).set_index("index")
        matrix.index.name = "symbol"
        return matrix

    @call
    def beta(self, benchmark: str, symbols: str | Iterable[str], start_date: DateLike, end_date: DateLike, *,
             roll_window: int | None = None) -> Op[pd.DataFrame]:
        """Each symbol's rolling beta against the benchmark, one column per
        symbol by a DatetimeIndex `Date`. Arguments and errors as
        `correlation`."""
        return (yield from self._rolling("/symbol_beta", benchmark, symbols, start_date, end_date, roll_window))

    def _rolling(self, path: str, benchmark: str, symbols: str | Iterable[str], start_date: DateLike,
                 end_date: DateLike, roll_window: int | None) -> Op[pd.DataFrame]:
        body = _given(benchmark=benchmark, stock_comparison=symbol_list(symbols), start_date=as_date(start_date),
                      end_date=as_date(end_date), roll_window=roll_window)
        frame = yield from self._arrow("POST", path, json=body)
        error = envelope_error(frame.attrs)
        if error is not None:
            raise error
        frame = frame.set_index("Date")
        frame.index = pd.DatetimeIndex(pd.to_datetime(frame.index), name="Date").as_unit("ns")
        # The benchmark's own price rides along in the answer; the frame
        # holds only what it says it holds.
        return frame.drop(columns=["stock_price"], errors="ignore")

    @call
    def asset_correlation(self, start_date: DateLike, end_date: DateLike) -> Op[pd.DataFrame]:
        """Return correlations among the cross-asset symbols, rows and
        columns by symbol (index named `symbol`)."""
        data = yield from self._analytics("POST", "/asset_corr", json={"start_date": as_date(start_date), "end_date": as_date(end_date)})
        rows = next((v for v in data.values() if isinstance(v, list)), [])
        frame = records_frame(rows)
        if "index" in frame.columns:
            frame = frame.set_index("index")
            frame.index.name = "symbol"
        return frame

    @call
    def screens(self) -> Op[pd.DataFrame]:
        """The predefined screens, one row each (`key`, `category`, ...)."""
        data = yield from self._analytics("GET", "/screens/get-predefined-screens")
        return records_frame(data["screens"])

    @call
    def screen(self, key: str, date: DateLike | None = None) -> Op[pd.DataFrame]:
        """One screen's rows on `date` (default the latest session); the
        answer's other fields go to `attrs`."""
        params = _given(key=key, date=date)
        data = yield from self._analytics("GET", "/screens", params=params)
        if isinstance(data, dict):
            rows = next((v for v in data.values() if isinstance(v, list)), [])
            frame = records_frame(rows)
            frame.attrs.update({k: v for k, v in data.items() if not isinstance(v, list)})
            return frame
        return records_frame(data)

    @call
    def scanner(
        self,
        date: DateLike | None = None,
        *,
        ticker: str | None = None,
        category: Literal["SwingAI", "MidTermAI"] | None = None,
        include_backtest: bool | None = None,
        limit: int | None = None,
        offset: int | None = None,
    ) -> Op[pd.DataFrame]:
        """The scanner's signals of a session (default the latest), one row
        each; `attrs` holds the day's `as_of_date` and `count`.

        Args:
            date: the session.
            ticker: one ticker's signals only.
            category: `SwingAI` or `MidTermAI`.
            include_backtest: with each signal's backtest figures.
            limit, offset: a page of the rows (limit at most 50).

        Raises:
            MarketlabError: a parameter was refused."""
        params = _given(date=date, ticker=ticker, category=category, include_backtest=include_backtest, limit=limit, offset=offset)
        return (yield from self._arrow("GET", "/smart-stock-scanner/latest-day-all", params=params))

    @call
    def scanner_history(self, ticker: str, *, start_date: DateLike | None = None, end_date: DateLike | None = None,
                        include_backtest: bool | None = None) -> Op[pd.DataFrame]:
        """One ticker's scanner signals over time, by a DatetimeIndex `Date`."""
        params = _given(start_date=start_date, end_date=end_date, include_backtest=include_backtest)
        data = yield from self._analytics("GET", f"/smart-stock-scanner/single/{ticker}", params=params)
        rows = data.get("scanner_data", []) if isinstance(data, dict) else data
        return dated(records_frame(rows), "Date")

    @call
    def options(
        self,
        *,
        ticker: str | None = None,
        date: DateLike | None = None,
        min_pop: float | None = None,
        max_dte: int | None = None,
        min_oi: int | None = None,
        sort: Literal["cagr", "ev_score", "POP_est", "return_per", "IV", "OI", "Volume", "DTE"] | None = None,
        limit: int | None = None,
    ) -> Op[pd.DataFrame]:
        """The option scanner's candidates, one row each.

        Args:
            ticker: one underlying only.
            date: the session (default the latest).
            min_pop: the least probability of profit, percent.
            max_dte: days to expiry at most (1-60).
            min_oi: the least open interest.
            sort: the column ranked by.
            limit: rows at most (1-5000).

        Raises:
            MarketlabError: a parameter was refused."""
        params = _given(ticker=ticker, date=date, min_pop=min_pop, max_dte=max_dte, min_oi=min_oi, sort=sort, limit=limit)
        data = yield from self._analytics("GET", "/smart-option-scanner/options", params=params)
        rows = next((v for v in data.values() if isinstance(v, list)), []) if isinstance(data, dict) else data
        return records_frame(rows)

    # -- data service ------------------------------------------------------

    @call
    def symbols(self) -> Op[pd.DataFrame]:
        """The indicator catalogue, one row each (`chart_name`, `url`)."""
        body = yield from self._json("GET", "/ws/getAllSymbols")
        return records_frame(body)

    @call
    def prices(self, symbol: str | Iterable[str], start: DateLike | None = None, end: DateLike | None = None,
               adjusted: bool = True) -> Op[pd.DataFrame]:
        """Stored symbols' daily bars: one symbol's frame, or one frame for
        a list of them.

        Args:
            symbol: the symbol, or a list of symbols (each fetched in turn;
                one listed twice is fetched once).
            start, end: the first and last date (each optional; text,
                `date`, `datetime` or `pd.Timestamp`).
            adjusted: split-adjusted (the default: prices before each
                recorded split divided by its ratio) or as traded (False).

        Returns:
            One symbol: `Open`, `High`, `Low`, `Close`, `Volume` by a
            DatetimeIndex `Date` (datetime64[ns]): what
            `backtest(strategy, bars=...)` takes; `attrs` says `symbol`
            and `adjusted`.

            A list: one frame shaped like yfinance's multi-symbol
            download: columns a MultiIndex (`field`, `symbol`), fields in
            the order above and symbols in the order given
            (`frame["Close"]` is a column per symbol,
            `frame.xs("KO", axis=1, level="symbol")` one symbol's bars),
            rows the union of the symbols' dates by `Date`, NaN where a
            symbol has no bar (its `Volume` then float); `attrs` says
            `symbols` and `adjusted`.

        Raises:
            UnknownSymbol: no bars are stored for a symbol.
            MarketlabError: a malformed date, or `start` after `end`.
            ValueError: an empty list."""
        if isinstance(symbol, str):
            return (yield from self._prices(symbol, start, end, adjusted))
        listed: dict[str, str] = {}
        for given in symbol:
            listed.setdefault(str(given).upper(), str(given))
        if not listed:
            raise ValueError("prices() takes a symbol or a non-empty list of symbols")
        frames: dict[str, pd.DataFrame] = {}
        for label, given in listed.items():
            frames[label] = yield from self._prices(given, start, end, adjusted)
        fields = list(dict.fromkeys(f for one in frames.values() for f in one.columns))
        frame = pd.concat(frames, axis=1, join="outer", sort=True).swaplevel(axis=1)
        frame = frame.reindex(columns=pd.MultiIndex.from_product([fields, list(frames)], names=["field", "symbol"]))
        frame.index = pd.DatetimeIndex(frame.index, name="Date").as_unit("ns")
        frame.attrs = {"symbols": list(frames), "adjusted": adjusted}
        return frame

    def _prices(self, symbol: str, start: DateLike | None, end: DateLike | None, adjusted: bool) -> Op[pd.DataFrame]:
        """One symbol's bars by a datetime64[ns] `Date` index."""
        params = {"format": "arrow", "start": _date(start), "end": _date(end),
                  "adjusted": None if adjusted else "false"}
        frame = yield from self._arrow("GET", f"/ws/prices/{symbol}", params=params)
        frame.index = pd.DatetimeIndex(pd.to_datetime(frame.pop("Date")), name="Date").as_unit("ns")
        frame.attrs["symbol"] = symbol.upper()
        frame.attrs["adjusted"] = adjusted
        return frame

    @call
    def history(self, symbol: str, days: int | None = None, sentiment: bool = False) -> Op[pd.DataFrame]:
        """An indicator's series by date: all of it, or its last `days`.

        Raises:
            UnknownSymbol: no such indicator."""
        if days is None:
            kind = "SymbolSentimentData" if sentiment else "SymbolData"
            path, params = f"/ws/get{kind}/{symbol}", None
        else:
            kind = "SymbolDataSentimentLimitDays" if sentiment else "SymbolDataLimitDays"
            path, params = f"/ws/get{kind}/{symbol}", {"days": days}
        frame = yield from self._arrow("GET", path, params=params)
        return frame.set_index("Date")

    # -- webhooks ----------------------------------------------------------

    @call
    def add_webhook(self, url: str, events: Iterable[str] | None = None, description: str | None = None) -> Op[dict[str, Any]]:
        """Registers an endpoint. Sent once: a dropped connection raises
        rather than register it twice.

        Returns:
            The endpoint (`id`, `url`, `events`, ...) and its `secret`
            (`whsec_...`), shown only here: keep it to verify deliveries
            (`marketlab.verify_webhook`).

        Raises:
            MarketlabError: the URL was refused (a private address unless
                the server allows loopback)."""
        body = _given(url=url, events=list(events) if events is not None else None, description=description)
        return (yield from self._object("POST", "/webhooks", json=body))

    @call
    def webhooks(self) -> Op[pd.DataFrame]:
        """The account's endpoints, one row each (no secrets)."""
        body = yield from self._json("GET", "/webhooks")
        return pd.DataFrame(body["endpoints"])

    @call
    def rotate_webhook(self, webhook_id: str, keep_previous_hours: float = 24) -> Op[dict[str, Any]]:
        """A new secret (in the answer); the previous one keeps signing
        beside it for `keep_previous_hours`."""
        return (yield from self._object("POST", f"/webhooks/{webhook_id}/rotate", json={"keep_previous_hours": keep_previous_hours}))

    @call
    def delete_webhook(self, webhook_id: str) -> Op[None]:
        """Removes an endpoint; its pending deliveries are dropped."""
        yield from self._send("DELETE", f"/webhooks/{webhook_id}")

    @call
    def webhook_deliveries(self, webhook_id: str, limit: int = 50) -> Op[pd.DataFrame]:
        """The endpoint's delivery log, newest first: one row per delivery
        (`id` is the `webhook-id`), its attempts as a list."""
        body = yield from self._json("GET", f"/webhooks/{webhook_id}/deliveries", params={"limit": limit})
        frame = pd.DataFrame(body["deliveries"])
        for column in ("created_at", "next_attempt"):
            if column in frame:
                frame[column] = pd.to_datetime(frame[column], utc=True).dt.as_unit("ns")
        return frame

    @call
    def redeliver(self, webhook_id: str, delivery_id: str) -> Op[dict[str, Any]]:
        """Sends a delivery again (same `webhook-id` and body)."""
        return (yield from self._object("POST", f"/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver"))

    # -- account -----------------------------------------------------------

    @call
    def usage(self, month: DateLike | None = None, by_key: bool = False) -> Op[dict[str, Any]]:
        """The account's usage this month (or `month`: `YYYY-MM`, or a date
        in it) beside its plan's limits; a test key sees its test books.
        With `by_key`, `keys` breaks the month down by the account's keys
        (requests, tasks submitted, data returned)."""
        params: dict[str, Any] = {}
        if month is not None:
            params["month"] = as_month(month)
        if by_key:
            params["by"] = "key"
        return (yield from self._object("GET", "/usage", params=params or None))

    # -- API keys ----------------------------------------------------------

    @call
    def create_key(
        self,
        name: str,
        scopes: Iterable[Literal["read", "submit", "manage"]] = ("read",),
        *,
        mode: Literal["live", "test"] | None = None,
        expires_at: str | None = None,
    ) -> Op[dict[str, Any]]:
        """Makes an API key: `read` (data, analytics, results), `submit`
        (tasks and batches), `manage` (keys, webhooks, alerts); `mode="test"`
        for the sandbox (sample data, its own tasks and usage, never billed);
        `expires_at` as RFC 3339. Sent once: a dropped connection raises
        rather than make two keys.

        Returns:
            The key's record and, in `key`, the key itself: shown only
            here (the server keeps a hash)."""
        body = _given(name=name, scopes=list(scopes), mode=mode, expires_at=expires_at)
        return (yield from self._object("POST", "/keys", json=body))

    @call
    def keys(self) -> Op[pd.DataFrame]:
        """The account's keys, newest first: one row each (`id`, `prefix`,
        `name`, `scopes`, `mode`, `status`, times), never their secrets."""
        body = yield from self._json("GET", "/keys")
        frame = pd.DataFrame(body["keys"], columns=[
            "id", "prefix", "name", "scopes", "mode", "status", "created_at", "expires_at", "revoked_at", "last_used_at"])
        for column in ("created_at", "expires_at", "revoked_at", "last_used_at"):
            frame[column] = pd.to_datetime(frame[column], utc=True).dt.as_unit("ns")
        return frame

    @call
    def revoke_key(self, key_id: str) -> Op[dict[str, Any]]:
        """Revokes a key (its `id`): refused everywhere within 5 s."""
        return (yield from self._object("DELETE", f"/keys/{key_id}"))


#: How a client signs in: a user and password (Basic), or an API key.
Credentials = tuple[str, str] | str


def _credentials(user: str | None, password: str | None, api_key: str | None) -> Credentials:
    """The credentials given, or `MARKETLAB_API_KEY` when none are."""
    import os

    if api_key is not None and (user is not None or password is not None):
        raise ValueError("give an API key or a user and password, not both")
    if api_key is None and user is None and password is None:
        api_key = os.environ.get("MARKETLAB_API_KEY")
    if api_key is not None:
        return api_key
    if user is None or password is None:
        raise ValueError("give api_key= (or set MARKETLAB_API_KEY), or a user and a password")
    return (user, password)


def connection_options(credentials: Credentials, url: str = "") -> dict[str, Any]:
    """What the HTTP client is made with: the credentials, and for a server
    on this machine (`localhost`, a loopback address) `Accept-Encoding:
    identity`: on loopback the bytes cost nothing, and compressing and
    decompressing a JSON answer only adds time (2.9 MB: 139 ms gzip'd, 76
    ms as it is; docs/decisions.md). Other servers get httpx's default."""
    headers = {"Accept-Encoding": "identity"} if is_loopback(url) else {}
    if isinstance(credentials, str):
        return {"headers": {**headers, "Authorization": f"Bearer {credentials}"}}
    return {"auth": credentials, "headers": headers}


def is_loopback(url: str) -> bool:
    """Whether `url` names this machine: `localhost` or a loopback address."""
    import ipaddress
    from urllib.parse import urlsplit

    host = (urlsplit(url).hostname or "").rstrip(".").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _date(value: DateLike | None) -> str | None:
    return None if value is None else as_date(value)


def _given(**values: Any) -> dict[str, Any]:
    """The arguments given (not None), dates as `YYYY-MM-DD`."""
    return {k: as_date(v) if k.endswith("date") else v for k, v in values.items() if v is not None}


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
