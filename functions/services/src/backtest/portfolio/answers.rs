//! What a portfolio task answers: its type is its OpenAPI schema.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

#[cfg(feature = "openapi")]
use utoipa::ToSchema;

/// A finished portfolio backtest. Percentages are in percent; money in the
/// account's currency; dates `YYYY-MM-DD`.
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
    pub total_return: f64,
    pub cagr: f64,
    pub sharpe: f64,
    pub sortino: f64,
    pub annual_volatility: f64,
    pub max_drawdown: f64,
    pub calmar: f64,
    /// Longest stretch, in sessions, below a previous peak.
    pub drawdown_period: usize,
    /// Percent of sessions with a position open at the close.
    pub time_in_market: f64,
    /// Mean of the positions' value over the account's, percent.
    pub average_exposure: f64,
    /// Half the value traded a year over the mean equity, percent.
    pub annual_turnover: f64,
    /// Round trips (a position from its first buy until flat again).
    pub total_trades: usize,
    pub win_rate: f64,
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
    /// The benchmark's change over the window, percent.
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

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct PortfolioTrade {
    pub symbol: String,
    pub entry_date: String,
    /// The first buy's fill after slippage.
    pub entry_price: f64,
    /// Null while open.
    pub exit_date: Option<String>,
    /// The last sale's fill after slippage; the last close while open.
    pub exit_price: f64,
    /// The most units held.
    pub units: f64,
    /// Net of commissions; an open trade at its last close.
    pub profit: f64,
    /// Profit over what was paid, percent.
    #[serde(rename = "return")]
    pub ret: f64,
    /// `Signal`, `Stop Loss`, `Take Profit`, `Max Holding`, `Rebalance` or `Open`.
    pub exit_reason: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct PortfolioOrder {
    pub date: String,
    pub symbol: String,
    /// Bought (positive) or sold (negative).
    pub units: f64,
    /// The fill after slippage.
    pub price: f64,
    pub commission: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct Contribution {
    pub symbol: String,
    /// Money made, net of costs (open positions at their last close).
    pub profit: f64,
    /// The profit over the initial capital, percent.
    pub contribution: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct WeightsAt {
    pub date: String,
    /// Each held symbol's value over the account's.
    pub weights: std::collections::BTreeMap<String, f64>,
}
