//! The scanner backtest's result (analytics 2.6), with the spec's names.

pub use crate::analytics::trade_stats::TradeStats;
use serde::Serialize;

#[cfg(feature = "openapi")]
use utoipa::ToSchema;

/// A task's `result`: code 200 with `data`, or 407 and no `data` when no
/// item passed the filters.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct ScannerBacktestAnswer {
    /// 200, or 407 when no item passed the filters.
    pub code: u16,
    /// `Finish Scanner trader!`, or why nothing was traded.
    pub msg: String,
    pub data: Option<ScannerBacktestData>,
}

/// The metrics (percent unless a count or money), the trade list and the
/// per-trade arrays; beyond the spec, the daily equity and cash.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct ScannerBacktestData {
    /// Of the trades' returns (net of commission; open trades marked at the
    /// last close), but for the total return.
    #[serde(flatten)]
    pub stats: TradeStats,
    /// The deepest fall of the daily equity.
    #[serde(rename = "MAX RISK")]
    pub max_risk: f64,
    /// Sessions with an open position, of all sessions.
    #[serde(rename = "TIME IN MARKET")]
    pub time_in_market: f64,
    /// Sample standard deviation of the trades' returns.
    #[serde(rename = "STD.DEV")]
    pub std_dev: f64,
    /// The average return over its standard error.
    #[serde(rename = "Z-SCORE")]
    pub z_score: f64,
    /// The S&P 500 from the first session's close to the last's.
    #[serde(rename = "BUY and HOLD")]
    pub buy_and_hold: f64,
    /// The average market value of the open positions over the sessions.
    #[serde(rename = "AVERAGE POSITION")]
    pub average_position: f64,
    /// A JSON array (as text) of the items traded, in order of entry.
    #[serde(rename = "TRADE LIST")]
    pub trade_list: String,
    pub result: TradeArrays,
    /// Beyond the spec: the sessions, and the portfolio's equity and cash at each close.
    pub dates: Vec<String>,
    pub equity: Vec<f64>,
    pub cash: Vec<f64>,
    /// Beyond the spec: trades that did not fit the cash (or had no bar to enter on).
    pub skipped_trades: usize,
}

/// One entry per trade, in order of entry.
#[derive(Debug, Clone, Serialize, Default)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct TradeArrays {
    /// The entry session, YYYY-MM-DD.
    #[serde(rename = "Start Date")]
    pub start_date: Vec<String>,
    #[serde(rename = "Symbol")]
    pub symbol: Vec<String>,
    #[serde(rename = "Signal")]
    pub signal: Vec<String>,
    #[serde(rename = "Direction")]
    pub direction: Vec<&'static str>,
    #[serde(rename = "TimeInMarket")]
    pub time_in_market: Vec<usize>,
    #[serde(rename = "ProfitTarget")]
    pub profit_target: Vec<f64>,
    #[serde(rename = "StopLoss")]
    pub stop_loss: Vec<f64>,
    /// The fraction of the side's capital staked.
    #[serde(rename = "Kelly")]
    pub kelly: Vec<f64>,
    /// Sessions left to hold (0 once closed).
    #[serde(rename = "StayInMarket")]
    pub stay_in_market: Vec<usize>,
    #[serde(rename = "Shares")]
    pub shares: Vec<f64>,
    /// Entry price (the open after the signal).
    #[serde(rename = "Price")]
    pub price: Vec<f64>,
    /// Exit price, or the last close while open.
    #[serde(rename = "Close")]
    pub close: Vec<f64>,
    /// Money made net of commissions (open: as if closed at the last close).
    #[serde(rename = "FloatProfit")]
    pub float_profit: Vec<f64>,
    /// `Profit Target`, `Stop Loss`, `Time Is Up`, or `Open`.
    #[serde(rename = "OrderStatus")]
    pub order_status: Vec<&'static str>,
    /// The trade's last action: `Sell` (a long closed), `Buy` (a short covered), `Hold` (open).
    #[serde(rename = "Action")]
    pub action: Vec<&'static str>,
    /// Beyond the spec: the exit session, YYYY-MM-DD (null while open).
    #[serde(rename = "Exit Date")]
    pub exit_date: Vec<Option<String>>,
}

/// An item of `TRADE LIST`.
#[derive(Debug, Clone, Serialize)]
#[allow(non_snake_case)]
pub struct TradeListItem {
    /// The signal's session.
    pub Date: String,
    pub Symbol: String,
    /// The close of the signal's session.
    pub Close: f64,
    pub Direction: &'static str,
    pub Signal: String,
    pub ProfitTarget: f64,
    pub StopLoss: f64,
    pub TimeInMarket: usize,
    pub WinRate: f64,
    pub Kelly: f64,
    #[serde(rename = "Expected Return(%)")]
    pub ExpectedReturn: f64,
    pub Optix: Option<f64>,
    pub TrendScore: Option<f64>,
    pub RelTrendScore: Option<f64>,
}
