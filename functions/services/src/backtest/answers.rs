//! The backtest service's answers, serialized from these types: the validate
//! answer (4.2) and the result object of a finished task (2.11).

use serde::Serialize;
use serde_json::{Map, Value};

#[cfg(feature = "openapi")]
use utoipa::ToSchema;

/// One encoded signal of 2.9.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct EncodedSignal {
    /// `<prefix>:<name>;IDS:EO<opt>/EP<pess>;SC:<comparison>/<operator>/<value>`.
    pub code: String,
    pub signal_name: String,
}

/// The condition entry paired with each signal.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[allow(non_snake_case)]
pub struct EncodedCondition {
    /// Operator code of 2.6 (3, the default, when there is no qualifier).
    pub newCondition: u8,
    pub conditionPeriod: String,
    /// `S` or `E`.
    pub ma_type: String,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct EncodedBlock {
    pub rule_type: &'static str,
    pub signals: Vec<EncodedSignal>,
    pub cond: Vec<EncodedCondition>,
}

/// What `validate` answers for a valid strategy.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct ValidateResponse {
    /// Always `valid`.
    pub status: &'static str,
    /// The fields the client sent, as sent.
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub user_supplied: Value,
    /// The fields filled from defaults.
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub defaults_applied: Map<String, Value>,
    pub entry: EncodedBlock,
    pub exit: EncodedBlock,
    pub warnings: Vec<String>,
}

/// The result object (2.11) of a successful backtest task.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct BacktestResult {
    #[serde(rename = "Symbol")]
    pub symbol: String,
    #[serde(rename = "Frequency")]
    pub frequency: &'static str,
    #[serde(rename = "Total Trades")]
    pub total_trades: usize,
    #[serde(rename = "Total Positive")]
    pub total_positive: usize,
    #[serde(rename = "Total Negative")]
    pub total_negative: usize,
    /// Percent.
    #[serde(rename = "Win Rate")]
    pub win_rate: f64,
    #[serde(rename = "Average Win %")]
    pub average_win: f64,
    #[serde(rename = "Average Loss %")]
    pub average_loss: f64,
    /// Each trade's return after costs, percent.
    #[serde(rename = "Each Return")]
    pub each_return: Vec<f64>,
    #[serde(rename = "Total Return (%)")]
    pub total_return: f64,
    #[serde(rename = "BuyHoldGain")]
    pub buy_hold_gain: f64,
    #[serde(rename = "CAGR")]
    pub cagr: f64,
    #[serde(rename = "Sharpe Ratio")]
    pub sharpe: f64,
    /// Mean per-bar return over its downside deviation (target 0),
    /// annualised, as empyrical's `sortino_ratio`.
    #[serde(rename = "Sortino Ratio")]
    pub sortino: f64,
    /// Sample standard deviation of per-bar returns, annualised; percent.
    #[serde(rename = "Annual Volatility")]
    pub annual_volatility: f64,
    /// CAGR (calendar years) over the depth of the max drawdown.
    #[serde(rename = "Calmar Ratio")]
    pub calmar: f64,
    #[serde(rename = "Max Drawdown")]
    pub max_drawdown: f64,
    /// Longest stretch, in bars, below a previous equity peak.
    #[serde(rename = "DrawDown Period")]
    pub drawdown_period: usize,
    #[serde(rename = "Time in Market")]
    pub time_in_market: f64,
    #[serde(rename = "EntryDate")]
    pub entry_date: Vec<String>,
    #[serde(rename = "ExitDate")]
    pub exit_date: Vec<String>,
    #[serde(rename = "Last Entry Date")]
    pub last_entry_date: Option<String>,
    #[serde(rename = "Last Exit Date")]
    pub last_exit_date: Option<String>,
    #[serde(rename = "BT End Date")]
    pub bt_end_date: String,
    /// `Signal`, `Stop Loss`, `Take Profit`, `Max Holding` or `Open`.
    #[serde(rename = "Exit Reason")]
    pub exit_reason: Vec<&'static str>,
    #[serde(rename = "Open Trade")]
    pub open_trade: bool,
    #[serde(rename = "Initial Capital")]
    pub initial_capital: f64,
    #[serde(rename = "Final Capital")]
    pub final_capital: f64,
    #[serde(rename = "Benchmark")]
    pub benchmark: String,
    #[serde(rename = "Benchmark Return (%)")]
    pub benchmark_return: f64,
    /// The fields of 2.1 the request left out, with the values used (the
    /// end date made concrete): what the result depends on beyond what
    /// was sent.
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub defaults_applied: Map<String, Value>,
    /// What the run did that the request may not expect, such as trades
    /// closed by the default maximum holding.
    pub warnings: Vec<String>,
    /// Hourly backtests: entry times, `YYYY-MM-DDTHH:MM:SS`.
    #[serde(rename = "EntryTime", skip_serializing_if = "Option::is_none")]
    pub entry_time: Option<Vec<String>>,
    /// Hourly backtests: exit times.
    #[serde(rename = "ExitTime", skip_serializing_if = "Option::is_none")]
    pub exit_time: Option<Vec<String>>,
}
