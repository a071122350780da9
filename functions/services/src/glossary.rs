//! The results glossary: every metric and every trade, order and equity
//! column of every result kind under one name, in one unit, with one
//! definition, and where each kind's JSON answers it (docs/results.md is
//! rendered from here, and the report pages take their labels from here).
//!
//! Units are fractions (0.05 is 5 %) in the Python package's frames and in
//! every JSON the spec does not define. The spec's legacy JSON (the
//! backtest result of 2.11, a batch's rows, which carry 2.11's metric
//! names, and the scanner backtest of analytics 2.6) keeps the spec's names
//! and percent: each [`Field`] says which name a kind answers and its
//! `scale` (the JSON value is the glossary's value times the scale).

use std::fmt::Write;

/// What a figure counts in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// A share or a change: 0.05 is 5 %.
    Fraction,
    /// A plain number (Sharpe, beta, capture).
    Ratio,
    /// The account's currency.
    Money,
    Count,
    /// Sessions (bars for an hourly backtest).
    Sessions,
    /// Shares or contracts.
    Units,
    /// A price in the symbol's currency.
    Price,
    Text,
    Datetime,
}

impl Unit {
    pub fn as_str(self) -> &'static str {
        match self {
            Unit::Fraction => "fraction",
            Unit::Ratio => "ratio",
            Unit::Money => "money",
            Unit::Count => "count",
            Unit::Sessions => "sessions",
            Unit::Units => "units",
            Unit::Price => "price",
            Unit::Text => "text",
            Unit::Datetime => "datetime",
        }
    }
}

/// The pandas dtype the package gives a figure or column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dtype {
    Float64,
    Int64,
    /// Python strings.
    Object,
    /// `datetime64[ns]`, NaT where missing.
    Datetime,
}

impl Dtype {
    pub fn as_str(self) -> &'static str {
        match self {
            Dtype::Float64 => "float64",
            Dtype::Int64 => "int64",
            Dtype::Object => "object",
            Dtype::Datetime => "datetime64[ns]",
        }
    }
}

/// A result kind, as the service answers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A strategy backtest: metrics in the task's `result` (2.11), trades
    /// and equity in `GET /backtest/chart/{task_id}`.
    Backtest,
    /// A row of a batch's results (2.11's metric names).
    BatchRow,
    /// A portfolio backtest: metrics in the task's `result`, tables at
    /// `GET /backtest/portfolio/{task_id}/{trades,orders,equity}`.
    Portfolio,
    /// A row of a batch of portfolios (a portfolio grid): a batch row.
    PortfolioGridRow,
    /// A scanner backtest: the task's `result.data` (analytics 2.6).
    ScannerBacktest,
    /// A batch's walk-forward: the batch status's `walk_forward`.
    WalkForward,
}

impl Kind {
    pub const ALL: [Kind; 6] = [
        Kind::Backtest,
        Kind::BatchRow,
        Kind::Portfolio,
        Kind::PortfolioGridRow,
        Kind::ScannerBacktest,
        Kind::WalkForward,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Backtest => "backtest",
            Kind::BatchRow => "batch row",
            Kind::Portfolio => "portfolio",
            Kind::PortfolioGridRow => "portfolio grid row",
            Kind::ScannerBacktest => "scanner backtest",
            Kind::WalkForward => "walk-forward",
        }
    }

    /// Where the kind's JSON is, for the page.
    fn source(self) -> &'static str {
        match self {
            Kind::Backtest => {
                "metrics: the task's `result` (the spec's 2.11, percent); trades and equity: `GET /backtest/chart/{task_id}` (`trades`, and one array per column by bar; also `/backtest/trades/{task_id}` and `/backtest/equity/{task_id}` as rows)"
            }
            Kind::BatchRow => {
                "each row of `GET /backtest/batch/{batch_id}/results` (JSON, CSV, Parquet or Arrow) and `/rows`: 2.11's metric names, percent"
            }
            Kind::Portfolio => {
                "metrics: the task's `result` (`relative.*` against the benchmark); tables: `GET /backtest/portfolio/{task_id}/trades`, `/orders`, `/equity`"
            }
            Kind::PortfolioGridRow => {
                "each row of a batch of portfolios (a portfolio grid): a batch row, 2.11's names, percent"
            }
            Kind::ScannerBacktest => {
                "the task's `result.data` (analytics 2.6, percent): metrics at its top, trades as the arrays of its `result`, equity as `dates`, `equity`, `cash`"
            }
            Kind::WalkForward => {
                "the batch status's `walk_forward`: the stitched out-of-sample run's figures and `equity` (`time`, `equity` from 1)"
            }
        }
    }
}

/// Where one kind's JSON answers a glossary entry.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Field {
    pub kind: Kind,
    /// The JSON field: a key of the kind's object (`STD.DEV` is one key), or
    /// a dotted path inside it (`relative.alpha`) where no key has the dot.
    pub field: &'static str,
    /// The JSON value is the glossary's value times this: 1, 100 for the
    /// spec's percent fields, -100 for a positive percent of a fall.
    pub scale: f64,
    /// How the value reads otherwise (a renamed value, a sign), or "".
    pub note: &'static str,
}

