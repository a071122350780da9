//! The pattern-match answers (analytics 2.4), serialized from these types
//! with the spec's exact member names.

pub use crate::analytics::trade_stats::TradeStats;
use serde::Serialize;

#[cfg(feature = "openapi")]
use utoipa::ToSchema;

/// `GET /cpm/get-predefined-patterns` (no envelope).
#[derive(Debug, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct PatternList {
    pub patterns: Vec<&'static str>,
}

/// A window whose closes correlate with the template.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[allow(non_snake_case)]
pub struct PatternMatch {
    /// Universe searches: the symbol the window is of.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub Symbol: Option<String>,
    /// First bar's date, YYYY-MM-DD.
    pub StartDate: String,
    /// Last bar's date, YYYY-MM-DD.
    pub EndDate: String,
    /// 100 x the Pearson correlation of the window's closes with the template's, 0-100.
    #[cfg_attr(feature = "openapi", schema(minimum = 0, maximum = 100))]
    pub Corr: f64,
    /// Close of the last bar.
    pub Close: f64,
    /// Bars in the window.
    pub BarsNum: usize,
}

/// The scan's `data`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct ScanData {
    pub count: usize,
    /// Best first.
    pub patterns: Vec<PatternMatch>,
    /// What the request did that it may not have meant (a weak `corr_per`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// The backtest's `data`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct BacktestData {
    pub count: usize,
    /// Best first.
    pub patterns: Vec<PatternMatch>,
    pub backtest_info: BacktestInfo,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// Statistics of the trades after the matches; percentages unless a count.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct BacktestInfo {
    #[serde(flatten)]
    pub stats: TradeStats,
    /// Holding the symbol over the lookback, first close to last.
    #[serde(rename = "BUY & HOLD")]
    pub buy_and_hold: f64,
    /// Share of the lookback's bars with a trade open.
    #[serde(rename = "TIME IN MARKET")]
    pub time_in_market: f64,
    /// In order of entry.
    pub trades: Vec<TradeItem>,
}

/// One trade: the match, and the position held after it.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[allow(non_snake_case)]
pub struct TradeItem {
    pub StartDate: String,
    /// The match's last bar: the entry, at its close.
    pub EndDate: String,
    /// The match's `Corr`, rounded to 4 decimals.
    #[serde(rename = "Correlation Percentage")]
    pub correlation_percentage: f64,
    /// Entry price (the match's last close).
    pub Close: f64,
    pub BarsNum: usize,
    /// Return in the trade's direction, %.
    pub EachReturn: f64,
    /// `time_in_market` bars after the entry.
    pub ExitDate: String,
    pub ExitPrice: f64,
    /// Best return at a close while open, % (at least 0).
    pub MaxGain: f64,
    /// Worst return at a close while open, % (at most 0).
    pub MaxLoss: f64,
    /// `Bull` or `Bear` (the benchmark against its 200-session average at entry), and `Rec` inside a US recession.
    pub MarketCondition: Vec<&'static str>,
}

/// What a scan answers: code 200 with its `data`, or code 407 and no
/// `data` when nothing matched. A task's `result` is this object with the
/// `task_id`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct ScanAnswer {
    /// 200, or 407 when no window matched.
    pub code: u16,
    /// `Found matching patterns!`, or why nothing was found.
    pub msg: String,
    pub data: Option<ScanData>,
}

/// What a backtest answers: code 200 with its `data`, or code 407 and no
/// `data` when nothing matched.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct BacktestAnswer {
    /// 200, or 407 when no window matched.
    pub code: u16,
    /// `Finish CPM!`, or why nothing was found.
    pub msg: String,
    pub data: Option<BacktestData>,
}
