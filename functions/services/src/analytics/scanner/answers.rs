//! The scanner's answers, serialized from these types.

use serde::Serialize;
use std::collections::BTreeMap;

#[cfg(feature = "openapi")]
use utoipa::ToSchema;

/// A signal as the scanner lists it.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct SignalInfo {
    /// The signal's name, as scanner items carry it in `_Signal`.
    pub name: &'static str,
    /// One of the six categories.
    pub category: &'static str,
    /// What makes it fire, and on which side.
    pub description: &'static str,
    /// `SwingAI` or `MidTermAI`: the `category` filter of `latest-day-all`.
    pub horizon: &'static str,
    /// Sessions a trade on it is held at most.
    pub time_in_market: usize,
}

/// `data` of `get-predefined-signals`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct SignalList {
    pub signals: Vec<SignalInfo>,
    /// Category name -> its signals.
    pub categories: BTreeMap<&'static str, Vec<SignalInfo>>,
}

/// A signal that fired for a stock on a day, with the statistics of its own
/// earlier firings there (analytics 2.5). Percent figures are unrounded.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[allow(non_snake_case)]
pub struct ScannerItem {
    /// The scan's date, YYYY-MM-DD.
    pub Date: String,
    pub Symbol: String,
    /// The close on the date.
    pub Close: f64,
    /// `Long` or `Short`.
    #[cfg_attr(feature = "openapi", schema(value_type = String, pattern = "^(Long|Short)$"))]
    pub Direction: &'static str,
    /// The signal's name (see `get-predefined-signals`).
    #[serde(rename = "_Signal")]
    pub signal: String,
    /// `SwingAI` or `MidTermAI`.
    #[cfg_attr(feature = "openapi", schema(value_type = String, pattern = "^(SwingAI|MidTermAI)$"))]
    pub Category: &'static str,
    /// Percent of the earlier trades that gained, as text (`66.67%`).
    pub WinRate: String,
    /// The trade's profit target, as text (`4.52%`).
    pub ProfitTarget: String,
    /// The trade's stop loss as a loss, as text (`3.39%`: out 3.39% below entry for a long).
    pub StopLoss: String,
    /// Suggested holding in trading days, as text.
    pub TimeInMarket: String,
    /// Average gain of the winning trades, %.
    pub AvgWin: f64,
    /// Average return of the other trades, % (at most 0).
    pub AvgLoss: f64,
    pub AvgReturn: f64,
    pub MedianReturn: f64,
    /// The average trade compounded over a year of its average length, %.
    pub AnnualReturn: f64,
    /// Sample standard deviation of the trade returns, %.
    pub StdDev: f64,
    /// The deepest fall of the trades compounded in order of exit, %.
    pub MaxRisk: f64,
    /// Average over standard deviation per trade, scaled to a year.
    pub SharpeRatio: f64,
    pub TradeNumber: usize,
    /// The average return over its standard error.
    pub Z_Score: f64,
    /// win rate x average win + (1 - win rate) x average loss, %.
    pub ExpectedReturn: f64,
    /// 0-10; null before 209 sessions of history.
    pub TrendScore: Option<f64>,
    /// 0-10 against the S&P 500; null without the benchmark's history.
    pub RelTrendScore: Option<f64>,
    /// The stock's Optix reading on the date; null where there is none.
    pub Optix: Option<f64>,
    /// With `include_backtest=true`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backtest_info: Option<ScannerBacktestInfo>,
}

/// The earlier trades behind a scanner item; the arrays are parallel, one
/// entry per trade in order of entry.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[allow(non_snake_case)]
pub struct ScannerBacktestInfo {
    /// The scan's date, YYYY-MM-DD.
    pub date: String,
    #[cfg_attr(feature = "openapi", schema(value_type = String, pattern = "^(Long|Short)$"))]
    pub Direction: &'static str,
    pub Symbol: String,
    #[serde(rename = "_Signal")]
    pub signal: String,
    /// The S&P 500 against its 200-session average on the date: `Uptrend` or `Downtrend`.
    pub Market: String,
    pub AnnualReturn: f64,
    pub TradeNumber: usize,
    pub AvgWin: f64,
    pub AvgLoss: f64,
    /// Percent, as a number.
    pub WinRate: f64,
    pub MedianReturn: f64,
    pub AvgReturn: f64,
    pub Z_Score: f64,
    pub StdDev: f64,
    pub MaxRisk: f64,
    /// Average sessions the trades were held.
    pub TimeInMarket: f64,
    pub Close: f64,
    /// Each trade's return in its direction, %.
    pub EachReturn: Vec<f64>,
    /// YYYY-MM-DD: the firing's close.
    pub EntryTradeDate: Vec<String>,
    /// YYYY-MM-DD.
    pub ExitTradeDate: Vec<String>,
    pub EntryTradePrice: Vec<f64>,
    pub ExitTradePrice: Vec<f64>,
    /// `Time Is Up`, `Profit Target` or `Stop Loss`.
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<String>))]
    pub ExitReason: Vec<&'static str>,
}

/// `data` of `single/{ticker}`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct ScannerSingleData {
    /// The last scan date of the range.
    pub as_of_date: String,
    pub ticker: String,
    /// By date, then signal.
    pub scanner_data: Vec<ScannerItem>,
}

/// `data` of `latest-day-all`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct ScannerDayData {
    pub as_of_date: String,
    /// The stocks with an item of the day (all pages), in order.
    pub tickers: Vec<String>,
    /// The day's items of the category (all pages).
    pub count: usize,
    /// By symbol, then signal: the items from `offset`, at most `limit`.
    pub scanner_data: Vec<ScannerItem>,
}

/// `scanner_data` as the table (its JSON rows' columns and values); the
/// date, the tickers and the count beside it.
impl crate::tables::Tabular for ScannerDayData {
    fn columns(&self) -> Vec<(String, platform::marketdata::columns::Column)> {
        let rows: Vec<serde_json::Map<String, serde_json::Value>> = self
            .scanner_data
            .iter()
            .filter_map(|item| match serde_json::to_value(item) {
                Ok(serde_json::Value::Object(m)) => Some(m),
                _ => None,
            })
            .collect();
        platform::marketdata::interchange::from_json_rows(&rows)
    }

    fn extras(&self) -> std::collections::HashMap<String, String> {
        std::collections::HashMap::from([
            ("as_of_date".to_string(), self.as_of_date.clone()),
            ("count".to_string(), self.count.to_string()),
            (
                "tickers".to_string(),
                serde_json::to_string(&self.tickers).unwrap_or_default(),
            ),
        ])
    }
}

/// What `single/{ticker}` answers: code 200 with its `data`, or 407 and no
/// `data` when no signal fired.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct ScannerSingleAnswer {
    /// 200, or 407 when nothing fired.
    pub code: u16,
    pub msg: String,
    pub data: Option<ScannerSingleData>,
}

/// What `latest-day-all` answers: code 200 with its `data`, or 407 and no
/// `data` when no signal fired.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct ScannerDayAnswer {
    /// 200, or 407 when nothing fired.
    pub code: u16,
    pub msg: String,
    pub data: Option<ScannerDayData>,
}