const fn at(kind: Kind, field: &'static str, scale: f64) -> Field {
    Field {
        kind,
        field,
        scale,
        note: "",
    }
}

const fn noted(kind: Kind, field: &'static str, scale: f64, note: &'static str) -> Field {
    Field {
        kind,
        field,
        scale,
        note,
    }
}

/// One name of the glossary.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Entry {
    /// The name in the package's frames and in own JSON.
    pub name: &'static str,
    /// The name a page shows.
    pub label: &'static str,
    pub unit: Unit,
    pub dtype: Dtype,
    pub definition: &'static str,
    /// Where each kind that has it answers it.
    pub fields: &'static [Field],
}

impl Entry {
    /// The field `kind` answers this under, if it does.
    pub fn field(&self, kind: Kind) -> Option<&'static Field> {
        self.fields.iter().find(|f| f.kind == kind)
    }
}

use Kind::{Backtest, BatchRow, Portfolio, PortfolioGridRow, ScannerBacktest, WalkForward};

/// Percent in a 2.11 result, in batch rows and in portfolio grid rows.
macro_rules! spec_percent {
    ($name:literal) => {
        [
            at(Backtest, $name, 100.0),
            at(BatchRow, $name, 100.0),
            at(PortfolioGridRow, $name, 100.0),
        ]
    };
}

const fn metric(
    name: &'static str,
    label: &'static str,
    unit: Unit,
    definition: &'static str,
    fields: &'static [Field],
) -> Entry {
    Entry {
        name,
        label,
        unit,
        dtype: Dtype::Float64,
        definition,
        fields,
    }
}

const fn column(
    name: &'static str,
    label: &'static str,
    unit: Unit,
    dtype: Dtype,
    definition: &'static str,
    fields: &'static [Field],
) -> Entry {
    Entry {
        name,
        label,
        unit,
        dtype,
        definition,
        fields,
    }
}

const TOTAL_RETURN: [Field; 6] = {
    let [a, b, c] = spec_percent!("Total Return (%)");
    [
        a,
        b,
        at(Portfolio, "total_return", 1.0),
        c,
        at(ScannerBacktest, "TOTAL RETURN", 100.0),
        at(WalkForward, "total_return", 1.0),
    ]
};
const CAGR: [Field; 5] = {
    let [a, b, c] = spec_percent!("CAGR");
    [
        a,
        b,
        at(Portfolio, "cagr", 1.0),
        c,
        at(WalkForward, "cagr", 1.0),
    ]
};
const VOLATILITY: [Field; 4] = {
    let [a, b, c] = spec_percent!("Annual Volatility");
    [a, b, at(Portfolio, "annual_volatility", 1.0), c]
};
/// A ratio of 2.11 under `spec`, of a portfolio under `own`.
macro_rules! ratio_fields {
    ($spec:literal, $own:literal) => {
        [
            at(Backtest, $spec, 1.0),
            at(BatchRow, $spec, 1.0),
            at(Portfolio, $own, 1.0),
            at(PortfolioGridRow, $spec, 1.0),
        ]
    };
}
const SHARPE: [Field; 5] = {
    let [a, b, c, d] = ratio_fields!("Sharpe Ratio", "sharpe");
    [a, b, c, d, at(WalkForward, "sharpe", 1.0)]
};
const SORTINO: [Field; 4] = ratio_fields!("Sortino Ratio", "sortino");
const CALMAR: [Field; 4] = ratio_fields!("Calmar Ratio", "calmar");
const MAX_DRAWDOWN: [Field; 6] = {
    let [a, b, c] = spec_percent!("Max Drawdown");
    [
        a,
        b,
        at(Portfolio, "max_drawdown", 1.0),
        c,
        noted(
            ScannerBacktest,
            "MAX RISK",
            -100.0,
            "the depth as a positive percent",
        ),
        at(WalkForward, "max_drawdown", 1.0),
    ]
};
const DRAWDOWN_PERIOD: [Field; 4] = ratio_fields!("DrawDown Period", "drawdown_period");
const TIME_IN_MARKET: [Field; 5] = {
    let [a, b, c] = spec_percent!("Time in Market");
    [
        a,
        b,
        at(Portfolio, "time_in_market", 1.0),
        c,
        at(ScannerBacktest, "TIME IN MARKET", 100.0),
    ]
};
const TOTAL_TRADES: [Field; 5] = {
    let [a, b, c, d] = ratio_fields!("Total Trades", "total_trades");
    [a, b, c, d, at(ScannerBacktest, "TOTAL TRADES", 1.0)]
};
const WIN_RATE: [Field; 5] = {
    let [a, b, c] = spec_percent!("Win Rate");
    [
        a,
        b,
        at(Portfolio, "win_rate", 1.0),
        c,
        at(ScannerBacktest, "WIN RATE", 100.0),
    ]
};
const AVERAGE_WIN: [Field; 5] = {
    let [a, b, c] = spec_percent!("Average Win %");
    [
        a,
        b,
        at(Portfolio, "average_win", 1.0),
        c,
        at(ScannerBacktest, "AVERAGE WIN", 100.0),
    ]
};
const AVERAGE_LOSS: [Field; 5] = {
    let [a, b, c] = spec_percent!("Average Loss %");
    [
        a,
        b,
        at(Portfolio, "average_loss", 1.0),
        c,
        at(ScannerBacktest, "AVERAGE LOSS", 100.0),
    ]
};
const BUY_HOLD: [Field; 2] = [
    at(Backtest, "BuyHoldGain", 100.0),
    at(BatchRow, "BuyHoldGain", 100.0),
];

