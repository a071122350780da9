"""marketlab: backtests, batches, analytics and market data from a
marketlab server as pandas DataFrames.

    from marketlab import Client
    client = Client.from_env()
    task = client.backtest(strategy).wait()
    task.result, task.trades, task.equity

or, under asyncio, the same calls awaited:

    client = AsyncClient.from_env()
    task = await (await client.backtest(strategy)).wait()
    await task.equity
"""

from .client import AsyncClient, Client
from .errors import ConnectionFailed, MarketlabError, RateLimited, TaskFailed, TaskTimeout, UnknownSymbol, WebhookVerificationError
from .monte_carlo import MonteCarlo
from .ratelimits import RateLimit
from .strategies import (
    Condition,
    EntryBlock,
    ExitBlock,
    Rule,
    RiskControlOnly,
    Scoring,
    Signal,
    SingleCondition,
    Strategy,
    TimeOrder,
    signal,
    sma,
    sma_cross,
    when,
)
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
    Task,
)
from .webhooks import verify_webhook

__version__ = "1.0.0"

__all__ = [
    "Client",
    "AsyncClient",
    "MarketlabError",
    "ConnectionFailed",
    "RateLimited",
    "TaskFailed",
    "TaskTimeout",
    "UnknownSymbol",
    "Task",
    "BacktestTask",
    "BatchTask",
    "CpmTask",
    "ScannerBacktestTask",
    "PortfolioTask",
    "AsyncBacktestTask",
    "AsyncBatchTask",
    "AsyncCpmTask",
    "AsyncScannerBacktestTask",
    "AsyncPortfolioTask",
    "MonteCarlo",
    "RateLimit",
    "WebhookVerificationError",
    "verify_webhook",
    "Strategy",
    "EntryBlock",
    "ExitBlock",
    "SingleCondition",
    "Scoring",
    "TimeOrder",
    "RiskControlOnly",
    "Condition",
    "Signal",
    "Rule",
    "signal",
    "sma",
    "sma_cross",
    "when",
]
