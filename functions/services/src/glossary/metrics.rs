//! The glossary's metrics: each one's definition and where each kind's
//! JSON answers it (the columns are in [`super::columns`]).

use super::{Dtype, Entry, Field, Kind, Unit};

pub(super) const fn at(kind: Kind, field: &'static str, scale: f64) -> Field {
    Field {
        kind,
        field,
        scale,
        note: "",
    }
}

pub(super) const fn noted(
    kind: Kind,
    field: &'static str,
    scale: f64,
    note: &'static str,
) -> Field {
    Field {
        kind,
        field,
        scale,
        note,
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

pub(super) const fn column(
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