/// The figures of a result (the package's `.result`: a float64 Series).
pub const METRICS: &[Entry] = &[
    metric(
        "total_return",
        "Total Return",
        Unit::Fraction,
        "The final equity over the initial capital, less 1.",
        &TOTAL_RETURN,
    ),
    metric(
        "cagr",
        "CAGR",
        Unit::Fraction,
        "Compound annual growth: the final equity over the initial capital to the power of 1 over the calendar years (days / 365.25) from the first session to the last, less 1.",
        &CAGR,
    ),
    metric(
        "annual_volatility",
        "Annual Volatility",
        Unit::Fraction,
        "The sample standard deviation of the daily returns times the square root of the sessions in a year.",
        &VOLATILITY,
    ),
    metric(
        "sharpe",
        "Sharpe Ratio",
        Unit::Ratio,
        "The mean daily return over its sample standard deviation, times the square root of the sessions in a year (no risk-free rate).",
        &SHARPE,
    ),
    metric(
        "sortino",
        "Sortino Ratio",
        Unit::Ratio,
        "The mean daily return over its downside deviation (target 0), annualised as empyrical's `sortino_ratio`.",
        &SORTINO,
    ),
    metric(
        "calmar",
        "Calmar Ratio",
        Unit::Ratio,
        "The CAGR over the depth of the max drawdown (0 without a drawdown).",
        &CALMAR,
    ),
    metric(
        "max_drawdown",
        "Max Drawdown",
        Unit::Fraction,
        "The deepest fall of the equity below its highest value so far (the initial capital counting), 0 or negative.",
        &MAX_DRAWDOWN,
    ),
    metric(
        "drawdown_period",
        "Drawdown Period",
        Unit::Sessions,
        "The longest stretch of sessions (bars) with the equity below a previous peak.",
        &DRAWDOWN_PERIOD,
    ),
    metric(
        "time_in_market",
        "Time in Market",
        Unit::Fraction,
        "The share of the window's sessions with a position open.",
        &TIME_IN_MARKET,
    ),
    metric(
        "total_trades",
        "Total Trades",
        Unit::Count,
        "Round trips, from the entry until flat again; one still open at the end counts.",
        &TOTAL_TRADES,
    ),
    metric(
        "winning_trades",
        "Winning Trades",
        Unit::Count,
        "Trades with a return above 0.",
        &[
            at(Backtest, "Total Positive", 1.0),
            at(Portfolio, "winning_trades", 1.0),
            at(ScannerBacktest, "TOTAL POSITIVE", 1.0),
        ],
    ),
    metric(
        "losing_trades",
        "Losing Trades",
        Unit::Count,
        "Trades with a return below 0 (a return of exactly 0 is neither).",
        &[
            at(Backtest, "Total Negative", 1.0),
            at(Portfolio, "losing_trades", 1.0),
            at(ScannerBacktest, "TOTAL NEGATIVE", 1.0),
        ],
    ),
    metric(
        "win_rate",
        "Win Rate",
        Unit::Fraction,
        "Winning trades over all trades.",
        &WIN_RATE,
    ),
    metric(
        "average_win",
        "Average Win",
        Unit::Fraction,
        "The mean return of the winning trades.",
        &AVERAGE_WIN,
    ),
    metric(
        "average_loss",
        "Average Loss",
        Unit::Fraction,
        "The mean return of the losing trades, 0 or negative.",
        &AVERAGE_LOSS,
    ),
    metric(
        "average_trade_return",
        "Average Trade Return",
        Unit::Fraction,
        "The mean return of all trades.",
        &[at(ScannerBacktest, "AVERAGE RETURN", 100.0)],
    ),
    metric(
        "median_trade_return",
        "Median Trade Return",
        Unit::Fraction,
        "The median return of all trades.",
        &[at(ScannerBacktest, "MEDIAN RETURN", 100.0)],
    ),
    metric(
        "trade_return_std",
        "Trade Return Std. Dev.",
        Unit::Fraction,
        "The sample standard deviation of the trades' returns (0 below two trades).",
        &[at(ScannerBacktest, "STD.DEV", 100.0)],
    ),
    metric(
        "z_score",
        "Z-Score",
        Unit::Ratio,
        "The mean trade return over its standard error (0 when the deviation is 0).",
        &[at(ScannerBacktest, "Z-SCORE", 1.0)],
    ),
    metric(
        "initial_capital",
        "Initial Capital",
        Unit::Money,
        "The account's value at the start.",
        &[
            at(Backtest, "Initial Capital", 1.0),
            at(Portfolio, "initial_capital", 1.0),
        ],
    ),
    metric(
        "final_capital",
        "Final Capital",
        Unit::Money,
        "The account's value at the last session's close, open positions at that close.",
        &[
            at(Backtest, "Final Capital", 1.0),
            at(Portfolio, "final_capital", 1.0),
        ],
    ),
    metric(
        "buy_hold_return",
        "Buy and Hold Return",
        Unit::Fraction,
        "The traded symbol's change from the window's first close to its last.",
        &BUY_HOLD,
    ),
    metric(
        "benchmark_return",
        "Benchmark Return",
        Unit::Fraction,
        "The benchmark's change from its close on the first session to its close on the last.",
        &[
            at(Backtest, "Benchmark Return (%)", 100.0),
            at(Portfolio, "relative.benchmark_return", 1.0),
            noted(
                PortfolioGridRow,
                "BuyHoldGain",
                100.0,
                "a grid row's column of a strategy's buy and hold",
            ),
            noted(
                ScannerBacktest,
                "BUY and HOLD",
                100.0,
                "the S&P 500's change",
            ),
        ],
    ),
    metric(
        "average_exposure",
        "Average Exposure",
        Unit::Fraction,
        "The mean over the sessions of the open positions' value over the account's.",
        &[at(Portfolio, "average_exposure", 1.0)],
    ),
    metric(
        "average_position",
        "Average Position",
        Unit::Money,
        "The mean over the sessions of the open positions' market value.",
        &[at(ScannerBacktest, "AVERAGE POSITION", 1.0)],
    ),
    metric(
        "annual_turnover",
        "Annual Turnover",
        Unit::Fraction,
        "Half the value bought and sold per calendar year over the mean equity (one-way turnover).",
        &[at(Portfolio, "annual_turnover", 1.0)],
    ),
    metric(
        "alpha",
        "Alpha",
        Unit::Fraction,
        "Annualised as empyrical's `alpha`: (1 + the mean of r - beta b) to the power of the sessions in a year, less 1 (r and b the daily returns of the account and the benchmark).",
        &[at(Portfolio, "relative.alpha", 1.0)],
    ),
    metric(
        "beta",
        "Beta",
        Unit::Ratio,
        "The covariance of the daily returns with the benchmark's over the benchmark's variance.",
        &[at(Portfolio, "relative.beta", 1.0)],
    ),
    metric(
        "tracking_error",
        "Tracking Error",
        Unit::Fraction,
        "The sample standard deviation of the daily active returns (r - b), annualised.",
        &[at(Portfolio, "relative.tracking_error", 1.0)],
    ),
    metric(
        "information_ratio",
        "Information Ratio",
        Unit::Ratio,
        "The mean daily active return over its sample standard deviation, annualised.",
        &[at(Portfolio, "relative.information_ratio", 1.0)],
    ),
    metric(
        "up_capture",
        "Up Capture",
        Unit::Ratio,
        "The annualised return on the benchmark's up sessions over the benchmark's on them, as empyrical's `up_capture`.",
        &[at(Portfolio, "relative.up_capture", 1.0)],
    ),
    metric(
        "down_capture",
        "Down Capture",
        Unit::Ratio,
        "The annualised return on the benchmark's down sessions over the benchmark's on them, as empyrical's `down_capture`.",
        &[at(Portfolio, "relative.down_capture", 1.0)],
    ),
    metric(
        "crowded_out",
        "Crowded Out",
        Unit::Count,
        "Entries that fired with no free slot (a portfolio in signal mode).",
        &[at(Portfolio, "crowded_out", 1.0)],
    ),
    metric(
        "skipped_trades",
        "Skipped Trades",
        Unit::Count,
        "Trades that did not fit the cash or had no session to enter on (a scanner backtest).",
        &[at(ScannerBacktest, "skipped_trades", 1.0)],
    ),
];

