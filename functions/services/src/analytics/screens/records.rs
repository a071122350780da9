//! The screens' records (analytics 2.7), field names as the spec writes them.

#![allow(non_snake_case)]

use serde::Serialize;

#[cfg(feature = "openapi")]
use utoipa::ToSchema;

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct SentimentSeasonality {
    pub symbol: String,
    pub name: String,
    /// The Optix indicator's first group (`ETFs`, `Sectors`, `Commodities`).
    pub group: String,
    /// The latest Optix reading and its date.
    pub last_value: f64,
    pub last_update: String,
    /// Percent: the symbol's average return in the latest reading's calendar
    /// month over the earlier years.
    pub AvgReturn: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct SentimentTrend {
    pub symbol: String,
    pub chart_name: String,
    pub name: String,
    pub group: String,
    pub last_value: f64,
    pub last_update: String,
    /// The latest close and its 200-session average.
    pub close: f64,
    pub MA: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct Idea {
    pub symbol: String,
    pub chart_name: String,
    /// The screen's date.
    pub date: String,
    /// Optix on the date, and the average of its last 5 readings.
    pub last_value: f64,
    pub five_ma: f64,
    /// The close on the date, and its 200-session average.
    pub equity_close: f64,
    pub ma_200: f64,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct HedgerExtreme {
    pub symbol: String,
    pub name: String,
    /// The latest net position (contracts) and its date.
    pub last_value: f64,
    pub last_update: String,
    /// Of the readings of the 3 years to the latest.
    pub three_year_max: f64,
    pub three_year_min: f64,
    /// z-score of the latest against those readings; beyond +-2 is highly extreme.
    pub net_position: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct SectorMa {
    pub symbol: String,
    pub chart_name: String,
    pub name: String,
    pub last_value: f64,
    pub last_update: String,
    /// Percent of the sector's stocks closing above their 10- and 200-session averages.
    pub over_10: Option<f64>,
    pub over_200: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct Exhaustion {
    pub chart_name: String,
    pub last_value: f64,
    pub last_update: String,
    pub group: String,
    /// The average of the last 10 readings.
    #[serde(rename = "10MA")]
    #[cfg_attr(feature = "openapi", schema(rename = "10MA"))]
    pub ma10: f64,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct Dividend {
    pub name: String,
    pub symbol: String,
    /// The key metrics' date, YYYY-MM-DD.
    pub report_date: String,
    /// Percent, as the key metrics hold it.
    pub divyield: f64,
    pub pe_ratio: Option<f64>,
    /// Percent change of the close over 21, 63, 126, 252 and 504 sessions.
    pub onemonthperf: Option<f64>,
    pub threemonthperf: Option<f64>,
    pub sixmonthperf: Option<f64>,
    pub oneyearperf: Option<f64>,
    pub twoyearperf: Option<f64>,
    pub eps_growth: Option<f64>,
    pub payout_ratio: Option<f64>,
}

/// A screen's records: their fields depend on the key's category.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
#[serde(untagged)]
pub enum ScreenRecords {
    SentimentSeasonality(Vec<SentimentSeasonality>),
    SentimentTrend(Vec<SentimentTrend>),
    Ideas(Vec<Idea>),
    HedgerExtremes(Vec<HedgerExtreme>),
    SectorMa(Vec<SectorMa>),
    OptixExhaustion(Vec<Exhaustion>),
    Dividend(Vec<Dividend>),
}

/// `GET /screens`: `{code, data, type}`.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "openapi", derive(ToSchema))]
pub struct ScreenAnswer {
    pub code: u16,
    pub data: ScreenRecords,
    /// The screen's category name.
    pub r#type: &'static str,
}
