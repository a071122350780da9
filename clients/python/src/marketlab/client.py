"""The two clients: `Client` (blocking, on `httpx.Client`) and
`AsyncClient` (on `httpx.AsyncClient`), with one surface (`marketlab.api`):
what a `Client` call answers, the same call on an `AsyncClient` answers
as an awaitable. Both send an API key (Bearer) or Basic credentials; submissions carry an
`Idempotency-Key`, so a retried submit never runs twice."""

from __future__ import annotations

from typing import Any, TypeVar

import httpx

from .api import Api, Credentials, connection_options
from .calls import Awaiting, Blocking, Op, drive, drive_async
from .tasks import (
    AsyncBacktestTask,
    AsyncBatchTask,
    AsyncCpmTask,
    AsyncPortfolioTask,
    AsyncScannerBacktestTask,
    BacktestTask,
    BatchTask,
    CpmTask,
    PortfolioTask,
    ScannerBacktestTask,
)

T = TypeVar("T")

class Client(Api[BacktestTask, BatchTask, CpmTask, ScannerBacktestTask, PortfolioTask], Blocking):
    """A marketlab server for one account; every call blocks until its
    answer. Options as `Api` takes them."""

    _backtest_task = BacktestTask
    _batch_task = BatchTask
    _cpm_task = CpmTask
    _scanner_task = ScannerBacktestTask
    _portfolio_task = PortfolioTask

    def _connect(self, credentials: Credentials, timeout: float) -> None:
        self.http = httpx.Client(base_url=self.url, timeout=timeout, **connection_options(credentials, self.url))

    def _drive(self, op: Op[T]) -> T:
        return drive(self.http, op)

    def close(self) -> None:
        """Closes the connections."""
        self.http.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


class AsyncClient(
    Api[AsyncBacktestTask, AsyncBatchTask, AsyncCpmTask, AsyncScannerBacktestTask, AsyncPortfolioTask], Awaiting
):
    """A marketlab server for one account, for asyncio: the calls of
    `Client`, each awaited (`await client.prices("SPX")`,
    `task = await client.backtest(s)`, `await task.wait()`,
    `await task.equity`). Options as `Api` takes them."""

    _backtest_task = AsyncBacktestTask
    _batch_task = AsyncBatchTask
    _cpm_task = AsyncCpmTask
    _scanner_task = AsyncScannerBacktestTask
    _portfolio_task = AsyncPortfolioTask

    def _connect(self, credentials: Credentials, timeout: float) -> None:
        self.http = httpx.AsyncClient(base_url=self.url, timeout=timeout, **connection_options(credentials, self.url))

    async def _drive(self, op: Op[T]) -> T:
        return await drive_async(self.http, op)

    async def close(self) -> None:
        """Closes the connections."""
        await self.http.aclose()

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *_: Any) -> None:
        await self.close()