/// The package's `.trades`: one row per round trip, indexed by `entry_time`.
pub const TRADES: &[Entry] = &[
    column(
        "entry_time",
        "Entry Time",
        Unit::Datetime,
        Dtype::Datetime,
        "The entry fill's session (its time for hourly bars): the frame's index.",
        &[
            at(Backtest, "trades.entry_time", 1.0),
            at(Portfolio, "entry_time", 1.0),
            at(ScannerBacktest, "result.Start Date", 1.0),
        ],
    ),
    column(
        "exit_time",
        "Exit Time",
        Unit::Datetime,
        Dtype::Datetime,
        "The exit fill's session; NaT while the trade is open.",
        &[
            noted(Backtest, "trades.exit_time", 1.0, "the last bar while open"),
            at(Portfolio, "exit_time", 1.0),
            at(ScannerBacktest, "result.Exit Date", 1.0),
        ],
    ),
    column(
        "symbol",
        "Symbol",
        Unit::Text,
        Dtype::Object,
        "The symbol traded.",
        &[
            at(Backtest, "trades.symbol", 1.0),
            at(Portfolio, "symbol", 1.0),
            at(ScannerBacktest, "result.Symbol", 1.0),
        ],
    ),
    column(
        "side",
        "Side",
        Unit::Text,
        Dtype::Object,
        "`long` or `short`.",
        &[
            at(Backtest, "trades.side", 1.0),
            at(Portfolio, "side", 1.0),
            noted(
                ScannerBacktest,
                "result.Direction",
                1.0,
                "`Long` or `Short`",
            ),
        ],
    ),
    column(
        "size",
        "Size",
        Unit::Units,
        Dtype::Float64,
        "The units held (the most held for a position built in steps), positive for either side.",
        &[
            at(Backtest, "trades.size", 1.0),
            at(Portfolio, "size", 1.0),
            at(ScannerBacktest, "result.Shares", 1.0),
        ],
    ),
    column(
        "entry_price",
        "Entry Price",
        Unit::Price,
        Dtype::Float64,
        "The entry's fill after slippage (a position built in steps: its first fill).",
        &[
            at(Backtest, "trades.entry_price", 1.0),
            at(Portfolio, "entry_price", 1.0),
            at(ScannerBacktest, "result.Price", 1.0),
        ],
    ),
    column(
        "exit_price",
        "Exit Price",
        Unit::Price,
        Dtype::Float64,
        "The exit's fill after slippage. While open: a backtest and a scanner backtest close it at the last close for their figures (the spec's rule for a backtest), after slippage; a portfolio values it at the last close as it is (as vectorbt values an open position).",
        &[
            at(Backtest, "trades.exit_price", 1.0),
            at(Portfolio, "exit_price", 1.0),
            at(ScannerBacktest, "result.Close", 1.0),
        ],
    ),
    column(
        "fees",
        "Fees",
        Unit::Money,
        Dtype::Float64,
        "The commissions of both sides (an open trade of a portfolio: its buys' only; a backtest's and a scanner backtest's include the exit they are closed with).",
        &[at(Backtest, "trades.fees", 1.0), at(Portfolio, "fees", 1.0)],
    ),
    column(
        "profit",
        "Profit",
        Unit::Money,
        Dtype::Float64,
        "Money made net of slippage and commissions; an open trade at the last close.",
        &[
            at(Backtest, "trades.profit", 1.0),
            at(Portfolio, "profit", 1.0),
            at(ScannerBacktest, "result.FloatProfit", 1.0),
        ],
    ),
    column(
        "return",
        "Return",
        Unit::Fraction,
        Dtype::Float64,
        "The profit (net of fees) over the entry's value at its fills: size times entry price, as vectorbt's trade return; a position built in several buys, over the sum of their values.",
        &[
            at(Backtest, "trades.return", 1.0),
            at(Portfolio, "return", 1.0),
        ],
    ),
    column(
        "bars_held",
        "Bars Held",
        Unit::Sessions,
        Dtype::Int64,
        "Sessions (bars) from the entry fill to the exit fill, to the last session while open.",
        &[
            at(Backtest, "trades.bars_held", 1.0),
            at(Portfolio, "bars_held", 1.0),
        ],
    ),
    column(
        "exit_reason",
        "Exit Reason",
        Unit::Text,
        Dtype::Object,
        "`Signal`, `Stop Loss`, `Take Profit`, `Max Holding`, `Rebalance` (a portfolio's weights) or `Open` (still held at the end).",
        &[
            at(Backtest, "trades.exit_reason", 1.0),
            at(Portfolio, "exit_reason", 1.0),
            noted(
                ScannerBacktest,
                "result.OrderStatus",
                1.0,
                "`Profit Target` is Take Profit, `Time Is Up` Max Holding",
            ),
        ],
    ),
    column(
        "mae",
        "MAE",
        Unit::Fraction,
        Dtype::Float64,
        "Maximum adverse excursion: the worst move against the position while held (the held bars' lows, highs for a short), a fraction of the entry's price before slippage, 0 or negative; NaN where a kind keeps no bars between (a portfolio, a scanner backtest).",
        &[at(Backtest, "trades.mae", 1.0)],
    ),
    column(
        "mfe",
        "MFE",
        Unit::Fraction,
        Dtype::Float64,
        "Maximum favourable excursion: the best move for the position while held, a fraction of the entry's price before slippage, 0 or positive; NaN where not defined.",
        &[at(Backtest, "trades.mfe", 1.0)],
    ),
];

