//! What a portfolio task answers: its type is its OpenAPI schema.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

#[cfg(feature = "openapi")]
use utoipa::ToSchema;

/// A finished portfolio backtest, in the results glossary's names and
/// units (docs/results.md): returns, rates and shares are fractions (0.05
/// is 5 %); money in the account's currency; dates `YYYY-MM-DD`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct PortfolioResult {
    /// `signals` or `weights`.
    pub mode: String,
    pub universe: Vec<String>,
    pub benchmark: String,
    /// The first and last sessions of the window.
    pub start_date: String,
    pub end_date: String,
    pub initial_capital: f64,
    pub final_capital: f64,
    /// The final capital over the initial, less 1: a fraction.
    pub total_return: f64,
    /// A year's growth over the window's calendar years: a fraction.
    pub cagr: f64,
    pub sharpe: f64,
    pub sortino: f64,
    /// Annualised sample deviation of the session returns: a fraction.
    pub annual_volatility: f64,
    /// The deepest fall from a previous peak: a fraction, 0 or negative.
    pub max_drawdown: f64,
    pub calmar: f64,
    /// Longest stretch, in sessions, below a previous peak.
    pub drawdown_period: usize,
    /// The share of sessions with a position open at the close: a fraction.
    pub time_in_market: f64,
    /// Mean of the positions' value over the account's: a fraction.
    pub average_exposure: f64,
    /// Half the value traded a year over the mean equity: a fraction.
    pub annual_turnover: f64,
    /// Round trips (a position from its first buy until flat again).
    pub total_trades: usize,
    /// Round trips with a profit, and with a loss.
    pub winning_trades: usize,
    pub losing_trades: usize,
    /// The share of round trips with a profit: a fraction.
    pub win_rate: f64,
    /// Mean return of the winning (losing) round trips: a fraction.
    pub average_win: f64,
    pub average_loss: f64,
    pub relative: Relative,
    /// Entries that fired with no free slot (signal mode).
    pub crowded_out: usize,
    /// This and the four lists after it are left out of a `view=summary`
    /// read (they are the task's tables).
    #[serde(default)]
    pub series: Series,
    #[serde(default)]
    pub trades: Vec<PortfolioTrade>,
    #[serde(default)]
    pub orders: Vec<PortfolioOrder>,
    /// Each symbol's profit, largest first (symbols never traded left out).
    #[serde(default)]
    pub contributions: Vec<Contribution>,
    /// Holdings' weights at each month's last session.
    #[serde(default)]
    pub weights: Vec<WeightsAt>,
    /// What the request left out and the service filled in.
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub defaults_applied: Map<String, Value>,
    pub warnings: Vec<String>,
}

/// Against the benchmark, on the window's sessions.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct Relative {
    /// Annualised, as empyrical's `alpha` (a fraction).
    pub alpha: f64,
    pub beta: f64,
    /// Annualised deviation of the active returns (a fraction).
    pub tracking_error: f64,
    /// Annualised: mean active return over its deviation.
    pub information_ratio: f64,
    pub up_capture: f64,
    pub down_capture: f64,
    /// The benchmark's change over the window: a fraction.
    pub benchmark_return: f64,
}

/// One value per session of the window.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct Series {
    pub date: Vec<String>,
    pub equity: Vec<f64>,
    pub cash: Vec<f64>,
    /// The open positions' value at the close.
    pub exposure: Vec<f64>,
    /// Value bought and sold that session.
    pub traded: Vec<f64>,
    /// The benchmark scaled to the initial capital (null before its first close).
    pub benchmark: Vec<Option<f64>>,
}

/// A round trip: a position from its first buy until flat again, in the
/// glossary's trade columns (MAE and MFE are left out: a portfolio keeps
/// no bar's high or low).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct PortfolioTrade {
    /// The first buy's session, `YYYY-MM-DD`.
    pub entry_time: String,
    /// The session it was flat again; null while open.
    pub exit_time: Option<String>,
    pub symbol: String,
    /// `long` (a portfolio holds no short positions).
    pub side: String,
    /// The most units held.
    pub size: f64,
    /// The first buy's fill after slippage.
    pub entry_price: f64,
    /// The last sale's fill after slippage; the last close while open.
    pub exit_price: f64,
    /// Commissions of every buy and sale of it, in money.
    pub fees: f64,
    /// Net of commissions, in money; an open trade at its last close.
    pub profit: f64,
    /// The profit (net of every commission) over the buys' value at their
    /// fills (size x entry price for one buy): a fraction, as a backtest's.
    #[serde(rename = "return")]
    pub ret: f64,
    /// Sessions from the entry to the exit (open: to the last session).
    pub bars_held: usize,
    /// `Signal`, `Stop Loss`, `Take Profit`, `Max Holding`, `Rebalance` or `Open`.
    pub exit_reason: String,
}

/// A filled order.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct PortfolioOrder {
    /// The session it filled, `YYYY-MM-DD`.
    pub time: String,
    pub symbol: String,
    /// `buy` or `sell`.
    pub side: String,
    /// Units bought or sold (positive).
    pub size: f64,
    /// The fill after slippage.
    pub price: f64,
    /// Its commission, in money.
    pub fees: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct Contribution {
    pub symbol: String,
    /// Money made, net of costs (open positions at their last close).
    pub profit: f64,
    /// The profit over the initial capital, a fraction.
    pub contribution: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct WeightsAt {
    pub date: String,
    /// Each held symbol's value over the account's.
    pub weights: std::collections::BTreeMap<String, f64>,
}
