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
from .errors import (
    ConnectionFailed,
    InsufficientData,
    MarketlabError,
    NoData,
    RateLimited,
    TaskFailed,
    TaskTimeout,
    UnknownSymbol,
    WebhookVerificationError,
)
from .monte_carlo import MonteCarlo
from .portfolio_inputs import (
    AllSelect,
    BottomSelect,
    EqualSizing,
    EqualWeighting,
    FixedFractionSizing,
    FixedWeighting,
    InverseVolatilitySizing,
    InverseVolatilityWeighting,
    KellySizing,
    MomentumScore,
    Portfolio,
    RankBy,
    Schedule,
    Score,
    Select,
    SelectScore,
    SignalMode,
    Sizing,
    Technical,
    TechnicalScore,
    TopSelect,
    VolatilityScore,
    VolatilityTargetSizing,
    WeightMode,
    Weighting,
)
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
    "NoData",
    "InsufficientData",
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
    "Portfolio",
    "SignalMode",
    "WeightMode",
    "Schedule",
    "Select",
    "AllSelect",
    "TopSelect",
    "BottomSelect",
    "Weighting",
    "EqualWeighting",
    "InverseVolatilityWeighting",
    "FixedWeighting",
    "Sizing",
    "EqualSizing",
    "FixedFractionSizing",
    "InverseVolatilitySizing",
    "VolatilityTargetSizing",
    "KellySizing",
    "RankBy",
    "Score",
    "SelectScore",
    "MomentumScore",
    "VolatilityScore",
    "TechnicalScore",
    "Technical",
]