/// The package's `.orders`: one row per fill, indexed by `time`.
pub const ORDERS: &[Entry] = &[
    column(
        "time",
        "Time",
        Unit::Datetime,
        Dtype::Datetime,
        "The fill's session: the frame's index.",
        &[at(Portfolio, "time", 1.0)],
    ),
    column(
        "symbol",
        "Symbol",
        Unit::Text,
        Dtype::Object,
        "The symbol bought or sold.",
        &[at(Portfolio, "symbol", 1.0)],
    ),
    column(
        "side",
        "Side",
        Unit::Text,
        Dtype::Object,
        "`buy` or `sell`.",
        &[at(Portfolio, "side", 1.0)],
    ),
    column(
        "size",
        "Size",
        Unit::Units,
        Dtype::Float64,
        "The units bought or sold, positive.",
        &[at(Portfolio, "size", 1.0)],
    ),
    column(
        "price",
        "Price",
        Unit::Price,
        Dtype::Float64,
        "The fill after slippage.",
        &[at(Portfolio, "price", 1.0)],
    ),
    column(
        "fees",
        "Fees",
        Unit::Money,
        Dtype::Float64,
        "The commission of the fill.",
        &[at(Portfolio, "fees", 1.0)],
    ),
];

/// The package's `.equity`: one row per session, indexed by `Date`.
pub const EQUITY: &[Entry] = &[
    column(
        "Date",
        "Date",
        Unit::Datetime,
        Dtype::Datetime,
        "The session (its bar's time for hourly backtests): the frame's index.",
        &[
            at(Backtest, "time", 1.0),
            at(Portfolio, "date", 1.0),
            at(ScannerBacktest, "dates", 1.0),
            at(WalkForward, "equity.time", 1.0),
        ],
    ),
    column(
        "equity",
        "Equity",
        Unit::Money,
        Dtype::Float64,
        "The account's value at the session's close.",
        &[
            at(Backtest, "equity", 1.0),
            at(Portfolio, "equity", 1.0),
            at(ScannerBacktest, "equity", 1.0),
            noted(
                WalkForward,
                "equity.equity",
                1.0,
                "per unit of capital: from 1",
            ),
        ],
    ),
    column(
        "cash",
        "Cash",
        Unit::Money,
        Dtype::Float64,
        "The equity less the open positions' value.",
        &[
            at(Backtest, "cash", 1.0),
            at(Portfolio, "cash", 1.0),
            at(ScannerBacktest, "cash", 1.0),
        ],
    ),
    column(
        "benchmark",
        "Benchmark",
        Unit::Money,
        Dtype::Float64,
        "The benchmark bought with the initial capital at the first session's close (NaN before its first close).",
        &[
            at(Backtest, "benchmark", 1.0),
            at(Portfolio, "benchmark", 1.0),
        ],
    ),
    column(
        "drawdown",
        "Drawdown",
        Unit::Fraction,
        Dtype::Float64,
        "The equity below its highest value so far (the initial capital counting), 0 or negative.",
        &[at(Backtest, "drawdown", 1.0)],
    ),
    column(
        "daily_return",
        "Daily Return",
        Unit::Fraction,
        Dtype::Float64,
        "The equity's change from the session before; NaN on the first session.",
        &[at(Backtest, "daily_return", 1.0)],
    ),
    column(
        "close",
        "Close",
        Unit::Price,
        Dtype::Float64,
        "A backtest's own: the traded symbol's close.",
        &[at(Backtest, "close", 1.0)],
    ),
    column(
        "position",
        "Position",
        Unit::Units,
        Dtype::Float64,
        "A backtest's own: the units held at the close, negative short, 0 flat.",
        &[at(Backtest, "position", 1.0)],
    ),
    column(
        "exposure",
        "Exposure",
        Unit::Money,
        Dtype::Float64,
        "A portfolio's own: the open positions' value at the close.",
        &[at(Portfolio, "exposure", 1.0)],
    ),
    column(
        "traded",
        "Traded",
        Unit::Money,
        Dtype::Float64,
        "A portfolio's own: the value bought and sold in the session.",
        &[at(Portfolio, "traded", 1.0)],
    ),
];

/// A table of the glossary.
#[derive(Debug, Clone, Copy)]
pub struct Group {
    pub title: &'static str,
    /// What the package answers it as.
    pub what: &'static str,
    pub entries: &'static [Entry],
}

pub const GROUPS: [Group; 4] = [
    Group {
        title: "Metrics",
        what: "A result's figures: the package's `.result`, a float64 Series under these names (a batch's `.results` has them as columns, one row per strategy).",
        entries: METRICS,
    },
    Group {
        title: "Trades",
        what: "The package's `.trades`: one row per round trip, indexed by `entry_time`; every kind with trades has every column (NaN where a kind does not define one). A scanner backtest's JSON has no fees, return or bars held: the package computes them from its arrays (the fees from the task's commission).",
        entries: TRADES,
    },
    Group {
        title: "Orders",
        what: "The package's `.orders`, where a kind has orders: one row per fill, indexed by `time`.",
        entries: ORDERS,
    },
    Group {
        title: "Equity",
        what: "The package's `.equity`: one row per session, indexed by `Date`; `.returns` is its `daily_return` from the second session on, a float64 Series named `returns` (per bar for an hourly backtest, whose rows are bars). Where a kind's JSON has no `drawdown` or `daily_return`, the package computes them from `equity`. A kind adds columns of its own.",
        entries: EQUITY,
    },
];

/// The metric `name`.
pub fn metric_entry(name: &str) -> Option<&'static Entry> {
    METRICS.iter().find(|e| e.name == name)
}

/// The page label of metric `name` (the name itself if it is none).
pub fn label(name: &str) -> &str {
    metric_entry(name).map_or(name, |e| e.label)
}

/// A metric as a page shows it: its name, label and unit, and where it is
/// in a kind's JSON (`field`, a key or a dotted path, whose value is the
/// glossary's times `scale`).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Shown {
    pub name: &'static str,
    pub label: &'static str,
    pub unit: &'static str,
    pub field: &'static str,
    pub scale: f64,
}

/// The metrics `names`, in that order, as `kind`'s page shows them; a name
/// the glossary lacks, or that `kind` does not answer, is left out.
pub fn shown(kind: Kind, names: &[&str]) -> Vec<Shown> {
    names
        .iter()
        .filter_map(|n| {
            let e = metric_entry(n)?;
            let f = e.field(kind)?;
            Some(Shown {
                name: e.name,
                label: e.label,
                unit: e.unit.as_str(),
                field: f.field,
                scale: f.scale,
            })
        })
        .collect()
}

fn scale(s: f64) -> String {
    if s == 1.0 {
        String::new()
    } else {
        format!(" ×{s}")
    }
}

/// docs/results.md.
pub fn markdown() -> String {
    let mut out = String::from(
        "<!-- Generated from functions/services/src/glossary.rs by its test; edit that file and run\n     MARKETLAB_UPDATE_DOCS=1 cargo test -p services glossary -->\n\
# Results: one vocabulary\n\n\
Every result kind (a single backtest, a batch row, a portfolio, a\n\
portfolio grid row, a scanner backtest, a walk-forward) names a figure or\n\
a column one way, counts it in one unit and defines it once: the tables\n\
below. The Python package's frames use these names, units and dtypes for\n\
every kind; the report pages show the labels.\n\n\
**Units.** Fractions: 0.05 is 5 %, a drawdown of -0.2 is 20 % below the\n\
peak. The package's frames and every JSON the spec does not define (a\n\
portfolio's result and tables, a backtest's chart, trades and equity, a\n\
walk-forward's figures) are in fractions under the glossary's names. The\n\
spec's legacy JSON keeps the spec's names and percent: the backtest\n\
result of 2.11 (`Total Return (%)`, `Win Rate`, ...), a batch's rows\n\
(which carry 2.11's metric names, a portfolio grid's too) and the scanner\n\
backtest of analytics 2.6 (`TOTAL RETURN`, `MAX RISK`, ...); the package\n\
reads them into the glossary.\n\
Each table's second part says, per kind, which JSON field answers a name\n\
and its scale: the JSON value is the glossary's value times the scale\n\
(×100: percent; ×-100: a fall as a positive percent). A page shows a\n\
fraction as a percent.\n\n\
**Dates and times.** Every DatetimeIndex and datetime column of the\n\
package is `datetime64[ns]` (naive, the exchange's sessions; NaT where\n\
missing); session-indexed frames (equity, weights, prices) have the index\n\
name `Date`, trades `entry_time`, orders `time`. JSON carries dates as\n\
`YYYY-MM-DD` and the times of hourly bars as `YYYY-MM-DDTHH:MM:SS`.\n\n\
Where the kinds' JSON is:\n\n",
    );
    for k in Kind::ALL {
        let _ = writeln!(out, "- **{}**: {}", k.as_str(), k.source());
    }
    for g in GROUPS {
        let _ = write!(
            out,
            "\n## {}\n\n{}\n\n| name | label | unit | dtype | definition |\n|---|---|---|---|---|\n",
            g.title, g.what
        );
        for e in g.entries {
            let _ = writeln!(
                out,
                "| `{}` | {} | {} | {} | {} |",
                e.name,
                e.label,
                e.unit.as_str(),
                e.dtype.as_str(),
                e.definition
            );
        }
        let _ = write!(
            out,
            "\n{} in each kind's JSON (– where the kind has none):\n\n| name |",
            g.title
        );
        let kinds: Vec<Kind> = Kind::ALL
            .into_iter()
            .filter(|k| g.entries.iter().any(|e| e.field(*k).is_some()))
            .collect();
        for k in &kinds {
            let _ = write!(out, " {} |", k.as_str());
        }
        out.push_str("\n|---|");
        out.push_str(&"---|".repeat(kinds.len()));
        out.push('\n');
        for e in g.entries {
            let _ = write!(out, "| `{}` |", e.name);
            for k in &kinds {
                match e.field(*k) {
                    None => out.push_str(" – |"),
                    Some(f) => {
                        let _ = write!(out, " `{}`{}", f.field, scale(f.scale));
                        if !f.note.is_empty() {
                            let _ = write!(out, " ({})", f.note);
                        }
                        out.push_str(" |");
                    }
                }
            }
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn names_are_one_each_and_labels_title_case() {
        for g in GROUPS {
            let names: BTreeSet<&str> = g.entries.iter().map(|e| e.name).collect();
            assert_eq!(names.len(), g.entries.len(), "{}: a name twice", g.title);
            for e in g.entries {
                assert!(!e.definition.is_empty() && e.definition.ends_with('.'));
                assert!(
                    e.label.starts_with(|c: char| c.is_ascii_uppercase()),
                    "{}",
                    e.label
                );
                let kinds: BTreeSet<&str> = e.fields.iter().map(|f| f.kind.as_str()).collect();
                assert_eq!(kinds.len(), e.fields.len(), "{}: a kind twice", e.name);
            }
        }
        assert_eq!(label("total_return"), "Total Return");
        assert_eq!(label("cagr"), "CAGR");
        assert_eq!(label("max_drawdown"), "Max Drawdown");
        assert_eq!(label("information_ratio"), "Information Ratio");
        assert_eq!(label("sharpe"), "Sharpe Ratio");
        assert_eq!(label("not_a_metric"), "not_a_metric");
    }

    #[test]
    fn a_page_reads_each_metric_where_its_kind_answers_it() {
        let s = shown(
            Kind::Portfolio,
            &["total_return", "alpha", "nothing", "skipped_trades"],
        );
        assert_eq!(
            s,
            [
                Shown {
                    name: "total_return",
                    label: "Total Return",
                    unit: "fraction",
                    field: "total_return",
                    scale: 1.0
                },
                Shown {
                    name: "alpha",
                    label: "Alpha",
                    unit: "fraction",
                    field: "relative.alpha",
                    scale: 1.0
                },
            ]
        );
        let b = shown(Kind::Backtest, &["total_return", "drawdown_period"]);
        assert_eq!((b[0].field, b[0].scale), ("Total Return (%)", 100.0));
        assert_eq!((b[1].field, b[1].unit), ("DrawDown Period", "sessions"));
    }

    /// Metrics are float64; a fraction read from the spec's JSON is
    /// percent there, from own JSON as it is.
    #[test]
    fn units_and_scales_agree() {
        for e in METRICS {
            assert_eq!(e.dtype, Dtype::Float64, "{}", e.name);
            for f in e.fields {
                let spec = matches!(
                    f.kind,
                    Kind::Backtest
                        | Kind::BatchRow
                        | Kind::PortfolioGridRow
                        | Kind::ScannerBacktest
                );
                let want = match (e.unit, spec) {
                    (Unit::Fraction, true) if f.field == "MAX RISK" => -100.0,
                    (Unit::Fraction, true) => 100.0,
                    _ => 1.0,
                };
                assert_eq!(f.scale, want, "{} in {}", e.name, f.kind.as_str());
            }
        }
        for e in TRADES.iter().chain(ORDERS).chain(EQUITY) {
            for f in e.fields {
                assert_eq!(f.scale, 1.0, "{} in {}", e.name, f.kind.as_str());
            }
        }
    }

    /// The spec's fields are named as the answers serialize them: every
    /// field the glossary reads from a batch row, a 2.11 result or a
    /// scanner backtest is a key of that answer.
    #[test]
    fn legacy_names_are_the_answers_own() {
        use crate::analytics::scanner::backtest::answers::{
            ScannerBacktestData, TradeArrays, TradeStats,
        };
        let row: crate::backtest::batch::BatchRow =
            serde_json::from_value(serde_json::json!({"index": 0, "params": {}, "error": null}))
                .unwrap();
        let row = serde_json::to_value(row).unwrap();
        let backtest = serde_json::to_value(crate::backtest::answers::BacktestResult {
            symbol: "SPX".into(),
            frequency: "daily",
            total_trades: 0,
            total_positive: 0,
            total_negative: 0,
            win_rate: 0.0,
            average_win: 0.0,
            average_loss: 0.0,
            each_return: Vec::new(),
            total_return: 0.0,
            buy_hold_gain: 0.0,
            cagr: 0.0,
            sharpe: 0.0,
            sortino: 0.0,
            annual_volatility: 0.0,
            calmar: 0.0,
            max_drawdown: 0.0,
            drawdown_period: 0,
            time_in_market: 0.0,
            entry_date: Vec::new(),
            exit_date: Vec::new(),
            last_entry_date: None,
            last_exit_date: None,
            bt_end_date: String::new(),
            exit_reason: Vec::new(),
            open_trade: false,
            initial_capital: 0.0,
            final_capital: 0.0,
            benchmark: "SPX".into(),
            benchmark_return: 0.0,
            defaults_applied: Default::default(),
            warnings: Vec::new(),
            entry_time: None,
            exit_time: None,
        })
        .unwrap();
        let scanner = serde_json::to_value(ScannerBacktestData {
            stats: TradeStats::new(0.0, &engine::stats::TradeReturns::default()),
            max_risk: 0.0,
            time_in_market: 0.0,
            std_dev: 0.0,
            z_score: 0.0,
            buy_and_hold: 0.0,
            average_position: 0.0,
            trade_list: "[]".into(),
            result: TradeArrays::default(),
            dates: Vec::new(),
            equity: Vec::new(),
            cash: Vec::new(),
            skipped_trades: 0,
        })
        .unwrap();
        let mut checked = 0;
        for e in METRICS {
            for f in e.fields {
                let answer = match f.kind {
                    Kind::BatchRow | Kind::PortfolioGridRow => &row,
                    Kind::Backtest => &backtest,
                    Kind::ScannerBacktest => &scanner,
                    _ => continue,
                };
                assert!(
                    answer.get(f.field).is_some(),
                    "{} of a {}",
                    f.field,
                    f.kind.as_str()
                );
                checked += 1;
            }
        }
        for e in TRADES {
            if let Some(f) = e.field(Kind::ScannerBacktest) {
                let key = f.field.strip_prefix("result.").unwrap();
                assert!(
                    scanner["result"].get(key).is_some(),
                    "{key} of a scanner backtest"
                );
                checked += 1;
            }
        }
        assert!(checked > 50, "{checked}");
    }

    #[test]
    fn the_published_page_is_the_generated_one() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/results.md");
        let generated = markdown();
        if std::env::var_os("MARKETLAB_UPDATE_DOCS").is_some() {
            std::fs::write(path, &generated).expect("docs/results.md written");
            return;
        }
        let published = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            published == generated,
            "docs/results.md is out of date: run MARKETLAB_UPDATE_DOCS=1 cargo test -p services glossary"
        );
    }
}
